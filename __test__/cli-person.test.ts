/**
 * The `fsgate` command as a person uses it (issue 21): data on stdout and notes on stderr
 * (so `| wc -l` and `| xargs` work), ripgrep's exit codes (1 when nothing matched),
 * --max/--offset/--all with pages that add up to the whole list, the workspace found
 * from a subfolder of a repository with paths shown from where the user stands, ls and
 * tree, -F/-w/-t/-U, several files for read, --json for every command, and messages in
 * the CLI's words (no field names a model uses).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { escapeRegex } from '../ts/cli/find.js'
import { folderEntries, treeLines } from '../ts/cli/list.js'
import { Place, repositoryRoot } from '../ts/cli/where.js'
import { forPerson, MODEL_WORDS } from '../ts/cli/words.js'
import { newest, put, removeTempDirs, tempDir } from './helpers.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cli = path.join(repo, 'dist', 'cli.js')
/** A git repository: 120 numbered files in many/, a source tree, a .gitignore. */
let root: string

beforeAll(() => {
  if (!fs.existsSync(cli) || fs.statSync(cli).mtimeMs < newest(path.join(repo, 'ts'))) {
    execFileSync('npm', ['run', 'build:ts'], { cwd: repo, stdio: 'pipe' })
  }
  root = tempDir('fsgate-person-')
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root })
  for (let i = 0; i < 120; i++) put(root, `many/f${String(i).padStart(3, '0')}.txt`, `needle ${i}\n`)
  put(root, 'src/app.ts', 'export const fooBar = 1\nconst foo = 2\nlet a.b = 3\n')
  put(root, 'src/lib/util.py', 'def foo():\n    return "a.b"\n')
  put(root, 'docs/readme.md', '# foo\n')
  put(root, '.gitignore', 'build/\n')
  put(root, 'build/out.js', 'foo\n')
})

afterAll(removeTempDirs)

function run(args: string[], cwd = root, input = '') {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.FORCE_COLOR
  delete env.NO_COLOR
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, env, input, encoding: 'utf8', timeout: 30_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'))

describe('stdout is data, stderr is notes; exit codes as rg', () => {
  it('grep: matching lines only on stdout, exit 0; no match: nothing on stdout, exit 1', () => {
    const r = run(['grep', 'needle 7$'])
    expect(r).toMatchObject({ code: 0, stdout: 'many/f007.txt:1:needle 7\n', stderr: '' })
    const none = run(['grep', 'no such words'])
    expect(none.code).toBe(1)
    expect(none.stdout).toBe('')
    expect(none.stderr).toMatch(/^No matches found for no such words\./)
  })

  it('grep -l and -c print paths and path:count only; `| wc -l` counts files', () => {
    const l = run(['grep', '-l', 'needle'])
    expect(l.code).toBe(0)
    expect(lines(l.stdout)).toHaveLength(120)
    expect(l.stderr).toBe('')
    expect(lines(l.stdout).every((p) => fs.existsSync(path.join(root, p)))).toBe(true)
    const c = run(['grep', '-c', 'foo', 'src'])
    expect(c).toMatchObject({ code: 0, stdout: 'src/app.ts:2\nsrc/lib/util.py:1\n', stderr: '' })
  })

  it('glob and grep with no match exit 1; an error exits 2', () => {
    expect(run(['glob', '*.nothing']).code).toBe(1)
    expect(run(['search', 'zzqqxx']).code).toBe(1)
    expect(run(['grep', 'a(']).code).toBe(2)
    expect(run(['glob', '*.txt', 'no-such-folder']).code).toBe(2)
  })
})

describe('--max, --offset, --all', () => {
  it('glob: the default page is 1000, --max cuts it with a note on stderr naming the next --offset', () => {
    const r = run(['glob', '*.txt', '--max', '50'])
    expect(r.code).toBe(0)
    expect(lines(r.stdout)).toHaveLength(50)
    expect(r.stderr).toBe('fsgate glob: showing files 1–50 of 120; the next page: --offset 50; everything: --all\n')
  })

  it('glob: pages put together are the whole list, and --all is it too', () => {
    const all = lines(run(['glob', '*.txt', '--all']).stdout)
    expect(all).toHaveLength(120)
    const pages: string[] = []
    for (let offset = 0; offset < 120; offset += 50) pages.push(...lines(run(['glob', '*.txt', '--max', '50', '--offset', String(offset)]).stdout))
    expect(pages).toEqual(all)
    const past = run(['glob', '*.txt', '--offset', '500'])
    expect(past.code).toBe(1)
    expect(past.stderr).toContain('--offset 500 is past the last of 120 files')
  })

  it('grep: the same in content and files mode', () => {
    const all = lines(run(['grep', 'needle', '--all']).stdout)
    expect(all).toHaveLength(120)
    const first = run(['grep', 'needle', '--max', '100'])
    expect(lines(first.stdout)).toHaveLength(100)
    expect(first.stderr).toBe('fsgate grep: showing matching lines 1–100; the next page: --offset 100; everything: --all\n')
    const second = run(['grep', 'needle', '--max', '100', '--offset', '100'])
    expect(second.stderr).toBe('')
    expect([...lines(first.stdout), ...lines(second.stdout)]).toEqual(all)
    const files = run(['grep', '-l', 'needle', '--max', '7', '--offset', '7'])
    expect(lines(files.stdout)).toEqual(lines(run(['grep', '-l', 'needle']).stdout).slice(7, 14))
  })

  it('usage: --max 0, --max with --all, and a bad number are usage errors', () => {
    expect(run(['glob', '*', '--max', '0']).code).toBe(2)
    expect(run(['glob', '*', '--max', '3', '--all']).code).toBe(2)
    expect(run(['grep', 'x', '--offset', '-2']).code).toBe(2)
  })

  it('read --all shows every line with no note; the page note uses --offset', () => {
    put(root, 'long.txt', Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n'))
    const page = run(['read', 'long.txt'])
    expect(lines(page.stdout)).toHaveLength(2000)
    expect(page.stderr).toBe('… 500 more lines; continue with --offset 2001\n')
    const all = run(['read', 'long.txt', '--all'])
    expect(lines(all.stdout)).toHaveLength(2500)
    expect(all.stderr).toBe('')
    expect(run(['read', 'long.txt', '--all', '--limit', '3']).code).toBe(2)
  })
})

describe('the workspace is the repository; paths are from where you stand', () => {
  it('finds the repository root above a subfolder, and nothing outside one', () => {
    expect(repositoryRoot(path.join(root, 'src', 'lib'))).toBe(root)
    const place = Place.find(path.join(root, 'src'))
    expect(place.workspace).toBe(root)
    expect(place.toTool('app.ts')).toBe('src/app.ts')
    expect(place.toTool('../docs/readme.md')).toBe('docs/readme.md')
    expect(place.toTool('.')).toBe('src')
    expect(place.fromTool('src/lib/util.py')).toBe('lib/util.py')
    expect(place.fromTool('docs/readme.md')).toBe('../docs/readme.md')
    const plain = tempDir('fsgate-person-plain-')
    expect(Place.find(plain).workspace).toBe(plain)
  })

  it('git status works in a subfolder', () => {
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e', 'add', '-A'], { cwd: root })
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-qm', 'all'], { cwd: root })
    put(root, 'src/app.ts', 'export const fooBar = 2\nconst foo = 2\nlet a.b = 3\n')
    const r = run(['git', 'status'], path.join(root, 'src', 'lib'))
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/On branch main/)
    expect(r.stdout).toMatch(/app\.ts/)
    const diff = run(['git', 'diff', 'app.ts'], path.join(root, 'src'))
    expect(diff.stdout).toMatch(/^\+export const fooBar = 2$/m)
  })

  it('read, grep, glob and search take paths from the current folder and show them from it', () => {
    const src = path.join(root, 'src')
    expect(run(['read', 'app.ts', '--limit', '1'], src).stdout).toBe('     1\texport const fooBar = 2\n')
    // Without a path the current folder is searched, and paths are shown from it.
    expect(run(['grep', '-l', 'foo'], src).stdout).toBe('app.ts\nlib/util.py\n')
    expect(run(['glob', '*.py'], src).stdout).toBe('lib/util.py\n')
    expect(run(['grep', '-l', '^# foo', '..'], src).stdout).toBe('../docs/readme.md\n')
    expect(run(['grep', 'def foo', '..'], path.join(src, 'lib')).stdout).toBe('util.py:1:def foo():\n')
    expect(run(['search', 'foo'], path.join(root, 'docs')).code).toBeLessThan(2)
  })

  it('--workspace elsewhere: relative paths start at that workspace', () => {
    expect(run(['read', 'util.py', '--workspace', path.join(root, 'src', 'lib')], repo).stdout).toContain('def foo():')
  })
})

describe('grep -F, -w, -t, -U', () => {
  it('-F takes the pattern as text; -w matches whole words; -t picks a file type', () => {
    expect(run(['grep', '-F', 'a.b', 'src']).stdout).toBe('src/app.ts:3:let a.b = 3\nsrc/lib/util.py:2:    return "a.b"\n')
    expect(run(['grep', '-w', 'foo', 'src']).stdout).toBe('src/app.ts:2:const foo = 2\nsrc/lib/util.py:1:def foo():\n')
    expect(run(['grep', '-w', '-l', 'foo', '-t', 'py']).stdout).toBe('src/lib/util.py\n')
    expect(run(['grep', '-U', 'foo\\(\\):\\n\\s+return', '-l']).stdout).toBe('src/lib/util.py\n')
    const badType = run(['grep', 'x', '-t', 'nosuchtype'])
    expect(badType.code).toBe(2)
    expect(badType.stderr).toContain("Unknown file type 'nosuchtype'")
  })

  it('escapes every regex metacharacter for -F', () => {
    expect(escapeRegex('a.b*c(d)[e]{f}|g^h$i+j?k\\l#m&n-o~p')).toBe('a\\.b\\*c\\(d\\)\\[e\\]\\{f\\}\\|g\\^h\\$i\\+j\\?k\\\\l\\#m\\&n\\-o\\~p')
  })
})

describe('ls and tree', () => {
  it('ls lists files and subfolders (with /), as the walk sees them; exit 1 for an empty listing', () => {
    const r = run(['ls'])
    expect(r).toMatchObject({ code: 0, stderr: '' })
    expect(lines(r.stdout)).toEqual(['docs/', 'long.txt', 'many/', 'src/'])
    expect(lines(run(['ls', '--no-ignore']).stdout)).toContain('build/')
    expect(lines(run(['ls', '--hidden']).stdout)).toContain('.gitignore')
    expect(run(['ls', 'src']).stdout).toBe('app.ts\nlib/\n')
    expect(run(['ls'], path.join(root, 'src')).stdout).toBe('app.ts\nlib/\n')
    const paged = run(['ls', 'many', '--max', '3'])
    expect(paged.stdout).toBe('f000.txt\nf001.txt\nf002.txt\n')
    expect(paged.stderr).toContain('the next page: --offset 3')
    fs.mkdirSync(path.join(root, 'empty'))
    expect(run(['ls', 'empty']).code).toBe(1)
    expect(run(['ls', 'nope']).code).toBe(2)
  })

  it('tree draws the folders and files below, with --depth; ls --tree is the same', () => {
    const r = run(['tree', 'src'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('src\n├── app.ts\n└── lib/\n    └── util.py\n')
    expect(r.stderr).toBe('2 folders, 2 files\n'.replace('2 folders', '1 folder'))
    expect(run(['ls', '--tree', 'src']).stdout).toBe(r.stdout)
    expect(run(['tree', 'src', '--depth', '1']).stdout).toBe('src\n├── app.ts\n└── lib/\n')
    expect(run(['ls', '--depth', '1']).code).toBe(2)
  })

  it('the listing helpers: entries in walk order, tree lines with their drawing', () => {
    const listing = { files: ['a.txt', 'b/c.txt', 'b/d/e.txt', 'f.txt'], total: 4 }
    expect(folderEntries(listing)).toEqual([
      { name: 'a.txt', kind: 'file' },
      { name: 'b', kind: 'folder' },
      { name: 'f.txt', kind: 'file' },
    ])
    expect(treeLines(listing, Number.POSITIVE_INFINITY).map((l) => `${l.prefix}${l.name}${l.folder ? '/' : ''}`)).toEqual([
      '├── a.txt',
      '├── b/',
      '│   ├── c.txt',
      '│   └── d/',
      '│       └── e.txt',
      '└── f.txt',
    ])
  })
})

describe('read takes several files', () => {
  it('prints each under a ==> path <== line; a failing one makes the exit 2 but the others print', () => {
    const r = run(['read', 'docs/readme.md', 'missing.md', 'src/lib/util.py', '--limit', '1'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('==> docs/readme.md <==\n     1\t# foo\n\n==> missing.md <==\n\n==> src/lib/util.py <==\n     1\tdef foo():\n')
    expect(r.stderr).toMatch(/missing\.md[\s\S]*\(error code NOT_FOUND\)/)
    const json = JSON.parse(run(['read', 'docs/readme.md', 'src/app.ts', '--json']).stdout)
    expect(json).toHaveLength(2)
    expect(json[1].data.path).toBe('src/app.ts')
  })
})

describe('--json everywhere', () => {
  it.each([
    [['read', 'docs/readme.md']],
    [['glob', '*.md']],
    [['grep', 'foo', 'src']],
    [['grep', '-l', 'foo']],
    [['search', 'foo']],
    [['ls']],
    [['tree', 'src']],
    [['git', 'log', '--limit', '1']],
    [['risk', 'ls']],
    [['definitions']],
    [['pdf', 'docs/readme.md']],
    [['edit', 'docs/readme.md', '--old', '# foo', '--new', '# foo']],
  ])('fsgate %j --json prints one JSON document on stdout', (args) => {
    const r = run([...args, '--json'])
    expect(() => JSON.parse(r.stdout), r.stdout.slice(0, 200)).not.toThrow()
    expect(r.code).not.toBeNull()
  })

  it('write --json too', () => {
    const r = run(['write', 'new.txt', '--json'], root, 'x\n')
    expect(JSON.parse(r.stdout)).toMatchObject({ isError: false })
  })
})

describe('messages in the CLI words', () => {
  it('the rewrite of model words', () => {
    expect(forPerson('… 2 more lines; continue with offset=4')).toBe('… 2 more lines; continue with --offset 4')
    expect(forPerson('read part of it with offset=1 and limit=300, or search')).toBe('read part of it with --offset 1 --limit 300, or search')
    expect(forPerson('old_string matches 2 times; set replace_all to true')).toBe('--old matches 2 times; add --all')
    expect(forPerson('set include_ignored or include_hidden to include them')).toBe('add --no-ignore or --hidden to include them')
    expect(forPerson('Read the file again with file_read and copy old_string exactly')).toBe('Look at the file again with fsgate read and copy --old exactly')
    expect(forPerson('use content_search for an exact string')).toBe('use fsgate grep for an exact string')
  })

  it('no message of a failing or truncated command names a field a model uses', () => {
    put(root, 'twice.txt', 'x\nx\n')
    put(root, 'big.txt', `${'word '.repeat(200)}\n`.repeat(2000))
    const outputs = [
      run(['edit', 'twice.txt', '--old', 'x', '--new', 'y']),
      run(['edit', 'twice.txt', '--old', 'zz', '--new', 'y']),
      run(['edit', 'twice.txt', '--old', 'x\nx', '--new', 'x\nx']),
      run(['read', 'twice.txt', '--offset', '9']),
      run(['read', 'big.txt']), // TOKEN_LIMIT
      run(['read', 'twice.txt', '--pages', '1']),
      run(['glob', '*.nothing']),
      run(['grep', 'a\\nb']),
      run(['grep', 'needle', '--max', '3']),
      run(['pdf', 'twice.txt']),
      run(['read', 'src']),
      run(['search', '   ']),
    ]
    for (const r of outputs) {
      expect(r.stderr).not.toBe('')
      for (const word of MODEL_WORDS) expect(r.stderr, r.stderr).not.toContain(word)
    }
  })
})
