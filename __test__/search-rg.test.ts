/**
 * content_search / Grep and glob_search / Glob against the ripgrep CLI (SPEC §3.5): the
 * same trees searched by `rg` and by fsgate, full outputs compared. The search tools run
 * ripgrep's own crates in process, so every difference here is either a documented one
 * (include globs and types filter after the ignore rules, .git and the other VCS folders
 * are never searched, lines are cut at 500 characters, a trailing CR is dropped) or a bug.
 *
 * What rg is asked, for a revka content_search input:
 *   rg --no-config --no-require-git --crlf --no-heading --with-filename --line-number
 *      --color never --sort path [walk flags] [search flags] -e PATTERN [-- PATH]
 * run in the workspace (so rg prints `dir/file`, no `./`). Filters that fsgate applies
 * after the walk (include globs; types in one case) are modelled as the files rg lists
 * without the filter ∩ the files it lists with it. Each rg output is parsed from its
 * `--null` form and rendered again; in every unfiltered, unpaged case that rendering is
 * checked against rg's plain output first, so the model cannot drift from rg.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { type ContentSearchInput, createToolkit, type Session, type ToolkitOptions, type ToolResult } from '../ts/index.js'
import { splitGlobs } from '../ts/search/scope.js'
import { fails, ok, put, removeTempDirs, rng, tempDir, textOf, word } from './helpers.js'
import { needs } from './peers.js'

afterAll(removeTempDirs)

const HAS_RG = spawnSync('rg', ['--version']).status === 0
const HAS_GIT = spawnSync('git', ['--version']).status === 0
/** rg's major version (13 on Ubuntu 22.04, 14 on 24.04). */
const RG_MAJOR = HAS_RG ? Number(/ripgrep (\d+)/.exec(spawnSync('rg', ['--version']).stdout.toString())?.[1] ?? 0) : 0
if (!HAS_RG) console.warn('search-rg.test.ts: skipped, `rg` (ripgrep) is not on PATH; install it (apt-get install ripgrep) to run the differential tests.')

/**
 * Whether this run searches through the live index (issue 20): search-rg-index.test.ts
 * runs this whole suite again with it on, and the results must be the same.
 */
const INDEX = process.env.FSGATE_TEST_INDEX === 'on'
/** Searches the live index answered in this run. */
let fromIndex = 0

/** A toolkit with the live index off, or (in the index run) built and ready. */
function makeToolkit(options: ToolkitOptions): ReturnType<typeof createToolkit> {
  const toolkit = createToolkit({ ...options, index: INDEX ? 'auto' : 'off' })
  if (!INDEX) return toolkit
  toolkit.fs.waitIndex(60_000)
  const createSession = toolkit.createSession.bind(toolkit)
  toolkit.createSession = (o) => {
    const session = createSession(o)
    const call = session.call.bind(session)
    session.call = async (...args) => {
      const r = await call(...args)
      if (r.data?.fromIndex === true) fromIndex++
      return r
    }
    return session
  }
  return toolkit
}

/** Characters of a line fsgate shows before cutting it. */
const MAX_COLUMNS = 500
/** The folders fsgate never lists or searches, even with hidden files included. */
const VCS_DIRS = ['.git', '.hg', '.svn', '.bzr', '.jj', '.sl']
/** Flags every rg search gets. */
const RG_SEARCH = ['--no-config', '--no-require-git', '--crlf', '--no-heading', '--with-filename', '--line-number', '--color', 'never', '--sort', 'path']
/** An environment where no ripgrep config file can change rg's defaults. */
const RG_ENV = { ...process.env, RIPGREP_CONFIG_PATH: '' }
/** Limits high enough that only the cases about limits meet one. */
// Reports are held to the read token limit too: raised here, so that only the result limits cut them.
const WIDE = { searchResults: 1_000_000, globResults: 1_000_000, readTokens: 1_000_000, resultTokens: 10_000_000, searchPageTokens: 10_000_000, searchOutputBytes: 1 << 30 }

// ---------------------------------------------------------------------------------------
// Running rg

interface RgRun {
  stdout: string
  stderr: string
  status: number | null
}

function runRg(cwd: string, args: string[]): RgRun {
  // stdin is /dev/null: with a pipe there, rg would search stdin instead of the folder.
  const r = spawnSync('rg', args, { cwd, env: RG_ENV, maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] })
  if (r.error) throw r.error
  // Decoded like fsgate decodes lines: invalid UTF-8 replaced.
  return { stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8'), status: r.status }
}

/** rg's stdout; exit 0 (found) and 1 (nothing found) are fine, anything else fails the test. */
function rg(cwd: string, args: string[]): string {
  const r = runRg(cwd, args)
  if (r.status !== 0 && r.status !== 1) throw new Error(`rg ${args.join(' ')} (in ${cwd}) exited ${r.status}: ${r.stderr}`)
  return r.stdout
}

/** Lines of an output, without the final newline and without a CR before each newline. */
function linesOf(out: string): string[] {
  if (out === '') return []
  return out.replace(/\n$/, '').split('\n').map((l) => l.replace(/\r$/, ''))
}

/** rg's list of files (`rg --files`), in path order. */
function rgFiles(cwd: string, flags: string[]): string[] {
  return linesOf(rg(cwd, ['--no-config', '--no-require-git', '--files', '--sort', 'path', ...flags]))
}

// ---------------------------------------------------------------------------------------
// Inputs and their rg flags

type Walk = Pick<ContentSearchInput, 'include_hidden' | 'include_ignored'>
/** A content_search input (revka dialect). */
type Search = ContentSearchInput

/** How the expected output is made from rg (never sent to fsgate). */
interface Model {
  /** Skip this many results first (the claude dialect's offset). */
  offset?: number
  /** The dialect whose notes the output uses. */
  dialect?: 'revka' | 'claude'
  /** The toolkit's limits.searchResults (the sessions here use WIDE unless a case says). */
  limit?: number
  /** Lines shown without their numbers (Grep's -n: false). */
  lineNumbers?: boolean
}

function walkFlags(w: Walk): string[] {
  const out: string[] = []
  if (w.include_hidden) out.push('--hidden', ...VCS_DIRS.flatMap((d) => ['-g', `!${d}`]))
  if (w.include_ignored) out.push('--no-ignore')
  return out
}

/**
 * The types the cases use, as the ignore crate that fsgate links (0.4.35) defines them.
 * rg gets them spelled out, so that an older rg (13.0 has no *.cts, *.mts in ts, no
 * *.cjs, *.mjs in js) answers for the same types: what is compared is how a type
 * selects files, not which release added an extension.
 */
const TYPES: Record<string, string[]> = {
  ts: ['*.ts', '*.tsx', '*.cts', '*.mts'],
  js: ['*.js', '*.jsx', '*.vue', '*.cjs', '*.mjs'],
  md: ['*.markdown', '*.md', '*.mdown', '*.mdwn', '*.mkd', '*.mkdn', '*.mdx'],
  rust: ['*.rs'],
}

function typeFlags(type: string | undefined): string[] {
  if (type === undefined) return []
  const globs = TYPES[type]
  if (!globs) throw new Error(`add the definition of type ${type} to TYPES`)
  return ['--type-clear', type, ...globs.flatMap((g) => ['--type-add', `${type}:${g}`]), '-t', type]
}

function searchFlags(s: Search): string[] {
  const out: string[] = []
  if (s.case_sensitive === false) out.push('-i')
  if (s.context_before) out.push('-B', String(s.context_before))
  if (s.context_after) out.push('-A', String(s.context_after))
  if (s.multiline) out.push('-U', '--multiline-dotall')
  if (s.output_mode === 'files_with_matches') out.push('-l')
  if (s.output_mode === 'count') out.push('-c')
  return out
}

// ---------------------------------------------------------------------------------------
// rg's output as data, and the tool's text made from it

/** One line of rg's content output. */
interface Row {
  path: string
  line: number
  match: boolean
  text: string
}

/** rg's `--null` content output as rows (its `--` separators are dropped and made again when rendering). */
function parseRows(out: string): Row[] {
  const rows: Row[] = []
  for (const l of linesOf(out)) {
    if (l === '--') continue
    const z = l.indexOf('\0')
    const m = /^(\d+)([:-])/.exec(l.slice(z + 1))
    if (z < 0 || !m) throw new Error(`unexpected rg line: ${JSON.stringify(l)}`)
    rows.push({ path: l.slice(0, z), line: Number(m[1]), match: m[2] === ':', text: l.slice(z + 1 + m[0].length) })
  }
  return rows
}

/** One expected line of the tool's text; `head` is the length of its `path:n:` part (0 for other lines). */
interface Want {
  line: string
  head: number
}

/** Rows as rg prints them: `path:n:text` / `path-n-text`, `--` between groups that are not adjacent when there is context. */
function renderRows(rows: Row[], context: boolean, numbered = true): Want[] {
  const out: Want[] = []
  let prev: Row | undefined
  for (const r of rows) {
    if (context && prev && (prev.path !== r.path || prev.line + 1 !== r.line)) out.push({ line: '--', head: 0 })
    const sep = r.match ? ':' : '-'
    const head = numbered ? `${r.path}${sep}${r.line}${sep}` : `${r.path}${sep}`
    out.push({ line: head + r.text, head: head.length })
    prev = r
  }
  return out
}

/**
 * The rows fsgate shows for a page: matching rows `offset` … `offset + limit - 1`, and
 * the context rows within `before`/`after` lines of a shown match in the same file that
 * no unshown match separates from it.
 */
function pageRows(rows: Row[], offset: number, limit: number, before: number, after: number): Row[] {
  const shown = new Array<boolean>(rows.length).fill(false)
  const isShownMatch = new Array<boolean>(rows.length).fill(false)
  let seen = 0
  rows.forEach((r, i) => {
    if (!r.match) return
    if (seen >= offset && seen < offset + limit) isShownMatch[i] = shown[i] = true
    seen++
  })
  rows.forEach((r, i) => {
    if (!isShownMatch[i]) return
    for (let j = i - 1; j >= 0; j--) {
      const o = rows[j]
      if (o.path !== r.path || r.line - o.line > before || (o.match && !isShownMatch[j])) break
      shown[j] = true
    }
    for (let j = i + 1; j < rows.length; j++) {
      const o = rows[j]
      if (o.path !== r.path || o.line - r.line > after || (o.match && !isShownMatch[j])) break
      shown[j] = true
    }
  })
  return rows.filter((_, i) => shown[i])
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`
}

interface Expected {
  /** The tool's text, line by line (long lines as rg prints them). */
  want: Want[]
  /** `data.files`. */
  files: string[]
  /** `data.counts` (count mode). */
  counts?: number[]
  /** Files with a match, and matches (lines; per `rg -c` in count mode), over the whole search. */
  numFiles: number
  numMatches: number
  truncated: boolean
}

const plain = (line: string): Want => ({ line, head: 0 })

/** What content_search should answer for `s`, from rg run in `cwd`. */
function expectedSearch(cwd: string, s: Search, model: Model = {}): Expected {
  const mode = s.output_mode ?? 'content'
  const limit = Math.min(s.max_results ?? model.limit ?? WIDE.searchResults, model.limit ?? WIDE.searchResults)
  const offset = model.offset ?? 0
  const filters: string[] = []
  if (s.include !== undefined) filters.push(...(splitGlobs(s.include) ?? []).flatMap((g) => ['-g', g]))
  const direct = typeFlags(s.type)
  const base = [...RG_SEARCH, ...walkFlags(s), ...direct, ...searchFlags(s), '-e', s.pattern, ...(s.path === undefined ? [] : ['--', s.path])]
  // Files that pass the ignore rules and then the filters (fsgate filters after the walk).
  let keep: Set<string> | undefined
  if (filters.length > 0) {
    const where = s.path === undefined ? [] : ['--', s.path]
    const walked = rgFiles(cwd, [...walkFlags(s), ...direct, ...where])
    const filtered = new Set(rgFiles(cwd, [...walkFlags(s), ...direct, ...filters, ...where]))
    keep = new Set(walked.filter((f) => filtered.has(f)))
  }
  const kept = (p: string) => keep === undefined || keep.has(p)
  const nulled = rg(cwd, ['--null', ...base])
  const numbered = model.lineNumbers !== false
  const raw = keep === undefined ? linesOf(rg(cwd, numbered ? base : base.map((a) => (a === '--line-number' ? '--no-line-number' : a)))) : undefined
  // Every dialect names the offset to go on at, with the exact total.
  const more = (unit: string, shown: number, total: number) =>
    `(Showing ${unit} ${(offset + 1).toLocaleString('en-US')}-${(offset + shown).toLocaleString('en-US')} of ${total.toLocaleString('en-US')}. Continue with offset=${offset + shown}, or narrow the pattern, path or glob.)`
  const none = (numFiles: number, numMatches: number): Expected => ({
    want: [plain(`No matches found for ${s.pattern}${s.path ? ` in ${s.path}` : ''}${numFiles > 0 ? ` (${plural(mode === 'content' ? numMatches : numFiles, mode === 'content' ? 'result' : 'file')} matched, but offset ${offset} is past the last; continue with offset=0)` : ''}.`)],
    files: [],
    numFiles,
    numMatches,
    truncated: false,
  })

  if (mode === 'files_with_matches') {
    const all = nulled.split('\0').filter((f) => f !== '' && kept(f))
    if (raw) expect(all, 'the model of rg -l --null').toEqual(raw)
    const files = all.slice(offset, offset + limit)
    if (files.length === 0) return none(all.length, all.length)
    const truncated = all.length > offset + limit
    const want = [plain(`Found ${plural(all.length, 'file')}`), ...files.map(plain), ...(truncated ? [plain(more('files', files.length, all.length))] : [])]
    return { want, files, numFiles: all.length, numMatches: all.length, truncated }
  }

  if (mode === 'count') {
    const all = linesOf(nulled)
      .map((l) => {
        const [file, n] = l.split('\0')
        return { file, n: Number(n) }
      })
      .filter((c) => kept(c.file))
    if (raw) expect(all.map((c) => `${c.file}:${c.n}`), 'the model of rg -c --null').toEqual(raw)
    const page = all.slice(offset, offset + limit)
    const total = all.reduce((sum, c) => sum + c.n, 0)
    if (page.length === 0) return none(all.length, total)
    const truncated = all.length > offset + limit
    const want = [
      plain(`Found ${plural(total, 'match', 'matches')} in ${plural(all.length, 'file')}`),
      ...page.map((c) => plain(`${c.file}:${c.n}`)),
      ...(truncated ? [plain(more('counts', page.length, all.length))] : []),
    ]
    return { want, files: page.map((c) => c.file), counts: page.map((c) => c.n), numFiles: all.length, numMatches: total, truncated }
  }

  const context = (s.context_before ?? 0) > 0 || (s.context_after ?? 0) > 0
  const rows = parseRows(nulled).filter((r) => kept(r.path))
  if (raw) {
    expect(
      renderRows(rows, context, numbered).map((w) => w.line),
      'the model of rg --null content output',
    ).toEqual(raw)
  }
  const matches = rows.filter((r) => r.match)
  const numFiles = new Set(matches.map((r) => r.path)).size
  const shownRows = pageRows(rows, offset, limit, s.context_before ?? 0, s.context_after ?? 0)
  const shownMatches = shownRows.filter((r) => r.match).length
  if (shownMatches === 0) return none(numFiles, matches.length)
  const truncated = matches.length > offset + limit
  const want = renderRows(shownRows, context, numbered)
  if (raw && !truncated && offset === 0) expect(want.map((w) => w.line)).toEqual(raw)
  const cut = shownRows.filter((r) => [...r.text].length > MAX_COLUMNS).length
  if (truncated) want.push(plain(more('matching lines', shownMatches, matches.length)))
  if (cut) want.push(plain(`(${plural(cut, 'line')} longer than ${MAX_COLUMNS} characters ${cut === 1 ? 'was' : 'were'} cut around the match; Read the line for all of it.)`))
  const files = [...new Set(shownRows.filter((r) => r.match).map((r) => r.path))]
  return { want, files, numFiles, numMatches: matches.length, truncated }
}

/**
 * Whether `got` is fsgate's cut of the long line `want`: the same `path:n:` head, then
 * 500 characters of the text found in it (with `…` where text was left out on either
 * side), then ` [line of N chars cut]`.
 */
function isCutOf(got: string | undefined, want: Want): boolean {
  if (got === undefined || want.head === 0) return false
  const text = want.line.slice(want.head)
  const chars = [...text]
  if (chars.length <= MAX_COLUMNS || !got.startsWith(want.line.slice(0, want.head))) return false
  const marker = ` [line of ${chars.length} chars cut]`
  let shown = got.slice(want.head)
  if (!shown.endsWith(marker)) return false
  shown = shown.slice(0, -marker.length)
  const pre = shown.startsWith('…')
  const post = shown.endsWith('…')
  const window = shown.slice(pre ? 1 : 0, post ? -1 : undefined)
  if ([...window].length !== MAX_COLUMNS) return false
  for (let at = text.indexOf(window); at >= 0; at = text.indexOf(window, at + 1)) {
    const from = [...text.slice(0, at)].length
    if (pre === from > 0 && post === from + MAX_COLUMNS < chars.length) return true
  }
  return false
}

/** Asserts that a content_search / Grep result is what rg's output says it should be. */
function expectLikeRg(r: ToolResult, want: Expected): void {
  // With no match to show, fsgate says how many binary files it skipped (rg says nothing;
  // data.binaryFiles is checked by the binary cases).
  const got = ok(r)
    .split('\n')
    .map((l) => l.replace(/\. \(\d[\d,]* binary files? skipped\)$/, '.'))
  // Long lines: rg prints them whole, fsgate a window around the match.
  const lines = want.want.map((w, i) => (isCutOf(got[i], w) ? got[i] : w.line))
  expect(got).toEqual(lines)
  expect(r.data?.files).toEqual(want.files)
  if (want.counts) expect(r.data?.counts).toEqual(want.counts)
  expect(r.data?.numFiles).toBe(want.numFiles)
  // fsgate stops counting matches early once the page is full: exact only when not truncated.
  // Files mode claims no match count.
  if (!want.truncated && r.data?.mode !== 'files_with_matches') expect(r.data?.numMatches).toBe(want.numMatches)
  if (r.data?.mode === 'files_with_matches') expect(r.data).not.toHaveProperty('numMatches')
  expect(r.data?.truncated).toBe(want.truncated)
}

/** What glob_search should list: the files rg lists, kept when they match the glob with rg's -g rules. */
function expectedGlob(cwd: string, pattern: string, w: Walk): string[] {
  const listed = rgFiles(cwd, walkFlags(w))
  const matching = new Set(rgFiles(cwd, [...walkFlags(w), '-g', pattern]))
  return listed.filter((f) => matching.has(f))
}

// ---------------------------------------------------------------------------------------
// The tree

/** Hits at these lines of context.txt (40 lines), so that -A/-B/-C groups merge, touch and part. */
const CONTEXT_HITS = [1, 3, 5, 12, 20, 21, 30, 40]

const utf16le = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')])

/** Every file of the tree, by path. */
const TREE: Record<string, string | Buffer> = {
  '.gitignore': 'build/\n*.log\n!keep.log\n/secret.txt\ntmp*/\n!.env.example\n*.tmp\n',
  '.ignore': 'dot-ignored.txt\n!important.tmp\n',
  '.rgignore': 'rg-ignored.txt\n',
  '.env.example': 'NEEDLE_TOKEN=needle\n',
  '.hidden.txt': 'a hidden needle\n',
  '.hidden.rs': 'fn hidden_needle() {}\n',
  '.config/settings.json': '{ "needle": true }\n',
  '.config/deep.ts': 'export function hiddenVisitor() { return "needle" }\n',
  '.hg/store.txt': 'needle in a mercurial store\n',
  'build/out.js': 'export function built() { return "needle" }\n',
  'debug.log': 'needle in a log\n',
  'keep.log': 'needle kept by a negation\n',
  'logs/nested.log': 'needle in a nested log\n',
  'logs/keep.log': 'needle kept in a nested folder\n',
  'secret.txt': 'needle secret\n',
  'sub/secret.txt': 'needle not secret here: the pattern is anchored\n',
  'sub/words.txt': 'word in sub\n',
  'dot-ignored.txt': 'needle left out by .ignore\n',
  'rg-ignored.txt': 'needle left out by .rgignore\n',
  'tmpcache/x.txt': 'needle in a folder left out by a glob\n',
  'excluded-by-info.txt': 'needle left out by .git/info/exclude\n',
  'src/.gitignore': 'local_*.rs\ngenerated/\n',
  'src/local_debug.rs': 'fn local_needle() {}\n',
  'src/generated/gen.ts': 'export function generatedVisitor() { return "needle" }\n',
  'src/main.rs': [
    '// TODO: wire the needle',
    'use std::collections::HashMap;',
    '',
    'fn main() {',
    '    let visitor = AstVisitor::new();',
    '    println!("needle in a haystack");',
    '}',
    '',
    '  fn indented() -> u32 {',
    '    42',
    '}',
    'pub fn word_count(words: &str) -> usize { words.len() }',
    'struct NodeVisitorImpl;',
    'impl SyntaxVisitor for NodeVisitorImpl {}',
    '// FIXME: the end',
    '',
  ].join('\n'),
  'src/lib.rs': 'pub mod visitor;\n\tfn tabbed() {}\n/* XXX word */\npub fn parse() -> Result<(), ()> { Ok(()) } // end\n',
  'src/visitor/ast_visitor.rs':
    'pub struct AstVisitor;\npub trait Visitor {\n    fn visit(&mut self);\n}\nimpl Visitor for AstVisitor {\n    fn visit(&mut self) {}\n}\n',
  'src/util.ts': "export function parseVisitor(input: string): string {\n  // FIXME needle\n  return input\n}\nexport class TypeVisitor {}\nexport const todo = 'todo later'\n",
  'src/app.js': "export function app() {\n  return 'needle'\n}\n// Todo: tidy up\n",
  'src/index.ts': "export * from './util'\nexport function main() {}\n",
  'src/deep/nested/more.ts': '    fn_like_name()\nconst MoreVisitor = 1\n',
  'src/deep/nested/mod.rs': '   fn deep() {}\n// the end\n',
  'src/deep/readme.md': '# Deep needle\n',
  'docs/guide.md': '# Guide\nThe needle is documented here.\nTODO: write more\n',
  'docs/api/ref.md': '## API\nexport function documented()\n',
  'docs/notes.txt': 'word up\n',
  'words.txt': 'word\nwords\nsword\na word.\nWORD\nword_count\nfoo-word-bar\n',
  'phones.txt': 'call 555-1234 now\n5551234\n12-3456\nroom 101-2020, 303-4040\n',
  'a/b.txt': 'needle a/b\n',
  'a-c.txt': 'needle a-c\n',
  'a.txt': 'needle a\n',
  'b.txt': 'no match\n',
  'with space.txt': 'needle with a space\n',
  'crlf.txt': 'first line end\r\nsecond end\r\n  fn crlf_fn() {}\r\nthe end\r\n\r\nno match here\r\nTODO crlf needle\r\nfoo\r\n  bar\r\n',
  'utf16.txt': utf16le('utf16 needle here\nit ends at the end\nTODO utf16\n'),
  'invalid.txt': Buffer.concat([Buffer.from('bad '), Buffer.from([0xff, 0xfe]), Buffer.from(' needle bytes\nfine end\n')]),
  'binary.txt': Buffer.from('needle before the nul\n\0\x01\x02needle after\n'),
  'unicode/ko.txt': '안녕하세요 세계\n세계 평화 needle\n',
  'unicode/th.txt': 'สวัสดีชาวโลก\nภาษาไทย needle\n',
  'unicode/de.txt': 'Grüße aus Köln\nÜBER über Über\n',
  'context.txt': Array.from({ length: 40 }, (_, i) => (CONTEXT_HITS.includes(i + 1) ? `hit ${i + 1}` : `line ${i + 1}`)).join('\n') + '\n',
  'multi.txt': 'foo\n  bar\nfoo bar\nfoo   \n\n   bar end\nsolo foo\nnot bar\nfoo\r\nbar\r\n',
  'long.txt': [
    'short line',
    'x'.repeat(700) + ' longmarker ' + 'é'.repeat(300),
    'longmarker again',
    'ü'.repeat(520),
    'edgemarker' + 'z'.repeat(490),
    'edgemarker' + 'z'.repeat(491),
    '',
  ].join('\n'),
  'nonl.txt': 'first\nneedle on the last line, no newline',
  'bom8.txt': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('needle after a UTF-8 BOM\nTODO bom\n')]),
  'utf16be.txt': Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('utf16 big-endian needle\n', 'utf16le').swap16()]),
  'Upper.txt': 'needle in a capitalised name\n',
  'docs/UPPER.MD': 'needle in an upper-case extension\n',
  'cache.tmp': 'needle in a file .gitignore leaves out\n',
  'important.tmp': 'needle in a file .ignore lets back in\n',
  'v1.2/x.txt': 'needle in a dotted folder\n',
}

/** A file whose name is not UTF-8 (byte 0xff), written by makeTree. */
const BAD_NAME = Buffer.concat([Buffer.from('bad-name-'), Buffer.from([0xff]), Buffer.from('.txt')])

type Variant = 'plain' | 'dotgit' | 'git'

interface Tree {
  dir: string
  revka: Session
  claude: Session
  /** A folder outside the workspace that `link-out` points to. */
  outside: string
}

/**
 * Writes the tree: `plain` is no repository at all; `dotgit` has a `.git` folder that is
 * not a repository (with a file holding the pattern and an info/exclude); `git` is a real
 * `git init`. File times are set apart (in an order unlike path order) for Glob.
 */
function makeTree(variant: Variant): Tree {
  const dir = tempDir(`fsgate-rg-${variant}-`)
  const outside = tempDir('fsgate-rg-outside-')
  put(outside, 'far.txt', 'needle far away\n')
  for (const [name, data] of Object.entries(TREE)) put(dir, name, data)
  const bad = Buffer.concat([Buffer.from(`${dir}/`), BAD_NAME])
  fs.writeFileSync(bad, 'needle in a file whose name is not UTF-8\n')
  // Times 10 s apart, in the order of the reversed names (unlike path order).
  const byTime = Object.keys(TREE).sort((a, b) => ([...a].reverse().join('') < [...b].reverse().join('') ? -1 : 1))
  const t0 = Math.floor(Date.now() / 1000) - 10_000
  for (const [i, name] of byTime.entries()) fs.utimesSync(path.join(dir, name), t0 + i * 10, t0 + i * 10)
  fs.utimesSync(bad, t0 - 10, t0 - 10)
  if (variant === 'dotgit') {
    put(dir, '.git/config', '[core]\n\tneedle = true\n')
    put(dir, '.git/info/exclude', 'excluded-by-info.txt\n')
  }
  if (variant === 'git') {
    const init = spawnSync('git', ['init', '-q', dir])
    if (init.status !== 0) throw new Error(`git init failed: ${init.stderr}`)
    fs.appendFileSync(path.join(dir, '.git/info/exclude'), 'excluded-by-info.txt\n')
    put(dir, '.git/needle.txt', 'needle inside .git\n')
  }
  fs.symlinkSync('a.txt', path.join(dir, 'link-a.txt'))
  fs.symlinkSync('src', path.join(dir, 'link-src'))
  fs.symlinkSync(outside, path.join(dir, 'link-out'))
  return {
    dir,
    outside,
    revka: makeToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null }, limits: WIDE }).createSession(),
    claude: makeToolkit({ workspace: dir, preset: 'claude-code', limits: WIDE }).createSession(),
  }
}

// ---------------------------------------------------------------------------------------
// The battery

interface Case {
  name: string
  input: Search
  model?: Model
  /** rg finds nothing here on purpose. */
  empty?: boolean
}

const GREP_CASES: Case[] = [
  { name: 'a literal', input: { pattern: 'needle' } },
  { name: 'a regex with classes and counts', input: { pattern: '[0-9]{3}-[0-9]{4}' } },
  { name: 'word boundaries', input: { pattern: '\\bword\\b' } },
  { name: '\\w+Visitor\\b', input: { pattern: '\\w+Visitor\\b' } },
  { name: '^\\s*fn (spaces, a tab, a CRLF file)', input: { pattern: '^\\s*fn' } },
  { name: 'end$ (matches before a CRLF)', input: { pattern: 'end$' } },
  { name: 'alternation', input: { pattern: 'TODO|FIXME|XXX' } },
  { name: 'case-insensitive', input: { pattern: 'todo', case_sensitive: false } },
  { name: 'Korean', input: { pattern: '세계' } },
  { name: 'a Unicode script class (Thai)', input: { pattern: '\\p{Thai}+' } },
  { name: 'Unicode case folding', input: { pattern: 'über', case_sensitive: false } },
  { name: 'a dot never matches a newline without multiline', input: { pattern: 'foo.bar' } },
  { name: 'context -A2 -B1', input: { pattern: 'hit', context_before: 1, context_after: 2 } },
  { name: 'context -C3 (groups that merge, touch and part)', input: { pattern: 'hit', context_before: 3, context_after: 3 } },
  { name: 'context -C1 across many files (-- between files)', input: { pattern: 'needle', context_before: 1, context_after: 1 } },
  { name: 'context -A1 only', input: { pattern: 'end$', context_after: 1 } },
  { name: 'multiline foo\\s*\\n\\s*bar', input: { pattern: 'foo\\s*\\n\\s*bar', multiline: true } },
  { name: 'multiline with a dot across lines', input: { pattern: 'hit 20.hit 21', multiline: true } },
  { name: 'multiline with context -C1', input: { pattern: 'foo\\s*\\n\\s*bar', multiline: true, context_before: 1, context_after: 1 } },
  { name: 'multiline, count mode', input: { pattern: 'foo\\s*\\n\\s*bar', multiline: true, output_mode: 'count' } },
  { name: 'include *.rs', input: { pattern: 'fn', include: '*.rs' } },
  { name: 'include src/**/*.{js,ts}', input: { pattern: 'export function', include: 'src/**/*.{js,ts}' } },
  { name: 'include *.log (ignored files stay out)', input: { pattern: 'needle', include: '*.log' } },
  { name: 'include two globs, comma-separated', input: { pattern: 'needle', include: '*.md,*.txt' } },
  { name: 'include a negated glob', input: { pattern: 'needle', include: '!*.txt' } },
  { name: 'include *.rs with ignored files included', input: { pattern: 'fn', include: '*.rs', include_ignored: true } },
  { name: 'type ts', input: { pattern: 'Visitor', type: 'ts' } },
  { name: 'type js', input: { pattern: 'needle', type: 'js' } },
  { name: 'type md', input: { pattern: 'needle', type: 'md' } },
  { name: 'hidden files', input: { pattern: 'needle', include_hidden: true } },
  { name: 'ignored files', input: { pattern: 'needle', include_ignored: true } },
  { name: 'hidden and ignored files', input: { pattern: 'needle', include_hidden: true, include_ignored: true } },
  { name: 'files mode', input: { pattern: 'needle', output_mode: 'files_with_matches' } },
  { name: 'files mode, hidden and ignored', input: { pattern: 'needle', output_mode: 'files_with_matches', include_hidden: true, include_ignored: true } },
  { name: 'count mode (lines, not matches)', input: { pattern: 'o', output_mode: 'count' } },
  { name: 'count mode with include and -i', input: { pattern: 'WORD', output_mode: 'count', case_sensitive: false, include: '*.txt' } },
  { name: 'long lines are cut around the match', input: { pattern: 'longmarker', context_after: 1 } },
  { name: 'path: a folder', input: { pattern: 'fn', path: 'src' } },
  { name: 'path: a folder, with include', input: { pattern: 'fn', path: 'src', include: '*.rs' } },
  { name: 'path: one file', input: { pattern: 'needle', path: 'a.txt' } },
  { name: 'path: an ignored file named directly', input: { pattern: 'needle', path: 'debug.log' } },
  { name: 'max_results in content mode', input: { pattern: 'needle', max_results: 5 } },
  { name: 'max_results with context (context lines not counted)', input: { pattern: 'hit', max_results: 4, context_before: 1, context_after: 2 } },
  { name: 'max_results equal to the matches (no note)', input: { pattern: 'hit', max_results: 8 } },
  { name: 'max_results in files mode', input: { pattern: 'needle', output_mode: 'files_with_matches', max_results: 3 } },
  { name: 'max_results in count mode', input: { pattern: 'e', output_mode: 'count', max_results: 3 } },
  { name: 'no match', input: { pattern: 'zzz_no_such_text' }, empty: true },
  { name: 'empty lines (^$, one of them CRLF)', input: { pattern: '^$' } },
  { name: 'a pattern that starts with a dash', input: { pattern: '-word-' } },
  { name: 'multiline ending in a newline (CRLF)', input: { pattern: 'the end\\r?\\n', multiline: true } },
  { name: 'multiline with max_results cutting a match', input: { pattern: 'foo\\s*\\n\\s*bar', multiline: true, max_results: 3 } },
  { name: 'include two globs, space-separated', input: { pattern: 'fn|export', include: '*.rs *.ts' } },
  { name: 'include with upper-case names (globs are case-sensitive)', input: { pattern: 'needle', include: '*.md' } },
  { name: 'path: a hidden file named directly', input: { pattern: 'needle', path: '.hidden.txt' } },
  { name: 'path: a hidden folder named directly', input: { pattern: 'needle', path: '.config' } },
  { name: 'path: an ignored folder named directly', input: { pattern: 'needle', path: 'build' } },
  { name: 'path: a folder with a trailing slash', input: { pattern: 'needle', path: 'src/' } },
  { name: 'path: one file, with an include it does not match', input: { pattern: 'needle', path: 'a.txt', include: '*.rs' } },
  { name: 'lines of 500 and 501 characters (the cut starts at 501)', input: { pattern: 'edgemarker' } },
  { name: 'end$ in multiline mode (CRLF)', input: { pattern: 'end$', multiline: true } },
  { name: 'multiline, case-insensitive, with context', input: { pattern: 'FOO\\s+BAR', multiline: true, case_sensitive: false, context_after: 1 } },
  { name: 'a raw byte with (?-u:\\xFF) (invalid UTF-8 shown replaced)', input: { pattern: '(?-u:\\xFF)' } },
  { name: 'inline flags (?i)', input: { pattern: '(?i)über' } },
  { name: 'Unicode word boundaries', input: { pattern: '\\b세계\\b' } },
]

/** Grep (claude dialect) inputs, with the revka input and model that describe them. */
const CLAUDE_CASES: { name: string; input: Record<string, unknown>; same: Search; model?: Model }[] = [
  { name: 'default mode is files_with_matches', input: { pattern: 'needle' }, same: { pattern: 'needle', output_mode: 'files_with_matches' } },
  {
    name: 'content with -n, -i, -C and glob',
    input: { pattern: 'todo', output_mode: 'content', '-n': true, '-i': true, '-C': 1, glob: '*.{rs,md,txt}' },
    same: { pattern: 'todo', case_sensitive: false, context_before: 1, context_after: 1, include: '*.{rs,md,txt}' },
  },
  { name: '-A/-B override -C', input: { pattern: 'hit', output_mode: 'content', '-C': 3, '-A': 1 }, same: { pattern: 'hit', context_before: 3, context_after: 1 } },
  {
    name: 'head_limit and offset in content mode',
    input: { pattern: 'needle', output_mode: 'content', head_limit: 4, offset: 3 },
    same: { pattern: 'needle', max_results: 4 },
    model: { offset: 3 },
  },
  {
    name: 'head_limit and offset in files mode',
    input: { pattern: 'needle', head_limit: 2, offset: 2 },
    same: { pattern: 'needle', output_mode: 'files_with_matches', max_results: 2 },
    model: { offset: 2 },
  },
  { name: 'count mode with type', input: { pattern: 'Visitor', output_mode: 'count', type: 'ts' }, same: { pattern: 'Visitor', output_mode: 'count', type: 'ts' } },
  {
    name: '-n false: no line numbers, with context',
    input: { pattern: 'hit', output_mode: 'content', '-n': false, '-C': 1 },
    same: { pattern: 'hit', context_before: 1, context_after: 1 },
    model: { lineNumbers: false },
  },
  {
    name: 'an offset past the last result',
    input: { pattern: 'needle', output_mode: 'content', offset: 500 },
    same: { pattern: 'needle' },
    model: { offset: 500 },
  },
  { name: 'path: one file', input: { pattern: 'needle', path: 'a-c.txt', output_mode: 'content' }, same: { pattern: 'needle', path: 'a-c.txt' } },
  {
    name: 'head_limit and offset with context (context stops at matches not shown)',
    input: { pattern: 'hit', output_mode: 'content', head_limit: 3, offset: 2, '-C': 4 },
    same: { pattern: 'hit', max_results: 3, context_before: 4, context_after: 4 },
    model: { offset: 2 },
  },
  {
    name: 'head_limit and offset in count mode',
    input: { pattern: 'needle', output_mode: 'count', head_limit: 4, offset: 1 },
    same: { pattern: 'needle', output_mode: 'count', max_results: 4 },
    model: { offset: 1 },
  },
]

const GLOB_PATTERNS = [
  '*.rs',
  '**/*.ts',
  'src/**/*.{js,ts}',
  '**/[ab]*.txt',
  'docs/*.md',
  '**/*',
  '*.log',
  '*',
  '.*',
  'src/**',
  '**/nested/*',
  '**/[!a-m]*.txt',
  '{src,docs}/**/*.md',
  '*.MD',
]
const GLOB_WALKS: [string, Walk][] = [
  ['', {}],
  [', hidden', { include_hidden: true }],
  [', ignored', { include_ignored: true }],
  [', hidden and ignored', { include_hidden: true, include_ignored: true }],
]

function mtime(dir: string, rel: string): number {
  const file = rel === BAD_NAME.toString('utf8') ? Buffer.concat([Buffer.from(`${dir}/`), BAD_NAME]) : path.join(dir, rel)
  return fs.statSync(file).mtimeMs
}

needs({ rg: HAS_RG }, import.meta.url).describe('fsgate search = ripgrep', () => {
  const variants: Variant[] = ['plain', 'dotgit', 'git']
  for (const variant of variants) {
    describe.skipIf(variant === 'git' && !HAS_GIT)(`a ${variant} tree`, () => {
      let tree: Tree
      beforeAll(() => {
        tree = makeTree(variant)
      })

      it('the tree exercises what it should (checked against rg, then fsgate)', async () => {
        const files = linesOf(rg(tree.dir, [...RG_SEARCH, '-l', 'needle']))
        const kept = ['keep.log', 'logs/keep.log', 'sub/secret.txt', '.env.example', 'important.tmp', 'a/b.txt', 'a-c.txt', 'a.txt', 'with space.txt']
        for (const f of [...kept, 'utf16.txt', 'utf16be.txt', 'bom8.txt', 'invalid.txt', BAD_NAME.toString('utf8')]) {
          expect(files).toContain(f)
        }
        const left = ['debug.log', 'secret.txt', 'cache.tmp', 'build/out.js', 'src/local_debug.rs', 'dot-ignored.txt', 'rg-ignored.txt', 'tmpcache/x.txt']
        for (const f of [...left, 'binary.txt', '.hidden.txt', 'link-a.txt', 'link-src/app.js', 'link-out/far.txt']) {
          expect(files).not.toContain(f)
        }
        expect(files.includes('excluded-by-info.txt')).toBe(variant === 'plain')
        expect(files.indexOf('a/b.txt')).toBeLessThan(files.indexOf('a-c.txt'))
        expect(files.indexOf('a-c.txt')).toBeLessThan(files.indexOf('a.txt'))
        if (variant === 'plain') {
          // Without --no-require-git, rg would not read .gitignore here: the flag matters.
          const requiring = linesOf(rg(tree.dir, [...RG_SEARCH.filter((f) => f !== '--no-require-git'), '-l', 'needle']))
          expect(requiring).toContain('debug.log')
        }
        const r = await tree.revka.call('content_search', { pattern: 'needle', output_mode: 'files_with_matches' })
        expect(r.data?.files).toEqual(files)
        expect(r.data?.binaryFiles).toBe(1)
      })

      describe('content_search (revka)', () => {
        for (const c of GREP_CASES) {
          it(c.name, async () => {
            const want = expectedSearch(tree.dir, c.input, c.model)
            if (!c.empty) expect(want.numFiles, 'rg found nothing: this case would test nothing').toBeGreaterThan(0)
            expectLikeRg(await tree.revka.call('content_search', c.input), want)
          })
        }

        it('type rust selects what `rg -t rust` selects (a type match lets a hidden file such as .hidden.rs through)', async () => {
          const input: Search = { pattern: 'fn', type: 'rust' }
          const want = expectedSearch(tree.dir, input)
          expect(want.files).toContain('.hidden.rs')
          expectLikeRg(await tree.revka.call('content_search', input), want)
        })

        it('include "!sub" leaves out the folder sub, as rg -g "!sub" does', async () => {
          const input: Search = { pattern: 'needle', include: '!sub' }
          const want = expectedSearch(tree.dir, input)
          expect(want.files).not.toContain('sub/secret.txt')
          expectLikeRg(await tree.revka.call('content_search', input), want)
        })

        it('the file with an early NUL is skipped entirely and counted as binary', async () => {
          const r = await tree.revka.call('content_search', { pattern: 'needle after$', include_ignored: true, include_hidden: true })
          expect(linesOf(rg(tree.dir, [...RG_SEARCH, '--no-ignore', '--hidden', 'needle after$']))).toEqual([])
          expect(ok(r)).toBe('No matches found for needle after$. (1 binary file skipped)')
          expect(r.data?.binaryFiles).toBe(1)
        })
      })

      describe('Grep (claude dialect)', () => {
        for (const c of CLAUDE_CASES) {
          it(c.name, async () => {
            const want = expectedSearch(tree.dir, c.same, { ...c.model, dialect: 'claude' })
            expect(want.numFiles).toBeGreaterThan(0)
            expectLikeRg(await tree.claude.call('Grep', c.input), want)
          })
        }
      })

      describe('glob_search (revka)', () => {
        for (const pattern of GLOB_PATTERNS) {
          for (const [label, walk] of GLOB_WALKS) {
            it(`${pattern}${label}`, async () => {
              const want = expectedGlob(tree.dir, pattern, walk)
              // Only .* with ignored files alone finds nothing: .env.example is visible
              // because .gitignore lets it in, and with ignore files off it is hidden again.
              const empty = pattern === '.*' && walk.include_ignored === true && walk.include_hidden !== true
              expect(want.length === 0, 'whether rg lists nothing').toBe(empty)
              const r = await tree.revka.call('glob_search', { pattern, ...walk })
              const hint = ' Files that ignore rules leave out and hidden files were not searched; set include_ignored or include_hidden to include them.'
              expect(ok(r)).toBe(empty ? `No files found matching ${pattern}.${hint}` : want.join('\n'))
              expect(r.data?.files).toEqual(want)
              expect(r.data?.numFiles).toBe(want.length)
            })
          }
        }

        it('symbolic links are not followed (to a file, to a folder, out of the workspace)', async () => {
          const want = expectedGlob(tree.dir, '**/*', { include_hidden: true, include_ignored: true })
          expect(want).toContain('a.txt')
          for (const link of ['link-a.txt', 'link-src/main.rs', 'link-out/far.txt']) expect(want).not.toContain(link)
          const r = await tree.revka.call('glob_search', { pattern: '**/*', include_hidden: true, include_ignored: true })
          expect(r.data?.files).toEqual(want)
        })

        it('path: a subfolder (the glob is relative to it; paths stay relative to the workspace)', async () => {
          const want = expectedGlob(path.join(tree.dir, 'src'), '**/*.ts', {}).map((f) => `src/${f}`)
          expect(want.length).toBeGreaterThan(0)
          const r = await tree.revka.call('glob_search', { pattern: '**/*.ts', path: 'src' })
          expect(r.data?.files).toEqual(want)
        })

        it('an absolute pattern searches from the folder before its first wildcard', async () => {
          const want = expectedGlob(path.join(tree.dir, 'src'), '**/*.ts', {}).map((f) => `src/${f}`)
          const r = await tree.revka.call('glob_search', { pattern: `${tree.dir}/src/**/*.ts` })
          expect(r.data?.files).toEqual(want)
        })

        it('limits.globResults keeps the first paths and counts the rest', async () => {
          const want = expectedGlob(tree.dir, '**/*', {})
          expect(want.length).toBeGreaterThan(5)
          const small = makeToolkit({ workspace: tree.dir, preset: 'revka', policy: { actionsPerHour: null }, limits: { globResults: 5 } }).createSession()
          const r = await small.call('glob_search', { pattern: '**/*' })
          expect(ok(r)).toBe(
            [...want.slice(0, 5), `(Showing files 1-5 of ${want.length}. Continue with offset=5, or use a more specific pattern or path.)`].join('\n'),
          )
          expect(r.data).toMatchObject({ files: want.slice(0, 5), numFiles: want.length, truncated: true })
        })
      })

      describe('where rg is run from, and paths through symlinks', () => {
        it('a workspace inside the tree reads the ignore files of the folders above it, as rg does', async () => {
          const logs = path.join(tree.dir, 'logs')
          const session = makeToolkit({ workspace: logs, preset: 'revka', policy: { actionsPerHour: null }, limits: WIDE }).createSession()
          for (const walk of GLOB_WALKS.map(([, w]) => w)) {
            const input: Search = { pattern: 'needle', output_mode: 'files_with_matches', ...walk }
            const want = expectedSearch(logs, input)
            expect(want.files).toContain('keep.log')
            expect(want.files.includes('nested.log')).toBe(walk.include_ignored === true)
            expectLikeRg(await session.call('content_search', input), want)
            expect((await session.call('glob_search', { pattern: '*.log', ...walk })).data?.files).toEqual(expectedGlob(logs, '*.log', walk))
          }
        })

        it('include globs with a path are relative to that folder: rg run inside it, not rg given the path', async () => {
          const src = path.join(tree.dir, 'src')
          const inside = expectedSearch(src, { pattern: 'fn', include: 'deep/**' })
          expect(inside.files).toEqual(['deep/nested/mod.rs', 'deep/nested/more.ts'])
          const r = await tree.revka.call('content_search', { pattern: 'fn', path: 'src', include: 'deep/**' })
          expect(ok(r)).toBe(inside.want.map((w) => `src/${w.line}`).join('\n'))
          // rg given the path matches its globs against `src/...` and finds nothing.
          expect(rg(tree.dir, [...RG_SEARCH, '-g', 'deep/**', '-e', 'fn', '--', 'src'])).toBe('')
        })

        it('a symlinked folder or file given as path is searched, shown by its real path (rg shows the link path)', async () => {
          const folder = linesOf(rg(tree.dir, [...RG_SEARCH, '-e', 'fn', '--', 'link-src']))
          expect(folder.length).toBeGreaterThan(0)
          expect(folder.every((l) => l.startsWith('link-src/'))).toBe(true)
          const r = await tree.revka.call('content_search', { pattern: 'fn', path: 'link-src' })
          expect(ok(r)).toBe(folder.map((l) => l.replace(/^link-src\//, 'src/')).join('\n'))
          const file = linesOf(rg(tree.dir, [...RG_SEARCH, '-e', 'needle', '--', 'link-a.txt']))
          expect(file).toEqual(['link-a.txt:1:needle a'])
          expect(ok(await tree.revka.call('content_search', { pattern: 'needle', path: 'link-a.txt' }))).toBe('a.txt:1:needle a')
        })

        it('a binary file named directly is skipped (rg reports "binary file matches")', async () => {
          const cli = rg(tree.dir, [...RG_SEARCH, '-e', 'needle', '--', 'binary.txt'])
          expect(cli).toMatch(/^binary\.txt: binary file matches/)
          const r = await tree.revka.call('content_search', { pattern: 'needle', path: 'binary.txt' })
          expect(ok(r)).toBe('No matches found for needle in binary.txt. (1 binary file skipped)')
          expect(r.data?.binaryFiles).toBe(1)
        })
      })

      describe('Glob (claude dialect): the same files, newest first', () => {
        for (const pattern of ['**/*', '*.ts', 'src/**/*.{js,ts}']) {
          it(pattern, async () => {
            const want = expectedGlob(tree.dir, pattern, {})
            expect(want.length).toBeGreaterThan(0)
            const r = await tree.claude.call('Glob', { pattern })
            const files = r.data?.files as string[]
            expect(textOf(r)).toBe(files.join('\n'))
            expect([...files].sort()).toEqual([...want].sort())
            const times = files.map((f) => mtime(tree.dir, f))
            for (let i = 1; i < times.length; i++) expect(times[i], `${files[i - 1]} then ${files[i]}`).toBeLessThanOrEqual(times[i - 1])
            // The times are all different, so the order is exactly newest first.
            expect(files).toEqual([...want].sort((a, b) => mtime(tree.dir, b) - mtime(tree.dir, a)))
          })
        }
      })

      describe('errors', () => {
        it('an invalid regex is INVALID_PATTERN with the regex error rg gives', async () => {
          const r = await tree.revka.call('content_search', { pattern: 'foo(' })
          const text = fails(r, 'INVALID_PATTERN')
          const cli = runRg(tree.dir, [...RG_SEARCH, '-e', 'foo('])
          expect(cli.status).toBe(2)
          // The error line is rg's; the pattern is shown as given, with the caret under
          // the column at fault (grep-regex 0.1.14 alone would show it wrapped, `(?:foo()`).
          const last = (s: string) => s.trim().split('\n').at(-1)
          expect(last(cli.stderr)).toBe('error: unclosed group')
          expect(last(String(r.data?.error))).toBe(last(cli.stderr))
          expect(text).toBe(`Invalid regular expression in pattern: ${r.data?.error}. Fix the pattern and retry.`)
          expect(text).toContain('    foo(\n       ^')
          expect(text).not.toContain('(?:')
        })

        it('an invalid glob is INVALID_PATTERN, as rg refuses it', async () => {
          expect(runRg(tree.dir, ['--no-config', '--files', '-g', 'src/[a-']).status).toBe(2)
          fails(await tree.revka.call('glob_search', { pattern: 'src/[a-' }), 'INVALID_PATTERN')
          fails(await tree.revka.call('content_search', { pattern: 'needle', include: 'src/[a-' }), 'INVALID_PATTERN')
        })

        it('a newline in a pattern without multiline is INVALID_PATTERN, as rg refuses it', async () => {
          const cli = runRg(tree.dir, [...RG_SEARCH, '-e', 'end\\nfoo'])
          expect(cli.status).toBe(2)
          expect(cli.stderr).toContain('is not allowed in a regex')
          const text = fails(await tree.revka.call('content_search', { pattern: 'end\\nfoo' }), 'INVALID_PATTERN')
          expect(text).toContain('is not allowed in a regex')
        })

        it('an unknown type is INVALID_INPUT, as rg refuses it', async () => {
          const cli = runRg(tree.dir, [...RG_SEARCH, '-t', 'nosuchtype', '-e', 'needle'])
          expect(cli.status).toBe(2)
          expect(cli.stderr).toContain('unrecognized file type: nosuchtype')
          fails(await tree.revka.call('content_search', { pattern: 'needle', type: 'nosuchtype' }), 'INVALID_INPUT')
        })

        it('an AbortSignal already aborted gives ABORTED', async () => {
          fails(await tree.revka.call('content_search', { pattern: 'needle' }, { signal: AbortSignal.abort() }), 'ABORTED')
          fails(await tree.revka.call('glob_search', { pattern: '**/*' }, { signal: AbortSignal.abort() }), 'ABORTED')
        })

        it('a path outside the workspace gives PATH_OUTSIDE_WORKSPACE (also through a symlink)', async () => {
          for (const p of ['..', tree.outside, 'link-out']) {
            fails(await tree.revka.call('content_search', { pattern: 'needle', path: p }), 'PATH_OUTSIDE_WORKSPACE')
            fails(await tree.revka.call('glob_search', { pattern: '*', path: p }), 'PATH_OUTSIDE_WORKSPACE')
          }
        })
      })
    })
  }

  describe('paging through a bigger tree: every page is the slice of rg\'s whole output', () => {
    let dir: string
    let claude: Session
    beforeAll(() => {
      // 120 files in 9 folders, 0 to 6 hits each at random lines, found in parallel.
      dir = tempDir('fsgate-rg-pages-')
      const rand = rng(7)
      for (let i = 0; i < 120; i++) {
        const lines = Array.from({ length: 5 + Math.floor(rand() * 30) }, () => (rand() < 0.12 ? `hit ${word(rand)}` : word(rand, 10)))
        put(dir, `d${i % 9}/${word(rand, 3)}-${i}.txt`, lines.join('\n') + '\n')
      }
      claude = makeToolkit({ workspace: dir, preset: 'claude-code', limits: WIDE }).createSession()
    })
    const modes: [string, Record<string, unknown>, Search][] = [
      ['content', { output_mode: 'content' }, { pattern: 'hit' }],
      ['content with -C2', { output_mode: 'content', '-C': 2 }, { pattern: 'hit', context_before: 2, context_after: 2 }],
      ['files_with_matches', { output_mode: 'files_with_matches' }, { pattern: 'hit', output_mode: 'files_with_matches' }],
      ['count', { output_mode: 'count' }, { pattern: 'hit', output_mode: 'count' }],
    ]
    for (const [label, grep, search] of modes) {
      it(`${label}, pages of 13`, async () => {
        const whole = expectedSearch(dir, search)
        const total = search.output_mode === undefined ? whole.numMatches : whole.numFiles
        expect(total).toBeGreaterThan(50)
        for (let offset = 0; offset < total + 13; offset += 13) {
          const want = expectedSearch(dir, { ...search, max_results: 13 }, { offset, dialect: 'claude' })
          expectLikeRg(await claude.call('Grep', { pattern: 'hit', ...grep, head_limit: 13, offset }), want)
        }
      })
    }
  })

  describe('version-control folders with hidden files included', () => {
    let dir: string
    let session: Session
    beforeAll(() => {
      dir = tempDir('fsgate-rg-vcs-')
      put(dir, 'a.txt', 'needle\n')
      put(dir, 'sub/.git/config', 'needle in a nested .git\n')
      put(dir, 'sub/.svn/entries', 'needle in .svn\n')
      put(dir, 'deep/er/.hg/store', 'needle in .hg\n')
      put(dir, 'sub/.github/ci.yml', 'needle in .github\n')
      session = makeToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
    })

    it('.git, .svn and .hg folders at any depth are left out; .github is not', async () => {
      const input: Search = { pattern: 'needle', include_hidden: true }
      const want = expectedSearch(dir, input)
      expect(want.files).toEqual(['a.txt', 'sub/.github/ci.yml'])
      expectLikeRg(await session.call('content_search', input), want)
      expect((await session.call('glob_search', { pattern: '**/*', include_hidden: true })).data?.files).toEqual(expectedGlob(dir, '**/*', { include_hidden: true }))
    })

    it('a .git file (the pointer of a worktree or submodule) is left out, as rg -g "!.git" leaves it out', async () => {
      const wt = tempDir('fsgate-rg-worktree-')
      put(wt, '.git', 'gitdir: /elsewhere/needle/.git/worktrees/wt\n')
      put(wt, 'a.txt', 'needle\n')
      const input: Search = { pattern: 'needle', include_hidden: true }
      const want = expectedSearch(wt, input)
      expect(want.files).toEqual(['a.txt'])
      const s = makeToolkit({ workspace: wt, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
      expectLikeRg(await s.call('content_search', input), want)
    })
  })

  describe('a repository nested in a tree that is not one', () => {
    it('.gitignore rules above it still apply, as in ripgrep 14 (ripgrep 13 stopped at the nested .git)', async () => {
      const dir = tempDir('fsgate-rg-nested-')
      put(dir, '.gitignore', '*.log\n')
      put(dir, '.ignore', 'dot-ignored.txt\n')
      put(dir, 'top.log', 'needle\n')
      put(dir, 'nested/.git/HEAD', 'ref: refs/heads/main\n')
      put(dir, 'nested/.git/needle.txt', 'needle inside a nested .git\n')
      put(dir, 'nested/.gitignore', 'own-ignored.txt\n')
      for (const name of ['debug.log', 'dot-ignored.txt', 'own-ignored.txt', 'kept.txt']) put(dir, `nested/${name}`, `needle in ${name}\n`)
      const cli = linesOf(rg(dir, [...RG_SEARCH, '-l', 'needle']))
      // ignore ≥ 0.4.2x only looks for repository roots when a repository is required,
      // so with --no-require-git the nested .git is no boundary; ignore 0.4.18 (rg 13) made it one.
      const want = RG_MAJOR >= 14 ? cli : cli.filter((f) => f !== 'nested/debug.log')
      if (RG_MAJOR < 14) expect(cli).toContain('nested/debug.log')
      expect(want).toEqual(['nested/kept.txt'])
      const session = makeToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
      expect((await session.call('content_search', { pattern: 'needle', output_mode: 'files_with_matches' })).data?.files).toEqual(want)
      // The nested .git is never searched, even with hidden files.
      const hidden = linesOf(rg(dir, [...RG_SEARCH, ...walkFlags({ include_hidden: true }), '-l', 'needle'])).filter((f) => RG_MAJOR >= 14 || f !== 'nested/debug.log')
      expect(hidden).toEqual(['nested/kept.txt'])
      const all = await session.call('content_search', { pattern: 'needle', output_mode: 'files_with_matches', include_hidden: true })
      expect(all.data?.files).toEqual(hidden)
    })
  })

  describe('a file with a NUL after the first 64 KiB (a documented difference)', () => {
    it('fsgate drops all its matches; rg prints the ones before the NUL', async () => {
      const dir = tempDir('fsgate-rg-late-nul-')
      put(dir, 'late.txt', Buffer.concat([Buffer.from('needle early\n'), Buffer.alloc(100 * 1024, 'a\n'), Buffer.from('\0needle late\n')]))
      const r = await makeToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null } }).createSession().call('content_search', { pattern: 'needle' })
      expect(ok(r)).toBe('No matches found for needle. (1 binary file skipped)')
      expect(r.data?.binaryFiles).toBe(1)
      expect(linesOf(rg(dir, [...RG_SEARCH, 'needle']))[0]).toBe('late.txt:1:needle early')
    })
  })

  // The project's own dependencies: real trees, real sizes. rg and fsgate both start in
  // the package folder, so both read the same parent ignore files: /work/main/.gitignore
  // lists node_modules/ and dist/, so vitest's code (in dist/) is searched with
  // include_ignored, and its top-level .d.ts files without.
  const nodeModules = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules')
  const packages: [string, Walk][] = [
    ['zod', {}],
    ['vitest', { include_ignored: true }],
  ]
  for (const [pkg, walk] of packages) {
    const dir = path.join(nodeModules, pkg)
    describe.skipIf(!fs.existsSync(dir))(`node_modules/${pkg}${walk.include_ignored ? ', ignored files included' : ''}`, () => {
      let session: Session
      beforeAll(() => {
        session = makeToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null }, limits: WIDE }).createSession()
      })
      const cases: Case[] = [
        { name: '\\w+(Visitor|Issue)\\b', input: { pattern: '\\w+(Visitor|Issue)\\b' } },
        { name: 'export function', input: { pattern: 'export (function|declare)', max_results: 1000 } },
        { name: 'TODO with context -C2', input: { pattern: 'TODO', context_before: 2, context_after: 2 } },
        { name: 'todo -i, files mode', input: { pattern: 'todo', case_sensitive: false, output_mode: 'files_with_matches' } },
        { name: 'export, count mode', input: { pattern: 'export', output_mode: 'count' } },
        { name: 'include *.d.ts', input: { pattern: 'export', include: '*.d.ts', output_mode: 'files_with_matches' } },
        { name: 'type ts', input: { pattern: 'interface \\w+', type: 'ts', output_mode: 'count' } },
        { name: 'type js, include_hidden', input: { pattern: 'function', type: 'js', output_mode: 'files_with_matches', include_hidden: true } },
        { name: 'max_results 50 with context', input: { pattern: 'function', max_results: 50, context_after: 1 } },
      ]
      for (const c of cases) {
        it(c.name, async () => {
          const input = { ...c.input, ...walk }
          const want = expectedSearch(dir, input)
          expect(want.numFiles, 'rg found nothing: this case would test nothing').toBeGreaterThan(0)
          expectLikeRg(await session.call('content_search', input), want)
        })
      }
      it('the default count is 1,000 matching lines (the token budget aside: see budget.test.ts)', async () => {
        const input = { pattern: '[a-z]{3}', ...walk }
        const want = expectedSearch(dir, input, { limit: 1000 })
        expect(want.truncated).toBe(true)
        const limits = { resultTokens: 10_000_000, searchPageTokens: 10_000_000, searchOutputBytes: 1 << 30 }
        const defaults = makeToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null }, limits }).createSession()
        expectLikeRg(await defaults.call('content_search', input), want)
      })
      it('without ignored files, the parent .gitignore leaves out the same files for both', async () => {
        const want = expectedSearch(dir, { pattern: 'export', output_mode: 'files_with_matches' })
        expectLikeRg(await session.call('content_search', { pattern: 'export', output_mode: 'files_with_matches' }), want)
      })
      it('Glob lists the 100 newest files (ties by path) and counts the rest', async () => {
        const all = expectedGlob(dir, '**/*', walk)
        expect(all.length).toBeGreaterThan(100)
        const time = (f: string) => fs.statSync(path.join(dir, f), { bigint: true }).mtimeNs
        const byPath = (a: string, b: string) => {
          const [x, y] = [a.split('/'), b.split('/')]
          for (let i = 0; i < Math.min(x.length, y.length); i++) {
            const c = Buffer.compare(Buffer.from(x[i]), Buffer.from(y[i]))
            if (c !== 0) return c
          }
          return x.length - y.length
        }
        const times = new Map(all.map((f) => [f, time(f)]))
        const newest = [...all].sort((a, b) => {
          const [ta, tb] = [times.get(a)!, times.get(b)!]
          return ta === tb ? byPath(a, b) : ta > tb ? -1 : 1
        })
        const claude = makeToolkit({ workspace: dir, preset: 'claude-code' }).createSession()
        const r = await claude.call('Glob', { pattern: '**/*', ...walk })
        expect(ok(r)).toBe(
          [...newest.slice(0, 100), `(Showing files 1-100 of ${all.length.toLocaleString('en-US')}. Continue with offset=100, or use a more specific pattern or path.)`].join('\n'),
        )
      })
      for (const pattern of ['**/*.d.ts', '*.js', '**/*']) {
        it(`glob ${pattern}`, async () => {
          const want = expectedGlob(dir, pattern, walk)
          expect(want.length).toBeGreaterThan(0)
          const r = await session.call('glob_search', { pattern, ...walk })
          expect(r.data?.files).toEqual(want)
        })
      }
    })
  }
})

describe.runIf(INDEX && HAS_RG)('the live index', () => {
  it('answered the searches of this run', () => {
    expect(fromIndex).toBeGreaterThan(100)
  })
})
