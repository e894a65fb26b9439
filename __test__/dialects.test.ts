/**
 * Claude Code 2.1 parity (Read's line prefix and allow_large, Grep's context, -o, number
 * fields and head_limit, Bash's timeout and description), Read's line styles in every
 * dialect, and the gemini dialect (gemini-cli 0.61's names, fields and answers) on the
 * same engine and policy; names two dialects share.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { createToolkit } from '../ts/index.js'
import { fails, ok, put, putLines, removeTempDirs, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

describe("Read's line prefix", () => {
  it('is Claude Code\'s unpadded N<tab> for Read, cat -n for file_read, colon in the revka preset, none for read_file', async () => {
    const { dir, session } = workspace({ dedup: false })
    put(dir, 'a.txt', 'one\ntwo\n')
    expect(ok(await session.call('Read', { file_path: 'a.txt' }))).toBe('1\tone\n2\ttwo')
    expect(ok(await session.call('file_read', { path: 'a.txt' }))).toBe('     1\tone\n     2\ttwo')
    expect(ok(await session.call('read_file', { file_path: 'a.txt' }))).toBe('one\ntwo')
    const revka = workspace({ preset: 'revka', dedup: false }, dir)
    expect(ok(await revka.session.call('file_read', { path: 'a.txt' }))).toBe('1: one\n2: two\n[Lines 1-2 of 2]')
    for (const [style, want] of [
      ['cat-n', '     1\tone'],
      ['compact', '1\tone'],
      ['colon', '1: one'],
      ['none', 'one'],
    ] as const) {
      const t = workspace({ policy: { lineStyle: style }, dedup: false }, dir)
      expect(ok(await t.session.call('Read', { file_path: 'a.txt', limit: 1 })).split('\n')[0]).toBe(want)
      expect(ok(await t.session.call('read_file', { file_path: 'a.txt', end_line: 1 })).split('\n')).toContain(want)
    }
    expect(() => createToolkit({ workspace: dir, policy: { lineStyle: 'tabs' as never } })).toThrow(/lineStyle must be/)
  })
})

describe('Claude Code 2.1 Read', () => {
  it('allow_large raises the token and size limits up to the host\'s hard cap', async () => {
    const { dir, session } = workspace({ limits: { readTokens: 2000, largeReadTokens: 6000, unrangedReadBytes: 16 * 1024 } })
    putLines(path.join(dir, 'big.txt'), 1500, (i) => `line ${i} with a few words`)
    const refused = await session.call('Read', { file_path: 'big.txt' })
    expect(fails(refused, 'FILE_TOO_LARGE')).toMatch(/Read part of it with offset=1 limit=\d+/)
    const over = await session.call('Read', { file_path: 'big.txt', limit: 400 })
    expect(fails(over, 'TOKEN_LIMIT')).toMatch(/or set allow_large to read up to 6,000 tokens/)
    const large = await session.call('Read', { file_path: 'big.txt', limit: 400, allow_large: true })
    const shown = ok(large).split('\n')
    expect(shown).toHaveLength(401)
    expect(shown.at(-1)).toBe('… 1,100 more lines; continue with offset=401')
    // Past the hard cap it is refused still, with a limit that fits.
    const capped = await session.call('Read', { file_path: 'big.txt', allow_large: true })
    expect(fails(capped, 'TOKEN_LIMIT')).toMatch(/over the 6,000-token limit/)
    expect(capped.data?.suggestedLimit).toBeGreaterThan(400)
    // Numbers, as Claude Code types them: a fraction is taken down.
    expect(ok(await session.call('Read', { file_path: 'big.txt', offset: 2.7, limit: 1.9 }))).toMatch(/^2\tline 2 with/)
  })
})

describe('Claude Code 2.1 Grep', () => {
  function tree(dir: string) {
    for (let f = 0; f < 3; f++) putLines(path.join(dir, `f${f}.txt`), 200, (i) => (i % 2 === 0 ? `match ${f}:${i} id=${i}` : `other ${i}`))
  }

  it('head_limit defaults to 250; 0 is every result up to the limits, with a continuation', async () => {
    const { dir, session } = workspace()
    tree(dir)
    const dflt = await session.call('Grep', { pattern: 'match', output_mode: 'content' })
    expect(dflt.data?.shown).toBe(250)
    expect(ok(dflt)).toMatch(/Showing matching lines 1-250 of 300\. Continue with offset=250/)
    const all = await session.call('Grep', { pattern: 'match', output_mode: 'content', head_limit: 0 })
    expect(all.data?.shown).toBe(300)
    expect(all.data?.truncated).toBe(false)
    // The token limit ends a long report visibly, never silently.
    const small = workspace({ limits: { resultTokens: 1_500 } }, dir)
    const cut = await small.session.call('Grep', { pattern: 'match', output_mode: 'content', head_limit: 0 })
    expect(ok(cut)).toMatch(/\(Showing matching lines 1-(\d+) of 300 \(the page reached its limit of 256 KiB or 1,500 tokens\)\. Continue with offset=\1,/)
    expect(cut.data?.shown as number).toBeLessThan(300)
    const files = await session.call('Grep', { pattern: 'match', head_limit: 2, offset: 1 })
    expect(ok(files)).toBe('Found 3 files\nf1.txt\nf2.txt')
  })

  it('takes context and -C, numbers that are not integers, and -o', async () => {
    const { dir, session } = workspace()
    put(dir, 'a.txt', 'zero\none id=1 id=22\ntwo\nthree\n')
    const ctx = ok(await session.call('Grep', { pattern: 'one', output_mode: 'content', context: 1 }))
    expect(ctx).toBe('a.txt-1-zero\na.txt:2:one id=1 id=22\na.txt-3-two')
    const alias = ok(await session.call('Grep', { pattern: 'one', output_mode: 'content', '-C': 1.5, '-A': 2 }))
    expect(alias).toBe('a.txt-1-zero\na.txt:2:one id=1 id=22\na.txt-3-two\na.txt-4-three')
    const big = await session.call('Grep', { pattern: 'one', output_mode: 'content', '-B': 200 })
    ok(big)
    const only = ok(await session.call('Grep', { pattern: 'id=\\d+', output_mode: 'content', '-o': true }))
    expect(only).toBe('a.txt:2:id=1\na.txt:2:id=22')
    fails(await session.call('Grep', { pattern: 'x', head_limit: -1 }), 'INVALID_INPUT')
  })
})

describe('Claude Code 2.1 Bash', () => {
  it('timeout is in ms with a 120 s default and a 600 s ceiling; description is taken', async () => {
    const { session } = workspace({ preset: 'claude-code' })
    const r = await session.call('Bash', { command: 'true', description: 'Do nothing' })
    expect(r.data?.timeoutSecs).toBe(120)
    expect((await session.call('Bash', { command: 'true', timeout: 1500.5 })).data?.timeoutSecs).toBe(2)
    expect((await session.call('Bash', { command: 'true', timeout: 9_000_000 })).data?.timeoutSecs).toBe(600)
    const host = workspace({ preset: 'claude-code', limits: { shellTimeoutSecs: 30 } })
    expect((await host.session.call('Bash', { command: 'true' })).data?.timeoutSecs).toBe(30)
    const slow = await session.call('Bash', { command: 'sleep 5', timeout: 200 })
    fails(slow, 'TIMEOUT')
  })

  it('dangerouslyDisableSandbox is refused unless the host allows unsandboxed runs', async () => {
    const { session, toolkit } = workspace({ policy: { sandbox: 'auto' } })
    const where = await toolkit.sandbox.backend()
    if (!where.backend || where.backend === 'none') return
    expect(fails(await session.call('Bash', { command: 'true', dangerouslyDisableSandbox: true }), 'COMMAND_DENIED')).toMatch(/does not allow unsandboxed runs/)
  })
})

describe('the gemini dialect', () => {
  it('lists gemini-cli\'s tool names, and the shared names resolve by dialect', () => {
    const { toolkit } = workspace({ preset: 'gemini-cli' })
    const names = toolkit.definitions().map((d) => ('name' in d ? d.name : ''))
    expect(names).toEqual(['read_file', 'write_file', 'replace', 'glob', 'grep_search', 'list_directory', 'run_shell_command', 'task_output', 'task_stop'])
    const guarded = workspace()
    const all = guarded.toolkit.definitions({ dialect: 'all' }).map((d) => ('name' in d ? d.name : ''))
    expect(new Set(all).size).toBe(all.length)
    expect(all).toContain('write_file')
    expect(all).toContain('read_file')
  })

  it('read_file reads ranges and says, as gemini-cli does, when it shows part of a file', async () => {
    const { dir, session } = workspace({ preset: 'gemini-cli' })
    putLines(path.join(dir, 'a.txt'), 3000, (i) => `line ${i}`)
    const first = ok(await session.call('read_file', { file_path: 'a.txt' }))
    expect(first).toMatch(
      /^IMPORTANT: The file content has been truncated\.\nStatus: Showing lines 1-2000 of 3000 total lines\.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call\. For example, to read the next section of the file, use start_line: 2001\.\n\n--- FILE CONTENT \(truncated\) ---\nline 1\nline 2\n/,
    )
    expect(first.endsWith('line 2000')).toBe(true)
    expect(ok(await session.call('read_file', { file_path: 'a.txt', start_line: 10, end_line: 11 }))).toMatch(/Showing lines 10-11 of 3000[\s\S]*---\nline 10\nline 11$/)
    expect(fails(await session.call('read_file', { file_path: 'a.txt', start_line: 5, end_line: 4 }), 'INVALID_INPUT')).toMatch(/start_line \(5\) cannot be greater than end_line \(4\)/)
    put(dir, 'small.txt', 'x\n')
    expect(ok(await session.call('read_file', { file_path: 'small.txt' }))).toBe('x')
  })

  it('write_file and replace answer as gemini-cli does, under the same contract', async () => {
    const { dir, session } = workspace({ preset: 'gemini-cli' })
    expect(ok(await session.call('write_file', { file_path: 'new.ts', content: 'a\na\n' }))).toBe(`Successfully created and wrote to new file: ${dir}/new.ts.`)
    put(dir, 'old.ts', 'x = 1\nx = 1\n')
    fails(await session.call('write_file', { file_path: 'old.ts', content: 'y' }), 'NOT_READ')
    fails(await session.call('replace', { file_path: 'old.ts', instruction: 'bump', old_string: 'x = 1', new_string: 'x = 2' }), 'NOT_READ')
    ok(await session.call('read_file', { file_path: 'old.ts' }))
    fails(await session.call('replace', { file_path: 'old.ts', instruction: 'bump', old_string: 'x = 1', new_string: 'x = 2' }), 'AMBIGUOUS_MATCH')
    const r = ok(await session.call('replace', { file_path: 'old.ts', instruction: 'bump both', old_string: 'x = 1', new_string: 'x = 2', allow_multiple: true }))
    expect(r).toMatch(new RegExp(`^Successfully modified file: ${dir}/old\\.ts \\(2 replacements\\)\\. Here is the updated code:\\n`))
    expect(fs.readFileSync(path.join(dir, 'old.ts'), 'utf8')).toBe('x = 2\nx = 2\n')
    expect(ok(await session.call('write_file', { file_path: 'old.ts', content: 'z\n' }))).toBe(`Successfully overwrote file: ${dir}/old.ts.`)
    fails(await session.call('replace', { file_path: 'old.ts', old_string: 'z', new_string: 'w' }), 'INVALID_INPUT')
  })

  it('glob ignores case by default and lists absolute paths, newest first', async () => {
    const { dir, session } = workspace({ preset: 'gemini-cli' })
    put(dir, 'src/A.TS', '')
    put(dir, 'src/b.ts', '')
    const now = Date.now() / 1000
    fs.utimesSync(path.join(dir, 'src/A.TS'), now - 100, now - 100)
    const t = ok(await session.call('glob', { pattern: '**/*.ts' }))
    expect(t).toBe(`Found 2 file(s) matching "**/*.ts" within ${dir}, sorted by modification time (newest first):\n${dir}/src/b.ts\n${dir}/src/A.TS`)
    expect(ok(await session.call('glob', { pattern: '**/*.ts', case_sensitive: true }))).toContain('Found 1 file(s)')
    expect(ok(await session.call('glob', { pattern: '*.md', dir_path: 'src' }))).toBe(`No files found matching pattern "*.md" within ${dir}/src`)
  })

  it('grep_search groups matches by file with L<n> lines, and takes every field', async () => {
    const { dir, session } = workspace({ preset: 'gemini-cli' })
    put(dir, 'a.ts', 'const Foo = 1\nfoo()\nskip foo\n')
    put(dir, 'b.ts', 'x\nFOO.y\n')
    const t = ok(await session.call('grep_search', { pattern: 'foo' }))
    expect(t).toBe('Found 4 matches for pattern "foo" in path ".":\n---\nFile: a.ts\nL1: const Foo = 1\nL2: foo()\nL3: skip foo\n---\nFile: b.ts\nL2: FOO.y\n---')
    const fields = ok(
      await session.call('grep_search', {
        pattern: 'foo(',
        fixed_strings: true,
        case_sensitive: true,
        include_pattern: '*.ts',
        exclude_pattern: 'skip',
        context: 1,
        max_matches_per_file: 1,
        total_max_matches: 5,
        no_ignore: true,
        dir_path: '.',
      }),
    )
    expect(fields).toBe('Found 1 match for pattern "foo\\(" in path "." (filter: "*.ts"):\n---\nFile: a.ts\nL1- const Foo = 1\nL2: foo()\nL3- skip foo\n---')
    expect(ok(await session.call('grep_search', { pattern: 'foo', names_only: true }))).toBe('Found 2 files with matches for pattern "foo" in path ".":\na.ts\nb.ts')
    expect(ok(await session.call('grep_search', { pattern: 'nothing here' }))).toBe('No matches found for pattern "nothing here" in path ".".')
  })

  it.skipIf(spawnSync('rg', ['--version']).status !== 0)('grep_search merges context as gemini-cli shows rg --json: overlapping and touching ranges once, no line lost', async () => {
    // gemini-cli runs rg --json and prints its match and context lines as L<n>: / L<n>-,
    // file by file. Files of 40 lines with matches at random lines, -C and -A/-B (not
    // both: rg 13 and 14 combine them differently).
    const { dir, session } = workspace({ preset: 'gemini-cli' })
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const expected = (args: string[]) => {
      const run = spawnSync('rg', ['--json', '--sort', 'path', ...args, 'hit', 'a.txt', 'b.txt'], { cwd: dir })
      const out: string[] = []
      for (const line of run.stdout.toString().split('\n').filter(Boolean)) {
        const j = JSON.parse(line) as { type: string; data: { path: { text: string }; line_number: number; lines: { text: string } } }
        if (j.type === 'begin') out.push(`File: ${j.data.path.text}`)
        if (j.type === 'match' || j.type === 'context') out.push(`L${j.data.line_number}${j.type === 'match' ? ':' : '-'} ${j.data.lines.text.trimEnd()}`)
      }
      return out
    }
    for (let round = 0; round < 40; round++) {
      for (const name of ['a.txt', 'b.txt']) put(dir, name, Array.from({ length: 40 }, (_, i) => (random() < 0.2 ? `hit ${i + 1}` : `line ${i + 1}`)).join('\n') + '\n')
      const [c, a, b] = [0, 0, 0].map(() => Math.floor(random() * 4))
      const input = round % 2 === 0 ? { context: c } : { after: a, before: b }
      const args = round % 2 === 0 ? ['-C', String(c)] : ['-A', String(a), '-B', String(b)]
      const got = ok(await session.call('grep_search', { pattern: 'hit', total_max_matches: 1000, ...input }))
        .split('\n')
        .filter((l) => /^(L\d+[:-] |File: )/.test(l))
      expect(got, JSON.stringify(input)).toEqual(expected(args))
    }
  })

  it('glob, grep_search and list_directory respect .geminiignore as gemini-cli does, unless told not to', async () => {
    const { dir, session } = workspace({ preset: 'gemini-cli' })
    put(dir, '.geminiignore', 'secret.txt\nprivate/\n')
    for (const f of ['open.txt', 'secret.txt', 'private/p.txt', 'sub/secret.txt']) put(dir, f, 'needle\n')
    const globbed = (await session.call('glob', { pattern: '**/*.txt' })).data as { files: string[] }
    expect(globbed.files.map((f) => path.relative(dir, path.resolve(dir, f))).sort()).toEqual(['open.txt'])
    const kept = (await session.call('glob', { pattern: '**/*.txt', respect_gemini_ignore: false })).data as { files: string[] }
    expect(kept.files).toHaveLength(4)
    expect(ok(await session.call('grep_search', { pattern: 'needle', names_only: true }))).toBe('Found 1 files with matches for pattern "needle" in path ".":\nopen.txt')
    expect(ok(await session.call('grep_search', { pattern: 'needle', names_only: true, no_ignore: true }))).toMatch(/^Found 4 files/)
    const listed = ok(await session.call('list_directory', { dir_path: '.' }))
    expect(listed).not.toMatch(/secret\.txt|private/)
    const all = ok(await session.call('list_directory', { dir_path: '.', file_filtering_options: { respect_gemini_ignore: false } }))
    expect(all).toMatch(/secret\.txt/)
    expect(all).toMatch(/private/)
    // The other dialects do not read it.
    const revka = workspace({}, dir)
    expect(((await revka.session.call('glob_search', { pattern: '**/*.txt' })).data as { files: string[] }).files).toHaveLength(4)
  })

  it('run_shell_command answers Output:/Exit Code:, runs in dir_path, and starts background commands', async () => {
    const { dir, session } = workspace({ preset: 'gemini-cli' })
    put(dir, 'sub/x.txt', '')
    expect(ok(await session.call('run_shell_command', { command: 'ls; exit 2', dir_path: 'sub', description: 'list' }))).toBe('Output: x.txt\nExit Code: 2')
    expect(ok(await session.call('run_shell_command', { command: 'true' }))).toBe('Output: (empty)')
    const bg = await session.call('run_shell_command', { command: 'sleep 10', is_background: true, delay_ms: 0 })
    expect(ok(bg)).toMatch(/^Command moved to background \(PID: \d+\)/)
    await session.close()
  })
})

describe('names every call path knows', () => {
  it('session.call, definitions and the typed methods reach the new tools in each dialect', async () => {
    const { dir, session, toolkit } = workspace()
    put(dir, 'a/b.txt', 'hi')
    const claude = toolkit.definitions({ dialect: 'claude' }).map((d) => ('name' in d ? d.name : ''))
    expect(claude).toEqual(expect.arrayContaining(['Read', 'NotebookEdit', 'Grep', 'Bash', 'TaskOutput', 'TaskStop']))
    const revka = toolkit.definitions({ dialect: 'revka' }).map((d) => ('name' in d ? d.name : ''))
    expect(revka).toEqual(expect.arrayContaining(['list_directory', 'file_info', 'notebook_edit', 'task_output', 'task_stop']))
    expect(textOf(await session.listDirectory({ path: 'a' }))).toBe('b.txt')
    expect(textOf(await session.fileInfo({ path: 'a/b.txt' }))).toMatch(/^path: a\/b\.txt/)
    for (const def of toolkit.definitions({ dialect: 'all', format: 'openai' })) {
      expect('function' in def && def.function.description.length).toBeGreaterThan(40)
    }
  })
})

describe('the MCP server', () => {
  it('serves a dialect\'s names (a shared one resolves to that dialect) and ends the connection\'s background commands with it', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const { createMcpServer } = await import('../ts/mcp/server.js')
    const { dir, toolkit } = workspace({ policy: { sandbox: 'none', autonomy: 'full', consentGate: false } })
    const server = createMcpServer(toolkit, { dialect: 'gemini' })
    const client = new Client({ name: 'test', version: '1' })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await Promise.all([server.connect(a), client.connect(b)])
    const { tools } = await client.listTools()
    const write = tools.find((t) => t.name === 'write_file')
    expect(Object.keys(write?.inputSchema.properties ?? {})).toEqual(['file_path', 'content', 'grant_phrase'])
    expect(tools.find((t) => t.name === 'list_directory')?.annotations?.readOnlyHint).toBe(true)
    const wrote = await client.callTool({ name: 'write_file', arguments: { file_path: 'x.txt', content: 'hi\n' } })
    expect((wrote.content as Array<{ text: string }>)[0].text).toBe(`Successfully created and wrote to new file: ${dir}/x.txt.`)
    const bg = await client.callTool({ name: 'run_shell_command', arguments: { command: `sh -c 'echo $$ > ${dir}/pid; exec sleep 60' & wait`, is_background: true } })
    expect((bg.content as Array<{ text: string }>)[0].text).toMatch(/^Command moved to background/)
    const pidFile = path.join(dir, 'pid')
    const deadline = Date.now() + 5000
    while (!(fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    const pid = Number(fs.readFileSync(pidFile, 'utf8'))
    expect(() => process.kill(pid, 0)).not.toThrow()
    await client.close()
    const gone = Date.now() + 5000
    let alive = true
    while (alive && Date.now() < gone) {
      try {
        process.kill(pid, 0)
        await new Promise((r) => setTimeout(r, 20))
      } catch {
        alive = false
      }
    }
    expect(alive).toBe(false)
  })
})

describe('the SDK adapters', () => {
  it('call a shared name in the dialect they listed', async () => {
    const { anthropicTools, runAnthropicToolUses } = await import('../ts/index.js')
    const { dir, session, toolkit } = workspace({ policy: { consentGate: false } })
    const tools = anthropicTools(toolkit, { dialect: 'gemini' })
    expect(tools.find((t) => t.name === 'write_file')?.input_schema.properties).toHaveProperty('file_path')
    const [result] = await runAnthropicToolUses(session, [{ type: 'tool_use', id: 't1', name: 'write_file', input: { file_path: 'g.txt', content: 'x\n' } }], { dialect: 'gemini' })
    expect(result.is_error).toBe(false)
    expect(result.content).toEqual([{ type: 'text', text: `Successfully created and wrote to new file: ${dir}/g.txt.` }])
    // Without the dialect the toolkit's (revka, where write_file is consent's) would not take file_path.
    const [other] = await runAnthropicToolUses(session, [{ type: 'tool_use', id: 't2', name: 'write_file', input: { file_path: 'h.txt', content: 'x\n' } }])
    expect(other.is_error).toBe(true)
  })
})
