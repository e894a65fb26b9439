// fsgate benchmarks against pure-JS and Node built-in peers. `npm run bench` builds and
// runs this; `node benches/run.mjs [--only=read,hash,tokens,small,edit,search,pdf,shell,fairness,patch,dialects,index] [--no-write]` runs
// parts of it against the current build (dialects: section 15, tokens of Read's line styles and of a listing; index: section 17, the live index on an installed npm tree). Prints the tables and writes BENCHMARKS.md.
import { createHash } from 'node:crypto'
import { createReadStream, existsSync, openSync, readFileSync, readSync, closeSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import readline from 'node:readline'
import { Worker } from 'node:worker_threads'

import { BIG_LINES, bigLine, bigTextFile, hashInputFile, ROOT, smallFiles, tokenCorpus, unsplittable } from './data.mjs'
import { benchEdit } from './edit.mjs'
import { benchDialects } from './dialects.mjs'
import { benchFairness } from './fairness.mjs'
import { benchPatch } from './patch.mjs'
import { benchSearch } from './search.mjs'
import { benchShell } from './shell.mjs'
import { fmtMs, fmtNum, fmtRatio, interleave, machine, measure, median, now, percentile, table } from './lib.mjs'
import { loadPeers } from './peers.mjs'

const require = createRequire(import.meta.url)
const fsgate = await import(path.join(ROOT, 'dist', 'index.js'))
const native = require(path.join(ROOT, 'native', 'index.cjs'))

const argv = process.argv.slice(2)
const only = (argv.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? ['read', 'hash', 'tokens', 'small', 'edit', 'search', 'pdf', 'shell', 'fairness', 'patch', 'dialects', 'index']).map((s) => s.trim())
const write = !argv.includes('--no-write')
const PEER_CAP_MS = 20_000
const SMALL_SECONDS = 4.5
const SMALL_ROUNDS = 3
const INFLIGHT = 64

const started = now()
const sections = [] // markdown blocks, in order
const goals = [] // { bench, goal, measured, met }

function log(...xs) {
  console.log(...xs)
}

function section(title, intro, tbl, notes = []) {
  log(`\n## ${title}\n`)
  if (intro) log(intro + '\n')
  log(tbl)
  for (const n of notes) log(`- ${n}`)
  sections.push([`## ${title}`, '', intro, '', tbl, '', ...notes.map((n) => `- ${n}`), ''].join('\n'))
}

function goal(bench, target, measured, ratio) {
  goals.push({ bench, goal: `≥ ${target}×`, measured, met: status(ratio / target) })
}

/** A cost goal: `ratio` (e.g. fsgate time / plain time) must be at most `target`. */
function goalAtMost(bench, target, measured, ratio) {
  goals.push({ bench, goal: `≤ ${target}×`, measured, met: status(target / ratio) })
}

/** 'met', or how far short: 'missed (99.9% of goal)'. */
function status(share) {
  if (share >= 1) return 'met'
  return `missed (${(share * 100).toFixed(share >= 0.99 ? 1 : 0)}% of goal)`
}

/** Reads a whole file through a fixed buffer, so it sits in the page cache. */
function warmPageCache(file) {
  const fd = openSync(file, 'r')
  const buf = Buffer.allocUnsafe(4 * 2 ** 20)
  let total = 0
  for (;;) {
    const n = readSync(fd, buf, 0, buf.length, null)
    if (n <= 0) break
    total += n
  }
  closeSync(fd)
  return total
}

// ---------------------------------------------------------------------------------------
// 1. A page deep inside a large file
// ---------------------------------------------------------------------------------------
async function benchRead() {
  const t0 = now()
  const { file, size, generated } = bigTextFile()
  const genMs = now() - t0
  for (let i = 0; i < 2; i++) warmPageCache(file)
  const FIRST = 900_000
  const COUNT = 101
  const LAST = FIRST + COUNT - 1
  const expected = Array.from({ length: COUNT }, (_, i) => bigLine(FIRST + i))
  const expectedPage = expected.map((l, i) => `${String(FIRST + i).padStart(6)}\t${l}`).join('\n')
  const check = (what, lines) => {
    if (lines.length !== COUNT || lines.some((l, i) => l !== expected[i])) throw new Error(`${what} returned the wrong lines`)
  }

  const fileRead = async (toolkit) => {
    const session = toolkit.createSession({ dedup: false }) // fresh and no dedup: never a stub
    const r = await session.call('file_read', { path: path.basename(file), offset: FIRST, limit: COUNT })
    const text = r.content[0]?.text ?? ''
    if (r.isError || !text.startsWith(expectedPage + '\n') || r.data.startLine !== FIRST || r.data.endLine !== LAST || r.data.totalLines !== BIG_LINES) {
      throw new Error(`fsgate file_read returned the wrong page: ${text.slice(0, 200)}`)
    }
    return r
  }
  // A toolkit keeps what a pass over a large file learned (its hash, line count and a
  // sparse line index, keyed by the file's identity), so the first read in a toolkit and
  // the later ones are timed apart.
  const shared = fsgate.createToolkit({ workspace: path.dirname(file) })
  const viaFsgateWarm = () => fileRead(shared)
  const viaFsgateCold = () => fileRead(fsgate.createToolkit({ workspace: path.dirname(file) }))
  const viaReadline = async () => {
    const stream = createReadStream(file, { encoding: 'utf8' })
    const rl = readline.createInterface({ input: stream, crlfDelay: Infinity })
    const out = []
    let n = 0
    for await (const line of rl) {
      n++
      if (n >= FIRST) out.push(line)
      if (n === LAST) break // stop early: the most favourable use of readline
    }
    rl.close()
    stream.destroy()
    check('readline', out)
    return out
  }
  const viaBufferScan = () => {
    const buf = readFileSync(file)
    let pos = 0
    for (let n = 1; n < FIRST; n++) pos = buf.indexOf(10, pos) + 1
    const out = []
    for (let i = 0; i < COUNT; i++) {
      const end = buf.indexOf(10, pos)
      out.push(buf.toString('utf8', pos, end))
      pos = end + 1
    }
    check('Buffer scan', out)
    return out
  }
  // The floor of fsgate's design: a read hashes and counts the whole file, so one
  // xxh3 pass over the same bytes (hashFile) is the least it can take.
  const viaHashFile = () => fsgate.hashFile(file)

  const res = await interleave(
    {
      c: { fn: viaFsgateCold, perRound: 2 },
      f: { fn: viaFsgateWarm, perRound: 3, warmup: 2 },
      h: { fn: viaHashFile, perRound: 2 },
      b: { fn: viaBufferScan },
      r: { fn: viaReadline },
    },
    { rounds: 7 },
  )
  const { c, f, h, b, r } = res

  const rows = [
    ['fsgate `file_read` {offset: 900000, limit: 101}, first read in a new toolkit (one full pass; builds the index)', fmtMs(c.median), fmtMs(c.min), c.times.length, fmtRatio(c.median / f.median), fmtRatio(r.median / c.median)],
    ['fsgate `file_read` {offset: 900000, limit: 101}, again in the same toolkit, new session (index warm: seeks to the page)', fmtMs(f.median), fmtMs(f.min), f.times.length, '1.0×', fmtRatio(r.median / f.median)],
    ['Node `fs.readFileSync` + `Buffer.indexOf("\\n")` scan', fmtMs(b.median), fmtMs(b.min), b.times.length, fmtRatio(b.median / f.median), fmtRatio(r.median / b.median)],
    ['Node `readline` over `fs.createReadStream` (stops at line 900,100)', fmtMs(r.median), fmtMs(r.min), r.times.length, fmtRatio(r.median / f.median), '1.0×'],
    ['(reference) fsgate `hashFile` of the same file: one parallel hash pass', fmtMs(h.median), fmtMs(h.min), h.times.length, fmtRatio(h.median / f.median), fmtRatio(r.median / h.median)],
  ]
  const tbl = table(['method', 'median', 'min', 'runs', 'time vs fsgate', 'speed-up vs readline'], rows)
  section(
    '1. Lines 900,000–900,100 of a 130 MiB text file',
    `File: ${fmtNum(BIG_LINES)} lines of 130 bytes, ${(size / 2 ** 20).toFixed(1)} MiB${generated ? ` (generated in ${fmtMs(genMs)})` : ''}. ` +
      `The page cache is **warm**: the file is read through twice before timing, and each method then runs once untimed. The methods run interleaved in 7 rounds (fsgate warm 3×, fsgate cold and hashFile 2× per round), so drifts of this shared machine touch all alike. ` +
      `Every run checks the 101 returned lines against the generator; fsgate's page is also checked for its line numbers and totalLines = ${fmtNum(BIG_LINES)}. ` +
      `fsgate uses a fresh session with \`dedup: false\` per run, so no run is answered with a stub; the "first read" row also makes a new toolkit per run, so nothing learned by an earlier run is reused.`,
    tbl,
    [
      `The first ranged read of a large text file in a toolkit makes one pass over the whole file: it hashes every byte (for the read-before-write record), counts every line (totalLines) and notes a line start in every 1 MiB chunk; for a file of 4 MiB or more that pass is split across the cores (each reads, hashes and counts its own run of chunks), and the page is then read from the nearest line start. Its time is bounded below by one pass over the ${(size / 2 ** 20).toFixed(0)} MiB, shown by the hashFile row. The toolkit keeps those facts keyed by the file's identity (device, inode, size, mtime, ctime), so a later ranged read of the unchanged file, from any session, seeks straight to its page. readline and the Buffer scan stop at line ${fmtNum(LAST)} (${((LAST / BIG_LINES) * 100).toFixed(0)}% of the file) and learn nothing for the next call.`,
    ],
  )
  goal('1. file_read deep page vs readline, first read in a toolkit', 20, `${fmtRatio(r.median / c.median)} (${fmtMs(c.median)} vs ${fmtMs(r.median)})`, r.median / c.median)
  goal('1. file_read deep page vs readline, later reads (index warm)', 20, `${fmtRatio(r.median / f.median)} (${fmtMs(f.median)} vs ${fmtMs(r.median)})`, r.median / f.median)
}

// ---------------------------------------------------------------------------------------
// 2. Hashing 256 MiB
// ---------------------------------------------------------------------------------------
async function benchHash() {
  const { file, size } = hashInputFile()
  for (let i = 0; i < 2; i++) warmPageCache(file)
  const sha256Stream = (highWaterMark) => async () => {
    const hash = createHash('sha256')
    for await (const chunk of createReadStream(file, highWaterMark ? { highWaterMark } : {})) hash.update(chunk)
    return hash.digest('hex')
  }
  const viaHashFile = () => fsgate.hashFile(file)
  const buf = readFileSync(file)
  const viaHashBuffer = () => fsgate.hashBuffer(buf)
  const res = await interleave(
    {
      fileF: { fn: viaHashFile, perRound: 2 },
      fileS: { fn: sha256Stream(undefined) },
      fileS1M: { fn: sha256Stream(2 ** 20) },
      bufF: { fn: viaHashBuffer, perRound: 2 },
      bufS: { fn: () => createHash('sha256').update(buf).digest('hex') },
    },
    { rounds: 5 },
  )
  const { fileF, fileS, fileS1M, bufF, bufS } = res
  if (bufF.value !== fileF.value) throw new Error(`hashBuffer ${bufF.value} differs from hashFile ${fileF.value}`)
  if (bufS.value !== fileS.value || fileS1M.value !== fileS.value) throw new Error('sha256 of the buffer and of the stream differ')

  const gbps = (ms) => `${(size / 1e9 / (ms / 1000)).toFixed(2)} GB/s`
  const rows = [
    ['file', 'fsgate `hashFile(path)` (two-level xxh3-128, chunks in parallel)', fmtMs(fileF.median), gbps(fileF.median), fileF.times.length, '1.0×'],
    ['file', 'node:crypto sha256, `createReadStream` (64 KiB chunks) → `hash.update`', fmtMs(fileS.median), gbps(fileS.median), fileS.times.length, fmtRatio(fileS.median / fileF.median)],
    ['file', 'node:crypto sha256, `createReadStream` (1 MiB chunks) → `hash.update`', fmtMs(fileS1M.median), gbps(fileS1M.median), fileS1M.times.length, fmtRatio(fileS1M.median / fileF.median)],
    ['Buffer', 'fsgate `hashBuffer(buf)` (two-level xxh3-128, chunks in parallel)', fmtMs(bufF.median), gbps(bufF.median), bufF.times.length, '1.0×'],
    ['Buffer', 'node:crypto `createHash("sha256").update(buf).digest()`', fmtMs(bufS.median), gbps(bufS.median), bufS.times.length, fmtRatio(bufS.median / bufF.median)],
  ]
  const tbl = table(['input', 'method', 'median', 'throughput', 'runs', 'fsgate speed-up'], rows)
  section(
    '2. Hashing 256 MiB',
    `Input: 256 MiB of random bytes, page cache warm (read through twice first; every method also runs once untimed). The five methods run interleaved in 5 rounds (the fsgate ones twice a round). The in-memory rows hash the same bytes already in a Buffer. hashFile and hashBuffer agree (${fileF.value}), and so do the three sha256 runs.`,
    tbl,
    [
      `The speed-up is the algorithm and the cores: xxh3-128 is a non-cryptographic hash, and fsgate's content hash hashes 1 MiB chunks on all cores and then the chunk hashes, while sha256 is a cryptographic one (this CPU ${machine().flags.includes('sha_ni') ? 'has' : 'lacks'} SHA extensions, which OpenSSL uses). fsgate needs change detection, not collision resistance against an adversary, so the comparison is the one a user of Node would otherwise make.`,
    ],
  )
  goal('2. hashFile vs sha256 stream', 5, `${fmtRatio(fileS.median / fileF.median)} (${fmtMs(fileF.median)} vs ${fmtMs(fileS.median)})`, fileS.median / fileF.median)
  goal('2. hashBuffer vs sha256 Buffer', 5, `${fmtRatio(bufS.median / bufF.median)} (${fmtMs(bufF.median)} vs ${fmtMs(bufS.median)})`, bufS.median / bufF.median)
}

// ---------------------------------------------------------------------------------------
// 3. Token counting
// ---------------------------------------------------------------------------------------
async function benchTokens() {
  const corpus = tokenCorpus()
  const peers = await loadPeers()
  const missing = Object.entries(peers).filter(([, p]) => p.missing)
  const t0 = now()
  const first = await fsgate.countTokens(corpus.text)
  const fsgateCold = now() - t0
  const f = await measure(() => fsgate.countTokens(corpus.text), { reps: 9, warmup: 1 })
  const rows = [['fsgate `countTokens` (Rust `bpe-openai`, o200k)', fmtNum(f.value), fmtMs(fsgateCold), fmtMs(f.median), f.times.length, '1.0×']]
  const counts = { fsgate: f.value }
  const peerGoals = []
  for (const [name, p] of Object.entries(peers)) {
    if (p.missing) continue
    const c0 = now()
    p.count('warm up') // tables are built lazily on the first call; time them in "first call"
    const c = p.count(corpus.text)
    const cold = now() - c0
    counts[name] = c
    const m = await measure(
      () => {
        p.reset?.()
        return p.count(corpus.text)
      },
      { reps: 5, warmup: 0, budgetMs: 15_000 },
    )
    const label = `${p.label} ${p.version}${p.reset ? ', merge cache cleared per run' : ''}`
    rows.push([label, fmtNum(m.value), fmtMs(cold), fmtMs(m.median), m.times.length, fmtRatio(m.median / f.median)])
    peerGoals.push([`3. countTokens 1 MB vs ${name}${p.reset ? ' (merge cache cleared per run)' : ''}`, m.median])
    if (p.reset) {
      const w = await measure(() => p.count(corpus.text), { reps: 5, warmup: 1, budgetMs: 10_000 })
      rows.push([`${p.label} ${p.version}, merge cache warm (same text again)`, fmtNum(w.value), '', fmtMs(w.median), w.times.length, fmtRatio(w.median / f.median)])
      peerGoals.push([`3. countTokens 1 MB vs ${name} (merge cache warm)`, w.median])
    }
  }
  if (first !== f.value) throw new Error('fsgate countTokens is not deterministic')
  const tbl = table(['counter', 'tokens', 'first call (incl. table load)', 'median', 'runs', 'fsgate speed-up'], rows)
  const agree = Object.entries(counts)
    .filter(([n]) => n !== 'fsgate')
    .map(([n, c]) => `${n} ${c === counts.fsgate ? 'agrees exactly' : `differs by ${fmtNum(c - counts.fsgate)} (${(((c - counts.fsgate) / counts.fsgate) * 100).toFixed(3)}%)`}`)
  section(
    '3a. Counting the tokens of 1 MB of real text',
    `Input: ${fmtNum(corpus.bytes)} bytes (${corpus.files} files of ${corpus.source}, concatenated, cut at a line end): English doc comments and TypeScript declarations. fsgate's figure includes passing the string into the addon and back; it runs on the addon's pool, off the JS thread.`,
    tbl,
    [
      `Token counts: fsgate ${fmtNum(counts.fsgate)}; ${agree.join('; ') || 'no peer installed'}.`,
      ...missing.map(([n, p]) => `${n} is not installed (${p.missing}); install the devDependencies to compare.`),
    ],
  )
  for (const [label, ms] of peerGoals) goal(label, 5, `${fmtRatio(ms / f.median)} (${fmtMs(f.median)} vs ${fmtMs(ms)})`, ms / f.median)

  // Linear time on one piece that no pre-tokenizer can split.
  const sizes = [100_000, 200_000, 400_000, 800_000]
  const linRows = []
  const perImpl = { fsgate: {} }
  const linCounts = {}
  for (const size of sizes) {
    const times = []
    for (let rep = 0; rep < 3; rep++) {
      const text = unsplittable(size, size + rep)
      const t = now()
      const n = await fsgate.countTokens(text)
      times.push(now() - t)
      if (rep === 0) linCounts[`fsgate:${size}`] = n
    }
    perImpl.fsgate[size] = { ms: median(times), runs: times.length }
  }
  for (const [name, p] of Object.entries(peers)) {
    if (p.missing) continue
    perImpl[name] = {}
    let stopped = false
    for (const size of sizes) {
      if (stopped) {
        perImpl[name][size] = { skipped: true }
        continue
      }
      const times = []
      for (let rep = 0; rep < 3; rep++) {
        const r = await inWorker({ peer: name, size, seed: size + rep }, PEER_CAP_MS)
        if (r.failed) {
          perImpl[name][size] = { failed: r.failed }
          stopped = true
          break
        }
        if (r.timedOut || r.ms > PEER_CAP_MS) {
          perImpl[name][size] = { timedOut: true }
          stopped = true
          break
        }
        times.push(r.ms)
        if (rep === 0) linCounts[`${name}:${size}`] = r.tokens
        if (r.ms > 2000) break // one run is enough at this cost
      }
      if (!stopped) perImpl[name][size] = { ms: median(times), runs: times.length }
    }
  }
  const cell = (x) => (x.failed ? `failed (${x.failed})` : x.timedOut ? `timed out (> ${PEER_CAP_MS / 1000} s)` : x.skipped ? 'not run (smaller size timed out)' : `${fmtMs(x.ms)}${x.runs > 1 ? '' : ' (1 run)'}`)
  for (const [name, bySize] of Object.entries(perImpl)) {
    const a = bySize[100_000]
    const z = bySize[800_000]
    const ratio = a?.ms && z?.ms ? (z.ms / a.ms).toFixed(1) : '—'
    linRows.push([name === 'fsgate' ? 'fsgate `countTokens`' : peers[name].label, ...sizes.map((s) => cell(bySize[s])), ratio])
  }
  const mismatches = []
  for (const size of sizes) {
    const ref = linCounts[`fsgate:${size}`]
    for (const name of Object.keys(peers)) {
      const c = linCounts[`${name}:${size}`]
      if (c !== undefined && c !== ref) mismatches.push(`${name} at ${size / 1000} KB: ${fmtNum(c)} vs fsgate ${fmtNum(ref)}`)
    }
  }
  const linTbl = table(['counter', ...sizes.map((s) => `${s / 1000} KB`), 'time(800K) / time(100K)'], linRows)
  section(
    '3b. Linear time on a worst case: one long unsplittable string',
    `Input: n random lowercase letters with no space or punctuation, so the pre-tokenizer yields one piece of n bytes and BPE must merge inside it. Each run uses a fresh string (different seed) so no cache can answer it. fsgate: median of 3 runs. Peers run in a worker thread that is terminated after ${PEER_CAP_MS / 1000} s; a peer that times out is not run at larger sizes. Linear time gives a ratio of about 8, quadratic about 64.`,
    linTbl,
    [mismatches.length ? `Count differences: ${mismatches.join('; ')}.` : 'Where a peer finished, its token count equals fsgate\'s for the same string.'],
  )
  const fr = perImpl.fsgate[800_000].ms / perImpl.fsgate[100_000].ms
  goals.push({ bench: '3. countTokens linear on a worst case', goal: 'ratio ≈ 8', measured: fr.toFixed(1), met: fr < 12 ? 'met' : 'missed' })
}

function inWorker(data, capMs) {
  return new Promise((resolve, _reject) => {
    const w = new Worker(new URL('./tokens-worker.mjs', import.meta.url), { workerData: data })
    let timer
    w.once('message', (m) => {
      clearTimeout(timer)
      w.terminate().then(() => resolve(m))
    })
    w.once('error', (e) => {
      clearTimeout(timer)
      resolve({ failed: String(e?.message ?? e).slice(0, 80) })
    })
    w.once('online', () => {
      // The cap covers the count only, not loading the ranks (the worker times the count
      // itself); 5 s of slack covers the load.
      timer = setTimeout(() => w.terminate().then(() => resolve({ timedOut: true })), capMs + 5_000)
    })
  })
}

// ---------------------------------------------------------------------------------------
// 4. Many small reads through session.call
// ---------------------------------------------------------------------------------------

/** Keeps `inflight` calls running for `seconds`; returns calls/s and latencies. */
async function drive(call, { seconds = SMALL_SECONDS, inflight = INFLIGHT, total = 1000 } = {}) {
  let next = 0
  let errors = 0
  let firstError
  const lat = []
  const end = now() + seconds * 1000
  const t0 = now()
  const loop = async () => {
    while (now() < end) {
      const i = next++ % total
      const s = now()
      try {
        const ok = await call(i)
        if (!ok) errors++
      } catch (e) {
        errors++
        firstError ??= e
      }
      lat.push(now() - s)
    }
  }
  await Promise.all(Array.from({ length: inflight }, loop))
  const elapsed = now() - t0
  if (firstError) console.error(firstError)
  return { calls: lat.length, perSec: lat.length / (elapsed / 1000), p50: percentile(lat, 50), p99: percentile(lat, 99), errors }
}

async function benchSmall() {
  const { dir, names } = smallFiles()
  for (const n of names) readFileSync(path.join(dir, n)) // warm the page cache
  const toolkit = fsgate.createToolkit({ workspace: dir })
  const abs = names.map((n) => path.join(dir, n))
  const heads = names.map((_, i) => `     1\t// module ${i}\n`)

  const off = toolkit.createSession({ dedup: false })
  const callOff = async (i) => {
    const r = await off.call('file_read', { path: names[i] })
    return !r.isError && r.content[0].text.startsWith(heads[i]) && !r.data.unchanged
  }
  let stubs = 0
  let full = 0
  let on = toolkit.createSession()
  const callOn = async (i) => {
    const r = await on.call('file_read', { path: names[i] })
    if (r.isError) return false
    if (r.data.unchanged) stubs++
    else if (r.content[0].text.startsWith(heads[i])) full++
    else return false
    return true
  }
  const fsNative = toolkit.fs
  // The addon alone: its own completer, so nothing of the facade runs.
  const answers = new Map()
  let lastId = 0
  // A completer does not keep the process alive by itself (the facade holds a timer
  // while it waits); this one is held open for the rest of the run.
  const hold = setInterval(() => {}, 2 ** 30)
  const benchCompleter = new native.Completer((id, reply) => {
    const resolve = answers.get(id)
    answers.delete(id)
    resolve(reply)
  })
  const nativeRead = (p) =>
    new Promise((resolve) => {
      const id = ++lastId
      answers.set(id, resolve)
      fsNative.read(benchCompleter, id, { path: p, limit: 2000 })
    })
  const callNativeRead = async (i) => {
    const r = await nativeRead(abs[i])
    return !r.error && r.value.text.startsWith(heads[i])
  }
  // The facade alone: a second toolkit whose addon handle answers at once with results
  // read beforehand, so only the TypeScript layer (and the event loop) is timed.
  const { deliver } = await import(path.join(ROOT, 'dist', 'native.js'))
  const stubbed = fsgate.createToolkit({ workspace: dir })
  const prepared = new Map()
  for (const a of abs) prepared.set(a, await nativeRead(a))
  Object.defineProperty(stubbed, 'fs', { value: { read: (_completer, id, o) => queueMicrotask(() => deliver(id, prepared.get(o.path))) } })
  const facade = stubbed.createSession({ dedup: false })
  const callFacade = async (i) => {
    const r = await facade.call('file_read', { path: names[i] })
    return !r.isError && r.content[0].text.startsWith(heads[i])
  }
  const callNodeFs = async (i) => (await readFile(abs[i], 'utf8')).startsWith('// module')

  const variants = [
    ['fsgate `session.call("file_read")`, **dedup off** (every call returns the file)', callOff],
    [
      'fsgate `session.call("file_read")`, **dedup on** (a fresh session each round: 1,000 full reads, then stubs)',
      callOn,
      () => {
        on = toolkit.createSession()
        stubs = 0
        full = 0
      },
    ],
    ['(breakdown) native `Workspace.read` alone: the addon without the TS facade', callNativeRead],
    ['(breakdown) TS facade alone: `session.call` with the addon replaced by a stub that returns prepared results', callFacade],
    ['(reference) Node `fs.promises.readFile(path, "utf8")`, no numbering', callNodeFs],
  ]
  const runs = variants.map(() => [])
  for (const [, call] of variants) await drive(call, { seconds: 0.5 }) // warm up every path
  for (let round = 0; round < SMALL_ROUNDS; round++) {
    for (const [i, [, call, reset]] of variants.entries()) {
      reset?.()
      const r = await drive(call, { seconds: SMALL_SECONDS / SMALL_ROUNDS })
      if (call === callOn) r.note = `${fmtNum(full)} full, ${fmtNum(stubs)} stubs (last round)`
      runs[i].push(r)
    }
  }
  const results = variants.map(([label], i) => {
    const rs = runs[i]
    const mid = [...rs].sort((a, b) => a.perSec - b.perSec)[rs.length >> 1]
    return {
      label,
      perSec: mid.perSec,
      range: `${fmtNum(Math.min(...rs.map((r) => r.perSec)))}–${fmtNum(Math.max(...rs.map((r) => r.perSec)))}`,
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      calls: rs.reduce((a, r) => a + r.calls, 0),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      note: rs[rs.length - 1].note ?? '',
    }
  })
  const base = results[0].perSec
  const rows = results.map((r) => [r.label, fmtNum(r.perSec), r.range, fmtMs(r.p50), fmtMs(r.p99), fmtNum(r.calls), r.errors, r.note])
  const tbl = table(['method', 'calls/s (median round)', 'range over rounds', 'p50 latency', 'p99 latency', 'calls', 'failed checks', 'note'], rows)
  section(
    '4. Small-file reads through session.call',
    `Workspace: ${fmtNum(names.length)} files of ~2 KB (${names.length} × ~52 lines), page cache warm. ${INFLIGHT} calls in flight in one process, cycling over the files; each method runs ${SMALL_ROUNDS} rounds of ${SMALL_SECONDS / SMALL_ROUNDS} s (${SMALL_SECONDS} s in all), the methods interleaved round by round, after 0.5 s of warm-up each; the figure is the median round. Each result is checked (first numbered line; no stub where dedup is off).`,
    tbl,
    [
      `The breakdown row calls the addon's \`Workspace.read\` directly (the toolkit's internal handle), and the facade row replaces the addon with a stub that answers at once, so it times the TypeScript layer alone (schema validation, path resolution, cancel token, result shaping, the read ledger). Both run on the one JS thread, so their per-call costs add up: 1/dedup-off ≈ 1/native + 1/facade.`,
      `With dedup on, a stub still needs the native read: the session compares the file's current hash and size, so stubs save the model's context, not the engine's work.`,
    ],
  )
  clearInterval(hold)
  goals.push({
    bench: '4. small-file session.call, dedup off',
    goal: '≥ 20,000 calls/s',
    measured: `${fmtNum(base)} calls/s`,
    met: status(base / 20_000),
  })
}

// ---------------------------------------------------------------------------------------

/** The share of all CPUs that was busy over `ms` (from /proc/stat), or null off Linux. */
async function cpuBusy(ms) {
  const read = () => {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
    return { idle: f[3] + (f[4] ?? 0), total: f.reduce((a, b) => a + b, 0) }
  }
  try {
    const a = read()
    await new Promise((r) => setTimeout(r, ms))
    const b = read()
    return b.total > a.total ? 1 - (b.idle - a.idle) / (b.total - a.total) : null
  } catch {
    return null
  }
}

const m = machine()
const loadStart = (await import('node:os')).loadavg()
const busyBefore = await cpuBusy(1000)
log(`fsgate benchmarks — ${new Date().toISOString()}`)
log(`machine: ${m.nproc} CPUs (nproc), ${m.cpu}, ${m.memGiB} GiB RAM, ${m.os}; node ${m.node}`)
const runners = {
  read: benchRead,
  hash: benchHash,
  tokens: benchTokens,
  small: benchSmall,
  edit: () => benchEdit({ fsgate, section, goalAtMost }),
  search: () => benchSearch({ fsgate, section, goal, goalAtMost, goals, status }),
  pdf: async () => (await import('./pdf.mjs')).benchPdf({ fsgate, section, goal, goalAtMost, goals, status }),
  shell: () => benchShell({ fsgate, section, goal, goalAtMost, goals, status }),
  fairness: () => benchFairness({ fsgate, section, goals, status }),
  patch: () => benchPatch({ fsgate, section, goalAtMost }),
  dialects: () => benchDialects({ fsgate, section }),
  index: async () => (await import('./index.mjs')).benchIndex({ fsgate, section, goal, goalAtMost, goals, status }),
}
for (const name of only) {
  if (!runners[name]) throw new Error(`unknown benchmark '${name}'; use ${Object.keys(runners).join(', ')}`)
  const t = now()
  await runners[name]()
  log(`(${name}: ${fmtMs(now() - t)})`)
}
const goalTbl = table(
  ['benchmark', 'goal', 'measured', 'status'],
  goals.map((g) => [g.bench, g.goal, g.measured, g.met]),
)
log('\n## Goals\n')
log(goalTbl)
const totalMs = now() - started
log(`\ntotal: ${fmtMs(totalMs)}`)
const loadEnd = (await import('node:os')).loadavg()
const busy = busyBefore !== null && busyBefore > 0.25
const loadNote =
  `${busyBefore === null ? '' : `CPU busy in the second before the run: ${(busyBefore * 100).toFixed(0)}%; `}` +
  `1/5-minute load average before: ${loadStart[0].toFixed(2)} / ${loadStart[1].toFixed(2)}, after: ${loadEnd[0].toFixed(2)} / ${loadEnd[1].toFixed(2)} (the run itself adds up to ~2).`
log(loadNote)
if (busy) log('WARNING: the machine was busy before the run started; other processes distort these figures.')

if (write) {
  const out = path.join(ROOT, 'BENCHMARKS.md')
  // Hand-written analysis between these markers survives a re-run.
  let analysis = ''
  if (existsSync(out)) {
    const old = readFileSync(out, 'utf8')
    const a = old.indexOf('<!-- analysis:start -->')
    const z = old.indexOf('<!-- analysis:end -->')
    if (a >= 0 && z > a) analysis = old.slice(a, z + '<!-- analysis:end -->'.length)
  }
  // A partial run replaces the sections and goals of the benchmarks it ran and keeps the
  // others' from the file as it was.
  const partial = Object.keys(runners).some((n) => !only.includes(n))
  if (partial && existsSync(out)) {
    const kept = keptFromEarlierRun(readFileSync(out, 'utf8'), only)
    sections.unshift(...kept.sections)
    sections.sort((a, b) => sectionKey(a) - sectionKey(b))
    goals.unshift(...kept.goals)
    goals.sort((a, b) => sectionKey(`## ${a.bench}`) - sectionKey(`## ${b.bench}`))
  }
  const doc = [
    '# fsgate benchmarks',
    '',
    `Generated by \`npm run bench\` (\`benches/run.mjs\`) on ${new Date().toISOString().slice(0, 10)}${partial ? ` (this run: \`--only=${only.join(',')}\`; the other sections are from the earlier run that wrote them)` : ''}. Figures are medians of repeated runs in one process; ratios are peer time / fsgate time (higher is better for fsgate), except in sections 5 and 11, where they are costs: fsgate time / Node (or git) time (lower is better).`,
    '',
    'Run: `npm run bench` (builds, then runs them all), or `node benches/run.mjs [--only=read,hash,tokens,small,edit,search,pdf,shell,fairness,patch,dialects,index] [--no-write]` against the current build. The token peers js-tiktoken and gpt-tokenizer are devDependencies. Generated inputs are kept in `.bench-data/` (gitignored, about 860 MiB) and reused.',
    '',
    '## Machine',
    '',
    table(
      ['', ''],
      [
        ['CPUs (nproc)', m.nproc],
        ['CPU model', m.cpu],
        ['CPU features', m.flags.join(', ') || '—'],
        ['RAM', `${m.memGiB} GiB`],
        ['OS', m.os],
        ['Node', m.node],
        ['run time', fmtMs(totalMs)],
        ['load', loadNote + (busy ? ' **The machine was busy before the run: figures are distorted.**' : '')],
      ],
    ),
    '',
    '## Goals',
    '',
    table(
      ['benchmark', 'goal', 'measured', 'status'],
      goals.map((g) => [g.bench, g.goal, g.measured, g.met]),
    ),
    '',
    ...sections,
    analysis,
    '',
  ].join('\n')
  writeFileSync(out, doc.replace(/\n{3,}/g, '\n\n'))
  log(`wrote ${path.relative(process.cwd(), out) || out}`)
}

/** The section numbers each benchmark writes (section "11g." is 11). */
function runnerSections(name) {
  return { read: [1], hash: [2], tokens: [3], small: [4], edit: [5], search: [6, 7, 8, 9], pdf: [10], shell: [11], fairness: [14], dialects: [15], patch: [16], index: [17] }[name] ?? []
}

/** The number a section or goal starts with, for ordering and replacing: "## 11g. …" → 11.07. */
function sectionKey(block) {
  const m = /^## (\d+)([a-z]?)\./.exec(block)
  return m ? Number(m[1]) + (m[2] ? (m[2].charCodeAt(0) - 96) / 100 : 0) : 1e9
}

/** The sections and goals of an earlier BENCHMARKS.md that this run did not measure again. */
function keptFromEarlierRun(doc, ran) {
  const replaced = new Set(ran.flatMap(runnerSections))
  const major = (key) => Math.floor(key)
  const analysisAt = doc.indexOf('<!-- analysis:start -->')
  const body = analysisAt >= 0 ? doc.slice(0, analysisAt) : doc
  const blocks = body.split(/^(?=## )/m)
  const sections = blocks.filter((b) => sectionKey(b) < 1e9 && !replaced.has(major(sectionKey(b)))).map((b) => b.trimEnd() + '\n')
  const goalsBlock = blocks.find((b) => b.startsWith('## Goals')) ?? ''
  const goals = goalsBlock
    .split('\n')
    .filter((l) => l.startsWith('| ') && !/^\|\s*benchmark\s*\|/.test(l))
    .map((l) => l.slice(1, -1).split(' | ').map((c) => c.trim()))
    .filter((c) => c.length === 4 && !replaced.has(major(sectionKey(`## ${c[0]}`))))
    .map(([bench, goal, measured, met]) => ({ bench, goal, measured, met }))
  return { sections, goals }
}
