// The shell benchmarks: the `shell` tool (Bash in the claude dialect) against Node's
// child_process, side by side in one run — the cost of a call, a 500 MB output flood
// (memory, in fresh processes: benches/shell-worker.mjs), killing a command with a
// grandchild at its timeout, the event loop while 16 floods run, the risk classifier's
// throughput, and git_operations status against running git status directly. run.mjs
// calls benchShell with its section and goal helpers, which print the tables and collect
// the goals.
import { execFile, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'

import { DATA, ROOT } from './data.mjs'
import { fmtMs, fmtNum, fmtRatio, interleave, median, now, percentile, rng, table } from './lib.mjs'

const SHELL = path.join(DATA, 'shell')
const MiB = 2 ** 20

const CALL_ROUNDS = 200
const CALL_GOAL = 1.5
const FLOOD_BYTES = 500_000_000
const FLOOD_RUNS = 3
const FLOOD_GOAL_MIB = 64
const TIMEOUT_RUNS = 10
const TIMEOUT_PEER_RUNS = 5
const TIMEOUT_GOAL_MS = 100
const LOAD_CALLS = 16
const LOAD_BYTES = 50_000_000
const LOAD_ROUNDS = 2
const LOAD_SECONDS = 3
const IDLE_SECONDS = 2
const LAG_GOAL_MS = 10
const CLASSIFY_ROUNDS = 60
const CLASSIFY_GOAL_PER_SEC = 10_000
const BIG_COMMAND_BYTES = 60 * 1024
const BIG_GOAL_MS = 10
const BIG_RUNS = 40
const GIT_ROUNDS = 20
const GIT_GOAL = 1.5
const SANDBOX_ROUNDS = 150
const SANDBOX_GOAL_MS = 5
const SANDBOX_LOAD_CALLS = 16
const SANDBOX_LOAD_SECONDS = 4
const SANDBOX_LAG_GOAL_MS = 20

/**
 * Runs the shell benchmarks. `ctx` carries the addon's public API (`fsgate`) and run.mjs's
 * `section`, `goal`, `goalAtMost`, and `goals`/`status` for goals that are not ratios.
 */
export async function benchShell(ctx) {
  mkdirSync(path.join(SHELL, 'ws'), { recursive: true })
  const ws = realpathSync(path.join(SHELL, 'ws'))
  await benchCall(ctx, ws)
  await benchFlood(ctx, ws)
  await benchTimeout(ctx, ws)
  await benchLoad(ctx, ws)
  benchClassify(ctx)
  await benchGit(ctx)
  await benchSandbox(ctx, ws)
}

/** `sh -c command` through execFile, resolving with stdout (rejects on a non-zero exit). */
function execSh(command, options = {}) {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', command], options, (err, stdout, stderr) => (err ? reject(Object.assign(err, { stdout, stderr })) : resolve(stdout)))
  })
}

function okBash(r, what) {
  if (r.isError) throw new Error(`fsgate Bash (${what}) failed: ${r.content[0]?.text.slice(0, 300)}`)
  return r
}

// ---------------------------------------------------------------------------------------
// 11a. The cost of a call
// ---------------------------------------------------------------------------------------
async function benchCall(ctx, ws) {
  const { fsgate, section, goalAtMost } = ctx
  const { runProcess } = await import(path.join(ROOT, 'dist', 'process', 'run.js'))
  const { childEnv } = await import(path.join(ROOT, 'dist', 'policy', 'env.js'))
  const session = fsgate.createToolkit({ workspace: ws, preset: 'claude-code' }).createSession()
  const env = childEnv(process.env, [])
  const c = {
    fsgate: async () => {
      const r = okBash(await session.call('Bash', { command: 'true' }), 'true')
      if (r.data.exitCode !== 0) throw new Error('true did not exit 0')
    },
    run: async () => {
      const r = await runProcess({ file: 'sh', args: ['-c', 'true'], cwd: ws, env, timeoutMs: 60_000, maxOutputBytes: MiB })
      if (r.exitCode !== 0) throw new Error('runProcess: true did not exit 0')
    },
    execFile: () => execSh('true', { cwd: ws }),
    spawn: () =>
      new Promise((resolve, reject) => {
        const child = spawn('sh', ['-c', 'true'], { cwd: ws, stdio: ['ignore', 'pipe', 'pipe'] })
        child.stdout.resume()
        child.stderr.resume()
        child.on('error', reject)
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`spawn: exit ${code}`))))
      }),
  }
  const res = await interleave(
    Object.fromEntries(Object.entries(c).map(([k, fn]) => [k, { fn, warmup: 10 }])),
    { rounds: CALL_ROUNDS },
  )
  const e = res.execFile.median
  const line = (label, x) => [label, fmtNum(x.times.length), fmtMs(x.median), fmtMs(percentile(x.times, 95)), fmtMs(x.min), fmtRatio(x.median / e), fmtRatio(x.median / res.spawn.median)]
  const f = res.fsgate
  const rows = [
    line('fsgate `session.call("Bash", {command: "true"})`, preset claude-code (toolkit and session made once)', f),
    line('(breakdown) fsgate\'s `runProcess` alone: the same spawn (own session and process group, cleared environment, head+tail buffers), no facade', res.run),
    line('Node `child_process.execFile("sh", ["-c", "true"])`', res.execFile),
    line('Node `child_process.spawn("sh", ["-c", "true"])`, wait for `close`', res.spawn),
  ]
  const cost = (f.median - res.run.median) * 1000
  section(
    '11a. shell: the cost of one call (`true`)',
    `Each method runs \`sh -c true\` in the same folder, 10 times untimed, then all four interleaved in ${CALL_ROUNDS} rounds, one call each per round, one call at a time; median, p95 and min of the ${CALL_ROUNDS} calls. Every call is checked for exit code 0. The fsgate call parses and rates the command, checks the policy, clears the environment, spawns \`sh\` in its own session and process group, kills the group when it exits, and shapes the result.`,
    table(['method', 'calls', 'median', 'p95', 'min', 'time / execFile', 'time / spawn'], rows),
    [
      `The facade (schema, classification, policy, environment, result) costs the difference between the first two rows: ${cost >= 0 ? `${cost.toFixed(0)} µs` : 'nothing measurable'} a call at the median. The rest is starting a process, which dominates every row.`,
      `The goal is a cost: fsgate's median at most ${CALL_GOAL}× execFile's. Both fork and exec the same \`sh\`, which costs about 2 ms here, while fsgate's own work is a fraction of a millisecond of JavaScript; a ratio past ${CALL_GOAL}× would mean a structural wait (the 250 ms pipe-drain cut-off, a thread hop) or checks that cost as much as a process.`,
    ],
  )
  goalAtMost('11a. Bash `true` call, time / execFile', CALL_GOAL, `${fmtRatio(f.median / e)} (${fmtMs(f.median)} vs ${fmtMs(e)}; p95 ${fmtMs(percentile(f.times, 95))} vs ${fmtMs(percentile(res.execFile.times, 95))})`, f.median / e)
}

// ---------------------------------------------------------------------------------------
// 11b. A 500 MB output flood: time and memory, each run in a fresh Node process
// ---------------------------------------------------------------------------------------
function floodOnce(mode, ws) {
  const worker = path.join(ROOT, 'benches', 'shell-worker.mjs')
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', worker, mode, String(FLOOD_BYTES), ws], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (b) => {
      out += b
    })
    child.stderr.on('data', (b) => {
      err += b
    })
    child.on('close', (code, signal) => {
      const last = out.trim().split('\n').pop()
      if (code === 0 && last) resolve(JSON.parse(last))
      else resolve({ mode, failed: `exit ${code ?? signal}: ${err.trim().split('\n').slice(-2).join(' ').slice(0, 160)}` })
    })
  })
}

async function benchFlood(ctx, ws) {
  const { section, goals, status } = ctx
  const modes = ['fsgate', 'drain', 'execFile']
  const runs = Object.fromEntries(modes.map((m) => [m, []]))
  for (let r = 0; r < FLOOD_RUNS; r++) for (const m of modes) runs[m].push(await floodOnce(m, ws))
  const mib = (b) => `${(b / MiB).toFixed(1)} MiB`
  const summary = {}
  const rows = []
  const labels = {
    fsgate: 'fsgate `session.call("Bash")`, default 1 MiB output cap (head + tail kept)',
    drain: '(floor) Node `spawn`, every chunk thrown away',
    execFile: 'Node `execFile("sh", ["-c", …], {maxBuffer: Infinity})`: all of it kept as a string',
  }
  for (const m of modes) {
    const ok = runs[m].filter((x) => !x.failed)
    const failed = runs[m].filter((x) => x.failed)
    if (!ok.length) {
      rows.push([labels[m], `0 of ${FLOOD_RUNS} (${failed[0].failed})`, '—', '—', '—', '—', '—', '—'])
      continue
    }
    const s = {
      ms: median(ok.map((x) => x.ms)),
      rss: Math.max(...ok.map((x) => x.peakRss - x.baseRss)),
      rssMed: median(ok.map((x) => x.peakRss - x.baseRss)),
      ab: Math.max(...ok.map((x) => x.peakAb - x.baseAb)),
      heap: Math.max(...ok.map((x) => x.peakHeap - x.baseHeap)),
      hwm: Math.max(...ok.map((x) => x.vmHwm - x.baseRss)),
      base: median(ok.map((x) => x.baseRss)),
      kept: ok[0].kept,
    }
    summary[m] = s
    rows.push([
      labels[m],
      `${ok.length}${failed.length ? ` (${failed.length} failed: ${failed[0].failed})` : ''}`,
      fmtMs(s.ms),
      `${((FLOOD_BYTES / 1e6) / (s.ms / 1000)).toFixed(0)} MB/s`,
      `${mib(s.rss)} (median ${mib(s.rssMed)})`,
      mib(s.ab),
      mib(s.heap),
      mib(s.hwm),
      `${fmtNum(s.kept)} chars`,
    ])
  }
  section(
    '11b. shell: a 500 MB output flood',
    `Command: \`head -c ${FLOOD_BYTES} /dev/zero\` (${(FLOOD_BYTES / 1e6).toFixed(0)} MB to stdout). Each run is a fresh Node process (benches/shell-worker.mjs, \`--expose-gc\`) that loads fsgate, runs one small command, takes its baseline after a GC, then samples \`process.memoryUsage()\` every 5 ms (and once more while the result is still held) during the one call; ${FLOOD_RUNS} runs per method, the methods interleaved run by run. Memory figures are the largest rise over the baseline (baseline RSS about ${mib(median(Object.values(summary).map((s) => s.base)))}) across the runs. VmHWM is the kernel's peak RSS of the whole process, less the same baseline (it includes start-up).`,
    table(['method', 'runs', 'time (median)', 'throughput', 'peak RSS above baseline, largest run', 'peak arrayBuffers above baseline', 'peak JS heap above baseline', 'VmHWM above baseline', 'output kept'], rows),
    [
      'fsgate holds each stream in one head buffer and one ring (512 KiB + 512 KiB, never more) and counts the bytes it drops; the model gets the start, a marker with the bytes omitted, and the end. The memory it still uses is the 64 KiB chunks that libuv reads the pipe into, which the garbage collector frees in batches.',
      'execFile with `maxBuffer: Infinity` decodes every chunk to a string, keeps them all, and joins them at the end: the whole output in memory at least once, most of it twice for a moment. Its default `maxBuffer` (1 MiB) would instead kill the command and fail the call, losing the tail.',
    ],
  )
  const f = summary.fsgate
  goals.push({
    bench: '11b. 500 MB stdout flood: fsgate peak RSS above baseline',
    goal: `< ${FLOOD_GOAL_MIB} MiB`,
    measured: f ? `${mib(f.rss)} (execFile maxBuffer ∞: ${summary.execFile ? mib(summary.execFile.rss) : 'failed'}; ${fmtMs(f.ms)} vs ${summary.execFile ? fmtMs(summary.execFile.ms) : '—'})` : 'failed',
    met: f ? status(FLOOD_GOAL_MIB / Math.max(f.rss / MiB, 1e-9)) : 'missed (failed)',
  })
}

// ---------------------------------------------------------------------------------------
// 11c. Killing a command and its grandchild at the timeout
// ---------------------------------------------------------------------------------------

/**
 * 'gone', 'zombie' (state Z or X in /proc/<pid>/stat), 'dying' (a SIGKILL is pending on
 * it, in /proc/<pid>/status: sent, not yet acted on) or 'alive'.
 */
function procState(pid) {
  let stat
  let status
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return 'gone'
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  if (state === 'Z' || state === 'X') return 'zombie'
  const pending = ['SigPnd', 'ShdPnd'].some((k) => (BigInt(`0x${new RegExp(`^${k}:\\s*([0-9a-f]+)`, 'm').exec(status)?.[1] ?? '0'}`) >> 8n) & 1n)
  return pending ? 'dying' : 'alive'
}

function pidsFrom(stdout) {
  const m = /^(\d+) (\d+)$/m.exec(stdout ?? '')
  if (!m) throw new Error(`the timeout command printed no pids: ${JSON.stringify((stdout ?? '').slice(0, 100))}`)
  return m.slice(1).map(Number)
}

async function benchTimeout(ctx, ws) {
  const { fsgate, section, goals, status } = ctx
  const session = fsgate.createToolkit({ workspace: ws, preset: 'claude-code' }).createSession()
  // The grandchild keeps the pipes open (the usual case: `server &`).
  const holding = 'sleep 30 & echo $$ $!; sleep 30'
  // The grandchild lets go of the pipes, so execFile can return at its timeout.
  const detached = 'sleep 30 >/dev/null 2>&1 & echo $$ $!; sleep 30'
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
  const leftovers = []
  const check = (pids) => {
    const at = pids.map(procState)
    return { at, alive: at.filter((s) => s === 'alive').length, aliveChild: at[1] === 'alive' ? 1 : 0, dying: at.filter((s) => s === 'dying').length }
  }
  const recheck = async (list) => {
    await sleep(100)
    for (const x of list) {
      x.later = x.pids.map(procState).filter((s) => s === 'alive').length
      for (const pid of x.pids) if (procState(pid) === 'alive') leftovers.push(pid)
    }
  }
  const viaFsgate = async (command) => {
    const t0 = now()
    const r = await session.call('Bash', { command, timeout: 1000 })
    const wall = now() - t0
    if (!r.isError || r.error?.code !== 'TIMEOUT') throw new Error(`expected TIMEOUT, got ${r.isError ? r.error?.code : 'success'}`)
    const pids = pidsFrom(r.data.stdout)
    return { wall, dur: r.data.durationMs, pids, ...check(pids) }
  }
  const viaExecFile = (command) =>
    new Promise((resolve, reject) => {
      const t0 = now()
      execFile('sh', ['-c', command], { cwd: ws, timeout: 1000 }, (err, stdout) => {
        const wall = now() - t0
        if (!err?.killed) return reject(new Error('execFile: expected the timeout to kill the command'))
        try {
          const pids = pidsFrom(stdout)
          resolve({ wall, dur: wall, pids, ...check(pids) })
        } catch (e) {
          reject(e)
        }
      })
    })

  const fs = []
  const ex = []
  for (let i = 0; i < TIMEOUT_RUNS; i++) {
    fs.push(await viaFsgate(holding))
    if (i < TIMEOUT_PEER_RUNS) ex.push(await viaExecFile(holding))
  }
  const fsDetached = await viaFsgate(detached)
  const exDetached = await viaExecFile(detached)
  await recheck([...fs, ...ex, fsDetached, exDetached])
  for (const pid of new Set(leftovers)) {
    try {
      process.kill(pid, 'SIGKILL') // processes this benchmark started
    } catch {
      // gone meanwhile
    }
  }
  const after = (xs) => xs.map((x) => x.wall - 1000)
  const sum = (xs, k) => xs.reduce((a, x) => a + x[k], 0)
  const line = (label, xs) => [
    label,
    xs.length,
    fmtMs(median(after(xs))),
    fmtMs(Math.max(...after(xs))),
    xs[0].dur === xs[0].wall ? '—' : fmtMs(median(xs.map((x) => x.dur - 1000))),
    `${sum(xs, 'alive')} of ${xs.length * 2} (grandchildren: ${sum(xs, 'aliveChild')}; SIGKILL pending: ${sum(xs, 'dying')})`,
    `${sum(xs, 'later')} of ${xs.length * 2}`,
  ]
  const rows = [
    line('fsgate `Bash {timeout: 1000}`: `sleep 30 & echo $$ $!; sleep 30` (the grandchild shares the pipes)', fs),
    line('Node `execFile("sh", ["-c", …], {timeout: 1000})`, the same command', ex),
    line('fsgate, the grandchild let go of the pipes: `sleep 30 >/dev/null 2>&1 & …`', [fsDetached]),
    line('Node `execFile`, the same', [exDetached]),
  ]
  section(
    '11c. shell: killing a command and its grandchild at the timeout',
    `The command starts a grandchild (\`sleep 30 &\`), prints its own pid and the grandchild's, and sleeps; the timeout is 1 s. "After the timeout" is the call's wall time less 1 s: an upper bound on the time from the timeout to the call returning, since it also holds the spawn and, for fsgate, the facade; "durationMs − 1 s" is fsgate's own figure, from just before the spawn (whole ms). Survivors: both pids are looked up in /proc/<pid>/stat as the call returns and again 100 ms later; a zombie (state Z) counts as dead, and a process with a SIGKILL pending (/proc/<pid>/status SigPnd or ShdPnd: sent, not yet acted on by a scheduler this busy) is counted apart, not as alive. ${TIMEOUT_RUNS} fsgate runs and ${TIMEOUT_PEER_RUNS} execFile runs, alternating.`,
    table(['method', 'runs', 'after the timeout (median)', 'after the timeout (max)', 'durationMs − 1 s (median)', 'processes alive at return', 'alive 100 ms later'], rows),
    [
      'fsgate starts the command in its own session and process group and, at the timeout, sends SIGKILL to the whole group, so the grandchild dies with the shell and the pipes close at once; it then waits for the exit and the pipes. execFile, at its timeout, closes its ends of the pipes, sends SIGTERM to the shell only and calls back at once: it is as quick, but the grandchild lives on, reparented, whether or not it shares the pipes (this benchmark kills those by pid afterwards).',
      `The time goal is ${TIMEOUT_GOAL_MS} ms from the timeout to the result: well under the 250 ms pipe-drain cut-off, so a pass shows the group kill closed the pipes, not the cut-off.`,
    ],
  )
  const med = median(after(fs))
  goals.push({ bench: '11c. Bash timeout: time from the timeout to the result', goal: `< ${TIMEOUT_GOAL_MS} ms`, measured: `${fmtMs(med)} (median of ${fs.length}; max ${fmtMs(Math.max(...after(fs)))})`, met: status(TIMEOUT_GOAL_MS / Math.max(med, 1e-9)) })
  const left = sum(fs, 'later') + fsDetached.later
  goals.push({
    bench: '11c. Bash timeout: processes alive 100 ms after the call',
    goal: '0',
    measured: `${sum(fs, 'alive') + fsDetached.alive} of ${(fs.length + 1) * 2} at return, ${sum(fs, 'later') + fsDetached.later} 100 ms later (execFile: ${sum(ex, 'later') + exDetached.later} of ${(ex.length + 1) * 2} 100 ms later)`,
    met: left === 0 ? 'met' : 'missed',
  })
}

// ---------------------------------------------------------------------------------------
// 11d. The event loop while 16 floods run
// ---------------------------------------------------------------------------------------

/**
 * A per-candidate probe, switched on for its phase of each round. perf_hooks' histogram
 * is made new for each phase (one kept across a pause would count the pause as a delay,
 * and such histograms cannot be merged), so its figures are per phase: p50 the median of
 * the phases, p99 and max the worst phase. The setInterval lags and the event-loop
 * utilisation are pooled over the phases.
 */
function loopProbe() {
  const phases = []
  const lags = []
  let h
  let timer
  let elu0
  let active = 0
  let total = 0
  return {
    start() {
      h = monitorEventLoopDelay({ resolution: 1 })
      h.enable()
      elu0 = performance.eventLoopUtilization()
      let prev = now()
      timer = setInterval(() => {
        const t = now()
        lags.push(Math.max(0, t - prev - 1))
        prev = t
      }, 1)
    },
    stop() {
      clearInterval(timer)
      h.disable()
      const d = performance.eventLoopUtilization(elu0)
      active += d.active
      total += d.active + d.idle
      phases.push({ p50: h.percentile(50), p99: h.percentile(99), max: h.max })
    },
    result() {
      const ms = (ns) => Math.max(0, ns / 1e6 - 1)
      return {
        hP50: ms(median(phases.map((p) => p.p50))),
        hP99: ms(Math.max(...phases.map((p) => p.p99))),
        hMax: ms(Math.max(...phases.map((p) => p.max))),
        lagP99: percentile(lags, 99),
        elu: total ? active / total : 0,
        ticks: lags.length,
      }
    },
  }
}

async function benchLoad(ctx, ws) {
  const { fsgate, section, goals, status } = ctx
  const tk = fsgate.createToolkit({ workspace: ws, preset: 'claude-code' })
  const command = `yes | head -c ${LOAD_BYTES}`
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
  const candidates = {
    fsgate: () => {
      const session = tk.createSession()
      return async () => {
        const r = okBash(await session.call('Bash', { command }), 'yes | head')
        if (r.data.stdoutBytes !== LOAD_BYTES || !r.data.truncated) throw new Error(`fsgate Bash saw ${r.data.stdoutBytes} bytes`)
      }
    },
    drain: () => () =>
      new Promise((resolve, reject) => {
        const c = spawn('sh', ['-c', command], { cwd: ws, stdio: ['ignore', 'pipe', 'pipe'] })
        let n = 0
        c.stdout.on('data', (b) => {
          n += b.length
        })
        c.stderr.resume()
        c.on('error', reject)
        c.on('close', () => (n === LOAD_BYTES ? resolve() : reject(new Error(`drain saw ${n} bytes`))))
      }),
    execFile: () => async () => {
      const out = await execSh(command, { cwd: ws, maxBuffer: Infinity })
      if (out.length !== LOAD_BYTES) throw new Error(`execFile returned ${out.length} characters`)
    },
  }
  const idle = loopProbe()
  const probes = Object.fromEntries(Object.keys(candidates).map((k) => [k, loopProbe()]))
  const stats = Object.fromEntries(Object.keys(candidates).map((k) => [k, { calls: 0, ms: 0, lat: [] }]))
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    idle.start()
    await sleep((IDLE_SECONDS * 1000) / LOAD_ROUNDS)
    idle.stop()
    for (const [name, make] of Object.entries(candidates)) {
      const st = stats[name]
      const end = now() + LOAD_SECONDS * 1000
      const loop = async () => {
        const call = make()
        do {
          const s = now()
          await call()
          st.lat.push(now() - s)
          st.calls++
        } while (now() < end)
      }
      probes[name].start()
      const t0 = now()
      await Promise.all(Array.from({ length: LOAD_CALLS }, loop))
      st.ms += now() - t0
      probes[name].stop()
      await sleep(200) // let the last exits and frees settle outside the window
    }
  }
  const i = idle.result()
  const line = (label, x, st) => [
    label,
    fmtMs(x.hP50),
    fmtMs(x.hP99),
    fmtMs(x.hMax),
    fmtMs(x.lagP99),
    `${(x.elu * 100).toFixed(0)}%`,
    st ? `${fmtNum(st.calls)} in ${(st.ms / 1000).toFixed(1)} s; ${((st.calls * LOAD_BYTES) / 1e6 / (st.ms / 1000)).toFixed(0)} MB/s; call p50 ${fmtMs(percentile(st.lat, 50))}` : '—',
  ]
  const r = Object.fromEntries(Object.entries(probes).map(([k, p]) => [k, p.result()]))
  const rows = [
    line(`idle (${IDLE_SECONDS} s, nothing running)`, i),
    line(`fsgate: ${LOAD_CALLS} \`session.call("Bash")\` in flight (1 MiB cap)`, r.fsgate, stats.fsgate),
    line(`(floor) Node \`spawn\`, ${LOAD_CALLS} in flight, output thrown away`, r.drain, stats.drain),
    line(`Node \`execFile\` {maxBuffer: Infinity}, ${LOAD_CALLS} in flight`, r.execFile, stats.execFile),
  ]
  section(
    '11d. shell: the event loop while 16 commands flood their output',
    `${LOAD_CALLS} loops each run \`${command}\` (${LOAD_BYTES / 1e6} MB of "y\\n" each) back to back for ${LOAD_SECONDS} s per phase, in ${LOAD_ROUNDS} rounds of idle → fsgate → spawn → execFile, while the event loop is sampled with \`perf_hooks.monitorEventLoopDelay({resolution: 1})\` (less the 1 ms of its own timer; a new histogram per phase, so p99 and max are the worse of the ${LOAD_ROUNDS} rounds), a \`setInterval(…, 1)\` whose late firing is the lag (pooled over the rounds), and \`performance.eventLoopUtilization()\` (the share of the time the loop was running callbacks rather than waiting). Every call is checked for the bytes it saw (fsgate: \`stdoutBytes\` = ${fmtNum(LOAD_BYTES)}, truncated).`,
    table(['phase', 'loop delay p50', 'loop delay p99 (worse round)', 'loop delay max', 'setInterval(1) lag p99 (pooled)', 'event loop busy', 'calls'], rows),
    [
      `All three read the pipes on the JS thread (libuv's loop): each 64 KiB chunk is one callback. fsgate's callback appends the chunk to its head or tail and drops what falls out of the middle; the loop is as busy as the floor row, plus the head/tail bookkeeping. execFile decodes every chunk into a string and, at each exit, joins ${LOAD_BYTES / 1e6} MB of them in one synchronous step. The ${LOAD_CALLS} commands, their \`yes\` and \`head\`, and this process share the machine's cores.`,
    ],
  )
  const f = r.fsgate
  goals.push({
    bench: '11d. event-loop delay p99 with 16 Bash floods in flight',
    goal: `< ${LAG_GOAL_MS} ms`,
    measured: `${fmtMs(f.hP99)} (setInterval lag p99 ${fmtMs(f.lagP99)}; idle ${fmtMs(i.hP99)}; spawn floor ${fmtMs(r.drain.hP99)}; execFile ${fmtMs(r.execFile.hP99)})`,
    met: status(LAG_GOAL_MS / Math.max(f.hP99, f.lagP99, 1e-9)),
  })
}

// ---------------------------------------------------------------------------------------
// 11e. The risk classifier
// ---------------------------------------------------------------------------------------

/** Commands an agent runs, as written: pipelines, git, npm, find -exec, here-documents. */
export const COMMANDS = [
  'ls -la',
  'ls -la src/ | head -50',
  'pwd',
  'cat package.json',
  'cat README.md | grep -n "install"',
  'head -n 40 src/index.ts',
  'tail -f /var/log/syslog',
  'wc -l src/**/*.ts',
  'grep -rn "TODO" src/ --include="*.ts"',
  'grep -rl "useEffect" src | xargs wc -l | sort -n | tail -5',
  'rg -n "fn main" crates/',
  'find . -name "*.test.ts" -not -path "./node_modules/*"',
  'find . -type f -name "*.log" -exec rm {} +',
  "find src -name '*.ts' -exec grep -l 'deprecated' {} \\;",
  'find . -type d -name __pycache__ -prune -exec rm -rf {} +',
  'find . -newer package.json -type f | head',
  'tree -L 2 -I node_modules',
  'du -sh node_modules',
  'df -h',
  'git status',
  'git status --short',
  'git diff',
  'git diff --cached --stat',
  'git log --oneline -20',
  'git log --graph --decorate --all -n 30',
  'git show HEAD~1 --stat',
  'git blame -L 10,40 src/server.ts',
  'git branch -a',
  'git add -A && git commit -m "fix: handle empty input"',
  'git add src/ && git commit -m "$(cat <<\'EOF\'\nRefactor the parser\n\nSplit tokenising from parsing.\nEOF\n)"',
  'git checkout -b feature/login',
  'git switch main',
  'git stash push -m "wip" && git pull --rebase && git stash pop',
  'git push origin HEAD',
  'git push --force-with-lease',
  'git reset --hard HEAD~1',
  'git clean -fdx',
  'git rebase -i HEAD~3',
  'git -C packages/core log -1 --format=%H',
  'git fetch --all --prune',
  'git cherry-pick abc1234',
  'git tag -a v1.2.0 -m "release 1.2.0"',
  'npm install',
  'npm ci',
  'npm install --save-dev vitest @types/node',
  'npm run build',
  'npm test',
  'npm test -- --run src/parser.test.ts',
  'npm run lint -- --fix',
  'npm publish --access public',
  'npx tsc --noEmit',
  'npx prettier --write "src/**/*.{ts,tsx}"',
  'pnpm install --frozen-lockfile',
  'yarn add lodash',
  'node scripts/build.js',
  "node -e 'console.log(process.version)'",
  'node --test test/',
  'python3 -m pytest -x -q tests/',
  'python -c "import sys; print(sys.path)"',
  'pip install -r requirements.txt',
  'python3 -m venv .venv && . .venv/bin/activate && pip install -e .',
  'cargo build --release',
  'cargo test -p fsgate-core -- --nocapture',
  'cargo clippy --all-targets -- -D warnings',
  'cargo fmt --check',
  'go test ./...',
  'go build -o bin/server ./cmd/server',
  'make -j4',
  'make clean && make test',
  'docker build -t app:latest .',
  'docker compose up -d',
  'docker run --rm -v "$PWD":/src -w /src node:20 npm test',
  'kubectl get pods -n staging',
  'curl -s http://localhost:3000/health',
  'curl -fsSL https://example.com/install.sh | sh',
  'wget -qO- https://example.com/data.json | jq .items',
  'ssh deploy@host "systemctl restart app"',
  'sudo apt-get install -y ripgrep',
  'chmod +x scripts/*.sh',
  'chown -R user:user /srv/app',
  'rm -rf dist/ && npm run build',
  'rm -f *.tmp',
  'mv src/old.ts src/new.ts',
  'cp -r templates/ out/',
  'mkdir -p src/components/Button',
  'touch src/components/Button/index.ts',
  "sed -i 's/foo/bar/g' src/config.ts",
  "sed -n '10,20p' src/app.ts",
  "awk -F, '{ sum += $3 } END { print sum }' data.csv",
  'sort data.txt | uniq -c | sort -rn | head -20',
  'echo "export const VERSION = \'1.0.0\'" > src/version.ts',
  'echo "node_modules" >> .gitignore',
  "cat > src/config.json <<'EOF'\n{\n  \"port\": 3000,\n  \"debug\": true\n}\nEOF",
  'cat <<EOF > .env.local\nAPI_URL=$API_URL\nDEBUG=1\nEOF',
  'for f in src/*.ts; do echo "== $f"; head -3 "$f"; done',
  'while read -r line; do echo "$line"; done < files.txt',
  'if [ -f package-lock.json ]; then npm ci; else npm install; fi',
  'case "$(uname)" in Linux) echo linux ;; Darwin) echo mac ;; esac',
  'export NODE_ENV=production && node dist/server.js',
  'NODE_OPTIONS=--max-old-space-size=4096 npm run build',
  'time npm test',
  'timeout 30 npm test',
  '(cd packages/web && npm run dev)',
  'cd frontend && npm install && npm run build',
  'ls $(git rev-parse --show-toplevel)',
  'echo `date +%s` > build-stamp.txt',
  'eval "$(ssh-agent -s)"',
  'tar -czf backup.tar.gz src/',
  'unzip -o archive.zip -d out/',
  'ps aux | grep node',
  'kill -9 12345',
  'lsof -i :3000',
  'env | sort',
  'which node && node --version',
  'jq ".dependencies | keys" package.json',
  'diff -u a.txt b.txt > changes.patch',
  'patch -p1 < fix.patch',
  'xargs -n1 -I{} sh -c "echo {}; cat {}" < list.txt',
  'dd if=/dev/zero of=/dev/sda bs=1M',
  ':(){ :|:& };:',
]

function benchClassify(ctx) {
  const { fsgate, section, goals, status } = ctx
  const classify = fsgate.classifyCommand
  const n = COMMANDS.length
  const bytes = COMMANDS.reduce((a, c) => a + Buffer.byteLength(c), 0)
  const t0 = now()
  const first = COMMANDS.map((c) => classify(c))
  const firstMs = now() - t0
  const risks = { low: 0, medium: 0, high: 0 }
  for (const r of first) risks[r.risk]++
  for (let i = 0; i < 5; i++) for (const c of COMMANDS) classify(c)
  const rounds = []
  for (let r = 0; r < CLASSIFY_ROUNDS; r++) {
    const s = now()
    for (const c of COMMANDS) classify(c)
    rounds.push(now() - s)
  }
  // The slowest single command, timed alone (median of 20 each).
  const single = COMMANDS.map((c) => {
    const ts = []
    for (let i = 0; i < 20; i++) {
      const s = now()
      classify(c)
      ts.push(now() - s)
    }
    return { c, ms: median(ts) }
  }).sort((a, b) => b.ms - a.ms)
  const perCmdMax = single[0].ms

  // Two 60 KiB commands: a script of the list's commands one per line, repeated, and a
  // here-document that writes 60 KiB of text to a file.
  const script = []
  let size = 0
  for (let i = 0; ; i++) {
    const c = COMMANDS[i % n]
    if (size + Buffer.byteLength(c) + 1 > BIG_COMMAND_BYTES) break
    script.push(c)
    size += Buffer.byteLength(c) + 1
  }
  const bigScript = script.join('\n')
  const r = rng(11)
  const words = 'the parser reads tokens from the stream and builds a tree of nodes for each statement $HOME `date` $(pwd) "quoted" \'single\' ; | & > <'.split(' ')
  let body = ''
  while (body.length < BIG_COMMAND_BYTES - 64) {
    let l = ''
    while (l.length < 70) l += `${words[Math.floor(r() * words.length)]} `
    body += `${l.trimEnd()}\n`
  }
  const bigDoc = `cat > notes/design.md <<'EOF'\n${body}EOF`
  const timeBig = (cmd) => {
    classify(cmd)
    const ts = []
    for (let i = 0; i < BIG_RUNS; i++) {
      const s = now()
      classify(cmd)
      ts.push(now() - s)
    }
    return { ms: median(ts), min: Math.min(...ts), max: Math.max(...ts), risk: classify(cmd).risk, parts: classify(cmd).commands.length, bytes: Buffer.byteLength(cmd) }
  }
  const bs = timeBig(bigScript)
  const bd = timeBig(bigDoc)
  const per = median(rounds) / n
  const perSec = 1000 / per
  const us = (ms) => `${(ms * 1000).toFixed(1)} µs`
  const rows = [
    [`${n} agent commands (${fmtNum(bytes)} bytes in all; ${risks.low} low, ${risks.medium} medium, ${risks.high} high)`, `${CLASSIFY_ROUNDS} rounds of all ${n}`, fmtMs(median(rounds)), us(per), fmtNum(perSec), `first pass (cold): ${fmtMs(firstMs)}; slowest alone: ${us(perCmdMax)} (\`${single[0].c.split('\n')[0].slice(0, 40)}\`)`],
    [`a 60 KiB script: the list's commands one per line, repeated (${fmtNum(bs.bytes)} bytes, ${fmtNum(bs.parts)} simple commands)`, BIG_RUNS, fmtMs(bs.ms), `${((bs.ms * 1000) / bs.parts).toFixed(1)} µs per simple command`, '—', `min ${fmtMs(bs.min)}, max ${fmtMs(bs.max)}; rated ${bs.risk}`],
    [`a 60 KiB here-document: \`cat > notes/design.md <<'EOF'\` … (${fmtNum(bd.bytes)} bytes)`, BIG_RUNS, fmtMs(bd.ms), '—', '—', `min ${fmtMs(bd.min)}, max ${fmtMs(bd.max)}; rated ${bd.risk}`],
  ]
  section(
    '11e. shell: rating commands (`classifyCommand`)',
    `\`classifyCommand\` parses a command as sh would and rates every simple command in it; the shell tool runs it once per call (memoised across the policy steps), on the JS thread. Input: the ${n} commands listed in benches/shell.mjs (\`COMMANDS\`): reading, git, npm/pnpm/yarn, cargo, python, docker, find -exec, pipelines, lists, subshells, \`$(…)\` and backticks, here-documents, loops, \`case\`, redirections, a fork bomb. After one cold pass and 5 untimed ones, ${CLASSIFY_ROUNDS} rounds each rate all ${n}; the figure is the median round. The two large commands are just under the tool's 64 KiB limit.`,
    table(['input', 'runs', 'median', 'per command', 'commands/s', 'notes'], rows),
    [
      `Goals: at least ${fmtNum(CLASSIFY_GOAL_PER_SEC)} commands/s (≤ ${1e6 / CLASSIFY_GOAL_PER_SEC} µs each, a small share of the millisecond a spawn costs, section 11a), and the largest command the tool accepts rated in under ${BIG_GOAL_MS} ms, the event-loop budget of sections 9 and 11d, since the rating blocks the JS thread.`,
    ],
  )
  goals.push({ bench: `11e. classifyCommand, ${n} agent commands`, goal: `≥ ${fmtNum(CLASSIFY_GOAL_PER_SEC)}/s`, measured: `${fmtNum(perSec)}/s (${us(per)} each)`, met: status(perSec / CLASSIFY_GOAL_PER_SEC) })
  const worst = Math.max(bs.ms, bd.ms)
  goals.push({ bench: '11e. classifyCommand, a 60 KiB command', goal: `< ${BIG_GOAL_MS} ms`, measured: `${fmtMs(bs.ms)} script, ${fmtMs(bd.ms)} here-document`, met: status(BIG_GOAL_MS / Math.max(worst, 1e-9)) })
}

// ---------------------------------------------------------------------------------------
// 11f. git_operations status against git status
// ---------------------------------------------------------------------------------------
const REPO_VERSION = 1
const REPO_DIRS = 50
const REPO_PER_DIR = 100
const MODIFIED = 500
const UNTRACKED = 100

const GIT_SETUP = ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', '-c', 'commit.gpgSign=false', '-c', 'core.hooksPath=/dev/null']

function git(cwd, args, options = {}) {
  return execFileSync('git', [...GIT_SETUP, ...args], { cwd, encoding: 'utf8', maxBuffer: 2 ** 30, ...options })
}

function countPorcelain(out) {
  let changed = 0
  let untracked = 0
  for (const f of out.split('\0')) {
    if (f.startsWith('1 ')) changed++
    else if (f.startsWith('? ')) untracked++
  }
  return { changed, untracked }
}

/** A repository of 5,000 committed files, 500 of them modified and 100 untracked beside them. */
function gitRepo() {
  const dir = path.join(SHELL, 'repo')
  const marker = path.join(SHELL, 'repo.json')
  const ok = () => {
    try {
      const c = countPorcelain(git(dir, ['status', '--porcelain=v2', '-z']))
      return c.changed === MODIFIED && c.untracked === UNTRACKED
    } catch {
      return false
    }
  }
  if (existsSync(marker) && JSON.parse(readFileSync(marker, 'utf8')).version === REPO_VERSION && ok()) return { dir: realpathSync(dir), generated: false }
  rmSync(dir, { recursive: true, force: true })
  rmSync(marker, { force: true })
  const r = rng(5000)
  const text = (d, k) => {
    const lines = [`// module m${d}/f${k}`]
    for (let i = 0; i < 20 + Math.floor(r() * 30); i++) lines.push(`export const v${i} = ${Math.floor(r() * 1e6)} // ${'x'.repeat(Math.floor(r() * 40))}`)
    return lines.join('\n') + '\n'
  }
  const file = (d, k) => path.join(dir, 'src', `m${String(d).padStart(2, '0')}`, `f${String(k).padStart(3, '0')}.ts`)
  for (let d = 0; d < REPO_DIRS; d++) {
    mkdirSync(path.dirname(file(d, 0)), { recursive: true })
    for (let k = 0; k < REPO_PER_DIR; k++) writeFileSync(file(d, k), text(d, k))
  }
  git(dir, ['init', '-q', '-b', 'main'])
  git(dir, ['add', '-A'])
  git(dir, ['commit', '-q', '-m', 'init'])
  // Past the index's timestamp, so no entry stays "racily clean" (re-read on every status).
  execFileSync('sleep', ['1.2'])
  git(dir, ['update-index', '-q', '--refresh'])
  // Every tenth file gets a line more; two new files in each folder.
  for (let i = 0; i < MODIFIED; i++) {
    const d = i % REPO_DIRS
    const k = Math.floor(i / REPO_DIRS) * 10
    writeFileSync(file(d, k), `${readFileSync(file(d, k), 'utf8')}export const changed = ${i}\n`)
  }
  for (let i = 0; i < UNTRACKED; i++) {
    const d = i % REPO_DIRS
    writeFileSync(path.join(path.dirname(file(d, 0)), `new${Math.floor(i / REPO_DIRS)}.ts`), `// untracked ${i}\n`)
  }
  if (!ok()) throw new Error('the generated repository does not show 500 modified and 100 untracked files')
  writeFileSync(marker, JSON.stringify({ version: REPO_VERSION }) + '\n')
  return { dir: realpathSync(dir), generated: true }
}

async function benchGit(ctx) {
  const { fsgate, section, goalAtMost } = ctx
  const { gitEnv } = await import(path.join(ROOT, 'dist', 'git', 'run.js'))
  const t0 = now()
  const repo = gitRepo()
  const genMs = now() - t0
  const tk = fsgate.createToolkit({ workspace: repo.dir, preset: 'revka', policy: { actionsPerHour: null } })
  const session = tk.createSession()
  const run = (args, env) =>
    new Promise((resolve, reject) => {
      execFile('git', args, { cwd: repo.dir, maxBuffer: Infinity, ...(env ? { env } : {}) }, (err, stdout) => (err && err.code !== 1 ? reject(err) : resolve(stdout)))
    })
  const expect = (what, c) => {
    if (c.changed !== MODIFIED || c.untracked !== UNTRACKED) throw new Error(`${what} saw ${c.changed} changed and ${c.untracked} untracked files`)
  }
  const env = gitEnv({ workspace: repo.dir, envPassthrough: [] }, { read: true })
  const DRIVER_KEYS = '^(filter|diff|merge)\\..*\\.(clean|smudge|process|required|textconv|command|driver)$|^protocol\\..*\\.allow$'
  const c = {
    fsgate: async () => {
      const r = await session.call('git_operations', { operation: 'status' })
      if (r.isError) throw new Error(`git_operations status failed: ${r.content[0]?.text}`)
      const e = r.data.entries
      expect('git_operations', { changed: e.filter((x) => x.kind === 'changed').length, untracked: e.filter((x) => x.kind === 'untracked').length })
    },
    three: async () => {
      await run(['--no-pager', 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir'], env)
      await run(['--no-pager', 'config', '-z', '--show-scope', '--get-regexp', DRIVER_KEYS], env)
      const out = await run(['--no-pager', 'status', '--porcelain=v2', '-z', '--branch', '--show-stash', '--untracked-files=normal', '--ignore-submodules=all'], env)
      expect('the three git commands', countPorcelain(out))
    },
    status: async () => expect('git status', countPorcelain(await run(['status', '--porcelain=v2', '-z']))),
  }
  const res = await interleave(
    Object.fromEntries(Object.entries(c).map(([k, fn]) => [k, { fn, warmup: 2 }])),
    { rounds: GIT_ROUNDS },
  )
  const g = res.status.median
  const line = (label, x) => [label, x.times.length, fmtMs(x.median), fmtMs(percentile(x.times, 95)), fmtMs(x.min), fmtRatio(x.median / g)]
  const rows = [
    line('fsgate `session.call("git_operations", {operation: "status"})`, preset revka (budget off)', res.fsgate),
    line("(breakdown) the three git processes it runs, via `execFile` one after another, in its environment: `rev-parse`, `config --get-regexp` (the repository's drivers), `status --porcelain=v2 -z --branch --show-stash …`", res.three),
    line('`git status --porcelain=v2 -z` via `execFile`', res.status),
  ]
  section(
    '11f. shell: git_operations status on a 5,000-file repository',
    `Repository: ${fmtNum(REPO_DIRS * REPO_PER_DIR)} committed files (${REPO_DIRS} folders of ${REPO_PER_DIR}, 1–2 KB each${repo.generated ? `, generated in ${fmtMs(genMs)}` : ''}), ${MODIFIED} of them modified (a line appended) and ${UNTRACKED} untracked files beside them; the index was refreshed after the commit, so git compares by stat. The methods run twice untimed, then interleaved in ${GIT_ROUNDS} rounds. Every run checks for ${MODIFIED} changed and ${UNTRACKED} untracked entries. The ratio is a cost: time / \`git status\`.`,
    table(['method', 'runs', 'median', 'p95', 'min', 'time / git status'], rows),
    [
      "git_operations runs git three times per call: `rev-parse` finds the repository and checks it lies inside the workspace, `config --get-regexp` lists the filter, diff and merge drivers the repository's own config defines so they can be overridden, then `status` with the branch and stash headers; it then parses the porcelain v2 output into `data` and writes the `git status --short`-style text. Each process also gets the hardened environment (about 20 `GIT_CONFIG_*` pairs).",
    ],
  )
  goalAtMost('11f. git_operations status, 5,000 files, time / git status', GIT_GOAL, `${fmtRatio(res.fsgate.median / g)} (${fmtMs(res.fsgate.median)} vs ${fmtMs(g)})`, res.fsgate.median / g)
}

// ---------------------------------------------------------------------------------------
// 11g. The sandbox: what it adds to a call, and the event loop with 16 sandboxed sessions
// ---------------------------------------------------------------------------------------
async function benchSandbox(ctx, ws) {
  const { fsgate, section, goals, status } = ctx
  const sandboxed = async (kind) => {
    const session = fsgate.createToolkit({ workspace: ws, preset: 'claude-code', policy: { sandbox: kind } }).createSession()
    const r = await session.call('Bash', { command: 'true' })
    return r.isError ? null : session
  }
  const sessions = { none: await sandboxed('none'), bwrap: await sandboxed('bwrap'), landlock: await sandboxed('landlock') }
  const call = (session, backend) => async () => {
    const r = okBash(await session.call('Bash', { command: 'true' }), `true in ${backend}`)
    if (r.data.exitCode !== 0 || r.data.sandbox !== backend) throw new Error(`true in ${backend}: exit ${r.data.exitCode}, sandbox ${r.data.sandbox}`)
  }
  const c = { execFile: () => execSh('true', { cwd: ws }) }
  for (const [backend, session] of Object.entries(sessions)) if (session) c[backend] = call(session, backend)
  const res = await interleave(Object.fromEntries(Object.entries(c).map(([k, fn]) => [k, { fn, warmup: 10 }])), { rounds: SANDBOX_ROUNDS })
  const base = res.none.median
  const line = (label, x) => [label, fmtMs(x.median), fmtMs(percentile(x.times, 95)), fmtMs(x.min), x === res.none || x === res.execFile ? '—' : `+${fmtMs(x.median - base)}`, fmtRatio(x.median / res.execFile.median)]
  const rows = [
    line('Node `execFile("sh", ["-c", "true"])`', res.execFile),
    line('fsgate `Bash "true"`, `sandbox: "none"`', res.none),
    ...(res.bwrap ? [line('fsgate `Bash "true"`, `sandbox: "bwrap"` (namespaces, binds, the git paths noted and checked)', res.bwrap)] : []),
    ...(res.landlock ? [line('fsgate `Bash "true"`, `sandbox: "landlock"` (Landlock + seccomp, a private TMPDIR made and removed, the git paths checked)', res.landlock)] : []),
  ]
  // 16 sessions each running sandboxed commands back to back, with the loop sampled.
  const loads = {}
  for (const backend of ['bwrap', 'landlock']) {
    if (!sessions[backend]) continue
    const tk = fsgate.createToolkit({ workspace: ws, preset: 'claude-code', policy: { sandbox: backend } })
    const probe = loopProbe()
    let calls = 0
    const end = now() + SANDBOX_LOAD_SECONDS * 1000
    probe.start()
    await Promise.all(
      Array.from({ length: SANDBOX_LOAD_CALLS }, async () => {
        const one = call(tk.createSession(), backend)
        do {
          await one()
          calls++
        } while (now() < end)
      }),
    )
    probe.stop()
    loads[backend] = { ...probe.result(), calls }
  }
  const loadRows = Object.entries(loads).map(([backend, x]) => [`${SANDBOX_LOAD_CALLS} sessions, \`Bash "true"\` in ${backend}, back to back`, fmtMs(x.hP50), fmtMs(x.hP99), fmtMs(x.hMax), fmtMs(x.lagP99), `${fmtNum(x.calls)} calls, ${fmtNum(Math.round(x.calls / SANDBOX_LOAD_SECONDS))}/s`])
  section(
    '11g. shell: the sandbox (what it adds to a call; 16 sandboxed sessions)',
    `Each row runs \`sh -c true\` in the same workspace (not a git repository), 10 times untimed, then all interleaved in ${SANDBOX_ROUNDS} rounds, one call at a time; median, p95, min. Every fsgate call is checked for exit 0 and for \`data.sandbox\` naming the backend it asked for. Below: ${SANDBOX_LOAD_CALLS} sessions of one toolkit each run sandboxed \`true\` back to back for ${SANDBOX_LOAD_SECONDS} s while the event loop is sampled as in 11d.`,
    table(['method', 'median', 'p95', 'min', 'added to sandbox "none"', 'time / execFile'], rows) + '\n\n' + table(['load', 'loop delay p50', 'loop delay p99', 'loop delay max', 'setInterval(1) lag p99', 'throughput'], loadRows),
    [
      'bwrap is a setuid-free program of its own: the call starts it, it sets up the namespaces and mounts and then starts `sh`, so its cost is one more exec and the mount work. Landlock is set up by the addon in the child between its fork and its exec (a clone that shares memory until then): a few system calls, plus the private TMPDIR.',
    ],
  )
  for (const backend of ['bwrap', 'landlock']) {
    if (!res[backend]) continue
    const added = res[backend].median - base
    goals.push({ bench: `11g. sandbox (${backend}) adds to a Bash call`, goal: `≤ ${SANDBOX_GOAL_MS} ms`, measured: `+${fmtMs(added)} (${fmtMs(res[backend].median)} vs ${fmtMs(base)} unsandboxed)`, met: status(SANDBOX_GOAL_MS / Math.max(added, 1e-9)) })
    const l = loads[backend]
    goals.push({ bench: `11g. event-loop p99, ${SANDBOX_LOAD_CALLS} sessions of ${backend} commands`, goal: `< ${SANDBOX_LAG_GOAL_MS} ms`, measured: `${fmtMs(l.hP99)} (setInterval lag p99 ${fmtMs(l.lagP99)})`, met: status(SANDBOX_LAG_GOAL_MS / Math.max(l.hP99, l.lagP99, 1e-9)) })
  }
}
