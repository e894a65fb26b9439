// The live index benchmark (issue 20): on a real tree made by installing large npm
// packages, fsgate's content_search and glob_search served from a warm index against the
// rg CLI and fdir; the same searches with `index: 'off'` (the parallel walk); the index
// build (time, memory, CPU, the event loop meanwhile); and the first search after an
// external change. run.mjs calls benchIndex with its section and goal helpers.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'

import { DATA, ROOT } from './data.mjs'
import { findRg, fmtMs, fmtNum, fmtRatio, interleave, median, now, percentile, runRg, table, warmTree } from './lib.mjs'

const TREE = path.join(DATA, 'npm-tree')
/** Bumped when the package list changes, so an old tree is installed again. */
const TREE_VERSION = 1
/** Large packages, pinned; npm adds their dependencies (not pinned: the lock is not kept). */
const PACKAGES = {
  '@angular/core': '19.0.0',
  '@babel/core': '7.26.0',
  '@babel/preset-env': '7.26.0',
  '@mui/material': '6.1.8',
  'aws-sdk': '2.1692.0',
  'core-js': '3.39.0',
  'date-fns': '3.6.0',
  eslint: '9.14.0',
  lodash: '4.17.21',
  'monaco-editor': '0.52.0',
  'pdfjs-dist': '4.8.69',
  prettier: '3.3.3',
  react: '18.3.1',
  'react-dom': '18.3.1',
  rollup: '4.27.4',
  rxjs: '7.8.1',
  three: '0.170.0',
  typescript: '5.6.3',
  webpack: '5.96.1',
}
const MIN_FILES = 25_000
/** Limits high enough that every tool returns every path or match, as the peers do. */
const ALL = { globResults: 10_000_000, searchResults: 10_000_000, searchOutputBytes: 2 ** 40, resultTokens: 2 ** 40, searchPageTokens: 2 ** 40 }
/** A symbol in under 1% of the files, and a word in over 30% of them. */
const QUERIES = [
  { key: 'selective', pattern: 'useSyncExternalStore', share: [0, 0.01], goal: 30 },
  { key: 'broad', pattern: 'function', share: [0.3, 1], goal: 1.5 },
  { key: 'regex', pattern: '\\w+Visitor\\b', share: [0, 1], goal: null },
]
const COLD_GOAL = 1.2
const SCOPED_GOAL = 10
const GLOB_GOAL = 5
const LAG_GOAL_MS = 10
const ROUNDS = 5
const SCOPED_FILES = 20
/** The scoped search times the cost of a call, not of a large read: the folder's files are small. */
const SCOPED_MAX_BYTES = 100_000
const FRESH_RUNS = 15
const BUILD_TIMEOUT_MS = 600_000

/** Runs the index benchmarks; `ctx` is run.mjs's { fsgate, section, goal, goalAtMost, goals, status }. */
export async function benchIndex(ctx) {
  const rg = findRg()
  if (!rg.path) throw new Error(`the index benchmark compares with the rg CLI, which did not run (${rg.why}); install ripgrep`)
  const tree = npmTree(rg)
  const freshDir = path.join(tree.dir, 'fresh-bench')
  rmSync(freshDir, { recursive: true, force: true })
  warmTree(tree.dir)
  const opts = { workspace: tree.dir, preset: 'revka', policy: { actionsPerHour: null }, limits: ALL }
  const build = await benchBuild(ctx, tree, opts)
  const indexed = build.tk
  const off = ctx.fsgate.createToolkit({ ...opts, index: 'off' })
  try {
    await benchQueries(ctx, tree, rg, indexed, off)
    await benchScoped(ctx, tree, rg, indexed, off)
    await benchGlob(ctx, tree, rg, indexed, off)
    await benchFresh(ctx, tree, indexed, freshDir)
    await benchListAndRank(ctx, tree, indexed, off)
  } finally {
    rmSync(freshDir, { recursive: true, force: true })
    await indexed.close()
    await off.close()
  }
}

// ---------------------------------------------------------------------------------------
// The tree: npm packages installed into .bench-data/npm-tree/
// ---------------------------------------------------------------------------------------

/**
 * Installs PACKAGES once (`npm install --ignore-scripts`) into a folder with an empty
 * `.git` and no .gitignore, so that fsgate and rg take it for a repository root, apply
 * no ignore file of the project around .bench-data/ (which ignores node_modules/), and
 * search everything in node_modules but its hidden entries (.bin, .package-lock.json).
 */
function npmTree(rg) {
  const marker = path.join(TREE, '.complete')
  let facts = existsSync(marker) ? JSON.parse(readFileSync(marker, 'utf8')) : null
  let installMs = null
  if (facts?.version !== TREE_VERSION) {
    rmSync(TREE, { recursive: true, force: true })
    mkdirSync(path.join(TREE, '.git'), { recursive: true })
    writeFileSync(path.join(TREE, 'package.json'), JSON.stringify({ name: 'fsgate-bench-npm-tree', private: true, version: '0.0.0', dependencies: PACKAGES }, null, 2) + '\n')
    console.log(`installing ${Object.keys(PACKAGES).length} npm packages into ${path.relative(ROOT, TREE)} (once)…`)
    const t0 = now()
    const r = spawnSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--omit=optional', '--no-package-lock'], { cwd: TREE, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    if (r.status !== 0) throw new Error(`npm install in ${TREE} failed (${r.status}): ${(r.stderr || r.stdout).slice(-800)}`)
    installMs = now() - t0
    const pkgs = readdirSync(path.join(TREE, 'node_modules')).length
    facts = { version: TREE_VERSION, packages: pkgs }
    writeFileSync(marker, JSON.stringify(facts) + '\n')
  }
  const dir = realpathSync(TREE)
  if (existsSync(path.join(dir, '.gitignore'))) throw new Error(`${dir} has a .gitignore: the tree must be searched whole`)
  const files = spawnSync(rg.path, ['--no-config', '--files'], { cwd: dir, encoding: 'utf8', maxBuffer: 2 ** 30 })
  if (files.status !== 0) throw new Error(`rg --files in ${dir} failed: ${files.stderr}`)
  const list = files.stdout.split('\n').filter(Boolean)
  if (list.length < MIN_FILES) throw new Error(`the npm tree holds ${list.length} files for rg, fewer than ${MIN_FILES}`)
  return { dir, files: list.length, packages: facts.packages, installMs }
}


/**
 * Calls on the indexed toolkit that the index did not answer (it walked instead), with
 * the index's state just after: reported, not hidden in the medians.
 */
const fallbacks = []

/** Fails unless a tool call succeeded whole; notes an indexed call the index did not answer. */
function ok(what, r, tk) {
  if (r.isError) throw new Error(`${what} failed: ${r.content[0]?.text?.slice(0, 300)}`)
  if (r.data.truncated) throw new Error(`${what} left results out`)
  const st = tk?.indexStatus()
  if (st && !r.data.fromIndex) fallbacks.push({ what, state: st.state, reason: st.reason ?? '' })
  if (!st && r.data.fromIndex) throw new Error(`${what} came from an index with index: 'off'`)
  return r.data
}

/** Waits (polling, so the event loop runs) until the index is ready again, after a fallback. */
async function ready(tk) {
  const t0 = now()
  for (let st = tk.indexStatus(); st.state !== 'ready'; st = tk.indexStatus()) {
    if (st.state === 'off' && /budget|cannot/.test(st.reason ?? '')) throw new Error(`the index is off: ${st.reason}`)
    if (now() - t0 > BUILD_TIMEOUT_MS) throw new Error('the index did not become ready again')
    // A search starts a build of a dropped index.
    if (st.state === 'off') await tk.createSession().call('glob_search', { pattern: 'package.json' })
    await sleep(50)
  }
}

/** The fallbacks noted since `from`, in words. */
function fallbackNote(from) {
  const xs = fallbacks.slice(from)
  if (!xs.length) return 'Every call on the indexed toolkit was answered from the index (`data.fromIndex`).'
  const why = [...new Set(xs.map((x) => `${x.state}${x.reason ? `: ${x.reason}` : ''}`))].join('; ')
  return `**${xs.length} call(s) on the indexed toolkit were not answered from the index** (they walked; their times are in the medians): index state after them ${why}.`
}

function sameList(what, list, ref, pattern) {
  const a = [...list].sort()
  const b = [...ref].sort()
  if (a.length !== b.length || a.some((x, i) => x !== b[i])) {
    const diff = [...a.filter((x) => !b.includes(x)).slice(0, 3), ...b.filter((x) => !a.includes(x)).slice(0, 3)]
    throw new Error(`${what} found ${a.length} files for ${pattern}, rg ${b.length} (e.g. ${diff.join(', ')})`)
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Samples the event loop (perf_hooks' histogram and a 1 ms interval's lag) until stopped. */
function loopProbe() {
  const h = monitorEventLoopDelay({ resolution: 1 })
  h.enable()
  const lags = []
  let prev = now()
  const timer = setInterval(() => {
    const t = now()
    lags.push(Math.max(0, t - prev - 1))
    prev = t
  }, 1)
  return () => {
    clearInterval(timer)
    h.disable()
    return { hP99: Math.max(0, h.percentile(99) / 1e6 - 1), hMax: Math.max(0, h.max / 1e6 - 1), lagP99: percentile(lags, 99), lagMax: Math.max(...lags), ticks: lags.length }
  }
}

// ---------------------------------------------------------------------------------------
// 17a. The index build
// ---------------------------------------------------------------------------------------
async function benchBuild(ctx, tree, opts) {
  const { fsgate, section, goals, status } = ctx
  const rss0 = process.memoryUsage().rss
  const cpu0 = process.cpuUsage()
  const stop = loopProbe()
  const t0 = now()
  const tk = fsgate.createToolkit({ ...opts, index: 'auto' })
  let peak = rss0
  let st = tk.indexStatus()
  // Polled, not waitIndex: that blocks the event loop whose delay is measured.
  while (st.state === 'building' || st.state === 'idle') {
    if (now() - t0 > BUILD_TIMEOUT_MS) throw new Error(`the index build took over ${BUILD_TIMEOUT_MS / 1000} s`)
    await sleep(20)
    peak = Math.max(peak, process.memoryUsage().rss)
    st = tk.indexStatus()
  }
  const wall = now() - t0
  const cpu = process.cpuUsage(cpu0)
  const loop = stop()
  const rss1 = process.memoryUsage().rss
  peak = Math.max(peak, rss1)
  if (st.state !== 'ready') throw new Error(`the index ended '${st.state}'${st.reason ? `: ${st.reason}` : ''}`)
  if (st.files < tree.files) throw new Error(`the index holds ${st.files} files, rg lists ${tree.files}`)
  const cpuMs = (cpu.user + cpu.system) / 1000
  const MiB = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`
  const rows = [
    ['wall time, createToolkit({index: "auto"}) to state "ready" (polled every 20 ms)', fmtMs(wall)],
    ['indexStatus().buildMs', fmtMs(st.buildMs)],
    ['files indexed (indexStatus().files; rg --files lists ' + fmtNum(tree.files) + ')', fmtNum(st.files)],
    ['index memory (indexStatus().bytes) / budget', `${MiB(st.bytes)} / ${MiB(st.budget)} (${fmtNum(st.bytes / st.files)} bytes per file)`],
    ['process RSS growth: at ready / peak during the build', `${MiB(rss1 - rss0)} / ${MiB(peak - rss0)}`],
    ['process CPU time during the build (user + system) / wall time', `${fmtMs(cpuMs)} / ${fmtMs(wall)} = ${((cpuMs / wall) * 100).toFixed(0)}% of one core`],
    ['event-loop delay during the build: p99 / max (monitorEventLoopDelay)', `${fmtMs(loop.hP99)} / ${fmtMs(loop.hMax)}`],
    ['setInterval(1) lag during the build: p99 / max', `${fmtMs(loop.lagP99)} / ${fmtMs(loop.lagMax)} (${fmtNum(loop.ticks)} ticks)`],
  ]
  section(
    '17a. The live index: its build',
    `Tree: ${fmtNum(tree.files)} files (\`rg --files\`) in ${fmtNum(tree.packages)} top-level folders of node_modules, made by \`npm install --ignore-scripts\` of ${Object.keys(PACKAGES).length} pinned packages (${Object.entries(PACKAGES).map(([n, v]) => `${n}@${v}`).join(', ')}) and their dependencies into .bench-data/npm-tree/${tree.installMs ? ` (installed by this run in ${fmtMs(tree.installMs)})` : ''}; an empty \`.git\` and no .gitignore at its root, so fsgate and rg search all of node_modules but its hidden entries. The page cache is warm (every file read once first). A toolkit with \`index: "auto"\` starts the build at once; the event loop is sampled throughout, and \`indexStatus()\` is polled (not \`fs.waitIndex\`, which blocks the loop).`,
    table(['measure', 'value'], rows),
    ['The build runs on the addon\'s threads; the CPU share is the whole process\'s (the polling and sampling on the JS thread are a small part of it). RSS growth includes the allocator\'s slack, so it exceeds indexStatus().bytes.'],
  )
  const worst = Math.max(loop.hP99, loop.lagP99)
  goals.push({ bench: '17a. event-loop delay p99 during the index build', goal: `< ${LAG_GOAL_MS} ms`, measured: `${fmtMs(loop.hP99)} (setInterval lag p99 ${fmtMs(loop.lagP99)}; build ${fmtMs(wall)})`, met: status(LAG_GOAL_MS / Math.max(worst, 1e-9)) })
  return { tk, wall }
}

// ---------------------------------------------------------------------------------------
// 17b. Whole-tree searches: warm index, and cold without one, against rg
// ---------------------------------------------------------------------------------------
async function benchQueries(ctx, tree, rg, indexed, off) {
  const { section, goal } = ctx
  const si = indexed.createSession()
  const so = off.createSession()
  const root = tree.dir
  const rows = []
  const from = fallbacks.length
  for (const q of QUERIES) {
    await ready(indexed)
    const search = (s, mode, idx) => async () => ok(`content_search ${mode} (${idx ? 'index' : 'off'})`, await s.call('content_search', { pattern: q.pattern, output_mode: mode, max_results: ALL.searchResults }), idx ? indexed : off)
    const res = await interleave(
      {
        idxFiles: { fn: search(si, 'files_with_matches', true), perRound: q.key === 'selective' ? 3 : 1 },
        idxContent: { fn: search(si, 'content', true), perRound: q.key === 'selective' ? 3 : 1 },
        offFiles: { fn: search(so, 'files_with_matches', false) },
        offContent: { fn: search(so, 'content', false) },
        rgFiles: { fn: () => runRg(rg, ['-l', '-e', q.pattern], root) },
        rgContent: { fn: () => runRg(rg, ['-n', '--max-columns', '500', '--max-columns-preview', '-e', q.pattern], root) },
      },
      { rounds: ROUNDS },
    )
    console.log(`(17b: ${q.key} query measured)`)
    const rgFiles = res.rgFiles.value
    sameList('content_search files_with_matches (index)', res.idxFiles.value.files, rgFiles, q.pattern)
    sameList('content_search files_with_matches (off)', res.offFiles.value.files, rgFiles, q.pattern)
    const lines = res.rgContent.value.length
    for (const k of ['idxContent', 'offContent']) {
      if (res[k].value.numMatches !== lines) throw new Error(`content_search content (${k}) found ${res[k].value.numMatches} lines for ${q.pattern}, rg -n ${lines}`)
    }
    const share = rgFiles.length / tree.files
    if (share < q.share[0] || share >= q.share[1]) throw new Error(`${q.pattern} matches ${rgFiles.length} of ${tree.files} files (${(share * 100).toFixed(2)}%), outside the ${q.key} range`)
    const read = res.idxFiles.value.filesRead
    const pct = `${(share * 100).toFixed(share < 0.01 ? 2 : 0)}%`
    const r = (peer, x) => fmtRatio(peer.median / x.median)
    rows.push(
      [`\`${q.pattern}\` (${q.key})`, `${fmtNum(rgFiles.length)} (${pct})`, fmtNum(lines), fmtNum(read), fmtMs(res.idxFiles.median), fmtMs(res.offFiles.median), fmtMs(res.rgFiles.median), r(res.rgFiles, res.idxFiles), r(res.rgFiles, res.offFiles)],
      ['… content mode', '', '', fmtNum(res.idxContent.value.filesRead), fmtMs(res.idxContent.median), fmtMs(res.offContent.median), fmtMs(res.rgContent.median), r(res.rgContent, res.idxContent), r(res.rgContent, res.offContent)],
    )
    if (q.goal) {
      for (const [mode, f, p] of [['files_with_matches vs rg -l', res.idxFiles, res.rgFiles], ['content vs rg -n', res.idxContent, res.rgContent]]) {
        goal(`17b. warm index, ${q.key} query (${fmtNum(rgFiles.length)} files), ${mode}`, q.goal, `${fmtRatio(p.median / f.median)} (${fmtMs(f.median)} vs ${fmtMs(p.median)})`, p.median / f.median)
      }
      for (const [mode, f, p] of [['files_with_matches vs rg -l', res.offFiles, res.rgFiles], ['content vs rg -n', res.offContent, res.rgContent]]) {
        goal(`17b. cold (index off), whole tree, ${q.key} query, ${mode}`, COLD_GOAL, `${fmtRatio(p.median / f.median)} (${fmtMs(f.median)} vs ${fmtMs(p.median)})`, p.median / f.median)
      }
    }
  }
  section(
    '17b. The live index: whole-tree searches against rg',
    `The tree of 17a (${fmtNum(tree.files)} files), page cache warm. fsgate \`session.call("content_search")\` (preset revka, limits high enough to return every match) on the toolkit of 17a, its index warm (every call is checked to come from the index), and on a toolkit with \`index: "off"\` (the walk, every call checked not to); \`rg -l\` / \`rg -n --max-columns 500 --max-columns-preview\` (${rg.version}) spawned in the tree. ${ROUNDS} interleaved rounds after one untimed run each (indexed calls of the selective query 3 a round, all others 1); medians. Every result is checked against rg: the same files, the same number of matching lines.`,
    table(['query', 'files matched', 'lines', 'files the index read', 'fsgate, index', 'fsgate, index off', 'rg', 'rg / index', 'rg / off'], rows),
    ['"files the index read" is `data.filesRead`: the candidates the index named for the pattern, all of which the matcher then reads; the regex row has no goal and shows how a pattern with short literals narrows.', fallbackNote(from)],
  )
}

// ---------------------------------------------------------------------------------------
// 17c. One small folder
// ---------------------------------------------------------------------------------------

/** The first folder, in path order, holding exactly SCOPED_FILES files of SCOPED_MAX_BYTES in all, and no folder. */
function smallFolder(root) {
  const walk = (rel) => {
    const ents = readdirSync(path.join(root, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))
    const dirs = ents.filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    const files = ents.filter((e) => e.isFile() && !e.name.startsWith('.'))
    const small = () => files.reduce((a, e) => a + statSync(path.join(root, rel, e.name)).size, 0) <= SCOPED_MAX_BYTES
    if (!dirs.length && files.length === SCOPED_FILES && ents.length === SCOPED_FILES && small()) return rel
    for (const d of dirs) {
      const hit = walk(rel ? `${rel}/${d.name}` : d.name)
      if (hit) return hit
    }
    return null
  }
  const hit = walk('')
  if (!hit) throw new Error(`no folder of ${SCOPED_FILES} files in ${root}`)
  return hit
}

async function benchScoped(ctx, tree, rg, indexed, off) {
  const { section, goal } = ctx
  const folder = smallFolder(tree.dir)
  const pattern = 'function'
  const from = fallbacks.length
  await ready(indexed)
  const call = (s, tk) => async () => ok('content_search', await s.call('content_search', { pattern, path: folder, output_mode: 'content' }), tk).numMatches
  const res = await interleave(
    {
      off: { fn: call(off.createSession(), off), perRound: 40, warmup: 10 },
      idx: { fn: call(indexed.createSession(), indexed), perRound: 40, warmup: 10 },
      rg: { fn: async () => (await runRg(rg, ['-n', '--max-columns', '500', '--max-columns-preview', '-e', pattern, folder], tree.dir)).length, perRound: 10, warmup: 3 },
    },
    { rounds: ROUNDS },
  )
  if (res.off.value !== res.rg.value || res.idx.value !== res.rg.value) throw new Error(`in ${folder}: fsgate found ${res.off.value} (off) / ${res.idx.value} (index) lines, rg ${res.rg.value}`)
  const line = (label, x) => [label, fmtNum(x.times.length), fmtMs(x.median), fmtMs(percentile(x.times, 99)), fmtRatio(res.rg.median / x.median)]
  section(
    '17c. The live index: one 20-file folder',
    `Folder \`${folder}\` (the first, in path order, of exactly ${SCOPED_FILES} files, ${fmtNum(SCOPED_MAX_BYTES / 1000)} KB at most in all, and no subfolder), pattern \`function\` (${fmtNum(res.rg.value)} matching lines), content mode, calls one after another; ${ROUNDS} interleaved rounds of 40 fsgate calls per toolkit and 10 rg spawns, after untimed warm-up calls. Each result is checked against rg's line count.`,
    table(['method', 'calls', 'median', 'p99', 'rg / method'], [
      line('fsgate `content_search` with `path`, index off (the walk)', res.off),
      line('fsgate `content_search` with `path`, index warm', res.idx),
      line(`\`rg -n -e function <folder>\` (${rg.version}, spawned)`, res.rg),
    ]),
    [fallbackNote(from)],
  )
  goal('17c. cold (index off), one 20-file folder vs spawning rg', SCOPED_GOAL, `${fmtRatio(res.rg.median / res.off.median)} (${fmtMs(res.off.median)} vs ${fmtMs(res.rg.median)})`, res.rg.median / res.off.median)
}

// ---------------------------------------------------------------------------------------
// 17d. glob **/* from the snapshot
// ---------------------------------------------------------------------------------------
async function benchGlob(ctx, tree, rg, indexed, off) {
  const { section, goal } = ctx
  const { fdir } = await import('fdir')
  const fdirVersion = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'fdir', 'package.json'), 'utf8')).version
  const root = tree.dir
  const from = fallbacks.length
  await ready(indexed)
  const glob = (s, tk) => async () => ok('glob_search', await s.call('glob_search', { pattern: '**/*' }), tk).files
  const res = await interleave(
    {
      idx: { fn: glob(indexed.createSession(), indexed), perRound: 3 },
      off: { fn: glob(off.createSession(), off) },
      fdir: { fn: () => new fdir().withRelativePaths().crawl(root).withPromise() },
      rg: { fn: () => runRg(rg, ['--files'], root) },
    },
    { rounds: ROUNDS },
  )
  sameList('glob_search (index)', res.idx.value, res.rg.value, '**/*')
  sameList('glob_search (off)', res.off.value, res.rg.value, '**/*')
  const line = (label, x) => [label, fmtNum(x.value.length), fmtMs(x.median), fmtRatio(x.median / res.idx.median)]
  section(
    '17d. The live index: glob `**/*` from the snapshot',
    `The tree of 17a. fsgate \`glob_search {pattern: "**/*"}\` (preset revka, every path returned, sorted) on the indexed toolkit (checked to come from the snapshot) and with \`index: "off"\`; fdir ${fdirVersion} \`.withRelativePaths().crawl()\` with no filter and no ignore rules; \`rg --files\` spawned. ${ROUNDS} interleaved rounds after one untimed run each; medians. fsgate's list equals rg's.`,
    table(['method', 'paths', 'median', 'time / index'], [
      line('fsgate `glob_search`, from the index\'s snapshot', res.idx),
      line('fsgate `glob_search`, index off (the walk)', res.off),
      line(`fdir ${fdirVersion}, no filter (also lists hidden entries: .bin links, .package-lock.json)`, res.fdir),
      line(`\`rg --files\` (${rg.version}, spawned)`, res.rg),
    ]),
    [fallbackNote(from)],
  )
  goal('17d. glob_search **/* from the snapshot vs fdir (no ignore rules)', GLOB_GOAL, `${fmtRatio(res.fdir.median / res.idx.median)} (${fmtMs(res.idx.median)} vs ${fmtMs(res.fdir.median)})`, res.fdir.median / res.idx.median)
}

// ---------------------------------------------------------------------------------------
// 17f. list_directory and the ranker from the snapshot
// ---------------------------------------------------------------------------------------
async function benchListAndRank(ctx, tree, indexed, off) {
  const { section } = ctx
  const from = fallbacks.length
  await ready(indexed)
  const list = (depth) => (s, tk) => async () => ok('list_directory', await s.call('list_directory', { depth, limit: 1000 }), tk).total
  const rank = (s, tk) => async () => ok('semantic_code_search', await s.call('semantic_code_search', { query: 'parse the config file', backend: 'literal' }), tk).filesConsidered
  const rows = []
  for (const [label, call] of [['list_directory, depth 4 (a page of 1,000)', list(4)], ['list_directory, depth 64 (a page of 1,000)', list(64)], ['semantic_code_search (built-in ranker, its term index warm)', rank]]) {
    const [a, b] = [indexed.createSession(), off.createSession()]
    await call(a, indexed)()
    await call(b, off)()
    const res = await interleave({ idx: { fn: call(a, indexed) }, off: { fn: call(b, off) } }, { rounds: ROUNDS })
    if (res.idx.value !== res.off.value) throw new Error(`${label}: ${res.idx.value} from the index, ${res.off.value} from the walk`)
    rows.push([label, fmtNum(res.idx.value), fmtMs(res.idx.median), fmtMs(res.off.median), fmtRatio(res.off.median / res.idx.median)])
  }
  section(
    '17f. The live index: list_directory and the ranker from the snapshot',
    `The tree of 17a, the workspace root. \`list_directory\` of depth 4 and 64 (a listing 3 levels deep or more is taken from the snapshot; a shallower one reads a few folders, which costs about what the snapshot costs) and \`semantic_code_search\` with the built-in ranker (its per-toolkit term index warmed by an untimed call first, so the time is the files offered plus the scoring), on the indexed toolkit and with \`index: "off"\`. The entry totals and the files offered are checked equal. ${ROUNDS} interleaved rounds; medians.`,
    table(['call', 'entries / files offered', 'index', 'index off (walk)', 'walk / index'], rows),
    [fallbackNote(from)],
  )
}

// ---------------------------------------------------------------------------------------
// 17e. The first search after an external change
// ---------------------------------------------------------------------------------------
async function benchFresh(ctx, tree, indexed, freshDir) {
  const { section } = ctx
  mkdirSync(freshDir, { recursive: true })
  const s = indexed.createSession()
  const from = fallbacks.length
  await ready(indexed)
  const events0 = indexed.indexStatus().events
  const runs = { node: [], child: [] }
  let read = 0
  for (let i = 0; i < FRESH_RUNS; i++) {
    for (const how of ['node', 'child']) {
      const symbol = `freshSymbol${how}${i}x${process.pid}`
      const rel = `fresh-bench/${how}-${i}.js`
      const text = `export const ${symbol} = ${i}\n`
      if (how === 'node') writeFileSync(path.join(tree.dir, rel), text)
      else {
        const r = spawnSync('sh', ['-c', 'printf "%s" "$1" > "$2"', 'sh', text, rel], { cwd: tree.dir })
        if (r.status !== 0) throw new Error(`the child process could not write ${rel}`)
      }
      const t0 = now()
      const d = ok('content_search', await s.call('content_search', { pattern: symbol, output_mode: 'files_with_matches' }), indexed)
      runs[how].push(now() - t0)
      if (d.files.length !== 1 || d.files[0] !== rel) throw new Error(`the search right after writing ${rel} found ${JSON.stringify(d.files)}`)
      read = Math.max(read, d.filesRead)
    }
  }
  const events = indexed.indexStatus().events - events0
  const line = (label, xs) => [label, fmtNum(xs.length), fmtMs(median(xs)), fmtMs(percentile(xs, 90)), fmtMs(Math.max(...xs))]
  section(
    '17e. The live index: the first search after an external change',
    `On the indexed toolkit of 17a: a file holding a new symbol is written into the tree (by this process with \`fs.writeFileSync\`, or by a child \`sh -c 'printf … > file'\`, which has exited before the search starts), then at once, with no sleep, \`content_search\` (files_with_matches) for the symbol is timed; it must find exactly that file, from the index. ${FRESH_RUNS} runs of each, alternated.`,
    table(['writer', 'runs', 'median', 'p90', 'max'], [line('this process, fs.writeFileSync', runs.node), line('a child process (sh), exited', runs.child)]),
    [`The watcher reported ${fmtNum(events)} file-system events over these runs; the most files one of these searches read was ${fmtNum(read)}.`, fallbackNote(from)],
  )
}
