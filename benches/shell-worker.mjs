// One output flood in a fresh Node process, for benches/shell.mjs (section 11b): the
// parent runs this once per method and run, so the memory peaks of the methods never mix.
//
//   node --expose-gc benches/shell-worker.mjs <fsgate|drain|execFile> <bytes> <workspace>
//
// Loads fsgate and makes its toolkit in every mode (so the baselines are alike), runs one
// warm-up command, takes the baseline after a GC, then samples process.memoryUsage()
// every 5 ms while `head -c <bytes> /dev/zero` runs through the method, and prints one
// line of JSON.
import { execFile, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'

import { ROOT } from './data.mjs'
import { now } from './lib.mjs'

const [mode, bytesArg, workspace] = process.argv.slice(2)
const BYTES = Number(bytesArg)
const command = `head -c ${BYTES} /dev/zero`
const fsgate = await import(path.join(ROOT, 'dist', 'index.js'))
const session = fsgate.createToolkit({ workspace, preset: 'claude-code' }).createSession()

const methods = {
  // The tool with its default 1 MiB output cap.
  fsgate: async () => {
    const r = await session.call('Bash', { command })
    if (r.isError || r.data.stdoutBytes !== BYTES || !r.data.truncated) throw new Error(`fsgate Bash: ${r.content[0]?.text.slice(0, 200)}`)
    return { kept: r.data.stdout.length, result: r }
  },
  // The floor: spawn and throw every chunk away.
  drain: () =>
    new Promise((resolve, reject) => {
      const c = spawn('sh', ['-c', command], { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] })
      let n = 0
      c.stdout.on('data', (b) => {
        n += b.length
      })
      c.stderr.resume()
      c.on('error', reject)
      c.on('close', (code) => (code === 0 && n === BYTES ? resolve({ kept: 0 }) : reject(new Error(`drain: exit ${code}, ${n} bytes`))))
    }),
  // What an agent does without thinking about it: keep all of it.
  execFile: () =>
    new Promise((resolve, reject) => {
      execFile('sh', ['-c', command], { cwd: workspace, maxBuffer: Infinity }, (err, stdout) => {
        if (err) reject(err)
        else if (stdout.length !== BYTES) reject(new Error(`execFile returned ${stdout.length} characters`))
        else resolve({ kept: stdout.length, result: stdout })
      })
    }),
}
const run = methods[mode]
if (!run) throw new Error(`unknown mode ${mode}`)

// Warm up the path (spawn, the facade) with a small command.
await session.call('Bash', { command: 'true' })
await new Promise((r) => execFile('sh', ['-c', 'true'], r))
globalThis.gc?.()
await new Promise((r) => setTimeout(r, 50))
globalThis.gc?.()

const base = process.memoryUsage()
let peakRss = base.rss
let peakAb = base.arrayBuffers
let peakHeap = base.heapUsed
let samples = 0
const sample = () => {
  const m = process.memoryUsage()
  samples++
  if (m.rss > peakRss) peakRss = m.rss
  if (m.arrayBuffers > peakAb) peakAb = m.arrayBuffers
  if (m.heapUsed > peakHeap) peakHeap = m.heapUsed
}
const timer = setInterval(sample, 5)
const t0 = now()
const out = await run()
const ms = now() - t0
sample() // the result is still held here
clearInterval(timer)
const status = readFileSync('/proc/self/status', 'utf8')
const kib = (name) => Number(new RegExp(`^${name}:\\s*(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024
process.stdout.write(
  `${JSON.stringify({
    mode,
    ms,
    kept: out.kept,
    baseRss: base.rss,
    peakRss,
    baseAb: base.arrayBuffers,
    peakAb,
    baseHeap: base.heapUsed,
    peakHeap,
    vmHwm: kib('VmHWM'),
    samples,
  })}\n`,
)
