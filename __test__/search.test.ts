/**
 * glob_search / Glob and content_search / Grep through `session.call`: the dialects'
 * fields and defaults, ordering, limits and pagination, the notes a model reads, and
 * every error path. (Equality with the ripgrep CLI is search-rg.test.ts.)
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit, type Session } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, tempDir, textOf } from './helpers.js'

let dir: string
let revka: Session
let claude: Session

beforeAll(() => {
  dir = tempDir('fsgate-search-')
  put(dir, '.gitignore', 'dist/\n*.log\n')
  put(dir, 'src/main.rs', 'fn main() {\n    parse_config();\n}\n')
  put(dir, 'src/config.rs', '// config\npub fn parse_config() -> Config {\n    Config::default()\n}\n')
  put(dir, 'src/ui/view.ts', 'export class TreeVisitor {}\nexport class NodeVisitor {}\n')
  put(dir, 'src/ui/view.test.ts', "import { TreeVisitor } from './view'\n")
  put(dir, 'docs/guide.md', '# Guide\nparse_config reads the file.\n')
  put(dir, 'dist/bundle.js', 'function parse_config() {}\n')
  put(dir, 'debug.log', 'parse_config failed\n')
  put(dir, '.hidden/secret.txt', 'parse_config hidden\n')
  put(dir, '.git/HEAD', 'parse_config in git\n')
  put(dir, 'bin/data.bin', Buffer.from('parse_config\0\x01\x02'))
  put(dir, 'long.txt', `${'x'.repeat(2000)} parse_config ${'y'.repeat(2000)}\n`)
  // Distinct mtimes, oldest first, for Glob's newest-first order.
  const t = Date.now() / 1000
  for (const [i, f] of ['src/main.rs', 'src/config.rs', 'src/ui/view.ts', 'src/ui/view.test.ts'].entries()) fs.utimesSync(path.join(dir, f), t - 100 + i, t - 100 + i)
  revka = createToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
  claude = createToolkit({ workspace: dir, preset: 'claude-code' }).createSession()
})

afterAll(removeTempDirs)

describe('glob_search (revka)', () => {
  it('lists matching files sorted by path, relative to the workspace', async () => {
    const r = await revka.call('glob_search', { pattern: '**/*.rs' })
    expect(ok(r)).toBe('src/config.rs\nsrc/main.rs')
    expect(r.data).toMatchObject({ files: ['src/config.rs', 'src/main.rs'], numFiles: 2, truncated: false })
  })

  it('a pattern without a slash matches names at any depth; path narrows the walk', async () => {
    expect(ok(await revka.call('glob_search', { pattern: '*.ts' }))).toBe('src/ui/view.test.ts\nsrc/ui/view.ts')
    expect(ok(await revka.call('glob_search', { pattern: '*.ts', path: 'src/ui' }))).toBe('src/ui/view.test.ts\nsrc/ui/view.ts')
    expect(ok(await revka.call('glob_search', { pattern: 'src/*.{rs,md}' }))).toBe('src/config.rs\nsrc/main.rs')
  })

  it('skips ignored and hidden files unless asked, and never lists .git', async () => {
    const plain = ok(await revka.call('glob_search', { pattern: '**/*' }))
    expect(plain).not.toMatch(/dist\/|debug\.log|\.hidden|\.git\//)
    const all = ok(await revka.call('glob_search', { pattern: '**/*', include_hidden: true, include_ignored: true }))
    expect(all.split('\n')).toEqual(expect.arrayContaining(['dist/bundle.js', 'debug.log', '.hidden/secret.txt', '.gitignore']))
    expect(all).not.toContain('.git/HEAD')
  })

  it('an absolute pattern is split into a folder and a glob anchored there', async () => {
    expect(ok(await revka.call('glob_search', { pattern: `${dir}/src/**/*.rs` }))).toBe('src/config.rs\nsrc/main.rs')
    expect(ok(await revka.call('glob_search', { pattern: `${dir}/src/*.ts` }))).toMatch(/^No files found/)
    expect(ok(await revka.call('glob_search', { pattern: `${dir}/src/ui/*.ts` }))).toBe('src/ui/view.test.ts\nsrc/ui/view.ts')
    expect(ok(await revka.call('glob_search', { pattern: `${dir}/src/ui/*.ts`, path: 'src' }))).toBe('src/ui/view.test.ts\nsrc/ui/view.ts')
    expect(fails(await revka.call('glob_search', { pattern: `${dir}/docs/*.md`, path: 'src' }), 'INVALID_INPUT')).toMatch(/is outside path src/)
  })

  it('caps results at limits.globResults and says how many there are', async () => {
    const s = createToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null }, limits: { globResults: 2 } }).createSession()
    const r = await s.call('glob_search', { pattern: '**/*' })
    const lines = ok(r).split('\n')
    expect(lines.slice(0, 2)).toEqual(['bin/data.bin', 'docs/guide.md'])
    expect(lines[2]).toMatch(/^\(Showing files 1-2 of 7\. Continue with offset=2, or use a more specific pattern or path/)
    expect(r.data).toMatchObject({ numFiles: 7, truncated: true })
  })

  it('no match says so and how to widen the search', async () => {
    const r = await revka.call('glob_search', { pattern: '**/*.py' })
    expect(ok(r)).toMatch(/^No files found matching \*\*\/\*\.py\. .*include_ignored/)
    expect(r.data).toMatchObject({ files: [], numFiles: 0 })
  })

  it('errors: bad glob, missing folder (with a suggestion), a file as path, outside the workspace', async () => {
    expect(fails(await revka.call('glob_search', { pattern: 'src/[a-' }), 'INVALID_PATTERN')).toMatch(/^Invalid glob in pattern: invalid glob "src\/\[a-"/)
    expect(fails(await revka.call('glob_search', { pattern: '*', path: 'scr' }), 'NOT_FOUND')).toMatch(/Did you mean src\?/)
    expect(fails(await revka.call('glob_search', { pattern: '*', path: 'src/main.rs' }), 'INVALID_INPUT')).toMatch(/is a file, not a folder/)
    expect(fails(await revka.call('glob_search', { pattern: '*', path: '/etc' }), 'PATH_OUTSIDE_WORKSPACE')).toMatch(/outside the workspace/)
    expect(fails(await revka.call('glob_search', { pattern: '' }), 'INVALID_INPUT')).toMatch(/pattern/)
    expect(fails(await revka.call('glob_search', { pattern: '*', bogus: 1 }), 'INVALID_INPUT')).toMatch(/unknown field 'bogus'/)
  })

  it('searches an allowedPaths root, shown with absolute paths', async () => {
    const extra = tempDir('fsgate-search-extra-')
    put(extra, 'lib/x.rs', 'fn x() {}\n')
    const s = createToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null, allowedPaths: [extra] } }).createSession()
    expect(ok(await s.call('glob_search', { pattern: '*.rs', path: extra }))).toBe(path.join(extra, 'lib/x.rs'))
  })
})

describe('Glob (claude)', () => {
  it('lists the most recently modified first', async () => {
    expect(ok(await claude.call('Glob', { pattern: '**/*.{rs,ts}' }))).toBe('src/ui/view.test.ts\nsrc/ui/view.ts\nsrc/config.rs\nsrc/main.rs')
  })

  it('shows 100 paths by default, as Claude Code does; a host limit wins', async () => {
    const many = tempDir('fsgate-search-many-')
    for (let i = 0; i < 150; i++) put(many, `f${String(i).padStart(3, '0')}.txt`, '')
    const r = await createToolkit({ workspace: many, preset: 'claude-code' }).createSession().call('Glob', { pattern: '*.txt' })
    expect(r.data).toMatchObject({ numFiles: 150, truncated: true })
    expect(r.data?.files).toHaveLength(100)
    const host = await createToolkit({ workspace: many, preset: 'claude-code', limits: { globResults: 120 } }).createSession().call('Glob', { pattern: '*.txt' })
    expect(host.data?.files).toHaveLength(120)
  })

  it('takes "undefined" as a path to mean the default, as models sometimes send it', async () => {
    expect(ok(await claude.call('Glob', { pattern: '*.md', path: 'undefined' }))).toBe('docs/guide.md')
  })
})

describe('content_search (revka)', () => {
  it('defaults to content mode: path:line:text sorted by path then line', async () => {
    const r = await revka.call('content_search', { pattern: 'parse_config' })
    expect(ok(r).split('\n').slice(0, 3)).toEqual(['docs/guide.md:2:parse_config reads the file.', 'long.txt:1:' + ok(r).split('\n')[1].slice('long.txt:1:'.length), 'src/config.rs:2:pub fn parse_config() -> Config {'])
    expect(ok(r)).toContain('src/main.rs:2:    parse_config();')
    expect(r.data).toMatchObject({ mode: 'content', numFiles: 4, numMatches: 4, shown: 4, truncated: false, binaryFiles: 1, cutLines: 1 })
  })

  it('cuts a long line around its match and says so', async () => {
    const r = await revka.call('content_search', { pattern: 'parse_config', include: 'long.txt' })
    const [line, note] = ok(r).split('\n')
    expect(line).toMatch(/^long\.txt:1:…x+ parse_config y+… \[line of 4014 chars cut\]$/)
    expect(note).toMatch(/1 line longer than 500 characters was cut around the match/)
  })

  it('include, type and case_sensitive filter', async () => {
    expect(ok(await revka.call('content_search', { pattern: 'visitor', include: '*.ts', case_sensitive: false, output_mode: 'files_with_matches' }))).toBe(
      'Found 2 files\nsrc/ui/view.test.ts\nsrc/ui/view.ts',
    )
    expect(ok(await revka.call('content_search', { pattern: 'Visitor', include: '*.ts !*.test.ts', output_mode: 'files_with_matches' }))).toBe('Found 1 file\nsrc/ui/view.ts')
    expect(ok(await revka.call('content_search', { pattern: 'parse_config', type: 'rust', output_mode: 'files_with_matches' }))).toBe(
      'Found 2 files\nsrc/config.rs\nsrc/main.rs',
    )
    const none = await revka.call('content_search', { pattern: 'visitor' })
    expect(ok(none)).toBe('No matches found for visitor. (1 binary file skipped)')
  })

  it('count mode counts matching lines per file', async () => {
    const r = await revka.call('content_search', { pattern: '\\w+Visitor\\b', output_mode: 'count' })
    expect(ok(r)).toBe('Found 3 matches in 2 files\nsrc/ui/view.test.ts:1\nsrc/ui/view.ts:2')
    expect(r.data).toMatchObject({ files: ['src/ui/view.test.ts', 'src/ui/view.ts'], counts: [1, 2] })
  })

  it('context lines and multiline', async () => {
    expect(ok(await revka.call('content_search', { pattern: 'Config::default', context_before: 1, context_after: 1 }))).toBe(
      'src/config.rs-2-pub fn parse_config() -> Config {\nsrc/config.rs:3:    Config::default()\nsrc/config.rs-4-}',
    )
    expect(ok(await revka.call('content_search', { pattern: 'main\\(\\) \\{\\s+parse', multiline: true }))).toBe('src/main.rs:1:fn main() {\nsrc/main.rs:2:    parse_config();')
  })

  it('max_results counts matching lines, not context, and says there are more', async () => {
    const r = await revka.call('content_search', { pattern: 'parse_config', max_results: 2, context_after: 1 })
    const text = ok(r)
    expect(text.split('\n').filter((l) => /^[^:]+:\d+:/.test(l))).toHaveLength(2)
    expect(text).toMatch(/\(Showing matching lines 1-2 of \d+\. Continue with offset=2, or narrow the pattern, path or glob\.\)\n/m)
    expect(r.data).toMatchObject({ shown: 2, truncated: true })
  })

  it('a file as path searches that file, even an ignored one', async () => {
    expect(ok(await revka.call('content_search', { pattern: 'failed', path: 'debug.log' }))).toBe('debug.log:1:parse_config failed')
  })

  it('hidden and ignored files on request; .git never', async () => {
    const r = await revka.call('content_search', { pattern: 'parse_config', include_hidden: true, include_ignored: true, output_mode: 'files_with_matches' })
    expect(r.data?.files).toEqual(['.hidden/secret.txt', 'debug.log', 'dist/bundle.js', 'docs/guide.md', 'long.txt', 'src/config.rs', 'src/main.rs'])
  })

  it('errors: invalid regex with its message, unknown type, missing path, outside', async () => {
    const bad = fails(await revka.call('content_search', { pattern: 'foo(' }), 'INVALID_PATTERN')
    expect(bad).toMatch(/unclosed group/)
    expect(fails(await revka.call('content_search', { pattern: 'x', type: 'klingon' }), 'INVALID_INPUT')).toMatch(/Unknown file type 'klingon'/)
    expect(fails(await revka.call('content_search', { pattern: 'x', path: 'nope/' }), 'NOT_FOUND')).toMatch(/Path does not exist: nope\//)
    expect(fails(await revka.call('content_search', { pattern: 'x', path: '..' }), 'PATH_OUTSIDE_WORKSPACE')).toBeTruthy()
    expect(fails(await revka.call('content_search', { pattern: 'x', max_results: 0 }), 'INVALID_INPUT')).toMatch(/max_results/)
  })

  it('a bad include glob names include, not the regex; a newline asks for multiline', async () => {
    const r = await revka.call('content_search', { pattern: 'x', include: 'src/[a-' })
    expect(fails(r, 'INVALID_PATTERN')).toMatch(/^Invalid glob in include: invalid glob "src\/\[a-".*Fix include and retry\.$/)
    expect(r.data).toMatchObject({ field: 'include' })
    expect(fails(await claude.call('Grep', { pattern: 'x', glob: '[' }), 'INVALID_PATTERN')).toMatch(/Invalid glob in glob/)
    expect(fails(await revka.call('content_search', { pattern: 'main\\n' }), 'INVALID_PATTERN')).toMatch(/set multiline: true\.$/)
  })

  it('context is capped at 100 lines; no match still tells of binary files skipped', async () => {
    expect(fails(await revka.call('content_search', { pattern: 'x', context_after: 101 }), 'INVALID_INPUT')).toMatch(/context_after/)
    expect(ok(await revka.call('content_search', { pattern: 'parse_config', path: 'bin' }))).toBe('No matches found for parse_config in bin. (1 binary file skipped)')
  })

  it('a report stops at limits.searchOutputBytes, before a match, and says so', async () => {
    const many = tempDir('fsgate-search-budget-')
    put(many, 'a.txt', Array.from({ length: 500 }, (_, i) => `hit ${i} ${'w'.repeat(60)}`).join('\n'))
    const s = createToolkit({ workspace: many, preset: 'revka', policy: { actionsPerHour: null }, limits: { searchOutputBytes: 4096 } }).createSession()
    const r = await s.call('content_search', { pattern: 'hit' })
    const lines = ok(r).split('\n')
    const hits = lines.filter((l) => l.startsWith('a.txt:'))
    expect(hits.length).toBeGreaterThan(40)
    expect(hits.length).toBeLessThan(70)
    expect(r.data).toMatchObject({ shown: hits.length, truncated: true })
    expect(lines.at(-1)).toBe(`(Showing matching lines 1-${hits.length} of 500 (the page reached its limit of 4 KiB or 10,000 tokens). Continue with offset=${hits.length}, or narrow the pattern, path or glob.)`)
  })

  it('files mode does not claim a match count', async () => {
    const r = await revka.call('content_search', { pattern: 'parse_config', output_mode: 'files_with_matches' })
    expect(r.data).not.toHaveProperty('numMatches')
  })

  it('an aborted signal gives ABORTED', async () => {
    const r = await revka.call('content_search', { pattern: 'x' }, { signal: AbortSignal.abort() })
    fails(r, 'ABORTED')
  })
})

describe('Grep (claude)', () => {
  it('defaults to files_with_matches', async () => {
    expect(ok(await claude.call('Grep', { pattern: 'parse_config' }))).toBe('Found 4 files\ndocs/guide.md\nlong.txt\nsrc/config.rs\nsrc/main.rs')
  })

  it('takes Claude Code\'s names: glob, -i, -n, -C, -A, -B', async () => {
    expect(ok(await claude.call('Grep', { pattern: 'VISITOR', glob: '*.ts', '-i': true, output_mode: 'content', '-n': false }))).toBe(
      'src/ui/view.test.ts:import { TreeVisitor } from \'./view\'\nsrc/ui/view.ts:export class TreeVisitor {}\nsrc/ui/view.ts:export class NodeVisitor {}',
    )
    expect(ok(await claude.call('Grep', { pattern: 'Config::default', output_mode: 'content', '-C': 1 }))).toBe(
      'src/config.rs-2-pub fn parse_config() -> Config {\nsrc/config.rs:3:    Config::default()\nsrc/config.rs-4-}',
    )
    expect(ok(await claude.call('Grep', { pattern: 'Config::default', output_mode: 'content', '-C': 1, '-A': 0 }))).toBe(
      'src/config.rs-2-pub fn parse_config() -> Config {\nsrc/config.rs:3:    Config::default()',
    )
  })

  it('head_limit and offset page through results', async () => {
    const first = await claude.call('Grep', { pattern: 'parse_config', head_limit: 2 })
    expect(ok(first)).toBe('Found 4 files\ndocs/guide.md\nlong.txt\n(Showing files 1-2 of 4. Continue with offset=2, or narrow the pattern, path or glob.)')
    const second = await claude.call('Grep', { pattern: 'parse_config', head_limit: 2, offset: 2 })
    expect(ok(second)).toBe('Found 4 files\nsrc/config.rs\nsrc/main.rs')
    const past = await claude.call('Grep', { pattern: 'parse_config', offset: 10 })
    expect(ok(past)).toMatch(/No matches found for parse_config \(4 files matched, but offset 10 is past the last; continue with offset=0\)/)
  })

  it('content offset skips matching lines', async () => {
    const r = await claude.call('Grep', { pattern: 'Visitor', output_mode: 'content', offset: 1, head_limit: 1 })
    expect(ok(r).split('\n')[0]).toBe('src/ui/view.ts:1:export class TreeVisitor {}')
  })
})

describe('a large search', () => {
  let big: string
  beforeAll(() => {
    big = tempDir('fsgate-search-big-')
    for (let d = 0; d < 40; d++) for (let f = 0; f < 100; f++) put(big, `d${d}/f${f}.txt`, `line one\nneedle ${d}-${f}\nline three\n`.repeat(20))
  })

  it('leaves the JS thread free while it runs', async () => {
    const s = createToolkit({ workspace: big, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
    let ticks = 0
    let worst = 0
    let last = performance.now()
    const timer = setInterval(() => {
      const t = performance.now()
      worst = Math.max(worst, t - last)
      last = t
      ticks++
    }, 1)
    const r = await s.call('content_search', { pattern: 'needle \\d+-\\d+', output_mode: 'count' })
    clearInterval(timer)
    expect(r.data).toMatchObject({ numFiles: 4000, numMatches: 80_000 })
    expect(ticks).toBeGreaterThan(0)
    expect(worst).toBeLessThan(200)
    expect(textOf(r)).toMatch(/^Found 80,000 matches in 4,000 files/)
  })

  it('stops, walk and all, when its AbortSignal fires; the next search runs whole', async () => {
    const s = createToolkit({ workspace: big, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
    const controller = new AbortController()
    const pending = s.call('content_search', { pattern: 'needle \\d+-\\d+', output_mode: 'count' }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 2)
    fails(await pending, 'ABORTED')
    const ranked = s.call('semantic_code_search', { query: 'needle line', backend: 'literal' }, { signal: AbortSignal.timeout(2) })
    fails(await ranked, 'ABORTED')
    expect((await s.call('content_search', { pattern: 'needle \\d+-\\d+', output_mode: 'count' })).data).toMatchObject({ numFiles: 4000 })
  })
})

describe('typed methods', () => {
  it('session.glob, session.grep and session.search return output or throw the error class', async () => {
    expect(textOf(await revka.glob({ pattern: '*.rs' }))).toBe('src/config.rs\nsrc/main.rs')
    expect(textOf(await revka.grep({ pattern: 'fn main', output_mode: 'files_with_matches' }))).toBe('Found 1 file\nsrc/main.rs')
    expect((await revka.search({ query: 'parse config', backend: 'literal' })).data).toMatchObject({ backend: 'builtin' })
    await expect(revka.grep({ pattern: 'a(' })).rejects.toMatchObject({ name: 'InvalidInputError', code: 'INVALID_PATTERN' })
    await expect(revka.glob({ pattern: '*', path: 'nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })
})
