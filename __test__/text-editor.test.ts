/**
 * Anthropic's text editor (str_replace_based_edit_tool, text_editor_20250728) and bash
 * (bash_20250124), every command and every error Anthropic's documentation lists, driven
 * the way a host drives them: a real Messages API reply (the SDK client with a canned
 * fetch) handed to runAnthropicToolUses, its tool_result blocks checked.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import Anthropic from '@anthropic-ai/sdk'
import { afterAll, describe, expect, it } from 'vitest'

import { anthropicTools, countTokens, runAnthropicToolUses, type Session, type ToolkitOptions } from '../ts/index.js'
import { put, removeTempDirs, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

type Result = Awaited<ReturnType<typeof runAnthropicToolUses>>[number]

/** One Messages API reply asking for these tool uses, through the real SDK client. */
async function reply(uses: Array<{ name: string; input: unknown }>): Promise<Anthropic.Message> {
  const message = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: uses.map((u, i) => ({ type: 'tool_use', id: `toolu_${i}`, name: u.name, input: u.input })),
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  }
  const fetch = (async () => new Response(JSON.stringify(message), { status: 200, headers: { 'content-type': 'application/json' } })) as typeof globalThis.fetch
  const client = new Anthropic({ apiKey: 'test', fetch, maxRetries: 0 })
  return client.messages.create({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }] })
}

/** Runs the tool uses one reply asks for; returns each tool_result's text and error flag. */
async function run(session: Session, uses: Array<{ name: string; input: unknown }>, options: { maxCharacters?: number } = {}): Promise<Array<{ text: string; error: boolean }>> {
  const results: Result[] = await runAnthropicToolUses(session, await reply(uses), options)
  const param: Anthropic.ToolResultBlockParam[] = results
  return param.map((r) => ({ text: (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n'), error: r.is_error === true }))
}

const editor = (input: Record<string, unknown>) => ({ name: 'str_replace_based_edit_tool', input })
const bash = (input: Record<string, unknown>) => ({ name: 'bash', input })

async function one(session: Session, input: Record<string, unknown>, options: { maxCharacters?: number } = {}): Promise<{ text: string; error: boolean }> {
  const [r] = await run(session, [editor(input)], options)
  return r
}

function setUp(options: Partial<ToolkitOptions> = { preset: 'claude-code' }) {
  const ws = workspace(options)
  put(ws.dir, 'primes.py', 'def is_prime(n):\n    if n <= 1:\n        return False\n    return True\n')
  put(ws.dir, 'src/a.ts', 'export const a = 1\n')
  put(ws.dir, 'src/deep/b.ts', 'b\n')
  put(ws.dir, 'src/deep/deeper/c.ts', 'c\n')
  put(ws.dir, '.hidden/x', 'x\n')
  put(ws.dir, 'node_modules/pkg/index.js', 'x\n')
  return ws
}

describe('str_replace_based_edit_tool', () => {
  it('declares text_editor_20250728 and bash_20250124 for the SDK, with max_characters', () => {
    const { toolkit } = setUp()
    const tools: Anthropic.Messages.ToolUnion[] = anthropicTools(toolkit, { builtin: true, maxCharacters: 500 })
    expect(tools).toEqual([
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool', max_characters: 500 },
      { type: 'bash_20250124', name: 'bash' },
    ])
    const editorTool: Anthropic.ToolTextEditor20250728 = { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }
    const bashTool: Anthropic.ToolBash20250124 = { type: 'bash_20250124', name: 'bash' }
    expect(anthropicTools(toolkit, { builtin: true })).toEqual([editorTool, bashTool])
    // Without builtin, the anthropic dialect's tools are plain custom tools.
    expect(anthropicTools(toolkit, { dialect: 'anthropic' }).map((t) => t.name)).toEqual(['str_replace_based_edit_tool', 'bash'])
  })

  it('view: a file with "N: line" numbers, a view_range, a range to the end, and max_characters', async () => {
    const { session } = setUp()
    const whole = await one(session, { command: 'view', path: 'primes.py' })
    expect(whole.error).toBe(false)
    expect(whole.text).toMatch(/^1: def is_prime\(n\):\n2: {5}if n <= 1:\n3: {9}return False\n4: {5}return True/)
    // Viewing again shows the lines again (no "unchanged" stub).
    expect((await one(session, { command: 'view', path: 'primes.py' })).text).toContain('1: def is_prime(n):')
    expect((await one(session, { command: 'view', path: 'primes.py', view_range: [2, 3] })).text).toMatch(/^2: {5}if n <= 1:\n3: {9}return False\n\[Lines 2-3 of 4\]/)
    expect((await one(session, { command: 'view', path: 'primes.py', view_range: [3, -1] })).text).toMatch(/^3: .*\n4: {5}return True\n\[Lines 3-4 of 4\]$/)
    const cut = await one(session, { command: 'view', path: 'primes.py' }, { maxCharacters: 20 })
    expect(cut.text).toMatch(/^1: def is_prime\(n\):\n… \[output cut at 20 characters \(max_characters\)/)
  })

  it('view: a folder two levels deep, without hidden items or node_modules', async () => {
    const { session } = setUp()
    const r = await one(session, { command: 'view', path: '.' })
    expect(r.error).toBe(false)
    expect(r.text.split('\n')).toEqual([expect.stringMatching(/^Here are the files and directories up to 2 levels deep in .*, excluding hidden items:$/), 'primes.py', 'src/', 'src/a.ts', 'src/deep/'])
    const sub = await one(session, { command: 'view', path: 'src' })
    expect(sub.text).toContain('src/deep/deeper/')
    expect(sub.text).not.toContain('c.ts')
    expect((await one(session, { command: 'view', path: 'src', view_range: [1, 2] })).error).toBe(true)
  })

  it('view: a folder listing fits the token limit like every result, and says what it left out', async () => {
    const { dir, session } = setUp({ preset: 'claude-code', limits: { resultTokens: 1_000 } })
    for (let i = 0; i < 150; i++) put(dir, `many/${'a_rather_long_component_file_name_'.repeat(2)}${i}.tsx`, '')
    const listing = await one(session, { command: 'view', path: 'many' })
    expect(listing.error).toBe(false)
    expect(await countTokens(listing.text)).toBeLessThanOrEqual(1_000)
    expect(listing.text).toMatch(/… \d+ more entries not shown; view a folder inside it$/)
  })

  it('view: the errors (file not found, a bad view_range, a path outside the workspace)', async () => {
    const { session } = setUp()
    const missing = await one(session, { command: 'view', path: 'nope.py' })
    expect(missing).toMatchObject({ error: true, text: expect.stringMatching(/^File not found: nope\.py\. Check the path; relative paths start at the workspace/) })
    expect(await one(session, { command: 'view', path: 'src/a.tsx' })).toMatchObject({ error: true, text: 'File not found: src/a.tsx. Did you mean src/a.ts?' })
    expect(await one(session, { command: 'view', path: 'primes.py', view_range: [3, 2] })).toMatchObject({ error: true, text: expect.stringContaining('Invalid `view_range`') })
    expect(await one(session, { command: 'view', path: 'primes.py', view_range: [9, -1] })).toMatchObject({ error: true, text: expect.stringContaining('has 4 lines') })
    expect(await one(session, { command: 'view', path: 'primes.py', view_range: [1] })).toMatchObject({ error: true, text: expect.stringContaining('view_range') })
    expect(await one(session, { command: 'view', path: '..' })).toMatchObject({ error: true, text: expect.stringContaining('outside the workspace') })
  })

  it('create: a new file (with folders); an existing one only after a view', async () => {
    const { dir, session } = setUp()
    expect(await one(session, { command: 'create', path: 'new/dir/test.py', file_text: 'print("hi")\n' })).toEqual({ error: false, text: 'File created successfully at: new/dir/test.py' })
    expect(fs.readFileSync(path.join(dir, 'new/dir/test.py'), 'utf8')).toBe('print("hi")\n')
    const unseen = await one(session, { command: 'create', path: 'src/a.ts', file_text: 'x\n' })
    expect(unseen).toMatchObject({ error: true, text: expect.stringContaining('Read it first with str_replace_based_edit_tool (view)') })
    await one(session, { command: 'view', path: 'src/a.ts' })
    expect(await one(session, { command: 'create', path: 'src/a.ts', file_text: 'x\n' })).toEqual({ error: false, text: 'File src/a.ts overwritten with the new content (1 lines).' })
    expect(await one(session, { command: 'create', path: 'b.txt' })).toMatchObject({ error: true, text: expect.stringContaining('Parameter `file_text` is required for command: create') })
  })

  it('str_replace: one location replaced; no match, several matches and a missing file are the documented errors', async () => {
    const { dir, session } = setUp()
    await one(session, { command: 'view', path: 'primes.py' })
    const done = await one(session, { command: 'str_replace', path: 'primes.py', old_str: '    if n <= 1:\n        return False', new_str: '    if n < 2:\n        return False' })
    expect(done.error).toBe(false)
    expect(done.text).toMatch(/^Successfully replaced text at exactly one location\.\nThe edited lines:\n1: def is_prime\(n\):\n2: {5}if n < 2:/)
    expect(fs.readFileSync(path.join(dir, 'primes.py'), 'utf8')).toContain('if n < 2:')
    const none = await one(session, { command: 'str_replace', path: 'primes.py', old_str: 'return Flase', new_str: 'x' })
    expect(none).toMatchObject({ error: true, text: expect.stringMatching(/^No match found for replacement\. Please check your text and try again\. The closest lines are:\n3: {9}return False/) })
    const many = await one(session, { command: 'str_replace', path: 'primes.py', old_str: 'return', new_str: 'yield' })
    expect(many).toMatchObject({ error: true, text: expect.stringMatching(/^Found 2 matches for replacement text\. Please provide more context to make a unique match/) })
    const missing = await one(session, { command: 'str_replace', path: 'nope.py', old_str: 'a', new_str: 'b' })
    expect(missing).toMatchObject({ error: true, text: 'File not found: nope.py. To create it, use the create command.' })
    expect(await one(session, { command: 'str_replace', path: 'primes.py', old_str: '' })).toMatchObject({ error: true, text: expect.stringContaining('old_str is empty') })
    // Edit's ladder: curly quotes in the file, straight in old_str.
    put(dir, 'q.txt', 'say \u201chello\u201d\n')
    await one(session, { command: 'view', path: 'q.txt' })
    expect((await one(session, { command: 'str_replace', path: 'q.txt', old_str: 'say "hello"', new_str: 'say "bye"' })).error).toBe(false)
    expect(fs.readFileSync(path.join(dir, 'q.txt'), 'utf8')).toBe('say \u201cbye\u201d\n')
  })

  it('str_replace and insert need a view of the file first where the preset wants a read', async () => {
    const { session } = setUp()
    expect(await one(session, { command: 'str_replace', path: 'primes.py', old_str: 'True', new_str: 'true' })).toMatchObject({
      error: true,
      text: expect.stringContaining('Read it first with str_replace_based_edit_tool (view)'),
    })
    expect((await one(session, { command: 'insert', path: 'primes.py', insert_line: 1, insert_text: '# x' })).error).toBe(true)
  })

  it('insert: after a line (0: the start, the last line: the end), with insert_text or new_str, in the file’s line endings', async () => {
    const { dir, session } = setUp()
    put(dir, 'crlf.txt', 'one\r\ntwo\r\n')
    await one(session, { command: 'view', path: 'primes.py' })
    await one(session, { command: 'view', path: 'crlf.txt' })
    const first = await one(session, { command: 'insert', path: 'primes.py', insert_line: 0, insert_text: '"""Primes."""' })
    expect(first).toMatchObject({ error: false, text: expect.stringMatching(/^The text was inserted after line 0 of primes\.py\.\nThe edited lines:\n1: """Primes."""/) })
    await one(session, { command: 'insert', path: 'primes.py', insert_line: 5, new_str: 'print(is_prime(7))\n' })
    expect(fs.readFileSync(path.join(dir, 'primes.py'), 'utf8')).toBe('"""Primes."""\ndef is_prime(n):\n    if n <= 1:\n        return False\n    return True\nprint(is_prime(7))\n')
    await one(session, { command: 'insert', path: 'crlf.txt', insert_line: 1, insert_text: 'one and a half' })
    expect(fs.readFileSync(path.join(dir, 'crlf.txt'), 'utf8')).toBe('one\r\none and a half\r\ntwo\r\n')
    expect(await one(session, { command: 'insert', path: 'primes.py', insert_line: 99, insert_text: 'x' })).toMatchObject({
      error: true,
      text: expect.stringContaining('Invalid `insert_line` 99: primes.py has 6 lines'),
    })
    expect(await one(session, { command: 'insert', path: 'primes.py', insert_line: 1 })).toMatchObject({ error: true, text: expect.stringContaining('Parameter `insert_text` is required') })
    expect(await one(session, { command: 'insert', path: 'gone.py', insert_line: 0, insert_text: 'x' })).toMatchObject({ error: true, text: expect.stringMatching(/^File not found: gone\.py/) })
    // The history has every change: the first insert undone puts the file back.
    await session.undo('crlf.txt')
    expect(fs.readFileSync(path.join(dir, 'crlf.txt'), 'utf8')).toBe('one\r\ntwo\r\n')
  })

  it('undo_edit, gone from text_editor_20250728, says what to do instead', async () => {
    const { session } = setUp()
    expect(await one(session, { command: 'undo_edit', path: 'primes.py' })).toMatchObject({ error: true, text: expect.stringContaining('not a command of text_editor_20250728') })
  })

  it('permission errors: a user who declines (consent), and a file this process may not write', async () => {
    const { dir, session } = setUp({ preset: 'guarded', onPermissionRequest: () => false })
    await one(session, { command: 'view', path: 'primes.py' })
    const declined = await one(session, { command: 'str_replace', path: 'primes.py', old_str: 'True', new_str: 'true' })
    expect(declined).toMatchObject({ error: true, text: expect.stringContaining('The user declined changes to existing files') })
    const locked = path.join(dir, 'src/a.ts')
    let immutable = false
    try {
      execFileSync('chattr', ['+i', locked], { stdio: 'pipe' })
      immutable = true
    } catch (err) {
      if (process.env.CI === 'true') throw err
      console.log(`[text-editor] the file-mode permission case is skipped: chattr +i failed (${String(err).slice(0, 120)})`)
    }
    if (!immutable) return
    try {
      const mine = setUp({ preset: 'claude-code' })
      fs.cpSync(locked, path.join(mine.dir, 'locked.ts'))
      execFileSync('chattr', ['+i', path.join(mine.dir, 'locked.ts')])
      try {
        await one(mine.session, { command: 'view', path: 'locked.ts' })
        expect(await one(mine.session, { command: 'str_replace', path: 'locked.ts', old_str: '1', new_str: '2' })).toMatchObject({
          error: true,
          text: expect.stringMatching(/^Permission denied\. Cannot write to file locked\.ts/),
        })
      } finally {
        execFileSync('chattr', ['-i', path.join(mine.dir, 'locked.ts')])
      }
    } finally {
      execFileSync('chattr', ['-i', locked])
    }
  })
})

describe('bash (bash_20250124)', () => {
  it('keeps the working folder and exported variables between calls of one session; restart starts afresh', async () => {
    const { dir, session } = setUp()
    const [a, b, c] = await run(session, [bash({ command: 'cd src/deep && export GREETING=hello && echo started' }), bash({ command: 'pwd; echo "$GREETING"; ls' }), bash({ command: 'unset GREETING; cd ..; pwd' })])
    expect(a).toEqual({ error: false, text: 'started' })
    expect(b.text).toBe(`${fs.realpathSync(dir)}/src/deep\nhello\nb.ts\ndeeper`)
    expect(c.text).toBe(`${fs.realpathSync(dir)}/src`)
    const [d] = await run(session, [bash({ command: 'echo "[$GREETING]"; pwd' })])
    expect(d.text).toBe(`[]\n${fs.realpathSync(dir)}/src`)
    const [restarted, after] = await run(session, [bash({ restart: true }), bash({ command: 'pwd' })])
    expect(restarted).toEqual({ error: false, text: 'tool has been restarted.' })
    expect(after.text).toBe(fs.realpathSync(dir))
    // Another session of the toolkit has its own bash.
    const other = setUp().toolkit.createSession()
    expect((await run(other, [bash({ command: 'echo "[$GREETING]"' })]))[0].text).toBe('[]')
  })

  it('shows the command’s output only: stderr, exit codes, and no output', async () => {
    const { session } = setUp()
    const [out, err, quiet] = await run(session, [bash({ command: 'printf "no newline"' }), bash({ command: 'echo oops >&2; exit 3' }), bash({ command: 'true' })])
    expect(out.text).toBe('no newline')
    expect(err.text).toBe('[stderr]\noops\n[exit code 3]')
    expect(quiet.text).toBe('(no output)')
  })

  it('rates the command as it runs: in the folder it runs in, with the variables that change what runs', async () => {
    const asked: string[] = []
    // The user approves the first cd and the first export, and declines what follows.
    const approve = new Set(['cd /', 'export PATH="/tmp:$PATH"'])
    const onApproval = (req: { command: string }) => {
      asked.push(req.command)
      return approve.has(req.command)
    }
    const { session } = setUp({ preset: 'guarded', policy: { sandbox: 'none' }, onApproval })
    const [low] = await run(session, [bash({ command: 'ls' })])
    expect(low.error).toBe(false)
    expect(asked).toEqual([])
    await run(session, [bash({ command: 'cd /' })])
    const [outside] = await run(session, [bash({ command: 'ls' })])
    expect(outside).toMatchObject({ error: true, text: expect.stringContaining('declined') })
    expect(asked.at(-1)).toBe("cd -- '/'\nls")
    await run(session, [bash({ restart: true })])
    asked.length = 0
    await run(session, [bash({ command: 'export PATH="/tmp:$PATH"' })])
    const [changed] = await run(session, [bash({ command: 'ls' })])
    expect(changed.error).toBe(true)
    expect(asked.at(-1)).toMatch(/^PATH='\/tmp:.*' true\nls$/)
  })

  it('concurrent commands of one session: each runs in the state it was rated and approved in, and every one’s changes carry over', async () => {
    const asked: string[] = []
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const onApproval = async (req: { command: string }) => {
      asked.push(req.command)
      await held
      return true
    }
    const { dir, session } = setUp({ preset: 'guarded', policy: { sandbox: 'none' }, onApproval })
    put(dir, 'x.txt', 'root\n')
    put(dir, 'src/x.txt', 'src\n')
    // The user is asked about `rm x.txt` in the workspace root; while they decide, another command of the session moves it to src.
    const removing = session.call('bash', { command: 'rm x.txt; pwd' })
    while (asked.length === 0) await new Promise((r) => setTimeout(r, 10))
    expect(asked).toEqual(['rm x.txt; pwd'])
    const moved = await session.call('bash', { command: 'cd src' })
    expect(moved.isError).toBe(false)
    release()
    const removed = await removing
    expect(removed.isError).toBe(false)
    // What ran is what was approved: in the root.
    expect(textOf(removed)).toBe(fs.realpathSync(dir))
    expect(fs.existsSync(path.join(dir, 'x.txt'))).toBe(false)
    expect(fs.readFileSync(path.join(dir, 'src/x.txt'), 'utf8')).toBe('src\n')
    // And the cd of the other command is kept: the session is in src.
    expect(textOf(await session.call('bash', { command: 'pwd' }))).toBe(`${fs.realpathSync(dir)}/src`)

    // Two commands at once: both exports carry over, whichever finishes last.
    const both = setUp().session
    const calls = await Promise.all([both.call('bash', { command: 'sleep 0.3; export SLOW=1' }), both.call('bash', { command: 'export FAST=2' })])
    expect(calls.map((c) => c.isError)).toEqual([false, false])
    expect(textOf(await both.call('bash', { command: 'echo "$SLOW $FAST"' }))).toBe('1 2')
  })

  it('runs in shell’s sandbox: the workspace is writable, the rest is not', async () => {
    const { dir, session } = setUp({ preset: 'guarded', onApproval: () => true })
    const data: Array<Record<string, unknown> | undefined> = []
    const results = await runAnthropicToolUses(session, await reply([bash({ command: 'cd src && touch made.txt' }), bash({ command: 'touch /usr/fsgate-sandbox-probe; pwd' })]), {
      onResult: (r) => data.push(r.data),
    })
    expect(results[0].is_error).toBe(false)
    expect(fs.existsSync(path.join(dir, 'src/made.txt'))).toBe(true)
    const backend = data[1]?.sandbox
    console.log(`[bash] sandbox: ${String(backend)}`)
    if (backend !== 'none') {
      expect(fs.existsSync('/usr/fsgate-sandbox-probe')).toBe(false)
      expect(JSON.stringify(results[1].content)).toMatch(/Read-only file system|Permission denied/)
    } else if (process.env.CI === 'true') throw new Error('no sandbox could start, which CI requires')
    fs.rmSync('/usr/fsgate-sandbox-probe', { force: true })
  })

  it('runs under shell’s timeout; a timed-out command keeps the session as it was', async () => {
    const { session } = setUp({ preset: 'claude-code', limits: { shellTimeoutSecs: 1 } })
    await run(session, [bash({ command: 'cd src' })])
    const [slow] = await run(session, [bash({ command: 'cd deep; sleep 5' })])
    expect(slow).toMatchObject({ error: true, text: expect.stringContaining('keeps its folder and variables from before') })
    const [where] = await run(session, [bash({ command: 'basename "$PWD"' })])
    expect(where.text).toBe('src')
  })

  it('needs a command or restart', async () => {
    const { session } = setUp()
    expect((await run(session, [bash({})]))[0]).toMatchObject({ error: true, text: expect.stringContaining('Give a command to run') })
  })
})
