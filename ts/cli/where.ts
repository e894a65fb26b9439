/**
 * Where a person stands. Without --workspace the workspace is the git repository around
 * the current folder (the nearest folder above it that holds `.git`), else the current
 * folder, so `fsgate git status` and `fsgate grep` work from any subfolder as git and
 * ripgrep do. Paths the person types are taken from the current folder and paths the
 * tools print are shown from it, as ripgrep shows them.
 */
import fs from 'node:fs'
import path from 'node:path'

/** The nearest folder at or above `from` that holds `.git` (a folder, or a file in a worktree); null if none. */
export function repositoryRoot(from: string): string | null {
  let dir = path.resolve(from)
  for (;;) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir
    const up = path.dirname(dir)
    if (up === dir) return null
    dir = up
  }
}

export class Place {
  /** Whether the current folder lies in the workspace; only then are paths taken and shown from it. */
  readonly inside: boolean

  constructor(
    /** The workspace, absolute (the toolkit resolves its real path). */
    readonly workspace: string,
    /** The current folder, absolute. */
    readonly cwd: string,
  ) {
    const rel = path.relative(workspace, cwd)
    this.inside = !rel.startsWith('..') && !path.isAbsolute(rel)
  }

  /** `--workspace DIR` if given, else the repository around `cwd`, else `cwd`. */
  static find(cwd: string, workspace?: string): Place {
    // The real current folder: the workspace found above it is compared with real paths.
    const here = realOrSelf(cwd)
    const ws = workspace !== undefined ? path.resolve(cwd, workspace) : (repositoryRoot(here) ?? here)
    return new Place(realOrSelf(ws), here)
  }

  /**
   * A path the person typed, as a tool takes it: relative to the workspace when the
   * current folder is inside it (so `a.txt` in `src/` is `src/a.txt`); as typed otherwise
   * (then relative paths start at the workspace). Absolute and `~/` paths pass unchanged.
   */
  toTool(p: string): string {
    if (!this.inside || path.isAbsolute(p) || p === '~' || p.startsWith('~/')) return p
    const rel = path.relative(this.workspace, path.resolve(this.cwd, p))
    if (rel === '') return '.'
    // A path that leaves the workspace is passed whole, so the tool names it as it is.
    return rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(this.cwd, p) : rel
  }

  /** The folder the search commands start in when no path is given: the current one. */
  defaultFolder(): string | undefined {
    if (!this.inside) return undefined
    const rel = path.relative(this.workspace, this.cwd)
    return rel === '' ? undefined : rel
  }

  /** A path a tool printed (relative to the workspace, or absolute), as the person sees it from the current folder. */
  fromTool(p: string): string {
    if (!this.inside) return p
    const abs = path.resolve(this.workspace, p)
    const rel = path.relative(this.cwd, abs)
    return rel === '' ? '.' : rel
  }
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p)
  } catch {
    return path.resolve(p)
  }
}
