/**
 * list_directory and file_info: entries sorted, folders marked, trees to a depth, sizes,
 * the searches' ignore and hidden rules (the same view as `rg --files`), pages with a
 * visible continuation, gemini-cli's shape, and every escape refused.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import type { ListedEntry } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, tempDir, workspace } from './helpers.js'

afterAll(removeTempDirs)

function tree(dir: string): void {
  put(dir, '.gitignore', 'build/\n*.log\n!keep.log\n')
  put(dir, 'README.md', '# hi\n')
  put(dir, 'a.log', 'x')
  put(dir, 'keep.log', 'kept')
  put(dir, 'build/out.o', 'bin')
  put(dir, 'src/main.ts', 'export {}\n')
  put(dir, 'src/lib/util.ts', 'export const x = 1\n')
  put(dir, 'src/lib/.ignore', 'generated.ts\n')
  put(dir, 'src/lib/generated.ts', '//\n')
  put(dir, 'src/.hidden/secret.ts', '')
  put(dir, '.env', 'TOKEN=1')
  put(dir, 'docs/guide.md', 'guide')
  put(dir, 'docs/deep/er/est.md', 'deep')
  put(dir, 'node_modules/pkg/index.js', '')
  put(dir, '.git/HEAD', 'ref: refs/heads/main\n')
}

describe('list_directory', () => {
  it('lists one folder sorted, folders marked, with the searches\' rules and switches', async () => {
    const { dir, session } = workspace()
    tree(dir)
    expect(ok(await session.call('list_directory', {}))).toBe(['README.md', 'docs/', 'keep.log', 'node_modules/', 'src/'].join('\n'))
    const all = ok(await session.call('list_directory', { include_hidden: true, include_ignored: true }))
    expect(all.split('\n')).toEqual(['.env', '.gitignore', 'README.md', 'a.log', 'build/', 'docs/', 'keep.log', 'node_modules/', 'src/'])
    const sized = ok(await session.call('list_directory', { path: 'src/lib', sizes: true }))
    expect(sized).toBe('util.ts (19 B)')
    expect(ok(await session.call('list_directory', { ignore: ['*.md', 'node_modules'] }))).toBe('docs/\nkeep.log\nsrc/')
  })

  it('shows a tree to a depth, each folder before what it holds', async () => {
    const { dir, session } = workspace()
    tree(dir)
    const r = await session.call('list_directory', { path: 'docs', depth: 3 })
    expect(ok(r)).toBe(['deep/', '  er/', '    est.md', 'guide.md'].join('\n'))
    const entries = r.data?.entries as ListedEntry[]
    expect(entries.map((e) => [e.path, e.type, e.depth])).toEqual([
      ['deep', 'dir', 1],
      ['deep/er', 'dir', 2],
      ['deep/er/est.md', 'file', 3],
      ['guide.md', 'file', 1],
    ])
    expect(r.data).toMatchObject({ total: 4, dirs: 2, files: 2, truncated: false })
  })

  it('sees exactly the files rg --files sees', async () => {
    const rg = spawnSync('rg', ['--version'])
    if (rg.status !== 0) {
      if (process.env.CI === 'true') throw new Error('rg is required in CI')
      console.warn('skipped: rg is not installed')
      return
    }
    const { dir, session } = workspace()
    tree(dir)
    for (const flags of [[], ['--hidden'], ['--no-ignore'], ['--hidden', '--no-ignore']]) {
      const expected = spawnSync('rg', ['--files', '--no-require-git', ...flags, '-g', '!.git'], { cwd: dir, encoding: 'utf8' })
        .stdout.trim()
        .split('\n')
        .sort()
      const r = await session.call('list_directory', { depth: 64, include_hidden: flags.includes('--hidden'), include_ignored: flags.includes('--no-ignore') })
      const files = (r.data as { entries: ListedEntry[] }).entries.filter((e) => e.type === 'file').map((e) => e.path)
      expect(files.sort(), flags.join(' ')).toEqual(expected)
    }
  })

  it("negated folder globs leave the folder out, as rg -g '!dir/' and '!dir/**' do, in list_directory, content_search and Grep", async () => {
    const { dir, session } = workspace()
    for (const f of ['dist/a.js', 'dist/sub/b.js', 'src/dist/c.js', 'src/d.js', 'src/dist.js', 'e.js']) put(dir, f, 'hit\n')
    const rg = spawnSync('rg', ['--version']).status === 0
    const cases: Array<[string, string[]]> = [
      ['dist/', ['e.js', 'src/d.js', 'src/dist.js']],
      ['dist/**', ['e.js', 'src/d.js', 'src/dist.js', 'src/dist/c.js']],
      ['src/dist/', ['dist/a.js', 'dist/sub/b.js', 'e.js', 'src/d.js', 'src/dist.js']],
    ]
    for (const [glob, files] of cases) {
      if (rg) expect(spawnSync('rg', ['--files', '-g', `!${glob}`], { cwd: dir, encoding: 'utf8' }).stdout.trim().split('\n').sort(), `rg -g !${glob}`).toEqual(files)
      const listed = (await session.call('list_directory', { depth: 10, ignore: [glob] })).data as { entries: ListedEntry[] }
      expect(listed.entries.filter((e) => e.type === 'file').map((e) => e.path).sort(), `list_directory ignore ${glob}`).toEqual(files)
      // The folder itself is not listed either (an empty folder would say it holds nothing).
      const folders = listed.entries.filter((e) => e.type === 'dir').map((e) => e.path)
      expect(folders.some((f) => f === glob.replace(/\/(\*\*)?$/, '')), `list_directory ignore ${glob}: ${folders.join(' ')}`).toBe(false)
      const searched = (await session.call('content_search', { pattern: 'hit', output_mode: 'files_with_matches', include: `!${glob}` })).data as { files: string[] }
      expect([...searched.files].sort(), `content_search include !${glob}`).toEqual(files)
    }
  })

  it('pages with a visible continuation, and every page together is the whole', async () => {
    const { dir, session } = workspace()
    for (let i = 0; i < 25; i++) put(dir, `f${String(i).padStart(2, '0')}.txt`, '')
    const first = ok(await session.call('list_directory', { limit: 10 }))
    expect(first.endsWith('(Showing entries 1-10 of 25; continue with offset=10.)')).toBe(true)
    const seen: string[] = []
    for (let offset = 0; offset < 25; offset += 10) {
      const r = await session.call('list_directory', { limit: 10, offset })
      seen.push(...(r.data as { entries: ListedEntry[] }).entries.map((e) => e.path))
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`))
    expect(ok(await session.call('list_directory', { offset: 30 }))).toMatch(/offset 30 is past the last of the 25 entries/)
    // A page is held to the token limit too (names of about 50 tokens; 750 for a page at the floor).
    for (let i = 0; i < 25; i++) put(dir, `long/${'a-rather-long-file-name-'.repeat(8)}${i}.txt`, '')
    const small = workspace({ limits: { resultTokens: 1_000 } }, dir)
    const cut = ok(await small.session.call('list_directory', { path: 'long' }))
    expect(cut).toMatch(/\(Showing entries 1-(\d+) of 25; continue with offset=\1\.\)$/)
    expect(cut.split('\n').length).toBeLessThan(25)
  })

  it('refuses every escape: .., absolute paths outside, links out; a link is listed, not followed', async () => {
    const { dir, session } = workspace()
    const outside = tempDir()
    put(outside, 'secret.txt', 's')
    put(dir, 'in/a.txt', 'a')
    fs.symlinkSync(outside, path.join(dir, 'out'))
    for (const p of ['..', outside, 'out', 'in/../..', `${dir}/../`]) {
      fails(await session.call('list_directory', { path: p }), 'PATH_OUTSIDE_WORKSPACE')
    }
    const listed = ok(await session.call('list_directory', { depth: 5 }))
    expect(listed).toBe(`in/\n  a.txt\nout -> ${outside}`)
    expect(listed).not.toContain('secret')
    expect(fails(await session.call('list_directory', { path: 'in/a.txt' }), 'INVALID_INPUT')).toMatch(/is a file/)
    fails(await session.call('list_directory', { path: 'nope' }), 'NOT_FOUND')
  })

  it('answers in gemini-cli\'s shape: folders first, sizes in bytes, hidden entries shown', async () => {
    const { dir, session } = workspace({ dialect: 'gemini' })
    tree(dir)
    const t = ok(await session.call('list_directory', { dir_path: 'src', ignore: ['*.md'] }))
    expect(t).toBe(`Directory listing for ${dir}/src:\n[DIR] .hidden\n[DIR] lib\nmain.ts (10 bytes)`)
    const ignoredToo = ok(await session.call('list_directory', { dir_path: '.', file_filtering_options: { respect_git_ignore: false } }))
    expect(ignoredToo).toContain('[DIR] build\n')
    expect(ignoredToo).toContain('a.log (1 bytes)')
    put(dir, 'empty/.keep', '')
    fs.rmSync(path.join(dir, 'empty/.keep'))
    expect(ok(await session.call('list_directory', { dir_path: 'empty' }))).toBe(`Directory ${dir}/empty is empty.`)
    // The revka form stays reachable by its dialect.
    expect(ok(await session.call('list_directory', { path: 'docs' }, { dialect: 'revka' }))).toBe('deep/\nguide.md')
  })
})

describe('file_info', () => {
  it('tells what a path is, as the MCP filesystem server\'s get_file_info does', async () => {
    const { dir, session } = workspace()
    put(dir, 'a.txt', 'hello')
    fs.chmodSync(path.join(dir, 'a.txt'), 0o640)
    const r = await session.call('file_info', { path: 'a.txt' })
    const t = ok(r)
    expect(t).toMatch(/^path: a\.txt\ntype: file\nsize: 5 bytes \(5 B\)\nmodified: \d{4}-\d\d-\d\dT/)
    expect(t).toContain('permissions: rw-r----- (640)')
    expect(r.data).toMatchObject({ type: 'file', size: 5, isFile: true, isDirectory: false, isSymlink: false, permissions: '640' })
    expect(Date.parse(r.data?.modified as string)).toBeGreaterThan(0)
    const folder = await session.call('file_info', { path: '.' })
    expect(folder.data).toMatchObject({ type: 'dir', isDirectory: true })
    fs.symlinkSync('a.txt', path.join(dir, 'link'))
    expect(ok(await session.call('file_info', { path: 'link' }))).toContain('link to: a.txt')
    fails(await session.call('file_info', { path: '/etc/passwd' }), 'PATH_OUTSIDE_WORKSPACE')
    fails(await session.call('file_info', { path: 'missing' }), 'NOT_FOUND')
  })
})
