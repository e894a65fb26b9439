/**
 * The `fsgate` command (SPEC §7), run as a real process from dist/: `read` output and
 * exit codes, `--json`, `--help`, usage errors, `definitions`, write and edit, colour
 * (forced, refused, never when piped) and `mcp`. The colour and progress decisions and
 * the painters are also tested directly, since the tests never have a terminal.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { withProgress, progressEnabled } from '../ts/cli/progress.js'
import { colorEnabled, highlighter, makeStyle, paintGrep, paintStatus } from '../ts/cli/style.js'
import { newest, png, put, removeTempDirs, tempDir } from './helpers.js'
import { textPdf } from './pdf-make.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cli = path.join(repo, 'dist', 'cli.js')
let ws: string

beforeAll(() => {
  // Build the facade when dist/ is missing or older than the sources it is built from.
  if (!fs.existsSync(cli) || fs.statSync(cli).mtimeMs < newest(path.join(repo, 'ts'))) {
    execFileSync('npm', ['run', 'build:ts'], { cwd: repo, stdio: 'pipe' })
  }
  ws = tempDir('fsgate-cli-')
  put(ws, 'five.txt', 'line 1\nline 2\nline 3\nline 4\nline 5\n')
  put(ws, 'sub/deep.txt', 'deep\n')
  put(ws, 'pic.png', png(4, 3))
  fs.writeFileSync(path.join(ws, 'two.pdf'), textPdf([['First page words'], ['Second page words']]))
})

afterAll(removeTempDirs)

/** Runs dist/cli.js piped, with no colour variables unless `env` sets them, and `input` on stdin. */
function run(args: string[], cwd = ws, options: { env?: Record<string, string>; input?: string | Buffer } = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env }
  for (const key of ['FORCE_COLOR', 'NO_COLOR']) if (!options.env || !(key in options.env)) delete env[key]
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, env, input: options.input ?? '', encoding: 'utf8', timeout: 30_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what is looked for
const ANSI = /\x1b\[[0-9;]*m/g
const strip = (text: string) => text.replace(ANSI, '')

describe('fsgate read', () => {
  it('prints the page and exits 0', () => {
    const r = run(['read', 'five.txt', '--offset', '2', '--limit', '2'])
    // The page on stdout; where to go on, in the CLI's words, on stderr.
    expect(r.stdout).toBe('     2\tline 2\n     3\tline 3\n')
    expect(r.stderr).toBe('… 2 more lines; continue with --offset 4\n')
    expect(r.code).toBe(0)
  })

  it('reads the whole small file without a range', () => {
    const r = run(['read', 'five.txt'])
    expect(r.stdout).toBe('     1\tline 1\n     2\tline 2\n     3\tline 3\n     4\tline 4\n     5\tline 5\n')
    expect(r.code).toBe(0)
  })

  it('accepts --offset=N and --limit=N', () => {
    const r = run(['read', 'five.txt', '--offset=5', '--limit=1'])
    expect(r.stdout).toBe('     5\tline 5\n')
    expect(r.code).toBe(0)
  })

  it('uses --workspace instead of the current folder', () => {
    const r = run(['read', 'deep.txt', '--workspace', path.join(ws, 'sub')], repo)
    expect(r.stdout).toBe('     1\tdeep\n')
    expect(r.code).toBe(0)
  })

  it('uses the line style of --preset', () => {
    const r = run(['read', 'five.txt', '--preset', 'revka', '--limit', '2'])
    expect(r.stdout).toBe('1: line 1\n2: line 2\n[Lines 1-2 of 5]\n')
    expect(r.stderr).toBe('… 3 more lines; continue with --offset 3\n')
    expect(r.code).toBe(0)
  })

  it('an error exits 2 with its code on stderr and nothing on stdout', () => {
    const r = run(['read', 'missing.txt'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('NOT_FOUND')
    expect(r.stderr).toContain('missing.txt')
  })

  it('a path outside the workspace exits 2 with PATH_OUTSIDE_WORKSPACE', () => {
    const r = run(['read', '../../etc/passwd'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('PATH_OUTSIDE_WORKSPACE')
    expect(r.stdout).not.toContain('root:')
  })

  it('describes an image instead of printing base64', () => {
    const r = run(['read', 'pic.png'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/image\/png/)
    expect(r.stdout).toMatch(/--json/)
    expect(r.stdout.length).toBeLessThan(200)
  })
})

describe('--json', () => {
  it('prints the ToolResult', () => {
    const r = run(['read', 'five.txt', '--offset', '4', '--json'])
    expect(r.code).toBe(0)
    const result = JSON.parse(r.stdout)
    expect(result).toEqual({
      isError: false,
      content: [{ type: 'text', text: '     4\tline 4\n     5\tline 5' }],
      data: expect.objectContaining({ path: 'five.txt', startLine: 4, endLine: 5, totalLines: 5 }),
    })
  })

  it('prints an error result and exits 2', () => {
    const r = run(['read', 'missing.txt', '--json'])
    expect(r.code).toBe(2)
    const result = JSON.parse(r.stdout)
    expect(result.isError).toBe(true)
    expect(result.error.code).toBe('NOT_FOUND')
  })

  it('carries the image data', () => {
    const r = run(['read', 'pic.png', '--json'])
    const result = JSON.parse(r.stdout)
    expect(result.content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' })
    expect(Buffer.from(result.content[0].data, 'base64').equals(fs.readFileSync(path.join(ws, 'pic.png')))).toBe(true)
  })
})

describe('usage', () => {
  it('--help and -h print the usage and exit 0', () => {
    for (const flag of ['--help', '-h']) {
      const r = run([flag])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('Usage')
      expect(r.stdout).toContain('fsgate read')
    }
    expect(run(['read', '--help']).code).toBe(0)
  })

  it('--version prints the package version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as { version: string }
    const r = run(['--version'])
    expect(r.stdout.trim()).toBe(pkg.version)
    expect(r.code).toBe(0)
  })

  it.each([['abc'], ['1.5'], ['']])('a bad --offset (%j) exits 2 with a message', (value) => {
    const r = run(['read', 'five.txt', `--offset=${value}`])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--offset')
    expect(r.stdout).toBe('')
  })

  it('a bad --limit exits 2', () => {
    const r = run(['read', 'five.txt', '--limit', 'ten'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--limit')
  })

  it('a negative --offset is refused with a message naming offset', () => {
    const r = run(['read', 'five.txt', '--offset=-1'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/offset/)
    expect(r.stdout).toBe('')
  })

  it('no command exits 2 with the usage on stderr', () => {
    const r = run([])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('Usage')
  })

  it.each([
    ['read without a path', ['read'], "fsgate read: read takes one or more paths\nRun 'fsgate read --help' for the usage.\n"],
    ['an unknown option', ['read', 'five.txt', '--bogus'], "fsgate read: Unknown option '--bogus'"],
    ['an unknown preset', ['read', 'five.txt', '--preset', 'yolo'], "fsgate read: unknown preset 'yolo' (guarded, claude-code, revka or consent)"],
    ['an unknown dialect', ['definitions', '--dialect', 'x'], "fsgate definitions: unknown dialect 'x'"],
  ])('%s exits 2 with one message and where the usage is, on stderr', (_label, args, message) => {
    const r = run(args)
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.startsWith(message)).toBe(true)
    expect(r.stderr).toMatch(/Run 'fsgate \w+ --help' for the usage\.\n$/)
    // Said once: no "fsgate definitions: fsgate: …", no whole help page.
    expect(r.stderr.match(/fsgate/g)?.length).toBe(2)
  })

  it('an unknown command names the commands and the nearest one', () => {
    const r = run(['raed', 'five.txt'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain("fsgate: 'raed' is not a command. Did you mean 'read'?")
    expect(r.stderr).toContain('The commands: read, write, edit, pdf, glob, grep, search, ls, tree, git, risk, definitions, mcp, help.')
    expect(run(['frobnicate']).stderr).not.toContain('Did you mean')
    expect(run(['help', 'frobnicate']).code).toBe(2)
  })

  it('a workspace that does not exist fails cleanly, without a stack trace', () => {
    const r = run(['read', 'x.txt', '--workspace', path.join(ws, 'nope')])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('nope')
    expect(r.stderr).not.toMatch(/^\s+at /m)
  })
})

describe('fsgate definitions', () => {
  it('prints the definitions of a dialect and format as JSON', () => {
    const r = run(['definitions', '--dialect', 'claude', '--format', 'openai'])
    expect(r.code).toBe(0)
    const defs = JSON.parse(r.stdout) as Array<{ type: string; function: { name: string } }>
    expect(defs.map((d) => d.function.name)).toContain('Read')
    expect(defs.every((d) => d.type === 'function')).toBe(true)
  })

  it('defaults to the preset dialect in the anthropic format', () => {
    const r = run(['definitions'])
    const defs = JSON.parse(r.stdout) as Array<{ name: string; input_schema: unknown }>
    expect(defs.map((d) => d.name)).toContain('file_read')
    expect(defs.every((d) => typeof d.input_schema === 'object')).toBe(true)
  })

  it('an unknown dialect fails cleanly', () => {
    const r = run(['definitions', '--dialect', 'gpt'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('gpt')
    expect(r.stderr).not.toMatch(/^\s+at /m)
  })
})

describe('fsgate pdf and read --pages', () => {
  it('pdf prints every page with its marker; --max-chars cuts', () => {
    const r = run(['pdf', 'two.pdf'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('--- Page 1 of 2 ---\nFirst page words\n\n--- Page 2 of 2 ---\nSecond page words\n')
    const cut = run(['pdf', 'two.pdf', '--max-chars', '20'])
    expect(cut.code).toBe(0)
    expect(cut.stdout + cut.stderr).toMatch(/\[… truncated: showing characters 1-20 of (?:more than )?[\d,]+\. Continue with offset=20, /)
    const next = run(['pdf', 'two.pdf', '--max-chars', '20', '--offset', '20'])
    expect(next.code).toBe(0)
    expect(cut.stdout.startsWith('--- Page 1 of 2 ---\n[…')).toBe(true)
    // The engine stopped before page 2's marker: this page ends with page 1.
    expect(next.stdout).toMatch(/^First page words\n\[… truncated: showing characters 21-36 of more than 36\. Continue with offset=36, /)
  })

  it('read --pages picks pages; pdf of a text file exits 2 with INVALID_PDF', () => {
    const r = run(['read', 'two.pdf', '--pages', '2'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('--- Page 2 of 2 ---\nSecond page words\n')
    const bad = run(['pdf', 'five.txt'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('INVALID_PDF')
    expect(run(['pdf', 'two.pdf', '--max-chars', 'x']).code).toBe(2)
  })
})

describe('fsgate glob, grep, search', () => {
  it('glob lists sorted paths; --no-ignore and --hidden widen the walk', () => {
    put(ws, '.gitignore', 'ignored.txt\n')
    put(ws, 'ignored.txt', 'line 1\n')
    put(ws, '.dot/x.txt', 'line 1\n')
    expect(run(['glob', '*.txt'])).toMatchObject({ code: 0, stdout: 'five.txt\nsub/deep.txt\n' })
    expect(run(['glob', '*.txt', '--no-ignore', '--hidden']).stdout).toBe('.dot/x.txt\nfive.txt\nignored.txt\nsub/deep.txt\n')
    expect(run(['glob', '*.txt', 'sub']).stdout).toBe('sub/deep.txt\n')
  })

  it('grep prints ripgrep-style lines; -i, --include, --mode and -C pass through', () => {
    expect(run(['grep', 'line [24]']).stdout).toBe('five.txt:2:line 2\nfive.txt:4:line 4\n')
    // Counts and notes go to stderr: stdout is the paths alone.
    expect(run(['grep', 'DEEP', '-i', '--include', '*.txt', '--mode', 'files_with_matches'])).toMatchObject({ code: 0, stdout: 'sub/deep.txt\n', stderr: '' })
    expect(run(['grep', 'line 3', '-C', '1']).stdout).toBe('five.txt-2-line 2\nfive.txt:3:line 3\nfive.txt-4-line 4\n')
  })

  it('grep with a bad regex exits 2 with INVALID_PATTERN on stderr', () => {
    const r = run(['grep', 'a('])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/unclosed group[\s\S]*\(error code INVALID_PATTERN\)/)
  })

  it('search ranks code with the built-in ranker', () => {
    put(ws, 'src/retry.ts', 'export function retryWithBackoff() {\n  return 1\n}\n')
    const r = run(['search', 'retry with backoff', '--top', '1'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^1\. src\/retry\.ts:1-3 {2}retryWithBackoff/)
  })

  it('usage errors exit 2', () => {
    expect(run(['glob']).code).toBe(2)
    expect(run(['grep', 'x', '-C', 'two']).code).toBe(2)
  })
})

describe('fsgate git and risk', () => {
  it('git status and log print what git_operations gives', () => {
    const repoDir = tempDir('fsgate-cli-git-')
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e', ...args], { cwd: repoDir, stdio: 'pipe' })
    git('init', '-q', '-b', 'main')
    put(repoDir, 'a.txt', 'a\n')
    git('add', 'a.txt')
    git('commit', '-qm', 'first commit')
    put(repoDir, 'a.txt', 'b\n')
    const status = run(['git', 'status', '--workspace', repoDir])
    expect(status.code).toBe(0)
    expect(status.stdout).toMatch(/On branch main/)
    expect(status.stdout).toMatch(/a\.txt/)
    const log = run(['git', 'log', '--limit', '1', '--workspace', repoDir])
    expect(log.stdout).toMatch(/first commit/)
    const diff = run(['git', 'diff', 'a.txt', '--workspace', repoDir])
    expect(diff.stdout).toMatch(/^-a$/m)
    expect(diff.stdout).toMatch(/^\+b$/m)
    expect(run(['git', 'commit', '--workspace', repoDir]).code).toBe(2)
    expect(run(['git', 'status', 'a.txt', '--workspace', repoDir]).code).toBe(2)
    // Not a repository: the tool's error, exit 2.
    const none = run(['git', 'status'])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/NOT_FOUND/)
  })

  it('risk rates a command without running it', () => {
    const marker = path.join(ws, 'must-stay.txt')
    fs.writeFileSync(marker, 'x')
    const r = run(['risk', `ls && rm ${marker}`])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^high: rm deletes files\n {2}low {4}ls: /)
    expect(fs.existsSync(marker)).toBe(true)
    const j = JSON.parse(run(['risk', 'cat a | wc -l', '--json']).stdout)
    expect(j.risk).toBe('low')
    expect(j.commands.map((c: { name: string }) => c.name)).toEqual(['cat', 'wc'])
    expect(run(['risk']).code).toBe(2)
  })
})

describe('fsgate write and edit', () => {
  it('write takes the content from --from FILE, relative to the current folder', () => {
    const src = path.join(tempDir('fsgate-cli-src-'), 'src.txt')
    fs.writeFileSync(src, 'from a file\r\nsecond\n')
    const r = run(['write', 'out/from.txt', '--from', src])
    expect(r).toMatchObject({ code: 0, stderr: '' })
    expect(r.stdout).toBe('Created out/from.txt (2 lines).\n')
    expect(fs.readFileSync(path.join(ws, 'out/from.txt'), 'utf8')).toBe('from a file\nsecond\n')
  })

  it('write takes stdin, and replaces an existing file without a read first (the person is the user)', () => {
    put(ws, 'existing.txt', 'old\n')
    const r = run(['write', 'existing.txt'], ws, { input: 'new from stdin\n' })
    expect(r).toMatchObject({ code: 0, stdout: 'Replaced existing.txt (1 line).\n' })
    expect(fs.readFileSync(path.join(ws, 'existing.txt'), 'utf8')).toBe('new from stdin\n')
    // The same under the consent preset: no permission asked, no working copy inside the workspace.
    expect(run(['write', 'existing.txt', '--from', '-', '--preset', 'consent'], ws, { input: 'again\n' }).code).toBe(0)
    expect(fs.readFileSync(path.join(ws, 'existing.txt'), 'utf8')).toBe('again\n')
  })

  it('write refuses what is not text, a missing --from file and a path outside the workspace', () => {
    expect(run(['write', 'bin.txt'], ws, { input: Buffer.from([0xff, 0xfe, 0x00, 0xc3]) }).code).toBe(2)
    expect(fs.existsSync(path.join(ws, 'bin.txt'))).toBe(false)
    const missing = run(['write', 'x.txt', '--from', 'no-such-file'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('no-such-file')
    const outside = run(['write', '../escape.txt'], ws, { input: 'x' })
    expect(outside.code).toBe(2)
    expect(outside.stderr).toContain('PATH_OUTSIDE_WORKSPACE')
    expect(run(['write'], ws, { input: 'x' }).code).toBe(2)
  })

  it('edit replaces one match and prints what changed; --diff adds the unified diff', () => {
    put(ws, 'edit.txt', 'alpha\nbeta\ngamma\n')
    const r = run(['edit', 'edit.txt', '--old', 'beta', '--new', 'BETA'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('Edited edit.txt (1 replacement).\nThe edited lines:\n     1\talpha\n     2\tBETA\n     3\tgamma\nedit.txt: +1 -1\n')
    expect(fs.readFileSync(path.join(ws, 'edit.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n')
    const d = run(['edit', 'edit.txt', '--old=gamma', '--new=GAMMA', '--diff'])
    expect(d.stdout).toContain('edit.txt: +1 -1\n--- a/edit.txt\n+++ b/edit.txt\n')
    expect(d.stdout).toMatch(/^-gamma\n\+GAMMA\n$/m)
  })

  it('edit --all replaces every match; without it several matches are AMBIGUOUS_MATCH', () => {
    put(ws, 'many.txt', 'x = 1\nx = 2\nx = 3\n')
    const amb = run(['edit', 'many.txt', '--old', 'x =', '--new', 'y ='])
    expect(amb.code).toBe(2)
    expect(amb.stderr).toContain('--old matches 3 times; must match exactly once. Add surrounding lines to --old to pick one, or add --all to change all 3.')
    expect(amb.stderr).toContain('(error code AMBIGUOUS_MATCH)')
    const r = run(['edit', 'many.txt', '--old', 'x =', '--new', 'y =', '--all'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^Edited many\.txt \(3 replacements\)\./)
    expect(r.stdout).toContain('many.txt: +3 -3\n')
    expect(fs.readFileSync(path.join(ws, 'many.txt'), 'utf8')).toBe('y = 1\ny = 2\ny = 3\n')
  })

  it('a failing edit exits 2 with STRING_NOT_FOUND on stderr, in the CLI\'s words, and leaves the file alone', () => {
    put(ws, 'keep.txt', 'keep me\n')
    const r = run(['edit', 'keep.txt', '--old', 'absent', '--new', 'x'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/--old was not found in keep\.txt[\s\S]*\(error code STRING_NOT_FOUND\)/)
    expect(r.stderr).not.toMatch(/old_string|file_read/)
    expect(fs.readFileSync(path.join(ws, 'keep.txt'), 'utf8')).toBe('keep me\n')
    const json = run(['edit', 'keep.txt', '--old', 'absent', '--new', 'x', '--json'])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'STRING_NOT_FOUND', errorCode: 8 })
  })

  it('edit without --old or --new is a usage error', () => {
    for (const args of [['edit', 'keep.txt', '--new', 'x'], ['edit', 'keep.txt', '--old', 'x'], ['edit', '--old', 'a', '--new', 'b']]) {
      const r = run(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toContain("Run 'fsgate edit --help' for the usage.")
    }
  })
})

describe('help for each command', () => {
  it.each([
    ['read', ['--offset', '--limit', '--all', '--pages']],
    ['write', ['--from']],
    ['edit', ['--old', '--new', '--all', '--diff']],
    ['pdf', ['--max-chars']],
    ['glob', ['--hidden', '--no-ignore', '--max', '--offset', '--all']],
    ['grep', ['--include', '--ignore-case', '--fixed-strings', '--word-regexp', '--type', '--multiline', '--mode', '--context', '--hidden', '--no-ignore', '--max', '--offset', '--all']],
    ['search', ['--top', '--max']],
    ['ls', ['--tree', '--depth', '--hidden', '--no-ignore', '--max']],
    ['tree', ['--depth', '--max']],
    ['git', ['--cached', '--limit']],
    ['risk', ['--json']],
    ['definitions', ['--dialect', '--format']],
  ])('fsgate %s --help shows its usage and options', (command, options) => {
    for (const args of [[command, '--help'], [command, '-h'], ['help', command]]) {
      const r = run(args)
      expect(r.code).toBe(0)
      expect(r.stderr).toBe('')
      expect(r.stdout).toContain(`Usage: fsgate ${command} `)
      for (const option of options) expect(r.stdout).toContain(option)
      if (command !== 'risk') expect(r.stdout).toContain('--workspace')
    }
  })

  it('fsgate --help lists every command; an option a command does not take is a usage error', () => {
    const r = run(['--help'])
    for (const command of ['read', 'write', 'edit', 'pdf', 'glob', 'grep', 'search', 'ls', 'tree', 'git', 'risk', 'definitions', 'mcp']) {
      expect(r.stdout).toContain(`fsgate ${command} `)
    }
    const bad = run(['glob', '*.txt', '--top', '3'])
    expect(bad.code).toBe(2)
    expect(bad.stderr.startsWith("fsgate glob: Unknown option '--top'")).toBe(true)
    expect(bad.stderr.endsWith("Run 'fsgate glob --help' for the usage.\n")).toBe(true)
  })

  it('options may come before the command', () => {
    expect(run(['--workspace', path.join(ws, 'sub'), 'read', 'deep.txt'], repo)).toMatchObject({ code: 0, stdout: '     1\tdeep\n' })
  })

  it('fsgate mcp --help is the MCP server’s own help (loaded on demand)', () => {
    const r = run(['mcp', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout + r.stderr).toContain('mcp')
  })
})

describe('colour', () => {
  it('FORCE_COLOR=1 paints grep ripgrep-style; stripped, it is the piped text', () => {
    const plain = run(['grep', 'line [24]'])
    const forced = run(['grep', 'line [24]'], ws, { env: { FORCE_COLOR: '1' } })
    expect(forced.code).toBe(0)
    expect(forced.stdout).toMatch(ANSI)
    expect(forced.stdout).toContain('\x1b[35mfive.txt\x1b[39m:\x1b[32m2\x1b[39m:\x1b[1m\x1b[31mline 2\x1b[39m\x1b[22m')
    expect(strip(forced.stdout)).toBe(plain.stdout)
    expect(plain.stdout).not.toMatch(ANSI)
  })

  it('errors are red with their code when forced', () => {
    const r = run(['read', 'missing.txt'], ws, { env: { FORCE_COLOR: '1' } })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('\x1b[31m')
    expect(strip(r.stderr)).toContain('(error code NOT_FOUND)')
  })

  it('no colour when piped, with NO_COLOR, with FORCE_COLOR=0, or with --json', () => {
    for (const env of [{}, { NO_COLOR: '1' }, { FORCE_COLOR: '0' }] as Record<string, string>[]) {
      const r = run(['grep', 'line'], ws, { env })
      expect(r.stdout).toContain('five.txt:1:line 1')
      expect(r.stdout).not.toMatch(ANSI)
    }
    const json = run(['grep', 'line', '--json'], ws, { env: { FORCE_COLOR: '1' } })
    expect(json.stdout).not.toMatch(ANSI)
    expect(JSON.parse(json.stdout).isError).toBe(false)
  })

  it('the decision: a terminal without NO_COLOR or TERM=dumb; FORCE_COLOR overrides either way', () => {
    expect(colorEnabled(true, {})).toBe(true)
    expect(colorEnabled(false, {})).toBe(false)
    expect(colorEnabled(true, { NO_COLOR: '1' })).toBe(false)
    expect(colorEnabled(true, { NO_COLOR: '' })).toBe(true)
    expect(colorEnabled(true, { TERM: 'dumb' })).toBe(false)
    expect(colorEnabled(false, { FORCE_COLOR: '1' })).toBe(true)
    expect(colorEnabled(false, { FORCE_COLOR: '' })).toBe(true)
    expect(colorEnabled(true, { FORCE_COLOR: '0' })).toBe(false)
    expect(colorEnabled(true, { FORCE_COLOR: 'false' })).toBe(false)
  })

  it('the painters only add escapes: paths with : and -, context, counts, git status letters', () => {
    const s = makeStyle(true)
    const text = 'a:b-c.txt:3:x = foo\na:b-c.txt-4-context foo\n--\nz.txt:7'
    const painted = paintGrep(text, ['a:b-c.txt', 'z.txt'], highlighter('foo', false), s)
    expect(strip(painted)).toBe(text)
    expect(painted).toContain('\x1b[35ma:b-c.txt\x1b[39m:\x1b[32m3\x1b[39m:x = \x1b[1m\x1b[31mfoo')
    expect(painted).toContain('-context foo') // context lines: no match highlight
    expect(painted).toContain('\x1b[35mz.txt\x1b[39m:\x1b[32m7\x1b[39m')
    expect(highlighter('(?i)x', false)).toBeNull() // Rust-only syntax: printed without highlights
    const status = 'On branch main.\nMM a.txt\n?? new.txt'
    const st = paintStatus(status, s)
    expect(strip(st)).toBe(status)
    expect(st).toContain('\x1b[32mM\x1b[39m\x1b[31mM\x1b[39m a.txt')
    expect(paintGrep(text, ['z.txt'], null, makeStyle(false))).toBe(text)
  })
})

describe('progress line', () => {
  it('is shown only on a terminal', () => {
    expect(progressEnabled(true, {})).toBe(true)
    expect(progressEnabled(false, {})).toBe(false)
    expect(progressEnabled(true, { TERM: 'dumb' })).toBe(false)
    // Piped, a long walk writes nothing to stderr.
    const r = run(['grep', 'line', '--no-ignore', '--hidden'])
    expect(r.stderr).toBe('')
  })

  it('draws a spinner only after the delay and erases it when the work ends', async () => {
    const writes: string[] = []
    const stream = { write: (t: string) => writes.push(t) }
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
    expect(await withProgress(stream, 'grep fast', Promise.resolve(1), { delayMs: 50 })).toBe(1)
    expect(writes).toEqual([])
    expect(await withProgress(stream, 'grep slow', sleep(120).then(() => 2), { delayMs: 10, intervalMs: 20 })).toBe(2)
    expect(writes.length).toBeGreaterThan(2)
    expect(writes[0].startsWith('\r\x1b[2K')).toBe(true)
    expect(writes[0]).toMatch(/ grep slow \d+\.\ds$/)
    expect(writes.at(-1)).toBe('\r\x1b[2K')
    writes.length = 0
    await expect(withProgress(stream, 'grep fails', sleep(60).then(() => Promise.reject(new Error('boom'))), { delayMs: 5 })).rejects.toThrow('boom')
    expect(writes.at(-1)).toBe('\r\x1b[2K')
    // No stream (not a terminal): the work alone.
    expect(await withProgress(null, 'x', Promise.resolve(3), { delayMs: 0 })).toBe(3)
  })
})
