/**
 * apply_patch (SPEC §8.2): the file's own bytes (line endings, BOM, encoding, context
 * lines that matched loosely), the contract (no read for Update and Delete, a read for an
 * Add or a move over an existing file, STALE), the policy (confinement, protected paths,
 * autonomy, the consent gate unit by unit), the history (undo puts a whole patch back),
 * errors a model can act on, the result, the codex dialect and the MCP server.
 */
import fs from 'node:fs'
import path from 'node:path'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { afterAll, describe, expect, it } from 'vitest'

import { createMcpServer } from '../ts/mcp/server.js'
import { deliver } from '../ts/native.js'
import { openaiChatTools, openaiResponsesTools, type ToolResult } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

const patch = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n')
const read = (dir: string, rel: string) => fs.readFileSync(path.join(dir, rel))
const utf16 = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')])
/** Every file and folder under dir, sorted (folders with a trailing "/"). */
const tree = (dir: string): string[] =>
  (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .map((d) => `${path.relative(dir, path.join(d.parentPath, d.name))}${d.isDirectory() ? '/' : ''}`)
    .sort()

describe('the bytes of the file', () => {
  it('a hunk that fails in a file with a long path keeps the whole path in data, though the message cuts it', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const rel = `${'deep-folder-name-'.repeat(6)}/file.txt`
    put(dir, rel, 'alpha\n')
    const r = await session.call('apply_patch', { input: patch(`*** Update File: ${rel}`, '@@', '-gamma', '+beta') })
    expect(fails(r, 'STRING_NOT_FOUND').length).toBeLessThanOrEqual(300)
    expect(r.data?.path).toBe(rel)
  })

  it('keeps CRLF line endings (added lines too), a BOM, UTF-16, and a context line’s own bytes when it matched loosely', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'crlf.txt', 'one\r\ntwo\r\nthree\r\n')
    put(dir, 'bom.txt', '\ufeffalpha\nbeta\n')
    fs.writeFileSync(path.join(dir, 'wide.txt'), utf16('a\r\nb\r\n'))
    put(dir, 'quotes.txt', '  say(\u201chi\u201d)\u00a0 \nold\n')
    const r = await session.call(
      'apply_patch',
      {
        input: patch(
          '*** Update File: crlf.txt',
          '@@',
          ' one',
          '-two',
          '+2',
          '+2.5',
          '*** Update File: bom.txt',
          '@@',
          '-beta',
          '+gamma',
          '*** Update File: wide.txt',
          '@@',
          ' a',
          '+x',
          '*** Update File: quotes.txt',
          '@@',
          ' say("hi")',
          '-old',
          '+new',
        ),
      },
    )
    const text = ok(r)
    expect(read(dir, 'crlf.txt').toString()).toBe('one\r\n2\r\n2.5\r\nthree\r\n')
    expect(read(dir, 'bom.txt').toString()).toBe('\ufeffalpha\ngamma\n')
    expect(read(dir, 'wide.txt')).toEqual(utf16('a\r\nx\r\nb\r\n'))
    expect(read(dir, 'quotes.txt').toString()).toBe('  say(\u201chi\u201d)\u00a0 \nnew\n')
    expect(text).toContain('M quotes.txt (+1 -1; matched after ignoring whitespace and typographic punctuation)')
    const files = r.data?.files as Array<{ path: string; encoding: string }>
    expect(files.find((f) => f.path === 'wide.txt')?.encoding).toBe('utf-16le')
    expect(files.find((f) => f.path === 'bom.txt')?.encoding).toBe('utf-8-bom')
  })

  it('refuses a file that is not text, and one over limits.editMaxBytes, changing nothing', async () => {
    const { dir, session } = workspace({ preset: 'claude-code', limits: { editMaxBytes: 64 } })
    fs.writeFileSync(path.join(dir, 'bin.dat'), Buffer.from([0, 1, 2, 3, 0, 9]))
    put(dir, 'big.txt', 'x\n'.repeat(100))
    put(dir, 'a.txt', 'a\n')
    const change = ['*** Update File: a.txt', '@@', '-a', '+b']
    expect(fails(await session.call('apply_patch', { input: patch(...change, '*** Update File: bin.dat', '@@', '-x', '+y') }), 'ENCODING')).toMatch(/bin\.dat .*Nothing was changed\. .*shell command/)
    expect(fails(await session.call('apply_patch', { input: patch(...change, '*** Update File: big.txt', '@@', '-x', '+y') }), 'FILE_TOO_LARGE')).toContain('big.txt')
    expect(read(dir, 'a.txt').toString()).toBe('a\n')
  })
})

describe('the contract', () => {
  it('updates, moves and deletes need no earlier read; the patch’s own lines are the evidence', async () => {
    const { dir, session } = workspace({ preset: 'guarded', onPermissionRequest: () => true })
    put(dir, 'a.txt', 'a\n')
    put(dir, 'b.txt', 'b\n')
    put(dir, 'c.txt', 'c\n')
    ok(await session.call('apply_patch', { input: patch('*** Update File: a.txt', '@@', '-a', '+A', '*** Update File: b.txt', '*** Move to: sub/b2.txt', '@@', '-b', '+B', '*** Delete File: c.txt') }))
    expect(tree(dir)).toEqual(['a.txt', 'sub/', 'sub/b2.txt'])
    // The session's records follow: an Edit right after needs no read.
    ok(await session.call('file_edit', { path: 'a.txt', old_string: 'A', new_string: 'AA' }))
  })

  it('an Add over an existing file, or a move onto one, needs the session’s full read of its current version', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'x.txt', 'mine\n')
    put(dir, 'src.txt', 'from\n')
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n')
    put(dir, 'long.txt', `${lines}\n`)
    const add = patch('*** Add File: x.txt', '+theirs')
    expect(fails(await session.call('apply_patch', { input: add }), 'NOT_READ')).toMatch(/x\.txt already exists .*Change it with \*\*\* Update File instead, or read it first with file_read/)
    const move = patch('*** Update File: src.txt', '*** Move to: x.txt', '@@', '-from', '+to')
    expect(fails(await session.call('apply_patch', { input: move }), 'NOT_READ')).toContain('*** Move to would replace it')
    ok(await session.call('Read', { file_path: 'long.txt', limit: 10 }))
    fails(await session.call('apply_patch', { input: patch('*** Add File: long.txt', '+new') }), 'PARTIAL_READ')
    expect(read(dir, 'x.txt').toString()).toBe('mine\n')
    ok(await session.call('Read', { file_path: 'x.txt' }))
    ok(await session.call('apply_patch', { input: move }))
    expect(read(dir, 'x.txt').toString()).toBe('to\n')
    expect(fs.existsSync(path.join(dir, 'src.txt'))).toBe(false)
  })

  it('a file changed after the read that allowed its replacement is STALE, and nothing is written', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'x.txt', 'v1\n')
    put(dir, 'other.txt', 'o\n')
    ok(await session.call('Read', { file_path: 'x.txt' }))
    put(dir, 'x.txt', 'v2 by someone else\n')
    const text = fails(await session.call('apply_patch', { input: patch('*** Update File: other.txt', '@@', '-o', '+O', '*** Add File: x.txt', '+mine') }), 'STALE')
    expect(text).toMatch(/x\.txt was changed .* Read it again/)
    expect(read(dir, 'x.txt').toString()).toBe('v2 by someone else\n')
    expect(read(dir, 'other.txt').toString()).toBe('o\n')
  })
})

describe('the policy', () => {
  it('paths are confined and protected paths are never written', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, '.git/config', '[core]\n')
    put(dir, 'a.txt', 'a\n')
    const outside = fails(await session.call('apply_patch', { input: patch('*** Add File: ../escape.txt', '+x') }), 'PATH_OUTSIDE_WORKSPACE')
    expect(outside).toContain('line 2 of the patch')
    expect(fs.existsSync(path.join(dir, '..', 'escape.txt'))).toBe(false)
    fails(await session.call('apply_patch', { input: patch('*** Update File: a.txt', '@@', '-a', '+b', '*** Update File: .git/config', '@@', '-[core]', '+[x]') }), 'PROTECTED_PATH')
    expect(read(dir, 'a.txt').toString()).toBe('a\n')
  })

  it('a Delete or a move of a symbolic link never deletes or moves the file it points to', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'README.md', 'the real readme\n')
    put(dir, 'src/a.txt', 'a\n')
    fs.mkdirSync(path.join(dir, 'docs'))
    fs.symlinkSync('../README.md', path.join(dir, 'docs/README.md'))
    fs.symlinkSync('../src/a.txt', path.join(dir, 'docs/a.txt'))
    const before = tree(dir)
    const gone = fails(await session.call('apply_patch', { input: patch('*** Delete File: docs/README.md') }), 'INVALID_INPUT')
    expect(gone).toMatch(/docs\/README\.md is a symbolic link/)
    const moved = fails(await session.call('apply_patch', { input: patch('*** Update File: docs/a.txt', '*** Move to: docs/b.txt', '@@', '-a', '+b') }), 'INVALID_INPUT')
    expect(moved).toMatch(/docs\/a\.txt is a symbolic link/)
    expect(tree(dir)).toEqual(before)
    expect(read(dir, 'README.md').toString()).toBe('the real readme\n')
    expect(read(dir, 'src/a.txt').toString()).toBe('a\n')
    // Through a link, an update changes the file it points to, as every write does.
    ok(await session.call('apply_patch', { input: patch('*** Update File: docs/a.txt', '@@', '-a', '+b') }))
    expect(read(dir, 'src/a.txt').toString()).toBe('b\n')
    expect(fs.lstatSync(path.join(dir, 'docs/a.txt')).isSymbolicLink()).toBe(true)
  })

  it('read_only autonomy refuses a patch; the budget counts it', async () => {
    const { dir, session } = workspace({ preset: 'claude-code', policy: { autonomy: 'read_only' } })
    put(dir, 'a.txt', 'a\n')
    fails(await session.call('apply_patch', { input: patch('*** Update File: a.txt', '@@', '-a', '+b') }), 'AUTONOMY')
    const budget = workspace({ preset: 'claude-code', policy: { actionsPerHour: 1 } })
    ok(await budget.session.call('apply_patch', { input: patch('*** Add File: one.txt', '+1') }))
    fails(await budget.session.call('apply_patch', { input: patch('*** Add File: two.txt', '+2') }), 'RATE_LIMITED')
  })

  it('the consent gate asks for each top-level folder of existing files, one grant phrase at a time; new files need none', async () => {
    const { dir, session } = workspace({ preset: 'guarded' })
    put(dir, 'app/a.txt', 'a\n')
    put(dir, 'lib/b.txt', 'b\n')
    const input = patch('*** Add File: fresh/new.txt', '+n', '*** Update File: app/a.txt', '@@', '-a', '+A', '*** Update File: lib/b.txt', '@@', '-b', '+B')
    const first = await session.call('apply_patch', { input })
    expect(fails(first, 'PERMISSION_REQUIRED')).toContain('app/')
    const second = await session.call('apply_patch', { input, grant_phrase: first.data?.grantPhrase })
    expect(fails(second, 'PERMISSION_REQUIRED')).toContain('lib/')
    expect(tree(dir)).toEqual(['app/', 'app/a.txt', 'lib/', 'lib/b.txt'])
    ok(await session.call('apply_patch', { input, grant_phrase: second.data?.grantPhrase }))
    expect(read(dir, 'lib/b.txt').toString()).toBe('B\n')
    ok(await session.call('apply_patch', { input: patch('*** Add File: brand/new.txt', '+x') }))
  })
})

describe('the history', () => {
  it('undo of any file of a patch puts the whole patch back: contents, deleted and created files', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'a.txt', 'a\n')
    put(dir, 'gone.txt', 'keep me\n')
    put(dir, 'old/name.txt', 'n\n')
    const before = tree(dir)
    ok(
      await session.call('apply_patch', {
        input: patch('*** Update File: a.txt', '@@', '-a', '+A', '*** Delete File: gone.txt', '*** Add File: made.txt', '+m', '*** Update File: old/name.txt', '*** Move to: new/name.txt', '@@', '-n', '+N'),
      }),
    )
    const entries = session.history()
    expect(entries).toHaveLength(5)
    expect(new Set(entries.map((e) => e.group?.id)).size).toBe(1)
    expect(entries.map((e) => e.action).sort()).toEqual(['created', 'created', 'removed', 'removed', 'replaced'])
    const undone = await session.undo('made.txt')
    expect(undone.patch?.map((p) => p.path).sort()).toEqual(['a.txt', 'gone.txt', 'made.txt', 'new/name.txt', 'old/name.txt'])
    // The folder the move made is gone again too.
    expect(tree(dir)).toEqual(before)
    expect(read(dir, 'a.txt').toString()).toBe('a\n')
    expect(read(dir, 'gone.txt').toString()).toBe('keep me\n')
    expect(session.history()).toEqual([])
  })

  it.skipIf(process.platform === 'win32')('undo gives a deleted or moved-away file back its mode; a moved file keeps its mode', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const mode = (rel: string) => fs.statSync(path.join(dir, rel)).mode & 0o777
    put(dir, 'run.sh', '#!/bin/sh\necho hi\n')
    put(dir, 'key.txt', 'secret\n')
    fs.chmodSync(path.join(dir, 'run.sh'), 0o755)
    fs.chmodSync(path.join(dir, 'key.txt'), 0o600)
    ok(await session.call('apply_patch', { input: patch('*** Update File: run.sh', '*** Move to: bin/run.sh', '@@', '-echo hi', '+echo hello', '*** Delete File: key.txt') }))
    expect(mode('bin/run.sh')).toBe(0o755)
    await session.undo('key.txt')
    expect(tree(dir)).toEqual(['key.txt', 'run.sh'])
    expect([mode('run.sh'), mode('key.txt')]).toEqual([0o755, 0o600])
  })

  it('an undo that fails midway says which files it could not put back, as the engine reports them', async () => {
    const { dir, toolkit, session } = workspace({ preset: 'claude-code' })
    put(dir, 'a.txt', 'a\n')
    put(dir, 'b.txt', 'b\n')
    ok(await session.call('apply_patch', { input: patch('*** Update File: a.txt', '@@', '-a', '+A', '*** Update File: b.txt', '@@', '-b', '+B') }))
    // The engine's answer when b.txt changed under the undo and a.txt, already put back,
    // changed too before it could be made the patch's version again (a race with another program).
    const real = (rel: string) => fs.realpathSync(path.join(dir, rel))
    const failure = {
      code: 'COMMIT',
      error: { code: 'STALE', message: 'was modified while it was being written', path: real('b.txt') },
      onDisk: [
        { realPath: real('a.txt'), state: 'unknown' },
        { realPath: real('b.txt'), state: 'old' },
      ],
    }
    const fsOf = toolkit as unknown as { fs: { commitFiles: (c: unknown, id: number) => void } }
    fsOf.fs.commitFiles = (_completer, id) => queueMicrotask(() => deliver(id, { value: { failure } }))
    type Refusal = { code: string; message: string; data?: Record<string, unknown> }
    const err: Refusal = await session.undo('a.txt').then(
      () => ({ code: 'none', message: 'the undo succeeded' }),
      (e: unknown) => e as Refusal,
    )
    expect(err).toMatchObject({ code: 'STALE' })
    expect(err.message).not.toMatch(/no file of it was changed/)
    expect(err.message).toMatch(/a\.txt/)
    expect(Buffer.byteLength(err.message)).toBeLessThan(600)
    expect(err.data?.onDisk).toEqual([
      { path: 'a.txt', state: 'unknown' },
      { path: 'b.txt', state: 'old' },
    ])
  })

  it('an undo is refused whole when a file of the patch changed since, or the session changed it again', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'a.txt', 'a\n')
    put(dir, 'b.txt', 'b\n')
    ok(await session.call('apply_patch', { input: patch('*** Update File: a.txt', '@@', '-a', '+A', '*** Update File: b.txt', '@@', '-b', '+B') }))
    put(dir, 'b.txt', 'changed by someone\n')
    await expect(session.undo('a.txt')).rejects.toMatchObject({ code: 'STALE' })
    expect(read(dir, 'a.txt').toString()).toBe('A\n')
    put(dir, 'b.txt', 'B\n')
    ok(await session.call('file_read', { path: 'a.txt' }))
    ok(await session.call('file_edit', { path: 'a.txt', old_string: 'A', new_string: 'AA' }))
    await expect(session.undo('b.txt')).rejects.toMatchObject({ code: 'STALE', message: expect.stringContaining('undo that change first') })
    await session.undo('a.txt')
    expect(read(dir, 'a.txt').toString()).toBe('A\n')
    await session.undo('b.txt')
    expect([read(dir, 'a.txt').toString(), read(dir, 'b.txt').toString()]).toEqual(['a\n', 'b\n'])
  })
})

describe('errors a model can act on, under 600 bytes', () => {
  const cases: Array<[string, string, string, RegExp]> = [
    ['malformed: the line at fault', patch('*** Update File: a.txt', '@@', 'no marker'), 'INVALID_INPUT', /Invalid patch at line 4 \("no marker"\).*' ' \(context\)/],
    ['no first marker', 'Update a.txt please', 'INVALID_INPUT', /line 1 .*first line of the patch must be '\*\*\* Begin Patch'/],
    ['no sections', patch(), 'INVALID_INPUT', /no file sections, so no files were modified/],
    ['a removed line not in the file, with the closest lines and numbers', patch('*** Update File: a.txt', '@@', ' alpha', '-betta', '+b'), 'STRING_NOT_FOUND', /"betta" \(hunk 1, patch line 5\) is not in the file after line 1.*\n2: beta\n/s],
    ['a header line not in the file', patch('*** Update File: a.txt', '@@ def nowhere():', '-alpha', '+a'), 'STRING_NOT_FOUND', /@@ line "def nowhere\(\):"/],
    ['an end-of-file hunk not at the end', patch('*** Update File: a.txt', '@@', '-alpha', '+a', '*** End of File'), 'STRING_NOT_FOUND', /not at its end/],
    ['hunks changing the same lines', patch('*** Update File: a.txt', '@@', ' gamma', '-alpha2', '+x', '@@', '-alpha2', '+y', '*** End of File'), 'INVALID_INPUT', /change the same lines/],
    ['a missing file to update', patch('*** Update File: nope.txt', '@@', '-x', '+y'), 'NOT_FOUND', /file to update does not exist: nope\.txt/],
    ['a folder to delete', patch('*** Delete File: sub'), 'IS_DIRECTORY', /sub is a directory/],
  ]
  it.each(cases)('%s', async (_what, input, code, message) => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'a.txt', 'alpha\nbeta\ngamma\nalpha2\n')
    put(dir, 'sub/x.txt', 'x\n')
    const r: ToolResult = await session.call('apply_patch', { input })
    const text = fails(r, code)
    expect(text).toMatch(message)
    expect(Buffer.byteLength(text)).toBeLessThan(600)
    expect(read(dir, 'a.txt').toString()).toBe('alpha\nbeta\ngamma\nalpha2\n')
  })

  it('long paths (and a missing line of quotes and backslashes) stay under 600 bytes, every path still recognizable', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const deep = `${'a_directory_with_a_long_name_in_a_big_repository/'.repeat(8)}file.txt`
    put(dir, deep, 'alpha\nbeta\n')
    const garbage = 'x'.repeat(2000)
    const cases: Array<[string, string]> = [
      [patch(`*** Update File: ${garbage}`), 'INVALID_INPUT'],
      [patch(`*** Update File: ${'d/'.repeat(300)}x.txt`, '@@', '-a', '+b'), 'NOT_FOUND'],
      [patch(`*** Add File: ../${garbage}`, '+a'), 'PATH_OUTSIDE_WORKSPACE'],
      [patch(`*** Add File: .git/${garbage}`, '+a'), 'PROTECTED_PATH'],
      [patch(`*** Add File: ${deep}`, '+a'), 'NOT_READ'],
      [patch(`*** Update File: ${deep}`, '@@', ' alpha', `-${'\\"'.repeat(80)}`, '+x'), 'STRING_NOT_FOUND'],
      [patch(`*** Update File: ${deep}`, `@@ ${'\\"'.repeat(80)}`, '-alpha', '+x'), 'STRING_NOT_FOUND'],
      [patch(`*** Update File: ${deep}`, '@@', '-alpha', '+x', '*** End of File'), 'STRING_NOT_FOUND'],
    ]
    for (const [input, code] of cases) {
      const text = fails(await session.call('apply_patch', { input }), code)
      expect(Buffer.byteLength(text), text).toBeLessThan(600)
    }
    expect(read(dir, deep).toString()).toBe('alpha\nbeta\n')
  })

  it('a long missing line and long candidates stay under 600 bytes', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const long = `${'x'.repeat(1000)}`
    put(dir, 'a.txt', `${long}1\n${long}2\n${long}3\n`)
    const text = fails(await session.call('apply_patch', { input: patch('*** Update File: a.txt', '@@', `-${long}4`, '+y') }), 'STRING_NOT_FOUND')
    expect(Buffer.byteLength(text)).toBeLessThan(600)
  })
})

describe('the result', () => {
  it('says per file what changed (Codex’s A/M/D lines with counts) and gives the unified diff in data', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'm.txt', 'one\ntwo\nthree\n')
    put(dir, 'd.txt', 'x\ny\n')
    put(dir, 'mv.txt', 'k\n')
    const r = await session.call('apply_patch', {
      input: patch('*** Add File: n.txt', '+1', '+2', '*** Update File: m.txt', '@@', ' one', '-two', '+2', '*** Update File: mv.txt', '*** Move to: moved.txt', '@@', '-k', '+K', '*** Delete File: d.txt'),
    })
    expect(ok(r)).toBe(['Success. Updated the following files:', 'A n.txt (+2)', 'M m.txt (+1 -1)', 'M moved.txt (moved from mv.txt; +1 -1)', 'D d.txt (-2)'].join('\n'))
    const diff = String(r.data?.diff)
    expect(diff).toContain('--- a/m.txt\n+++ b/m.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n')
    expect(diff).toContain('--- a/mv.txt\n+++ b/moved.txt\n')
    expect(diff).toContain('--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+1\n+2\n')
    expect(r.data?.operations).toEqual([
      { action: 'added', path: 'n.txt', to: null, added: 2, removed: 0, matchedBy: 'exact' },
      { action: 'updated', path: 'm.txt', to: null, added: 1, removed: 1, matchedBy: 'exact' },
      { action: 'moved', path: 'mv.txt', to: 'moved.txt', added: 1, removed: 1, matchedBy: 'exact' },
      { action: 'deleted', path: 'd.txt', to: null, added: 0, removed: 2, matchedBy: 'exact' },
    ])
  })
})

describe('the codex dialect', () => {
  it('lists apply_patch and shell_command; the Responses form of apply_patch is freeform with Codex’s grammar', () => {
    const { toolkit } = workspace()
    expect(toolkit.definitions({ dialect: 'codex' }).map((d) => ('name' in d ? d.name : ''))).toEqual(['apply_patch', 'shell_command'])
    const fn = openaiChatTools(toolkit, { dialect: 'codex' })[0]
    expect(fn.function).toMatchObject({ name: 'apply_patch', parameters: { required: ['input'] } })
    const [custom, shell] = openaiResponsesTools(toolkit, { dialect: 'codex' })
    expect(custom).toMatchObject({ type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark' } })
    expect((custom as { format: { definition: string } }).format.definition).toMatch(/^start: begin_patch hunk\+ end_patch\n/)
    expect(shell).toMatchObject({ type: 'function', name: 'shell_command' })
    expect(openaiResponsesTools(toolkit, { builtin: true })).toEqual([{ type: 'apply_patch' }, { type: 'shell' }])
    expect(openaiResponsesTools(toolkit, { dialect: 'codex', freeform: false })[0]).toMatchObject({ type: 'function', name: 'apply_patch' })
  })

  it('the MCP server exposes apply_patch in the codex dialect, taking the patch text as input', async () => {
    const { dir, toolkit } = workspace({ preset: 'claude-code' })
    put(dir, 'a.txt', 'a\n')
    const server = createMcpServer(toolkit, { dialect: 'codex' })
    const [client, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    const mcp = new Client({ name: 'test', version: '1' })
    await mcp.connect(client)
    try {
      const { tools } = await mcp.listTools()
      const tool = tools.find((t) => t.name === 'apply_patch')
      expect(tool?.inputSchema).toMatchObject({ type: 'object', required: ['input'] })
      expect(tool?.annotations?.readOnlyHint).toBe(false)
      const r = await mcp.callTool({ name: 'apply_patch', arguments: { input: patch('*** Update File: a.txt', '@@', '-a', '+b') } })
      expect(r.isError).toBeFalsy()
      expect(textOf(r as ToolResult)).toContain('M a.txt')
      expect(read(dir, 'a.txt').toString()).toBe('b\n')
    } finally {
      await mcp.close()
    }
  })
})
