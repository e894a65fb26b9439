/**
 * The paths of a writable root that make the user's own git run a program later: what
 * the sandbox mounts read-only (bwrap) or checks and puts back around each command
 * (./git-guard.ts). Beyond `.git/config`, hooks, info, alternates and commondir:
 * - `.git/config.worktree`, which git reads once the repository uses worktree config
 *   (`git sparse-checkout` turns it on);
 * - for each linked worktree in `.git/worktrees/<id>/`, its `commondir` (where that
 *   worktree's git finds its config and hooks) and `config.worktree`: the worktree itself
 *   may lie outside the workspace, where the user runs git in it;
 * - for each submodule's git folder in `.git/modules/` (nested ones too), the same paths as
 *   the root's: `git submodule update` and the root's `git status` run its config and hooks;
 * - a file that any of these configs includes (`[include] path = ../.gitconfig`, a way to
 *   share a repository's config) when it lies in the root: it is that config.
 * Every list is bounded; what lies past a bound is not protected (a repository with more
 * than 64 worktrees or submodules).
 */
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'

/** The paths of a git folder that run code later (relative to it). */
const IN_GIT_DIR = ['config', 'config.worktree', 'hooks', 'info', 'objects/info/alternates', 'commondir'] as const

/** The root's own: never writable by a command. */
export const GIT_RUNS_LATER: readonly string[] = IN_GIT_DIR.map((p) => `.git/${p}`)

/** At most this many linked worktrees, and this many submodule git folders, are protected. */
const MAX_GIT_DIRS = 64
/** Submodule names may hold slashes (`libs/foo`): this many levels are looked through. */
const MAX_MODULE_DEPTH = 4
/** Included configs are followed this many levels deep. */
const MAX_INCLUDE_DEPTH = 3
/** A config larger than this is not read for includes (git writes small ones). */
const MAX_CONFIG_BYTES = 256 * 1024

/**
 * The paths of `root` that run code later, relative to it, as they are on the disk now:
 * GIT_RUNS_LATER, the worktrees' and submodules' own, and included configs inside the root.
 * Empty beyond GIT_RUNS_LATER when `.git` is not a folder.
 */
export function gitRunsLater(root: string): string[] {
  const dotGit = path.join(root, '.git')
  if (kindOf(dotGit) !== 'dir') return [...GIT_RUNS_LATER]
  const out = new Set<string>(GIT_RUNS_LATER)
  const configs: string[] = [path.join(dotGit, 'config'), path.join(dotGit, 'config.worktree')]
  for (const id of readdirOrNone(path.join(dotGit, 'worktrees')).slice(0, MAX_GIT_DIRS)) {
    const dir = path.join(dotGit, 'worktrees', id)
    if (kindOf(dir) !== 'dir') continue
    for (const name of ['commondir', 'config.worktree']) out.add(path.relative(root, path.join(dir, name)))
    configs.push(path.join(dir, 'config.worktree'))
  }
  for (const dir of moduleGitDirs(path.join(dotGit, 'modules'))) {
    for (const name of IN_GIT_DIR) out.add(path.relative(root, path.join(dir, name)))
    configs.push(path.join(dir, 'config'), path.join(dir, 'config.worktree'))
  }
  for (const file of included(configs, root)) out.add(path.relative(root, file))
  return [...out]
}

/** The git folders of submodules beneath `modules` (a submodule's own `modules/` too), bounded. */
function moduleGitDirs(modules: string): string[] {
  const out: string[] = []
  const walk = (dir: string, depth: number, nesting: number) => {
    for (const name of readdirOrNone(dir)) {
      if (out.length >= MAX_GIT_DIRS) return
      const p = path.join(dir, name)
      if (kindOf(p) !== 'dir') continue
      if (kindOf(path.join(p, 'HEAD')) === 'file' || kindOf(path.join(p, 'config')) === 'file') {
        out.push(p)
        if (nesting < MAX_MODULE_DEPTH) walk(path.join(p, 'modules'), 0, nesting + 1)
      } else if (depth < MAX_MODULE_DEPTH) walk(p, depth + 1, nesting)
    }
  }
  walk(modules, 0, 0)
  return out
}

/** The files `configs` include (and those include in turn) that lie inside `root`, real. */
function included(configs: readonly string[], root: string): string[] {
  let realRoot: string | undefined
  const found = new Set<string>()
  let level = [...configs]
  for (let depth = 0; depth < MAX_INCLUDE_DEPTH && level.length > 0; depth++) {
    const next: string[] = []
    for (const config of level) {
      for (const target of includePaths(config)) {
        if (found.size >= MAX_GIT_DIRS) return [...found]
        // `~/…` is in the home, which a command cannot write unless it is a root itself.
        if (target.startsWith('~')) continue
        const abs = path.resolve(path.dirname(config), target)
        realRoot ??= realOrNull(root) ?? root
        const inside = isUnder(root, abs) || isUnder(realRoot, realOrNull(abs) ?? abs)
        if (!inside || found.has(abs)) continue
        found.add(abs)
        next.push(abs)
      }
    }
    level = next
  }
  return [...found].filter((p) => isUnder(root, p))
}

/** The `path` values of the `[include]` and `[includeIf …]` sections of a config file. */
export function includePaths(file: string): string[] {
  let text: string
  try {
    if (lstatSync(file).size > MAX_CONFIG_BYTES) return []
    text = readFileSync(file, 'utf8')
  } catch {
    return []
  }
  const out: string[] = []
  let section = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    const head = /^\[\s*([A-Za-z0-9.-]+)/.exec(line)
    if (head) {
      section = head[1].toLowerCase()
      continue
    }
    if (section !== 'include' && section !== 'includeif') continue
    const m = /^path\s*=\s*(.*)$/i.exec(line)
    if (!m) continue
    let value = m[1].trim()
    if (value.startsWith('"')) value = value.slice(1, value.indexOf('"', 1) > 0 ? value.indexOf('"', 1) : undefined)
    else value = value.replace(/\s[#;].*$/, '').trim()
    if (value !== '') out.push(value)
  }
  return out
}

function isUnder(folder: string, p: string): boolean {
  const rel = path.relative(folder, p)
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)
}

function kindOf(p: string): 'dir' | 'file' | 'link' | null {
  try {
    const st = lstatSync(p, { throwIfNoEntry: false })
    return st === undefined ? null : st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file'
  } catch {
    return null
  }
}

function readdirOrNone(folder: string): string[] {
  try {
    return readdirSync(folder).sort()
  } catch {
    return []
  }
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p)
  } catch {
    return null
  }
}
