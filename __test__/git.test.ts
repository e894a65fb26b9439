/**
 * git_operations (SPEC §3.7) on real temporary repositories: every operation, parsed
 * output against git's own, odd file names, renames and conflicts; every injection
 * attempt refused with nothing run (a logging `git` on PATH proves it); the programs a
 * planted repository config, attributes or hooks would make git run stay unrun; the
 * timeout, cancel and missing-git paths of the hardened runner; and the parsers alone.
 *
 * The tests do not depend on the user's git config: HOME is a temporary folder (with a
 * global config of the test's own), the repositories carry their own user.name/email,
 * and the helper `g` runs git with no global or system config at all.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { gitEnv, HARDENING, MERGE_DRIVER, neutralise, parseScoped, runGit } from '../ts/git/run.js'
import { parseBranches, parseLog, parseNumstat, parseStashes, parseStatus, type StatusEntry } from '../ts/git/parse.js'
import { createToolkit, type Session, type ToolkitOptions, type ToolResult } from '../ts/index.js'
import { DEFAULT_LIMITS } from '../ts/limits.js'
import { ProcessRegistry } from '../ts/process/run.js'
import type { ToolContext } from '../ts/tool.js'
import { gitEffect, gitTool } from '../ts/tools/git.js'
import { alive, fails, ok, put, removeTempDirs, tempDir } from './helpers.js'

const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
const ORIGINAL = { PATH: process.env.PATH, HOME: process.env.HOME }
let home: string
/** Touched by the global config's own filter: the user's drivers are kept. */
let globalMarker: string

beforeAll(() => {
  home = tempDir('fsgate-git-home-')
  globalMarker = path.join(home, 'global-filter-ran')
  fs.writeFileSync(path.join(home, '.gitconfig'), `[filter "trusted"]\n\tclean = touch '${globalMarker}'; cat\n\tsmudge = cat\n`)
  process.env.HOME = home
})

afterAll(() => {
  process.env.HOME = ORIGINAL.HOME
  process.env.PATH = ORIGINAL.PATH
  removeTempDirs()
})

// ---------------------------------------------------------------------------------------
// Helpers

/** git for the test's own setup: no global or system config, no hooks, no filters' surprises. */
function g(cwd: string, ...args: string[]): string {
  const safe = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.pager=cat', '-c', 'log.showSignature=false']
  return execFileSync(REAL_GIT, [...safe, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: ORIGINAL.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Like `g` but returns the exit code instead of throwing. */
function gTry(cwd: string, ...args: string[]): number {
  const r = spawnSync(REAL_GIT, ['-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    env: { PATH: ORIGINAL.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' },
  })
  return r.status ?? -1
}

/** A new repository with one commit of `files` (default a.txt), in a new workspace. */
function repo(files: Record<string, string> = { 'a.txt': 'one\n' }, dir = tempDir('fsgate-git-')): string {
  g(dir, 'init', '-q', '-b', 'main')
  g(dir, 'config', 'user.name', 'Test Author')
  g(dir, 'config', 'user.email', 'author@example.com')
  g(dir, 'config', 'commit.gpgSign', 'false')
  for (const [rel, data] of Object.entries(files)) put(dir, rel, data)
  if (Object.keys(files).length) {
    g(dir, 'add', '-A')
    g(dir, 'commit', '-q', '-m', 'initial')
  }
  return dir
}

type Call = (input: Record<string, unknown>, options?: { signal?: AbortSignal }) => Promise<ToolResult>

/**
 * Calls git_operations through a session. Until the tool is registered in
 * ts/tools/index.ts, the same call goes through the tool with the session's context.
 */
function caller(workspace: string, options: Partial<ToolkitOptions> = {}): Call {
  const session = createToolkit({ workspace, preset: 'revka', ...options }).createSession()
  return (input, callOptions = {}) => callTool(session, input, callOptions)
}

function callTool(session: Session, input: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolResult> {
  if (session.toolkit.lookup('git_operations')) return session.call('git_operations', input, options)
  const base = (session as unknown as { context: (n: string, d: string, o: object) => ToolContext }).context('git_operations', 'revka', options)
  return gitTool.call(input, { ...base, processes: base.processes ?? new ProcessRegistry(), envPassthrough: base.envPassthrough ?? [] })
}

/** What an operation could change: HEAD, refs, index, work tree, stash. */
function state(dir: string): Record<string, string> {
  const index = path.join(dir, '.git', 'index')
  return {
    head: g(dir, 'rev-parse', '--verify', '-q', 'HEAD'),
    refs: g(dir, 'for-each-ref', '--format=%(refname) %(objectname)'),
    status: g(dir, 'status', '--porcelain=v1', '-z', '--untracked-files=all'),
    index: fs.existsSync(index) ? createHash('sha256').update(fs.readFileSync(index)).digest('hex') : 'none',
    stash: g(dir, 'stash', 'list'),
  }
}

/** Porcelain v1 -z parsed independently of ts/git/parse.ts: "XY path\0[orig\0]". */
function porcelainV1(dir: string): Array<{ path: string; origPath?: string; xy: string }> {
  const fields = g(dir, 'status', '--porcelain=v1', '-z').split('\0')
  const out: Array<{ path: string; origPath?: string; xy: string }> = []
  for (let i = 0; i < fields.length; i++) {
    if (fields[i] === '') continue
    const xy = fields[i].slice(0, 2)
    const entry: { path: string; origPath?: string; xy: string } = { xy, path: fields[i].slice(3) }
    if (xy[0] === 'R' || xy[0] === 'C') entry.origPath = fields[++i]
    out.push(entry)
  }
  return out.sort((a, b) => a.path.localeCompare(b.path))
}

function asV1(entries: StatusEntry[]) {
  return entries
    .map((e) => ({ path: e.path, ...(e.origPath !== undefined ? { origPath: e.origPath } : {}), xy: `${e.index}${e.worktree}`.replaceAll('.', ' ') }))
    .sort((a, b) => a.path.localeCompare(b.path))
}

/** A marker file path in a folder of its own (outside every repository). */
function marker(name: string): string {
  return path.join(tempDir('fsgate-git-marker-'), name)
}

/** An executable that touches `file`, for configs that run a program directly (not through sh). */
function program(file: string): string {
  const script = path.join(path.dirname(file), 'program.sh')
  fs.writeFileSync(script, `#!/bin/sh\ntouch '${file}'\ncat >/dev/null\n`, { mode: 0o755 })
  return script
}

/** Rewrites HEAD as a commit that carries a (bogus) PGP signature, so log would verify it. */
function signHead(dir: string): void {
  const raw = g(dir, 'cat-file', 'commit', 'HEAD')
  const signed = raw.replace(/^(committer .*\n)/m, '$1gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n')
  const hash = execFileSync(REAL_GIT, ['hash-object', '-w', '-t', 'commit', '--stdin'], { cwd: dir, input: signed, encoding: 'utf8' }).trim()
  g(dir, 'update-ref', 'refs/heads/main', hash)
}

/** A script that touches `file` (and passes stdin through), as a program a config names. */
function toucher(file: string): string {
  return `touch '${file}'; cat`
}

// ---------------------------------------------------------------------------------------

describe('status', () => {
  it('parses every kind of entry and agrees with git status --porcelain=v1', async () => {
    const dir = repo({ 'a.txt': 'one\n', 'b.txt': 'two\n', 'gone.txt': 'x\n', 'old name.txt': 'rename me\n' })
    put(dir, 'a.txt', 'one changed\n')
    put(dir, 'b.txt', 'two staged\n')
    g(dir, 'add', 'b.txt')
    put(dir, 'b.txt', 'two staged then changed\n')
    fs.rmSync(path.join(dir, 'gone.txt'))
    g(dir, 'mv', 'old name.txt', 'new name.txt')
    put(dir, 'new.txt', 'untracked\n')
    put(dir, 'added.txt', 'added\n')
    g(dir, 'add', 'added.txt')
    const r = await caller(dir)({ operation: 'status' })
    const out = ok(r)
    const data = r.data as { branch: string; entries: StatusEntry[] }
    expect(data.branch).toBe('main')
    expect(asV1(data.entries)).toEqual(porcelainV1(dir))
    expect(data.entries.find((e) => e.path === 'new name.txt')).toMatchObject({ origPath: 'old name.txt', kind: 'renamed', index: 'R' })
    expect(data.entries.find((e) => e.path === 'new.txt')).toMatchObject({ kind: 'untracked' })
    expect(data.entries.find((e) => e.path === 'b.txt')).toMatchObject({ index: 'M', worktree: 'M', kind: 'changed' })
    expect(out).toMatch(/^On branch main\.$/m)
    expect(out).toContain('R  old name.txt -> new name.txt')
    expect(out).toContain(' D gone.txt')
    expect(out).toContain('?? new.txt')
  })

  it('a clean tree, the upstream with ahead/behind, and the stash count', async () => {
    const dir = repo()
    g(dir, 'branch', 'base')
    put(dir, 'a.txt', 'two\n')
    g(dir, 'commit', '-qam', 'ahead one')
    g(dir, 'branch', '--set-upstream-to=base', 'main')
    const call = caller(dir)
    let r = await call({ operation: 'status' })
    expect(ok(r)).toBe('On branch main, tracking base (1 ahead, 0 behind).\nNothing to commit, working tree clean.')
    expect(r.data).toMatchObject({ branch: 'main', upstream: 'base', ahead: 1, behind: 0, entries: [], stashes: 0 })
    put(dir, 'a.txt', 'three\n')
    g(dir, 'stash', '-q')
    r = await call({ operation: 'status' })
    expect(r.data).toMatchObject({ stashes: 1 })
    expect(ok(r)).toContain('1 stash entry.')
    g(dir, 'checkout', '-q', '--detach', 'HEAD')
    r = await call({ operation: 'status' })
    expect(ok(r)).toMatch(/^HEAD detached at [0-9a-f]{7}\./)
    expect(r.data).toMatchObject({ branch: null, detached: true })
  })

  it('paths with spaces, newlines, tabs, quotes, non-ASCII and a leading dash come through exactly', async () => {
    const names = ['sp ace.txt', 'new\nline.txt', 'tab\there.txt', 'quo"te\'s.txt', '한글 파일.txt', 'ünï.txt', '-n.txt', ' lead.txt']
    const dir = repo(Object.fromEntries(names.map((n) => [n, 'v1\n'])))
    for (const n of names) put(dir, n, 'v2\n')
    put(dir, 'untracked\nnew.txt', 'u\n')
    const r = await caller(dir)({ operation: 'status' })
    const entries = (r.data as { entries: StatusEntry[] }).entries
    expect(entries.map((e) => e.path).sort()).toEqual([...names, 'untracked\nnew.txt'].sort())
    expect(asV1(entries)).toEqual(porcelainV1(dir))
    // Control characters are shown quoted, so a line of the text is one entry.
    expect(ok(r)).toContain(' M "new\\nline.txt"')
    expect(ok(r)).toContain(' M 한글 파일.txt')
  })

  it('a merge conflict is an unmerged (u) entry', async () => {
    const dir = repo({ 'c.txt': 'base\n' })
    g(dir, 'checkout', '-q', '-b', 'other')
    put(dir, 'c.txt', 'theirs\n')
    g(dir, 'commit', '-qam', 'theirs')
    g(dir, 'checkout', '-q', 'main')
    put(dir, 'c.txt', 'ours\n')
    g(dir, 'commit', '-qam', 'ours')
    expect(gTry(dir, 'merge', '-q', 'other')).not.toBe(0)
    const r = await caller(dir)({ operation: 'status' })
    expect((r.data as { entries: StatusEntry[] }).entries).toEqual([{ path: 'c.txt', index: 'U', worktree: 'U', kind: 'unmerged' }])
    expect(ok(r)).toContain('UU c.txt')
    expect(ok(r)).toContain('1 file with conflicts')
  })

  it('runs in a subfolder given by path; paths stay relative to the repository root', async () => {
    const ws = tempDir('fsgate-git-ws-')
    const dir = path.join(ws, 'proj')
    fs.mkdirSync(dir)
    repo({ 'src/a.txt': 'a\n' }, dir)
    put(dir, 'src/a.txt', 'b\n')
    const r = await caller(ws)({ operation: 'status', path: 'proj/src' })
    expect(r.data).toMatchObject({ repository: 'proj', entries: [{ path: 'src/a.txt', kind: 'changed' }] })
    expect(ok(r)).toContain('repository proj; paths are relative to it')
  })

  it('a folder outside any repository is NOT_FOUND, saying so', async () => {
    const ws = tempDir('fsgate-git-plain-')
    const text = fails(await caller(ws)({ operation: 'status' }), 'NOT_FOUND')
    expect(text).toMatch(/is not in a git repository inside the workspace/)
  })

  it('does not climb out of the workspace to a repository above it', async () => {
    const dir = repo({ 'sub/x.txt': 'x\n' })
    const text = fails(await caller(path.join(dir, 'sub'))({ operation: 'status' }), 'NOT_FOUND')
    expect(text).toMatch(/not in a git repository inside the workspace/)
  })

  it('status of an empty repository', async () => {
    const dir = repo({})
    const r = await caller(dir)({ operation: 'status' })
    expect(ok(r)).toMatch(/^No commits yet on main\./)
    expect(r.data).toMatchObject({ oid: null, branch: 'main' })
  })
})

describe('diff', () => {
  it('the unified diff in content and per-file counts that match git diff --numstat', async () => {
    const dir = repo({ 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n', 'bin.dat': 'x\0y' })
    put(dir, 'a.txt', 'one\nTWO\nthree\n')
    put(dir, 'bin.dat', 'x\0z\0')
    const r = await caller(dir)({ operation: 'diff' })
    const out = ok(r)
    expect(out).toContain(g(dir, 'diff', '--no-color'))
    expect(out).toMatch(/^2 files changed, \+2 -1\./)
    const data = r.data as { files: Array<{ path: string; added: number | null; removed: number | null; binary: boolean }>; cached: boolean }
    expect(data.cached).toBe(false)
    expect(data.files).toEqual([
      { path: 'a.txt', added: 2, removed: 1, binary: false },
      { path: 'bin.dat', added: null, removed: null, binary: true },
    ])
  })

  it('cached shows the staged changes, with renames; files narrows; nothing says so', async () => {
    const dir = repo({ 'a.txt': 'one\n', 'keep.txt': 'k\n', 'from here.txt': 'same content here\n' })
    const call = caller(dir)
    put(dir, 'a.txt', 'staged\n')
    g(dir, 'add', 'a.txt')
    g(dir, 'mv', 'from here.txt', 'to there.txt')
    put(dir, 'keep.txt', 'unstaged\n')
    let r = await call({ operation: 'diff', cached: true })
    expect((r.data as { files: unknown[] }).files).toEqual([
      { path: 'a.txt', added: 1, removed: 1, binary: false },
      { path: 'to there.txt', origPath: 'from here.txt', added: 0, removed: 0, binary: false },
    ])
    expect(ok(r)).toContain('rename from from here.txt')
    r = await call({ operation: 'diff', files: 'keep.txt' })
    expect((r.data as { files: Array<{ path: string }> }).files.map((f) => f.path)).toEqual(['keep.txt'])
    r = await call({ operation: 'diff', files: ['a.txt'] })
    expect(ok(r)).toMatch(/^No unstaged changes/)
    g(dir, 'commit', '-qm', 'all')
    expect(ok(await call({ operation: 'diff', cached: true }))).toBe('No staged changes.')
  })

  it('a diff over the output limit is cut, and says so', async () => {
    const dir = repo({ 'big.txt': 'x\n' })
    put(dir, 'big.txt', Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n'))
    const r = await caller(dir, { limits: { shellOutputBytes: 8192 } })({ operation: 'diff' })
    expect(ok(r)).toMatch(/The diff was cut: [\d,]+ bytes in all/)
    expect(r.data).toMatchObject({ truncated: true, files: [{ path: 'big.txt', added: 5000, removed: 1 }] })
  })
})

describe('log and branch', () => {
  it('log: hashes as git rev-list gives them, newest first, with limit', async () => {
    const dir = repo()
    for (let i = 2; i <= 4; i++) {
      put(dir, 'a.txt', `${i}\n`)
      g(dir, 'commit', '-qam', `change ${i}`, '-m', `body of ${i}\nsecond line`)
    }
    const call = caller(dir)
    const r = await call({ operation: 'log', limit: 3 })
    const commits = (r.data as { commits: Array<{ hash: string; subject: string; body: string; author: string; email: string; date: string }> }).commits
    expect(commits.map((c) => c.hash)).toEqual(g(dir, 'rev-list', '--max-count=3', 'HEAD').trim().split('\n'))
    expect(commits[0]).toMatchObject({ subject: 'change 4', body: 'body of 4\nsecond line', author: 'Test Author', email: 'author@example.com' })
    expect(commits[0].date).toMatch(/^\d{4}-\d\d-\d\dT/)
    const lines = ok(r).split('\n')
    expect(lines[0]).toMatch(/^[0-9a-f]{7,} \d{4}-\d\d-\d\d Test Author: change 4$/)
    expect(lines[3]).toMatch(/The latest 3; raise limit/)
    const all = await call({ operation: 'log', limit: 1000 })
    expect((all.data as { commits: unknown[] }).commits).toHaveLength(4)
    expect((await call({ operation: 'log' })).data).toMatchObject({ commits: expect.any(Array) })
  })

  it('log of a repository without commits', async () => {
    expect(ok(await caller(repo({}))({ operation: 'log' }))).toBe('No commits yet.')
  })

  it('a branch list cut by the result budget names a way on the model can take, not data it cannot see', async () => {
    const dir = repo()
    for (let i = 0; i < 150; i++) g(dir, 'branch', `feature/topic-number-${String(i).padStart(3, '0')}`)
    const text = ok(await caller(dir, { limits: { resultTokens: 1_200 } })({ operation: 'branch' }))
    expect(text).toMatch(/git branch --list '<pattern>' in the shell/)
    expect(text).not.toMatch(/data\.branches/)
  })

  it('branch lists local branches as git for-each-ref does, the current one marked', async () => {
    const dir = repo()
    g(dir, 'branch', 'feature/x')
    g(dir, 'branch', 'zeta')
    g(dir, 'branch', '--set-upstream-to=zeta', 'feature/x')
    const r = await caller(dir)({ operation: 'branch' })
    const data = r.data as { current: string; branches: Array<{ name: string; current: boolean; hash: string; upstream: string | null }> }
    expect(data.current).toBe('main')
    expect(data.branches.map((b) => b.name)).toEqual(['feature/x', 'main', 'zeta'])
    expect(data.branches.map((b) => b.hash)).toEqual(g(dir, 'for-each-ref', '--format=%(objectname)', 'refs/heads/').trim().split('\n'))
    expect(data.branches[0].upstream).toBe('zeta')
    expect(ok(r)).toMatch(/^\* main [0-9a-f]+ initial$/m)
  })
})

describe('add and commit', () => {
  it('add stages the paths (string split at spaces, array whole) and reports them', async () => {
    const dir = repo()
    const call = caller(dir)
    put(dir, 'x.txt', 'x\n')
    put(dir, 'y.txt', 'y\n')
    put(dir, 'with space.txt', 's\n')
    put(dir, '-n.txt', 'dash\n')
    let r = await call({ operation: 'add', paths: 'x.txt  y.txt' })
    expect(ok(r)).toContain('Staged for the next commit (2 files):\nA  x.txt\nA  y.txt')
    r = await call({ operation: 'add', paths: ['with space.txt', './-n.txt'] })
    expect(r.data).toMatchObject({ staged: [{ path: '-n.txt', index: 'A' }, { path: 'with space.txt', index: 'A' }] })
    expect(g(dir, 'diff', '--cached', '--name-only', '-z').split('\0').filter(Boolean).sort()).toEqual(['-n.txt', 'with space.txt', 'x.txt', 'y.txt'])
    expect(ok(await call({ operation: 'add', paths: 'a.txt' }))).toBe('Nothing new to stage: those paths have no changes.')
  })

  it('add: a deletion, a folder, "."; a missing path is NOT_FOUND; paths is required', async () => {
    const dir = repo({ 'a.txt': 'a\n', 'd/1.txt': '1\n' })
    const call = caller(dir)
    fs.rmSync(path.join(dir, 'a.txt'))
    put(dir, 'd/2.txt', '2\n')
    expect(ok(await call({ operation: 'add', paths: 'a.txt d' }))).toMatch(/D {2}a\.txt\nA {2}d\/2\.txt/)
    expect(fails(await call({ operation: 'add', paths: 'nope.txt' }), 'NOT_FOUND')).toMatch(/nope\.txt does not match any file/)
    expect(fails(await call({ operation: 'add' }), 'INVALID_INPUT')).toMatch(/add needs paths/)
    put(dir, 'z.txt', 'z\n')
    expect(ok(await call({ operation: 'add', paths: '.' }))).toContain('A  z.txt')
  })

  it('add relative to path (a subfolder)', async () => {
    const dir = repo({ 'sub/a.txt': 'a\n' })
    put(dir, 'sub/b.txt', 'b\n')
    expect(ok(await caller(dir)({ operation: 'add', paths: 'b.txt', path: 'sub' }))).toContain('A  sub/b.txt')
  })

  it('commit commits what is staged, message exactly as given, and reports the hash', async () => {
    const dir = repo()
    const call = caller(dir)
    put(dir, 'a.txt', 'changed\n')
    put(dir, 'unstaged.txt', 'left out\n')
    g(dir, 'add', 'a.txt')
    const message = 'fix: handle `a | b`; $(not) run & stay > literal\n\nBody with "quotes" and ünïcode.'
    const r = await call({ operation: 'commit', message })
    const out = ok(r)
    const head = g(dir, 'rev-parse', 'HEAD').trim()
    expect(r.data).toMatchObject({ commit: { hash: head, subject: 'fix: handle `a | b`; $(not) run & stay > literal' } })
    expect(out).toMatch(/^Committed [0-9a-f]{7,}: fix: handle/)
    expect(out).toContain('1 file changed')
    expect(g(dir, 'log', '-1', '--format=%B').trimEnd()).toBe(message)
    expect(g(dir, 'status', '--porcelain')).toBe('?? unstaged.txt\n')
  })

  it('commit: nothing staged, an empty message and no message are clear errors', async () => {
    const dir = repo()
    const call = caller(dir)
    put(dir, 'a.txt', 'changed, not staged\n')
    const before = state(dir)
    expect(fails(await call({ operation: 'commit', message: 'x' }), 'INVALID_INPUT')).toMatch(/^Nothing is staged, so there is nothing to commit\. Stage the files first/)
    expect(fails(await call({ operation: 'commit', message: '  \n ' }), 'INVALID_INPUT')).toMatch(/message is empty/)
    expect(fails(await call({ operation: 'commit' }), 'INVALID_INPUT')).toMatch(/commit needs a message/)
    expect(state(dir)).toEqual(before)
  })

  it('the first commit of an empty repository', async () => {
    const dir = repo({})
    put(dir, 'first.txt', '1\n')
    const call = caller(dir)
    ok(await call({ operation: 'add', paths: 'first.txt' }))
    const r = await call({ operation: 'commit', message: 'first' })
    expect(ok(r)).toContain('root-commit')
    expect(g(dir, 'log', '--format=%s')).toBe('first\n')
  })
})

describe('checkout', () => {
  it('switches to an existing branch', async () => {
    const dir = repo()
    g(dir, 'branch', 'feature')
    const r = await caller(dir)({ operation: 'checkout', branch: 'feature' })
    expect(ok(r)).toBe("Switched to branch 'feature'")
    expect(r.data).toMatchObject({ branch: 'feature', hash: g(dir, 'rev-parse', 'feature').trim() })
    expect(g(dir, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('feature')
  })

  it('never creates a branch: a missing one is NOT_FOUND, listing the branches', async () => {
    const dir = repo()
    const before = state(dir)
    const text = fails(await caller(dir)({ operation: 'checkout', branch: 'newbranch' }), 'NOT_FOUND')
    expect(text).toMatch(/Branch newbranch does not exist \(branches: main\)\. git_operations does not create branches/)
    expect(state(dir)).toEqual(before)
  })

  it('local changes in the way are reported with what to do, and nothing changes', async () => {
    const dir = repo()
    g(dir, 'checkout', '-q', '-b', 'other')
    put(dir, 'a.txt', 'other\n')
    g(dir, 'commit', '-qam', 'other')
    g(dir, 'checkout', '-q', 'main')
    put(dir, 'a.txt', 'local edit\n')
    const before = state(dir)
    const text = fails(await caller(dir)({ operation: 'checkout', branch: 'other' }), 'IO_ERROR')
    expect(text).toMatch(/would be overwritten.*Commit or stash those changes first/)
    expect(state(dir)).toEqual(before)
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('local edit\n')
  })

  it('an invalid branch name is INVALID_INPUT', async () => {
    const dir = repo()
    expect(fails(await caller(dir)({ operation: 'checkout', branch: 'main~1' }), 'INVALID_INPUT')).toMatch(/is not a valid branch name/)
    expect(fails(await caller(dir)({ operation: 'checkout', branch: 'a..b' }), 'INVALID_INPUT')).toMatch(/is not a valid branch name/)
  })
})

describe('stash', () => {
  it('push (default), list, pop, drop', async () => {
    const dir = repo()
    const call = caller(dir)
    put(dir, 'a.txt', 'wip\n')
    let r = await call({ operation: 'stash', message: 'my work' })
    expect(ok(r)).toMatch(/^Saved working directory and index state On main: my work\. Bring it back/)
    expect(r.data).toMatchObject({ stashed: true })
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('one\n')
    r = await call({ operation: 'stash', stash_action: 'list' })
    expect(r.data).toMatchObject({ stashes: [{ ref: 'stash@{0}', index: 0, message: 'On main: my work', hash: g(dir, 'rev-parse', 'stash@{0}').trim() }] })
    expect(ok(r)).toMatch(/^stash@\{0\} [0-9a-f]+ \d{4}-\d\d-\d\d On main: my work$/)
    r = await call({ operation: 'stash', stash_action: 'pop' })
    expect(ok(r)).toMatch(/^Applied and dropped the newest stash entry \([0-9a-f]{7}\)\.$/)
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('wip\n')
    ok(await call({ operation: 'stash', stash_action: 'push' }))
    expect(ok(await call({ operation: 'stash', stash_action: 'drop' }))).toMatch(/^Dropped the newest stash entry/)
    expect(g(dir, 'stash', 'list')).toBe('')
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('one\n')
  })

  it('push of given paths only; nothing to save; an empty stash', async () => {
    const dir = repo({ 'a.txt': 'a\n', 'b c.txt': 'b\n' })
    const call = caller(dir)
    expect(ok(await call({ operation: 'stash' }))).toBe('No local changes to save; nothing was stashed.')
    expect(fails(await call({ operation: 'stash', stash_action: 'pop' }), 'NOT_FOUND')).toBe('The stash is empty, so there is nothing to pop.')
    expect(fails(await call({ operation: 'stash', stash_action: 'drop' }), 'NOT_FOUND')).toBe('The stash is empty, so there is nothing to drop.')
    expect(ok(await call({ operation: 'stash', stash_action: 'list' }))).toBe('The stash is empty.')
    put(dir, 'a.txt', 'a2\n')
    put(dir, 'b c.txt', 'b2\n')
    ok(await call({ operation: 'stash', paths: ['b c.txt'] }))
    expect(g(dir, 'status', '--porcelain')).toBe(' M a.txt\n')
    expect(fails(await call({ operation: 'stash', stash_action: 'list', message: 'x' }), 'INVALID_INPUT')).toMatch(/message is not used by stash list/)
  })

  it('a pop that conflicts says where, and keeps the entry', async () => {
    const dir = repo({ 'm.txt': 'base\n' })
    const call = caller(dir)
    put(dir, 'm.txt', 'stashed\n')
    g(dir, 'stash', '-q')
    put(dir, 'm.txt', 'committed\n')
    g(dir, 'commit', '-qam', 'moved on')
    const r = await call({ operation: 'stash', stash_action: 'pop' })
    expect(fails(r, 'IO_ERROR')).toMatch(/applied with conflicts in m\.txt, and the entry was kept/)
    expect(r.data).toMatchObject({ conflicts: ['m.txt'], kept: true })
    expect(g(dir, 'stash', 'list')).toMatch(/stash@\{0\}/)
    expect(fs.readFileSync(path.join(dir, 'm.txt'), 'utf8')).toContain('<<<<<<<')
  })
})

describe('fields', () => {
  it('a field the operation does not use is refused, with a hint where it matters', async () => {
    const dir = repo()
    const call = caller(dir)
    expect(fails(await call({ operation: 'status', message: 'x' }), 'INVALID_INPUT')).toMatch(/message is not used by status; remove it/)
    expect(fails(await call({ operation: 'commit', message: 'x', paths: 'a.txt' }), 'INVALID_INPUT')).toMatch(/stage the files with operation "add" first/)
    expect(fails(await call({ operation: 'checkout', branch: 'main', paths: 'a.txt' }), 'INVALID_INPUT')).toMatch(/never restores or discards files/)
    expect(fails(await call({ operation: 'log', cached: true }), 'INVALID_INPUT')).toMatch(/cached is not used by log/)
  })

  it('the schema refuses unknown fields, bad enums and types', async () => {
    const call = caller(repo())
    expect(fails(await call({ operation: 'push' }), 'INVALID_INPUT')).toMatch(/operation/)
    expect(fails(await call({ operation: 'status', force: true }), 'INVALID_INPUT')).toMatch(/unknown field 'force'/)
    expect(fails(await call({ operation: 'stash', stash_action: 'clear' }), 'INVALID_INPUT')).toMatch(/stash_action/)
    expect(fails(await call({ operation: 'log', limit: 0 }), 'INVALID_INPUT')).toMatch(/limit/)
    expect(fails(await call({ operation: 'add', paths: 42 }), 'INVALID_INPUT')).toMatch(/paths/)
  })

  it('only the revka dialect has the tool', () => {
    expect(Object.keys(gitTool.dialects)).toEqual(['revka'])
    expect(gitTool.dialects.revka?.name).toBe('git_operations')
  })
})

describe('autonomy (SPEC §5.4)', () => {
  it('effect: commit, add, checkout and stash are writes labelled git:write; the rest are reads', () => {
    for (const op of ['commit', 'add', 'checkout', 'stash'] as const) {
      expect(gitEffect({ operation: op })).toEqual({
        sideEffect: true,
        write: true,
        labels: ['git:write'],
        readOnlyMessage: 'git write operations require higher autonomy level',
      })
    }
    expect(gitEffect({ operation: 'stash', stash_action: 'list' }).write).toBe(true)
    for (const op of ['status', 'diff', 'log', 'branch'] as const) expect(gitEffect({ operation: op })).toMatchObject({ sideEffect: false, write: false, labels: [] })
  })

  // Needs the dispatch (ts/toolkit.ts) to call `effect` and the tool to be registered.
  it('read_only refuses git writes with the seed message and allows reads', async () => {
    const dir = repo()
    put(dir, 'a.txt', 'changed\n')
    const s = createToolkit({ workspace: dir, preset: 'revka', policy: { autonomy: 'read_only' } }).createSession()
    const before = state(dir)
    for (const input of [
      { operation: 'add', paths: 'a.txt' },
      { operation: 'commit', message: 'x' },
      { operation: 'checkout', branch: 'main' },
      { operation: 'stash' },
      { operation: 'stash', stash_action: 'list' },
    ]) {
      expect(fails(await s.call('git_operations', input), 'AUTONOMY')).toContain('git write operations require higher autonomy level')
    }
    expect(state(dir)).toEqual(before)
    ok(await s.call('git_operations', { operation: 'status' }))
    ok(await s.call('git_operations', { operation: 'diff' }))
  })
})

describe('injection attempts are refused before git runs', () => {
  let dir: string
  let log: string
  let pwned: string

  beforeAll(() => {
    // A git on PATH that records every run, then runs the real one.
    const bin = tempDir('fsgate-git-bin-')
    log = path.join(bin, 'runs.log')
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${REAL_GIT}' "$@"\n`, { mode: 0o755 })
    process.env.PATH = `${bin}:${ORIGINAL.PATH}`
    dir = repo({ 'a.txt': 'a\n', 'b.txt': 'b\n' })
    g(dir, 'branch', 'other')
    put(dir, 'a.txt', 'changed\n')
    pwned = path.join(dir, 'pwned')
  })

  afterAll(() => {
    process.env.PATH = ORIGINAL.PATH
  })

  const cases: Array<[string, Record<string, unknown>, string | RegExp]> = [
    ['--output in files', { operation: 'diff', files: '--output=/tmp/fsgate-pwned' }, /starts with "-"/],
    ['--output in a files array', { operation: 'diff', files: ['a.txt', '--output=/tmp/fsgate-pwned'] }, /starts with "-"/],
    ['--upload-pack in paths', { operation: 'add', paths: 'x --upload-pack=touch pwned' }, /--upload-pack=/],
    ['--receive-pack in branch', { operation: 'checkout', branch: 'x--receive-pack=y' }, /--receive-pack=/],
    ['--exec in paths', { operation: 'add', paths: ['a--exec=sh'] }, /--exec=/],
    ['--pager in files', { operation: 'diff', files: 'a--pager=x' }, /--pager=/],
    ['--editor in message', { operation: 'commit', message: 'x --editor=vim' }, /--editor=/],
    ['-c in paths', { operation: 'add', paths: '-c core.pager=touch pwned' }, /"-c"|starts with "-"/],
    ['-c in message', { operation: 'commit', message: 'msg -c core.pager=touch' }, /"-c"/],
    ['-ckey=value in message', { operation: 'commit', message: '-ccore.editor=x' }, /"-c"/],
    ['--no-verify in message', { operation: 'commit', message: 'fix --no-verify' }, /--no-verify/],
    ['; in paths', { operation: 'add', paths: 'a.txt; touch pwned' }, /";"/],
    ['$( in paths', { operation: 'add', paths: '$(touch pwned)' }, /"\$\("/],
    ['backticks in files', { operation: 'diff', files: '`touch pwned`' }, /"`"/],
    ['| in branch', { operation: 'checkout', branch: 'main|touch' }, /"\|"/],
    ['& in paths', { operation: 'add', paths: 'a.txt && touch pwned' }, /"&"/],
    ['> in paths', { operation: 'add', paths: 'a.txt > pwned' }, /">"/],
    ['< in files', { operation: 'diff', files: 'a.txt < b' }, /"<"/],
    ['a newline in paths', { operation: 'add', paths: ['a.txt\ntouch pwned'] }, /line break/],
    ['NUL in message', { operation: 'commit', message: 'a\0b' }, /NUL/],
    ['-rf as a path', { operation: 'add', paths: '-rf' }, /starts with "-".*\.\/-rf/],
    ['checkout .', { operation: 'checkout', branch: '.' }, /never discards changes/],
    ['checkout -- .', { operation: 'checkout', branch: '-- .' }, /never discards changes/],
    ['checkout --', { operation: 'checkout', branch: '--' }, /never discards changes/],
    ['checkout --orphan', { operation: 'checkout', branch: '--orphan' }, /starts with "-"/],
    ['checkout -b', { operation: 'checkout', branch: '-b evil' }, /starts with "-"/],
    ['checkout with paths', { operation: 'checkout', branch: 'other', paths: '.' }, /never restores or discards files/],
    ['stash with a dash path', { operation: 'stash', paths: '--all' }, /starts with "-"/],
    ['$( in path', { operation: 'status', path: '$(touch pwned)' }, /"\$\("/],
  ]

  it.each(cases)('%s', async (_name, input, message) => {
    const before = state(dir)
    fs.rmSync(log, { force: true })
    const text = fails(await caller(dir)(input), 'INVALID_INPUT')
    expect(text).toMatch(message)
    expect(fs.existsSync(log), `git ran: ${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''}`).toBe(false)
    expect(state(dir)).toEqual(before)
    expect(fs.existsSync(pwned)).toBe(false)
    expect(fs.existsSync('/tmp/fsgate-pwned')).toBe(false)
  })

  it('the logging git does record a real run (so the check above can fail)', async () => {
    fs.rmSync(log, { force: true })
    ok(await caller(dir)({ operation: 'status' }))
    expect(fs.readFileSync(log, 'utf8')).toMatch(/status --porcelain=v2/)
  })

  const outside: Array<[string, Record<string, unknown>]> = [
    ['path ..', { operation: 'status', path: '..' }],
    ['path absolute outside', { operation: 'status', path: '/' }],
    ['path ~', { operation: 'status', path: '~' }],
    ['paths ../x', { operation: 'add', paths: '../x.txt' }],
    ['paths absolute outside', { operation: 'add', paths: '/etc/hostname' }],
    ['files through a symlink out', { operation: 'diff', files: 'link-out/f.txt' }],
    ['paths symlink out', { operation: 'add', paths: 'link-out' }],
    ['path symlink out', { operation: 'status', path: 'link-out' }],
  ]

  it.each(outside)('%s is PATH_OUTSIDE_WORKSPACE, nothing run', async (_name, input) => {
    const out = tempDir('fsgate-git-outside-')
    put(out, 'f.txt', 'secret\n')
    fs.rmSync(path.join(dir, 'link-out'), { force: true })
    fs.symlinkSync(out, path.join(dir, 'link-out'))
    fs.rmSync(log, { force: true })
    const text = fails(await caller(dir)(input), 'PATH_OUTSIDE_WORKSPACE')
    expect(text).toMatch(/outside the workspace/)
    expect(fs.existsSync(log)).toBe(false)
    fs.rmSync(path.join(dir, 'link-out'))
  })
})

describe('a planted repository config runs no program', () => {
  /** A repository whose config and attributes name programs that touch `m`. */
  function planted(m: string): string {
    const dir = repo({ 'a.txt': 'a\n', 'm.txt': 'base\n' })
    g(dir, 'branch', 'other')
    const cmd = toucher(m)
    for (const [k, v] of [
      ['filter.evil.clean', cmd],
      ['filter.evil.smudge', cmd],
      ['filter.evil.process', `touch '${m}'`],
      ['filter.evil.required', 'true'],
      ['filter.a=b.clean', cmd],
      ['diff.evil.textconv', cmd],
      ['diff.evil.command', `touch '${m}'`],
      ['diff.external', `touch '${m}'`],
      ['merge.evil.driver', `touch '${m}'; false`],
      ['core.fsmonitor', `touch '${m}'`],
      ['core.pager', `touch '${m}'; cat`],
      ['pager.log', `touch '${m}'; cat`],
      ['core.editor', `touch '${m}'`],
      ['log.showSignature', 'true'],
      ['gpg.program', program(m)],
      ['commit.gpgSign', 'true'],
      ['gc.auto', '1'],
    ]) {
      g(dir, 'config', k, v)
    }
    fs.writeFileSync(path.join(dir, '.git', 'info', 'attributes'), '* filter=evil diff=evil merge=evil\n*.eq filter=a=b\n')
    for (const hook of ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'post-checkout', 'reference-transaction', 'pre-auto-gc', 'post-index-change']) {
      fs.writeFileSync(path.join(dir, '.git', 'hooks', hook), `#!/bin/sh\ntouch '${m}'\n`, { mode: 0o755 })
    }
    return dir
  }

  /** The test's own git in a planted repository, with the plants switched off. */
  const gp = (cwd: string, ...args: string[]) =>
    g(cwd, ...['filter.evil.clean=', 'filter.evil.smudge=', 'filter.evil.process=', 'filter.evil.required=false', 'commit.gpgSign=false', 'gc.auto=0'].flatMap((c) => ['-c', c]), ...args)

  let m: string
  let dir: string
  let call: Call
  beforeEach(() => {
    m = marker('ran')
    dir = planted(m)
    call = caller(dir)
  })
  afterEach(() => {
    expect(fs.existsSync(m), 'a planted program ran').toBe(false)
  })

  it('the plant is live: plain git runs it', () => {
    put(dir, 'a.txt', 'changed\n')
    spawnSync(REAL_GIT, ['add', 'a.txt'], { cwd: dir, env: { PATH: ORIGINAL.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } })
    expect(fs.existsSync(m)).toBe(true)
    fs.rmSync(m)
  })

  it('add (clean filter, required, "=" in the driver name)', async () => {
    put(dir, 'a.txt', 'changed\n')
    put(dir, 'x.eq', 'eq\n')
    ok(await call({ operation: 'add', paths: 'a.txt x.eq' }))
    expect(g(dir, 'show', ':a.txt')).toBe('changed\n')
  })

  it('status (fsmonitor, clean filter on a racy file)', async () => {
    put(dir, 'a.txt', 'changed\n')
    expect(ok(await call({ operation: 'status' }))).toContain(' M a.txt')
  })

  it('diff (external diff, textconv, diff driver command)', async () => {
    put(dir, 'a.txt', 'changed\n')
    const out = ok(await call({ operation: 'diff' }))
    expect(out).toContain('-a\n+changed')
    put(dir, 'm.txt', 'staged\n')
    gp(dir, 'add', 'm.txt')
    expect(ok(await call({ operation: 'diff', cached: true }))).toContain('+staged')
  })

  it('commit (hooks, signing, editor, auto gc)', async () => {
    put(dir, 'a.txt', 'changed\n')
    gp(dir, 'add', 'a.txt')
    ok(await call({ operation: 'commit', message: 'c' }))
    expect(g(dir, 'log', '-1', '--format=%s')).toBe('c\n')
  })

  it('log and branch (pager, signature verification of a signed commit)', async () => {
    signHead(dir)
    const live = spawnSync(REAL_GIT, ['-c', 'core.hooksPath=/dev/null', 'log', '-1'], { cwd: dir, env: { PATH: ORIGINAL.PATH, HOME: home } })
    expect(live.status).toBe(0)
    expect(fs.existsSync(m), 'plain git log verifies the signature').toBe(true)
    fs.rmSync(m)
    ok(await call({ operation: 'log' }))
    ok(await call({ operation: 'branch' }))
  })

  it('checkout (smudge filter, post-checkout and reference-transaction hooks)', async () => {
    gp(dir, 'checkout', '-q', 'other')
    put(dir, 'new.txt', 'on other\n')
    gp(dir, 'add', 'new.txt')
    gp(dir, 'commit', '-qm', 'new file on other')
    gp(dir, 'checkout', '-q', 'main')
    ok(await call({ operation: 'checkout', branch: 'other' }))
    expect(fs.readFileSync(path.join(dir, 'new.txt'), 'utf8')).toBe('on other\n')
  })

  it('stash push, list, pop with a merge driver: merged as text instead', async () => {
    put(dir, 'm.txt', 'stashed\n')
    ok(await call({ operation: 'stash' }))
    ok(await call({ operation: 'stash', stash_action: 'list' }))
    put(dir, 'm.txt', 'committed\n')
    gp(dir, 'commit', '-qam', 'moved on')
    fails(await call({ operation: 'stash', stash_action: 'pop' }), 'IO_ERROR')
    expect(fs.readFileSync(path.join(dir, 'm.txt'), 'utf8')).toMatch(/<<<<<<< current\ncommitted\n=======\nstashed\n>>>>>>> other/)
  })
})

describe('repositories that reach outside the workspace', () => {
  it('core.worktree pointing outside is refused', async () => {
    const dir = repo()
    const out = tempDir('fsgate-git-worktree-')
    g(dir, 'config', 'core.worktree', out)
    expect(fails(await caller(dir)({ operation: 'status' }), 'PATH_OUTSIDE_WORKSPACE')).toMatch(/reaches outside the workspace/)
  })

  it('a .git file naming a git folder outside is refused', async () => {
    const real = repo()
    const ws = tempDir('fsgate-git-gitfile-')
    fs.writeFileSync(path.join(ws, '.git'), `gitdir: ${path.join(real, '.git')}\n`)
    const before = state(real)
    expect(fails(await caller(ws)({ operation: 'stash' }), 'PATH_OUTSIDE_WORKSPACE')).toMatch(/reaches outside the workspace/)
    expect(state(real)).toEqual(before)
  })

  it('a bare repository is not used implicitly', async () => {
    const ws = tempDir('fsgate-git-bare-')
    g(ws, 'init', '-q', '--bare', 'bare.git')
    fails(await caller(ws)({ operation: 'log', path: 'bare.git' }), 'NOT_FOUND')
  })
})

describe('the user’s global config is kept', () => {
  it('a filter defined in ~/.gitconfig runs (git-lfs lives there)', async () => {
    const dir = repo()
    fs.writeFileSync(path.join(dir, '.git', 'info', 'attributes'), '*.t filter=trusted\n')
    put(dir, 'x.t', 'x\n')
    fs.rmSync(globalMarker, { force: true })
    ok(await caller(dir)({ operation: 'add', paths: 'x.t' }))
    expect(fs.existsSync(globalMarker)).toBe(true)
  })

  it('a repository that redefines a global driver gets the global one back', async () => {
    const dir = repo()
    const m = marker('local-ran')
    g(dir, 'config', 'filter.trusted.clean', toucher(m))
    fs.writeFileSync(path.join(dir, '.git', 'info', 'attributes'), '*.t filter=trusted\n')
    put(dir, 'y.t', 'y\n')
    fs.rmSync(globalMarker, { force: true })
    ok(await caller(dir)({ operation: 'add', paths: 'y.t' }))
    expect(fs.existsSync(m)).toBe(false)
    expect(fs.existsSync(globalMarker)).toBe(true)
  })
})

describe('runGit', () => {
  function ctx(over: Partial<ToolContext> = {}): ToolContext {
    return {
      workspace: tempDir('fsgate-git-run-'),
      limits: { ...DEFAULT_LIMITS, shellTimeoutSecs: 1 },
      envPassthrough: [],
      processes: new ProcessRegistry(),
      ...over,
    } as ToolContext
  }

  function fakeGit(script: string): void {
    const bin = tempDir('fsgate-git-fake-')
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\n${script}\n`, { mode: 0o755 })
    process.env.PATH = `${bin}:${ORIGINAL.PATH}`
  }

  afterEach(() => {
    process.env.PATH = ORIGINAL.PATH
  })

  it('a git that hangs is killed at the timeout (TIMEOUT), with its children', async () => {
    const pidFile = path.join(tempDir('fsgate-git-pid-'), 'pid')
    fakeGit(`sleep 30 & echo $! > '${pidFile}'; wait`)
    const c = ctx()
    const started = Date.now()
    const err = await runGit(c, c.workspace, ['status']).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'TIMEOUT' })
    expect((err as Error).message).toMatch(/git status did not finish within 1 s/)
    expect(Date.now() - started).toBeLessThan(5000)
    const pid = Number(fs.readFileSync(pidFile, 'utf8'))
    await new Promise((r) => setTimeout(r, 100))
    expect(alive(pid)).toBe(false)
    expect(c.processes.size).toBe(0)
  })

  it('the tool reports the timeout as a TIMEOUT result', async () => {
    const dir = repo()
    fakeGit('sleep 30')
    const r = await caller(dir, { limits: { shellTimeoutSecs: 1 } })({ operation: 'status' })
    expect(fails(r, 'TIMEOUT')).toMatch(/did not finish within 1 s/)
  })

  it('cancelled by the caller: ABORTED', async () => {
    fakeGit('sleep 30')
    const ac = new AbortController()
    const c = ctx({ signal: ac.signal, limits: { ...DEFAULT_LIMITS } })
    setTimeout(() => ac.abort(), 100)
    await expect(runGit(c, c.workspace, ['status'])).rejects.toMatchObject({ code: 'ABORTED' })
    const pre = new AbortController()
    pre.abort()
    await expect(runGit(ctx({ signal: pre.signal }), c.workspace, ['status'])).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('an emergency stop kills it: EMERGENCY_STOP', async () => {
    fakeGit('sleep 30')
    const c = ctx({ limits: { ...DEFAULT_LIMITS } })
    const running = runGit(c, c.workspace, ['status'])
    await new Promise((r) => setTimeout(r, 100))
    expect(c.processes.killAll()).toBe(1)
    await expect(running).rejects.toMatchObject({ code: 'EMERGENCY_STOP' })
  })

  it('git missing from PATH: BACKEND_UNAVAILABLE', async () => {
    process.env.PATH = tempDir('fsgate-git-empty-')
    const c = ctx()
    const err = await runGit(c, c.workspace, ['status']).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'BACKEND_UNAVAILABLE' })
    expect((err as Error).message).toMatch(/git is not installed/)
  })

  it('the environment: cleared, no GIT_* of the host, hardening as GIT_CONFIG_KEY/VALUE pairs', async () => {
    fakeGit('env; echo "ARGS $*"')
    process.env.FSGATE_TEST_SECRET = 'secret'
    process.env.GIT_DIR = '/elsewhere'
    try {
      const c = ctx({ envPassthrough: ['GIT_DIR'] })
      const r = await runGit(c, c.workspace, ['status'], { read: true, config: [['filter.x.clean', '']] })
      expect(r.stdout).not.toContain('FSGATE_TEST_SECRET')
      expect(r.stdout).not.toMatch(/^GIT_DIR=/m)
      expect(r.stdout).toContain('ARGS --no-pager status')
      for (const line of ['GIT_TERMINAL_PROMPT=0', 'GIT_OPTIONAL_LOCKS=0', 'GIT_CONFIG_NOSYSTEM=1', 'GIT_EDITOR=:', 'GIT_PAGER=cat', 'LC_ALL=C']) {
        expect(r.stdout).toContain(line)
      }
      expect(r.stdout).toContain(`GIT_CEILING_DIRECTORIES=${path.dirname(c.workspace)}`)
      expect(r.stdout).toContain(`GIT_CONFIG_COUNT=${HARDENING.length + 1}`)
      expect(r.stdout).toContain(`GIT_CONFIG_KEY_${HARDENING.length}=filter.x.clean`)
    } finally {
      delete process.env.FSGATE_TEST_SECRET
      delete process.env.GIT_DIR
    }
    expect(gitEnv({ workspace: '/w', envPassthrough: [] }).GIT_OPTIONAL_LOCKS).toBeUndefined()
  })
})

describe('neutralise', () => {
  it('overrides every non-global driver key; global values are put back; transports stay closed', () => {
    const entries = parseScoped(
      [
        'global\0filter.lfs.clean\ngit-lfs clean -- %f',
        'global\0filter.lfs.required\ntrue',
        'local\0filter.lfs.clean\nevil',
        'local\0filter.evil.clean\nevil',
        'local\0filter.evil.required',
        'worktree\0diff.x.textconv\nevil',
        'local\0diff.x.command\nevil',
        'local\0merge.m.driver\nevil %A',
        'local\0protocol.ext.allow\nalways',
        'global\0protocol.file.allow\nalways',
        'global\0filter.user.smudge\nmine',
        '',
      ].join('\0'),
    )
    expect(entries[4]).toEqual({ scope: 'local', key: 'filter.evil.required', value: undefined })
    expect(neutralise(entries)).toEqual([
      ['protocol.ext.allow', 'never'],
      ['protocol.file.allow', 'never'],
      ['filter.lfs.clean', 'git-lfs clean -- %f'],
      ['filter.evil.clean', ''],
      ['filter.evil.required', 'false'],
      ['diff.x.textconv', ''],
      ['diff.x.command', ''],
      ['merge.m.driver', MERGE_DRIVER],
    ])
  })
})

describe('parsers', () => {
  it('parseStatus: headers, 1, 2 (rename and copy), u, ?, !', () => {
    const h = 'a'.repeat(40)
    const out = [
      `# branch.oid ${h}`,
      '# branch.head feature',
      '# branch.upstream origin/feature',
      '# branch.ab +3 -2',
      '# stash 2',
      `1 .M N... 100644 100644 100644 ${h} ${h} with space.txt`,
      `2 R. N... 100644 100644 100644 ${h} ${h} R87 new name.txt`,
      'old\tname.txt',
      `2 C. N... 100644 100644 100644 ${h} ${h} C100 copy.txt`,
      'orig.txt',
      `u UU N... 100644 100644 100644 100644 ${h} ${h} ${h} conflict\nd.txt`,
      '? untracked "q".txt',
      '! ignored.log',
      '',
    ].join('\0')
    expect(parseStatus(out)).toEqual({
      branch: 'feature',
      detached: false,
      oid: h,
      upstream: 'origin/feature',
      ahead: 3,
      behind: 2,
      stashes: 2,
      entries: [
        { path: 'with space.txt', index: '.', worktree: 'M', kind: 'changed' },
        { path: 'new name.txt', origPath: 'old\tname.txt', index: 'R', worktree: '.', kind: 'renamed' },
        { path: 'copy.txt', origPath: 'orig.txt', index: 'C', worktree: '.', kind: 'copied' },
        { path: 'conflict\nd.txt', index: 'U', worktree: 'U', kind: 'unmerged' },
        { path: 'untracked "q".txt', index: '?', worktree: '?', kind: 'untracked' },
        { path: 'ignored.log', index: '!', worktree: '!', kind: 'ignored' },
      ],
    })
  })

  it('parseStatus: initial, detached, and an output cut inside a rename', () => {
    expect(parseStatus('# branch.oid (initial)\0# branch.head main\0')).toMatchObject({ oid: null, branch: 'main', ahead: null })
    expect(parseStatus('# branch.oid abc\0# branch.head (detached)\0')).toMatchObject({ branch: null, detached: true })
    const cut = `2 R. N... 100644 100644 100644 a b R100 new.txt\0`
    expect(parseStatus(cut).entries).toEqual([])
  })

  it('parseNumstat: counts, binary, renames with odd names', () => {
    expect(parseNumstat('3\t1\ta b.txt\0-\t-\tbin.dat\0' + '0\t0\t\0old\nname\0new name\0' + '5\t0\t\0')).toEqual([
      { path: 'a b.txt', added: 3, removed: 1, binary: false },
      { path: 'bin.dat', added: null, removed: null, binary: true },
      { path: 'new name', origPath: 'old\nname', added: 0, removed: 0, binary: false },
    ])
  })

  it('parseLog, parseBranches, parseStashes', () => {
    const us = '\x1f'
    expect(parseLog(`h1${us}s1${us}Ann${us}a@x${us}2024-01-02T03:04:05+00:00${us}subj${us}body\n\0h2${us}s2${us}B${us}b@x${us}d${us}s${us}\0`)).toEqual([
      { hash: 'h1', shortHash: 's1', author: 'Ann', email: 'a@x', date: '2024-01-02T03:04:05+00:00', subject: 'subj', body: 'body' },
      { hash: 'h2', shortHash: 's2', author: 'B', email: 'b@x', date: 'd', subject: 's', body: '' },
    ])
    expect(parseBranches(`*${us}refs/heads/main${us}origin/main${us}ahead 2, behind 1${us}h${us}s${us}subject\0\n ${us}refs/heads/x/y${us}${us}${us}h2${us}s2${us}t\0\n`)).toEqual([
      { name: 'main', current: true, upstream: 'origin/main', ahead: 2, behind: 1, upstreamGone: false, hash: 'h', shortHash: 's', subject: 'subject' },
      { name: 'x/y', current: false, upstream: null, ahead: null, behind: null, upstreamGone: false, hash: 'h2', shortHash: 's2', subject: 't' },
    ])
    expect(parseStashes(`stash@{1}${us}h${us}s${us}d${us}On main: m\0`)).toEqual([{ ref: 'stash@{1}', index: 1, hash: 'h', shortHash: 's', date: 'd', message: 'On main: m' }])
  })
})

describe('typed method', () => {
  it('session.git returns the parsed data and throws FsgateError codes', async () => {
    const dir = repo({ 'a.txt': 'one\n' })
    fs.writeFileSync(path.join(dir, 'a.txt'), 'two\n')
    const session = createToolkit({ workspace: dir }).createSession()
    const out = await session.git({ operation: 'status' })
    expect(out.data?.entries).toEqual([expect.objectContaining({ path: 'a.txt', kind: 'changed' })])
    const plain = createToolkit({ workspace: tempDir('fsgate-git-none-') }).createSession()
    await expect(plain.git({ operation: 'status' })).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })
})
