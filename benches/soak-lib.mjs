// The load suite (issue 8, "Hardening"): many sessions of one toolkit, and a few of a
// second toolkit on the same workspace, run a random mix of every tool for a while on a
// copy of a real source tree, and the run checks what must hold however long it lasts:
//
// - no lost update: shared counter files bumped by many sessions (read → edit the number
//   → on STALE re-read and retry) end at the number of successful bumps; each session's
//   own line of one shared file, its own real source file and its own scratch file end at
//   the value it last wrote; a file rewritten whole by many sessions ends at its number of
//   successful writes; no read, search or `cat` ever sees a torn or mixed file;
// - memory: RSS (and heap, external, array buffers) sampled every second; after the
//   warm-up, the slope of RSS over the second half and the growth from the first to the
//   last quarter are bounded, and so is the heap after a full GC at quiet checkpoints;
// - file descriptors, threads and child processes: counted at quiet checkpoints (every
//   session parked between calls) after the warm-up, in the middle and at the end;
// - event-loop delay: `monitorEventLoopDelay`, against a baseline phase of the same loops
//   doing a trivial async no-op, run first in the same process;
// - errors: every result has the ToolResult shape; every error code is one the call may
//   give (STALE for a contended edit, ABORTED for a cancelled call, ...); anything else,
//   INTERNAL above all, fails the run.
//
// `benches/soak.mjs` runs it from the command line (`npm run soak`); `__test__/soak.test.ts`
// runs a short mode in CI. `runSoak(fsgate, options)` takes the fsgate module itself, so
// the script can pass the build (dist/) and the test the TypeScript sources.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire, syncBuiltinESMExports } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { createHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'

import { rng } from './lib.mjs'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const MiB = 2 ** 20

// ---------------------------------------------------------------------------------------
// Options and bounds

export const DEFAULTS = Object.freeze({
  /** Seconds of the measured run, warm-up included (the baseline phase comes first). */
  seconds: 300,
  /** Sessions of toolkit A (preset claude-code), running at once. */
  sessions: 64,
  /** Sessions of toolkit B (preset revka with read-before-write on) on the same workspace. */
  peerSessions: 8,
  /** Seconds of warm-up; default: 10% of the run, between 5 and 30. */
  warmupSeconds: undefined,
  /** Seconds of the baseline phase (the same loops, a no-op each); default: 5% of the run, between 3 and 15. */
  baselineSeconds: undefined,
  /** Calls a conversation makes before its session is dropped and a new one takes its place: [min, max]. */
  conversationCalls: [10, 150],
  /** Share of the read-only calls that carry an AbortSignal that fires early. */
  abortShare: 0.08,
  seed: 1,
  /** Only these steps of the mix (for finding what a figure comes from), e.g. ['read', 'shell']; all when absent. */
  only: undefined,
  /** Which tree: 'full' (~3,700 files, 42 MiB) or 'small' (~600 files; see SOURCES). */
  tree: 'full',
  /** Where the tree is copied (a new folder under os.tmpdir() by default); removed at the end unless `keepTree`. */
  treeDir: undefined,
  keepTree: false,
  /** Called with progress lines. */
  log: () => {},
})

/**
 * Bounds for a run of several minutes. Memory: a leak of 100 bytes per call at the
 * ~1,000 calls/s of this suite is ~6 MiB/min, so the slope bound catches leaks of that
 * size and more; fd, thread and child counts must come back exactly.
 */
export const FULL_BOUNDS = Object.freeze({
  rssSlopeMiBPerMin: 4,
  rssGrowthMiB: 48,
  heapGrowthMiB: 16,
  loopP99Ms: 100,
  loopMaxMs: 2000,
  minCallsPerSecond: 50,
})

/**
 * Bounds for the short CI mode (~20 s on a shared 2-core machine, other suites running
 * beside it): the exact checks are the same, the timing and memory bounds are generous.
 * The loop bounds catch a JS thread held for seconds, not the tens to hundreds of ms that
 * a loaded machine adds to every spawn of a shell or git child (Node's spawn is
 * synchronous: the JS thread waits until the child has exec'd).
 */
export const SHORT_BOUNDS = Object.freeze({
  rssSlopeMiBPerMin: Infinity, // too few samples after the warm-up to fit a slope that means anything
  rssGrowthMiB: 96,
  heapGrowthMiB: 32,
  loopP99Ms: 3000,
  loopMaxMs: 15_000,
  minCallsPerSecond: 5,
})

// ---------------------------------------------------------------------------------------
// The tree

/**
 * Sources copied into the workspace: [from (relative to the repository), to]. 'full': this
 * repository's ts/ and crates/, the whole @anthropic-ai/sdk package (its sources, builds
 * and source maps: ~3,500 files) and typescript/lib (~125 files, 23 MiB, typescript.js is
 * 9 MiB); 'small' (the CI mode): the same without the SDK's builds and maps (~600 files),
 * since every file costs a few ms to copy, add to git and remove on a loaded machine.
 */
const SOURCES = {
  full: [
    ['ts', 'ts'],
    ['crates', 'crates'],
    ['node_modules/@anthropic-ai/sdk', 'vendor/anthropic-sdk'],
    ['node_modules/typescript/lib', 'vendor/typescript-lib'],
  ],
  small: [
    ['ts', 'ts'],
    ['crates', 'crates'],
    ['node_modules/@anthropic-ai/sdk/src', 'vendor/anthropic-sdk/src'],
    ['node_modules/typescript/lib', 'vendor/typescript-lib'],
  ],
}
const TEXT = /\.(?:[cm]?[jt]s|d\.[cm]?ts|rs|md|json|toml|txt)$/
const COUNTERS_A = 6 // bumped by toolkit A's sessions only
const COUNTERS_X = 2 // bumped by both toolkits
const COUNTER_PAD = 30
const GEN_LINES = 200

/**
 * Copies the real tree into `dir` (made under os.tmpdir() when absent), adds the soak's
 * own files, marks one real source file per slot, and commits it all to a new git
 * repository. Returns what the run needs to know about it.
 */
export function makeTree({ dir, slots, lineSlots = slots, sources = 'full' }) {
  const t0 = performance.now()
  if (dir) mkdirSync(dir, { recursive: true })
  dir = realpathSync(dir ?? mkdtempSync(path.join(os.tmpdir(), 'fsgate-soak-')))
  for (const [from, to] of SOURCES[sources]) {
    const src = path.join(ROOT, from)
    if (!existsSync(src)) continue
    cpSync(src, path.join(dir, to), { recursive: true, filter: (p) => !/[/\\](?:target|node_modules|\.git)$/.test(p) })
  }
  const files = []
  let bytes = 0
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const abs = path.join(entry.parentPath, entry.name)
    const size = statSync(abs).size
    bytes += size
    if (!TEXT.test(entry.name) || size === 0 || size > 8 * MiB) continue
    const text = readFileSync(abs, 'latin1')
    let newlines = 0
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) newlines++
    const lines = newlines + (text.endsWith('\n') ? 0 : 1)
    files.push({ rel: path.relative(dir, abs).split(path.sep).join('/'), size, lines, newlines, crlf: text.includes('\r'), bom: text.startsWith('\xef\xbb\xbf') })
  }
  files.sort((a, b) => (a.rel < b.rel ? -1 : 1))
  const fileCount = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length

  // One real source file per slot, 2–40 KB and under 1,500 lines (one unranged read
  // covers it), gets a marker line its slot bumps; the others are never changed.
  const candidates = files.filter((f) => /\.(?:ts|rs|js|mjs)$/.test(f.rel) && f.size >= 2000 && f.size <= 40_000 && f.lines < 1500 && !f.crlf && !f.bom)
  if (candidates.length < slots) throw new Error(`the tree has ${candidates.length} files to mark, fewer than ${slots} slots`)
  const step = candidates.length / slots
  const owned = []
  for (let s = 0; s < slots; s++) {
    const f = candidates[Math.floor(s * step)]
    const abs = path.join(dir, f.rel)
    const text = readFileSync(abs, 'utf8')
    writeFileSync(abs, `${text}${text.endsWith('\n') ? '' : '\n'}${markLine(s, 0)}\n`)
    owned.push(f.rel)
  }
  const ownedSet = new Set(owned)
  const stable = files.filter((f) => !ownedSet.has(f.rel))

  mkdirSync(path.join(dir, 'soak', 'own'), { recursive: true })
  const counters = [...Array.from({ length: COUNTERS_A }, (_, i) => `a${i}`), ...Array.from({ length: COUNTERS_X }, (_, i) => `x${i}`), 'abort']
  for (const name of counters) writeFileSync(path.join(dir, counterPath(name)), counterText(name, 0))
  writeFileSync(path.join(dir, 'soak/lines.txt'), linesText(Array.from({ length: lineSlots }, () => 0)))
  writeFileSync(path.join(dir, 'soak/gen.txt'), genText(0))
  writeFileSync(path.join(dir, 'soak/README.md'), 'Files of the load suite (benches/soak-lib.mjs).\n')

  const git = (...args) => execFileSync('git', ['-c', 'user.name=soak', '-c', 'user.email=soak@example.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, stdio: 'pipe' })
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'the soak tree')

  // Facts the shell calls are checked against: files that never change.
  const probes = stable.filter((f) => f.size < 200_000 && !f.crlf).filter((_, i, a) => i % Math.max(1, Math.floor(a.length / 40)) === 0)
  const folders = ['ts', 'ts/tools', 'crates/core/src', 'vendor/anthropic-sdk', 'vendor/anthropic-sdk/src', 'vendor/typescript-lib'].filter((d) => existsSync(path.join(dir, d)))
  const listings = Object.fromEntries(folders.map((d) => [d, readdirSync(path.join(dir, d)).filter((n) => !n.startsWith('.')).length]))
  return { dir, files: stable, owned, counters, probes, listings, fileCount, bytes, setupMs: performance.now() - t0 }
}

export const counterPath = (name) => `soak/counter-${name}.txt`

/** A counter file: its name, `value: NNNNNN`, padding, and an end line, so a torn copy shows. */
export function counterText(name, value) {
  const pad = Array.from({ length: COUNTER_PAD }, (_, i) => `pad ${i + 1} of counter ${name}`)
  return [`counter ${name}`, valueLine(value), ...pad, `end ${name}`].join('\n') + '\n'
}
const valueLine = (v) => `value: ${String(v).padStart(6, '0')}`

/** The value in a counter file's lines, or a string saying how the lines are malformed. */
export function parseCounter(name, lines) {
  if (lines.length !== COUNTER_PAD + 3) return `counter ${name}: ${lines.length} lines, not ${COUNTER_PAD + 3}`
  if (lines[0] !== `counter ${name}` || lines[lines.length - 1] !== `end ${name}`) return `counter ${name}: wrong first or last line`
  for (let i = 0; i < COUNTER_PAD; i++) if (lines[i + 2] !== `pad ${i + 1} of counter ${name}`) return `counter ${name}: wrong pad line ${i + 3}`
  const m = /^value: (\d{6})$/.exec(lines[1])
  return m ? Number(m[1]) : `counter ${name}: malformed value line '${lines[1]}'`
}

const slotLine = (slot, v) => `slot ${String(slot).padStart(3, '0')} value ${String(v).padStart(6, '0')}`
export function linesText(values) {
  return ['lines of the soak: one per slot, each changed by its own slot only', ...values.map((v, s) => slotLine(s, v)), 'end of lines'].join('\n') + '\n'
}
/** The slots' values in the lines file, or a string saying how it is malformed. */
export function parseLines(lines, slots) {
  if (lines.length !== slots + 2) return `lines file: ${lines.length} lines, not ${slots + 2}`
  if (!lines[0].startsWith('lines of the soak') || lines[slots + 1] !== 'end of lines') return 'lines file: wrong first or last line'
  const values = []
  for (let s = 0; s < slots; s++) {
    const m = /^slot (\d{3}) value (\d{6})$/.exec(lines[s + 1])
    if (!m || Number(m[1]) !== s) return `lines file: malformed line ${s + 2} '${lines[s + 1]}'`
    values.push(Number(m[2]))
  }
  return values
}

const genLine = (g, i) => `gen ${String(g).padStart(6, '0')} line ${String(i).padStart(3, '0')} of a file rewritten whole`
export function genText(g) {
  return Array.from({ length: GEN_LINES }, (_, i) => genLine(g, i + 1)).join('\n') + '\n'
}
/** The generation of the gen file, or a string when its lines are not all of one generation. */
export function parseGen(lines) {
  if (lines.length !== GEN_LINES) return `gen file: ${lines.length} lines, not ${GEN_LINES}`
  const m = /^gen (\d{6}) /.exec(lines[0])
  if (!m) return `gen file: malformed first line '${lines[0]}'`
  const g = Number(m[1])
  for (let i = 0; i < GEN_LINES; i++) if (lines[i] !== genLine(g, i + 1)) return `gen file: line ${i + 1} is not of generation ${g} (mixed or torn)`
  return g
}

const markLine = (slot, v) => `// soak-mark slot-${String(slot).padStart(3, '0')} ${String(v).padStart(6, '0')}`
const ownPath = (slot) => `soak/own/slot-${String(slot).padStart(3, '0')}.txt`
const ownText = (slot, rev) => Array.from({ length: 12 }, (_, i) => `slot ${slot} rev ${rev} line ${i + 1}`).join('\n') + '\n'

// ---------------------------------------------------------------------------------------
// Process facts

export function fdCount() {
  try {
    return readdirSync('/proc/self/fd').length - 1 // less the one readdir itself opened
  } catch {
    return NaN
  }
}

export function threadCount() {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN)
  } catch {
    return NaN
  }
}

/** This process's children, alive and zombies, from /proc. */
export function children() {
  const out = { alive: 0, zombies: 0, commands: [] }
  let pids = []
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n))
  } catch {
    return out
  }
  for (const pid of pids) {
    let stat
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(rest[1]) !== process.pid) continue
    if (rest[0] === 'Z') out.zombies++
    else out.alive++
    out.commands.push(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')))
  }
  return out
}

/** Jiffies of the whole machine (busy, total) and of this process and its reaped children. */
function cpuTicks() {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
    const total = cpu.reduce((a, b) => a + b, 0)
    const idle = cpu[3] + (cpu[4] ?? 0)
    const self = readFileSync('/proc/self/stat', 'utf8')
    const f = self.slice(self.lastIndexOf(')') + 2).split(' ').map(Number)
    return { busy: total - idle, total, self: f[11] + f[12], children: f[13] + f[14] }
  } catch {
    return null
  }
}

/** What else is running: the load average and the busiest other processes (top). */
export function machineLoad() {
  const load = os.loadavg().map((x) => Number(x.toFixed(2)))
  let top = []
  try {
    const out = execFileSync('top', ['-bn1', '-w', '200'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    const lines = out.split('\n')
    const head = lines.findIndex((l) => /^\s*PID\s/.test(l))
    top = lines
      .slice(head + 1)
      .map((l) => l.trim().split(/\s+/))
      .filter((c) => c.length >= 12 && Number(c[0]) !== process.pid && Number(c[8]) >= 5)
      .map((c) => `${c.slice(11).join(' ')} ${c[8]}%`)
      .slice(0, 6)
  } catch {
    // no top
  }
  return { load, top }
}

/** A function that runs a full garbage collection (exposed at run time when node was not started with --expose-gc). */
function gcFunction() {
  if (typeof globalThis.gc === 'function') return globalThis.gc
  try {
    v8.setFlagsFromString('--expose-gc')
    return vm.runInNewContext('gc')
  } catch {
    return null
  }
}

// ---------------------------------------------------------------------------------------
// Statistics

/** Least-squares slope of y over x. */
export function slope(xs, ys) {
  const n = xs.length
  if (n < 2) return NaN
  const mx = xs.reduce((a, b) => a + b, 0) / n
  const my = ys.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my)
    den += (xs[i] - mx) ** 2
  }
  return den === 0 ? NaN : num / den
}

export function median(xs) {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** A bounded latency record: an HDR histogram of microseconds (memory does not grow with calls). */
function latency() {
  return createHistogram({ lowest: 1, highest: 600_000_000, figures: 2 })
}
const ms = (h, p) => (h.count === 0 ? NaN : (p === 'max' ? h.max : h.percentile(p)) / 1000)
/** An event-loop delay histogram's figure in ms, less the resolution of its own timer. */
const loopMs = (h, p, resolution) => (h.count === 0 ? NaN : Math.max(0, (p === 'max' ? h.max : h.percentile(p)) / 1e6 - resolution))

// ---------------------------------------------------------------------------------------
// Reading results

/** Whether `r` has the ToolResult shape of SPEC §2 (and is JSON-safe): null, or what is wrong. */
export function shapeProblem(r, codes) {
  if (typeof r !== 'object' || r === null) return 'not an object'
  if (typeof r.isError !== 'boolean') return 'isError is not a boolean'
  if (!Array.isArray(r.content) || r.content.length === 0) return 'content is not a non-empty array'
  for (const b of r.content) {
    if (b?.type === 'text') {
      if (typeof b.text !== 'string') return 'a text block without text'
    } else if (!(b?.type === 'image' && typeof b.data === 'string' && /^image\//.test(b.mimeType))) return `a block of type ${b?.type}`
  }
  if (r.isError) {
    if (!r.error || typeof r.error.code !== 'string') return 'an error without error.code'
    if (!codes.has(r.error.code)) return `unknown error code ${r.error.code}`
  } else if (r.error !== undefined) return 'a success with an error'
  if (r.data !== undefined && (typeof r.data !== 'object' || r.data === null)) return 'data is not an object'
  try {
    JSON.stringify(r)
  } catch {
    return 'not JSON-safe'
  }
  return null
}

const textOf = (r) => r.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n')

/**
 * The numbered lines of a Read page, in either line style (`cat -n`: "     7\ttext";
 * colon: "7: text"), as [lineNumber, text] pairs; the footers are not lines.
 */
export function pageLines(text, style) {
  const out = []
  const re = style === 'colon' ? /^(\d+): (.*)$/ : /^ *(\d+)\t(.*)$/
  for (const line of text.split('\n')) {
    const m = re.exec(line)
    if (m) out.push([Number(m[1]), m[2]])
  }
  return out
}

// ---------------------------------------------------------------------------------------
// The run

/**
 * Runs the load suite with the fsgate module `fsgate` (dist/ or the TypeScript sources)
 * and returns every figure and fact it measured; `checkSoak` decides pass or fail.
 */
export async function runSoak(fsgate, options = {}) {
  const o = { ...DEFAULTS, ...options }
  const log = o.log
  const warmupSeconds = o.warmupSeconds ?? Math.min(30, Math.max(5, o.seconds * 0.1))
  const baselineSeconds = o.baselineSeconds ?? Math.min(15, Math.max(3, o.seconds * 0.05))
  const slotsA = o.sessions
  const slotsB = o.peerSessions
  const slots = slotsA + slotsB
  const codes = new Set(fsgate.ERROR_CODES)
  const gc = gcFunction()

  log(`copying the tree (${slots} slots) ...`)
  const tree = makeTree({ dir: o.treeDir, slots, lineSlots: slotsA, sources: o.tree })
  log(`tree: ${tree.fileCount} files, ${(tree.bytes / MiB).toFixed(1)} MiB in ${tree.dir} (${(tree.setupMs / 1000).toFixed(1)} s)`)

  const loadBefore = machineLoad()
  const toolkitA = fsgate.createToolkit({ workspace: tree.dir, preset: 'claude-code', policy: { actionsPerHour: null } })
  const toolkitB = fsgate.createToolkit({ workspace: tree.dir, preset: 'revka', policy: { readBeforeWrite: true, actionsPerHour: null } })
  const kits = {
    A: { toolkit: toolkitA, style: 'cat-n', names: { read: 'Read', edit: 'Edit', write: 'Write', glob: 'Glob', grep: 'Grep', shell: 'Bash' } },
    B: { toolkit: toolkitB, style: 'colon', names: { read: 'file_read', edit: 'file_edit', write: 'file_write', glob: 'glob_search', grep: 'content_search', shell: 'shell' } },
  }

  // --- what the run tallies (all of it bounded: counters, histograms, capped example lists)
  const stats = new Map() // kind → { calls, ok, codes: {code: n}, hist, aborted }
  // unexpectedShared: an unexpected code from a change to what both toolkits change.
  // lostOutput: a command that must print something returned exit 0 and no output.
  const problems = { unexpected: 0, unexpectedShared: 0, lostOutput: 0, malformed: 0, torn: 0, wrongContent: 0, lostUpdate: 0, staleStub: 0, dedupMiss: 0, examples: [] }
  const problem = (what, detail) => {
    problems[what]++
    if (problems[what] <= 5) problems.examples.push(`${what}: ${detail}`) // the first five of each kind
  }
  const counters = Object.fromEntries(tree.counters.map((n) => [n, { bumps: 0, attempts: 0, stale: 0, aborted: 0, gaveUp: 0, byKit: { A: 0, B: 0 } }]))
  const lineValues = new Array(slotsA).fill(0)
  const lineEdits = { bumps: 0, attempts: 0, stale: 0, gaveUp: 0 }
  const gen = { writes: 0, attempts: 0, stale: 0, gaveUp: 0 }
  const marks = new Array(slots).fill(0)
  const ownRevs = new Array(slots).fill(0)
  const retries = latency() // attempts per successful contended change (not a latency, same bounded record)
  let sessionsMade = 0
  let stubsSeen = 0
  let verifiedReads = 0

  const kindStats = (kind) => {
    let s = stats.get(kind)
    if (!s) {
      s = { calls: 0, ok: 0, codes: {}, aborted: 0, withSignal: 0, hist: latency() }
      stats.set(kind, s)
    }
    return s
  }

  /**
   * One call, timed and checked: its shape, and that an error code is one this call may
   * give (`allowed`, plus ABORTED when it carried a signal that fired).
   */
  let inflight = 0
  async function call(slot, kind, name, input, { allowed = [], abort, shared = false } = {}) {
    const s = kindStats(kind)
    let signal
    if (abort === 'now') signal = AbortSignal.abort()
    else if (typeof abort === 'number') signal = AbortSignal.timeout(abort)
    else if (abort === 'tick') {
      const c = new AbortController()
      setImmediate(() => c.abort())
      signal = c.signal
    }
    if (signal) s.withSignal++
    inflight++
    const t0 = performance.now()
    let r
    try {
      r = await slot.session.call(name, input, signal ? { signal } : undefined)
    } catch (err) {
      r = { thrown: err }
    } finally {
      inflight--
    }
    s.hist.record(Math.max(1, Math.round((performance.now() - t0) * 1000)))
    s.calls++
    slot.callsLeft--
    if (r.thrown) {
      problem('unexpected', `${kind}: session.call threw ${r.thrown?.stack ?? r.thrown}`)
      return { isError: true, error: { code: 'THREW' }, content: [] }
    }
    const bad = shapeProblem(r, codes)
    if (bad) problem('malformed', `${kind} ${JSON.stringify(input).slice(0, 120)}: ${bad}`)
    if (!r.isError) s.ok++
    else {
      const code = r.error?.code ?? '?'
      s.codes[code] = (s.codes[code] ?? 0) + 1
      if (code === 'ABORTED') s.aborted++
      const ok = allowed.includes(code) || (code === 'ABORTED' && signal && signal.aborted)
      if (!ok) problem(shared ? 'unexpectedShared' : 'unexpected', `${kind} ${JSON.stringify(input).slice(0, 160)}${signal ? ` (with a signal, ${signal.aborted ? 'fired' : 'not fired'})` : ''} → ${code}: ${textOf(r).slice(0, 300)}`)
    }
    if (abort === 'now' && !(r.isError && r.error?.code === 'ABORTED')) problem('unexpected', `${kind} with an aborted signal did not return ABORTED`)
    return r
  }

  // --- random choices
  const rand = rng(o.seed)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const between = (a, b) => a + Math.floor(rand() * (b - a + 1))
  const abortChoice = () => (rand() < o.abortShare ? pick(['now', 'tick', between(1, 5), between(5, 40)]) : undefined)

  function newConversation(slot) {
    slot.session = slot.kit.toolkit.createSession()
    slot.memo = new Map() // path → what this conversation last saw of it (a parsed value)
    slot.lastRead = null // [rel, offset, limit] of the last tree read, to repeat for a stub
    slot.callsLeft = between(o.conversationCalls[0], o.conversationCalls[1])
    sessionsMade++
  }

  /** Reads a whole small file the soak changes; returns its lines, or null (a stub: the caller's memo holds). */
  async function readWhole(slot, kind, rel) {
    const r = await call(slot, kind, slot.kit.names.read, slot.kit === kits.A ? { file_path: rel } : { path: rel })
    if (r.isError) return { error: r.error.code }
    if (r.data?.unchanged) {
      stubsSeen++
      return { stub: true }
    }
    const lines = pageLines(textOf(r), slot.kit.style).map(([, t]) => t)
    if (r.data?.totalLines !== lines.length) problem('torn', `${rel}: totalLines ${r.data?.totalLines} but ${lines.length} lines shown`)
    return { lines }
  }

  const fileArg = (slot, rel) => (slot.kit === kits.A ? { file_path: rel } : { path: rel })

  /**
   * A read → edit → on STALE read again and retry loop on a small shared file, the way an
   * agent bumps a number. `parse(lines)` gives the current value or a malformed-file string;
   * `change(v)` gives [old_string, new_string, new value].
   */
  async function contended(slot, rel, { parse, change, tally, abortEdit = false, shared = false, maxAttempts = 400 }) {
    let known = slot.memo.get(rel) // the value this conversation last saw or wrote
    let lastWasStale = false
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // A checkpoint or the end is waiting: the agent stops here (not a failure).
      if (gate || stopping) return { interrupted: true }
      if (known === undefined || lastWasStale) {
        const got = await readWhole(slot, 'Read (soak files)', rel)
        if (got.error) return
        if (got.stub) {
          if (lastWasStale) problem('staleStub', `${rel}: a re-read after STALE was answered with a stub`)
          if (known === undefined) {
            problem('unexpected', `${rel}: a stub for a file this conversation never read`)
            return
          }
        } else {
          const v = parse(got.lines)
          if (typeof v === 'string') {
            problem('torn', v)
            return
          }
          known = v
          slot.memo.set(rel, v)
        }
      }
      const [oldString, newString, next] = change(known)
      tally.attempts++
      const abort = abortEdit ? pick(['tick', 0, 1, 2, 3, 'none']) : undefined
      const r = await call(slot, 'Edit', slot.kit.names.edit, { ...fileArg(slot, rel), old_string: oldString, new_string: newString }, {
        allowed: ['STALE'],
        abort: abort === 'none' ? undefined : abort,
        shared,
      })
      if (!r.isError) {
        if (r.data?.replacements !== 1) problem('unexpected', `${rel}: an edit reported ${r.data?.replacements} replacements`)
        slot.memo.set(rel, next)
        retries.record(attempt)
        return { value: next, attempts: attempt }
      }
      if (r.error.code === 'STALE') {
        tally.stale++
        lastWasStale = true
        continue
      }
      if (r.error.code === 'ABORTED') {
        tally.aborted = (tally.aborted ?? 0) + 1
        return { aborted: true }
      }
      return
    }
    tally.gaveUp++
  }

  // --- the operations (each is one agent step: one or a few calls)
  const stablePick = () => pick(tree.files)

  const ops = {
    async idle() {
      await sleep(10)
    },

    async read(slot) {
      const kit = slot.kit
      let rel
      let input
      if (slot.lastRead && rand() < 0.1) {
        // The same range of an unchanged file again: must be the ~100-byte stub.
        ;[rel, input] = slot.lastRead
        const r = await call(slot, 'Read', kit.names.read, input, { allowed: ['TOKEN_LIMIT'] })
        if (!r.isError) {
          if (r.data?.unchanged) stubsSeen++
          else problem('dedupMiss', `${rel} ${JSON.stringify(input)}: a repeated read of an unchanged file was not a stub`)
        }
        return
      }
      const f = stablePick()
      rel = f.rel
      const ranged = f.size > 48_000 || rand() < 0.6
      const offset = ranged ? between(1, Math.max(1, f.lines)) : undefined
      const limit = ranged ? between(1, 200) : undefined
      input = { ...fileArg(slot, rel), ...(ranged ? { offset, limit } : {}) }
      const abort = abortChoice()
      const r = await call(slot, 'Read', kit.names.read, input, { allowed: ['TOKEN_LIMIT'], abort })
      if (r.isError) return
      if (!abort) slot.lastRead = [rel, input]
      if (r.data?.unchanged) return // an earlier read of this conversation covered it
      const first = offset ?? 1
      if (r.data?.startLine !== first && !(f.lines === 0 && first === 1)) problem('wrongContent', `${rel}: startLine ${r.data?.startLine}, asked ${first}`)
      if (r.data?.totalLines !== f.lines) problem('wrongContent', `${rel}: totalLines ${r.data?.totalLines}, the file has ${f.lines}`)
      if (rand() < 0.15 && !f.crlf && !f.bom) {
        // Compare the page with the file itself.
        const lines = (await readFile(path.join(tree.dir, rel), 'utf8')).split('\n')
        for (const [n, t] of pageLines(textOf(r), kit.style)) {
          const want = lines[n - 1]
          if (want !== undefined && want.length <= 1000 && want !== t) {
            problem('wrongContent', `${rel}:${n}: read '${t.slice(0, 80)}', the file has '${want.slice(0, 80)}'`)
            break
          }
        }
        verifiedReads++
      }
    },

    async glob(slot) {
      const patterns = ['**/*.ts', 'ts/tools/*.ts', 'crates/**/*.rs', '**/*.{json,md}', 'vendor/anthropic-sdk/**/*.ts', '**/index.*', 'vendor/typescript-lib/*.d.ts', 'soak/**']
      const pattern = pick(patterns)
      const abort = abortChoice()
      const r = await call(slot, 'Glob', slot.kit.names.glob, { pattern }, { abort })
      if (!r.isError && !(Array.isArray(r.data?.files) && r.data.files.length > 0)) problem('wrongContent', `glob ${pattern} found nothing`)
    },

    async grep(slot) {
      const forms = [
        { pattern: 'createSession', output_mode: 'files_with_matches' },
        { pattern: 'export (const|function|class) \\w+', output_mode: 'count' },
        { pattern: 'AbortSignal', output_mode: 'content', head_limit: 50 },
        { pattern: 'fn \\w+\\(', output_mode: 'files_with_matches', path: 'crates' },
        { pattern: 'TODO|FIXME', output_mode: 'content', head_limit: 20 },
        { pattern: 'interface \\w+Params', output_mode: 'files_with_matches', path: 'vendor/anthropic-sdk' },
        { pattern: 'soak-mark slot-\\d{3} \\d{6}', output_mode: 'content', head_limit: 200 },
      ]
      const f = pick(forms)
      const input = slot.kit === kits.A ? f : { pattern: f.pattern, output_mode: f.output_mode, ...(f.path ? { path: f.path } : {}), ...(f.head_limit ? { max_results: f.head_limit } : {}) }
      const abort = abortChoice()
      const r = await call(slot, 'Grep', slot.kit.names.grep, input, { abort })
      if (r.isError || !f.pattern.startsWith('soak-mark')) return
      // Every marker line seen is whole, and never ahead of what its slot has written.
      for (const line of textOf(r).split('\n')) {
        const m = /soak-mark slot-(\d{3}) (\d{6})/.exec(line)
        if (!m) continue
        if (!/^\S+:\d+:\/\/ soak-mark slot-\d{3} \d{6}$/.test(line)) problem('torn', `grep saw the marker line '${line.slice(0, 120)}'`)
        const s = Number(m[1])
        if (Number(m[2]) > marks[s] + 1) problem('wrongContent', `grep saw slot ${s} at ${m[2]}, its slot wrote ${marks[s]}`)
      }
    },

    async semantic(slot) {
      const queries = ['per path write lock', 'parse shell command risk', 'stream message events', 'count tokens limit', 'abort signal cancel', 'retry request backoff', 'glob walk ignore rules', 'pagination cursor list']
      const scopes = [undefined, undefined, 'ts', 'crates', 'vendor/anthropic-sdk']
      const scope = pick(scopes)
      const abort = abortChoice()
      const r = await call(slot, 'semantic_code_search', 'semantic_code_search', { query: pick(queries), backend: 'literal', top_k: between(3, 10), ...(scope ? { path: scope } : {}) }, { abort })
      if (!r.isError && !(r.data?.hits?.length > 0 || /No /.test(textOf(r)))) problem('wrongContent', 'semantic search returned no hits and no notice')
    },

    async shell(slot) {
      const kit = slot.kit
      const cmdInput = (command) => (kit === kits.A ? { command } : { command, approved: true })
      // Every command here prints something; exit 0 with nothing printed is output lost.
      const printed = (r, command) => {
        if (r.isError) return false
        if (r.data.exitCode === 0 && r.data.stdoutBytes === 0) {
          problem('lostOutput', `${command}: exit 0 and no output (${r.data.durationMs} ms)`)
          return false
        }
        return true
      }
      const which = rand()
      const abort = which < 0.5 ? undefined : abortChoice()
      if (which < 0.3) {
        // `cat` of a file the soak changes: whole, whatever is being written.
        const name = pick(tree.counters)
        const r = await call(slot, 'Bash', kit.names.shell, cmdInput(`cat ${counterPath(name)}`), { abort })
        if (printed(r, `cat ${counterPath(name)}`)) {
          const v = parseCounter(name, r.data.stdout.replace(/\n$/, '').split('\n'))
          if (typeof v === 'string') problem('torn', `cat: ${v}`)
          else if (v > counters[name].bumps + inflight) problem('wrongContent', `cat saw counter ${name} at ${v}, only ${counters[name].bumps} bumps so far`)
        }
        return
      }
      if (which < 0.4) {
        const r = await call(slot, 'Bash', kit.names.shell, cmdInput('cat soak/gen.txt soak/lines.txt'), { abort })
        if (printed(r, 'cat soak/gen.txt soak/lines.txt')) {
          const lines = r.data.stdout.replace(/\n$/, '').split('\n')
          const g = parseGen(lines.slice(0, GEN_LINES))
          if (typeof g === 'string') problem('torn', `cat: ${g}`)
          const l = parseLines(lines.slice(GEN_LINES), slotsA)
          if (typeof l === 'string') problem('torn', `cat: ${l}`)
        }
        return
      }
      if (which < 0.65) {
        const f = pick(tree.probes)
        const r = await call(slot, 'Bash', kit.names.shell, cmdInput(`wc -l < ${f.rel}`), { abort })
        if (printed(r, `wc -l < ${f.rel}`) && Number(r.data.stdout.trim()) !== f.newlines) problem('wrongContent', `wc -l ${f.rel}: ${r.data.stdout.trim()}, expected ${f.newlines}`)
        return
      }
      if (which < 0.85) {
        const [dir, count] = pick(Object.entries(tree.listings))
        const r = await call(slot, 'Bash', kit.names.shell, cmdInput(`ls ${dir} | wc -l`), { abort })
        if (printed(r, `ls ${dir} | wc -l`) && Number(r.data.stdout.trim()) !== count) problem('wrongContent', `ls ${dir} | wc -l: ${r.data.stdout.trim()}, expected ${count}`)
        return
      }
      const f = pick(tree.probes)
      const r = await call(slot, 'Bash', kit.names.shell, cmdInput(`head -n 3 ${f.rel}`), { abort })
      if (printed(r, `head -n 3 ${f.rel}`) && r.data.exitCode !== 0) problem('wrongContent', `head -n 3 ${f.rel} exited ${r.data.exitCode}`)
    },

    async git(slot) {
      const r = await call(slot, 'git_operations status', 'git_operations', { operation: 'status' }, { abort: abortChoice(), allowed: ['PATH_OUTSIDE_WORKSPACE'] })
      if (!r.isError && !Array.isArray(r.data?.entries)) problem('malformed', 'git status without data.entries')
      // The repository lies inside the workspace: this code here means git's answer was lost
      // (rev-parse's output came back empty, "reaches outside the workspace ()").
      if (r.error?.code === 'PATH_OUTSIDE_WORKSPACE') problem(textOf(r).includes('workspace ()') ? 'lostOutput' : 'unexpected', `git status → PATH_OUTSIDE_WORKSPACE: ${textOf(r).slice(0, 160)}`)
    },

    async counter(slot) {
      const name = slot.kit === kits.B || rand() < 0.25 ? pick(tree.counters.filter((n) => n.startsWith('x'))) : pick(tree.counters.filter((n) => n.startsWith('a')))
      const c = counters[name]
      const done = await contended(slot, counterPath(name), {
        parse: (lines) => parseCounter(name, lines),
        change: (v) => [valueLine(v), valueLine(v + 1), v + 1],
        tally: c,
        shared: name.startsWith('x'),
      })
      if (done?.value !== undefined) {
        c.bumps++
        c.byKit[slot.kitName]++
      }
    },

    async abortCounter(slot) {
      // Edits with a signal that may fire at any point: ABORTED must mean nothing was written.
      const c = counters.abort
      const done = await contended(slot, counterPath('abort'), {
        parse: (lines) => parseCounter('abort', lines),
        change: (v) => [valueLine(v), valueLine(v + 1), v + 1],
        tally: c,
        abortEdit: true,
      })
      if (done?.value !== undefined) c.bumps++
    },

    async line(slot) {
      const s = slot.index
      const done = await contended(slot, 'soak/lines.txt', {
        parse: (lines) => {
          const values = parseLines(lines, slotsA)
          if (typeof values === 'string') return values
          if (values[s] !== lineValues[s]) problem('lostUpdate', `slot ${s}'s line reads ${values[s]}, the slot wrote ${lineValues[s]}`)
          return values[s]
        },
        change: (v) => [slotLine(s, v), slotLine(s, v + 1), v + 1],
        tally: lineEdits,
      })
      if (done?.value !== undefined) {
        lineValues[s] = done.value
        lineEdits.bumps++
      }
    },

    async gen(slot) {
      // Read the whole file, write it back whole one generation on; STALE → read again.
      const rel = 'soak/gen.txt'
      let known = slot.memo.get(rel)
      let lastWasStale = false
      for (let attempt = 1; attempt <= 400; attempt++) {
        if (gate || stopping) return
        if (known === undefined || lastWasStale) {
          const got = await readWhole(slot, 'Read (soak files)', rel)
          if (got.error) return
          if (got.stub) {
            if (lastWasStale) problem('staleStub', `${rel}: a re-read after STALE was answered with a stub`)
            if (known === undefined) return problem('unexpected', `${rel}: a stub for a file this conversation never read`)
          } else {
            const g = parseGen(got.lines)
            if (typeof g === 'string') return problem('torn', g)
            known = g
            slot.memo.set(rel, g)
          }
        }
        gen.attempts++
        const r = await call(slot, 'Write', slot.kit.names.write, { ...fileArg(slot, rel), content: genText(known + 1) }, { allowed: ['STALE'] })
        if (!r.isError) {
          gen.writes++
          slot.memo.set(rel, known + 1)
          retries.record(attempt)
          return
        }
        if (r.error.code !== 'STALE') return
        gen.stale++
        lastWasStale = true
      }
      gen.gaveUp++
    },

    async mark(slot) {
      // The slot's own real source file: read whole once per conversation, then edits.
      const s = slot.index
      const rel = tree.owned[s]
      if (!slot.memo.has(rel)) {
        const r = await call(slot, 'Read (soak files)', slot.kit.names.read, fileArg(slot, rel))
        if (r.isError) return
        if (!r.data?.unchanged) {
          const last = pageLines(textOf(r), slot.kit.style).at(-1)?.[1]
          if (last !== markLine(s, marks[s])) problem('lostUpdate', `${rel}: the last line is '${last}', slot ${s} wrote ${marks[s]}`)
        }
        slot.memo.set(rel, true)
      }
      const r = await call(slot, 'Edit', slot.kit.names.edit, { ...fileArg(slot, rel), old_string: markLine(s, marks[s]), new_string: markLine(s, marks[s] + 1) })
      if (!r.isError) marks[s]++
    },

    async own(slot) {
      // The slot's own scratch file: write it whole, read it back, it must be what was written.
      const s = slot.index
      const rel = ownPath(s)
      if (ownRevs[s] > 0 && !slot.memo.has(rel)) {
        const got = await readWhole(slot, 'Read (soak files)', rel)
        if (got.error) return
        slot.memo.set(rel, true)
      }
      const rev = ownRevs[s] + 1
      const w = await call(slot, 'Write', slot.kit.names.write, { ...fileArg(slot, rel), content: ownText(s, rev) })
      if (w.isError) return
      ownRevs[s] = rev
      const got = await readWhole(slot, 'Read (soak files)', rel)
      if (got.lines && got.lines.join('\n') + '\n' !== ownText(s, rev)) problem('lostUpdate', `${rel}: read back is not what slot ${s} wrote (rev ${rev})`)
      if (got.stub) problem('unexpected', `${rel}: the read after this conversation's own write was a stub`)
    },
  }

  const MIX_A = [
    ['read', 30],
    ['glob', 6],
    ['grep', 8],
    ['semantic', 4],
    ['shell', 12],
    ['git', 3],
    ['counter', 12],
    ['line', 4],
    ['gen', 2],
    ['mark', 6],
    ['own', 4],
    ['abortCounter', 2],
  ]
  // Toolkit B changes only what both toolkits change (the x counters) and its own files.
  const MIX_B = [
    ['read', 30],
    ['grep', 6],
    ['glob', 4],
    ['shell', 12],
    ['counter', 24],
    ['mark', 6],
    ['own', 4],
  ]
  const chooser = (all) => {
    const mix = o.only ? all.filter(([op]) => o.only.includes(op)) : all
    if (mix.length === 0) return () => 'idle'
    const total = mix.reduce((a, [, w]) => a + w, 0)
    return () => {
      let x = rand() * total
      for (const [op, w] of mix) {
        x -= w
        if (x < 0) return op
      }
      return mix[0][0]
    }
  }
  const chooseA = chooser(MIX_A)
  const chooseB = chooser(MIX_B)

  // --- the sampler: memory, fds, threads, in-flight calls every second; event-loop delay
  const RES = 1 // ms, the resolution of the loop-delay timer (subtracted from its figures)
  const samples = []
  const windows = [] // event-loop delay p99 and max per 10 s window
  // A monitorEventLoopDelay histogram is never disabled and enabled again: after enable()
  // its first figure is the whole time since its last tick, disabled time included. Each
  // measured stretch gets its own.
  let phase = 'primer' // the label of the samples: primer, baseline, warmup, soak, checkpoint, done
  let stretch = null // { name, eld } of the measured stretch running now
  const loopStretches = {} // stretch name → { p50, p99, max, samples }
  const busy = {} // stretch name (or phase) → { idle, active } ms of event-loop time
  let eluMark = performance.eventLoopUtilization()
  const newEld = () => {
    const h = monitorEventLoopDelay({ resolution: RES })
    h.enable()
    return h
  }
  const loopFigures = (h) => ({ p50: loopMs(h, 50, RES), p99: loopMs(h, 99, RES), max: loopMs(h, 'max', RES), samples: h.count })
  let win = newEld()
  const t0 = performance.now()
  const since = () => (performance.now() - t0) / 1000
  let sampleNo = 0
  const sampler = setInterval(() => {
    const m = process.memoryUsage()
    samples.push({ t: Number(since().toFixed(2)), phase, rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, outsideHeap: m.rss - m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, fds: fdCount(), threads: threadCount(), inflight })
    if (++sampleNo % 10 === 0) {
      win.disable()
      windows.push({ t: Number(since().toFixed(1)), phase, ...loopFigures(win) })
      win = newEld()
    }
  }, 1000)
  /** Ends the current stretch (its loop-delay histogram and busy time) and starts phase `p`, measured as stretch `name` when given. */
  const setPhase = (p, name = null) => {
    const mark = performance.eventLoopUtilization()
    const d = performance.eventLoopUtilization(mark, eluMark)
    eluMark = mark
    const key = stretch?.name ?? phase
    busy[key] = { idle: (busy[key]?.idle ?? 0) + d.idle, active: (busy[key]?.active ?? 0) + d.active }
    if (stretch) {
      stretch.eld.disable()
      loopStretches[stretch.name] = loopFigures(stretch.eld)
    }
    stretch = name ? { name, eld: newEld() } : null
    phase = p
  }
  const utilization = (k) => (busy[k] ? busy[k].active / (busy[k].active + busy[k].idle) : NaN)
  const stretchMs = (k) => (busy[k] ? busy[k].active + busy[k].idle : 0)

  // How long the JS thread is held in child_process.spawn (Node's spawn returns only once
  // the child has exec'd): fsgate's spawns are timed through the module's own export.
  const spawnStats = {} // phase → { count, ms, hist }
  const childProcess = createRequire(import.meta.url)('node:child_process')
  const realSpawn = childProcess.spawn
  childProcess.spawn = function timedSpawn(...args) {
    const t = performance.now()
    try {
      return realSpawn.apply(this, args)
    } finally {
      const d = performance.now() - t
      const k = phase === 'soak' ? 'soak' : 'other'
      spawnStats[k] ??= { count: 0, ms: 0, hist: latency() }
      spawnStats[k].count++
      spawnStats[k].ms += d
      spawnStats[k].hist.record(Math.max(1, Math.round(d * 1000)))
    }
  }
  syncBuiltinESMExports()

  // --- quiet checkpoints: every loop parks between calls, then the process is measured
  let gate = null
  let active = 0
  let stopping = false
  const park = async () => {
    while (gate) await gate.open
  }
  const idle = () =>
    new Promise((resolve) => {
      if (active === 0) resolve()
      else gate.onIdle = resolve
    })
  async function checkpoint(name, { fdTarget } = {}) {
    setPhase('checkpoint')
    let open
    gate = { open: new Promise((r) => (open = r)), onIdle: null }
    const tq = performance.now()
    await idle()
    const quietMs = performance.now() - tq
    await new Promise((r) => setTimeout(r, 200))
    let heapAfterGc = null
    if (gc) {
      gc()
      gc()
      heapAfterGc = process.memoryUsage().heapUsed
    }
    // The counts must come back to the target; give the addon's threads and the reaper a moment.
    let fds = fdCount()
    let kids = children()
    const tw = performance.now()
    while ((fdTarget !== undefined && fds > fdTarget) || kids.alive + kids.zombies > 0) {
      if (performance.now() - tw > 3000) break
      await new Promise((r) => setTimeout(r, 50))
      fds = fdCount()
      kids = children()
    }
    const m = process.memoryUsage()
    const cp = {
      name,
      t: Number(since().toFixed(1)),
      fds,
      threads: threadCount(),
      children: kids,
      rss: m.rss,
      heapTotal: m.heapTotal,
      heapUsed: m.heapUsed,
      heapAfterGc,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      locks: { A: toolkitA.locks.size, B: toolkitB.locks.size },
      quietMs: Math.round(quietMs),
      settleMs: Math.round(performance.now() - tw),
    }
    gate = null
    open()
    setPhase(stopping ? 'done' : 'idle')
    return cp
  }

  // --- the loops
  const slotList = Array.from({ length: slots }, (_, i) => {
    const kitName = i < slotsA ? 'A' : 'B'
    return { index: i, kitName, kit: kits[kitName], choose: kitName === 'A' ? chooseA : chooseB, session: null, memo: null, callsLeft: 0 }
  })
  let work = 'noop'
  async function loop(slot) {
    for (;;) {
      await park()
      if (stopping) return
      active++
      try {
        if (work === 'noop') await new Promise((r) => setImmediate(r))
        else {
          if (!slot.session || slot.callsLeft <= 0) newConversation(slot)
          await ops[slot.choose()](slot)
        }
      } catch (err) {
        problem('unexpected', `the soak's own step threw: ${err?.stack ?? err}`)
      } finally {
        active--
        if (active === 0 && gate?.onIdle) gate.onIdle()
      }
    }
  }

  // A primer: one call of each kind, so that the addon's pools and the first-use state
  // exist before the first count of descriptors and threads.
  const primerSlot = { index: 0, kitName: 'A', kit: kits.A, session: toolkitA.createSession(), memo: new Map(), callsLeft: Infinity }
  const primerB = { index: slotsA, kitName: 'B', kit: kits.B, session: toolkitB.createSession(), memo: new Map(), callsLeft: Infinity }
  for (const s of [primerSlot, primerB]) {
    await call(s, 'primer', s.kit.names.read, fileArg(s, tree.files[0].rel))
    await call(s, 'primer', s.kit.names.glob, { pattern: 'ts/*.ts' })
    await call(s, 'primer', s.kit.names.grep, { pattern: 'createToolkit', output_mode: 'files_with_matches' })
    await call(s, 'primer', s.kit.names.shell, s.kit === kits.A ? { command: 'true' } : { command: 'pwd' })
  }
  await call(primerSlot, 'primer', 'semantic_code_search', { query: 'write lock', backend: 'literal', path: 'ts' })
  await call(primerSlot, 'primer', 'git_operations', { operation: 'status' })
  await readFile(path.join(tree.dir, tree.files[0].rel)) // libuv's pool starts its threads on first use
  stats.delete('primer')
  const cpu0 = cpuTicks()
  const primed = await checkpoint('primed')
  log(`primed: ${primed.fds} fds, ${primed.threads} threads, RSS ${(primed.rss / MiB).toFixed(1)} MiB`)

  // Baseline: the same loops, each step a no-op that yields to the event loop.
  setPhase('baseline', 'baseline')
  const loops = slotList.map(loop)
  await sleep(baselineSeconds * 1000)
  const baseline = await checkpoint('baseline', { fdTarget: primed.fds })
  log(`baseline: ${baselineSeconds} s of no-op loops; loop delay p99 ${loopStretches.baseline.p99.toFixed(2)} ms`)

  // The soak: warm-up, then the measured part, with a quiet checkpoint in the middle.
  work = 'soak'
  const tSoak = since()
  setPhase('warmup', 'warmup')
  await sleep(warmupSeconds * 1000)
  const warm = await checkpoint('warm', { fdTarget: primed.fds })
  log(`warm: ${warm.fds} fds, ${warm.threads} threads, RSS ${(warm.rss / MiB).toFixed(1)} MiB, heap after GC ${gc ? (warm.heapAfterGc / MiB).toFixed(1) : '—'} MiB`)
  setPhase('soak', 'soak1')
  const measured = o.seconds - warmupSeconds
  const progress = setInterval(() => {
    const calls = [...stats.values()].reduce((a, s) => a + s.calls, 0)
    const last = samples.at(-1)
    log(`  ${since().toFixed(0)} s: ${calls} calls, RSS ${(last.rss / MiB).toFixed(1)} MiB, ${last.fds} fds, ${problems.unexpected + problems.torn + problems.lostUpdate + problems.malformed + problems.wrongContent} problems`)
  }, 30_000)
  await sleep((measured / 2) * 1000)
  const mid = await checkpoint('mid', { fdTarget: warm.fds })
  setPhase('soak', 'soak2')
  await sleep((measured / 2) * 1000)
  clearInterval(progress)
  stopping = true
  const endCp = await checkpoint('end', { fdTarget: warm.fds })
  await Promise.all(loops)
  const tEnd = since()
  const cpu1 = cpuTicks()
  childProcess.spawn = realSpawn
  syncBuiltinESMExports()
  clearInterval(sampler)
  win.disable()

  // --- the files at the end, read from disk
  const onDisk = {}
  for (const name of tree.counters) onDisk[name] = parseCounter(name, readFileSync(path.join(tree.dir, counterPath(name)), 'utf8').replace(/\n$/, '').split('\n'))
  const linesOnDisk = parseLines(readFileSync(path.join(tree.dir, 'soak/lines.txt'), 'utf8').replace(/\n$/, '').split('\n'), slotsA)
  const genOnDisk = parseGen(readFileSync(path.join(tree.dir, 'soak/gen.txt'), 'utf8').replace(/\n$/, '').split('\n'))
  const marksOnDisk = tree.owned.map((rel) => readFileSync(path.join(tree.dir, rel), 'utf8').replace(/\n$/, '').split('\n').at(-1))
  const ownOnDisk = ownRevs.map((rev, s) => (rev === 0 ? true : existsSync(path.join(tree.dir, ownPath(s))) && readFileSync(path.join(tree.dir, ownPath(s)), 'utf8') === ownText(s, rev)))
  const temps = readdirSync(tree.dir, { recursive: true }).filter((p) => /\.fsgate-|\.tmp[^/]*$|~$/.test(String(p)) && !String(p).startsWith('.git'))

  // After the sessions are gone: what the toolkits still hold.
  for (const s of slotList) s.session = s.memo = null
  primerSlot.session = primerB.session = null
  await sleep(200)
  let released = null
  if (gc) {
    gc()
    gc()
    released = { heapAfterGc: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss, fds: fdCount() }
  }
  const loadAfter = machineLoad()

  const kinds = {}
  for (const [kind, s] of stats) {
    kinds[kind] = {
      calls: s.calls,
      ok: s.ok,
      perSecond: s.calls / (tEnd - tSoak),
      p50: ms(s.hist, 50),
      p99: ms(s.hist, 99),
      max: ms(s.hist, 'max'),
      codes: s.codes,
      withSignal: s.withSignal,
    }
  }
  const L = loopStretches
  const worse = (a, b) => ({ p50: Math.max(a.p50, b.p50), p99: Math.max(a.p99, b.p99), max: Math.max(a.max, b.max), samples: a.samples + b.samples })
  const result = {
    date: new Date().toISOString(),
    options: { tree: o.tree, seconds: o.seconds, sessions: slotsA, peerSessions: slotsB, warmupSeconds, baselineSeconds, conversationCalls: o.conversationCalls, abortShare: o.abortShare, seed: o.seed, only: o.only ?? null },
    gcExposed: Boolean(gc),
    tree: { dir: tree.dir, files: tree.fileCount, textFiles: tree.files.length + tree.owned.length, bytes: tree.bytes, setupMs: Math.round(tree.setupMs) },
    durations: { baseline: baselineSeconds, soak: tEnd - tSoak, warmup: warmupSeconds },
    kinds,
    totalCalls: Object.values(kinds).reduce((a, k) => a + k.calls, 0),
    sessionsMade,
    stubsSeen,
    verifiedReads,
    problems,
    counters: Object.fromEntries(tree.counters.map((n) => [n, { ...counters[n], onDisk: onDisk[n] }])),
    lines: { ...lineEdits, expected: lineValues, onDisk: linesOnDisk },
    gen: { ...gen, onDisk: genOnDisk },
    marks: { edits: marks.reduce((a, b) => a + b, 0), wrong: marksOnDisk.map((l, s) => (l === markLine(s, marks[s]) ? null : { slot: s, file: tree.owned[s], last: l, expected: markLine(s, marks[s]) })).filter(Boolean) },
    own: { writes: ownRevs.reduce((a, b) => a + b, 0), wrong: ownOnDisk.map((ok, s) => (ok ? null : s)).filter((x) => x !== null) },
    tempFilesLeft: temps.map(String),
    retries: { p50: retries.count ? retries.percentile(50) : NaN, p99: retries.count ? retries.percentile(99) : NaN, max: retries.count ? retries.max : NaN, count: retries.count },
    checkpoints: { primed, baseline, warm, mid, end: endCp, released },
    samples,
    windows,
    loop: {
      resolutionMs: RES,
      baseline: L.baseline,
      warmup: L.warmup,
      soak1: L.soak1,
      soak2: L.soak2,
      soak: worse(L.soak1, L.soak2),
      utilization: { baseline: utilization('baseline'), warmup: utilization('warmup'), soak1: utilization('soak1'), soak2: utilization('soak2') },
    },
    memory: memoryFigures(samples, warm, mid, endCp),
    spawn: spawnStats.soak
      ? { count: spawnStats.soak.count, ms: spawnStats.soak.ms, shareOfMeasured: spawnStats.soak.ms / (stretchMs('soak1') + stretchMs('soak2')), p50: ms(spawnStats.soak.hist, 50), p99: ms(spawnStats.soak.hist, 99), max: ms(spawnStats.soak.hist, 'max') }
      : null,
    cpu: cpu0 && cpu1 ? cpuShare(cpu0, cpu1) : null,
    load: { before: loadBefore, after: loadAfter },
  }
  if (!o.keepTree) rmSync(tree.dir, { recursive: true, force: true })
  return result
}

/** The memory figures of the measured part (the samples after the warm-up). */
function memoryFigures(samples, warm, mid, end) {
  const post = samples.filter((s) => s.phase === 'soak')
  const q = Math.max(1, Math.floor(post.length / 4))
  const first = post.slice(0, q)
  const last = post.slice(-q)
  const half = post.slice(Math.floor(post.length / 2))
  const mib = (b) => b / MiB
  const fig = (key) => ({
    firstQuarterMedianMiB: mib(median(first.map((s) => s[key]))),
    lastQuarterMedianMiB: mib(median(last.map((s) => s[key]))),
    growthMiB: mib(median(last.map((s) => s[key])) - median(first.map((s) => s[key]))),
    slopeMiBPerMin: mib(slope(half.map((s) => s.t), half.map((s) => s[key]))) * 60,
    maxMiB: mib(Math.max(...post.map((s) => s[key]))),
  })
  return {
    samples: post.length,
    rss: fig('rss'),
    heapTotal: fig('heapTotal'),
    outsideHeap: fig('outsideHeap'),
    heapUsed: fig('heapUsed'),
    external: fig('external'),
    arrayBuffers: fig('arrayBuffers'),
    rssStartMiB: mib(samples[0]?.rss ?? NaN),
    quietRssMidToEndMiBPerMin: (mib(end.rss) - mib(mid.rss)) / ((end.t - mid.t) / 60),
    rssWarmMiB: mib(warm.rss),
    rssEndMiB: mib(end.rss),
    heapAfterGcWarmMiB: warm.heapAfterGc === null ? null : mib(warm.heapAfterGc),
    heapAfterGcEndMiB: end.heapAfterGc === null ? null : mib(end.heapAfterGc),
    fdsDuring: { median: median(post.map((s) => s.fds)), max: Math.max(...post.map((s) => s.fds)) },
    threadsDuring: { median: median(post.map((s) => s.threads)), max: Math.max(...post.map((s) => s.threads)) },
    inflightDuring: { median: median(post.map((s) => s.inflight)), max: Math.max(...post.map((s) => s.inflight)) },
  }
}

function cpuShare(a, b) {
  const total = b.total - a.total
  const cores = os.availableParallelism?.() ?? os.cpus().length
  return {
    machineBusy: (b.busy - a.busy) / total,
    thisProcess: (b.self - a.self) / total,
    itsChildren: (b.children - a.children) / total,
    others: Math.max(0, (b.busy - a.busy - (b.self - a.self) - (b.children - a.children)) / total),
    cores,
  }
}

const sleep = (msec) => new Promise((r) => setTimeout(r, msec))

// ---------------------------------------------------------------------------------------
// Verdict and report

/**
 * Every check of a run against `bounds`: [{ group, check, bound, measured, ok }]. Groups:
 * 'changes' (what one toolkit's sessions changed), 'two toolkits' (the counters both
 * toolkits bump), 'results' (shapes, codes, content), 'process' (descriptors, threads,
 * children, locks) and 'bounds' (memory, the event loop, throughput).
 */
export function checkSoak(r, bounds) {
  const out = []
  const add = (group, check, bound, measured, ok) => out.push({ group, check, bound, measured: String(measured), ok: Boolean(ok) })
  const cp = r.checkpoints

  const counterRows = (keep) => Object.entries(r.counters).filter(([n]) => keep(n)).map(([n, c]) => [n, c.bumps, c.onDisk])
  const counterCheck = (group, check, rows) => {
    const wrong = rows.filter(([, bumps, disk]) => bumps !== disk)
    add(group, check, 'all equal', wrong.length ? wrong.map(([n, b, d]) => `${n}: ${d} on disk, ${b} bumps`).join('; ') : `${rows.length} of ${rows.length} equal (${rows.reduce((a, [, b]) => a + b, 0)} bumps)`, wrong.length === 0)
  }
  counterCheck('changes', 'counters bumped by one toolkit\'s sessions: value on disk = successful bumps', counterRows((n) => !n.startsWith('x')))
  const lineWrong = Array.isArray(r.lines.onDisk) ? r.lines.onDisk.filter((v, s) => v !== r.lines.expected[s]).length : -1
  add('changes', 'shared file, one line per session: every line holds its final value', 'all lines', lineWrong === 0 ? `${r.lines.expected.length} of ${r.lines.expected.length} (${r.lines.bumps} edits)` : Array.isArray(r.lines.onDisk) ? `${lineWrong} lines differ` : r.lines.onDisk, lineWrong === 0)
  add('changes', 'file rewritten whole: generation on disk = successful writes', 'equal', `${r.gen.onDisk} on disk, ${r.gen.writes} writes`, r.gen.onDisk === r.gen.writes)
  add('changes', "each session's own source file: last marker = its edits", 'all', r.marks.wrong.length === 0 ? `${r.marks.edits} edits, all kept` : `${r.marks.wrong.length} files differ, e.g. ${JSON.stringify(r.marks.wrong[0])}`, r.marks.wrong.length === 0)
  add('changes', "each session's own scratch file: content = its last write", 'all', r.own.wrong.length === 0 ? `${r.own.writes} writes, all kept` : `slots ${r.own.wrong.join(', ')} differ`, r.own.wrong.length === 0)
  add('changes', 'lost updates seen during the run (a line or marker not as its session left it)', '0', r.problems.lostUpdate, r.problems.lostUpdate === 0)
  const gaveUp = Object.values(r.counters).reduce((a, c) => a + c.gaveUp, 0) + r.lines.gaveUp + r.gen.gaveUp
  add('changes', 'contended changes that never got through (400 attempts)', '0', gaveUp, gaveUp === 0)
  add('changes', 'temp files left in the tree', '0', r.tempFilesLeft.length, r.tempFilesLeft.length === 0)
  counterCheck('two toolkits', 'counters bumped by both toolkits: value on disk = successful bumps', counterRows((n) => n.startsWith('x')))
  add('two toolkits', 'unexpected error codes from edits of those counters', '0', r.problems.unexpectedShared, r.problems.unexpectedShared === 0)

  add('results', 'torn or mixed files seen by Read, Grep or cat', '0', r.problems.torn, r.problems.torn === 0)
  add('results', 'wrong content (a page, a count, a listing that differs from the file)', '0', r.problems.wrongContent, r.problems.wrongContent === 0)
  add('results', 'stubs answering a re-read after STALE', '0', r.problems.staleStub, r.problems.staleStub === 0)
  add('results', 'repeated reads of an unchanged file that were not stubs', '0', r.problems.dedupMiss, r.problems.dedupMiss === 0)
  add('results', 'malformed results', '0', r.problems.malformed, r.problems.malformed === 0)
  add('results', 'shell and git commands that returned exit 0 and none of their output', '0', r.problems.lostOutput, r.problems.lostOutput === 0)
  const internal = Object.values(r.kinds).reduce((a, k) => a + (k.codes.INTERNAL ?? 0), 0)
  add('results', 'INTERNAL or unexpected error codes', '0', `${r.problems.unexpected} unexpected (INTERNAL: ${internal})`, r.problems.unexpected === 0 && internal === 0)

  add('process', 'file descriptors: after warm-up, middle, end (quiet) = primed', `= ${cp.primed.fds}`, `${cp.warm.fds}, ${cp.mid.fds}, ${cp.end.fds}`, cp.warm.fds <= cp.primed.fds && cp.mid.fds <= cp.primed.fds && cp.end.fds <= cp.primed.fds)
  add('process', 'threads: middle and end (quiet) = after warm-up', `= ${cp.warm.threads}`, `${cp.mid.threads}, ${cp.end.threads}`, cp.mid.threads <= cp.warm.threads && cp.end.threads <= cp.warm.threads)
  const kids = [cp.warm, cp.mid, cp.end].map((c) => c.children.alive + c.children.zombies)
  add('process', 'child processes left (quiet checkpoints)', '0', kids.join(', '), kids.every((k) => k === 0))
  add('process', 'per-path write locks held when quiet', '0', `${cp.end.locks.A} + ${cp.end.locks.B}`, cp.end.locks.A === 0 && cp.end.locks.B === 0)

  const m = r.memory
  add('bounds', 'RSS slope, second half of the measured part', `≤ ${bounds.rssSlopeMiBPerMin} MiB/min`, `${m.rss.slopeMiBPerMin.toFixed(2)} MiB/min`, !(m.rss.slopeMiBPerMin > bounds.rssSlopeMiBPerMin))
  add('bounds', 'RSS at quiet checkpoints, middle → end', `≤ ${bounds.rssSlopeMiBPerMin} MiB/min`, `${m.quietRssMidToEndMiBPerMin.toFixed(2)} MiB/min (${(cp.mid.rss / MiB).toFixed(1)} → ${(cp.end.rss / MiB).toFixed(1)} MiB)`, !(m.quietRssMidToEndMiBPerMin > bounds.rssSlopeMiBPerMin))
  add('bounds', 'RSS growth, median of the last quarter − median of the first', `≤ ${bounds.rssGrowthMiB} MiB`, `${m.rss.growthMiB.toFixed(1)} MiB (${m.rss.firstQuarterMedianMiB.toFixed(1)} → ${m.rss.lastQuarterMedianMiB.toFixed(1)})`, m.rss.growthMiB <= bounds.rssGrowthMiB)
  if (m.heapAfterGcWarmMiB !== null) {
    const g = m.heapAfterGcEndMiB - m.heapAfterGcWarmMiB
    add('bounds', 'heap after a full GC, end − after warm-up', `≤ ${bounds.heapGrowthMiB} MiB`, `${g.toFixed(1)} MiB (${m.heapAfterGcWarmMiB.toFixed(1)} → ${m.heapAfterGcEndMiB.toFixed(1)})`, g <= bounds.heapGrowthMiB)
  }
  add('bounds', 'event-loop delay p99 under load (worse half)', `≤ ${bounds.loopP99Ms} ms`, `${r.loop.soak.p99.toFixed(2)} ms (baseline ${r.loop.baseline.p99.toFixed(2)} ms)`, r.loop.soak.p99 <= bounds.loopP99Ms)
  add('bounds', 'event-loop delay max under load', `≤ ${bounds.loopMaxMs} ms`, `${r.loop.soak.max.toFixed(1)} ms (baseline ${r.loop.baseline.max.toFixed(1)} ms)`, r.loop.soak.max <= bounds.loopMaxMs)
  const rate = r.totalCalls / r.durations.soak
  add('bounds', 'calls per second (all kinds)', `≥ ${bounds.minCallsPerSecond}`, rate.toFixed(0), rate >= bounds.minCallsPerSecond)
  return out
}

const f2 = (x) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) : '—')
const fmtMs = (x) => (Number.isFinite(x) ? (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${f2(x)} ms`) : '—')
const n0 = (x) => Math.round(x).toLocaleString('en-US')

/** A GitHub-flavoured markdown table (as in lib.mjs). */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c)))
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)))
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  return [line(all[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...all.slice(1).map(line)].join('\n')
}

/** The run as markdown: calls by kind, counters, memory, descriptors, the loop, the checks. */
export function formatSoak(r, checks) {
  const out = []
  const kinds = Object.entries(r.kinds).sort((a, b) => b[1].calls - a[1].calls)
  out.push(
    table(
      ['kind', 'calls', 'calls/s', 'p50', 'p99', 'max', 'with a signal', 'errors by code'],
      kinds.map(([k, s]) => [k, n0(s.calls), f2(s.perSecond), fmtMs(s.p50), fmtMs(s.p99), fmtMs(s.max), n0(s.withSignal), Object.entries(s.codes).map(([c, n]) => `${c} ${n0(n)}`).join(', ') || '—']),
    ),
  )
  out.push('')
  const c = Object.entries(r.counters)
  out.push(
    table(
      ['shared change', 'successful', 'on disk', 'attempts', 'STALE retries', 'ABORTED', 'gave up'],
      [
        ...c.map(([n, x]) => [`counter ${n}${n.startsWith('x') ? ' (both toolkits)' : n === 'abort' ? ' (edits with a signal)' : ''}`, n0(x.bumps) + (n.startsWith('x') ? ` (A ${x.byKit.A}, B ${x.byKit.B})` : ''), x.onDisk, n0(x.attempts), n0(x.stale), n0(x.aborted), x.gaveUp]),
        [`lines file (${r.lines.expected.length} lines, one per session)`, n0(r.lines.bumps), Array.isArray(r.lines.onDisk) ? (r.lines.onDisk.every((v, s) => v === r.lines.expected[s]) ? 'every line as written' : 'lines differ') : r.lines.onDisk, n0(r.lines.attempts), n0(r.lines.stale), '—', r.lines.gaveUp],
        ['gen file (Write of 200 lines)', n0(r.gen.writes), r.gen.onDisk, n0(r.gen.attempts), n0(r.gen.stale), '—', r.gen.gaveUp],
      ],
    ),
  )
  out.push('')
  const m = r.memory
  const cp = r.checkpoints
  const mib = (b) => (b === null || b === undefined ? '—' : `${(b / MiB).toFixed(1)}`)
  out.push(
    table(
      ['checkpoint (quiet)', 't (s)', 'RSS MiB', 'heapTotal MiB', 'heap MiB', 'heap after GC MiB', 'external MiB', 'arrayBuffers MiB', 'fds', 'threads', 'children'],
      ['primed', 'baseline', 'warm', 'mid', 'end'].map((k) => [k, cp[k].t, mib(cp[k].rss), mib(cp[k].heapTotal), mib(cp[k].heapUsed), mib(cp[k].heapAfterGc), mib(cp[k].external), mib(cp[k].arrayBuffers), cp[k].fds, cp[k].threads, cp[k].children.alive + cp[k].children.zombies]),
    ),
  )
  out.push('')
  out.push(
    table(
      ['memory, measured part (samples every 1 s)', 'first quarter median', 'last quarter median', 'growth', 'slope, second half', 'max'],
      ['rss', 'heapTotal', 'outsideHeap', 'heapUsed', 'external', 'arrayBuffers'].map((k) => [k === 'outsideHeap' ? 'rss − heapTotal' : k, `${m[k].firstQuarterMedianMiB.toFixed(1)} MiB`, `${m[k].lastQuarterMedianMiB.toFixed(1)} MiB`, `${m[k].growthMiB >= 0 ? '+' : ''}${m[k].growthMiB.toFixed(1)} MiB`, `${m[k].slopeMiBPerMin.toFixed(2)} MiB/min`, `${m[k].maxMiB.toFixed(1)} MiB`]),
    ),
  )
  out.push('')
  const L = r.loop
  out.push(
    table(
      ['event-loop delay', 'p50', 'p99', 'max', 'loop busy', 'p99 vs baseline'],
      [
        [`baseline: the same ${r.options.sessions + r.options.peerSessions} loops, a no-op each (${r.durations.baseline} s)`, fmtMs(L.baseline.p50), fmtMs(L.baseline.p99), fmtMs(L.baseline.max), pct(L.utilization.baseline), '1.0×'],
        [`soak, first half after the warm-up (${((r.durations.soak - r.durations.warmup) / 2).toFixed(0)} s)`, fmtMs(L.soak1.p50), fmtMs(L.soak1.p99), fmtMs(L.soak1.max), pct(L.utilization.soak1), ratio(L.soak1.p99 / L.baseline.p99)],
        [`soak, second half`, fmtMs(L.soak2.p50), fmtMs(L.soak2.p99), fmtMs(L.soak2.max), pct(L.utilization.soak2), ratio(L.soak2.p99 / L.baseline.p99)],
      ],
    ),
  )
  if (r.spawn) out.push(`\nThe JS thread inside child_process.spawn during the measured part: ${n0(r.spawn.count)} spawns, ${(r.spawn.ms / 1000).toFixed(1)} s in all (${pct(r.spawn.shareOfMeasured)} of the time); per spawn p50 ${fmtMs(r.spawn.p50)}, p99 ${fmtMs(r.spawn.p99)}, max ${fmtMs(r.spawn.max)}.`)
  out.push('')
  if (checks) out.push(table(['group', 'check', 'bound', 'measured', 'status'], checks.map((x) => [x.group, x.check, x.bound, x.measured, x.ok ? 'met' : 'FAILED'])))
  return out.join('\n')
}

const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : '—')
const ratio = (x) => (Number.isFinite(x) ? (x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(1)}×`) : '—')
