/**
 * The sandbox as the boundary (SPEC §8.1): which backend runs a command, what needs
 * approval inside and outside one, unsandboxed runs, what bwrap makes of the file
 * system, the network and the host, the git paths that run code later, and the echoes
 * an error may carry. The attacks themselves are in sandbox-escapes.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { clip, clipMiddle } from '../ts/errors.js'
import { noteGitPaths, plainConfig, restoreGitPaths, type GuardMode, type GuardReport } from '../ts/process/git-guard.js'
import { readableBeside, Sandbox, seatbeltProfile } from '../ts/process/sandbox.js'
import type { ApprovalRequest } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, tempDir, textOf, workspace } from './helpers.js'
import { needs } from './peers.js'

afterAll(removeTempDirs)

const require = createRequire(import.meta.url)

const bwrapWorks = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-net', '--unshare-pid', 'true']).status === 0
const required = process.env.CI === 'true'
if (!bwrapWorks) console.warn(`sandbox.test: bwrap cannot start here; its tests are ${required ? 'REQUIRED (CI=true) and fail' : 'skipped'}`)
const bwrapGate = needs({ bwrap: bwrapWorks }, import.meta.url)
const withBwrap = bwrapGate.describe
const itWithBwrap = bwrapGate.it
/** The user says yes to everything: what is left to stop a command is the sandbox. */
const yes = { onApproval: () => true }

function gitInit(dir: string): void {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' })
  git('init', '-q')
  git('-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'first')
}

/** A TCP listener on loopback that counts its connections. */
async function listener(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let n = 0
  const server = net.createServer((s) => {
    n++
    s.destroy()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { port: (server.address() as net.AddressInfo).port, connections: () => n, close: () => new Promise((r) => server.close(() => r())) }
}

const connect = (port: number) => `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 2); print('connected')"`

describe('which sandbox runs a command', () => {
  itWithBwrap('auto takes bwrap here; the guarded preset runs in it by default, full autonomy without one', async () => {
    const guarded = workspace()
    expect((await guarded.session.call('shell', { command: 'true' })).data?.sandbox).toBe('bwrap')
    const full = workspace({ preset: 'claude-code' })
    expect((await full.session.call('Bash', { command: 'true' })).data?.sandbox).toBe('none')
    const asked = workspace({ preset: 'claude-code', policy: { sandbox: 'auto' } })
    expect((await asked.session.call('Bash', { command: 'true' })).data?.sandbox).toBe('bwrap')
  })

  it('where no sandbox can start, auto runs unsandboxed, says so, and asks for all but known-safe commands', async () => {
    const { toolkit, dir, session } = workspace()
    ;(toolkit as unknown as { sandbox: Sandbox }).sandbox = new Sandbox({ ...toolkit.sandbox.options, order: [] })
    const low = await session.call('shell', { command: 'ls' })
    expect(low.data?.sandbox).toBe('none')
    expect(textOf(low)).toMatch(/ran without a sandbox/)
    const medium = await session.call('shell', { command: 'touch made' })
    fails(medium, 'APPROVAL_REQUIRED')
    expect(medium.data?.sandbox).toBe('none')
    expect(fs.existsSync(path.join(dir, 'made'))).toBe(false)
  })

  it('unsandboxed, a known-safe command whose argument is a link to outside asks first', async () => {
    const outside = tempDir('fsgate-outside-')
    put(outside, 'secret.txt', 'KEY-MARKER\n')
    const { toolkit, dir, session } = workspace()
    ;(toolkit as unknown as { sandbox: Sandbox }).sandbox = new Sandbox({ ...toolkit.sandbox.options, order: [] })
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'notes'))
    fs.symlinkSync(outside, path.join(dir, 'docs'))
    put(dir, 'plain.txt', 'fine\n')
    for (const command of ['cat notes', 'head -n 1 docs/secret.txt', 'grep -r KEY docs']) {
      const r = await session.call('shell', { command })
      expect(fails(r, 'APPROVAL_REQUIRED'), command).toMatch(/leads outside the workspace through a link/)
      expect(JSON.stringify(r)).not.toContain('KEY-MARKER')
    }
    expect(ok(await session.call('shell', { command: 'cat plain.txt' }))).toMatch(/^fine\n\[ran without a sandbox/)
  })

  it('a sandbox asked for by name that cannot start is BACKEND_UNAVAILABLE, and nothing runs', async () => {
    const { dir, session } = workspace({ policy: { sandbox: process.platform === 'darwin' ? 'bwrap' : 'seatbelt' } })
    const r = await session.call('shell', { command: 'touch ran' })
    expect(fails(r, 'BACKEND_UNAVAILABLE')).toMatch(/cannot start here.*(macOS|Linux)/)
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
  })

  it('refuses bad sandbox options', () => {
    expect(() => workspace({ policy: { sandbox: 'docker' as 'none' } })).toThrow(/auto, bwrap, landlock, seatbelt, none/)
    expect(() => workspace({ policy: { network: 'yes' as unknown as boolean } })).toThrow(/network/)
    expect(() => workspace({ policy: { allowUnsandboxed: 1 as unknown as boolean } })).toThrow(/allowUnsandboxed/)
  })
})

withBwrap('approval with a sandbox', () => {
  it('medium commands run inside without approval; high ones still need it', async () => {
    const asked: ApprovalRequest[] = []
    const { dir, session } = workspace({ onApproval: (req) => (asked.push(req), false) })
    ok(await session.call('shell', { command: 'echo hi > out.txt && mkdir -p sub && touch sub/x' }))
    expect(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8')).toBe('hi\n')
    const high = await session.call('shell', { command: 'rm -rf sub' })
    expect(fails(high, 'APPROVAL_REQUIRED')).toMatch(/declined/)
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ command: 'rm -rf sub', risk: 'high', sandboxed: true })
    expect(fs.existsSync(path.join(dir, 'sub/x'))).toBe(true)
  })

  it('an unsandboxed run is refused unless the host allows it, and then always needs the user', async () => {
    const strict = workspace({ preset: 'claude-code', policy: { sandbox: 'auto', autonomy: 'supervised' } })
    const refused = await strict.session.call('Bash', { command: 'touch out', dangerouslyDisableSandbox: true })
    expect(fails(refused, 'COMMAND_DENIED')).toMatch(/does not allow unsandboxed runs/)
    expect(fs.existsSync(path.join(strict.dir, 'out'))).toBe(false)

    const { dir, session } = workspace({ policy: { allowUnsandboxed: true } })
    // A phrase issued for the sandboxed run of a command does not open its unsandboxed run.
    const inside = await session.call('shell', { command: 'rm -f x' })
    const insidePhrase = inside.data?.grantPhrase as string
    expect(insidePhrase).toMatch(/^approve command/)
    const r = await session.call('shell', { command: 'rm -f x', unsandboxed: true, grant_phrase: insidePhrase })
    fails(r, 'APPROVAL_REQUIRED')
    // Even a known-safe command asks, once it leaves the sandbox.
    const ls = await session.call('shell', { command: 'ls', unsandboxed: true })
    expect(fails(ls, 'APPROVAL_REQUIRED')).toMatch(/outside the sandbox/)
    const ran = await session.call('shell', { command: 'ls', unsandboxed: true, grant_phrase: ls.data?.grantPhrase })
    expect(ran.data?.sandbox).toBe('none')
    expect(fs.existsSync(dir)).toBe(true)
  })

  it('revka: a sandboxed medium command needs no approved flag', async () => {
    const { dir, session } = workspace({ preset: 'revka' })
    ok(await session.call('shell', { command: 'echo hi > out.txt' }))
    expect(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8')).toBe('hi\n')
  })

  it("revka: the model's approved flag never takes a command out of the sandbox; the user's phrase does", async () => {
    const { dir, session } = workspace({ preset: 'revka', policy: { allowUnsandboxed: true } })
    const r = await session.call('shell', { command: 'echo hi > out', unsandboxed: true, approved: true })
    expect(fails(r, 'APPROVAL_REQUIRED')).toMatch(/outside the sandbox/)
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false)
    const ran = await session.call('shell', { command: 'echo hi > out', unsandboxed: true, grant_phrase: r.data?.grantPhrase })
    expect(ran.data?.sandbox).toBe('none')
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(true)
  })
})

withBwrap('inside bwrap', () => {
  it('the root is read-only, /tmp and /run are its own, and nothing gains privileges', async () => {
    const outside = fs.mkdtempSync('/var/tmp/fsgate-outside-')
    try {
      const { dir, session } = workspace(yes)
      const r = await session.call('shell', { command: `touch ${outside}/escaped; echo secret > /tmp/left-behind-${path.basename(dir)}; ls -A /run | wc -l; grep -E '^(NoNewPrivs|CapEff)' /proc/self/status` })
      const out = ok(r)
      expect(out).toMatch(/Read-only file system|Permission denied/)
      expect(fs.existsSync(path.join(outside, 'escaped'))).toBe(false)
      expect(fs.existsSync(`/tmp/left-behind-${path.basename(dir)}`)).toBe(false)
      expect(out).toMatch(/^0$/m)
      expect(out).toMatch(/NoNewPrivs:\s+1/)
      expect(out).toMatch(/CapEff:\s+0+$/m)
    } finally {
      fs.rmSync(outside, { recursive: true, force: true })
    }
  })

  it("hides the home's credential folders and the host's processes", async () => {
    const home = tempDir('fsgate-home-')
    put(home, '.ssh/id_test', 'PRIVATE-KEY-MARKER\n')
    put(home, '.netrc', 'machine x password NETRC-MARKER\n')
    const saved = process.env.HOME
    process.env.HOME = home
    try {
      const { session } = workspace(yes)
      const r = await session.call('shell', { command: `cat ~/.ssh/id_test ~/.netrc; ls -A ~/.ssh | wc -l; ls /proc | grep -c '^[0-9]'; cat /proc/${process.pid}/environ` })
      const out = textOf(r)
      expect(out).not.toMatch(/PRIVATE-KEY-MARKER|NETRC-MARKER/)
      expect(r.data?.stdout).toMatch(/^0\n\d\n$/)
      expect(Number(String(r.data?.stdout ?? "").split('\n')[1])).toBeLessThan(6)
    } finally {
      process.env.HOME = saved
    }
  })

  it('has no network unless policy.network allows it', async () => {
    const l = await listener()
    try {
      const closed = workspace(yes)
      const r = await closed.session.call('shell', { command: connect(l.port), timeout_secs: 10 })
      expect(textOf(r)).not.toMatch(/^connected/m)
      expect(l.connections()).toBe(0)
      const open = workspace({ ...yes, policy: { network: true } })
      expect(ok(await open.session.call('shell', { command: connect(l.port), timeout_secs: 10 }))).toBe('connected')
      expect(l.connections()).toBe(1)
    } finally {
      await l.close()
    }
  })

  it('keeps .git/config, hooks and info read-only and .git in place, while git itself works', async () => {
    const { dir, session } = workspace(yes)
    gitInit(dir)
    const config = fs.readFileSync(path.join(dir, '.git/config'))
    const hooks = fs.readdirSync(path.join(dir, '.git/hooks')).sort()
    const r = await session.call('shell', {
      command: [
        'echo "[core] fsmonitor = touch pwned" >> .git/config',
        'echo "touch pwned" > .git/hooks/pre-commit',
        'echo x > .git/info/exclude',
        'mv .git moved',
        'git -c user.name=t -c user.email=t@e commit -q --allow-empty -m second && git log --oneline | wc -l',
      ].join('; '),
    })
    const out = ok(r)
    expect(out).toMatch(/^2$/m)
    expect(fs.readFileSync(path.join(dir, '.git/config')).equals(config)).toBe(true)
    expect(fs.readdirSync(path.join(dir, '.git/hooks')).sort()).toEqual(hooks)
    expect(fs.existsSync(path.join(dir, 'moved'))).toBe(false)
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false)
  })

  it('puts back an alternates file a command made where there was none', async () => {
    const { dir, session } = workspace(yes)
    gitInit(dir)
    const r = await session.call('shell', { command: 'echo /etc > .git/objects/info/alternates' })
    expect(r.data?.restored).toEqual(['.git/objects/info/alternates'])
    expect(textOf(r)).toMatch(/put back \.git\/objects\/info\/alternates/)
    expect(fs.existsSync(path.join(dir, '.git/objects/info/alternates'))).toBe(false)
  })
})

describe('the Seatbelt profile (macOS; its text, as no macOS runs here)', () => {
  it('denies by default, names the few services it looks up, and opens no socket without the network', () => {
    const home = tempDir()
    fs.mkdirSync(path.join(home, '.ssh'))
    const ws = tempDir()
    gitInit(ws)
    const off = seatbeltProfile({ kind: 'seatbelt', workspace: ws, writable: [], home, network: false }, '/private/tmp/x')
    expect(off.split('\n')[1]).toBe('(deny default)')
    expect(off).not.toMatch(/\(allow mach-lookup\)/)
    expect(off).toMatch(/\(allow mach-lookup \(global-name "com\.apple\.system\.opendirectoryd\.libinfo"\)/)
    expect(off).not.toMatch(/network/)
    expect(off).toContain(`(deny file-write* (subpath ${JSON.stringify(path.join(ws, '.git/hooks'))}))`)
    expect(off).toContain(`(deny file-read* file-write* (subpath ${JSON.stringify(path.join(home, '.ssh'))}))`)
    // The credential denies come after the writes they must override.
    expect(off.indexOf('(deny file-read* file-write*')).toBeGreaterThan(off.indexOf('(allow file-write*'))
    const on = seatbeltProfile({ kind: 'seatbelt', workspace: ws, writable: [], home, network: true }, '/private/tmp/x')
    expect(on).toMatch(/\(allow network\*\)/)
  })
})

describe('what Landlock lets a command read', () => {
  it('every entry beside the way to each hidden path, and nothing of them', () => {
    const root = tempDir('fsgate-read-')
    for (const rel of ['a/x', 'home/.ssh/id', 'home/.config/gcloud/k', 'home/.config/other/f', 'home/code/f', 'b']) put(root, rel, '1')
    const hidden = [path.join(root, 'home/.ssh'), path.join(root, 'home/.config/gcloud')]
    const rules = readableBeside(hidden) as string[]
    expect(rules).not.toContain('/')
    for (const open of ['a', 'b', 'home/code', 'home/.config/other']) expect(rules, open).toContain(path.join(root, open))
    for (const closed of ['home', 'home/.ssh', 'home/.config', 'home/.config/gcloud']) expect(rules, closed).not.toContain(path.join(root, closed))
    expect(rules.some((r) => hidden.some((h) => r === h || r.startsWith(`${h}/`)))).toBe(false)
    expect(readableBeside([])).toBeUndefined()
  })
})

describe('the git paths that run code later, checked around a command', () => {
  const noLinks = async () => [] as string[]
  const shown = (abs: string) => abs
  const check = async (roots: string[], mode: GuardMode = 'checked') => {
    const snap = await noteGitPaths(roots, noLinks, mode)
    return (lookIn: string[] = []) => restoreGitPaths(snap, noLinks, { shown, lookIn })
  }
  const rel = (dir: string, report: GuardReport) => ({
    restored: report.restored.map((p) => path.relative(dir, p)).sort(),
    quarantined: report.quarantined.map((p) => path.relative(dir, p)).sort(),
    missing: report.missing.map((p) => path.relative(dir, p)),
  })

  it('puts back config, hooks and info byte for byte, and names what it put back', async () => {
    const dir = tempDir()
    gitInit(dir)
    fs.writeFileSync(path.join(dir, '.git/hooks/keep'), '#!/bin/sh\n', { mode: 0o755 })
    fs.symlinkSync('keep', path.join(dir, '.git/hooks/post-merge'))
    const before = noteGit(dir)
    const restore = await check([dir])
    fs.appendFileSync(path.join(dir, '.git/config'), '[core]\n\tfsmonitor = touch pwned\n')
    fs.writeFileSync(path.join(dir, '.git/hooks/pre-commit'), 'touch pwned\n')
    fs.chmodSync(path.join(dir, '.git/hooks/keep'), 0o777)
    fs.rmSync(path.join(dir, '.git/hooks/post-merge'))
    fs.symlinkSync('/bin/sh', path.join(dir, '.git/hooks/post-merge'))
    fs.rmSync(path.join(dir, '.git/info'), { recursive: true })
    fs.writeFileSync(path.join(dir, '.git/objects/info/alternates'), '/elsewhere\n')
    expect(rel(dir, await restore()).restored).toEqual(['.git/config', '.git/hooks', '.git/info', '.git/objects/info/alternates'])
    expect(noteGit(dir)).toEqual(before)
    expect(fs.readlinkSync(path.join(dir, '.git/hooks/post-merge'))).toBe('keep')
    expect(rel(dir, await restore()).restored).toEqual([])
  })

  it('with the paths mounted read-only (bwrap), notes only what did not exist and removes it when made', async () => {
    const dir = tempDir()
    gitInit(dir)
    fs.rmSync(path.join(dir, '.git/hooks'), { recursive: true })
    const restore = await check([dir], 'mounted')
    // What existed is the mount's to keep: a change made here (outside any mount) is not looked at.
    fs.appendFileSync(path.join(dir, '.git/config'), '# a comment\n')
    fs.mkdirSync(path.join(dir, '.git/hooks'))
    fs.writeFileSync(path.join(dir, '.git/hooks/pre-commit'), 'touch pwned\n', { mode: 0o755 })
    fs.writeFileSync(path.join(dir, '.git/objects/info/alternates'), '/elsewhere\n')
    expect(rel(dir, await restore()).restored).toEqual(['.git/hooks', '.git/objects/info/alternates'])
    expect(fs.existsSync(path.join(dir, '.git/hooks'))).toBe(false)
    expect(fs.readFileSync(path.join(dir, '.git/config'), 'utf8')).toMatch(/# a comment/)
  })

  it('moves a replaced .git aside and the real one back, from the roots or the private TMPDIR', async () => {
    const dir = tempDir()
    const tmp = tempDir()
    gitInit(dir)
    const before = noteGit(dir)
    let restore = await check([dir])
    fs.renameSync(path.join(dir, '.git'), path.join(dir, 'stash'))
    fs.mkdirSync(path.join(dir, '.git'))
    fs.writeFileSync(path.join(dir, '.git/config'), '[core]\n\tfsmonitor = touch pwned\n')
    expect(rel(dir, await restore()).restored).toEqual(['.git'])
    expect(noteGit(dir)).toEqual(before)
    expect(fs.readFileSync(path.join(dir, '.git.fsgate-replaced-1/config'), 'utf8')).toMatch(/fsmonitor/)
    expect(fs.existsSync(path.join(dir, 'stash'))).toBe(false)

    restore = await check([dir])
    fs.mkdirSync(path.join(tmp, 'a/b'), { recursive: true })
    fs.renameSync(path.join(dir, '.git'), path.join(tmp, 'a/b/moved'))
    expect(rel(dir, await restore([tmp])).restored).toEqual(['.git'])
    expect(noteGit(dir)).toEqual(before)

    restore = await check([dir])
    fs.renameSync(path.join(dir, '.git'), path.join(tmp, 'gone'))
    expect(rel(dir, await restore()).missing).toEqual(['.git'])
  })

  it('keeps a repository a command made as git init makes it, and moves aside one set up to run code', async () => {
    const plain = tempDir()
    let restore = await check([plain])
    gitInit(plain)
    execFileSync('git', ['remote', 'add', 'origin', 'https://example.com/r.git'], { cwd: plain })
    expect(rel(plain, await restore())).toEqual({ restored: [], quarantined: [], missing: [] })
    expect(fs.statSync(path.join(plain, '.git')).isDirectory()).toBe(true)

    const planted: Array<[string, (dir: string) => void]> = [
      ['an fsmonitor', (dir) => execFileSync('git', ['config', 'core.fsmonitor', 'touch pwned'], { cwd: dir })],
      ['an include', (dir) => fs.appendFileSync(path.join(dir, '.git/config'), '[include]\n\tpath = ../evil\n')],
      ['a key on the section line', (dir) => fs.appendFileSync(path.join(dir, '.git/config'), '[core] pager = touch pwned\n')],
      ['a hook', (dir) => fs.writeFileSync(path.join(dir, '.git/hooks/pre-commit'), 'touch pwned\n', { mode: 0o755 })],
      ['alternates', (dir) => fs.writeFileSync(path.join(dir, '.git/objects/info/alternates'), '/elsewhere\n')],
      ['a continued line', (dir) => fs.appendFileSync(path.join(dir, '.git/config'), '[user]\n\tname = a \\\n\tfsmonitor = x\n')],
    ]
    for (const [what, plant] of planted) {
      const dir = tempDir()
      restore = await check([dir])
      gitInit(dir)
      plant(dir)
      expect(rel(dir, await restore()).quarantined, what).toEqual(['.git.fsgate-quarantined-1'])
      expect(fs.existsSync(path.join(dir, '.git')), what).toBe(false)
    }

    const pointer = tempDir()
    restore = await check([pointer])
    fs.writeFileSync(path.join(pointer, '.git'), 'gitdir: /elsewhere/.git\n')
    expect(rel(pointer, await restore()).quarantined).toEqual(['.git.fsgate-quarantined-1'])

    const bare = tempDir()
    restore = await check([bare])
    execFileSync('git', ['init', '-q', '--bare', bare])
    expect(rel(bare, await restore()).quarantined).toEqual(['HEAD.fsgate-quarantined-1'])
  })

  it('checks every writable root, not only the workspace', async () => {
    const dir = tempDir()
    const allowed = tempDir()
    gitInit(dir)
    gitInit(allowed)
    const restore = await check([dir, allowed])
    fs.appendFileSync(path.join(allowed, '.git/config'), '[core]\n\tfsmonitor = touch pwned\n')
    const report = await restore()
    expect(report.restored).toEqual([path.join(allowed, '.git/config')])
    expect(fs.readFileSync(path.join(allowed, '.git/config'), 'utf8')).not.toMatch(/fsmonitor/)
  })

  it('never writes or removes through a link the command left on the way', async () => {
    const dir = tempDir()
    const outside = tempDir('fsgate-outside-')
    gitInit(dir)
    fs.writeFileSync(path.join(dir, '.git/objects/info/alternates'), `${path.join(dir, 'objects')}\n`)
    fs.mkdirSync(path.join(outside, 'info'))
    fs.writeFileSync(path.join(outside, 'info/alternates'), 'the outside file\n')
    let restore = await check([dir])
    fs.renameSync(path.join(dir, '.git/objects'), path.join(dir, 'objects-moved'))
    fs.symlinkSync(outside, path.join(dir, '.git/objects'))
    expect(rel(dir, await restore()).restored).toEqual(['.git/objects/info/alternates'])
    expect(fs.lstatSync(path.join(dir, '.git/objects')).isDirectory()).toBe(true)
    expect(fs.readFileSync(path.join(dir, '.git/objects/info/alternates'), 'utf8')).toBe(`${path.join(dir, 'objects')}\n`)
    expect(fs.readFileSync(path.join(outside, 'info/alternates'), 'utf8')).toBe('the outside file\n')

    // Where nothing was, what lies through a link is not the root's: it is left alone.
    const clean = tempDir()
    gitInit(clean)
    restore = await check([clean])
    fs.rmSync(path.join(clean, '.git/objects'), { recursive: true })
    fs.symlinkSync(outside, path.join(clean, '.git/objects'))
    expect(rel(clean, await restore()).restored).toEqual([])
    expect(fs.readFileSync(path.join(outside, 'info/alternates'), 'utf8')).toBe('the outside file\n')
  })

  it('moves aside a nested repository whose config a command changed, but never one reached through a link', async () => {
    const dir = tempDir()
    const outside = tempDir('fsgate-outside-')
    gitInit(dir)
    fs.mkdirSync(path.join(dir, 'sub'))
    gitInit(path.join(dir, 'sub'))
    gitInit(outside)
    const links = async () => ['sub', 'linked']
    let snap = await noteGitPaths([dir], links, 'mounted')
    fs.appendFileSync(path.join(dir, 'sub/.git/config'), '[core]\n\tfsmonitor = touch pwned\n')
    let report = await restoreGitPaths(snap, links, { shown })
    expect(rel(dir, report).quarantined).toEqual(['sub/.git.fsgate-quarantined-1'])

    fs.symlinkSync(outside, path.join(dir, 'linked'))
    snap = await noteGitPaths([dir], links, 'mounted')
    fs.appendFileSync(path.join(outside, '.git/config'), '# the user changed it\n')
    report = await restoreGitPaths(snap, links, { shown })
    expect(report.quarantined).toEqual([])
    expect(fs.statSync(path.join(outside, '.git')).isDirectory()).toBe(true)
  })

  it('does not hang on a FIFO where a hook was', async () => {
    const dir = tempDir()
    gitInit(dir)
    fs.writeFileSync(path.join(dir, '.git/hooks/pre-push'), '#!/bin/sh\n', { mode: 0o755 })
    const restore = await check([dir])
    fs.rmSync(path.join(dir, '.git/hooks/pre-push'))
    execFileSync('mkfifo', [path.join(dir, '.git/hooks/pre-push')])
    expect(rel(dir, await restore()).restored).toEqual(['.git/hooks'])
    expect(fs.lstatSync(path.join(dir, '.git/hooks/pre-push')).isFile()).toBe(true)
    // Noting one does not hang either.
    fs.rmSync(path.join(dir, '.git/hooks/pre-push'))
    execFileSync('mkfifo', [path.join(dir, '.git/hooks/pre-push')])
    await check([dir])
  })

  it('reads a git config as plain only when every key is one git itself writes', () => {
    expect(plainConfig('[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n[remote "origin"]\n\turl = x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n')).toBe(true)
    expect(plainConfig('# comment\n; another\n[Core]\n\tBare\n')).toBe(true)
    for (const bad of ['[core]\n\tfsmonitor = x', '[core]\n\thooksPath = h', '[alias]\n\tx = !sh', '[includeIf "gitdir:/"]\n\tpath = y', '[core.x]\n\tbare = 1', 'bare = true', '[filter "a"]\n\tclean = x', '[user]\n\tname = a\\\n']) {
      expect(plainConfig(bad), bad).toBe(false)
    }
  })
})

/** config, hooks (names, modes, bytes) and info of a repository, for comparing. */
function noteGit(dir: string): string {
  const out: string[] = []
  const walk = (rel: string) => {
    const abs = path.join(dir, rel)
    if (!fs.existsSync(abs)) return void out.push(`${rel} -`)
    const st = fs.lstatSync(abs)
    if (st.isDirectory()) {
      out.push(`${rel}/ ${st.mode & 0o7777}`)
      for (const name of fs.readdirSync(abs).sort()) walk(path.join(rel, name))
    } else out.push(`${rel} ${st.mode & 0o7777} ${fs.readFileSync(abs, 'base64')}`)
  }
  for (const rel of ['.git/config', '.git/hooks', '.git/info', '.git/objects/info/alternates', '.git/HEAD']) walk(rel)
  return out.join('\n')
}

describe('git refuses a repository that borrows objects from outside', () => {
  it('alternates pointing outside the workspace are PATH_OUTSIDE_WORKSPACE', async () => {
    const outside = tempDir('fsgate-outside-')
    gitInit(outside)
    const { dir, session } = workspace({ preset: 'claude-code' })
    gitInit(dir)
    fs.writeFileSync(path.join(dir, '.git/objects/info/alternates'), `${path.join(outside, '.git/objects')}\n`)
    const r = await session.call('git_operations', { operation: 'status' })
    expect(fails(r, 'PATH_OUTSIDE_WORKSPACE')).toMatch(/reaches outside the workspace/)
    // Inside the workspace, or under allowedPaths, it is fine.
    const allowed = workspace({ preset: 'claude-code', policy: { allowedPaths: [outside] } }, dir)
    ok(await allowed.session.call('git_operations', { operation: 'status' }))
  })
})

describe('bounded echoes', () => {
  it('clip and clipMiddle cut on characters, within the bytes asked', () => {
    expect(clip('short')).toBe('short')
    const long = 'é'.repeat(1000)
    expect(Buffer.byteLength(clip(long, 200))).toBeLessThanOrEqual(200)
    expect(clip(long, 200).endsWith('…')).toBe(true)
    const m = clipMiddle(`${'a'.repeat(5000)}error: unclosed group`, 400)
    expect(Buffer.byteLength(m)).toBeLessThanOrEqual(400)
    expect(m).toMatch(/^a+ … a*error: unclosed group$/)
  })

  it('a long program name refused by the command lists is cut too', async () => {
    const { session } = workspace({ preset: 'revka' })
    const r = await session.call('shell', { command: 'x'.repeat(20_000) })
    expect(Buffer.byteLength(fails(r, 'COMMAND_DENIED'))).toBeLessThan(700)
    expect(Buffer.byteLength(JSON.stringify(r.data))).toBeLessThan(700)
  })

  it('a long invalid regex or glob is cut in what the model reads', async () => {
    const { session } = workspace({ preset: 'claude-code' })
    put(session.toolkit.workspace, 'a.txt', 'x\n')
    const regex = await session.call('Grep', { pattern: `(${'a'.repeat(20_000)}` })
    const t = fails(regex, 'INVALID_PATTERN')
    expect(Buffer.byteLength(t)).toBeLessThan(700)
    expect(t).toMatch(/unclosed group/)
    const glob = await session.call('Grep', { pattern: 'x', glob: `{${'b'.repeat(20_000)}` })
    expect(Buffer.byteLength(fails(glob, 'INVALID_PATTERN'))).toBeLessThan(700)
    const none = await session.call('Grep', { pattern: `zz${'q'.repeat(20_000)}` })
    expect(Buffer.byteLength(textOf(none))).toBeLessThan(700)
  })
})

const landlock = (() => {
  try {
    return (require('../native/index.cjs') as { landlockAbi: () => number }).landlockAbi()
  } catch {
    return 0
  }
})()
if (landlock < 1) console.warn(`sandbox.test: no Landlock on this kernel; its tests are ${required ? 'REQUIRED (CI=true) and fail' : 'skipped'}`)

describe.skipIf(landlock < 1 && !required)('inside landlock', () => {
  it('writes only in the workspace and a private TMPDIR, which is removed after', async () => {
    const outside = fs.mkdtempSync('/var/tmp/fsgate-outside-')
    try {
      const { dir, session } = workspace({ ...yes, policy: { sandbox: 'landlock' } })
      const r = await session.call('shell', { command: `echo in > inside.txt; touch ${outside}/escaped; rm -rf ${outside}; echo $TMPDIR; touch "$TMPDIR/t" && echo tmp-ok; grep NoNewPrivs /proc/self/status` })
      expect(r.data?.sandbox).toBe('landlock')
      const out = ok(r)
      expect(out).toMatch(/Permission denied/)
      expect(out).toMatch(/tmp-ok/)
      expect(out).toMatch(/NoNewPrivs:\s+1/)
      expect(fs.readFileSync(path.join(dir, 'inside.txt'), 'utf8')).toBe('in\n')
      expect(fs.existsSync(outside)).toBe(true)
      expect(fs.readdirSync(outside)).toEqual([])
      const tmp = String(r.data?.stdout ?? "").split('\n').find((l) => l.includes('fsgate-sandbox-')) as string
      expect(fs.existsSync(tmp)).toBe(false)
    } finally {
      fs.rmSync(outside, { recursive: true, force: true })
    }
  })

  it("cannot read the host's environment or memory, signal it, or open a network socket", async () => {
    const l = await listener()
    try {
      process.env.FSGATE_LANDLOCK_SECRET = 'sk-landlock-marker'
      const { session } = workspace({ ...yes, policy: { sandbox: 'landlock' } })
      const r = await session.call('shell', { command: `cat /proc/${process.pid}/environ; head -c 64 /proc/${process.pid}/mem; kill -0 ${process.pid} && echo signalled; ${connect(l.port)}`, timeout_secs: 10 })
      expect(JSON.stringify(r)).not.toContain('sk-landlock-marker')
      expect(textOf(r)).not.toMatch(/^(signalled|connected)$/m)
      expect(l.connections()).toBe(0)
    } finally {
      delete process.env.FSGATE_LANDLOCK_SECRET
      await l.close()
    }
  })

  it('puts back the git paths a command changed, and says so', async () => {
    const { dir, session } = workspace({ ...yes, policy: { sandbox: 'landlock' } })
    gitInit(dir)
    const before = noteGit(dir)
    const r = await session.call('shell', { command: 'echo "[core] fsmonitor = touch pwned" >> .git/config; echo "touch pwned" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit' })
    expect(r.data?.restored).toEqual(['.git/config', '.git/hooks'])
    expect(textOf(r)).toMatch(/put back \.git\/config, \.git\/hooks/)
    expect(noteGit(dir)).toEqual(before)
  })
})

describe.skipIf(process.platform !== 'linux')('the host is not dumpable', () => {
  it('what a host does with its own process still works once a supervised toolkit has made it not dumpable', async () => {
    const { session } = workspace()
    ok(await session.call('shell', { command: 'true' }))
    expect(process.report?.getReport()).toBeTruthy()
    expect(fs.readdirSync('/proc/self/fd').length).toBeGreaterThan(0)
    expect(fs.readFileSync('/proc/self/maps', 'utf8').length).toBeGreaterThan(0)
  })

  it.skipIf(process.getuid?.() !== 0 || spawnSync('setpriv', ['--version']).status !== 0)(
    "closes the host's environment to the commands of its own user (measured as an unprivileged host)",
    () => {
      const home = tempDir('fsgate-nobody-')
      fs.chmodSync(home, 0o777)
      const script = path.join(home, 'host.mjs')
      const index = path.join(process.cwd(), 'dist', 'index.js')
      fs.writeFileSync(
        script,
        `import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
const { createToolkit } = await import(${JSON.stringify(index)})
fs.mkdirSync(${JSON.stringify(path.join(home, 'ws'))}, { recursive: true })
createToolkit({ workspace: ${JSON.stringify(path.join(home, 'ws'))}, policy: { hostDumpable: process.argv[2] === 'open' } })
let seen
try { seen = execFileSync('cat', ['/proc/' + process.pid + '/environ']).toString().includes('sk-nobody-marker') } catch { seen = false }
console.log(JSON.stringify({ seen }))
`,
      )
      const run = (mode: string) => {
        const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, script, mode], { env: { PATH: process.env.PATH, SECRET: 'sk-nobody-marker' }, encoding: 'utf8' })
        return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { seen?: boolean }
      }
      expect(run('open').seen).toBe(true)
      expect(run('closed').seen).toBe(false)
    },
  )
})

describe('credentials stay hidden wherever they are', () => {
  const withHome = async (home: string, fn: () => Promise<void>) => {
    const saved = process.env.HOME
    process.env.HOME = home
    try {
      await fn()
    } finally {
      process.env.HOME = saved
    }
  }

  itWithBwrap('a workspace that is the home does not bring its keys back (bwrap)', async () => {
    const home = tempDir('fsgate-home-')
    put(home, '.ssh/id_test', 'HOME-KEY-MARKER\n')
    await withHome(home, async () => {
      const { session } = workspace({ ...yes, policy: { sandbox: 'bwrap' } }, home)
      const r = await session.call('shell', { command: 'cat .ssh/id_test; echo pwned >> .ssh/authorized_keys; ls -A .ssh | wc -l' })
      expect(JSON.stringify(r)).not.toContain('HOME-KEY-MARKER')
      expect(fs.existsSync(path.join(home, '.ssh/authorized_keys'))).toBe(false)
    })
  })

  it.skipIf(landlock < 1)('Landlock does not start where a writable root holds credentials', async () => {
    const home = tempDir('fsgate-home-')
    put(home, '.ssh/id_test', 'HOME-KEY-MARKER\n')
    await withHome(home, async () => {
      const { session } = workspace({ policy: { sandbox: 'landlock' } }, home)
      expect(fails(await session.call('shell', { command: 'cat .ssh/id_test' }), 'BACKEND_UNAVAILABLE')).toMatch(/holds credentials/)
    })
  })

  it('a credential folder that is a link is hidden at its target too (every backend that starts)', async () => {
    const home = tempDir('fsgate-home-')
    const keys = fs.mkdtempSync('/var/tmp/fsgate-keys-')
    try {
      put(keys, 'id_test', 'LINKED-KEY-MARKER\n')
      fs.symlinkSync(keys, path.join(home, '.ssh'))
      await withHome(home, async () => {
        for (const sandbox of [...(bwrapWorks ? ['bwrap' as const] : []), ...(landlock >= 1 ? ['landlock' as const] : [])]) {
          const { session } = workspace({ ...yes, policy: { sandbox } })
          const r = await session.call('shell', { command: `cat ~/.ssh/id_test ${keys}/id_test` })
          expect(r.data?.sandbox, sandbox).toBe(sandbox)
          expect(JSON.stringify(r), sandbox).not.toContain('LINKED-KEY-MARKER')
        }
      })
    } finally {
      fs.rmSync(keys, { recursive: true, force: true })
    }
  })
})
