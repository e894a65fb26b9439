// The apply_patch benchmark (issue 19): a 20-hunk patch over 5 files of 10,000 lines
// through `session.call('apply_patch')`, against the same changes made by plain Node
// (readFile, string splices, writeFile), in one run. run.mjs calls benchPatch with its
// section and goal helpers.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { open, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'

import { DATA } from './data.mjs'
import { fmtMs, median, now, rng, table } from './lib.mjs'

const FILES = 5
const LINES = 10_000
const HUNKS_PER_FILE = 4
const ROUNDS = 21
const COST_GOAL = 1.5
const WORDS = 'alpha beta gamma delta value result error path file line token hash read write session buffer'.split(' ')

/** Line n of file f (version A): ~60 bytes of source-like text, distinct in the file. */
function lineOf(f, n) {
  const r = rng(f * 100_003 + n)
  const w = Array.from({ length: 4 }, () => WORDS[Math.floor(r() * WORDS.length)])
  return `  const v${f}_${n} = compute('${w.join(' ')}')`
}

/** The lines each hunk changes: four per file, spread out, each in version B with a suffix. */
function changedLines() {
  return Array.from({ length: HUNKS_PER_FILE }, (_, h) => Math.floor(((h + 0.5) * LINES) / HUNKS_PER_FILE))
}

const changedB = (line) => `${line} // patched`

/** Both versions of file f, as lines. */
function versions(f) {
  const A = Array.from({ length: LINES }, (_, n) => lineOf(f, n))
  const B = [...A]
  for (const n of changedLines()) B[n] = changedB(A[n])
  return { A, B }
}

/** A V4A hunk per changed line, three lines of context on each side, from version `from` to `to`. */
function patchText(all, from, to) {
  const body = []
  all.forEach((v, f) => {
    body.push(`*** Update File: f${f}.ts`)
    for (const n of changedLines()) {
      body.push('@@', ...v[from].slice(n - 3, n).map((l) => ` ${l}`), `-${v[from][n]}`, `+${v[to][n]}`, ...v[from].slice(n + 1, n + 4).map((l) => ` ${l}`))
    }
  })
  return ['*** Begin Patch', ...body, '*** End Patch'].join('\n')
}

/** The same change as plain text blocks: each hunk's old lines and new lines, for splicing. */
function blocks(all, from, to) {
  return all.map((v) =>
    changedLines().map((n) => ({
      old: [...v[from].slice(n - 3, n + 4)].join('\n'),
      new: [...v[from].slice(n - 3, n), v[to][n], ...v[from].slice(n + 1, n + 4)].join('\n'),
    })),
  )
}

function settle(p) {
  const fd = openSync(p, 'r')
  fsyncSync(fd)
  closeSync(fd)
}

export async function benchPatch({ fsgate, section, goalAtMost }) {
  const all = Array.from({ length: FILES }, (_, f) => versions(f))
  const bytes = all.map((v) => ({ A: Buffer.from(`${v.A.join('\n')}\n`), B: Buffer.from(`${v.B.join('\n')}\n`) }))
  const patches = { A: patchText(all, 'A', 'B'), B: patchText(all, 'B', 'A') }
  const splices = { A: blocks(all, 'A', 'B'), B: blocks(all, 'B', 'A') }
  const names = ['fsgate', 'node', 'safe']
  const root = path.join(DATA, 'patch')
  rmSync(root, { recursive: true, force: true })
  const dirs = Object.fromEntries(names.map((n) => [n, path.join(root, n)]))
  for (const d of Object.values(dirs)) {
    mkdirSync(d, { recursive: true })
    for (let f = 0; f < FILES; f++) writeFileSync(path.join(d, `f${f}.ts`), bytes[f].A)
    for (let f = 0; f < FILES; f++) settle(path.join(d, `f${f}.ts`))
    settle(d)
  }
  const fileBytes = bytes[0].A.length

  // fsgate: the Claude Code preset; an update needs no read, the patch's lines are its evidence.
  const session = fsgate.createToolkit({ workspace: dirs.fsgate, preset: 'claude-code' }).createSession()
  const viaFsgate = async (from) => {
    const r = await session.call('apply_patch', { input: patches[from] })
    if (r.isError) throw new Error(`fsgate apply_patch failed: ${r.content[0]?.text}`)
    if (r.data.operations.length !== FILES || r.data.operations.some((o) => o.added !== HUNKS_PER_FILE || o.removed !== HUNKS_PER_FILE)) {
      throw new Error(`fsgate apply_patch reported the wrong facts: ${JSON.stringify(r.data.operations)}`)
    }
  }

  // Plain Node, as a harness without a contract would apply the same hunks: read each file,
  // find each hunk's old lines, splice in the new ones, write the file back in place.
  const viaNode = async (from) => {
    for (let f = 0; f < FILES; f++) {
      const p = path.join(dirs.node, `f${f}.ts`)
      let s = await readFile(p, 'utf8')
      for (const b of splices[from][f]) {
        const i = s.indexOf(b.old)
        if (i < 0) throw new Error('plain Node: a hunk is missing')
        s = s.slice(0, i) + b.new + s.slice(i + b.old.length)
      }
      await writeFile(p, s)
    }
  }

  // Node with the durability spelled out (no checks, no all-or-nothing): each file written
  // to a temp file, flushed and renamed over the original, the folder flushed.
  let tmpN = 0
  const viaSafe = async (from) => {
    for (let f = 0; f < FILES; f++) {
      const p = path.join(dirs.safe, `f${f}.ts`)
      let s = await readFile(p, 'utf8')
      for (const b of splices[from][f]) {
        const i = s.indexOf(b.old)
        if (i < 0 || s.indexOf(b.old, i + 1) >= 0) throw new Error('safe Node: a hunk is missing or not unique')
        s = s.slice(0, i) + b.new + s.slice(i + b.old.length)
      }
      const tmp = `${p}.tmp-${process.pid}-${tmpN++}`
      const fh = await open(tmp, 'wx')
      await fh.writeFile(s)
      await fh.sync()
      await fh.close()
      await rename(tmp, p)
    }
    const dh = await open(dirs.safe, 'r')
    await dh.sync()
    await dh.close()
  }

  const candidates = { fsgate: viaFsgate, node: viaNode, safe: viaSafe }
  const state = Object.fromEntries(names.map((n) => [n, 'A']))
  const times = Object.fromEntries(names.map((n) => [n, []]))
  const step = async (name, timed) => {
    const from = state[name]
    const to = from === 'A' ? 'B' : 'A'
    const t = now()
    await candidates[name](from)
    const dt = now() - t
    state[name] = to
    // Untimed: every file checked byte for byte, then flushed with its folder, so no
    // candidate's deferred writeback lands in another's timing.
    for (let f = 0; f < FILES; f++) {
      const p = path.join(dirs[name], `f${f}.ts`)
      if (!readFileSync(p).equals(bytes[f][to])) throw new Error(`${name} left f${f}.ts with the wrong content`)
      settle(p)
    }
    settle(dirs[name])
    if (timed) times[name].push(dt)
  }
  for (const name of names) for (let i = 0; i < 2; i++) await step(name, false)
  for (let r = 0; r < ROUNDS; r++) for (const name of names) await step(name, true)
  for (const d of Object.values(dirs)) {
    const left = readdirSync(d).filter((n) => n.endsWith('.fsgate-tmp') || n.includes('.tmp-'))
    if (left.length > 0) throw new Error(`temp files left in ${d}: ${left.join(', ')}`)
  }

  const st = Object.fromEntries(names.map((n) => [n, { median: median(times[n]), min: Math.min(...times[n]), runs: times[n].length }]))
  const base = st.node.median
  const x = (ms) => `${(ms / base).toFixed(2)}×`
  // Paired by round: plain Node's unflushed writes swing with the page cache's writeback, so
  // a ratio of medians taken apart moves with whichever side met a flush.
  const ratio = median(times.fsgate.map((t, i) => t / times.node[i]))
  section(
    '16. A 20-hunk patch over 5 files (apply_patch)',
    `Files: ${FILES} files of ${LINES.toLocaleString('en-US')} distinct source-like lines (${(fileBytes / 1024).toFixed(0)} KiB each); each candidate has its own copies. The patch has ${HUNKS_PER_FILE} hunks per file, ${FILES * HUNKS_PER_FILE} in all, spread through each file, each with three lines of context on both sides and one line replaced; it turns version A into B, and the reverse patch B into A, so every candidate toggles between two known versions. ` +
      `fsgate: \`session.call('apply_patch', { input })\`, preset claude-code; an update needs no read (the hunks' lines are the evidence). The three candidates run interleaved in ${ROUNDS} rounds after 2 untimed patches each. After every timed patch, untimed, each file is compared byte for byte with the expected version and flushed with its folder. ` +
      `Here the ratio is a **cost**: candidate time / plain Node time, lower is better; the goal row takes the median of each round's ratio (fsgate / plain Node in the same round).`,
    table(
      ['method', 'median', 'min', 'runs', 'time / plain Node'],
      [
        ['fsgate `session.call("apply_patch")` (parse, each hunk found on the matching ladder, new versions staged with fsync, then renamed together with a last look at each file, all-or-nothing, diffs, undo history)', fmtMs(st.fsgate.median), fmtMs(st.fsgate.min), st.fsgate.runs, x(st.fsgate.median)],
        ['Node: for each file `readFile` → `indexOf` + splice per hunk → `writeFile` (no check, no flush, in place, file by file)', fmtMs(st.node.median), fmtMs(st.node.min), st.node.runs, '1.00×'],
        ['(reference) Node durable per file: the same splices → temp file → `fsync` → `rename`, then the folder `fsync` (no version check, not all-or-nothing)', fmtMs(st.safe.median), fmtMs(st.safe.min), st.safe.runs, x(st.safe.median)],
      ],
    ),
    [
      'Plain Node leaves the files half-changed when one of them fails (or the process dies between two writes), and a file truncated when it dies inside one; it overwrites whatever changed since it read the files.',
      'fsgate stages every new version (written and flushed beside its file) before it renames any, so a full disk or a write error changes nothing; the renames then follow one another, each after a last look at its file.',
    ],
  )
  goalAtMost(`16. apply_patch, 20 hunks over 5 files of ${LINES.toLocaleString('en-US')} lines, cost vs Node readFile/splice/writeFile`, COST_GOAL, `${ratio.toFixed(2)}× by round (medians ${fmtMs(st.fsgate.median)} vs ${fmtMs(base)})`, ratio)
}
