/**
 * The consent gate, SPEC §5.3 and seed 003: replacing an existing file needs the user's
 * grant for its top-level folder, once per session, shared by write and edit; one-time
 * nonces; phrases the user really wrote (`noteUserMessage`); a host UI
 * (`onPermissionRequest`); and the presets that have no gate at all.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import type { PermissionRequest, Session, ToolResult, ToolkitOptions } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, textOf, workspace, type Fixture } from './helpers.js'

afterAll(removeTempDirs)

const GATE = 'PERMISSION_REQUIRED'
/** 16 characters of Crockford base32 (no i, l, o, u) in four groups: 80 bits. */
const NONCE = /^[0-9abcdefghjkmnpqrstvwxyz]{4}(-[0-9abcdefghjkmnpqrstvwxyz]{4}){3}$/

/** A workspace with src/a.txt, src/sub/b.txt, lib/c.txt and two root files. */
function fixture(options: Partial<ToolkitOptions> = {}): Fixture {
  const fx = workspace({ preset: 'consent', ...options })
  put(fx.dir, 'src/a.txt', 'alpha\n')
  put(fx.dir, 'src/sub/b.txt', 'bravo\n')
  put(fx.dir, 'lib/c.txt', 'charlie\n')
  put(fx.dir, 'README.md', 'readme\n')
  put(fx.dir, 'NOTES.md', 'notes\n')
  return fx
}

const disk = (fx: Fixture, rel: string) => fs.readFileSync(path.join(fx.dir, rel), 'utf8')

/** Asserts a gate result and returns its phrase (which carries its nonce). */
function gate(r: ToolResult, unit?: string): string {
  fails(r, GATE)
  const nonce = r.error?.nonce
  expect(nonce, 'error.nonce').toMatch(NONCE)
  const phrase = r.data?.grantPhrase
  expect(typeof phrase).toBe('string')
  expect(phrase as string).toContain(nonce)
  expect(textOf(r)).toContain(phrase as string)
  if (unit !== undefined) expect(r.data?.unit).toBe(unit)
  return phrase as string
}

/** write_file with overwrite: true (the consent dialect's replace). */
const overwrite = (s: Session, p: string, content: string, grant_phrase?: string) =>
  s.call('write_file', { path: p, content, overwrite: true, ...(grant_phrase === undefined ? {} : { grant_phrase }) })

/** The consent dialect's edit. */
const edit = (s: Session, p: string, old_string: string, new_string: string, grant_phrase?: string) =>
  s.call('edit', { path: p, old_string, new_string, ...(grant_phrase === undefined ? {} : { grant_phrase }) })

describe('consent preset: the gate on replacing an existing file', () => {
  it('overwriting an existing file is PERMISSION_REQUIRED with a nonce and a phrase; nothing is written', async () => {
    const fx = fixture()
    const r = await overwrite(fx.session, 'src/a.txt', 'changed\n')
    const phrase = gate(r, 'src/')
    expect(r.data?.refused).toBe(false)
    expect(r.data?.nonce).toBe(r.error?.nonce)
    expect(phrase).toMatch(/src\//)
    const text = textOf(r)
    expect(text.startsWith('[permission_required] ')).toBe(true)
    expect(text).toMatch(/ask the user/i)
    expect(text).toMatch(/grant_phrase/)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
  })

  it('other errors start with [error] in the consent preset', async () => {
    const fx = fixture()
    const exists = await fx.session.call('write_file', { path: 'src/a.txt', content: 'x\n' })
    expect(fails(exists, 'FILE_EXISTS').startsWith('[error] ')).toBe(true)
    expect(textOf(exists)).toMatch(/overwrite/)
    expect(exists.error?.nonce).toBeUndefined()
    const invalid = await fx.session.call('write_file', { path: 'src/new.txt' })
    expect(fails(invalid, 'INVALID_INPUT').startsWith('[error] ')).toBe(true)
    const unknown = await fx.session.call('no_such_tool', {})
    expect(fails(unknown, 'INVALID_INPUT').startsWith('[error] ')).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    expect(fs.existsSync(path.join(fx.dir, 'src/new.txt'))).toBe(false)
  })

  it('retrying with the phrase replaces the file', async () => {
    const fx = fixture()
    const phrase = gate(await overwrite(fx.session, 'src/a.txt', 'changed\n'))
    const r = await overwrite(fx.session, 'src/a.txt', 'changed\n', phrase)
    expect(ok(r)).toMatch(/src\/a\.txt/)
    expect(r.data?.realPath).toBe(path.join(fx.dir, 'src/a.txt'))
    expect(r.data?.workingCopy).toBe(false)
    expect(disk(fx, 'src/a.txt')).toBe('changed\n')
  })

  it('nonces are at least 64 random bits (16 Crockford base32 chars in 4 groups) and never repeat', async () => {
    const fx = fixture()
    const seen = new Set<string>()
    for (let i = 0; i < 100; i++) {
      const r = await overwrite(fx.session, i % 2 ? 'src/a.txt' : 'lib/c.txt', 'x\n')
      fails(r, GATE)
      const nonce = r.error?.nonce as string
      expect(nonce).toMatch(NONCE)
      seen.add(nonce)
    }
    expect(seen.size).toBe(100)
    // The characters vary across the whole alphabet, not a fixed subset.
    const chars = new Set([...seen].join('').replace(/-/g, ''))
    expect(chars.size).toBeGreaterThanOrEqual(28)
  })

  it('a grant covers the whole top-level folder (nested files too) for the rest of the session', async () => {
    const fx = fixture()
    const phrase = gate(await overwrite(fx.session, 'src/a.txt', 'one\n'))
    ok(await overwrite(fx.session, 'src/a.txt', 'one\n', phrase))
    ok(await overwrite(fx.session, 'src/sub/b.txt', 'two\n'))
    ok(await overwrite(fx.session, 'src/a.txt', 'three\n'))
    expect(disk(fx, 'src/sub/b.txt')).toBe('two\n')
    expect(disk(fx, 'src/a.txt')).toBe('three\n')
  })

  it('another top-level folder needs its own grant', async () => {
    const fx = fixture()
    ok(await overwrite(fx.session, 'src/a.txt', 'one\n', gate(await overwrite(fx.session, 'src/a.txt', 'one\n'))))
    gate(await overwrite(fx.session, 'lib/c.txt', 'lib\n'), 'lib/')
    expect(disk(fx, 'lib/c.txt')).toBe('charlie\n')
    gate(await overwrite(fx.session, 'README.md', 'root\n'), 'README.md')
    expect(disk(fx, 'README.md')).toBe('readme\n')
  })

  it('a file at the workspace root is its own unit', async () => {
    const fx = fixture()
    const phrase = gate(await overwrite(fx.session, 'README.md', 'new readme\n'), 'README.md')
    ok(await overwrite(fx.session, 'README.md', 'new readme\n', phrase))
    expect(disk(fx, 'README.md')).toBe('new readme\n')
    ok(await overwrite(fx.session, 'README.md', 'again\n'))
    // Another root file, and any folder, are not covered.
    gate(await overwrite(fx.session, 'NOTES.md', 'n\n'), 'NOTES.md')
    gate(await overwrite(fx.session, 'src/a.txt', 's\n'), 'src/')
    expect(disk(fx, 'NOTES.md')).toBe('notes\n')
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
  })

  it('a new file never needs a grant', async () => {
    const fx = fixture()
    const r = await fx.session.call('write_file', { path: 'src/fresh/new.txt', content: 'new\n' })
    ok(r)
    expect(r.data?.created).toBe(true)
    ok(await fx.session.call('write_file', { path: 'brand-new.md', content: 'root\n', overwrite: true }))
    expect(disk(fx, 'src/fresh/new.txt')).toBe('new\n')
    expect(disk(fx, 'brand-new.md')).toBe('root\n')
    // Creating files granted nothing: replacing one still asks.
    gate(await overwrite(fx.session, 'src/fresh/new.txt', 'again\n'), 'src/')
    expect(disk(fx, 'src/fresh/new.txt')).toBe('new\n')
  })

  it('a new file made by edit with old_string "" needs no grant', async () => {
    const fx = fixture()
    const r = await edit(fx.session, 'lib/made-by-edit.txt', '', 'hello\n')
    ok(r)
    expect(disk(fx, 'lib/made-by-edit.txt')).toBe('hello\n')
  })

  it('a wrong phrase is refused and voids the pending nonce', async () => {
    const fx = fixture()
    const right = gate(await overwrite(fx.session, 'src/a.txt', 'x\n'))
    const wrong = await overwrite(fx.session, 'src/a.txt', 'x\n', 'allow edits in src/ 0000-0000-0000-0000')
    const next = gate(wrong, 'src/')
    expect(wrong.data?.refused).toBe(true)
    expect(textOf(wrong)).toMatch(/refused/)
    expect(next).not.toBe(right)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    // The phrase that was right before the wrong try no longer works.
    const late = await overwrite(fx.session, 'src/a.txt', 'x\n', right)
    const third = gate(late)
    expect(late.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    // The freshly issued one does.
    ok(await overwrite(fx.session, 'src/a.txt', 'x\n', third))
    expect(disk(fx, 'src/a.txt')).toBe('x\n')
  })

  it('an invented phrase with no request pending is refused', async () => {
    const fx = fixture()
    const r = await overwrite(fx.session, 'src/a.txt', 'x\n', 'allow edits in src/ abcd-efgh-jkmn-pqrs')
    gate(r, 'src/')
    expect(r.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
  })

  it('a used phrase cannot be reused for another unit', async () => {
    const fx = fixture()
    const phrase = gate(await overwrite(fx.session, 'src/a.txt', 'x\n'))
    ok(await overwrite(fx.session, 'src/a.txt', 'x\n', phrase))
    const r = await overwrite(fx.session, 'lib/c.txt', 'y\n', phrase)
    gate(r, 'lib/')
    expect(r.data?.refused).toBe(true)
    expect(disk(fx, 'lib/c.txt')).toBe('charlie\n')
    // Also after lib's own request is pending.
    const libPhrase = gate(await overwrite(fx.session, 'lib/c.txt', 'y\n'))
    const again = await overwrite(fx.session, 'lib/c.txt', 'y\n', phrase)
    gate(again)
    expect(again.data?.refused).toBe(true)
    expect(again.data?.grantPhrase).not.toBe(libPhrase)
    expect(disk(fx, 'lib/c.txt')).toBe('charlie\n')
  })

  it("one unit's phrase does not grant another unit", async () => {
    const fx = fixture()
    const srcPhrase = gate(await overwrite(fx.session, 'src/a.txt', 'x\n'))
    gate(await overwrite(fx.session, 'lib/c.txt', 'y\n'))
    const r = await overwrite(fx.session, 'lib/c.txt', 'y\n', srcPhrase)
    gate(r, 'lib/')
    expect(r.data?.refused).toBe(true)
    expect(disk(fx, 'lib/c.txt')).toBe('charlie\n')
  })

  it('every new PERMISSION_REQUIRED issues a fresh nonce that voids the earlier one', async () => {
    const fx = fixture()
    const first = await overwrite(fx.session, 'src/a.txt', 'x\n')
    const second = await overwrite(fx.session, 'src/sub/b.txt', 'x\n')
    const p1 = gate(first)
    const p2 = gate(second)
    expect(second.error?.nonce).not.toBe(first.error?.nonce)
    expect(p2).not.toBe(p1)
    const stale = await overwrite(fx.session, 'src/a.txt', 'x\n', p1)
    const p3 = gate(stale)
    expect(stale.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    ok(await overwrite(fx.session, 'src/a.txt', 'x\n', p3))
    expect(disk(fx, 'src/a.txt')).toBe('x\n')
  })

  it('grants are per session: a second session of the same toolkit needs its own grant', async () => {
    const fx = fixture()
    const s1Phrase = gate(await overwrite(fx.session, 'src/a.txt', 'one\n'))
    const s2 = fx.toolkit.createSession()
    // s1's pending phrase means nothing to s2.
    const cross = await overwrite(s2, 'src/a.txt', 'two\n', s1Phrase)
    gate(cross)
    expect(cross.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    ok(await overwrite(fx.session, 'src/a.txt', 'one\n', s1Phrase))
    // s1 is granted; s2 still is not.
    const r = await overwrite(s2, 'src/sub/b.txt', 'two\n')
    gate(r, 'src/')
    expect(r.data?.refused).toBe(false)
    expect(disk(fx, 'src/sub/b.txt')).toBe('bravo\n')
    ok(await overwrite(s2, 'src/sub/b.txt', 'two\n', r.data?.grantPhrase as string))
    expect(disk(fx, 'src/sub/b.txt')).toBe('two\n')
  })

  it('phrase comparison tolerates case, extra spaces and surrounding quotes', async () => {
    const fx = fixture()
    const phrase = gate(await overwrite(fx.session, 'src/a.txt', 'x\n'))
    const sloppy = `  "${phrase.toUpperCase().split(' ').join('   ')}."  `
    ok(await overwrite(fx.session, 'src/a.txt', 'x\n', sloppy))
    expect(disk(fx, 'src/a.txt')).toBe('x\n')
  })
})

describe('one registry for write and edit (seed 003)', () => {
  it('a grant via edit lets write_file(overwrite) replace files in the same folder', async () => {
    const fx = fixture()
    const phrase = gate(await edit(fx.session, 'src/a.txt', 'alpha', 'ALPHA'), 'src/')
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    ok(await edit(fx.session, 'src/a.txt', 'alpha', 'ALPHA', phrase))
    expect(disk(fx, 'src/a.txt')).toBe('ALPHA\n')
    ok(await overwrite(fx.session, 'src/sub/b.txt', 'written\n'))
    expect(disk(fx, 'src/sub/b.txt')).toBe('written\n')
  })

  it('a grant via write_file lets edit change files in the same folder', async () => {
    const fx = fixture()
    const phrase = gate(await overwrite(fx.session, 'src/a.txt', 'written\n'))
    ok(await overwrite(fx.session, 'src/a.txt', 'written\n', phrase))
    ok(await edit(fx.session, 'src/sub/b.txt', 'bravo', 'BRAVO'))
    expect(disk(fx, 'src/sub/b.txt')).toBe('BRAVO\n')
  })

  it('edit asks per top-level folder too, with the same gate (no edit engine needed to be asked)', async () => {
    const fx = fixture()
    const r = await edit(fx.session, 'lib/c.txt', 'charlie', 'CHARLIE')
    gate(r, 'lib/')
    expect(textOf(r).startsWith('[permission_required] ')).toBe(true)
    // A grant for src via write_file does not cover lib for edit.
    ok(await overwrite(fx.session, 'src/a.txt', 'w\n', gate(await overwrite(fx.session, 'src/a.txt', 'w\n'))))
    gate(await edit(fx.session, 'lib/c.txt', 'charlie', 'CHARLIE'), 'lib/')
    expect(disk(fx, 'lib/c.txt')).toBe('charlie\n')
  })
})

describe('guarded preset: the gate with read-before-write', () => {
  const guarded = (options: Partial<ToolkitOptions> = {}) => fixture({ preset: 'guarded', ...options })

  it('read first, then file_write is PERMISSION_REQUIRED without the consent prefix; the phrase grants', async () => {
    const fx = guarded()
    const notRead = await fx.session.call('file_write', { path: 'src/a.txt', content: 'w\n' })
    fails(notRead, 'NOT_READ')
    expect(notRead.error?.errorCode).toBe(2)
    ok(await fx.session.call('file_read', { path: 'src/a.txt' }))
    const r = await fx.session.call('file_write', { path: 'src/a.txt', content: 'w\n' })
    const phrase = gate(r, 'src/')
    expect(textOf(r).startsWith('[')).toBe(false)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    ok(await fx.session.call('file_write', { path: 'src/a.txt', content: 'w\n', grant_phrase: phrase }))
    expect(disk(fx, 'src/a.txt')).toBe('w\n')
  })

  it('the gemini dialect: write_file and replace are gated as Write and Edit are, and take grant_phrase as they do', async () => {
    for (const preset of ['claude-code', 'gemini-cli'] as const) {
      const fx = fixture({ preset, policy: { consentGate: true } })
      const [read, write, edit] = preset === 'claude-code' ? ['Read', 'Write', 'Edit'] : ['read_file', 'write_file', 'replace']
      const edits = preset === 'claude-code' ? {} : { instruction: 'Shout the first word' }
      ok(await fx.session.call(read, { file_path: 'src/a.txt' }))
      const phrase = gate(await fx.session.call(write, { file_path: 'src/a.txt', content: 'w\n' }), 'src/')
      expect(disk(fx, 'src/a.txt'), preset).toBe('alpha\n')
      ok(await fx.session.call(write, { file_path: 'src/a.txt', content: 'w\n', grant_phrase: phrase }))
      expect(disk(fx, 'src/a.txt'), preset).toBe('w\n')
      // Another folder: the edit tool asks, and its phrase grants.
      ok(await fx.session.call(read, { file_path: 'lib/c.txt' }))
      const again = gate(await fx.session.call(edit, { file_path: 'lib/c.txt', old_string: 'charlie', new_string: 'CHARLIE', ...edits }), 'lib/')
      ok(await fx.session.call(edit, { file_path: 'lib/c.txt', old_string: 'charlie', new_string: 'CHARLIE', ...edits, grant_phrase: again }))
      expect(disk(fx, 'lib/c.txt'), preset).toBe('CHARLIE\n')
    }
  })

  it('a grant via file_write covers file_edit in the same folder', async () => {
    const fx = guarded()
    ok(await fx.session.call('file_read', { path: 'src/a.txt' }))
    const phrase = gate(await fx.session.call('file_write', { path: 'src/a.txt', content: 'w\n' }))
    ok(await fx.session.call('file_write', { path: 'src/a.txt', content: 'w\n', grant_phrase: phrase }))
    ok(await fx.session.call('file_read', { path: 'src/sub/b.txt' }))
    ok(await fx.session.call('file_edit', { path: 'src/sub/b.txt', old_string: 'bravo', new_string: 'BRAVO' }))
    expect(disk(fx, 'src/sub/b.txt')).toBe('BRAVO\n')
  })

  it('a grant via file_edit covers file_write in the same folder', async () => {
    const fx = guarded()
    ok(await fx.session.call('file_read', { path: 'src/a.txt' }))
    const phrase = gate(await fx.session.call('file_edit', { path: 'src/a.txt', old_string: 'alpha', new_string: 'ALPHA' }), 'src/')
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    ok(await fx.session.call('file_edit', { path: 'src/a.txt', old_string: 'alpha', new_string: 'ALPHA', grant_phrase: phrase }))
    expect(disk(fx, 'src/a.txt')).toBe('ALPHA\n')
    ok(await fx.session.call('file_read', { path: 'src/sub/b.txt' }))
    ok(await fx.session.call('file_write', { path: 'src/sub/b.txt', content: 'w\n' }))
    expect(disk(fx, 'src/sub/b.txt')).toBe('w\n')
  })

  it('a new file needs no grant (and no read)', async () => {
    const fx = guarded()
    ok(await fx.session.call('file_write', { path: 'src/new.txt', content: 'n\n' }))
    expect(disk(fx, 'src/new.txt')).toBe('n\n')
  })
})

describe('session.noteUserMessage: only phrases the user wrote grant', () => {
  it('a phrase the model echoes without the user writing it is refused', async () => {
    const fx = fixture()
    fx.session.noteUserMessage('Please tidy up src/a.txt')
    const p1 = gate(await overwrite(fx.session, 'src/a.txt', 'x\n'))
    const echoed = await overwrite(fx.session, 'src/a.txt', 'x\n', p1)
    const p2 = gate(echoed, 'src/')
    expect(echoed.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    // The phrase buried in pasted text does not count: a file or a command's output may carry it.
    fx.session.noteUserMessage(`Here is the log you asked for:\n[info] done, said ${p2} and exited`)
    const buried = await overwrite(fx.session, 'src/a.txt', 'x\n', p2)
    const p3 = gate(buried, 'src/')
    expect(buried.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    // The user writes the new phrase on a line of its own; now it grants.
    fx.session.noteUserMessage(`Yes, go ahead:\n"${p3}".`)
    ok(await overwrite(fx.session, 'src/a.txt', 'x\n', p3))
    expect(disk(fx, 'src/a.txt')).toBe('x\n')
  })

  it('the user writing a phrase that was voided does not revive it', async () => {
    const fx = fixture()
    fx.session.noteUserMessage('hello')
    const p1 = gate(await overwrite(fx.session, 'src/a.txt', 'x\n'))
    gate(await overwrite(fx.session, 'src/a.txt', 'x\n')) // p1 voided by a fresh request
    fx.session.noteUserMessage(p1)
    const r = await overwrite(fx.session, 'src/a.txt', 'x\n', p1)
    gate(r)
    expect(r.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
  })

  it("a user's message is matched with case and spacing tolerated", async () => {
    const fx = fixture()
    fx.session.noteUserMessage('start')
    const phrase = gate(await overwrite(fx.session, 'lib/c.txt', 'x\n'))
    fx.session.noteUserMessage(`ok\n${phrase.toUpperCase().split(' ').join('  ')}`)
    ok(await overwrite(fx.session, 'lib/c.txt', 'x\n', phrase))
    expect(disk(fx, 'lib/c.txt')).toBe('x\n')
  })

  it("another session's user messages do not count", async () => {
    const fx = fixture()
    const other = fx.toolkit.createSession()
    fx.session.noteUserMessage('start')
    const phrase = gate(await overwrite(fx.session, 'src/a.txt', 'x\n'))
    other.noteUserMessage(phrase)
    const r = await overwrite(fx.session, 'src/a.txt', 'x\n', phrase)
    gate(r)
    expect(r.data?.refused).toBe(true)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
  })
})

describe('onPermissionRequest: a host UI decides', () => {
  it('is called with {sessionId, tool, path, realPath, unit}; true passes without a phrase', async () => {
    const calls: PermissionRequest[] = []
    const fx = fixture({
      onPermissionRequest: (req) => {
        calls.push(req)
        return true
      },
    })
    const r = await overwrite(fx.session, 'src/sub/b.txt', 'host ok\n')
    ok(r)
    expect(disk(fx, 'src/sub/b.txt')).toBe('host ok\n')
    expect(calls).toHaveLength(1)
    const req = calls[0]
    expect(req.sessionId).toBe(fx.session.id)
    expect(req.tool).toBe('write_file')
    expect(req.path).toBe('src/sub/b.txt')
    expect(req.realPath).toBe(path.join(fx.dir, 'src/sub/b.txt'))
    expect([path.join(fx.dir, 'src'), 'src/', 'src']).toContain(req.unit)
  })

  it('is called once per unit; the unit stays granted for the session (write and edit alike)', async () => {
    const calls: PermissionRequest[] = []
    const fx = fixture({
      onPermissionRequest: async (req) => {
        calls.push(req)
        return true
      },
    })
    ok(await overwrite(fx.session, 'src/a.txt', '1\n'))
    ok(await overwrite(fx.session, 'src/sub/b.txt', '2\n'))
    ok(await overwrite(fx.session, 'src/a.txt', '3\n'))
    expect(calls).toHaveLength(1)
    ok(await overwrite(fx.session, 'lib/c.txt', '4\n'))
    expect(calls).toHaveLength(2)
    expect(calls.map((c) => c.path)).toEqual(['src/a.txt', 'lib/c.txt'])
    // A second session asks for itself.
    const s2 = fx.toolkit.createSession()
    ok(await overwrite(s2, 'src/a.txt', '5\n'))
    expect(calls).toHaveLength(3)
    expect(calls[2].sessionId).toBe(s2.id)
    expect(calls[2].sessionId).not.toBe(calls[0].sessionId)
    expect(disk(fx, 'src/a.txt')).toBe('5\n')
  })

  it('is asked for edits with tool "edit", and its grant covers write_file', async () => {
    const calls: PermissionRequest[] = []
    const fx = fixture({
      onPermissionRequest: (req) => {
        calls.push(req)
        return true
      },
    })
    const r = await edit(fx.session, 'lib/c.txt', 'charlie', 'CHARLIE')
    expect(calls).toHaveLength(1)
    expect(calls[0].tool).toBe('edit')
    expect(calls[0].realPath).toBe(path.join(fx.dir, 'lib/c.txt'))
    ok(r)
    expect(disk(fx, 'lib/c.txt')).toBe('CHARLIE\n')
    ok(await fx.session.call('write_file', { path: 'lib/c.txt', content: 'w\n', overwrite: true }))
    expect(calls).toHaveLength(1)
  })

  it('false is PERMISSION_DENIED, nothing is written, and a grant_phrase cannot get around it', async () => {
    let asked = 0
    const fx = fixture({
      onPermissionRequest: () => {
        asked++
        return false
      },
    })
    const r = await overwrite(fx.session, 'src/a.txt', 'x\n')
    const text = fails(r, 'PERMISSION_DENIED')
    expect(text.startsWith('[error] ')).toBe(true)
    expect(text).toMatch(/declined/)
    expect(r.error?.nonce).toBeUndefined()
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    const again = await overwrite(fx.session, 'src/a.txt', 'x\n', 'allow edits in src/ abcd-efgh-jkmn-pqrs')
    fails(again, 'PERMISSION_DENIED')
    expect(asked).toBe(2)
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    // A truthy non-boolean is not a yes.
    const fx2 = fixture({ onPermissionRequest: (() => 'yes') as unknown as () => boolean })
    fails(await overwrite(fx2.session, 'src/a.txt', 'x\n'), 'PERMISSION_DENIED')
    expect(disk(fx2, 'src/a.txt')).toBe('alpha\n')
  })

  it('a handler that throws (or rejects) is PERMISSION_DENIED and nothing is written', async () => {
    const fx = fixture({
      onPermissionRequest: () => {
        throw new Error('ui crashed')
      },
    })
    const r = await overwrite(fx.session, 'src/a.txt', 'x\n')
    fails(r, 'PERMISSION_DENIED')
    expect(disk(fx, 'src/a.txt')).toBe('alpha\n')
    const fx2 = fixture({ onPermissionRequest: () => Promise.reject(new Error('closed')) })
    fails(await overwrite(fx2.session, 'src/a.txt', 'x\n'), 'PERMISSION_DENIED')
    expect(disk(fx2, 'src/a.txt')).toBe('alpha\n')
  })

  it('is not called for new files', async () => {
    let asked = 0
    const fx = fixture({
      onPermissionRequest: () => {
        asked++
        return false
      },
    })
    ok(await fx.session.call('write_file', { path: 'src/new.txt', content: 'n\n' }))
    expect(asked).toBe(0)
    expect(disk(fx, 'src/new.txt')).toBe('n\n')
  })
})

describe('presets and options without a gate', () => {
  it('policy.consentGate false: consent preset replaces at once, the host is never asked', async () => {
    let asked = 0
    const fx = fixture({
      policy: { consentGate: false },
      onPermissionRequest: () => {
        asked++
        return false
      },
    })
    ok(await overwrite(fx.session, 'src/a.txt', 'no gate\n'))
    ok(await overwrite(fx.session, 'README.md', 'no gate\n'))
    expect(disk(fx, 'src/a.txt')).toBe('no gate\n')
    expect(disk(fx, 'README.md')).toBe('no gate\n')
    expect(asked).toBe(0)
  })

  it('policy.consentGate false: edit replaces at once', async () => {
    const fx = fixture({ policy: { consentGate: false } })
    ok(await edit(fx.session, 'lib/c.txt', 'charlie', 'CHARLIE'))
    expect(disk(fx, 'lib/c.txt')).toBe('CHARLIE\n')
  })

  it('policy.consentGate false on guarded: read then file_write replaces at once', async () => {
    const fx = fixture({ preset: 'guarded', policy: { consentGate: false } })
    ok(await fx.session.call('file_read', { path: 'src/a.txt' }))
    ok(await fx.session.call('file_write', { path: 'src/a.txt', content: 'w\n' }))
    expect(disk(fx, 'src/a.txt')).toBe('w\n')
  })

  it('claude-code: Read then Write replaces without a gate; the host is never asked', async () => {
    let asked = 0
    const fx = fixture({
      preset: 'claude-code',
      onPermissionRequest: () => {
        asked++
        return false
      },
    })
    ok(await fx.session.call('Read', { file_path: 'src/a.txt' }))
    ok(await fx.session.call('Write', { file_path: 'src/a.txt', content: 'cc\n' }))
    expect(disk(fx, 'src/a.txt')).toBe('cc\n')
    expect(asked).toBe(0)
  })

  it('claude-code: Read then Edit replaces without a gate', async () => {
    const fx = fixture({ preset: 'claude-code' })
    ok(await fx.session.call('Read', { file_path: 'lib/c.txt' }))
    ok(await fx.session.call('Edit', { file_path: 'lib/c.txt', old_string: 'charlie', new_string: 'CC' }))
    expect(disk(fx, 'lib/c.txt')).toBe('CC\n')
  })

  it('revka: file_write replaces without a gate; the host is never asked', async () => {
    let asked = 0
    const fx = fixture({
      preset: 'revka',
      onPermissionRequest: () => {
        asked++
        return false
      },
    })
    ok(await fx.session.call('file_write', { path: 'src/a.txt', content: 'rv\n' }))
    ok(await fx.session.call('file_write', { path: 'README.md', content: 'rv\n' }))
    expect(disk(fx, 'src/a.txt')).toBe('rv\n')
    expect(disk(fx, 'README.md')).toBe('rv\n')
    expect(asked).toBe(0)
  })

  it('revka: file_edit replaces without a gate', async () => {
    const fx = fixture({ preset: 'revka' })
    ok(await fx.session.call('file_edit', { path: 'lib/c.txt', old_string: 'charlie', new_string: 'RV' }))
    expect(disk(fx, 'lib/c.txt')).toBe('RV\n')
  })
})

describe('a host UI asked by concurrent changes', () => {
  it('concurrent overwrites of one folder ask the host once and all go through', async () => {
    const asked: PermissionRequest[] = []
    let answer!: (yes: boolean) => void
    const fx = fixture({
      onPermissionRequest: (req) => {
        asked.push(req)
        return new Promise<boolean>((resolve) => {
          answer = resolve
        })
      },
    })
    const calls = [
      fx.session.call('write_file', { path: 'src/a.txt', content: 'one\n', overwrite: true }),
      fx.session.call('write_file', { path: 'src/sub/b.txt', content: 'two\n', overwrite: true }),
    ]
    await new Promise((r) => setTimeout(r, 50))
    answer(true)
    for (const r of await Promise.all(calls)) ok(r)
    expect(asked).toHaveLength(1)
    expect([disk(fx, 'src/a.txt'), disk(fx, 'src/sub/b.txt')]).toEqual(['one\n', 'two\n'])
  })
})
