/**
 * The git paths that run code later, checked around a sandboxed command in every
 * writable root (the workspace and allowedPaths): what they hold is noted before it runs
 * and put back after it, and the result names what was put back or moved aside.
 *
 * - A `.git` folder: its `config`, `hooks/`, `info/`, `objects/info/alternates` and
 *   `commondir` are put back entry by entry (a link as a link; an entry too large to
 *   note is moved aside when it changed, never rewritten from a partial note). bwrap
 *   mounts the ones that exist read-only and `.git` onto itself (mode 'mounted'), so
 *   there only what did not exist is noted and removed when a command made it; Landlock
 *   and Seatbelt cannot except a path beneath a writable folder (mode 'checked'), so
 *   there this is the protection. A `.git` that was replaced is moved aside to
 *   `.git.fsgate-replaced-N`, and the real one moved back when it is found (in the
 *   roots, or the command's private TMPDIR).
 * - A `.git` file (a linked worktree, a submodule's checkout): its bytes are put back.
 * - No `.git`: a repository the command made at the root (`git init`) is kept when it is
 *   shaped as git makes one — a config of plain keys only, hooks that are all
 *   `*.sample`, no alternates or commondir — and moved aside otherwise
 *   (`.git.fsgate-quarantined-N`); a `.git` file, or a bare repository's `HEAD` beside
 *   `objects/` and `refs/`, is always moved aside. A folder inside a larger repository
 *   (a package of a monorepo) would otherwise have git pick up a planted one there.
 * - Nested repositories of the index (gitlinks, submodules): git runs their fsmonitor
 *   and hooks during the root's own status and commit. One whose config, hooks or `.git`
 *   pointer the command changed is moved aside (`sub/.git.fsgate-quarantined-N`), as is
 *   one the command made that is not shaped as above; a commit inside one changes none
 *   of these.
 *
 * The command's processes have all ended before the check (its process group and
 * everything that left it are killed), so nothing can change them after it. The checks
 * are a few dozen metadata calls on small folders, bounded below, and run synchronously:
 * a thread-pool round trip for each would cost more than the calls themselves. What is
 * put back is never written through a link the command left on the way.
 */
import { chmodSync, closeSync, constants, fstatSync, lstatSync, openSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, type BigIntStats } from 'node:fs'
import path from 'node:path'

import { gitRunsLater } from './git-runs-later.js'

/** How the backend protects the git paths: 'mounted' read-only (bwrap), or 'checked' after the command. */
export type GuardMode = 'mounted' | 'checked'

/**
 * One path as it was: a file's bytes and mode, a link's target, a folder's entries
 * (`complete` when every entry was noted), an entry kept by its identity only (too large
 * to note, too deep, or read-only mounted), or nothing.
 */
type Noted =
  | { kind: 'file'; bytes: Buffer; mode: number; id: string }
  | { kind: 'link'; target: string }
  | { kind: 'dir'; mode: number; entries: Map<string, Noted>; complete: boolean }
  | { kind: 'opaque'; id: string }
  | { kind: 'mounted' }
  | { kind: 'none' }

/** At most this many entries are noted under one folder (a hooks folder has about 15). */
const MAX_ENTRIES = 256
/** At most this many bytes are noted for one root. */
const MAX_BYTES = 1 << 20
/** At most this many levels are noted beneath each path. */
const MAX_DEPTH = 4
/**
 * File times come from a coarse clock: a change within this many ms of an earlier one
 * may leave ctime as it was, so an identity that recent proves nothing.
 */
const CLOCK_SLACK_MS = 50

/** What was noted of one writable root. */
interface RootNote {
  root: string
  /** What `.git` was: a folder (with its inode), a file (with its bytes), or nothing. */
  git: { kind: 'dir'; ino: bigint } | { kind: 'file'; bytes: Buffer } | { kind: 'none'; bare: boolean }
  paths: Map<string, Noted>
  /** The gitlinks of the root's index and what their repositories held. */
  nested: Map<string, Noted>
}

export interface GitSnapshot {
  mode: GuardMode
  /** When the note was taken, less the file-time granularity (ms since the epoch). */
  since: number
  roots: RootNote[]
}

/** Lists the gitlinks (nested repositories) of the index of the repository at `root` (it runs git). */
export type ListGitlinks = (root: string) => Promise<string[]>

/** The gitlinks of each root's index, by the index's identity. */
const gitlinkCache = new Map<string, { key: string; paths: string[] }>()

/**
 * Files read before, by path: their bytes, reused while their identity (inode, size,
 * mode, times) is unchanged and was already old when they were read. Bounded.
 */
const readCache = new Map<string, { id: string; bytes: Buffer }>()
const READ_CACHE_ENTRIES = 2048

/** Notes what runs code later in each of `roots`. */
export async function noteGitPaths(roots: readonly string[], list: ListGitlinks, mode: GuardMode): Promise<GitSnapshot> {
  const since = Date.now() - CLOCK_SLACK_MS
  const notes: RootNote[] = []
  for (const root of roots) notes.push(await noteRoot(root, list, mode))
  return { mode, since, roots: notes }
}

async function noteRoot(root: string, list: ListGitlinks, mode: GuardMode): Promise<RootNote> {
  const dotGit = path.join(root, '.git')
  const st = stat(dotGit)
  const paths = new Map<string, Noted>()
  const nested = new Map<string, Noted>()
  if (!st) return { root, git: { kind: 'none', bare: bareAt(root) }, paths, nested }
  if (!st.isDirectory()) return { root, git: { kind: 'file', bytes: readOr(dotGit) }, paths, nested }
  const budget = { bytes: MAX_BYTES }
  for (const rel of gitRunsLater(root)) {
    const abs = path.join(root, rel)
    // bwrap mounts what exists read-only: only its absence needs noting. A link is mounted
    // where it leads; the link itself can still be replaced, so it is noted.
    const st = mode === 'mounted' ? stat(abs) : null
    paths.set(rel, st && !st.isSymbolicLink() ? { kind: 'mounted' } : note(abs, budget, 0))
  }
  for (const rel of await gitlinks(root, list)) nested.set(rel, noteNested(path.join(root, rel), budget))
  return { root, git: { kind: 'dir', ino: st.ino }, paths, nested }
}

/** Whether `root` is laid out as a bare repository: `HEAD` beside `objects/` and `refs/`. */
function bareAt(root: string): boolean {
  return stat(path.join(root, 'HEAD'))?.isFile() === true && stat(path.join(root, 'objects'))?.isDirectory() === true && stat(path.join(root, 'refs'))?.isDirectory() === true
}

async function gitlinks(root: string, list: ListGitlinks): Promise<string[]> {
  const index = stat(path.join(root, '.git', 'index'))
  if (!index) return []
  const key = `${index.ino}:${index.size}:${index.mtimeNs}:${index.ctimeNs}`
  let cached = gitlinkCache.get(root)
  if (cached?.key !== key) {
    cached = { key, paths: await list(root).catch(() => []) }
    gitlinkCache.set(root, cached)
  }
  return cached.paths
}

/** What a nested repository holds that runs code: its `.git` pointer, config, hooks, commondir. */
function noteNested(checkout: string, budget: { bytes: number }): Noted {
  const dotGit = path.join(checkout, '.git')
  const entries = new Map<string, Noted>()
  // A folder is noted by what runs code in it, below; its own times change with every commit.
  entries.set('.git', stat(dotGit)?.isDirectory() ? { kind: 'dir', mode: 0, entries: new Map(), complete: false } : note(dotGit, budget, 0))
  const gitDir = nestedGitDir(dotGit)
  if (gitDir) for (const name of ['config', 'hooks', 'commondir']) entries.set(name, note(path.join(gitDir, name), budget, 0))
  return { kind: 'dir', mode: 0, entries, complete: true }
}

/** The git folder a checkout's `.git` (a folder, or a file `gitdir: …`) names, or null. */
function nestedGitDir(dotGit: string): string | null {
  const st = stat(dotGit)
  if (!st) return null
  if (st.isDirectory()) return dotGit
  const pointer = readOr(dotGit).toString('utf8').match(/^gitdir: (.*)$/m)?.[1]
  return pointer ? path.resolve(path.dirname(dotGit), pointer.trim()) : null
}

export interface GuardReport {
  /** Paths put back, as `shown` names them. */
  restored: string[]
  /** Repositories a command planted or changed, moved aside. */
  quarantined: string[]
  /** A `.git` the command moved away that was not found again. */
  missing: string[]
  /** Paths that could be neither put back nor moved aside, with why: the user must look. */
  failed: string[]
}

/** A report of nothing. */
export function emptyReport(): GuardReport {
  return { restored: [], quarantined: [], missing: [], failed: [] }
}

export interface RestoreOptions {
  /** Names a path for the result. */
  shown: (abs: string) => string
  /** Folders beyond the roots where a moved `.git` may be (the command's private TMPDIR). */
  lookIn?: readonly string[]
}

/** Puts back and moves aside whatever changed since `snap`. */
export async function restoreGitPaths(snap: GitSnapshot, list: ListGitlinks, o: RestoreOptions): Promise<GuardReport> {
  const report = emptyReport()
  const searched = [...snap.roots.map((r) => r.root), ...(o.lookIn ?? [])]
  for (const r of snap.roots) await restoreRoot(r, snap.since, list, o.shown, searched, report)
  return report
}

/**
 * The guard of the sandboxed commands running in a root now. Commands that overlap in a
 * root share one note, taken when the first of them began, and the root is checked when
 * the last of them ends: a command that began while another had planted something would
 * otherwise note the planted state as the one to put back, and a check made while another
 * command still runs could be led through a link that command swaps in meanwhile.
 */
interface Watch {
  users: number
  mode: GuardMode
  since: number
  note: Promise<RootNote>
  /** Where a moved `.git` may be: the roots and private TMPDIRs of every command that took part. */
  searched: Set<string>
  /** The clean-ups of commands that ended while others ran: they wait for this root's check. */
  waiting: Set<Waiter>
  /** While the last command's check runs: a command starting then waits for it. */
  checking: Promise<void> | null
}

interface Waiter {
  /** Roots whose check it still waits for. */
  roots: number
  done: () => Promise<void>
}

const watches = new Map<string, Watch>()

/** What `enterGitGuard` gives a command, for `leaveGitGuard`. */
export interface GitGuard {
  roots: readonly string[]
}

/**
 * Notes the roots for a sandboxed command about to start, or joins the note of the
 * commands already running in them. With bwrap ('mounted') only what did not exist is
 * noted; a 'checked' command joining those notes the rest now, which no command could
 * change while it was mounted read-only.
 */
export async function enterGitGuard(roots: readonly string[], list: ListGitlinks, mode: GuardMode): Promise<GitGuard> {
  const joined: Watch[] = []
  for (const root of roots) {
    let w = watches.get(root)
    while (w?.checking) {
      await w.checking
      w = watches.get(root)
    }
    if (!w) {
      w = { users: 0, mode, since: Date.now() - CLOCK_SLACK_MS, note: noteRoot(root, list, mode), searched: new Set(), waiting: new Set(), checking: null }
      watches.set(root, w)
    } else if (w.mode === 'mounted' && mode === 'checked') {
      w.mode = 'checked'
      w.note = w.note.then(unmounted)
    }
    for (const r of roots) w.searched.add(r)
    w.users++
    joined.push(w)
  }
  await Promise.all(joined.map((w) => w.note))
  return { roots: [...roots] }
}

/** A note taken in 'mounted' mode, with what was mounted noted now. */
function unmounted(n: RootNote): RootNote {
  const budget = { bytes: MAX_BYTES }
  for (const [rel, was] of n.paths) if (was.kind === 'mounted') n.paths.set(rel, note(path.join(n.root, rel), budget, 0))
  return n
}

export interface LeaveOptions extends RestoreOptions {
  /** Removes what the command's launch made (its private TMPDIR): run once its roots are checked. */
  done: () => Promise<void>
}

/**
 * Ends a command's part in the guard: the last command of each root checks it (puts back
 * what changed since the first began). `waiting` says that others still run in one of its
 * roots, which is then checked when they end.
 */
export async function leaveGitGuard(guard: GitGuard, list: ListGitlinks, o: LeaveOptions): Promise<GuardReport & { waiting: boolean }> {
  const report = emptyReport()
  const later: Watch[] = []
  for (const root of guard.roots) {
    const w = watches.get(root)
    if (!w) continue
    for (const p of o.lookIn ?? []) w.searched.add(p)
    if (--w.users > 0) {
      later.push(w)
      continue
    }
    let checked!: () => void
    w.checking = new Promise<void>((resolve) => {
      checked = resolve
    })
    try {
      await restoreRoot(await w.note, w.since, list, o.shown, [...w.searched], report)
    } catch (err) {
      report.failed.push(`${o.shown(root)} (${(err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err))})`)
    } finally {
      watches.delete(root)
      checked()
    }
    for (const waiter of w.waiting) if (--waiter.roots === 0) await waiter.done().catch(() => {})
  }
  if (later.length === 0) await o.done().catch(() => {})
  else {
    const waiter: Waiter = { roots: later.length, done: o.done }
    for (const w of later) w.waiting.add(waiter)
  }
  return { ...report, waiting: later.length > 0 }
}

async function restoreRoot(r: RootNote, since: number, list: ListGitlinks, shown: (abs: string) => string, searched: readonly string[], report: GuardReport): Promise<void> {
  const dotGit = path.join(r.root, '.git')
  // Each step on its own: one that fails (a folder the command made unreadable, mode 000)
  // is reported and moved aside, and never stops the others.
  const step = (abs: string, fn: () => void) => {
    try {
      fn()
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? 'error'
      try {
        // What could not be put back is not left where git reads it.
        if (stat(abs)) report.quarantined.push(shown(aside(abs, 'unrestored')))
        report.failed.push(`${shown(abs)} (${why})`)
      } catch {
        report.failed.push(`${shown(abs)} (${why}; not moved aside either)`)
      }
    }
  }
  let nestedToo = true
  step(dotGit, () => {
    const now = stat(dotGit)
    if (r.git.kind === 'none') {
      if (!r.git.bare && bareAt(r.root)) report.quarantined.push(shown(aside(path.join(r.root, 'HEAD'), 'quarantined')))
      if (!now) nestedToo = false
      else if (!(now.isDirectory() && plainRepository(dotGit))) {
        report.quarantined.push(shown(aside(dotGit, 'quarantined')))
        nestedToo = false
      }
      // A repository made as `git init` makes one stays; the nested ones it names are checked below.
    } else if (r.git.kind === 'file') {
      nestedToo = false
      const bytes = now?.isFile() ? readOr(dotGit, null) : null
      if (bytes === null || !bytes.equals(r.git.bytes)) {
        if (now) removeTree(dotGit)
        writeFileSync(dotGit, r.git.bytes)
        report.restored.push(shown(dotGit))
      }
    } else if (!now?.isDirectory() || now.ino !== r.git.ino) {
      if (now) aside(dotGit, 'replaced')
      // The usual way to replace it is to move it: look for it near by, and move it back.
      const moved = findByIno(searched, r.git.ino)
      if (!moved) {
        report.missing.push(shown(dotGit))
        nestedToo = false
        return
      }
      renameSync(moved, dotGit)
      report.restored.push(shown(dotGit))
    }
  })
  if (!nestedToo) return
  if (r.git.kind === 'dir') {
    for (const [rel, was] of r.paths) {
      const abs = path.join(r.root, rel)
      step(abs, () => {
        let changed: boolean
        try {
          changed = put(r.root, abs, was, since)
        } catch {
          // Once more from nothing: what stood in the way is moved aside first.
          if (stat(abs)) aside(abs, 'unrestored')
          put(r.root, abs, was, since)
          changed = true
        }
        if (changed) report.restored.push(shown(abs))
      })
    }
  }
  // Nested repositories: those noted before and changed, and those made gitlinks since. A
  // repository that becomes a gitlink is judged by what it holds, not by when it was made:
  // one planted by an earlier command, and named in the index by this one, is as planted.
  const after = await gitlinks(r.root, list)
  for (const rel of new Set([...r.nested.keys(), ...after])) {
    const checkout = path.join(r.root, rel)
    const dotNested = path.join(checkout, '.git')
    step(dotNested, () => {
      // Through a link the command left, `sub/.git` is another folder's: not the root's to move.
      if (!realFolders(r.root, checkout)) return
      if (!stat(dotNested)) return
      const was = r.nested.get(rel)
      const changed = was ? !same(was, noteNested(checkout, { bytes: MAX_BYTES }), since) : !plainRepository(nestedGitDir(dotNested) ?? dotNested)
      if (changed) report.quarantined.push(shown(aside(dotNested, 'quarantined')))
    })
  }
}

/**
 * The config keys `git init`, `git clone`, `git remote add` and `git branch` write, whose
 * values run nothing; lower case, `*` for a subsection name.
 */
const PLAIN_KEYS = new Set([
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.symlinks',
  'core.autocrlf',
  'core.eol',
  'extensions.objectformat',
  'init.defaultbranch',
  'remote.*.url',
  'remote.*.fetch',
  'branch.*.remote',
  'branch.*.merge',
  'user.name',
  'user.email',
])

/**
 * Whether the git folder `gitDir` is shaped as git makes one: a config of plain keys only
 * (no includes, no programs, no hooksPath or fsmonitor), hooks that are all `*.sample`,
 * and no alternates, commondir or per-worktree config.
 */
function plainRepository(gitDir: string): boolean {
  for (const name of ['commondir', 'config.worktree', 'objects/info/alternates', 'gitdir']) if (stat(path.join(gitDir, name))) return false
  const hooks = stat(path.join(gitDir, 'hooks'))
  if (hooks) {
    if (!hooks.isDirectory()) return false
    const names = readdirOr(path.join(gitDir, 'hooks'))
    if (names.length > MAX_ENTRIES || names.some((n) => !n.endsWith('.sample') || !stat(path.join(gitDir, 'hooks', n))?.isFile())) return false
  }
  const config = stat(path.join(gitDir, 'config'))
  if (!config) return true
  if (!config.isFile() || config.size > 64 * 1024) return false
  return plainConfig(readOr(path.join(gitDir, 'config')).toString('utf8'))
}

/**
 * Whether a git config file sets only PLAIN_KEYS. Anything this reading is not sure of
 * (a continuation line, a section it cannot parse) counts as not plain.
 */
export function plainConfig(text: string): boolean {
  let section: string | null = null
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    if (line.endsWith('\\')) return false
    const head = line.match(/^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\\n]|\\.)*")?\s*\]\s*(.*)$/)
    if (head) {
      section = head[1].toLowerCase()
      // `[core] fsmonitor = …` on the section's own line.
      if (head[2] !== '' && !head[2].startsWith('#') && !head[2].startsWith(';')) return false
      const sub = line.includes('"')
      if (section.includes('.') || (sub && !['remote', 'branch'].includes(section))) return false
      if (sub) section = `${section}.*`
      continue
    }
    const key = line.match(/^([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/)?.[1]
    if (section === null || key === undefined || !PLAIN_KEYS.has(`${section}.${key.toLowerCase()}`)) return false
  }
  return true
}

function note(abs: string, budget: { bytes: number }, depth: number): Noted {
  const st = stat(abs)
  if (!st) return { kind: 'none' }
  if (st.isSymbolicLink()) return { kind: 'link', target: linkOr(abs) }
  const id = identity(st)
  if (st.isDirectory()) {
    if (depth >= MAX_DEPTH) return { kind: 'opaque', id }
    const names = readdirOr(abs).sort()
    const entries = new Map<string, Noted>()
    for (const name of names.slice(0, MAX_ENTRIES)) entries.set(name, note(path.join(abs, name), budget, depth + 1))
    return { kind: 'dir', mode: Number(st.mode) & 0o7777, entries, complete: names.length <= MAX_ENTRIES }
  }
  if (!st.isFile() || st.size > BigInt(budget.bytes)) return { kind: 'opaque', id }
  const cached = readCache.get(abs)
  let bytes: Buffer | null
  if (cached?.id === id) bytes = cached.bytes
  else {
    bytes = readOr(abs, null)
    if (bytes !== null && old(st, Date.now())) remember(abs, id, bytes)
  }
  if (bytes === null) return { kind: 'opaque', id }
  budget.bytes -= bytes.length
  return { kind: 'file', bytes, mode: Number(st.mode) & 0o7777, id }
}

function remember(abs: string, id: string, bytes: Buffer): void {
  readCache.delete(abs)
  readCache.set(abs, { id, bytes })
  if (readCache.size > READ_CACHE_ENTRIES) readCache.delete(readCache.keys().next().value as string)
}

/** Whether a file's last change is old enough that any later one shows in its ctime. */
function old(st: BigIntStats, at: number): boolean {
  return Number(st.ctimeNs / 1_000_000n) < at - CLOCK_SLACK_MS
}

/** Inode, size, mode and times: what any change of a file changes (ctime cannot be set back). */
function identity(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mode}:${st.mtimeNs}:${st.ctimeNs}`
}

/** Whether `b`, noted now, is what `a` noted; `since` is when `a` was noted. */
function same(a: Noted, b: Noted, since: number): boolean {
  if (a.kind !== b.kind) return false
  switch (a.kind) {
    case 'none':
    case 'mounted':
      return true
    case 'file':
      // An identity noted long enough after the file's last change proves it unchanged.
      return b.kind === 'file' && a.mode === b.mode && (a.id === b.id ? ctimeOf(a.id) < since || a.bytes.equals(b.bytes) : a.bytes.equals(b.bytes))
    case 'link':
      return b.kind === 'link' && a.target === b.target
    case 'opaque':
      return b.kind === 'opaque' && a.id === b.id
    case 'dir': {
      if (b.kind !== 'dir' || a.mode !== b.mode || a.entries.size !== b.entries.size) return false
      for (const [name, e] of a.entries) {
        const other = b.entries.get(name)
        if (!other || !same(e, other, since)) return false
      }
      return true
    }
  }
}

function ctimeOf(id: string): number {
  return Number(BigInt(id.slice(id.lastIndexOf(':') + 1)) / 1_000_000n)
}

/**
 * Makes `abs` what `was` noted, touching only what differs; true when anything did. An
 * entry that was not noted whole (opaque) and changed is moved aside, never rewritten.
 * Every folder on the way from `root` is made a real folder first: a link the command
 * left there would lead the write elsewhere.
 */
function put(root: string, abs: string, was: Noted, since: number): boolean {
  if (was.kind === 'mounted') return false
  // What was nothing, or not noted whole, is not looked for through a link on the way:
  // what lies there is not the root's.
  if ((was.kind === 'none' || was.kind === 'opaque') && !realFolders(root, path.dirname(abs))) return false
  let changed = realFolders(root, path.dirname(abs), true)
  switch (was.kind) {
    case 'none':
      if (!stat(abs)) return changed
      removeTree(abs)
      return true
    case 'opaque': {
      const st = stat(abs)
      if (st && identity(st) === was.id) return changed
      if (st) aside(abs, 'changed')
      return true
    }
    case 'link': {
      const st = stat(abs)
      if (st?.isSymbolicLink() && linkOr(abs) === was.target) return changed
      removeTree(abs)
      symlinkSync(was.target, abs)
      return true
    }
    case 'file': {
      if (same(was, note(abs, { bytes: MAX_BYTES }, MAX_DEPTH), since)) return changed
      removeTree(abs)
      writeFileSync(abs, was.bytes, { mode: was.mode })
      chmodSync(abs, was.mode)
      return true
    }
    case 'dir': {
      const st = stat(abs)
      if (!st?.isDirectory() || (Number(st.mode) & 0o7777) !== was.mode) {
        if (st && !st.isDirectory()) removeTree(abs)
        mkdirSync(abs, { recursive: true })
        chmodSync(abs, was.mode)
        changed = true
      }
      // Entries the command added: removed, when the note listed every entry.
      if (was.complete) {
        for (const name of readdirOr(abs)) {
          if (!was.entries.has(name)) {
            removeTree(path.join(abs, name))
            changed = true
          }
        }
      }
      for (const [name, e] of was.entries) if (put(root, path.join(abs, name), e, since)) changed = true
      return changed
    }
  }
}

/**
 * Whether every step from `root` down to `folder` is a real folder. With `mend`, a step
 * that is a link or a file is moved aside and a folder made in its place (true: it
 * mended something); without, false at the first such step.
 */
function realFolders(root: string, folder: string, mend = false): boolean {
  const rel = path.relative(root, folder)
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return !mend
  let at = root
  let mended = false
  for (const name of rel.split(path.sep)) {
    at = path.join(at, name)
    const st = stat(at)
    if (st?.isDirectory()) continue
    if (!mend) return false
    if (st) aside(at, 'replaced')
    mkdirSync(at)
    mended = true
  }
  return mend ? mended : true
}

/**
 * Removes `p` and all it holds, never through a link. A folder the command made
 * unreadable (mode 000) is opened up first: it is the user's own, made by their command.
 */
function removeTree(p: string): void {
  try {
    rmSync(p, { recursive: true, force: true })
    return
  } catch {
    // Opened up below, then tried once more.
  }
  const budget = { left: 10_000 }
  const open = (at: string) => {
    const st = stat(at)
    if (!st?.isDirectory() || --budget.left < 0) return
    chmodSync(at, 0o700)
    for (const name of readdirOr(at)) open(path.join(at, name))
  }
  open(p)
  rmSync(p, { recursive: true, force: true })
}

/** Moves `p` aside to `p.fsgate-<why>-N`; returns the new path. */
function aside(p: string, why: string): string {
  for (let n = 1; ; n++) {
    const candidate = `${p}.fsgate-${why}-${n}`
    if (!stat(candidate)) {
      renameSync(p, candidate)
      return candidate
    }
  }
}

/** A folder of inode `ino` within three levels of one of `folders` (2,000 entries looked at, at most). */
function findByIno(folders: readonly string[], ino: bigint): string | null {
  let budget = 2000
  let level = [...folders]
  for (let depth = 0; depth < 3 && level.length > 0; depth++) {
    const next: string[] = []
    for (const dir of level) {
      for (const name of readdirOr(dir)) {
        if (--budget < 0) return null
        const p = path.join(dir, name)
        const st = stat(p)
        if (!st?.isDirectory()) continue
        if (st.ino === ino) return p
        next.push(p)
      }
    }
    level = next
  }
  return null
}

function stat(p: string): BigIntStats | null {
  // Most paths looked at do not exist: an ENOENT thrown for each costs more than the look.
  try {
    return lstatSync(p, { bigint: true, throwIfNoEntry: false }) ?? null
  } catch {
    return null
  }
}

/**
 * A regular file's bytes, or `fallback`. Opened without following a link and without
 * blocking, then checked to be a regular file: a FIFO another command put there does not
 * hang the host.
 */
function readOr<T extends Buffer | null = Buffer>(p: string, fallback: T = Buffer.alloc(0) as T): Buffer | T {
  let fd: number
  try {
    fd = openSync(p, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return fallback
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : fallback
  } catch {
    return fallback
  } finally {
    closeSync(fd)
  }
}

function readdirOr(p: string): string[] {
  try {
    return readdirSync(p)
  } catch {
    return []
  }
}

function linkOr(p: string): string {
  try {
    return readlinkSync(p)
  } catch {
    return ''
  }
}
