/**
 * The hardened git invocation of git_operations (SPEC §3.7). git is spawned without a
 * shell, in its own process group, with the tool timeout and output cap, and with an
 * environment and configuration chosen so that nothing a repository carries can make
 * it run a program:
 *
 * - hooks (`core.hooksPath` → the null device), fsmonitor, pagers, editors, signing,
 *   auto-gc, external diff, every transport (`protocol.allow=never`, which also stops
 *   lazy fetches of partial clones and `ext::` remotes) and submodule recursion are off;
 * - the filter / textconv / external-diff / merge drivers and `protocol.<x>.allow` keys
 *   that the repository's own config files (local, worktree and what they include)
 *   define are listed first and overridden for every run of the call (`neutralise`).
 *   A model that can run shell commands could have planted them in `.git/config`, and
 *   git runs them during add, checkout, diff, status and stash. A driver the user's
 *   global config (~/.gitconfig) defines is the user's own and is kept (git-lfs lives
 *   there); when the repository redefines such a key, the global value is put back.
 *   The system config (/etc/gitconfig) is not read at all (GIT_CONFIG_NOSYSTEM).
 *
 * The overrides go in through GIT_CONFIG_COUNT/KEY/VALUE, not `-c key=value`: a
 * subsection name may contain "=" (`[filter "a=b"]`), which `-c` would split at the
 * wrong place and so fail to override. They reach the git processes git itself starts
 * (stash, merges) through the inherited environment.
 *
 * Repository discovery stops at the workspace (GIT_CEILING_DIRECTORIES), and a
 * repository whose work tree, git folder, common folder (a worktree's) or borrowed
 * objects (`objects/info/alternates`) lie outside the workspace and allowedPaths (a
 * planted `.git` file, `core.worktree`, an alternates line) is refused, so git neither
 * writes nor reads past them.
 *
 * git runs outside the shell's sandbox: it runs no program a repository defines (the
 * above), and the user's own drivers (git-lfs) need the home and the network.
 *
 * What remains: the listing and the command are two processes, so config changed in
 * between by something running at the same time is not seen.
 */
import { readFile, realpath } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

import { AbortedError, clip, FsgateError, NotFoundError, PathOutsideWorkspaceError } from '../errors.js'
import { childEnv } from '../policy/env.js'
import { displayPath, within } from '../policy/paths.js'
import { runProcess, type RunResult } from '../process/run.js'
import type { ToolContext } from '../tool.js'

export type ConfigPair = readonly [key: string, value: string]

/** Config every run gets, whatever the repository says. */
export const HARDENING: readonly ConfigPair[] = [
  ['core.hooksPath', os.devNull],
  ['core.fsmonitor', 'false'],
  ['core.pager', 'cat'],
  ['core.quotePath', 'false'],
  ['diff.external', ''],
  ['diff.noprefix', 'false'],
  ['diff.mnemonicPrefix', 'false'],
  ['diff.relative', 'false'],
  ['diff.ignoreSubmodules', 'all'],
  ['color.ui', 'false'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['log.showSignature', 'false'],
  ['i18n.logOutputEncoding', 'UTF-8'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['protocol.allow', 'never'],
  ['submodule.recurse', 'false'],
  ['status.submoduleSummary', 'false'],
  ['safe.bareRepository', 'explicit'],
]

/**
 * A merge driver the repository defined is replaced by git's own text merge, run as a
 * driver, so a stash pop still merges those files (an empty driver fails the merge).
 */
export const MERGE_DRIVER = 'git merge-file -L current -L base -L other --marker-size=%L %A %O %B'

/** Config keys that name a program git runs, or open a transport. */
const DRIVER_KEYS = '^(filter|diff|merge)\\..*\\.(clean|smudge|process|required|textconv|command|driver)$|^protocol\\..*\\.allow$'

export interface GitRunOptions {
  /** Config for this run on top of HARDENING (the repository's neutralised drivers). */
  config?: readonly ConfigPair[]
  /** Written to git's stdin. */
  input?: string
  /** A read: git takes no optional locks, so status does not rewrite the index. */
  read?: boolean
}

/**
 * Runs `git --no-pager <args>` in `cwd`. Resolves with the result whatever the exit
 * code; throws TIMEOUT, ABORTED, EMERGENCY_STOP, or BACKEND_UNAVAILABLE when git is
 * not installed.
 */
export async function runGit(ctx: ToolContext, cwd: string, args: readonly string[], opts: GitRunOptions = {}): Promise<RunResult> {
  if (ctx.signal?.aborted) throw aborted()
  let r: RunResult
  try {
    r = await runProcess({
      file: 'git',
      args: ['--no-pager', ...args],
      cwd,
      env: gitEnv(ctx, opts),
      timeoutMs: ctx.limits.shellTimeoutSecs * 1000,
      maxOutputBytes: ctx.limits.shellOutputBytes,
      signal: ctx.signal,
      input: opts.input,
      registry: ctx.processes,
    })
  } catch (err) {
    throw notStarted(err)
  }
  if (r.killed === 'timeout') {
    throw new FsgateError(
      'TIMEOUT',
      `git ${args[0]} did not finish within ${ctx.limits.shellTimeoutSecs} s and was stopped. Try a narrower request (fewer files, a smaller limit).`,
      { data: { timeoutSecs: ctx.limits.shellTimeoutSecs } },
    )
  }
  if (r.killed === 'aborted') throw aborted()
  if (r.killed === 'stopped') throw new FsgateError('EMERGENCY_STOP', 'The git command was killed by an emergency stop; nothing more runs until the host resumes.')
  return r
}

/** The child's whole environment: the cleared one of §3.8, no GIT_* of the host, and ours. */
export function gitEnv(ctx: Pick<ToolContext, 'workspace' | 'envPassthrough'>, opts: GitRunOptions = {}): Record<string, string> {
  const env = childEnv(process.env, ctx.envPassthrough ?? [])
  // A host's GIT_DIR, GIT_WORK_TREE or GIT_CONFIG_* would point git elsewhere or undo the hardening.
  for (const name of Object.keys(env)) if (name.startsWith('GIT_')) delete env[name]
  const config = [...HARDENING, ...(opts.config ?? [])]
  Object.assign(env, {
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: ':',
    GIT_SEQUENCE_EDITOR: ':',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    // Paths are files, never pathspec magic or globs (":/", "*.ts").
    GIT_LITERAL_PATHSPECS: '1',
    GIT_CEILING_DIRECTORIES: path.dirname(ctx.workspace),
    LC_ALL: 'C',
    GIT_CONFIG_COUNT: String(config.length),
  })
  if (opts.read) env.GIT_OPTIONAL_LOCKS = '0'
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key
    env[`GIT_CONFIG_VALUE_${i}`] = value
  })
  return env
}

/** A repository found from the folder a call runs in, checked to lie inside the workspace. */
export interface Repository {
  /** The real folder git runs in. */
  cwd: string
  /** The real top of the work tree. */
  root: string
  /** The real git folder. */
  gitDir: string
  /** The overrides of the repository's own drivers, for every run of this call. */
  config: ConfigPair[]
}

/** Finds the repository at `cwd` (a real folder inside the workspace) and lists its drivers. */
export async function openRepository(ctx: ToolContext, cwd: string, shown: string): Promise<Repository> {
  const r = await runGit(ctx, cwd, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir'], { read: true })
  if (r.exitCode !== 0) throw discoveryError(r.stderr, shown, ctx)
  const [top, gitDir, common] = r.stdout.split('\n')
  const real = await Promise.all([top, gitDir, common].map((p) => realpath(p).catch(() => p)))
  const roots = [ctx.workspace, ...ctx.allowedPaths]
  const inside = (p: string) => roots.some((root) => within(root, p))
  // Objects borrowed from another repository (alternates) are read, and their packs trusted, too.
  const borrowed = common ? await alternates(path.join(real[2], 'objects')) : []
  const outside = [...real, ...borrowed].find((p) => !inside(p))
  if (!top || !gitDir || !common || outside !== undefined) {
    throw new PathOutsideWorkspaceError(
      'PATH_OUTSIDE_WORKSPACE',
      `The git repository of ${shown} reaches outside the workspace (${clip(outside ?? r.stdout.trim(), 300)}), so git_operations does not use it. Use a repository that lies wholly inside ${ctx.workspace}.`,
      { data: { field: 'path', path: shown } },
    )
  }
  const listed = await runGit(ctx, cwd, ['config', '-z', '--show-scope', '--get-regexp', DRIVER_KEYS], { read: true })
  // Exit 1: no key matched.
  if (listed.exitCode !== 0 && listed.exitCode !== 1) throw failed('config', listed)
  return { cwd, root: real[0], gitDir: real[1], config: neutralise(parseScoped(listed.stdout)) }
}

/**
 * The object folders a repository borrows through `objects/info/alternates`, real, with
 * those they borrow in turn (git follows five levels; so does this).
 */
export async function alternates(objects: string, depth = 0): Promise<string[]> {
  const listed = await readFile(path.join(objects, 'info', 'alternates'), 'utf8').catch(() => '')
  const out: string[] = []
  for (const line of listed.split('\n')) {
    const entry = line.trim()
    if (entry === '' || entry.startsWith('#')) continue
    // A quoted entry is C-style quoted; its real path is then only what lies between the quotes.
    const unquoted = entry.startsWith('"') ? entry.slice(1, entry.lastIndexOf('"') > 0 ? entry.lastIndexOf('"') : undefined) : entry
    const abs = path.resolve(objects, unquoted)
    const real = await realpath(abs).catch(() => abs)
    out.push(real)
    if (depth < 5) out.push(...(await alternates(real, depth + 1)))
  }
  return out
}

/** The paths of the gitlinks (nested repositories, submodules) in the index of the repository at `cwd`. */
export async function listGitlinks(ctx: ToolContext, cwd: string): Promise<string[]> {
  const r = await runGit(ctx, cwd, ['ls-files', '--stage', '-z'], { read: true })
  if (r.exitCode !== 0) return []
  return r.stdout
    .split('\0')
    .filter((entry) => entry.startsWith('160000 '))
    .map((entry) => entry.slice(entry.indexOf('\t') + 1))
}

/** Runs git in the repository with its drivers neutralised. */
export function runIn(ctx: ToolContext, repo: Repository, args: readonly string[], opts: GitRunOptions = {}): Promise<RunResult> {
  return runGit(ctx, repo.cwd, args, { ...opts, config: [...repo.config, ...(opts.config ?? [])] })
}

export interface ScopedEntry {
  scope: string
  key: string
  /** Undefined for a key written without a value (boolean true). */
  value: string | undefined
}

/** Parses `git config -z --show-scope --get-regexp`: scope NUL key [LF value] NUL … */
export function parseScoped(out: string): ScopedEntry[] {
  const fields = out.split('\0')
  const entries: ScopedEntry[] = []
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const kv = fields[i + 1]
    const nl = kv.indexOf('\n')
    entries.push({ scope: fields[i], key: nl < 0 ? kv : kv.slice(0, nl), value: nl < 0 ? undefined : kv.slice(nl + 1) })
  }
  return entries
}

/**
 * The overrides for the listed driver keys: a key any non-global scope sets gets the
 * global value back, or a value that makes git skip it (a filter), fail instead of
 * running it (textconv, diff command), or merge as text (a merge driver). Transports
 * stay closed whatever any scope says.
 */
export function neutralise(entries: readonly ScopedEntry[]): ConfigPair[] {
  const global = new Map<string, string>()
  const planted = new Set<string>()
  for (const e of entries) {
    if (e.scope === 'global') global.set(e.key, e.value ?? 'true')
    else planted.add(e.key)
  }
  const out: ConfigPair[] = []
  for (const e of entries) {
    if (e.key.startsWith('protocol.') && !out.some(([k]) => k === e.key)) out.push([e.key, 'never'])
  }
  for (const key of planted) {
    if (key.startsWith('protocol.')) continue
    out.push([key, global.get(key) ?? inert(key)])
  }
  return out
}

function inert(key: string): string {
  if (key.endsWith('.required')) return 'false'
  if (key.startsWith('merge.')) return MERGE_DRIVER
  return ''
}


/** A non-zero exit git explained on stderr, as an error for the model (IO_ERROR). */
export function failed(what: string, r: RunResult, hint = ''): FsgateError {
  const said = gitSaid(r) || `exit code ${r.exitCode}`
  return new FsgateError('IO_ERROR', `git ${what} failed: ${said}${hint ? ` ${hint}` : ''}`, {
    data: { exitCode: r.exitCode, stderr: r.stderr.slice(0, 4000) },
  })
}

/** git's own message: its stderr (or stdout), "fatal: "/"error: " prefixes dropped, on one line. */
export function gitSaid(r: RunResult): string {
  const t = (r.stderr.trim() || r.stdout.trim()).replace(/^(fatal|error): /gm, '')
  const lines = t.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('hint: '))
  const one = lines.join(' ').replace(/\s+/g, ' ').trim()
  return one.length > 600 ? `${one.slice(0, 600)}…` : one
}

function discoveryError(stderr: string, shown: string, ctx: ToolContext): FsgateError {
  const data = { field: 'path', path: shown }
  if (/dubious ownership/.test(stderr)) {
    return new FsgateError(
      'PERMISSION_DENIED',
      `git refuses the repository at ${shown} because another user owns it. The user can trust it with: git config --global --add safe.directory <folder>.`,
      { data },
    )
  }
  if (/must be run in a work tree|bare repository/.test(stderr)) {
    return new NotFoundError('NOT_FOUND', `${shown} is inside a git folder or a bare repository, not a working tree. Give path= of a folder in a checked-out repository.`, { data })
  }
  if (/not a git repository/.test(stderr)) {
    return new NotFoundError(
      'NOT_FOUND',
      `${shown} is not in a git repository inside the workspace (${ctx.workspace}). Give path= of a folder inside a repository, or create one with git init through the shell tool.`,
      { data },
    )
  }
  return new FsgateError('IO_ERROR', `git could not open the repository at ${shown}: ${stderr.trim().slice(0, 600)}`, { data })
}

function notStarted(err: unknown): FsgateError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOENT' || code === 'EACCES') {
    return new FsgateError('BACKEND_UNAVAILABLE', 'git is not installed (no git on PATH), so git_operations cannot run. Install git, then retry.')
  }
  return new FsgateError('IO_ERROR', `git could not be started: ${err instanceof Error ? err.message : String(err)}.`)
}

function aborted(): AbortedError {
  return new AbortedError('ABORTED', 'The git command was cancelled by the caller.')
}

/** How a folder is named to the model. */
export function shownFolder(ctx: ToolContext, abs: string): string {
  return abs === ctx.workspace ? '.' : displayPath(ctx.workspace, abs)
}
