// How shell calls cost with the host's size: the addon's posix_spawn (Linux) against Node's
// spawn (FSGATE_NODE_SPAWN=1), in a host of ~100 MiB and one of ~400 MiB (ballast
// Buffers). Each case runs in a child process of its own (the way is chosen when
// fsgate loads): `Bash "true"` one at a time (median of 60), then 16 sessions calling
// `Bash "echo hi"` for 5 s (calls per second, and the event loop's delay meanwhile).
// `node benches/spawn.mjs` prints the table; results go to .bench-data/spawn.json.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

if (process.argv[2] === '--case') {
  const ballastMiB = Number(process.argv[3])
  const { createToolkit } = await import(path.join(ROOT, 'dist', 'index.js'))
  const ballast = []
  for (let i = 0; i < ballastMiB; i++) ballast.push(Buffer.alloc(1 << 20, 1))
  const ws = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'fsgate-spawn-bench-'))
  const tk = createToolkit({ workspace: ws, preset: 'claude-code' })
  const s = tk.createSession()
  for (let i = 0; i < 5; i++) await s.call('Bash', { command: 'true' })
  const one = []
  for (let i = 0; i < 60; i++) {
    const t = performance.now()
    const r = await s.call('Bash', { command: 'true' })
    if (r.isError) throw new Error(JSON.stringify(r))
    one.push(performance.now() - t)
  }
  one.sort((a, b) => a - b)
  const loop = monitorEventLoopDelay({ resolution: 1 })
  loop.enable()
  const started = performance.now()
  let calls = 0
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      const ss = tk.createSession()
      while (performance.now() - started < 5000) {
        await ss.call('Bash', { command: 'echo hi' })
        calls++
      }
    }),
  )
  loop.disable()
  fs.rmSync(ws, { recursive: true, force: true })
  const { childStarter } = await import(path.join(ROOT, 'dist', 'process', 'run.js'))
  console.log(
    JSON.stringify({
      way: childStarter,
      rssMiB: process.memoryUsage().rss / 2 ** 20,
      oneP50: one[30],
      callsPerSec: calls / ((performance.now() - started) / 1000),
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
    }),
  )
  process.exit(0)
}

const rows = []
for (const ballast of [0, 300]) {
  for (const way of ['native', 'node']) {
    const env = { ...process.env, FSGATE_NODE_SPAWN: way === 'node' ? '1' : '' }
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--case', String(ballast)], { env, encoding: 'utf8' })
    rows.push({ ballast, ...JSON.parse(out.trim().split('\n').at(-1)) })
  }
}
const f = (n, d = 1) => n.toFixed(d)
console.log('| host RSS | started by | `Bash "true"` p50 | 16 sessions: calls/s | event loop p99 / max |')
console.log('|---|---|---|---|---|')
for (const r of rows) {
  console.log(`| ${f(r.rssMiB, 0)} MiB | ${r.way === 'native' ? 'the addon (posix_spawn)' : "Node's spawn (fork)"} | ${f(r.oneP50, 2)} ms | ${f(r.callsPerSec, 0)} | ${f(r.loopP99)} / ${f(r.loopMax)} ms |`)
}
for (const ballast of [0, 300]) {
  const [a, b] = [rows.find((r) => r.ballast === ballast && r.way === 'native'), rows.find((r) => r.ballast === ballast && r.way === 'node')]
  if (a && b) console.log(`- host of ${f(b.rssMiB, 0)} MiB: a call ${f(b.oneP50 / a.oneP50)}× faster, ${f(a.callsPerSec / b.callsPerSec)}× the calls per second, loop p99 ${f(b.loopP99 / a.loopP99)}× lower`)
}
fs.mkdirSync(path.join(ROOT, '.bench-data'), { recursive: true })
fs.writeFileSync(path.join(ROOT, '.bench-data', 'spawn.json'), JSON.stringify(rows, null, 2))
