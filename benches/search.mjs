// The search benchmarks: glob_search and content_search (ripgrep's crates in process)
// against the JS globbers, the rg CLI and a pure-JS search, side by side in one run; then
// the per-call cost of a small search, and the event loop while 16 searches run at once.
// run.mjs calls benchSearch with its section and goal helpers, which print the tables
// and collect the goals. The revka toolkits here drop that preset's budget of 20 calls an
// hour (actionsPerHour: null): a benchmark makes thousands.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'

import { DATA, ROOT } from './data.mjs'
import { findRg, fmtMs, fmtNum, fmtRatio, interleave, now, percentile, rng, runRg, table, warmTree } from './lib.mjs'

const SEARCH = path.join(DATA, 'search')
/** Limits high enough that every tool returns every path or match, as the peers do. */
const ALL = { globResults: 10_000_000, searchResults: 10_000_000, searchOutputBytes: 2 ** 40 }
const GLOB_ROUNDS = 5
const GREP_ROUNDS = 5
const SCOPED_ROUNDS = 5
const SCOPED_FSGATE_PER_ROUND = 60
const SCOPED_RG_PER_ROUND = 12
const LOAD_SEARCHES = 16
const IDLE_SECONDS = 2
const LOAD_SECONDS = 6
const LAG_GOAL_MS = 10
const READ_GOAL_MS = 10

/**
 * Runs the search benchmarks. `ctx` carries the addon's public API (`fsgate`) and
 * run.mjs's `section`, `goal`, `goalAtMost`, and `goals`/`status` for goals that are not
 * ratios.
 */
export async function benchSearch(ctx) {
  const rg = findRg()
  if (!rg.path) {
    console.log(`\nWARNING: the rg CLI was not found (${rg.why}); every rg row and goal is skipped. Install ripgrep (apt-get install ripgrep) to compare.`)
  }
  const t0 = now()
  const modules = nodeModulesCopy()
  const tree = searchTree()
  const genMs = now() - t0
  const inputs = { modules, tree }
  warmTree(tree.dir)
  await benchGlob(ctx, inputs, rg, genMs)
  await benchGrep(ctx, tree, rg)
  await benchScoped(ctx, tree, rg)
  await benchLoad(ctx, tree)
}

// ---------------------------------------------------------------------------------------
// Inputs, generated once into .bench-data/search/
// ---------------------------------------------------------------------------------------

/**
 * Each input folder is made the root of a repository (an empty `.git` folder), as an
 * agent's checkout is, so that no tool applies the .gitignore of the project around
 * .bench-data/ (which ignores `dist/`, `*.node`, …) inside it. The file is rewritten on
 * every run.
 */
function writeIgnoreFile(dir, own) {
  mkdirSync(path.join(dir, '.git'), { recursive: true })
  const text = [...own, ''].join('\n')
  const file = path.join(dir, '.gitignore')
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) writeFileSync(file, text)
}

/** Counts regular files, symbolic links and bytes under `dir`, and files in hidden places. */
function census(dir) {
  let files = 0
  let links = 0
  let bytes = 0
  let hidden = 0
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(dir, path.join(e.parentPath ?? e.path, e.name))
    if (e.isSymbolicLink()) links++
    else if (e.isFile()) {
      files++
      bytes += statSync(path.join(dir, rel)).size
      if (rel.split(path.sep).some((p) => p.startsWith('.'))) hidden++
    }
  }
  return { files, links, bytes, hidden }
}

/** A copy of the project's node_modules: real third-party code, made once. */
function nodeModulesCopy() {
  const dir = path.join(SEARCH, 'node_modules-copy')
  const marker = path.join(SEARCH, 'node_modules-copy.json')
  let facts
  if (existsSync(marker)) facts = { ...JSON.parse(readFileSync(marker, 'utf8')), generated: false }
  else {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(SEARCH, { recursive: true })
    cpSync(path.join(ROOT, 'node_modules'), dir, { recursive: true, verbatimSymlinks: true })
    facts = census(dir)
    writeFileSync(marker, JSON.stringify(facts) + '\n')
    facts.generated = true
  }
  writeIgnoreFile(dir, ['# source maps are not searched', '*.map'])
  return { ...facts, dir: realpathSync(dir), label: 'node_modules copy' }
}

const TREE_VERSION = 1
const PKGS = 30
const AS = 5
const BS = 9
const PER_LEAF = 20
const DIST_PER_PKG = 90
const LOGS_PER_PKG = 10
/** A folder of the tree with PER_LEAF files: the scoped search's target. */
const SCOPED = 'pkg07/src/a2/b3'
/** The rare literal of the content search, in a handful of files. */
const RARE = 'deprecatedFallbackHandler'

const NOUNS = (
  'token stream buffer node scope symbol module config cache source target query index entry ' +
  'parser lexer chunk frame graph edge vertex record field schema table column cursor batch ' +
  'session request response handler worker queue task event signal channel packet header'
).split(' ')
const VERBS = 'parse build resolve emit read write visit walk load save merge split find create update apply'.split(' ')
const PROSE = (
  'the of and to in is that for it as with on be by at this from are or an which not have but ' +
  'function return value result error path file line offset limit call each when only returns ' +
  'a given new its first last every one all may must should cannot'
).split(' ')

const cap = (s) => s[0].toUpperCase() + s.slice(1)
const pick = (r, xs) => xs[Math.floor(r() * xs.length)]
const sentence = (r, n) => {
  const w = Array.from({ length: n }, () => pick(r, PROSE))
  return `${cap(w.join(' '))}.`
}

/** One source-like file of kind `ext`; `visitor` adds a visitor class, `rare` the rare word. */
function sourceText(r, ext, { visitor, rare }) {
  const L = []
  const noun = () => pick(r, NOUNS)
  const blocks = 3 + Math.floor(r() * 5)
  if (ext === 'ts' || ext === 'js') {
    const ts = ext === 'ts'
    L.push(`import { ${cap(noun())}, ${cap(noun())} } from '../${noun()}/${noun()}.js'`)
    if (ts) L.push(`import type { ${cap(noun())}Options } from './types.js'`)
    L.push('')
    for (let b = 0; b < blocks; b++) {
      const k = r()
      const n = noun()
      const T = cap(noun())
      if (k < 0.55) {
        L.push(`/** ${sentence(r, 8 + Math.floor(r() * 8))} */`)
        L.push(`export function ${pick(r, VERBS)}${cap(n)}${b}(${n}${ts ? `: ${T}` : ''}, options${ts ? `: ${T}Options` : ''} = {})${ts ? `: ${T} | undefined` : ''} {`)
        L.push(`  const ${noun()}Value = ${n}.${noun()}`)
        L.push(`  if (${n} === undefined) return undefined`)
        L.push(`  for (const item of ${n}.${noun()}s) {`)
        L.push(`    options.on${cap(noun())}?.(item, ${Math.floor(r() * 100)})`)
        L.push('  }')
        if (rare && b === 0) L.push(`  const handler = options.${RARE} ?? ${n}`)
        L.push(`  return ${n}`)
        L.push('}')
      } else if (k < 0.8 && ts) {
        L.push(`export interface ${T}Options {`)
        for (let f = 0; f < 2 + Math.floor(r() * 4); f++) L.push(`  ${noun()}${f}?: ${pick(r, ['string', 'number', 'boolean', `${cap(noun())}[]`])}`)
        L.push('}')
      } else {
        L.push(`export const ${n.toUpperCase()}_${noun().toUpperCase()}_${b} = ${Math.floor(r() * 10000)}`)
      }
      L.push('')
    }
    if (visitor) {
      const V = cap(noun())
      L.push(`export class ${V}Visitor extends BaseVisitor {`)
      L.push(`  visit${cap(noun())}(node${ts ? `: ${cap(noun())}Node` : ''}) {`)
      L.push(`    this.${noun()}s.push(node)`)
      L.push('  }')
      L.push('}')
    }
  } else if (ext === 'rs') {
    L.push(`use crate::${noun()}::{${cap(noun())}, ${cap(noun())}};`)
    L.push('')
    for (let b = 0; b < blocks; b++) {
      const n = noun()
      const T = cap(noun())
      L.push(`/// ${sentence(r, 8 + Math.floor(r() * 8))}`)
      if (r() < 0.6) {
        L.push(`pub fn ${pick(r, VERBS)}_${n}_${b}(${n}: &${T}) -> Result<${T}> {`)
        L.push(`    let ${noun()} = ${n}.${noun()}()?;`)
        if (rare && b === 0) L.push(`    let handler = ${n}.${RARE}.clone();`)
        L.push(`    Ok(${n}.clone())`)
        L.push('}')
      } else {
        L.push(`pub struct ${T}${b} {`)
        for (let f = 0; f < 2 + Math.floor(r() * 4); f++) L.push(`    pub ${noun()}_${f}: ${pick(r, ['usize', 'String', 'bool', `Vec<${cap(noun())}>`])},`)
        L.push('}')
      }
      L.push('')
    }
    if (visitor) {
      const V = cap(noun())
      L.push(`pub struct ${V}Visitor;`)
      L.push(`impl Visit for ${V}Visitor {`)
      L.push(`    fn visit_${noun()}(&mut self, node: &${cap(noun())}) {}`)
      L.push('}')
    }
  } else if (ext === 'md') {
    L.push(`# ${cap(noun())} ${noun()}`)
    L.push('')
    for (let b = 0; b < blocks; b++) {
      L.push(Array.from({ length: 2 + Math.floor(r() * 3) }, () => sentence(r, 10 + Math.floor(r() * 10))).join(' '))
      L.push('')
      if (r() < 0.3) L.push('```ts', `${pick(r, VERBS)}${cap(noun())}(${noun()})`, '```', '')
    }
    if (rare) L.push(`The \`${RARE}\` option is kept for the old API.`, '')
  } else {
    const deps = Array.from({ length: 2 + Math.floor(r() * 5) }, (_, i) => `    "@scope/${noun()}-${noun()}${i}": "^${Math.floor(r() * 9)}.${Math.floor(r() * 20)}.0"`)
    L.push('{', `  "name": "@scope/${noun()}-${noun()}",`, `  "version": "1.${Math.floor(r() * 30)}.0",`)
    if (rare) L.push(`  "${RARE}": false,`)
    L.push('  "dependencies": {', deps.join(',\n'), '  }', '}')
  }
  return L.join('\n') + '\n'
}

/**
 * A tree of 30,000 files, seeded: 30 packages of src/aX/bY leaf folders of 20 files each
 * (.ts, .js, .rs, .md, .json), plus a dist/ folder per package and .log files, which the
 * root .gitignore leaves out (10% of the files).
 */
function searchTree() {
  const dir = path.join(SEARCH, 'tree')
  const marker = path.join(dir, '.complete')
  let facts
  if (existsSync(marker) && JSON.parse(readFileSync(marker, 'utf8')).version === TREE_VERSION) {
    facts = { ...JSON.parse(readFileSync(marker, 'utf8')), generated: false }
  } else {
    rmSync(dir, { recursive: true, force: true })
    let id = 0
    let bytes = 0
    let ignored = 0
    const put = (rel, text) => {
      writeFileSync(path.join(dir, rel), text)
      bytes += Buffer.byteLength(text)
    }
    for (let p = 0; p < PKGS; p++) {
      const pkg = `pkg${String(p).padStart(2, '0')}`
      const leaves = []
      for (let a = 0; a < AS; a++) for (let b = 0; b < BS; b++) leaves.push(`${pkg}/src/a${a}/b${b}`)
      for (const leaf of leaves) {
        mkdirSync(path.join(dir, leaf), { recursive: true })
        for (let k = 0; k < PER_LEAF; k++) {
          const r = rng(++id)
          const x = r()
          const ext = x < 0.35 ? 'ts' : x < 0.6 ? 'js' : x < 0.75 ? 'rs' : x < 0.9 ? 'md' : 'json'
          const name = `${pick(r, NOUNS)}${cap(pick(r, NOUNS))}${k}.${ext}`
          put(`${leaf}/${name}`, sourceText(r, ext, { visitor: ext !== 'md' && ext !== 'json' && r() < 0.04, rare: id % 4999 === 1234 }))
        }
      }
      // Ignored: dist/ (compiled-looking output, with the same words) and .log files.
      for (let k = 0; k < DIST_PER_PKG; k++) {
        const r = rng(1_000_000 + ++id)
        const flavour = ['esm', 'cjs', 'types'][k % 3]
        const sub = `${pkg}/dist/${flavour}/m${Math.floor(k / 3) % 6}`
        mkdirSync(path.join(dir, sub), { recursive: true })
        put(`${sub}/${pick(r, NOUNS)}${k}.${flavour === 'types' ? 'd.ts' : 'js'}`, sourceText(r, flavour === 'types' ? 'ts' : 'js', { visitor: r() < 0.04, rare: k === 45 }))
        ignored++
      }
      for (let k = 0; k < LOGS_PER_PKG; k++) {
        const r = rng(2_000_000 + ++id)
        const log = Array.from({ length: 20 }, (_, i) => `[2026-01-01T00:00:${String(i).padStart(2, '0')}Z] INFO ${pick(r, VERBS)} function ${pick(r, NOUNS)}Visitor took ${Math.floor(r() * 90)}ms`)
        put(`${leaves[k * 4]}/debug-${k}.log`, log.join('\n') + '\n')
        ignored++
      }
    }
    writeIgnoreFile(dir, [])
    facts = { version: TREE_VERSION, files: id, ignored, bytes }
    writeFileSync(marker, JSON.stringify(facts) + '\n')
    facts.generated = true
  }
  writeIgnoreFile(dir, ['# build output and logs', 'dist/', '*.log', '.complete'])
  return { ...facts, dir: realpathSync(dir), label: '30,000-file tree' }
}

/** Fails unless a tool call succeeded. */
function ok(what, r) {
  if (r.isError) throw new Error(`${what} failed: ${r.content[0]?.text?.slice(0, 300)}`)
  return r
}

function notMeasured(ctx, bench, goalText, why) {
  ctx.goals.push({ bench, goal: goalText, measured: '—', met: `not measured (${why})` })
}

// ---------------------------------------------------------------------------------------
// 6. Listing files: glob `**/*`
// ---------------------------------------------------------------------------------------
async function benchGlob(ctx, inputs, rg, genMs) {
  const { fsgate, section, goal } = ctx
  const { callNative, completer } = await import(path.join(ROOT, 'dist', 'native.js'))
  const { globby } = await import('globby')
  const { default: fg } = await import('fast-glob')
  const { glob: tinyglob } = await import('tinyglobby')
  const { fdir } = await import('fdir')
  const version = (name) => JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version

  // Every candidate returns the list of paths; the figure is how many.
  const make = (root, off) => {
    const revka = fsgate.createToolkit({ workspace: root, preset: 'revka', policy: { actionsPerHour: null }, limits: ALL }).createSession()
    const claude = fsgate.createToolkit({ workspace: root, preset: 'claude-code', limits: ALL }).createSession()
    const walk = { includeHidden: off, includeIgnored: off }
    const input = off ? { pattern: '**/*', include_hidden: true, include_ignored: true } : { pattern: '**/*' }
    const tk = fsgate.createToolkit({ workspace: root, preset: 'revka', policy: { actionsPerHour: null }, limits: ALL })
    const c = {
      fsgate: async () => {
        const r = ok('glob_search', await revka.call('glob_search', input))
        if (r.data.files.length !== r.data.numFiles || r.data.truncated) throw new Error('glob_search left paths out')
        return r.data.files.length
      },
      native: async () => {
        const r = await callNative((id) => tk.fs.glob(completer, id, { path: root, displayRoot: root, pattern: '**/*', walk, limit: ALL.globResults }))
        return r.paths === '' ? 0 : r.paths.split('\0').length
      },
    }
    if (!off) {
      c.claude = async () => ok('Glob', await claude.call('Glob', input)).data.files.length
      c.globby = async () => (await globby('**/*', { cwd: root, gitignore: true })).length
      c.fg = async () => (await fg('**/*', { cwd: root })).length
      c.tiny = async () => (await tinyglob(['**/*'], { cwd: root })).length
      c.fdir = async () => (await new fdir().withRelativePaths().glob('**/*').crawl(root).withPromise()).length
      if (rg.path) c.rg = async () => (await runRg(rg, ['--files', '--no-require-git'], root)).length
    } else {
      c.fdir = async () => (await new fdir().withRelativePaths().crawl(root).withPromise()).length
      if (rg.path) c.rg = async () => (await runRg(rg, ['--files', '--no-require-git', '--no-ignore', '--hidden', '--glob', '!.git'], root)).length
    }
    return c
  }
  const leak = await parentRules(fsgate, rg, globby)
  const results = {}
  for (const off of [false, true]) {
    for (const [key, input] of Object.entries(inputs)) {
      const res = await interleave(
        Object.fromEntries(Object.entries(make(input.dir, off)).map(([k, fn]) => [k, { fn, perRound: k === 'globby' ? 1 : 2 }])),
        { rounds: GLOB_ROUNDS },
      )
      if (res.native.value !== res.fsgate.value) throw new Error(`glob_search listed ${res.fsgate.value} files, the native call ${res.native.value}`)
      if (res.rg && res.rg.value !== res.fsgate.value) console.log(`note: ${input.label}: rg --files listed ${res.rg.value} files, fsgate ${res.fsgate.value}`)
      results[`${key}:${off}`] = res
    }
  }

  const cols = (key, off, name) => {
    const res = results[`${key}:${off}`]
    const x = res[name]
    if (!x) return ['—', '—', '—']
    const base = res.fsgate.median
    return [fmtNum(x.value), `${fmtMs(x.median)}`, name === 'fsgate' ? '1.0×' : name === 'native' ? `${((x.median / base) * 100).toFixed(0)}% of the call` : name === 'claude' ? `${(x.median / base).toFixed(2)}× the revka call` : fmtRatio(x.median / base)]
  }
  const row = (label, rules, name, off) => [label, rules, ...cols('modules', off, name), ...cols('tree', off, name)]
  const { modules, tree } = inputs
  const rgLabel = rg.path ? rg.version : 'rg not installed: row skipped'
  const head = ['method', 'ignore rules honoured', `files (${modules.label})`, 'median', 'fsgate speed-up', `files (${tree.label})`, 'median', 'fsgate speed-up']
  const on = [
    row('fsgate `session.call("glob_search", {pattern: "**/*"})`, preset revka (sorted by path)', '.gitignore, .ignore, hidden', 'fsgate', false),
    row('(breakdown) native `Workspace.glob` alone, no facade', 'same', 'native', false),
    row('fsgate `session.call("Glob")`, preset claude-code (newest first: one stat per file)', 'same', 'claude', false),
    row(`globby ${version('globby')} \`globby("**/*", {gitignore: true})\``, '.gitignore (nested too), dotfiles', 'globby', false),
    row(`fast-glob ${version('fast-glob')} \`fg("**/*")\` (async)`, '**none** (dotfiles only)', 'fg', false),
    row(`tinyglobby ${version('tinyglobby')} \`glob(["**/*"])\``, '**none** (dotfiles only)', 'tiny', false),
    row(`fdir ${version('fdir')} \`.glob("**/*").crawl()\` (picomatch filter)`, '**none** (dotfiles only)', 'fdir', false),
    row(`\`rg --files --no-require-git\` (${rgLabel}, spawned; output split into lines)`, '.gitignore, .ignore, hidden', 'rg', false),
  ]
  const offRows = [
    row('fsgate `session.call("glob_search", {pattern: "**/*", include_ignored: true, include_hidden: true})`', 'none (only .git skipped)', 'fsgate', true),
    row('(breakdown) native `Workspace.glob` alone, no facade', 'same', 'native', true),
    row(`fdir ${version('fdir')} \`.crawl()\`, no filter`, 'none', 'fdir', true),
    row(`\`rg --files --no-ignore --hidden --glob '!.git'\` (${rgLabel}, spawned)`, 'none (only .git skipped)', 'rg', true),
  ]
  const inputText =
    `Inputs: (1) a copy of the project's node_modules (${fmtNum(modules.files)} files, ${fmtNum(modules.links)} symbolic links, ${(modules.bytes / 2 ** 20).toFixed(0)} MiB, ${fmtNum(modules.hidden)} files in hidden places; its root .gitignore ignores \`*.map\`); ` +
    `(2) a generated tree of ${fmtNum(tree.files)} files (${(tree.bytes / 2 ** 20).toFixed(1)} MiB, seeded: ${PKGS} packages × ${AS * BS} folders of ${PER_LEAF} .ts/.js/.rs/.md/.json files 4 levels down, plus ${fmtNum(tree.ignored)} files in dist/ folders and *.log files that its root .gitignore leaves out)` +
    `${modules.generated || tree.generated ? `, generated in ${fmtMs(genMs)} by this run` : ''}. Both live in .bench-data/search/. ` +
    'Each input has an empty `.git` folder at its root, so every tool takes it for a repository root and stops looking for .gitignore files there (the note below checks that). ' +
    `The page cache and the dentry cache are **warm**: each candidate runs once untimed, then all run interleaved in ${GLOB_ROUNDS} rounds (each twice a round, globby once); the figure is the median. ` +
    'fsgate runs with `limits: { globResults: 10,000,000 }` so that it returns every path, as the peers do (by default it returns 1,000 and counts the rest); its time includes the schema, policy and result shaping a model\'s call pays. Speed-up = peer time / fsgate glob_search time.'
  section('6a. Listing every file: glob `**/*`, ignore rules on', inputText, table(head, on), [
    `The counts differ by what each tool leaves out. fsgate, rg and globby honour the .gitignore files at every level (fsgate and rg also .ignore and .rgignore files) and skip hidden files (names starting with a dot: node_modules/.bin, .package-lock.json, .vite, the tree's .gitignore); fast-glob, tinyglobby and fdir read no ignore file, so they also list the tree's ${fmtNum(tree.ignored)} dist/ and .log files and the copy's \`*.map\` files, and skip dotfiles only because \`**/*\` does not match them. ${sameCounts(inputs, results)}`,
    `Ignore files above a repository root: ${leak}`,
    'fsgate sorts its paths (revka by path, claude-code by modification time); the peers return them in walk order.',
  ])
  section('6b. Listing every file with ignore rules off', 'The same inputs, runs and method; every ignore file is ignored and hidden files are listed (fsgate `include_ignored: true, include_hidden: true`; fsgate never lists `.git`, and the rg row excludes it too).', table(head, offRows), [
    `fdir lists symbolic links as files (${fmtNum(modules.links)} in node_modules/.bin); fsgate and rg skip them, as they follow no links.`,
  ])

  for (const k of ['tree', 'modules']) {
    const label = inputs[k].label
    const r = results[`${k}:false`]
    const f = r.fsgate.median
    goal(`6. glob_search **/* vs globby {gitignore: true}, ${label}`, 10, `${fmtRatio(r.globby.median / f)} (${fmtMs(f)} vs ${fmtMs(r.globby.median)})`, r.globby.median / f)
    goal(`6. glob_search **/* vs fast-glob async (no ignore files), ${label}`, 2.5, `${fmtRatio(r.fg.median / f)} (${fmtMs(f)} vs ${fmtMs(r.fg.median)})`, r.fg.median / f)
    const o = results[`${k}:true`]
    goal(`6. glob_search **/*, ignore rules off, vs fdir no filter, ${label}`, 1, `${fmtRatio(o.fdir.median / o.fsgate.median)} (${fmtMs(o.fsgate.median)} vs ${fmtMs(o.fdir.median)})`, o.fdir.median / o.fsgate.median)
  }
}

/** Whether fsgate, rg and globby listed the same number of files (ignore rules on), in words. */
function sameCounts(inputs, results) {
  const parts = []
  let same = true
  for (const k of ['modules', 'tree']) {
    const r = results[`${k}:false`]
    const counts = [r.fsgate.value, r.globby.value, ...(r.rg ? [r.rg.value] : [])]
    same &&= counts.every((n) => n === counts[0])
    parts.push(`${inputs[k].label}: fsgate ${fmtNum(r.fsgate.value)}, ${r.rg ? `rg ${fmtNum(r.rg.value)}, ` : ''}globby ${fmtNum(r.globby.value)}`)
  }
  return `${same ? 'fsgate, rg and globby list the same number of files' : '**fsgate, rg and globby list different numbers of files**'} (${parts.join('; ')}).`
}

/**
 * Checks, in a probe folder marked as a repository root, whether .gitignore rules of the
 * folders above it (the project's own, which ignores `dist/`) reach inside, as they must
 * not. Returns the finding in words.
 */
async function parentRules(fsgate, rg, globby) {
  const dir = path.join(SEARCH, 'probe')
  mkdirSync(path.join(dir, '.git'), { recursive: true })
  mkdirSync(path.join(dir, 'dist'), { recursive: true })
  writeFileSync(path.join(dir, 'dist', 'a.js'), 'a\n')
  writeFileSync(path.join(dir, 'b.js'), 'b\n')
  const sees = (list) => list.includes('dist/a.js')
  const r = ok('glob_search', await fsgate.createToolkit({ workspace: realpathSync(dir), preset: 'revka', policy: { actionsPerHour: null } }).createSession().call('glob_search', { pattern: '**/*' }))
  const who = [`fsgate ${sees(r.data.files) ? 'lists it' : '**does not** list it'}`]
  if (rg.path) who.push(`rg ${sees(await runRg(rg, ['--files', '--no-require-git'], dir)) ? 'lists it' : 'does not'}`)
  who.push(`globby ${sees(await globby('**/*', { cwd: dir, gitignore: true })) ? 'lists it' : 'does not'}`)
  return (
    `the project's own .gitignore ignores \`dist/\`, \`*.node\`, \`node_modules/\` and more, and .bench-data/ lies inside the project. In a probe folder with an empty \`.git\` and a file dist/a.js (.bench-data/search/probe), ${who.join(', ')}. ` +
    'Inside a repository fsgate applies git\'s rules (ignore files above its root do not apply, as in git); outside one it honours ignore files all the same (ripgrep\'s `--no-require-git`, which in the `ignore` crate also lets the rules of folders above a repository root through — the reason fsgate decides per walk).'
  )
}

// ---------------------------------------------------------------------------------------
// 7. Content search over the whole tree
// ---------------------------------------------------------------------------------------

/** The tree's root .gitignore, as a pure-JS search would honour it: `name/` and `*.ext` only. */
function simpleIgnore(root) {
  const rules = readFileSync(path.join(root, '.gitignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#') && !l.startsWith('!'))
  return { dirs: new Set(rules.filter((l) => l.endsWith('/')).map((l) => l.slice(0, -1))), ends: rules.filter((l) => l.startsWith('*.')).map((l) => l.slice(1)), names: new Set(rules.filter((l) => !l.endsWith('/') && !l.includes('*'))) }
}

/** Lists the files a simple ignore keeps: hidden names and the `name/`, `*.ext` rules left out. */
function jsListSync(root, ignore) {
  const files = []
  const walk = (dir, rel) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue
      const r = rel ? `${rel}/${e.name}` : e.name
      if (e.isDirectory()) {
        if (!ignore.dirs.has(e.name)) walk(path.join(dir, e.name), r)
      } else if (e.isFile() && !ignore.names.has(e.name) && !ignore.ends.some((x) => e.name.endsWith(x))) files.push(r)
    }
  }
  walk(root, '')
  return files
}

/** The same search with the synchronous calls, in one loop: the fastest pure JS, and it blocks the event loop throughout. */
function jsSearchSync(root, re, ignore) {
  return jsListSync(root, ignore)
    .filter((f) => re.test(readFileSync(path.join(root, f), 'utf8')))
    .sort()
}

/** Walks with fs.promises.readdir (hidden names and the simple ignore left out), reads every file with readFile, tests a RegExp. */
async function jsSearch(root, re, ignore) {
  const files = []
  const walk = async (dir, rel) => {
    const ents = await readdir(dir, { withFileTypes: true })
    await Promise.all(
      ents.map(async (e) => {
        if (e.name.startsWith('.')) return
        const r = rel ? `${rel}/${e.name}` : e.name
        if (e.isDirectory()) {
          if (!ignore.dirs.has(e.name)) await walk(path.join(dir, e.name), r)
        } else if (e.isFile() && !ignore.names.has(e.name) && !ignore.ends.some((x) => e.name.endsWith(x))) files.push(r)
      }),
    )
  }
  await walk(root, '')
  const hits = []
  let next = 0
  const worker = async () => {
    while (next < files.length) {
      const f = files[next++]
      if (re.test(await readFile(path.join(root, f), 'utf8'))) hits.push(f)
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
  return hits.sort()
}

const PATTERNS = [
  { name: 'common literal', pattern: 'function', re: /function/ },
  { name: 'rare literal', pattern: RARE, re: new RegExp(RARE) },
  { name: 'regex', pattern: '\\w+Visitor\\b', re: /\w+Visitor\b/ },
]

async function benchGrep(ctx, tree, rg) {
  const { fsgate, section, goal } = ctx
  const { callNative, completer } = await import(path.join(ROOT, 'dist', 'native.js'))
  const root = tree.dir
  const tk = fsgate.createToolkit({ workspace: root, preset: 'revka', policy: { actionsPerHour: null }, limits: ALL })
  const session = tk.createSession()
  const ignore = simpleIgnore(root)
  const rows = []
  const perPattern = []
  for (const p of PATTERNS) {
    const sameFiles = (what, list, ref) => {
      if (list.length !== ref.length || list.some((x, i) => x !== ref[i])) throw new Error(`${what} found ${list.length} files for ${p.pattern}, fsgate ${ref.length}`)
    }
    const c = {
      files: async () => ok('content_search', await session.call('content_search', { pattern: p.pattern, output_mode: 'files_with_matches', max_results: ALL.searchResults })).data,
      content: async () => ok('content_search', await session.call('content_search', { pattern: p.pattern, output_mode: 'content', max_results: ALL.searchResults })).data,
      native: async () =>
        callNative((id) =>
          tk.fs.grep(completer, id, {
            path: root,
            displayRoot: root,
            pattern: p.pattern,
            walk: { includeHidden: false, includeIgnored: false },
            mode: 'files_with_matches',
            limit: ALL.searchResults,
            maxColumns: 500,
          }),
        ),
      js: () => jsSearch(root, p.re, ignore),
      jsSync: () => jsSearchSync(root, p.re, ignore),
    }
    if (rg.path) {
      c.rgFiles = () => runRg(rg, ['--no-require-git', '-l', '-e', p.pattern], root)
      c.rgContent = () => runRg(rg, ['--no-require-git', '-n', '--max-columns', '500', '--max-columns-preview', '-e', p.pattern], root)
    }
    const res = await interleave(
      Object.fromEntries(Object.entries(c).map(([k, fn]) => [k, { fn, perRound: k === 'js' || k === 'jsSync' ? 1 : 2 }])),
      { rounds: GREP_ROUNDS },
    )
    const files = res.files.value.files
    if (res.files.value.truncated || res.content.value.truncated) throw new Error('content_search left results out')
    sameFiles('the native call', res.native.value.files === '' ? [] : res.native.value.files.split('\0'), files)
    sameFiles('pure JS', res.js.value, files)
    sameFiles('pure JS (sync)', res.jsSync.value, files)
    const matches = res.content.value.numMatches
    if (res.rgFiles) {
      sameFiles('rg -l', [...res.rgFiles.value].sort(), files)
      if (res.rgContent.value.length !== matches) throw new Error(`rg -n found ${res.rgContent.value.length} lines for ${p.pattern}, fsgate ${matches}`)
    }
    const F = res.files.median
    const C = res.content.median
    const r = (x, base) => (x ? fmtRatio(x.median / base) : '—')
    const ms = (x) => (x ? fmtMs(x.median) : '—')
    const pat = `${p.name} \`${p.pattern}\``
    rows.push(
      [pat, 'fsgate `content_search` files_with_matches', fmtNum(files.length), '', ms(res.files), '1.0×'],
      [pat, '(breakdown) native `Workspace.grep` alone, files_with_matches', fmtNum(res.native.value.matchedFiles), '', ms(res.native), `${((res.native.median / F) * 100).toFixed(0)}% of the call`],
      [pat, `\`rg --no-require-git -l\` (${rg.version ?? 'rg not installed: row skipped'}, spawned)`, res.rgFiles ? fmtNum(res.rgFiles.value.length) : '—', '', ms(res.rgFiles), r(res.rgFiles, F)],
      [pat, 'pure JS: `fs.promises` `readdir` walk + `readFile` + `RegExp.test`, 16 in flight', fmtNum(res.js.value.length), '', ms(res.js), r(res.js, F)],
      [pat, '(reference) pure JS, synchronous: `readdirSync` walk + `readFileSync` + `RegExp.test` in one loop (blocks the event loop throughout)', fmtNum(res.jsSync.value.length), '', ms(res.jsSync), r(res.jsSync, F)],
      [pat, 'fsgate `content_search` content (path:line:text)', fmtNum(res.content.value.numFiles), fmtNum(matches), ms(res.content), '1.0×'],
      [pat, `\`rg --no-require-git -n --max-columns 500 --max-columns-preview\` (${rg.version ?? 'rg not installed: row skipped'}, spawned)`, '', res.rgContent ? fmtNum(res.rgContent.value.length) : '—', ms(res.rgContent), r(res.rgContent, C)],
    )
    perPattern.push({ p, res })
  }
  section(
    `7. Content search over the ${tree.label}`,
    `Input: the generated tree of section 6 (${fmtNum(tree.files - tree.ignored)} files searched, ${fmtNum(tree.ignored)} left out by its .gitignore; every file was read once before timing, so the page cache is **warm**). Three patterns: a literal in most .ts/.js files, a literal in ${perPattern[1].res.files.value.files.length} files, and a regex. ` +
      `Each candidate runs once untimed, then all run interleaved in ${GREP_ROUNDS} rounds (each twice a round, the pure-JS searches once); the figure is the median. fsgate runs with \`limits: { searchResults: 10,000,000 }\` and \`max_results: 10,000,000\`, so nothing is cut; it sorts its results by path, then line. ` +
      `Every run is checked: fsgate, its native call, ${rg.path ? 'rg and ' : ''}the pure-JS searches find the same files${rg.path ? ', and rg -n prints as many lines as fsgate counts matching lines' : ''}. The ratio is candidate time / fsgate time in the same output mode (files or content): the speed-up of fsgate.`,
    table(['pattern', 'method', 'files', 'matching lines', 'median', 'time / fsgate (same output)'], rows),
    [
      'rg runs as a child process: its time includes spawning it and reading its output into lines, what a Node host pays to use it. rg prints in the order its threads finish (sorting, `--sort path`, would make it single-threaded); fsgate sorts.',
      `The pure-JS search honours a simple ignore only: it skips names starting with a dot and applies the tree's root .gitignore as \`name/\` (folders) and \`*.ext\` rules, which is all this tree needs (it finds exactly fsgate's files); it does not read nested ignore files or skip binary files. It reads 16 files at a time through libuv's pool (${process.env.UV_THREADPOOL_SIZE ?? 4} threads) and tests each whole file with one RegExp. Each \`fs.promises.readFile\` is several round trips through that pool (open, stat, read, close), which is why the synchronous loop, which makes the same system calls without the hops, is faster here (${fmtRatio(perPattern[0].res.js.median / perPattern[0].res.jsSync.median)} for the common literal); it is the fastest pure JS, but it blocks the event loop for the whole search, which no host serving other work can afford.`,
    ],
  )
  for (const { p, res } of perPattern) {
    const F = res.files.median
    const C = res.content.median
    if (res.rgFiles) {
      goal(`7. content_search files_with_matches vs rg -l, ${p.name}`, 1, `${fmtRatio(res.rgFiles.median / F)} (${fmtMs(F)} vs ${fmtMs(res.rgFiles.median)})`, res.rgFiles.median / F)
      goal(`7. content_search content vs rg -n, ${p.name}`, 1, `${fmtRatio(res.rgContent.median / C)} (${fmtMs(C)} vs ${fmtMs(res.rgContent.median)})`, res.rgContent.median / C)
    } else {
      notMeasured(ctx, `7. content_search vs the rg CLI, ${p.name}`, '≥ 1×', 'rg is not installed')
    }
    goal(`7. content_search files_with_matches vs pure JS, ${p.name}`, 3, `${fmtRatio(res.js.median / F)} (${fmtMs(F)} vs ${fmtMs(res.js.median)})`, res.js.median / F)
  }
}

// ---------------------------------------------------------------------------------------
// 8. A search scoped to one small folder: the cost of a call
// ---------------------------------------------------------------------------------------
async function benchScoped(ctx, tree, rg) {
  const { fsgate, section, goal } = ctx
  const { callNative, completer } = await import(path.join(ROOT, 'dist', 'native.js'))
  const root = tree.dir
  const folder = path.join(root, SCOPED)
  const names = readdirSync(folder)
  const count = names.length
  const avg = names.reduce((a, n) => a + statSync(path.join(folder, n)).size, 0) / count
  const tk = fsgate.createToolkit({ workspace: root, preset: 'revka', policy: { actionsPerHour: null } })
  const session = tk.createSession()
  const pattern = 'function'
  let expected
  const check = (what, n) => {
    expected ??= n
    if (n !== expected) throw new Error(`${what} found ${n} matching lines in ${SCOPED}, expected ${expected}`)
  }
  const c = {
    fsgate: async () => check('content_search', ok('content_search', await session.call('content_search', { pattern, path: SCOPED })).data.numMatches),
    native: async () => {
      const r = await callNative((id) => tk.fs.grep(completer, id, { path: folder, displayRoot: root, pattern, walk: {}, mode: 'content', limit: 1000, maxColumns: 500 }))
      check('native grep', r.matches)
    },
  }
  if (rg.path) c.rg = async () => check('rg', (await runRg(rg, ['--no-require-git', '-n', '--max-columns', '500', '--max-columns-preview', '-e', pattern, SCOPED], root)).length)
  const per = { fsgate: SCOPED_FSGATE_PER_ROUND, native: SCOPED_FSGATE_PER_ROUND, rg: SCOPED_RG_PER_ROUND }
  const res = await interleave(
    Object.fromEntries(Object.entries(c).map(([k, fn]) => [k, { fn, perRound: per[k], warmup: 10 }])),
    { rounds: SCOPED_ROUNDS },
  )
  const base = res.fsgate.median
  const line = (label, x, ratio) => [label, fmtNum(x.times.length), fmtMs(x.median), fmtMs(percentile(x.times, 99)), fmtMs(x.min), ratio]
  const rows = [
    line('fsgate `session.call("content_search", {pattern: "function", path})`, preset revka, content mode', res.fsgate, '1.0×'),
    line('(breakdown) native `Workspace.grep` alone', res.native, `${((res.native.median / base) * 100).toFixed(0)}% of the call`),
  ]
  if (res.rg) rows.push(line(`\`rg --no-require-git -n -e function ${SCOPED}\` (${rg.version}, spawned)`, res.rg, fmtRatio(res.rg.median / base)))
  else rows.push(['rg (not installed: skipped)', '—', '—', '—', '—', '—'])
  section(
    '8. A search scoped to one small folder',
    `Folder: ${SCOPED} of the tree, ${count} files; pattern \`function\` (${fmtNum(expected)} matching lines), content mode. Calls run one after another (a model's calls do), after 10 untimed calls each; ${SCOPED_ROUNDS} interleaved rounds of ${SCOPED_FSGATE_PER_ROUND} fsgate calls and ${SCOPED_RG_PER_ROUND} rg spawns. Each call is checked for the number of matching lines. The walk still reads the tree's root .gitignore (both fsgate and rg look for ignore files in the folders above the one searched).`,
    table(['method', 'calls', 'median', 'p99', 'min', 'rg time / fsgate time'], rows),
    [`Here the search itself is tiny (${count} files of ${fmtNum(avg)} bytes on average), so the figures are the fixed cost of a call: for rg, starting a process; for fsgate, the facade, the hop to the addon's pool and back, and the walk of the folder on the calling worker thread (the breakdown row is the native call without the facade).`],
  )
  if (res.rg) goal('8. content_search in a 20-file folder vs spawning rg', 10, `${fmtRatio(res.rg.median / base)} (${fmtMs(base)} vs ${fmtMs(res.rg.median)})`, res.rg.median / base)
  else notMeasured(ctx, '8. content_search in a 20-file folder vs spawning rg', '≥ 10×', 'rg is not installed')
}

// ---------------------------------------------------------------------------------------
// 9. The event loop while 16 searches run
// ---------------------------------------------------------------------------------------

/** Samples the event loop (a 1 ms interval and perf_hooks' histogram) and a readFile loop until stopped. */
function probe(small) {
  const h = monitorEventLoopDelay({ resolution: 1 })
  h.enable()
  const lags = []
  let prev = now()
  const timer = setInterval(() => {
    const t = now()
    lags.push(Math.max(0, t - prev - 1))
    prev = t
  }, 1)
  const reads = []
  // The process's thread count (Linux), sampled every 50 ms.
  let threads = 0
  const countThreads = () => {
    try {
      threads = Math.max(threads, Number(/^Threads:\s*(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0))
    } catch {
      // not Linux
    }
  }
  const sampler = setInterval(countThreads, 50)
  let running = true
  const reader = (async () => {
    while (running) {
      const s = now()
      await readFile(small)
      reads.push(now() - s)
    }
  })()
  return async () => {
    running = false
    await reader
    clearInterval(timer)
    clearInterval(sampler)
    countThreads()
    h.disable()
    return {
      lagP50: percentile(lags, 50),
      lagP99: percentile(lags, 99),
      lagMax: Math.max(...lags),
      ticks: lags.length,
      // The histogram records the time between its 1 ms timer's runs: less 1 ms, the delay.
      hP50: Math.max(0, h.percentile(50) / 1e6 - 1),
      hP99: Math.max(0, h.percentile(99) / 1e6 - 1),
      hMax: Math.max(0, h.max / 1e6 - 1),
      readP50: percentile(reads, 50),
      readP99: percentile(reads, 99),
      readMax: Math.max(...reads),
      reads: reads.length,
      threads,
    }
  }
}

async function benchLoad(ctx, tree) {
  const { fsgate, section, goals, status } = ctx
  const root = tree.dir
  const small = path.join(root, SCOPED, readdirSync(path.join(root, SCOPED)).sort()[0])
  const tk = fsgate.createToolkit({ workspace: root, preset: 'revka', policy: { actionsPerHour: null } })
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

  let stop = probe(small)
  await sleep(IDLE_SECONDS * 1000)
  const idle = await stop()

  const lat = []
  let done = 0
  const end = now() + LOAD_SECONDS * 1000
  const loop = async (k) => {
    const session = tk.createSession()
    for (let i = k; now() < end; i++) {
      const p = PATTERNS[i % PATTERNS.length]
      const s = now()
      ok('content_search', await session.call('content_search', { pattern: p.pattern }))
      lat.push(now() - s)
      done++
    }
  }
  stop = probe(small)
  const t0 = now()
  await Promise.all(Array.from({ length: LOAD_SEARCHES }, (_, k) => loop(k)))
  const elapsed = now() - t0
  const load = await stop()

  const line = (label, x, extra) => [label, fmtMs(x.hP50), fmtMs(x.hP99), fmtMs(x.hMax), fmtMs(x.lagP50), fmtMs(x.lagP99), fmtMs(x.readP50), fmtMs(x.readP99), fmtNum(x.reads), x.threads || '—', extra]
  const rows = [
    line(`idle (${IDLE_SECONDS} s, no search running)`, idle, '—'),
    line(`${LOAD_SEARCHES} content searches in flight (${(elapsed / 1000).toFixed(1)} s)`, load, `${fmtNum(done)} searches, ${(done / (elapsed / 1000)).toFixed(1)}/s; p50 ${fmtMs(percentile(lat, 50))}, p99 ${fmtMs(percentile(lat, 99))}`),
  ]
  section(
    '9. The event loop while 16 content searches run',
    `${LOAD_SEARCHES} loops each run \`content_search\` over the whole ${tree.label} back to back (preset revka, default limits: up to 1,000 matching lines shown; the three patterns of section 7 in turn) for ${LOAD_SECONDS} s, while the event loop is sampled two ways — \`perf_hooks.monitorEventLoopDelay({resolution: 1})\` (its figures less the 1 ms of its own timer) and a \`setInterval(…, 1)\` whose late firing is the lag — and a loop of \`fs.promises.readFile\` of a ${fmtNum(statSync(small).size)}-byte file times each read. The idle row measures the same probes for ${IDLE_SECONDS} s first, with nothing else of this process running.`,
    table(['phase', 'loop delay p50', 'loop delay p99', 'loop delay max', 'setInterval(1) lag p50', 'lag p99', 'readFile p50', 'readFile p99', 'reads', 'threads (most)', 'searches'], rows),
    [
      `The searches run on the addon's own threads, not on libuv's pool, so the readFile loop does not queue behind them; the JS thread and libuv's threads share the ${os.availableParallelism()} cores with them. "threads (most)" is the process's thread count (/proc/self/status), sampled every 50 ms: what the scheduler shares those cores among.`,
      `The readFile goal reads "not starved" as: its p99 under load stays under ${READ_GOAL_MS} ms (idle p99 was ${fmtMs(idle.readP99)}).`,
    ],
  )
  goals.push({ bench: '9. event-loop delay p99 with 16 searches in flight', goal: `< ${LAG_GOAL_MS} ms`, measured: `${fmtMs(load.hP99)} (setInterval lag p99 ${fmtMs(load.lagP99)}; idle ${fmtMs(idle.hP99)})`, met: status(LAG_GOAL_MS / Math.max(load.hP99, load.lagP99)) })
  goals.push({ bench: '9. readFile p99 with 16 searches in flight', goal: `< ${READ_GOAL_MS} ms`, measured: `${fmtMs(load.readP99)} (p50 ${fmtMs(load.readP50)}; idle p99 ${fmtMs(idle.readP99)})`, met: status(READ_GOAL_MS / load.readP99) })
}

