/**
 * The read-before-write contract, SPEC §3.2 (seed 000): NOT_READ and PARTIAL_READ
 * (errorCode 2) before a write or edit of an existing file, ranged reads that add up to a
 * full read of one version, STALE (errorCode 3) decided by size and content hash rather
 * than mtime, the record refreshed by a session's own writes, and the per-path lock that
 * makes one of many racing writers win and the rest STALE.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { createToolkit, type Session, type Toolkit, type ToolkitOptions, type ToolResult } from '../ts/index.js'
import { fails, ok, put, putLines, removeTempDirs, tempDir, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

interface Dialect {
  name: string
  options: Partial<ToolkitOptions>
  read: string
  write: string
  edit: string
  /** The name of the path field. */
  key: 'path' | 'file_path'
}

/** The two dialects that have the contract: revka names in guarded (gate off), and claude. */
const DIALECTS: Dialect[] = [
  { name: 'revka names (guarded, consentGate off)', options: { preset: 'guarded', policy: { consentGate: false } }, read: 'file_read', write: 'file_write', edit: 'file_edit', key: 'path' },
  { name: 'claude names (claude-code)', options: { preset: 'claude-code' }, read: 'Read', write: 'Write', edit: 'Edit', key: 'file_path' },
]

/** `count` lines `v<version> line i`, each ending in \n. */
const lines = (count: number, version = 1) => Array.from({ length: count }, (_, i) => `v${version} line ${i + 1}`).join('\n') + '\n'

/** Asserts a refusal with `code` and its seed errorCode, and returns its text. */
function refused(r: ToolResult, code: 'NOT_READ' | 'PARTIAL_READ' | 'STALE'): string {
  const text = fails(r, code)
  expect(r.error?.errorCode).toBe(code === 'STALE' ? 3 : 2)
  return text
}

const bytesOf = (file: string) => fs.readFileSync(file, 'utf8')

/**
 * Whether the edit engine is still the placeholder whose core panics "not implemented"
 * (it lands separately); only the tests that need a successful edit wait for it.
 */
const EDIT_PENDING = await (async () => {
  const probe = workspace({ preset: 'revka' })
  put(probe.dir, 'probe.txt', 'a\n')
  const r = await probe.session.call('file_edit', { path: 'probe.txt', old_string: 'a', new_string: 'b' })
  return r.isError && /not implemented/.test(textOf(r))
})()

describe.each(DIALECTS)('$name', (d) => {
  const fixture = () => {
    const dir = tempDir('fsgate-contract-')
    const toolkit = createToolkit({ workspace: dir, ...d.options } as ToolkitOptions)
    return { dir, toolkit, session: toolkit.createSession() }
  }
  const read = (s: Session, p: string, range: { offset?: number; limit?: number } = {}) => s.call(d.read, { [d.key]: p, ...range })
  const write = (s: Session, p: string, content: string) => s.call(d.write, { [d.key]: p, content })
  const edit = (s: Session, p: string, old_string: string, new_string: string) => s.call(d.edit, { [d.key]: p, old_string, new_string })

  describe('NOT_READ and PARTIAL_READ', () => {
    it('a write or edit of an existing file never read is NOT_READ (errorCode 2), and nothing changes', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'src/a.txt', 'original\n')
      const text = refused(await write(session, 'src/a.txt', 'new\n'), 'NOT_READ')
      expect(text).toContain('src/a.txt')
      expect(text).toContain('has not been read')
      expect(text).toContain(`Read it first with ${d.read}`)
      refused(await edit(session, 'src/a.txt', 'original', 'changed'), 'NOT_READ')
      // An empty existing file is still an existing file.
      put(dir, 'empty.txt', '')
      refused(await write(session, 'empty.txt', 'x\n'), 'NOT_READ')
      expect(bytesOf(abs)).toBe('original\n')
    })

    it('creating a new file needs no read', async () => {
      const { dir, session } = fixture()
      const r = await write(session, 'brand/new.txt', 'hello\n')
      expect(ok(r)).toBe('Created brand/new.txt (1 line).')
      expect(bytesOf(path.join(dir, 'brand/new.txt'))).toBe('hello\n')
    })

    it('a ranged read of part of the file is PARTIAL_READ (errorCode 2) naming the lines read', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'ten.txt', lines(10))
      ok(await read(session, 'ten.txt', { offset: 3, limit: 4 }))
      const r = await write(session, 'ten.txt', 'new\n')
      const text = refused(r, 'PARTIAL_READ')
      expect(text).toContain('Only lines 3-6')
      expect(text).toContain('10')
      expect(r.data).toMatchObject({ coverage: [[3, 6]], totalLines: 10 })
      refused(await edit(session, 'ten.txt', 'v1 line 4\n', 'changed\n'), 'PARTIAL_READ')
      expect(bytesOf(abs)).toBe(lines(10))
    })

    it('an unranged read of a 3000-line file shows 2000 lines, so it is PARTIAL_READ; reading 2001-end completes it', async () => {
      const { dir, session } = fixture()
      const abs = path.join(dir, 'long.txt')
      putLines(abs, 3000, (i) => `line ${i}`)
      ok(await read(session, 'long.txt'))
      const r = await write(session, 'long.txt', 'short\n')
      expect(refused(r, 'PARTIAL_READ')).toContain('1-2000')
      expect(r.data).toMatchObject({ coverage: [[1, 2000]], totalLines: 3000 })
      const rest = await read(session, 'long.txt', { offset: 2001 })
      expect(rest.data).toMatchObject({ startLine: 2001, endLine: 3000, totalLines: 3000 })
      expect(ok(await write(session, 'long.txt', 'short\n'))).toBe('Replaced long.txt (1 line).')
      expect(bytesOf(abs)).toBe('short\n')
    })

    it('ranged reads accumulate in any order; a gap keeps it partial until it is read', async () => {
      const { dir, session } = fixture()
      const abs = path.join(dir, 'gaps.txt')
      putLines(abs, 3000, (i) => `line ${i}`)
      ok(await read(session, 'gaps.txt', { offset: 1500, limit: 2000 }))
      ok(await read(session, 'gaps.txt', { offset: 1, limit: 1000 }))
      const r = await write(session, 'gaps.txt', 'x\n')
      expect(refused(r, 'PARTIAL_READ')).toContain('1-1000, 1500-3000')
      expect(r.data?.coverage).toEqual([
        [1, 1000],
        [1500, 3000],
      ])
      ok(await read(session, 'gaps.txt', { offset: 1001, limit: 499 }))
      ok(await write(session, 'gaps.txt', 'x\n'))
      expect(bytesOf(abs)).toBe('x\n')
    })

    it('coverage of an older version does not count once the file changed', async () => {
      const { dir, session } = fixture()
      const abs = path.join(dir, 'versions.txt')
      putLines(abs, 3000, (i) => `v1 line ${i}`)
      ok(await read(session, 'versions.txt', { offset: 1, limit: 2000 }))
      putLines(abs, 3000, (i) => `v2 line ${i}`) // same line count, other content
      ok(await read(session, 'versions.txt', { offset: 2001 }))
      const r = await write(session, 'versions.txt', 'mine\n')
      refused(r, 'PARTIAL_READ')
      expect(r.data?.coverage).toEqual([[2001, 3000]])
      expect(fs.readFileSync(abs, 'utf8').startsWith('v2 line 1\n')).toBe(true)
      // Reading the first part of the current version completes it.
      ok(await read(session, 'versions.txt', { offset: 1, limit: 2000 }))
      ok(await write(session, 'versions.txt', 'mine\n'))
    })

    it('the same file named by an absolute path, ./ or a symlink shares one record', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'sub/one.txt', 'one\n')
      fs.symlinkSync('sub/one.txt', path.join(dir, 'alias.txt'))
      ok(await read(session, abs))
      ok(await write(session, './sub/one.txt', 'two\n'))
      ok(await write(session, 'alias.txt', 'three\n'))
      expect(bytesOf(abs)).toBe('three\n')
    })

    it('reads in one session do not count for another', async () => {
      const { dir, toolkit, session } = fixture()
      put(dir, 'shared.txt', 'shared\n')
      ok(await read(session, 'shared.txt'))
      refused(await write(toolkit.createSession(), 'shared.txt', 'x\n'), 'NOT_READ')
    })

    it('a read refused for its size or tokens does not count as a read', async () => {
      const dir = tempDir('fsgate-contract-')
      const toolkit = createToolkit({ workspace: dir, ...d.options, limits: { readTokens: 50 } } as ToolkitOptions)
      const session = toolkit.createSession()
      put(dir, 'wordy.txt', lines(200))
      fails(await read(session, 'wordy.txt'), 'TOKEN_LIMIT')
      refused(await write(session, 'wordy.txt', 'x\n'), 'NOT_READ')
    })

    it('session.forgetReads() makes the next write NOT_READ', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'f.txt', 'f\n')
      ok(await read(session, 'f.txt'))
      session.forgetReads()
      refused(await write(session, 'f.txt', 'x\n'), 'NOT_READ')
      expect(bytesOf(abs)).toBe('f\n')
      ok(await read(session, 'f.txt'))
      ok(await write(session, 'f.txt', 'x\n'))
    })
  })

  describe('STALE', () => {
    it('a file changed by someone else after the read is STALE (errorCode 3) and keeps their change', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 's.txt', 'as read\n')
      ok(await read(session, 's.txt'))
      fs.writeFileSync(abs, 'their change, longer\n')
      const r = await write(session, 's.txt', 'mine\n')
      const text = refused(r, 'STALE')
      expect(text).toContain('s.txt')
      expect(text).toContain('modified since you read it')
      expect(text).toContain(d.read)
      refused(await edit(session, 's.txt', 'their change', 'mine'), 'STALE')
      expect(bytesOf(abs)).toBe('their change, longer\n')
      // Reading it again lifts the refusal.
      ok(await read(session, 's.txt'))
      ok(await write(session, 's.txt', 'mine\n'))
      expect(bytesOf(abs)).toBe('mine\n')
    })

    it('a same-size rewrite that keeps the same mtime is STALE (decided by content, not mtime)', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'same.txt', 'abcd\n')
      ok(await read(session, 'same.txt'))
      const st = fs.statSync(abs)
      fs.writeFileSync(abs, 'wxyz\n')
      fs.utimesSync(abs, st.atimeMs / 1000, st.mtimeMs / 1000)
      const now = fs.statSync(abs)
      expect(now.size).toBe(st.size)
      expect(Math.abs(now.mtimeMs - st.mtimeMs)).toBeLessThan(1)
      refused(await write(session, 'same.txt', 'mine\n'), 'STALE')
      expect(bytesOf(abs)).toBe('wxyz\n')
    })

    it('a touch (new mtime, same content) is not stale', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'touched.txt', 'same content\n')
      ok(await read(session, 'touched.txt'))
      const later = Date.now() / 1000 + 60
      fs.utimesSync(abs, later, later)
      ok(await write(session, 'touched.txt', 'mine\n'))
      expect(bytesOf(abs)).toBe('mine\n')
    })

    it('a write by another session of the same toolkit makes this one STALE', async () => {
      const { dir, toolkit, session } = fixture()
      const abs = put(dir, 'x.txt', 'v0\n')
      const other = toolkit.createSession()
      ok(await read(session, 'x.txt'))
      ok(await read(other, 'x.txt'))
      ok(await write(other, 'x.txt', 'other\n'))
      refused(await write(session, 'x.txt', 'mine\n'), 'STALE')
      expect(bytesOf(abs)).toBe('other\n')
    })
  })

  describe('after a write', () => {
    it('the record is refreshed: further writes need no re-read', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'chain.txt', 'start\n')
      ok(await read(session, 'chain.txt'))
      ok(await write(session, 'chain.txt', 'alpha\nbeta\n'))
      ok(await write(session, 'chain.txt', 'alpha\nbeta\ngamma\n'))
      ok(await write(session, 'chain.txt', 'final\n'))
      expect(bytesOf(abs)).toBe('final\n')
      // A file this session created is also known.
      ok(await write(session, 'made.txt', 'one\n'))
      ok(await write(session, 'made.txt', 'two\n'))
      expect(bytesOf(path.join(dir, 'made.txt'))).toBe('two\n')
    })

    it.skipIf(EDIT_PENDING)('after a write, an edit needs no re-read, and a write after that edit neither', async () => {
      const { dir, session } = fixture()
      const abs = put(dir, 'chain.txt', 'start\n')
      ok(await read(session, 'chain.txt'))
      ok(await write(session, 'chain.txt', 'alpha\nbeta\n'))
      ok(await edit(session, 'chain.txt', 'beta', 'BETA'))
      expect(bytesOf(abs)).toBe('alpha\nBETA\n')
      ok(await write(session, 'chain.txt', 'final\n'))
      expect(bytesOf(abs)).toBe('final\n')
      ok(await write(session, 'made.txt', 'one\n'))
      ok(await edit(session, 'made.txt', 'one', 'two'))
      expect(bytesOf(path.join(dir, 'made.txt'))).toBe('two\n')
    })

    it('a read after the session wrote the file returns the content, not an "unchanged" stub', async () => {
      const { dir, session } = fixture()
      // The same number of lines as the version read, so the same range is asked for.
      put(dir, 'r.txt', 'old one\nold two\n')
      ok(await read(session, 'r.txt'))
      ok(await write(session, 'r.txt', 'new one\nnew two\n'))
      const r = await read(session, 'r.txt')
      expect(ok(r)).toContain('new one')
      expect(textOf(r)).toContain('new two')
      expect(r.data?.unchanged).toBeUndefined()
      expect(r.data).toMatchObject({ totalLines: 2 })
      // Only a second read of that version is a stub.
      expect((await read(session, 'r.txt')).data?.unchanged).toBe(true)
      // The same after creating a file.
      ok(await write(session, 'c.txt', 'created\n'))
      const c = await read(session, 'c.txt')
      expect(ok(c)).toContain('created')
      expect(c.data?.unchanged).toBeUndefined()
    })

    it("a change by someone else after this session's write is STALE", async () => {
      const { dir, session } = fixture()
      const abs = path.join(dir, 'w.txt')
      ok(await write(session, 'w.txt', 'mine\n'))
      fs.writeFileSync(abs, 'theirs\n')
      refused(await write(session, 'w.txt', 'mine again\n'), 'STALE')
      expect(bytesOf(abs)).toBe('theirs\n')
    })
  })

  describe('concurrency', () => {
    it('16 sessions read one file and write it at once: one wins, 15 are STALE, the file is the winner', async () => {
      const { dir, toolkit } = fixture()
      const abs = put(dir, 'race.txt', lines(50))
      const sessions = Array.from({ length: 16 }, () => toolkit.createSession())
      for (const s of sessions) ok(await read(s, 'race.txt'))
      const contents = sessions.map((_, i) => `${`writer ${i} `.repeat(20 + i)}\n`.repeat(100 + i))
      const results = await Promise.all(sessions.map((s, i) => write(s, 'race.txt', contents[i])))
      const won = results.flatMap((r, i) => (r.isError ? [] : [i]))
      expect(won, results.map((r) => r.error?.code ?? 'ok').join(',')).toHaveLength(1)
      for (const [i, r] of results.entries()) if (i !== won[0]) refused(r, 'STALE')
      expect(bytesOf(abs)).toBe(contents[won[0]])
      expect(toolkit.locks.size).toBe(0)
      expect(fs.readdirSync(dir).sort()).toEqual(['race.txt'])
    })

    it('16 sessions creating the same new file at once: one creates it, the rest are STALE', async () => {
      const { dir, toolkit } = fixture()
      const sessions = Array.from({ length: 16 }, () => toolkit.createSession())
      const results = await Promise.all(sessions.map((s, i) => write(s, 'fresh/new.txt', `creator ${i}\n`)))
      const won = results.flatMap((r, i) => (r.isError ? [] : [i]))
      expect(won, results.map((r) => r.error?.code ?? 'ok').join(',')).toHaveLength(1)
      for (const [i, r] of results.entries()) if (i !== won[0]) expect(refused(r, 'STALE')).toContain('fresh/new.txt')
      expect(bytesOf(path.join(dir, 'fresh/new.txt'))).toBe(`creator ${won[0]}\n`)
      expect(toolkit.locks.size).toBe(0)
    })

    it('16 sessions writing 16 different files at once all succeed', async () => {
      const { dir, toolkit } = fixture()
      const sessions = Array.from({ length: 16 }, () => toolkit.createSession())
      for (const [i, s] of sessions.entries()) {
        put(dir, `f${i}.txt`, `old ${i}\n`)
        ok(await read(s, `f${i}.txt`))
      }
      const results = await Promise.all(sessions.map((s, i) => write(s, `f${i}.txt`, `new ${i}\n`.repeat(1000))))
      for (const r of results) ok(r)
      for (let i = 0; i < 16; i++) expect(bytesOf(path.join(dir, `f${i}.txt`))).toBe(`new ${i}\n`.repeat(1000))
      expect(toolkit.locks.size).toBe(0)
    })

    it('sessions writing one file by two names (a symlink and its target) share one lock: one wins', async () => {
      const { dir, toolkit } = fixture()
      const abs = put(dir, 'target.txt', 'v0\n')
      fs.symlinkSync('target.txt', path.join(dir, 'alias.txt'))
      const sessions = Array.from({ length: 8 }, () => toolkit.createSession())
      for (const [i, s] of sessions.entries()) ok(await read(s, i % 2 ? 'alias.txt' : 'target.txt'))
      const results = await Promise.all(sessions.map((s, i) => write(s, i % 2 ? 'alias.txt' : 'target.txt', `writer ${i}\n`)))
      const won = results.flatMap((r, i) => (r.isError ? [] : [i]))
      expect(won, results.map((r) => r.error?.code ?? 'ok').join(',')).toHaveLength(1)
      for (const [i, r] of results.entries()) if (i !== won[0]) refused(r, 'STALE')
      expect(bytesOf(abs)).toBe(`writer ${won[0]}\n`)
      expect(fs.lstatSync(path.join(dir, 'alias.txt')).isSymbolicLink()).toBe(true)
      expect(toolkit.locks.size).toBe(0)
    })

    // PRODUCT BUG: the record is refreshed (recordChange) only after the path's lock is
    // released, so the session's next queued write takes its expected version from the
    // old record and is refused as STALE although only this session changed the file.
    // underLock's own doc says "a session's own queued changes follow each other without
    // a re-read" (SPEC §3.2 step 4). Models issue parallel tool calls, so this is reachable.
    it("one session's own concurrent writes of a file follow each other without a re-read", async () => {
      const { dir, toolkit, session } = fixture()
      const abs = put(dir, 'own.txt', 'v0\n')
      ok(await read(session, 'own.txt'))
      const results = await Promise.all([write(session, 'own.txt', 'first\n'), write(session, 'own.txt', 'second\n')])
      expect(results.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'ok'])
      expect(['first\n', 'second\n']).toContain(bytesOf(abs))
      expect(session.history()).toHaveLength(2)
      expect(toolkit.locks.size).toBe(0)
    })
  })
})

describe('presets and policy switches', () => {
  it('revka has no contract: writes need no read and a change in between is overwritten', async () => {
    const ws = workspace({ preset: 'revka' })
    const abs = put(ws.dir, 'r.txt', 'original\n')
    ok(await ws.session.call('file_write', { path: 'r.txt', content: 'one\n' }))
    fs.writeFileSync(abs, 'external\n')
    ok(await ws.session.call('file_write', { path: 'r.txt', content: 'two\n' }))
    expect(bytesOf(abs)).toBe('two\n')
  })

  it('policy.readBeforeWrite turns the contract on for revka and off for claude-code', async () => {
    const on = workspace({ preset: 'revka', policy: { readBeforeWrite: true } })
    put(on.dir, 'a.txt', 'a\n')
    refused(await on.session.call('file_write', { path: 'a.txt', content: 'x\n' }), 'NOT_READ')
    const off = workspace({ preset: 'claude-code', policy: { readBeforeWrite: false } })
    const abs = put(off.dir, 'a.txt', 'a\n')
    ok(await off.session.call('Write', { file_path: 'a.txt', content: 'x\n' }))
    expect(bytesOf(abs)).toBe('x\n')
  })

  it('the lock map is empty after refusals and failures too', async () => {
    const ws = workspace({ preset: 'claude-code' })
    const tk: Toolkit = ws.toolkit
    const abs = put(ws.dir, 'l.txt', 'l\n')
    ok(await ws.session.call('Read', { file_path: 'l.txt' }))
    fs.writeFileSync(abs, 'changed\n')
    const many = await Promise.all(Array.from({ length: 8 }, () => ws.session.call('Write', { file_path: 'l.txt', content: 'x\n' })))
    for (const r of many) refused(r, 'STALE')
    fails(await ws.session.call('Write', { file_path: '.', content: 'x' }), 'IS_DIRECTORY')
    expect(tk.locks.size).toBe(0)
  })
})
