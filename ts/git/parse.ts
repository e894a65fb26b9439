/**
 * Pure parsers of git's machine formats for git_operations (SPEC §3.7). Every format is
 * read in its NUL-separated (`-z`) form, so paths with spaces, tabs, newlines, quotes or
 * any other character come through exactly, never C-quoted.
 */

/** What `git status --porcelain=v2 --branch` says about HEAD and its upstream. */
export interface StatusBranch {
  /** The checked-out branch, or null when HEAD is detached. */
  branch: string | null
  detached: boolean
  /** The commit HEAD points at, or null before the first commit. */
  oid: string | null
  upstream: string | null
  ahead: number | null
  behind: number | null
  /** Entries in the stash (`--show-stash`). */
  stashes: number
}

export type StatusKind = 'changed' | 'renamed' | 'copied' | 'unmerged' | 'untracked' | 'ignored'

export interface StatusEntry {
  /** Relative to the top of the work tree. */
  path: string
  /** The path it was renamed or copied from. */
  origPath?: string
  /** The index (staged) state: '.', M, T, A, D, R, C, U; '?' untracked, '!' ignored. */
  index: string
  /** The work tree state, in the same letters. */
  worktree: string
  kind: StatusKind
}

export interface Status extends StatusBranch {
  entries: StatusEntry[]
}

/** Parses `git status --porcelain=v2 -z --branch [--show-stash]`. */
export function parseStatus(out: string): Status {
  const status: Status = { branch: null, detached: false, oid: null, upstream: null, ahead: null, behind: null, stashes: 0, entries: [] }
  const fields = out.split('\0')
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]
    if (f.startsWith('# ')) header(status, f.slice(2))
    else if (f.startsWith('1 ')) status.entries.push(ordinary(f))
    else if (f.startsWith('2 ')) {
      // A rename or copy: the original path is the next NUL-separated field (no path is
      // empty, so an empty one is the end of an output cut short).
      const origPath = fields[++i]
      if (!origPath) break
      status.entries.push(renamed(f, origPath))
    } else if (f.startsWith('u ')) status.entries.push(unmerged(f))
    else if (f.startsWith('? ')) status.entries.push({ path: f.slice(2), index: '?', worktree: '?', kind: 'untracked' })
    else if (f.startsWith('! ')) status.entries.push({ path: f.slice(2), index: '!', worktree: '!', kind: 'ignored' })
  }
  return status
}

function header(status: Status, h: string): void {
  const sp = h.indexOf(' ')
  const [name, value] = [h.slice(0, sp), h.slice(sp + 1)]
  if (name === 'branch.oid') status.oid = value === '(initial)' ? null : value
  else if (name === 'branch.head') {
    status.detached = value === '(detached)'
    status.branch = status.detached ? null : value
  } else if (name === 'branch.upstream') status.upstream = value
  else if (name === 'branch.ab') {
    const m = /^\+(\d+) -(\d+)$/.exec(value)
    if (m) [status.ahead, status.behind] = [Number(m[1]), Number(m[2])]
  } else if (name === 'stash') status.stashes = Number(value) || 0
}

/** The first `n` space-separated fields of a record, and the rest (the path, spaces and all). */
function split(record: string, n: number): { fields: string[]; rest: string } {
  const fields: string[] = []
  let at = 0
  for (let k = 0; k < n; k++) {
    const sp = record.indexOf(' ', at)
    if (sp < 0) return { fields, rest: '' }
    fields.push(record.slice(at, sp))
    at = sp + 1
  }
  return { fields, rest: record.slice(at) }
}

// 1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>
function ordinary(record: string): StatusEntry {
  const { fields, rest } = split(record, 8)
  return { path: rest, index: fields[1][0], worktree: fields[1][1], kind: 'changed' }
}

// 2 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <X><score> <path>
function renamed(record: string, origPath: string): StatusEntry {
  const { fields, rest } = split(record, 9)
  return { path: rest, origPath, index: fields[1][0], worktree: fields[1][1], kind: fields[8].startsWith('C') ? 'copied' : 'renamed' }
}

// u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>
function unmerged(record: string): StatusEntry {
  const { fields, rest } = split(record, 10)
  return { path: rest, index: fields[1][0], worktree: fields[1][1], kind: 'unmerged' }
}

/** Field and record separators of the formats below (unit separator; NUL between records). */
export const US = '\x1f'

/** `git log -z --format=` for parseLog: hash, short hash, author, email, ISO date, subject, body. */
export const LOG_FORMAT = ['%H', '%h', '%an', '%ae', '%aI', '%s', '%b'].join('%x1f')

export interface Commit {
  hash: string
  shortHash: string
  author: string
  email: string
  /** ISO 8601 author date. */
  date: string
  subject: string
  /** The message after the subject, trimmed ('' when there is none). */
  body: string
}

/** Parses `git log -z --format=LOG_FORMAT`. */
export function parseLog(out: string): Commit[] {
  return records(out).map((r) => {
    const f = r.split(US)
    // The body comes last, so a unit separator inside it stays in it.
    return {
      hash: f[0],
      shortHash: f[1] ?? '',
      author: f[2] ?? '',
      email: f[3] ?? '',
      date: f[4] ?? '',
      subject: f[5] ?? '',
      body: f.slice(6).join(US).trim(),
    }
  })
}

/** `git for-each-ref --format=` for parseBranches: one NUL-ended record per local branch. */
export const BRANCH_FORMAT = `${['%(HEAD)', '%(refname)', '%(upstream:short)', '%(upstream:track,nobracket)', '%(objectname)', '%(objectname:short)', '%(contents:subject)'].join('%1f')}%00`

export interface Branch {
  name: string
  current: boolean
  upstream: string | null
  /** Commits ahead of / behind the upstream; null without one. */
  ahead: number | null
  behind: number | null
  /** The upstream is configured but its branch is gone. */
  upstreamGone: boolean
  hash: string
  shortHash: string
  subject: string
}

/** Parses `git for-each-ref --format=BRANCH_FORMAT refs/heads/`. */
export function parseBranches(out: string): Branch[] {
  return records(out).map((r) => {
    const f = r.split(US)
    const upstream = f[2] || null
    const track = f[3] ?? ''
    const ahead = /ahead (\d+)/.exec(track)
    const behind = /behind (\d+)/.exec(track)
    return {
      name: f[1].replace(/^refs\/heads\//, ''),
      current: f[0] === '*',
      upstream,
      ahead: upstream ? Number(ahead?.[1] ?? 0) : null,
      behind: upstream ? Number(behind?.[1] ?? 0) : null,
      upstreamGone: track === 'gone',
      hash: f[4] ?? '',
      shortHash: f[5] ?? '',
      subject: f.slice(6).join(US),
    }
  })
}

/** `git stash list -z --format=` for parseStashes. */
export const STASH_FORMAT = ['%gd', '%H', '%h', '%aI', '%gs'].join('%x1f')

export interface StashEntry {
  /** stash@{N}. */
  ref: string
  index: number
  hash: string
  shortHash: string
  date: string
  /** "WIP on main: 1a2b3c4 subject" or "On main: <message>". */
  message: string
}

/** Parses `git stash list -z --format=STASH_FORMAT`. */
export function parseStashes(out: string): StashEntry[] {
  return records(out).map((r) => {
    const f = r.split(US)
    return {
      ref: f[0],
      index: Number(/\{(\d+)\}/.exec(f[0])?.[1] ?? -1),
      hash: f[1] ?? '',
      shortHash: f[2] ?? '',
      date: f[3] ?? '',
      message: f.slice(4).join(US).trim(),
    }
  })
}

export interface DiffStat {
  path: string
  /** The path before a rename or copy. */
  origPath?: string
  /** Lines added and removed; null for a binary file. */
  added: number | null
  removed: number | null
  binary: boolean
}

/**
 * Parses `git diff --numstat -z`: "added TAB removed TAB path NUL", or for a rename
 * "added TAB removed TAB NUL from NUL to NUL"; a binary file counts "-".
 */
export function parseNumstat(out: string): DiffStat[] {
  const fields = out.split('\0')
  const stats: DiffStat[] = []
  for (let i = 0; i < fields.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(fields[i])
    if (!m) continue
    const binary = m[1] === '-' && m[2] === '-'
    const counts = { added: binary ? null : Number(m[1]), removed: binary ? null : Number(m[2]), binary }
    if (m[3] !== '') stats.push({ path: m[3], ...counts })
    else if (fields[i + 1] && fields[i + 2]) {
      stats.push({ path: fields[i + 2], origPath: fields[i + 1], ...counts })
      i += 2
    }
  }
  return stats
}

/** NUL-ended records, without the line break git may print after each and the empty tail. */
function records(out: string): string[] {
  return out
    .split('\0')
    .map((r) => (r.startsWith('\n') ? r.slice(1) : r))
    .filter((r) => r !== '')
}
