/**
 * git_operations (SPEC §3.7, seed 002): status, diff, log, branch, commit, add, checkout
 * and stash on the repository in the workspace, with parsed JSON in `data` and git's
 * answer as text in `content`. Only the revka dialect has it.
 *
 * Every field is checked before git runs (INVALID_INPUT naming the field, nothing run):
 * shell metacharacters and option-like strings are refused, paths are confined to the
 * workspace and always follow `--`, each as its own argument. git itself runs hardened
 * (ts/git/run.ts): no shell, no hooks, no fsmonitor, no pager or editor, no external
 * diff or textconv, the repository's own filter and merge drivers neutralised.
 *
 * Decisions the seed leaves open:
 * - `paths` / `files`: a string is split at whitespace into several paths (the seed's
 *   "paths string"); an array gives each path whole, so a path with spaces is written
 *   `["my file.txt"]`. Paths are literal (no globs, no pathspec magic), relative to
 *   `path` (the folder git runs in).
 * - `message` goes to git on stdin (`commit -F -`, `stash push -m`) as one argument,
 *   never through a shell, so it may hold newlines, backticks, `;`, `|` and the like;
 *   only NUL and the option-like strings of the seed (`--no-verify`, `-c`, …) are
 *   refused in it, as in every field.
 * - stash, every action including list, is a write (the seed's rule), so read_only
 *   refuses it; `status` reports how many stash entries there are.
 * - checkout only switches to an existing local branch: it never creates one (no
 *   remote-tracking guess either) and never discards changes (`checkout .` and any
 *   paths are refused).
 * - A field the operation does not use is refused rather than ignored: `paths` on a
 *   commit would otherwise commit more than the model meant.
 * - Errors: no repository → NOT_FOUND; git refusing in the repository's state (local
 *   changes in the way, conflicts) → IO_ERROR with git's own words and what to do.
 */
import { realpath, stat } from 'node:fs/promises'
import path from 'node:path'

import { z } from 'zod'

import { FsgateError, InvalidInputError, NotFoundError, PathOutsideWorkspaceError } from '../errors.js'
import {
  BRANCH_FORMAT,
  LOG_FORMAT,
  parseBranches,
  parseLog,
  parseNumstat,
  parseStashes,
  parseStatus,
  STASH_FORMAT,
  type Status,
  type StatusEntry,
} from '../git/parse.js'
import { failed, gitSaid, openRepository, runIn, shownFolder, type Repository } from '../git/run.js'
import { within } from '../policy/paths.js'
import { resolvePath } from '../policy/paths.js'
import type { RunResult } from '../process/run.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type CallEffect, type ToolContext } from '../tool.js'
import { num } from './common.js'
import { headWithin, textTokens } from './budget.js'

export const GIT_OPERATIONS = ['status', 'diff', 'log', 'branch', 'commit', 'add', 'checkout', 'stash'] as const
export type GitOperation = (typeof GIT_OPERATIONS)[number]
export const STASH_ACTIONS = ['push', 'pop', 'list', 'drop'] as const
export type StashAction = (typeof STASH_ACTIONS)[number]

export interface GitInput {
  operation: GitOperation
  message?: string
  paths?: string | string[]
  branch?: string
  files?: string | string[]
  cached?: boolean
  limit?: number
  stash_action?: StashAction
  path?: string
  /** Lines of the text output to skip (status, diff, log, branch): the offset a continuation names. */
  offset?: number
}

/** The seed's AUTONOMY message for a git write in read_only. */
export const GIT_READ_ONLY_MESSAGE = 'git write operations require higher autonomy level'
const WRITES: ReadonlySet<GitOperation> = new Set(['commit', 'add', 'checkout', 'stash'])
const LOG_DEFAULT = 10
export const LOG_MAX = 100
const MAX_PATHS = 1000

/** The fields each operation reads, beyond operation and path. */
const USES: Record<GitOperation, readonly (keyof GitInput)[]> = {
  status: ['offset'],
  diff: ['files', 'cached', 'offset'],
  log: ['limit', 'offset'],
  branch: ['offset'],
  commit: ['message'],
  add: ['paths'],
  checkout: ['branch'],
  stash: ['stash_action', 'message', 'paths'],
}

const pathList = (what: string) =>
  z
    .union([z.string(), z.array(z.string()).min(1).max(MAX_PATHS)])
    .optional()
    .describe(`${what} One path, several separated by spaces, or an array of paths (use the array for a path that contains spaces). Literal paths (no globs), relative to path.`)

export const gitTool = defineTool<GitInput>({
  name: 'git_operations',
  dialects: {
    revka: {
      name: 'git_operations',
      description: `Runs a structured git operation on a repository in the workspace: readable text, and parsed JSON in data.
- status: the branch, its upstream (ahead/behind) and every staged, unstaged, renamed, conflicted and untracked file.
- diff: the unified diff of the work tree against the index, or with cached=true of the staged changes against HEAD; files narrows it (default ".").
- log: the latest commits (limit, default ${LOG_DEFAULT}, at most ${LOG_MAX}). branch: the local branches, the current one marked *.
- add: stages paths. commit: commits what is staged, with message; stage files with add first.
- checkout: switches to an existing local branch. It never creates a branch and never discards changes in files.
- stash: stash_action push (the default; optional message and paths), pop, list or drop; pop and drop act on the newest entry.
- commit, add, checkout and stash change the repository and are refused in read-only autonomy. Hooks do not run.
- A long status, diff, log or branch list is paged by lines: the output names the offset to continue at.
- Use the shell tool for anything else (push, pull, merge, rebase, creating branches).`,
      schema: z.strictObject({
        operation: z.enum(GIT_OPERATIONS).describe('One of status, diff, log, branch, commit, add, checkout, stash.'),
        message: z.string().optional().describe('The commit message (commit), or a message for the stash entry (stash push).'),
        paths: pathList('Files to stage (add) or to stash (stash push).'),
        branch: z.string().optional().describe('The existing local branch to switch to (checkout).'),
        files: pathList('Files or folders to diff (diff). Default ".".'),
        cached: z.boolean().optional().describe('diff: show the staged changes (index against HEAD) instead of the unstaged ones.'),
        limit: z.number().int().min(1).optional().describe(`log: how many commits, newest first. Default ${LOG_DEFAULT}, at most ${LOG_MAX}.`),
        stash_action: z.enum(STASH_ACTIONS).optional().describe('stash: push (default), pop, list or drop.'),
        path: z.string().optional().describe('The folder inside the workspace to run git in. Default: the workspace root.'),
        offset: z.number().int().min(0).optional().describe('status, diff, log, branch: lines of the output to skip, to continue a long one; the output names the offset to go on at. Default 0.'),
      }),
      toCanonical: (i) => i as unknown as GitInput,
    },
  },
  effect: gitEffect,
  run: git,
})

/** A write is refused in read_only and counted by the budget (SPEC §5.4). */
export function gitEffect(input: GitInput): CallEffect {
  const write = WRITES.has(input.operation)
  return { sideEffect: write, write, labels: write ? ['git:write'] : [], readOnlyMessage: GIT_READ_ONLY_MESSAGE }
}

async function git(input: GitInput, ctx: ToolContext): Promise<ToolOutput> {
  const out = await operate(input, ctx)
  return PAGED.has(input.operation) ? page(ctx, input, out) : out
}

/** The operations whose text can be long, paged by lines with `offset`. */
const PAGED: ReadonlySet<GitOperation> = new Set(['status', 'diff', 'log', 'branch'])

/** Besides offset, what to narrow when an operation's text passes the result budget. */
const NARROW: Partial<Record<GitOperation, string>> = {
  status: 'or give path= of a subfolder',
  diff: 'or give files= of fewer files',
  log: 'or ask for a smaller limit',
  branch: "or list some with git branch --list '<pattern>' in the shell",
}

/**
 * One page of an operation's text: the lines from `offset` on that fit
 * limits.resultTokens, cut at a line, with the offset to go on at. Pages followed from
 * offset 0 join (with newlines) into the whole text; a line over 2,000 characters is cut
 * as Read cuts it.
 */
async function page(ctx: ToolContext, input: GitInput, out: ToolOutput): Promise<ToolOutput> {
  const first = out.content[0]
  if (first?.type !== 'text') return out
  const lines = first.text.split('\n')
  const offset = input.offset ?? 0
  if (offset >= lines.length && offset > 0) {
    throw new InvalidInputError('INVALID_INPUT', `offset ${num(offset)} is past the end: git ${input.operation} gave ${plural(lines.length, 'line')}. Use an offset from 0 to ${num(lines.length - 1)}, or leave it out.`, {
      data: { field: 'offset', lines: lines.length },
    })
  }
  const budget = textTokens(ctx)
  const cut = await headWithin(ctx, lines.slice(offset).join('\n'), budget)
  const shownLines = cut.left ? cut.left.from - 1 : lines.length - offset
  const next = offset + shownLines
  const more = next < lines.length
  const truncated = more || (out.data as { truncated?: boolean } | undefined)?.truncated === true
  const data = { ...out.data, offset, shownLines, lines: lines.length, truncated }
  const range = `lines ${num(offset + 1)}-${num(next)} of ${num(lines.length)}`
  const note = more
    ? `(Showing ${range}, to fit the limit of ${num(budget)} tokens; continue with offset=${next}, ${NARROW[input.operation]}.)`
    : offset > 0
      ? `(Showing ${range}: the end.)`
      : undefined
  const body = note ? `${cut.text}\n${note}` : cut.text
  return { ...out, content: [text(body), ...out.content.slice(1)], data }
}

async function operate(input: GitInput, ctx: ToolContext): Promise<ToolOutput> {
  checkFields(input)
  const cwd = await folder(ctx, input.path)
  const specs = await pathspecs(ctx, cwd, input)
  const repo = await openRepository(ctx, cwd, shownFolder(ctx, cwd))
  switch (input.operation) {
    case 'status':
      return status(ctx, repo)
    case 'diff':
      return diff(ctx, repo, specs ?? ['.'], input.cached === true)
    case 'log':
      return log(ctx, repo, Math.min(input.limit ?? LOG_DEFAULT, LOG_MAX))
    case 'branch':
      return branches(ctx, repo)
    case 'commit':
      return commit(ctx, repo, input.message as string)
    case 'add':
      return add(ctx, repo, specs as string[])
    case 'checkout':
      return checkout(ctx, repo, input.branch as string)
    case 'stash':
      return stash(ctx, repo, input.stash_action ?? 'push', input.message, specs)
  }
}

// ---------------------------------------------------------------------------------------
// Checks before git runs

/** Option-like strings the seed refuses in every field. */
const OPTION_LIKE = ['--exec=', '--upload-pack=', '--receive-pack=', '--pager=', '--editor=', '--no-verify']
/** Shell metacharacters, refused in every field but message. */
const METACHARACTERS = ['`', '$(', '|', ';', '>', '<', '&']

function checkFields(input: GitInput): void {
  const op = input.operation
  for (const key of ['message', 'paths', 'branch', 'files', 'cached', 'limit', 'stash_action', 'offset'] as const) {
    if (input[key] !== undefined && !USES[op].includes(key)) throw unused(key, op)
  }
  const action = input.stash_action ?? 'push'
  if (op === 'stash' && action !== 'push') {
    if (input.message !== undefined) throw unused('message', `stash ${action}`)
    if (input.paths !== undefined) throw unused('paths', `stash ${action}`)
  }
  if (input.message !== undefined) checkMessage(input.message, op)
  if (input.branch !== undefined) checkBranch(input.branch)
  if (input.path !== undefined) checkText('path', input.path)
  for (const field of ['paths', 'files'] as const) for (const p of splitPaths(input[field], field) ?? []) checkPath(field, p)
  if (op === 'add' && input.paths === undefined) throw invalid('paths', 'add needs paths: the files to stage, e.g. paths: "src/a.ts src/b.ts", or "." for everything here.')
  if (op === 'checkout' && input.branch === undefined) throw invalid('branch', 'checkout needs branch: the name of an existing local branch to switch to.')
  if (op === 'commit' && input.message === undefined) throw invalid('message', 'commit needs a message. Call git_operations again with message.')
}

function unused(field: string, op: string): InvalidInputError {
  const hint =
    field === 'paths' && op === 'commit'
      ? ' commit takes what is staged: stage the files with operation "add" first.'
      : field === 'paths' && op === 'checkout'
        ? ' checkout only switches branches; it never restores or discards files.'
        : ''
  return invalid(field, `${field} is not used by ${op}; remove it.${hint}`)
}

function checkMessage(message: string, op: GitOperation): void {
  if (message.includes('\0')) throw invalid('message', 'message contains a NUL byte; remove it.')
  refuseOptionLike('message', message)
  if (op === 'commit' && message.trim() === '') throw invalid('message', 'message is empty; give a commit message that says what changed.')
}

function checkBranch(branch: string): void {
  if (/^(\.|\.\.|--?)$/.test(branch.trim()) || branch.trim().startsWith('-- ')) {
    throw invalid('branch', `checkout only switches to an existing branch; it never discards changes in files (like checkout ${branch}). Give a branch name, or use the shell tool to restore files.`)
  }
  checkText('branch', branch)
  if (branch.startsWith('-')) throw invalid('branch', `branch "${branch}" starts with "-", so git would read it as an option. Give a branch name.`)
}

function checkPath(field: string, p: string): void {
  checkText(field, p)
  if (p.startsWith('-')) throw invalid(field, `${field} entry "${p}" starts with "-", so it could be read as an option. Write a file whose name starts with "-" as ./${p}.`)
}

/** The rules every field but message shares. */
function checkText(field: string, value: string): void {
  if (/[\0\n\r]/.test(value)) throw invalid(field, `${field} contains a NUL byte or a line break; give it on one line.`)
  const bad = METACHARACTERS.find((m) => value.includes(m))
  if (bad) throw invalid(field, `${field} contains "${bad}", a shell metacharacter git_operations refuses. git runs without a shell; give plain names.`)
  refuseOptionLike(field, value)
}

function refuseOptionLike(field: string, value: string): void {
  const bad = OPTION_LIKE.find((o) => value.includes(o)) ?? (value.split(/\s+/).some((t) => t === '-c' || /^-c\S*=/.test(t)) ? '-c' : undefined)
  if (bad) throw invalid(field, `${field} contains "${bad}", which git_operations refuses (it could run programs or skip checks). Remove it.`)
}

/** A string is several paths separated by whitespace; an array gives each path whole. */
function splitPaths(value: string | string[] | undefined, field: string): string[] | undefined {
  if (value === undefined) return undefined
  const list = Array.isArray(value) ? value : value.split(/\s+/).filter((p) => p !== '')
  if (list.length === 0 || list.some((p) => p === '')) throw invalid(field, `${field} is empty; give one or more paths.`)
  if (list.length > MAX_PATHS) throw invalid(field, `${field} has ${num(list.length)} paths, more than ${num(MAX_PATHS)}; give a folder instead.`)
  return list
}

function invalid(field: string, message: string): InvalidInputError {
  return new InvalidInputError('INVALID_INPUT', message, { data: { field } })
}

/** The real folder git runs in: `path`, or the workspace; a folder inside the workspace. */
async function folder(ctx: ToolContext, given: string | undefined): Promise<string> {
  if (given === undefined) return ctx.workspace
  const abs = resolvePath(ctx.workspace, given, 'path')
  const real = await realpath(abs).catch((err) => {
    refuseMalformed(err, 'path', given)
    throw new NotFoundError('NOT_FOUND', `Folder does not exist: ${given}. Give path= of a folder inside the workspace (${ctx.workspace}).`, { data: { field: 'path', path: given } })
  })
  if (!within(ctx.workspace, real)) throw outside('path', given, ctx)
  if (!(await stat(real)).isDirectory()) throw invalid('path', `path ${given} is a file; give the folder to run git in (paths and files name files).`)
  return real
}

/**
 * The paths or files of the call, each confined to the workspace (as written and with
 * its symlinks resolved) and given to git relative to the folder it runs in.
 */
async function pathspecs(ctx: ToolContext, cwd: string, input: GitInput): Promise<string[] | undefined> {
  const field = input.operation === 'diff' ? 'files' : 'paths'
  const given = splitPaths(input[field], field)
  if (!given) return undefined
  return Promise.all(
    given.map(async (p) => {
      const abs = resolvePath(cwd, p, field)
      if (!within(ctx.workspace, abs) || !within(ctx.workspace, await realish(abs, field, p))) throw outside(field, p, ctx)
      return path.relative(cwd, abs) || '.'
    }),
  )
}

/**
 * The real path of `abs`, or of its nearest existing folder with the rest appended. A
 * symlink loop or a name too long for the file system is INVALID_INPUT.
 */
async function realish(abs: string, field: string, given: string): Promise<string> {
  try {
    return await realpath(abs)
  } catch (err) {
    refuseMalformed(err, field, given)
    const parent = path.dirname(abs)
    return parent === abs ? abs : path.join(await realish(parent, field, given), path.basename(abs))
  }
}

/** Throws INVALID_INPUT for a path the file system cannot resolve at all (ELOOP, ENAMETOOLONG). */
function refuseMalformed(err: unknown, field: string, given: string): void {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ELOOP') throw invalid(field, `${field} ${given} has a symlink loop or too many symlinks. Give a path without one.`)
  if (code === 'ENAMETOOLONG') throw invalid(field, `${field} ${given} has a name longer than the file system allows. Give a shorter path.`)
}

function outside(field: string, given: string, ctx: ToolContext): PathOutsideWorkspaceError {
  return new PathOutsideWorkspaceError(
    'PATH_OUTSIDE_WORKSPACE',
    `${given} is outside the workspace (${ctx.workspace}), and git_operations only works inside it. Use a path inside the workspace.`,
    { data: { field, path: given } },
  )
}

// ---------------------------------------------------------------------------------------
// Operations

async function status(ctx: ToolContext, repo: Repository): Promise<ToolOutput> {
  const { s, truncated } = await readStatus(ctx, repo, [])
  const lines = [headLine(ctx, repo, s)]
  if (s.entries.length === 0) lines.push('Nothing to commit, working tree clean.')
  else lines.push(...s.entries.map(shortLine))
  const conflicts = s.entries.filter((e) => e.kind === 'unmerged').length
  if (conflicts) lines.push(`${plural(conflicts, 'file')} with conflicts: resolve the markers, then stage them with add.`)
  if (s.stashes) lines.push(`${plural(s.stashes, 'stash entry', 'stash entries')}.`)
  if (truncated) lines.push('(The list was cut at the output limit; give path= of a subfolder to see the rest.)')
  return { content: [text(lines.join('\n'))], data: { repository: shownFolder(ctx, repo.root), ...s, truncated } }
}

async function readStatus(ctx: ToolContext, repo: Repository, specs: readonly string[]): Promise<{ s: Status; truncated: boolean }> {
  const args = ['status', '--porcelain=v2', '-z', '--branch', '--show-stash', '--untracked-files=normal', '--ignore-submodules=all']
  const r = await runIn(ctx, repo, specs.length ? [...args, '--', ...specs] : args, { read: true })
  if (r.exitCode !== 0) throw failed('status', r)
  return { s: parseStatus(whole(r)), truncated: r.truncated }
}

function headLine(ctx: ToolContext, repo: Repository, s: Status): string {
  const where = repo.root === ctx.workspace ? '' : ` (repository ${shownFolder(ctx, repo.root)}; paths are relative to it)`
  if (s.detached) return `HEAD detached at ${s.oid?.slice(0, 7)}${where}.`
  const first = s.oid === null ? `No commits yet on ${s.branch}` : `On branch ${s.branch}`
  if (!s.upstream) return `${first}${where}.`
  const ab = s.ahead === null ? 'its branch is gone' : `${s.ahead} ahead, ${s.behind} behind`
  return `${first}, tracking ${s.upstream} (${ab})${where}.`
}

/** One entry as `git status --short` prints it. */
function shortLine(e: StatusEntry): string {
  const xy = `${e.index}${e.worktree}`.replaceAll('.', ' ')
  return e.origPath === undefined ? `${xy} ${show(e.path)}` : `${xy} ${show(e.origPath)} -> ${show(e.path)}`
}

async function diff(ctx: ToolContext, repo: Repository, specs: readonly string[], cached: boolean): Promise<ToolOutput> {
  const base = ['diff', '--no-ext-diff', '--no-textconv', '--no-color', '-M', '--ignore-submodules=all', ...(cached ? ['--cached'] : [])]
  const [patch, counts] = await Promise.all([
    runIn(ctx, repo, [...base, '--', ...specs], { read: true }),
    runIn(ctx, repo, [...base, '--numstat', '-z', '--', ...specs], { read: true }),
  ])
  if (patch.exitCode !== 0) throw failed('diff', patch)
  if (counts.exitCode !== 0) throw failed('diff', counts)
  const files = parseNumstat(whole(counts))
  const data = { repository: shownFolder(ctx, repo.root), cached, files, truncated: patch.truncated, bytes: patch.stdoutBytes }
  if (files.length === 0 && patch.stdout.trim() === '') {
    const none = cached ? 'No staged changes.' : 'No unstaged changes in the work tree. Staged changes are shown with cached: true.'
    return { content: [text(none)], data }
  }
  const added = files.reduce((n, f) => n + (f.added ?? 0), 0)
  const removed = files.reduce((n, f) => n + (f.removed ?? 0), 0)
  let out = `${plural(files.length, 'file')} changed, +${num(added)} -${num(removed)}${cached ? ' (staged)' : ''}.\n${patch.stdout}`
  if (patch.truncated) out += `\n(The diff was cut: ${num(patch.stdoutBytes)} bytes in all, the middle left out. Diff fewer files to see it whole.)`
  return { content: [text(out)], data }
}

async function log(ctx: ToolContext, repo: Repository, limit: number): Promise<ToolOutput> {
  const r = await runIn(ctx, repo, ['log', '-z', `--format=${LOG_FORMAT}`, `--max-count=${limit}`, '--no-color'], { read: true })
  if (r.exitCode !== 0 && /does not have any commits yet/.test(r.stderr)) {
    return { content: [text('No commits yet.')], data: { repository: shownFolder(ctx, repo.root), commits: [] } }
  }
  if (r.exitCode !== 0) throw failed('log', r)
  const commits = parseLog(whole(r))
  const lines = commits.map((c) => `${c.shortHash} ${c.date.slice(0, 10)} ${c.author}: ${c.subject}`)
  if (commits.length === limit) lines.push(`(The latest ${limit}; raise limit, at most ${LOG_MAX}, to see more.)`)
  return { content: [text(lines.join('\n'))], data: { repository: shownFolder(ctx, repo.root), commits } }
}

async function branches(ctx: ToolContext, repo: Repository): Promise<ToolOutput> {
  const list = await listBranches(ctx, repo)
  const current = list.find((b) => b.current)?.name ?? null
  const data = { repository: shownFolder(ctx, repo.root), current, branches: list }
  if (list.length === 0) return { content: [text('No branches yet: the repository has no commits.')], data }
  const lines = list.map((b) => {
    const track = b.upstream ? ` [${b.upstream}${b.upstreamGone ? ': gone' : b.ahead || b.behind ? `: ahead ${b.ahead}, behind ${b.behind}` : ''}]` : ''
    return `${b.current ? '*' : ' '} ${b.name} ${b.shortHash}${track} ${b.subject}`
  })
  if (current === null) lines.push('(HEAD is detached: no branch is checked out.)')
  return { content: [text(lines.join('\n'))], data }
}

async function listBranches(ctx: ToolContext, repo: Repository) {
  const r = await runIn(ctx, repo, ['for-each-ref', `--format=${BRANCH_FORMAT}`, 'refs/heads/'], { read: true })
  if (r.exitCode !== 0) throw failed('branch', r)
  return parseBranches(whole(r))
}

async function commit(ctx: ToolContext, repo: Repository, message: string): Promise<ToolOutput> {
  const r = await runIn(ctx, repo, ['commit', '-F', '-'], { input: message })
  if (r.exitCode !== 0) {
    if (/nothing (added )?to commit|no changes added to commit/.test(r.stdout)) {
      throw invalid('operation', 'Nothing is staged, so there is nothing to commit. Stage the files first with operation "add" and paths, then commit.')
    }
    if (/Please tell me who you are|Author identity unknown|empty ident/.test(r.stderr)) {
      throw failed('commit', r, 'git does not know the author: set user.name and user.email in the repository (git config user.name "…") with the shell tool, then retry.')
    }
    throw failed('commit', r, /unmerged|conflict/i.test(r.stderr + r.stdout) ? 'Resolve the conflicts and stage the files with add first.' : '')
  }
  const made = await runIn(ctx, repo, ['log', '-1', '-z', `--format=${LOG_FORMAT}`], { read: true })
  const [c] = parseLog(made.stdout)
  const summary = r.stdout.trim()
  return { content: [text(`Committed ${c?.shortHash ?? ''}: ${c?.subject ?? ''}\n${summary}`)], data: { repository: shownFolder(ctx, repo.root), commit: c ?? null, summary } }
}

async function add(ctx: ToolContext, repo: Repository, specs: readonly string[]): Promise<ToolOutput> {
  const r = await runIn(ctx, repo, ['add', '--', ...specs])
  if (r.exitCode !== 0) {
    const missing = /pathspec '([\s\S]*?)' did not match any files/.exec(r.stderr)
    if (missing) {
      throw new NotFoundError('NOT_FOUND', `${missing[1]} does not match any file git knows here. Check the path; paths are relative to ${shownFolder(ctx, repo.cwd)}.`, {
        data: { field: 'paths', path: missing[1] },
      })
    }
    if (/ignored by one of your .gitignore files/.test(r.stderr)) {
      throw invalid('paths', `git did not stage them because .gitignore ignores them: ${gitSaid(r)} Leave them out, or force it with the shell tool if you mean to.`)
    }
    throw failed('add', r)
  }
  const { s } = await readStatus(ctx, repo, specs)
  const staged = s.entries.filter((e) => e.index !== '.' && e.kind !== 'untracked' && e.kind !== 'ignored')
  const body = staged.length ? `Staged for the next commit (${plural(staged.length, 'file')}):\n${staged.map(shortLine).join('\n')}` : 'Nothing new to stage: those paths have no changes.'
  return { content: [text(body)], data: { repository: shownFolder(ctx, repo.root), paths: specs, staged } }
}

async function checkout(ctx: ToolContext, repo: Repository, branch: string): Promise<ToolOutput> {
  const name = await runIn(ctx, repo, ['check-ref-format', `refs/heads/${branch}`], { read: true })
  if (name.exitCode !== 0) throw invalid('branch', `"${branch}" is not a valid branch name. Give the name of an existing local branch (operation "branch" lists them).`)
  const ref = await runIn(ctx, repo, ['show-ref', '--verify', `refs/heads/${branch}`], { read: true })
  if (ref.exitCode !== 0) {
    const names = (await listBranches(ctx, repo)).map((b) => b.name)
    throw new NotFoundError(
      'NOT_FOUND',
      `Branch ${branch} does not exist${names.length ? ` (branches: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''})` : ''}. git_operations does not create branches; create one with the shell tool (git switch -c ${branch}) if you mean to.`,
      { data: { field: 'branch', branch, branches: names } },
    )
  }
  const r = await runIn(ctx, repo, ['switch', '--no-guess', '--end-of-options', branch])
  if (r.exitCode !== 0) {
    const inTheWay = /would be overwritten|Please commit your changes or stash them/.test(r.stderr)
    throw failed('checkout', r, inTheWay ? 'Commit or stash those changes first, then switch.' : '')
  }
  const hash = ref.stdout.split(' ')[0]
  return { content: [text(gitSaid(r) || `Switched to branch '${branch}'`)], data: { repository: shownFolder(ctx, repo.root), branch, hash } }
}

async function stash(ctx: ToolContext, repo: Repository, action: StashAction, message: string | undefined, specs: string[] | undefined): Promise<ToolOutput> {
  const where = { repository: shownFolder(ctx, repo.root), action }
  if (action === 'list') {
    const r = await runIn(ctx, repo, ['stash', 'list', '-z', `--format=${STASH_FORMAT}`], { read: true })
    if (r.exitCode !== 0) throw failed('stash list', r)
    const stashes = parseStashes(whole(r))
    const body = stashes.length ? stashes.map((s) => `${s.ref} ${s.shortHash} ${s.date.slice(0, 10)} ${s.message}`).join('\n') : 'The stash is empty.'
    return { content: [text(body)], data: { ...where, stashes } }
  }
  if (action === 'push') {
    const args = ['stash', 'push', ...(message !== undefined ? ['-m', message] : []), ...(specs ? ['--', ...specs] : [])]
    const r = await runIn(ctx, repo, args)
    if (r.exitCode !== 0) throw failed('stash push', r)
    const stashed = !/No local changes to save/.test(r.stdout + r.stderr)
    const said = gitSaid(r)
    return { content: [text(stashed ? `${said}. Bring it back with stash_action "pop".` : 'No local changes to save; nothing was stashed.')], data: { ...where, stashed } }
  }
  const r = await runIn(ctx, repo, ['stash', action])
  const all = r.stdout + r.stderr
  if (r.exitCode !== 0 && /No stash entries found|No stash found|stash@\{0\} is not a valid reference/i.test(all)) {
    throw new NotFoundError('NOT_FOUND', `The stash is empty, so there is nothing to ${action}.`, { data: { field: 'stash_action' } })
  }
  if (r.exitCode !== 0 && action === 'pop' && /CONFLICT/.test(all)) throw await popConflict(ctx, repo, r)
  if (r.exitCode !== 0) throw failed(`stash ${action}`, r, /would be overwritten/.test(all) ? 'Commit or stash those changes first.' : '')
  const dropped = /Dropped (\S+) \(([0-9a-f]+)\)/.exec(all)
  const what = action === 'pop' ? 'Applied and dropped the newest stash entry' : 'Dropped the newest stash entry'
  return { content: [text(`${what}${dropped ? ` (${dropped[2].slice(0, 7)})` : ''}.`)], data: { ...where, hash: dropped?.[2] ?? null } }
}

/** A pop that left conflicts: the work tree changed, the entry was kept. */
async function popConflict(ctx: ToolContext, repo: Repository, r: RunResult): Promise<FsgateError> {
  const { s } = await readStatus(ctx, repo, [])
  const conflicts = s.entries.filter((e) => e.kind === 'unmerged').map((e) => e.path)
  return new FsgateError(
    'IO_ERROR',
    `The stash was applied with conflicts in ${conflicts.map(show).join(', ') || 'some files'}, and the entry was kept in the stash. Resolve the conflict markers, stage the files with add, then drop the entry with stash_action "drop".`,
    { data: { conflicts, kept: true, exitCode: r.exitCode } },
  )
}

// ---------------------------------------------------------------------------------------
// Output

/**
 * The parseable part of a NUL-separated output: all of it, or when the output cap cut
 * it, the head up to its last whole record (the tail after the marker is dropped).
 */
function whole(r: RunResult): string {
  if (!r.truncated) return r.stdout
  const marker = /\n\[\.\.\. [\d,]+ bytes of output omitted; [\d,]+ in all \.\.\.\]\n/.exec(r.stdout)
  const head = marker ? r.stdout.slice(0, marker.index) : r.stdout
  return head.slice(0, head.lastIndexOf('\0') + 1)
}

/** A path as the model reads it: quoted when it has control characters or edge spaces. */
function show(p: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  return /[\x00-\x1f\x7f"]|^\s|\s$/.test(p) ? JSON.stringify(p) : p
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${num(n)} ${n === 1 ? one : many}`
}
