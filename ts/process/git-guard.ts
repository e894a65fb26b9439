/**
 * The git paths that run code later (`.git/config`, `.git/hooks/`, `.git/info/`,
 * `.git/objects/info/alternates`), checked around a command: what they hold is noted
 * before it runs and put back after it, byte for byte, and the result names what was
 * put back. bwrap mounts them read-only, so there this only undoes what a command made
 * where nothing was (a new `alternates`, or a hook folder that was missing); Landlock
 * and Seatbelt cannot exclude a path beneath a writable folder, so there it is the
 * protection. A `.git` that was replaced (moved away, or swapped for a file that points
 * elsewhere) is moved aside to `.git.fsgate-replaced-N`, and the real one is moved back
 * when it is found at the top of the workspace, so the repository never takes a
 * command's config.
 *
 * The command's processes have all ended before the check (its process group and
 * everything that left it are killed), so nothing can change them after it.
 */
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'

import { GIT_RUNS_LATER } from './sandbox.js'

/** One path as it was: a file's bytes and mode, a folder's entries, or nothing. */
type Noted = { kind: 'file'; bytes: Buffer; mode: number } | { kind: 'dir'; mode: number; entries: Map<string, Noted> } | { kind: 'none' }

/** At most this many entries are noted under one path (a hooks folder has about 15). */
const MAX_ENTRIES = 256
/** At most this many bytes are noted in all. */
const MAX_BYTES = 4 << 20

export interface GitSnapshot {
  workspace: string
  /** When the note was taken, less the file-time granularity (ms since the epoch). */
  since: number
  /** The `.git` folder's inode, or null when the workspace had none (or a `.git` file). */
  gitIno: number | null
  paths: Map<string, Noted>
}

/** Notes the paths of `workspace` that run code later; null when it has no `.git` folder. */
export async function noteGitPaths(workspace: string): Promise<GitSnapshot | null> {
  const git = await lstat(path.join(workspace, '.git')).catch(() => null)
  if (!git?.isDirectory()) return null
  const budget = { bytes: MAX_BYTES }
  const paths = new Map<string, Noted>()
  for (const rel of GIT_RUNS_LATER) paths.set(rel, await note(path.join(workspace, rel), budget, 0))
  return { workspace, since: Date.now() - CLOCK_SLACK_MS, gitIno: git.ino, paths }
}

/** File times come from a coarse clock, a few ms behind the one Date.now() reads. */
const CLOCK_SLACK_MS = 20

/** The gitlinks (nested repositories) of each workspace's index, by the index's identity. */
const gitlinkCache = new Map<string, { key: string; paths: string[] }>()

/**
 * Nested repositories of the index (gitlinks) whose git folder, config or hooks changed
 * since `snap` are moved aside (`sub/.git` → `sub/.git.fsgate-quarantined-N`): git runs
 * the fsmonitor and hooks of a gitlink's repository during the workspace's own status
 * and commit, so one a command planted would run later, outside the sandbox. `list`
 * gives the index's gitlinks (it runs git); it runs only when the index changed.
 * Returns the workspace-relative paths moved aside.
 */
export async function quarantineNestedRepos(snap: GitSnapshot, list: () => Promise<string[]>): Promise<string[]> {
  const index = await lstat(path.join(snap.workspace, '.git', 'index')).catch(() => null)
  if (!index) return []
  const key = `${index.ino}:${index.size}:${index.mtimeMs}`
  let cached = gitlinkCache.get(snap.workspace)
  if (cached?.key !== key) {
    cached = { key, paths: await list().catch(() => []) }
    gitlinkCache.set(snap.workspace, cached)
  }
  const moved: string[] = []
  for (const rel of cached.paths) {
    const dotGit = path.join(snap.workspace, rel, '.git')
    const st = await lstat(dotGit).catch(() => null)
    if (!st) continue
    let gitDir = dotGit
    if (!st.isDirectory()) {
      const pointer = (await readFile(dotGit, 'utf8').catch(() => '')).match(/^gitdir: (.*)$/m)?.[1]
      gitDir = pointer ? path.resolve(path.dirname(dotGit), pointer.trim()) : dotGit
    }
    const touched = await Promise.all([dotGit, gitDir, ...['config', 'hooks', 'commondir'].map((n) => path.join(gitDir, n))].map((p) => lstat(p).then((x) => x.ctimeMs >= snap.since, () => false)))
    if (!touched.some(Boolean)) continue
    let n = 1
    while (await lstat(`${dotGit}.fsgate-quarantined-${n}`).catch(() => null)) n++
    await rename(dotGit, `${dotGit}.fsgate-quarantined-${n}`)
    moved.push(path.join(rel, '.git'))
  }
  return moved
}

/**
 * Puts back whatever changed since `snap`; returns the workspace-relative paths it put
 * back (empty when nothing changed).
 */
export async function restoreGitPaths(snap: GitSnapshot): Promise<string[]> {
  const restored: string[] = []
  const git = path.join(snap.workspace, '.git')
  const now = await lstat(git).catch(() => null)
  if (!now?.isDirectory() || now.ino !== snap.gitIno) {
    if (now) await rename(git, await freeName(git))
    restored.push('.git')
    // The usual way to replace it is to move it: look for it beside, and move it back.
    const moved = await findByIno(snap.workspace, snap.gitIno)
    if (!moved) return restored
    await rename(moved, git)
  }
  const budget = { bytes: MAX_BYTES }
  for (const [rel, was] of snap.paths) {
    const abs = path.join(snap.workspace, rel)
    if (!same(was, await note(abs, budget, 0))) {
      await put(abs, was)
      if (!restored.includes('.git')) restored.push(rel)
    }
  }
  return restored
}

async function note(abs: string, budget: { bytes: number }, depth: number): Promise<Noted> {
  const st = await lstat(abs).catch(() => null)
  if (!st) return { kind: 'none' }
  if (st.isDirectory() && depth < 4) {
    const entries = new Map<string, Noted>()
    const names = (await readdir(abs).catch(() => [])).sort().slice(0, MAX_ENTRIES)
    for (const name of names) entries.set(name, await note(path.join(abs, name), budget, depth + 1))
    return { kind: 'dir', mode: st.mode & 0o7777, entries }
  }
  // A link, a device or anything but a plain file is noted as an empty file: putting it
  // back as such is safe, and git ignores an empty config, alternates or hook.
  const bytes = st.isFile() && st.size <= budget.bytes ? await readFile(abs).catch(() => Buffer.alloc(0)) : Buffer.alloc(0)
  budget.bytes -= bytes.length
  return { kind: 'file', bytes, mode: st.isFile() ? st.mode & 0o7777 : 0o644 }
}

function same(a: Noted, b: Noted): boolean {
  if (a.kind !== b.kind) return false
  if (a.kind === 'none' || b.kind === 'none') return true
  if (a.kind === 'file' && b.kind === 'file') return a.mode === b.mode && a.bytes.equals(b.bytes)
  if (a.kind === 'dir' && b.kind === 'dir') {
    if (a.mode !== b.mode || a.entries.size !== b.entries.size) return false
    for (const [name, e] of a.entries) {
      const other = b.entries.get(name)
      if (!other || !same(e, other)) return false
    }
    return true
  }
  return false
}

async function put(abs: string, was: Noted): Promise<void> {
  await rm(abs, { recursive: true, force: true })
  if (was.kind === 'none') return
  await mkdir(path.dirname(abs), { recursive: true })
  if (was.kind === 'file') {
    await writeFile(abs, was.bytes, { mode: was.mode })
    return
  }
  await mkdir(abs, { mode: was.mode })
  for (const [name, e] of was.entries) await put(path.join(abs, name), e)
}

/** A folder of inode `ino` within three levels of `folder` (2,000 entries looked at, at most). */
async function findByIno(folder: string, ino: number | null): Promise<string | null> {
  let budget = 2000
  let level = [folder]
  for (let depth = 0; depth < 3 && level.length > 0; depth++) {
    const next: string[] = []
    for (const dir of level) {
      for (const name of await readdir(dir).catch(() => [])) {
        if (--budget < 0) return null
        const p = path.join(dir, name)
        const st = await lstat(p).catch(() => null)
        if (!st?.isDirectory()) continue
        if (st.ino === ino) return p
        next.push(p)
      }
    }
    level = next
  }
  return null
}

async function freeName(git: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = `${git}.fsgate-replaced-${n}`
    if (!(await lstat(candidate).catch(() => null))) return candidate
  }
}
