/**
 * Workspace confinement, SPEC §5.1: malformed paths, `..` and symlink escapes, missing
 * files outside (nothing revealed), allowedPaths, and paths that stay inside.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, tempDir, workspace, type Fixture } from './helpers.js'

/**
 * Layout (all under one temp root):
 *   root/secret.txt            outside the workspace
 *   root/outside/notes.txt     outside, later allowed
 *   root/ws/                   the workspace
 *   root/ws/src/a.txt
 */
let root: string
let wsDir: string
let outside: string
let ws: Fixture

beforeAll(() => {
  root = tempDir('fsgate-paths-')
  wsDir = path.join(root, 'ws')
  outside = path.join(root, 'outside')
  put(root, 'secret.txt', 'TOP SECRET\n')
  put(outside, 'notes.txt', 'outside notes\n')
  put(wsDir, 'src/a.txt', 'inside\n')
  ws = workspace({}, wsDir)
})

afterAll(removeTempDirs)

const OUTSIDE = 'PATH_OUTSIDE_WORKSPACE'

/** Asserts PATH_OUTSIDE_WORKSPACE and that no file content leaked. */
function refused(r: Awaited<ReturnType<Fixture['session']['call']>>): string {
  const text = fails(r, OUTSIDE)
  expect(JSON.stringify(r)).not.toContain('TOP SECRET')
  expect(JSON.stringify(r)).not.toContain('outside notes')
  return text
}

describe('malformed paths', () => {
  it('a NUL byte is INVALID_INPUT naming path', async () => {
    for (const p of ['src/a.txt\0', 'src\0/a.txt', '\0']) {
      const r = await ws.session.call('file_read', { path: p })
      fails(r, 'INVALID_INPUT')
      expect(r.data?.field).toBe('path')
    }
  })

  it('an empty path is INVALID_INPUT naming path (both dialects)', async () => {
    const r = await ws.session.call('file_read', { path: '' })
    expect(fails(r, 'INVALID_INPUT')).toMatch(/path/)
    expect(r.data?.field).toBe('path')
    const c = await ws.session.call('Read', { file_path: '' })
    fails(c, 'INVALID_INPUT')
  })

  it('an absurdly long path is INVALID_INPUT', async () => {
    fails(await ws.session.call('file_read', { path: 'a/'.repeat(5000) + 'x' }), 'INVALID_INPUT')
  })
})

describe('escapes are refused', () => {
  it('`..` to an existing file outside', async () => {
    const text = refused(await ws.session.call('file_read', { path: '../secret.txt' }))
    expect(text).toMatch(/outside/)
    refused(await ws.session.call('file_read', { path: 'src/../../secret.txt' }))
    refused(await ws.session.call('Read', { file_path: '../secret.txt' }))
  })

  it('an absolute path outside', async () => {
    refused(await ws.session.call('file_read', { path: path.join(root, 'secret.txt') }))
    refused(await ws.session.call('file_read', { path: '/etc/passwd' }))
  })

  it('a missing file outside is refused as outside, never NOT_FOUND', async () => {
    refused(await ws.session.call('file_read', { path: '../no-such-file.txt' }))
    refused(await ws.session.call('file_read', { path: '../no-such-dir/deeper/x.txt' }))
    refused(await ws.session.call('file_read', { path: path.join(root, 'nothing-here') }))
    refused(await ws.session.call('file_read', { path: '/no-such-top-level-dir/x' }))
    refused(await ws.session.call('file_read', { path: '~/fsgate-surely-missing-file' }))
  })

  it('a directory outside is refused as outside, never IS_DIRECTORY', async () => {
    refused(await ws.session.call('file_read', { path: '..' }))
    refused(await ws.session.call('file_read', { path: '../outside' }))
    refused(await ws.session.call('file_read', { path: os.tmpdir() }))
  })

  it('a symlink inside pointing to a file outside', async () => {
    fs.symlinkSync(path.join(root, 'secret.txt'), path.join(wsDir, 'leak.txt'))
    refused(await ws.session.call('file_read', { path: 'leak.txt' }))
  })

  it('a symlinked folder inside pointing outside', async () => {
    fs.symlinkSync(outside, path.join(wsDir, 'linked-out'))
    refused(await ws.session.call('file_read', { path: 'linked-out/notes.txt' }))
    refused(await ws.session.call('file_read', { path: 'linked-out/missing.txt' }))
  })

  it('a dangling symlink whose target would be outside is outside, never NOT_FOUND', async () => {
    fs.symlinkSync(path.join(root, 'no-such-file'), path.join(wsDir, 'dangling-out'))
    fs.symlinkSync('no-such-sibling', path.join(wsDir, 'dangling-in'))
    refused(await ws.session.call('file_read', { path: 'dangling-out' }))
    fails(await ws.session.call('file_read', { path: 'dangling-in' }), 'NOT_FOUND')
  })

  it('a symlink loop outside is outside, never a loop error', async () => {
    fs.symlinkSync(path.join(root, 'loop-b'), path.join(root, 'loop-a'))
    fs.symlinkSync(path.join(root, 'loop-a'), path.join(root, 'loop-b'))
    fs.symlinkSync(path.join(root, 'loop-a'), path.join(wsDir, 'to-loop'))
    refused(await ws.session.call('file_read', { path: 'to-loop' }))
  })

  it('/dev/stdin is BLOCKED_DEVICE even when stdin is a regular file in the workspace', () => {
    const script = `import { createToolkit } from ${JSON.stringify(path.resolve(import.meta.dirname, '../dist/index.js'))}
const s = createToolkit({ workspace: process.argv[1] }).createSession()
const out = []
for (const p of ['/dev/stdin', '/proc/self/fd/0', '/dev/fd/0']) out.push((await s.call('file_read', { path: p })).error?.code ?? 'READ')
console.log(out.join(','))`
    const fd = fs.openSync(path.join(wsDir, 'src/a.txt'), 'r')
    try {
      const out = execFileSync('node', ['--input-type=module', '-e', script, wsDir], { stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8' })
      expect(out.trim()).toBe('BLOCKED_DEVICE,BLOCKED_DEVICE,BLOCKED_DEVICE')
    } finally {
      fs.closeSync(fd)
    }
  })

  it('a chain of symlinks that ends outside', async () => {
    fs.symlinkSync(path.join(root, 'secret.txt'), path.join(wsDir, 'hop2'))
    fs.symlinkSync('hop2', path.join(wsDir, 'hop1'))
    refused(await ws.session.call('file_read', { path: 'hop1' }))
  })

  it('a symlink swapped to point outside after a good read is refused at the next read', async () => {
    const link = path.join(wsDir, 'swap.txt')
    fs.symlinkSync(path.join(wsDir, 'src/a.txt'), link)
    ok(await ws.session.call('file_read', { path: 'swap.txt' }))
    fs.unlinkSync(link)
    fs.symlinkSync(path.join(root, 'secret.txt'), link)
    refused(await ws.session.call('file_read', { path: 'swap.txt' }))
  })
})

describe('paths that stay inside', () => {
  it('a symlink pointing inside works and data.realPath is the real path', async () => {
    fs.symlinkSync(path.join(wsDir, 'src/a.txt'), path.join(wsDir, 'alias.txt'))
    const r = await ws.toolkit.createSession().call('file_read', { path: 'alias.txt' })
    expect(ok(r)).toBe('     1\tinside')
    expect(r.data?.realPath).toBe(path.join(wsDir, 'src/a.txt'))
  })

  it('a relative symlink to a sibling folder inside works', async () => {
    fs.symlinkSync('src', path.join(wsDir, 'srclink'))
    const r = await ws.toolkit.createSession().call('file_read', { path: 'srclink/a.txt' })
    expect(ok(r)).toBe('     1\tinside')
    expect(r.data?.realPath).toBe(path.join(wsDir, 'src/a.txt'))
  })

  it('an absolute path inside the workspace works and is shown relative', async () => {
    const r = await ws.toolkit.createSession().call('file_read', { path: path.join(wsDir, 'src/a.txt') })
    expect(ok(r)).toBe('     1\tinside')
    expect(r.data?.path).toBe(path.join('src', 'a.txt'))
    expect(r.data?.realPath).toBe(path.join(wsDir, 'src/a.txt'))
  })

  it('`..` that stays inside works', async () => {
    const r = await ws.toolkit.createSession().call('file_read', { path: 'src/../src/./a.txt' })
    expect(ok(r)).toBe('     1\tinside')
  })

  it('a workspace given through a symlink resolves to the real folder', async () => {
    const link = path.join(root, 'ws-link')
    fs.symlinkSync(wsDir, link)
    const tk = createToolkit({ workspace: link })
    expect(tk.workspace).toBe(wsDir)
    const s = tk.createSession({ dedup: false })
    expect(ok(await s.call('file_read', { path: 'src/a.txt' }))).toBe('     1\tinside')
    expect(ok(await s.call('file_read', { path: path.join(link, 'src/a.txt'), offset: 1, limit: 1 }))).toBe('     1\tinside')
  })

  it('a file name that merely starts with ".." is inside', async () => {
    put(wsDir, '..hidden.txt', 'dots\n')
    expect(ok(await ws.session.call('file_read', { path: '..hidden.txt' }))).toBe('     1\tdots')
  })

  it('a sibling folder whose name extends the workspace name is outside', async () => {
    put(root, 'ws-evil/x.txt', 'TOP SECRET\n')
    refused(await ws.session.call('file_read', { path: '../ws-evil/x.txt' }))
    refused(await ws.session.call('file_read', { path: `${wsDir}-evil/x.txt` }))
  })
})

describe('allowedPaths', () => {
  it('makes an outside folder readable by absolute path', async () => {
    const tk = createToolkit({ workspace: wsDir, policy: { allowedPaths: [outside] } })
    const r = await tk.createSession().call('file_read', { path: path.join(outside, 'notes.txt') })
    expect(ok(r)).toBe('     1\toutside notes')
    expect(r.data?.realPath).toBe(path.join(outside, 'notes.txt'))
  })

  it('makes it readable through a symlink inside the workspace', async () => {
    const tk = createToolkit({ workspace: wsDir, policy: { allowedPaths: [outside] } })
    const link = path.join(wsDir, 'allowed-link')
    fs.symlinkSync(outside, link)
    const r = await tk.createSession().call('file_read', { path: 'allowed-link/notes.txt' })
    expect(ok(r)).toBe('     1\toutside notes')
    expect(r.data?.realPath).toBe(path.join(outside, 'notes.txt'))
  })

  it('allows only what is under it', async () => {
    const tk = createToolkit({ workspace: wsDir, policy: { allowedPaths: [outside] } })
    const s = tk.createSession()
    refused(await s.call('file_read', { path: path.join(root, 'secret.txt') }))
    refused(await s.call('file_read', { path: path.join(outside, '../secret.txt') }))
    fails(await s.call('file_read', { path: path.join(outside, 'missing.txt') }), 'NOT_FOUND')
  })

  it('a toolkit without it still refuses the folder', async () => {
    refused(await ws.toolkit.createSession().call('file_read', { path: path.join(outside, 'notes.txt') }))
  })
})
