/**
 * Write and Edit under attack and under races: a folder swapped for a link while the
 * user is asked, the read record changed while a call waits, outside files the model
 * may not read, protected names in any case or home, files too large to hold, owners.
 * Each case was found by a review of the first version and is guarded here.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { StaleFileError } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, tempDir, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

describe('a folder swapped for a link after the checks', () => {
  it('is STALE, and the protected file it now leads to is untouched', async () => {
    let ws = ''
    const fx = workspace({
      preset: 'consent',
      // While the user is being asked, another program swaps docs/ for a link to .git.
      onPermissionRequest: () => {
        fs.renameSync(path.join(ws, 'docs'), path.join(ws, 'docs-old'))
        fs.symlinkSync(path.join(ws, '.git'), path.join(ws, 'docs'))
        return true
      },
    })
    ws = fx.dir
    put(ws, '.git/config', '[core]\n')
    put(ws, 'docs/config', 'mine\n')
    const r = await fx.session.call('write_file', { path: 'docs/config', content: '[core]\n\tfsmonitor = evil\n', overwrite: true })
    fails(r, 'STALE')
    expect(fs.readFileSync(path.join(ws, '.git/config'), 'utf8')).toBe('[core]\n')
  })
})

describe('the read record changed while the call waited', () => {
  it('forgetReads during the consent wait is NOT_READ, not a blind overwrite', async () => {
    let session!: { forgetReads(): void }
    let ws = ''
    const fx = workspace({
      preset: 'guarded',
      onPermissionRequest: () => {
        session.forgetReads()
        fs.writeFileSync(path.join(ws, 'a.txt'), 'theirs\n')
        return true
      },
    })
    ws = fx.dir
    session = fx.session
    put(ws, 'a.txt', 'v1\n')
    ok(await fx.session.call('file_read', { path: 'a.txt' }))
    fails(await fx.session.call('file_write', { path: 'a.txt', content: 'mine\n' }), 'NOT_READ')
    expect(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('theirs\n')
  })

  it('a partial read of a newer version during the wait is PARTIAL_READ', async () => {
    let ws = ''
    const holder: { session?: import('../ts/index.js').Session } = {}
    const fx = workspace({
      preset: 'guarded',
      onPermissionRequest: async () => {
        fs.writeFileSync(path.join(ws, 'a.txt'), 'one\ntwo\nthree\n')
        ok(await (holder.session as import('../ts/index.js').Session).call('file_read', { path: 'a.txt', limit: 1 }))
        return true
      },
    })
    ws = fx.dir
    holder.session = fx.session
    put(ws, 'a.txt', 'v1\n')
    ok(await fx.session.call('file_read', { path: 'a.txt' }))
    fails(await fx.session.call('file_write', { path: 'a.txt', content: 'mine\n' }), 'PARTIAL_READ')
    expect(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n')
  })

  it('a STALE from the typed API is a StaleFileError', async () => {
    const fx = workspace({ preset: 'claude-code' })
    put(fx.dir, 'a.txt', 'v1\n')
    await fx.session.read({ path: 'a.txt' })
    fs.writeFileSync(path.join(fx.dir, 'a.txt'), 'v2\n')
    const err = await fx.session.write({ path: 'a.txt', content: 'mine\n' }).catch((e) => e)
    expect(err).toBeInstanceOf(StaleFileError)
    expect(err.errorCode).toBe(3)
  })
})

describe('outside files the model may not read', () => {
  it('an edit of an outside original shows no snippet, diff or candidates', async () => {
    const fx = workspace({ preset: 'consent', onPermissionRequest: () => true })
    const out = tempDir('fsgate-private-')
    const secret = put(out, 'prod.env', 'DB_PASSWORD=hunter2\nSTRIPE_KEY=sk_live_123\n')
    fails(await fx.session.call('file_read', { path: secret }), 'PATH_OUTSIDE_WORKSPACE')
    const r = await fx.session.call('edit', { path: secret, old_string: '\n', new_string: '\n\n', replace_all: true })
    const text = ok(r)
    expect(text).not.toMatch(/hunter2|sk_live/)
    expect(r.data?.diff).toBeNull()
    expect(r.data?.realPath).toBe(path.join(out, 'prod.edited.env'))
    const miss = await fx.session.call('edit', { path: secret, old_string: 'DB_PASSWORD=hunter3', new_string: 'x' })
    expect(fails(miss, 'STRING_NOT_FOUND')).not.toMatch(/hunter2/)
    expect(miss.data?.candidates).toEqual([])
  })

  it('a missing outside file gets no "did you mean" with names from outside', async () => {
    const fx = workspace({ preset: 'consent' })
    const out = tempDir('fsgate-private-')
    put(out, 'passwords.txt', 'x\n')
    const r = await fx.session.call('edit', { path: path.join(out, 'passwords.tx'), old_string: 'a', new_string: 'b' })
    expect(fails(r, 'NOT_FOUND')).not.toMatch(/passwords\.txt/)
  })

  it("a user's own *.edited.* file with no original beside it is not a working copy", async () => {
    const fx = workspace({ preset: 'consent' })
    const out = tempDir('fsgate-outside-')
    const thesis = put(out, 'thesis.edited.md', 'mine\n')
    const r = await fx.session.call('write_file', { path: thesis, content: 'replaced\n', overwrite: true })
    ok(r)
    expect(r.data?.realPath).toBe(path.join(out, 'thesis.edited.edited.md'))
    expect(fs.readFileSync(thesis, 'utf8')).toBe('mine\n')
  })
})

describe('protected names in any case and any home', () => {
  it("another user's ~/.ssh and ~/.bashrc outside the workspace are PROTECTED_PATH", async () => {
    const fx = workspace({ preset: 'consent' })
    const other = tempDir('fsgate-otherhome-')
    for (const rel of ['.ssh/authorized_keys', '.bashrc', '.config/autostart/x.desktop']) {
      fails(await fx.session.call('write_file', { path: path.join(other, rel), content: 'x\n' }), 'PROTECTED_PATH')
      expect(fs.existsSync(path.join(other, rel))).toBe(false)
    }
  })

  it('.GIT and .Git inside the workspace are PROTECTED_PATH, a project .docker folder is not', async () => {
    const fx = workspace({ preset: 'revka' })
    for (const rel of ['.GIT/config', '.Git/hooks/pre-commit']) {
      fails(await fx.session.call('file_write', { path: rel, content: 'x\n' }), 'PROTECTED_PATH')
    }
    ok(await fx.session.call('file_write', { path: '.docker/Dockerfile', content: 'FROM scratch\n' }))
  })
})

describe('bounds and ownership', () => {
  it('a file over limits.editMaxBytes is FILE_TOO_LARGE for write and edit, and untouched', async () => {
    const fx = workspace({ preset: 'revka', limits: { editMaxBytes: 100 } })
    const big = put(fx.dir, 'big.txt', 'x'.repeat(200))
    fails(await fx.session.call('file_write', { path: 'big.txt', content: 'y\n' }), 'FILE_TOO_LARGE')
    fails(await fx.session.call('file_edit', { path: 'big.txt', old_string: 'xx', new_string: 'y', replace_all: true }), 'FILE_TOO_LARGE')
    expect(fs.readFileSync(big, 'utf8')).toBe('x'.repeat(200))
  })

  it.runIf(process.getuid?.() === 0)("a root process keeps the owner of a user's file it rewrites", async () => {
    const fx = workspace({ preset: 'revka' })
    const f = put(fx.dir, 'user.txt', 'v1\n')
    fs.chownSync(f, 1234, 1234)
    fs.chmodSync(f, 0o640)
    ok(await fx.session.call('file_write', { path: 'user.txt', content: 'v2\n' }))
    const st = fs.statSync(f)
    expect([st.uid, st.gid, st.mode & 0o777]).toEqual([1234, 1234, 0o640])
    expect(textOf({ content: [{ type: 'text', text: fs.readFileSync(f, 'utf8') }] })).toBe('v2\n')
  })
})

describe('fixes from a second review', () => {
  it('a folder that differs from the workspace only in case is not inside it (on a case-sensitive file system)', async () => {
    const base = tempDir('fsgate-cs-')
    const app = path.join(base, 'App')
    fs.mkdirSync(app)
    fs.mkdirSync(path.join(base, 'app'))
    const fx = workspace({ preset: 'consent' }, app)
    for (const rel of ['app/.ssh/authorized_keys', 'app/.bashrc']) {
      fails(await fx.session.call('write_file', { path: path.join(base, rel), content: 'x\n' }), 'PROTECTED_PATH')
      expect(fs.existsSync(path.join(base, rel))).toBe(false)
    }
  })

  it('a *.edited name beside a folder of the original name is an original, not an error', async () => {
    const fx = workspace({ preset: 'consent' })
    const out = tempDir('fsgate-outside-')
    fs.mkdirSync(path.join(out, 'build'))
    const file = put(out, 'build.edited', 'mine\n')
    const r = await fx.session.call('write_file', { path: file, content: 'new\n', overwrite: true })
    ok(r)
    expect(r.data?.realPath).toBe(path.join(out, 'build.edited.edited'))
    expect(fs.readFileSync(file, 'utf8')).toBe('mine\n')
  })

  it('FILE_TOO_LARGE names the path and says what to do', async () => {
    const fx = workspace({ preset: 'revka', limits: { editMaxBytes: 10 } })
    put(fx.dir, 'big.txt', 'x'.repeat(20))
    const text = fails(await fx.session.call('file_write', { path: 'big.txt', content: 'y\n' }), 'FILE_TOO_LARGE')
    expect(text).toMatch(/^big\.txt is 20 bytes, over the 10 byte limit/)
    expect(text).toMatch(/was not changed/)
  })
})
