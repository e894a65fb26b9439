// The edit benchmarks: one line of a 10 MiB file changed through `session.call` against
// plain Node, and small-file edits with 32 sessions in flight. run.mjs calls benchEdit
// with its section and goal helpers, which print the tables and collect the goals.
import { copyFileSync, fsyncSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { open, readFile, rename, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

import { bigLine, DATA, numberedLinesFile } from './data.mjs'
import { fmtMs, fmtNum, median, now, percentile, rng, table } from './lib.mjs'

/** Lines of 130 bytes in the large file: 10,485,800 bytes, 10.0 MiB. */
export const EDIT_LINES = 80_660
const LARGE_ROUNDS = 21
const SESSIONS = 32
const SMALL_SECONDS = 4.5
const SMALL_ROUNDS = 3
const SMALL_LINES = 50
const COST_GOAL = 1.5

/**
 * Runs both edit benchmarks. `ctx` carries the addon's public API (`fsgate`) and
 * run.mjs's `section(title, intro, table, notes)` and `goalAtMost(bench, target, measured, ratio)`.
 */
export async function benchEdit(ctx) {
  await benchEditLarge(ctx)
  await benchEditSmall(ctx)
}

/** The 10 MiB text file the large-file edits start from, generated once. */
function largeEditFile() {
  return numberedLinesFile(path.join('edit', 'large-10MiB.txt'), EDIT_LINES)
}

/** A line near the middle that ends in '.', so no trailing whitespace is stripped from it. */
function middleLine() {
  for (let n = EDIT_LINES >> 1; ; n++) {
    const line = bigLine(n)
    if (line.endsWith('.')) return { n, line }
  }
}

/** Flushes a file (or folder) to disk, untimed: no candidate's deferred writeback lands in another's timing. */
function settle(p) {
  const fd = openSync(p, 'r')
  fsyncSync(fd)
  closeSync(fd)
}

/** Fails when a temp file was left in `dir`. */
function noTemps(dir, what) {
  const left = readdirSync(dir).filter((n) => n.endsWith('.fsgate-tmp') || n.includes('.tmp-'))
  if (left.length > 0) throw new Error(`${what} left temp files: ${left.join(', ')}`)
}

// ---------------------------------------------------------------------------------------
// 5a. One line of a 10 MiB file
// ---------------------------------------------------------------------------------------
async function benchEditLarge({ fsgate, section, goalAtMost }) {
  const t0 = now()
  const { file: original, size, generated } = largeEditFile()
  const genMs = now() - t0
  const dir = path.join(DATA, 'edit', 'large')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const names = { fsgate: 'fsgate.txt', node: 'node.txt', safe: 'safe.txt' }
  const file = Object.fromEntries(Object.entries(names).map(([k, n]) => [k, path.join(dir, n)]))
  for (const p of Object.values(file)) copyFileSync(original, p)
  for (const p of Object.values(file)) settle(p)
  settle(dir)

  // The two versions every candidate toggles between: A (the original) and B (one line changed).
  const { n: lineNo, line } = middleLine()
  const lines = { A: line, B: line.replace(' ', ' edited-by-the-benchmark ') }
  const bytesA = readFileSync(original)
  const at = bytesA.indexOf(`\n${lines.A}\n`) + 1
  if (at <= 0 || bytesA.indexOf(`\n${lines.A}\n`, at) >= 0) throw new Error('the edited line is not unique in the large file')
  const bytes = { A: bytesA, B: Buffer.concat([bytesA.subarray(0, at), Buffer.from(lines.B), bytesA.subarray(at + lines.A.length)]) }
  const check = (what, p, state) => {
    if (!readFileSync(p).equals(bytes[state])) throw new Error(`${what} left ${path.basename(p)} with the wrong content`)
  }

  // fsgate: the Claude Code preset (read-before-write on, no consent gate). The session
  // reads the whole file once (limits raised so that 10 MiB fits one Read), and every
  // edit refreshes its read record, so the edits that follow need no re-read.
  const toolkit = fsgate.createToolkit({
    workspace: dir,
    preset: 'claude-code',
    limits: { readLines: 1_000_000, readTokens: 100_000_000, unrangedReadBytes: 64 * 2 ** 20 },
  })
  const session = toolkit.createSession()
  const tr = now()
  const read = await session.call('file_read', { path: names.fsgate })
  const readMs = now() - tr
  if (read.isError || read.data.totalLines !== EDIT_LINES || read.data.endLine !== EDIT_LINES) {
    throw new Error(`fsgate could not read the large file whole: ${read.content[0]?.text?.slice(0, 300)}`)
  }
  const viaFsgate = async (from, to) => {
    const r = await session.call('file_edit', { path: names.fsgate, old_string: lines[from], new_string: lines[to] })
    if (r.isError) throw new Error(`fsgate file_edit failed: ${r.content[0]?.text}`)
    if (r.data.replacements !== 1 || r.data.size !== bytes[to].length || r.data.firstLine !== lineNo) {
      throw new Error(`fsgate file_edit reported the wrong facts: ${JSON.stringify({ ...r.data, diff: undefined })}`)
    }
  }

  // Plain Node, as an agent harness without a contract would do it.
  const viaNode = async (from, to) => {
    const s = await readFile(file.node, 'utf8')
    await writeFile(file.node, s.replace(lines[from], lines[to]))
  }

  // Node with fsgate's safety spelled out: the version check (size and content hash, with
  // fsgate's own hashBuffer, so only the orchestration differs), a unique match, a temp
  // file flushed and renamed over the original, the folder flushed, and the new hash
  // kept for the next check. Each phase is timed.
  let record = { size: bytesA.length, hash: await fsgate.hashBuffer(bytesA) }
  const phases = { read: [], check: [], replace: [], write: [], fsync: [], rename: [], rehash: [] }
  let tmpN = 0
  const viaSafe = async (from, to) => {
    const p = file.safe
    const t = [now()]
    const buf = await readFile(p)
    t.push(now())
    if (buf.length !== record.size || (await fsgate.hashBuffer(buf)) !== record.hash) throw new Error('safe Node: the file changed since it was read')
    t.push(now())
    const s = buf.toString('utf8')
    const i = s.indexOf(lines[from])
    if (i < 0 || s.indexOf(lines[from], i + 1) >= 0) throw new Error('safe Node: old_string is missing or not unique')
    const out = Buffer.from(s.slice(0, i) + lines[to] + s.slice(i + lines[from].length))
    t.push(now())
    const tmp = `${p}.tmp-${process.pid}-${tmpN++}`
    const fh = await open(tmp, 'wx')
    await fh.writeFile(out)
    t.push(now())
    await fh.sync()
    t.push(now())
    await fh.close()
    await rename(tmp, p)
    const dh = await open(dir, 'r')
    await dh.sync()
    await dh.close()
    t.push(now())
    record = { size: out.length, hash: await fsgate.hashBuffer(out) }
    t.push(now())
    for (const [k, xs] of Object.values(phases).entries()) xs.push(t[k + 1] - t[k])
  }

  // Interleaved rounds. Each candidate toggles its own file A → B → A …, so every edit
  // starts from a known version; after each timed edit the content is checked against
  // the expected bytes and the file and folder are flushed, both untimed.
  const candidates = { fsgate: viaFsgate, node: viaNode, safe: viaSafe }
  const state = { fsgate: 'A', node: 'A', safe: 'A' }
  const times = { fsgate: [], node: [], safe: [] }
  const step = async (name, timed) => {
    const from = state[name]
    const to = from === 'A' ? 'B' : 'A'
    const t = now()
    await candidates[name](from, to)
    const dt = now() - t
    state[name] = to
    check(name, file[name], to)
    settle(file[name])
    settle(dir)
    if (timed) times[name].push(dt)
  }
  for (const name of Object.keys(candidates)) for (let i = 0; i < 2; i++) await step(name, false) // warm-up
  for (const xs of Object.values(phases)) xs.length = 0
  for (let r = 0; r < LARGE_ROUNDS; r++) for (const name of Object.keys(candidates)) await step(name, true)
  noTemps(dir, 'the large-file edits')

  const st = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, { median: median(xs), min: Math.min(...xs), runs: xs.length }]))
  const base = st.node.median
  const ratio = st.fsgate.median / base
  const x = (ms) => `${(ms / base).toFixed(2)}×`
  const tbl = table(
    ['method', 'median', 'min', 'runs', 'time / plain Node'],
    [
      ['fsgate `session.call("file_edit")`, preset claude-code (version check, exact match, temp file + fsync + rename, diff, undo history)', fmtMs(st.fsgate.median), fmtMs(st.fsgate.min), st.fsgate.runs, x(st.fsgate.median)],
      ['Node `readFile(p, "utf8")` → `String.replace` → `writeFile(p)` (no check, no flush, in place)', fmtMs(st.node.median), fmtMs(st.node.min), st.node.runs, '1.00×'],
      ['(reference) Node with the same safety: `readFile` → size + `hashBuffer` check → unique match → temp file → `fsync` → `rename` → folder `fsync` → hash of the new bytes', fmtMs(st.safe.median), fmtMs(st.safe.min), st.safe.runs, x(st.safe.median)],
    ],
  )
  const phaseRows = Object.entries(phases).map(([k, xs]) => [PHASE_WORDS[k], fmtMs(median(xs)), `${((median(xs) / st.safe.median) * 100).toFixed(0)}%`])
  const phaseTbl = table(['phase of the safe-Node edit', 'median', 'share of its median'], phaseRows)
  section(
    '5a. Editing one line of a 10 MiB file',
    `File: ${fmtNum(EDIT_LINES)} distinct numbered lines of 130 bytes, ${(size / 2 ** 20).toFixed(1)} MiB${generated ? ` (generated in ${fmtMs(genMs)})` : ''}; each candidate has its own copy. The edit replaces line ${fmtNum(lineNo)} (unique) with a line 24 bytes longer, then back, so every candidate toggles between two known versions. ` +
      `fsgate: one toolkit with preset claude-code (read-before-write on, consent gate off) and one session, which read the whole file once before timing (${fmtMs(readMs)}, limits raised so that 10 MiB fits one Read); each edit refreshes the session's read record, so no timed edit needs a re-read. ` +
      `The three candidates run interleaved in ${LARGE_ROUNDS} rounds after 2 untimed edits each. After every timed edit, untimed, the file is compared byte for byte with the expected version, and the file and its folder are flushed (fsync), so no candidate's deferred writeback lands in another's timing. ` +
      `Here the ratio is a **cost**: candidate time / plain Node time, lower is better.`,
    tbl,
    [
      `Where the safe-Node edit spends its time (median of each phase over the same ${LARGE_ROUNDS} runs):\n\n${phaseTbl}\n`,
      `fsgate's edit does what the safe-Node row does, plus what a tool owes its caller: the path is resolved and checked against the workspace (one more call into the engine before the edit), the text is decoded and re-encoded in the file's own encoding, lines are counted for the new read record, a snippet and a unified diff of the change are built, and the replaced 10 MiB are returned and kept in the session's undo history.`,
      `Plain Node's \`writeFile\` truncates and rewrites the file in place without flushing: a crash mid-write leaves a truncated file, and a change made by anyone since the read is silently overwritten.`,
    ],
  )
  goalAtMost(
    '5. file_edit one line of 10 MiB, cost vs Node readFile/replace/writeFile',
    COST_GOAL,
    `${ratio.toFixed(2)}× (${fmtMs(st.fsgate.median)} vs ${fmtMs(base)})`,
    ratio,
  )
}

const PHASE_WORDS = {
  read: '`readFile` (10 MiB into a Buffer)',
  check: 'version check: size + `hashBuffer` (xxh3-128)',
  replace: 'decode, find a unique match, splice, encode',
  write: 'open temp file, write 10 MiB',
  fsync: '`fsync` of the temp file',
  rename: 'close, `rename`, `fsync` of the folder',
  rehash: '`hashBuffer` of the new bytes (the next check)',
}

// ---------------------------------------------------------------------------------------
// 5b. Small files, 32 sessions in flight
// ---------------------------------------------------------------------------------------
const WORDS = 'alpha beta gamma delta value result error path file line token hash read write'.split(' ')

/** A ~2 KiB source-like file of SMALL_LINES distinct lines. */
function smallText(k) {
  const r = rng(1000 + k)
  const lines = Array.from({ length: SMALL_LINES }, (_, n) => {
    const w = Array.from({ length: 4 }, () => WORDS[Math.floor(r() * WORDS.length)])
    return `export const v${k}_${n} = '${w.join(' ')}'`
  })
  return lines.join('\n') + '\n'
}

async function benchEditSmall({ fsgate, section }) {
  const root = path.join(DATA, 'edit', 'small')
  rmSync(root, { recursive: true, force: true })
  const kinds = ['fsgate', 'node', 'safe']
  for (const k of kinds) mkdirSync(path.join(root, k), { recursive: true })
  // Per file k: the two versions A and B, differing in line 25.
  const files = Array.from({ length: SESSIONS }, (_, k) => {
    const a = smallText(k)
    const old = a.split('\n')[24]
    const neu = old.replace(" = '", " = 'edited ")
    return { name: `mod${String(k).padStart(2, '0')}.ts`, lines: { A: old, B: neu }, bytes: { A: Buffer.from(a), B: Buffer.from(a.replace(old, neu)) } }
  })
  for (const k of kinds) for (const f of files) writeFileSync(path.join(root, k, f.name), f.bytes.A)
  const avg = files.reduce((s, f) => s + f.bytes.A.length, 0) / files.length

  const toolkit = fsgate.createToolkit({ workspace: path.join(root, 'fsgate'), preset: 'claude-code' })
  const sessions = files.map(() => toolkit.createSession())
  for (const [k, s] of sessions.entries()) {
    const r = await s.call('file_read', { path: files[k].name })
    if (r.isError || r.data.totalLines !== SMALL_LINES) throw new Error(`fsgate could not read ${files[k].name}: ${r.content[0]?.text}`)
  }
  const state = Object.fromEntries(kinds.map((k) => [k, files.map(() => 'A')]))
  const abs = Object.fromEntries(kinds.map((kind) => [kind, files.map((f) => path.join(root, kind, f.name))]))

  // One edit of file k by each method: from its current version to the other.
  const edit = {
    fsgate: async (k, from, to) => {
      const f = files[k]
      const r = await sessions[k].call('file_edit', { path: f.name, old_string: f.lines[from], new_string: f.lines[to] })
      if (r.isError) throw new Error(`fsgate file_edit of ${f.name} failed: ${r.content[0]?.text}`)
      if (r.data.replacements !== 1 || r.data.size !== f.bytes[to].length) throw new Error(`fsgate file_edit of ${f.name} reported the wrong facts`)
    },
    node: async (k, from, to) => {
      const p = abs.node[k]
      const s = await readFile(p, 'utf8')
      await writeFile(p, s.replace(files[k].lines[from], files[k].lines[to]))
    },
    safe: async (k, from, to) => {
      const p = abs.safe[k]
      const buf = await readFile(p)
      if (!buf.equals(files[k].bytes[from])) throw new Error('safe Node: the file changed since it was read')
      const s = buf.toString('utf8')
      const out = s.replace(files[k].lines[from], files[k].lines[to])
      const tmp = `${p}.tmp-${process.pid}-${k}`
      const fh = await open(tmp, 'wx')
      await fh.writeFile(out)
      await fh.sync()
      await fh.close()
      await rename(tmp, p)
      const dh = await open(path.dirname(p), 'r')
      await dh.sync()
      await dh.close()
    },
  }

  /** `inflight` loops at once, loop k editing file k back and forth for `seconds`. */
  const drive = async (kind, inflight, seconds) => {
    const lat = []
    const end = now() + seconds * 1000
    const t0 = now()
    const loop = async (k) => {
      while (now() < end) {
        const from = state[kind][k]
        const to = from === 'A' ? 'B' : 'A'
        const s = now()
        await edit[kind](k, from, to)
        lat.push(now() - s)
        state[kind][k] = to
      }
    }
    await Promise.all(files.slice(0, inflight).map((_, k) => loop(k)))
    const elapsed = now() - t0
    // Every file must hold exactly the version its loop last wrote.
    for (const [k, f] of files.entries()) {
      if (!readFileSync(abs[kind][k]).equals(f.bytes[state[kind][k]])) throw new Error(`${kind} left ${f.name} with the wrong content`)
    }
    noTemps(path.join(root, kind), `${kind} small-file edits`)
    return { edits: lat.length, perSec: lat.length / (elapsed / 1000), p50: percentile(lat, 50), p99: percentile(lat, 99) }
  }

  const variants = [
    ['fsgate `session.call("file_edit")`, 32 sessions of one toolkit (preset claude-code), one file each', 'fsgate', SESSIONS],
    ['Node `readFile` → `String.replace` → `writeFile` (no check, no flush, in place)', 'node', SESSIONS],
    ['(reference) Node with a version check, temp file, `fsync`, `rename`, folder `fsync`', 'safe', SESSIONS],
    ['fsgate `session.call("file_edit")`, one session alone (the latency of one edit)', 'fsgate', 1],
    ['Node `readFile` → `String.replace` → `writeFile`, one loop alone', 'node', 1],
  ]
  for (const [, kind, inflight] of variants) await drive(kind, inflight, 0.5) // warm up every path
  const runs = variants.map(() => [])
  for (let round = 0; round < SMALL_ROUNDS; round++) {
    for (const [i, [, kind, inflight]] of variants.entries()) runs[i].push(await drive(kind, inflight, SMALL_SECONDS / SMALL_ROUNDS))
  }
  const results = variants.map(([label, kind, inflight], i) => {
    const rs = runs[i]
    const mid = [...rs].sort((a, b) => a.perSec - b.perSec)[rs.length >> 1]
    return {
      label,
      kind,
      inflight,
      perSec: mid.perSec,
      range: `${fmtNum(Math.min(...rs.map((r) => r.perSec)))}–${fmtNum(Math.max(...rs.map((r) => r.perSec)))}`,
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      edits: rs.reduce((a, r) => a + r.edits, 0),
    }
  })
  const plain = (inflight) => results.find((r) => r.kind === 'node' && r.inflight === inflight).perSec
  const rows = results.map((r) => [r.label, r.inflight, fmtNum(r.perSec), r.range, `${(r.perSec / plain(r.inflight)).toFixed(2)}×`, fmtMs(r.p50), fmtMs(r.p99), fmtNum(r.edits)])
  const tbl = table(['method', 'in flight', 'edits/s (median round)', 'range over rounds', 'edits/s vs plain Node', 'p50 latency', 'p99 latency', 'edits'], rows)
  section(
    '5b. Small-file edits, 32 sessions in flight',
    `${SESSIONS} files of ${SMALL_LINES} lines (~${fmtNum(avg)} bytes) per method, each owned by one of ${SESSIONS} loops that run at once in one process; loop k changes line 25 of file k and back, again and again, so ${SESSIONS} edits are always in flight (the last two rows run loop 0 alone, for the latency of an edit without a queue). fsgate: ${SESSIONS} sessions of one toolkit (preset claude-code), each of which read its file once before timing; each edit refreshes its read record, so none needs a re-read. ` +
      `Each method runs ${SMALL_ROUNDS} rounds of ${SMALL_SECONDS / SMALL_ROUNDS} s, interleaved round by round, after 0.5 s of warm-up; the figure is the median round. Every fsgate result is checked (one replacement, the expected size), and after every round every file is compared byte for byte with the version its loop last wrote, and no temp file may be left.`,
    tbl,
    [
      `fsgate runs writes and edits on its own I/O pool of ${Math.min(16, Math.max(4, 4 * os.availableParallelism()))} threads (four per core; a flushed edit holds its thread while the disk confirms the write, so more edits than cores wait for the disk together), apart from the compute pool of reads and searches; Node's file calls run on libuv's pool (${process.env.UV_THREADPOOL_SIZE ?? 4} threads).`,
    ],
  )
}
