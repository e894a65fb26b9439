/**
 * Background commands (Claude Code's `run_in_background`, gemini-cli's `is_background`):
 * a shell command started in the same sandbox, after the same admission and approval as
 * a foreground one, that returns a task id at once and keeps running after the call.
 *
 * Its output (stdout and stderr, merged line by line as a terminal shows them) is kept in
 * a bounded log: the first quarter of `limits.taskOutputBytes` as it came, then the latest
 * lines, numbered from the start, so a page of it can be read at any time by line number
 * (Claude Code reads the task's output file with Read; fsgate serves Read of that path
 * from this log) or from its end (task_output / TaskOutput).
 *
 * A task dies with TaskStop, its timeout, its session (`session.close()`), the toolkit
 * (`toolkit.close()`), an emergency stop (its process group is registered like any
 * command's), and the host's exit. The toolkit caps how many run at once, in all and per
 * session (`limits.backgroundTasks`, `limits.backgroundTasksPerSession`).
 */
import { randomBytes } from 'node:crypto'
import { StringDecoder } from 'node:string_decoder'

import { clip, FsgateError, InvalidInputError } from '../errors.js'
import { listGitlinks } from '../git/run.js'
import { childEnv } from '../policy/env.js'
import { text, type ToolOutput } from '../result.js'
import type { ToolContext } from '../tool.js'
import { blocksWithin, num, numbered, pageTokens } from '../tools/common.js'
import { displayPath } from '../policy/paths.js'
import { enterGitGuard, type GitGuard, leaveGitGuard } from './git-guard.js'
import { runProcess, type RunResult } from './run.js'
import type { Launch, SandboxBackend } from './sandbox.js'

export type TaskStatus = 'running' | 'completed' | 'failed' | 'killed'

/** Why a task was killed. */
export type StopReason = 'TaskStop' | 'timeout' | 'session closed' | 'toolkit closed' | 'emergency stop' | 'host exit'

/** Where Read finds a task's output: a path no file system has, so it can never name a real file. */
export const TASK_OUTPUT_DIR = '/.fsgate/tasks'

/** Finished tasks a session keeps, newest first, for reading their output later. */
const KEPT_FINISHED = 16
/** The longest a background command may run, in seconds (Claude Code's 2 h). */
const MAX_TASK_SECS = 7200
/** The longest a foreground command may run, in seconds, unless limits.shellTimeoutSecs is longer. */
const MAX_FOREGROUND_SECS = 600
/** Claude Code's foreground default, in seconds, used unless the host set limits.shellTimeoutSecs. */
const CLAUDE_FOREGROUND_SECS = 120

/**
 * The timeout of a shell call in seconds: the call's own, at most 600 s in the
 * foreground and 2 h in the background (or the host's limit when longer); else the
 * dialect's default: Claude Code's 120 s for Bash unless the host set
 * `limits.shellTimeoutSecs`, and `limits.taskTimeoutSecs` in the background.
 */
export function shellTimeoutSecs(asked: number | undefined, background: boolean, ctx: ToolContext): number {
  const L = ctx.limits
  if (background) return Math.min(asked ?? L.taskTimeoutSecs, Math.max(MAX_TASK_SECS, L.taskTimeoutSecs))
  const fallback = ctx.dialect === 'claude' && L.shellTimeoutSecs === 60 ? CLAUDE_FOREGROUND_SECS : L.shellTimeoutSecs
  return Math.min(asked ?? fallback, Math.max(MAX_FOREGROUND_SECS, L.shellTimeoutSecs))
}

/**
 * A command's output as numbered lines: stdout and stderr merged a line at a time, at
 * most `maxBytes` kept (the start, then the latest), each line at most `maxLineChars`.
 */
export class TaskLog {
  /** Complete lines so far. */
  lines = 0
  /** Bytes the command wrote. */
  bytes = 0
  private readonly head: string[] = []
  private headBytes = 0
  private tail: string[] = []
  /** Where the live lines of `tail` start (the ones before were dropped; compacted now and then). */
  private tailStart = 0
  /** The number of the line at `tailStart`. */
  private tailFirst = 1
  private tailBytes = 0
  private readonly partial = { stdout: '', stderr: '' }
  private readonly decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') }

  constructor(
    private readonly maxBytes: number,
    private readonly maxLineChars: number,
  ) {}

  push(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    this.bytes += chunk.length
    const s = this.partial[stream] + this.decoders[stream].write(chunk)
    let from = 0
    let nl = s.indexOf('\n')
    while (nl >= 0) {
      this.add(s.slice(from, s[nl - 1] === '\r' ? nl - 1 : nl))
      from = nl + 1
      nl = s.indexOf('\n', from)
    }
    // A line without its end yet: kept whole only up to what a page shows of it.
    const rest = s.slice(from)
    this.partial[stream] = rest.length > this.maxLineChars * 2 ? rest.slice(0, this.maxLineChars * 2) : rest
  }

  /** The command ended: its unfinished lines are lines. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.partial[stream] + this.decoders[stream].end()
      this.partial[stream] = ''
      if (rest !== '') this.add(rest)
    }
  }

  private add(line: string): void {
    this.lines++
    const shown = cutLine(line, this.maxLineChars)
    const size = Buffer.byteLength(shown) + 1
    if (this.tail.length === 0 && this.headBytes + size <= this.maxBytes / 4) {
      this.head.push(shown)
      this.headBytes += size
      this.tailFirst = this.lines + 1
      return
    }
    this.tail.push(shown)
    this.tailBytes += size
    while (this.tailBytes > (this.maxBytes * 3) / 4 && this.tail.length - this.tailStart > 1) {
      this.tailBytes -= Buffer.byteLength(this.tail[this.tailStart]) + 1
      this.tailStart++
      this.tailFirst++
    }
    // Dropped lines are let go in batches, so a flood costs a constant per line.
    if (this.tailStart > 4096 && this.tailStart * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailStart)
      this.tailStart = 0
    }
  }

  /** Lines dropped from the middle, as [first, last], or null. */
  get dropped(): [number, number] | null {
    const first = this.head.length + 1
    return this.tailFirst > first ? [first, this.tailFirst - 1] : null
  }

  /** The line numbered `n`, or undefined if it was dropped (or is not there). */
  line(n: number): string | undefined {
    if (n >= 1 && n <= this.head.length) return this.head[n - 1]
    if (n >= this.tailFirst && n < this.tailFirst + this.tail.length - this.tailStart) return this.tail[this.tailStart + n - this.tailFirst]
    return undefined
  }

  /** The lines still being written, one per stream, as they are so far. */
  pending(): string[] {
    return [this.partial.stdout, this.partial.stderr].filter((s) => s !== '').map((s) => cutLine(s, this.maxLineChars))
  }
}

function cutLine(line: string, max: number): string {
  if (line.length <= max) return line
  return `${line.slice(0, max)} … [line cut: ${num(line.length - max)} more characters]`
}

/** One background command. */
export class Task {
  readonly id = `b${randomBytes(4).toString('hex')}`
  readonly startedAt = Date.now()
  endedAt: number | null = null
  status: TaskStatus = 'running'
  exitCode: number | null = null
  signal: string | null = null
  stoppedBy: StopReason | null = null
  pid: number | null = null
  readonly log: TaskLog
  /** Settles when the command has ended and what it left is cleaned up. */
  done: Promise<void> = Promise.resolve()
  private readonly controller = new AbortController()

  constructor(
    readonly command: string,
    readonly sandbox: SandboxBackend,
    readonly timeoutSecs: number,
    limits: { taskOutputBytes: number; readLineChars: number },
  ) {
    this.log = new TaskLog(limits.taskOutputBytes, limits.readLineChars)
  }

  get signalToStop(): AbortSignal {
    return this.controller.signal
  }

  /** The path whose Read shows this task's output. */
  get outputPath(): string {
    return `${TASK_OUTPUT_DIR}/${this.id}.output`
  }

  /** Kills the command and everything it started (it may take a moment: await `done`). */
  stop(why: StopReason): void {
    if (this.status !== 'running') return
    this.stoppedBy ??= why
    this.controller.abort()
  }

  /** How it stands, in a few words. */
  describe(): string {
    const secs = Math.round(((this.endedAt ?? Date.now()) - this.startedAt) / 1000)
    switch (this.status) {
      case 'running':
        return `running for ${secs} s`
      case 'completed':
        return `completed (exit code 0) after ${secs} s`
      case 'failed':
        return this.signal ? `ended by ${this.signal} after ${secs} s` : `failed (exit code ${this.exitCode}) after ${secs} s`
      case 'killed':
        return `killed (${this.stoppedBy ?? 'stopped'}) after ${secs} s`
    }
  }
}

/** The toolkit's running tasks, for its cap, its close and the host's exit. */
export class TaskPool {
  readonly running = new Set<Task>()

  /** Stops every running task (toolkit.close, the host's exit). */
  stopAll(why: StopReason): Promise<void> {
    const all = [...this.running]
    for (const task of all) task.stop(why)
    return Promise.all(all.map((t) => t.done)).then(() => {})
  }
}

/** Every toolkit's pool, so that the host's exit kills what still runs. */
const pools = new Set<WeakRef<TaskPool>>()
let exitHooked = false

/** Registers a pool for the host's exit: its tasks' process groups are killed then. */
export function watchExit(pool: TaskPool): void {
  pools.add(new WeakRef(pool))
  if (exitHooked) return
  exitHooked = true
  // Synchronous: an abort kills the process group at once (the sweep of processes that
  // left it does not run at exit; inside bwrap they die with their parent anyway).
  process.once('exit', () => {
    for (const ref of pools) for (const task of ref.deref()?.running ?? []) task.stop('host exit')
  })
}

/** One session's tasks: those running and the last ones finished. */
export class SessionTasks {
  private readonly tasks = new Map<string, Task>()
  private closed = false

  constructor(private readonly pool: TaskPool) {}

  get(id: string): Task | undefined {
    return this.tasks.get(id)
  }

  /** The task whose output path this is, if any. */
  forOutputPath(path: string): Task | undefined {
    const m = /^\/\.fsgate\/tasks\/(b[0-9a-f]{8})\.output$/.exec(path.trim())
    return m ? this.tasks.get(m[1]) : undefined
  }

  /** Tasks of this session, oldest first. */
  list(): Task[] {
    return [...this.tasks.values()]
  }

  get running(): number {
    return this.list().filter((t) => t.status === 'running').length
  }

  /** Stops every running task of the session and refuses new ones (session.close). */
  close(why: StopReason = 'session closed'): Promise<void> {
    this.closed = true
    const running = this.list().filter((t) => t.status === 'running')
    for (const task of running) task.stop(why)
    return Promise.all(running.map((t) => t.done)).then(() => {})
  }

  /** Refuses a new task over the caps (or in a closed session). */
  checkRoom(ctx: ToolContext): void {
    if (this.closed) throw new FsgateError('ABORTED', 'This session is closed; no command can start in it.')
    const L = ctx.limits
    if (this.running >= L.backgroundTasksPerSession || this.pool.running.size >= L.backgroundTasks) {
      const mine = this.list().filter((t) => t.status === 'running')
      const which = mine.length > 0 ? ` Running now: ${mine.map((t) => `${t.id} (${clip(t.command, 60)})`).join(', ')}.` : ''
      const cap = this.running >= L.backgroundTasksPerSession ? `${L.backgroundTasksPerSession} in this session` : `${L.backgroundTasks} in all`
      throw new FsgateError('RATE_LIMITED', `Too many background commands are running (at most ${cap}).${which} Stop one you no longer need, or wait for one to end.`, {
        data: { running: mine.map((t) => t.id) },
      })
    }
  }

  /** Adds a started task; the oldest finished ones beyond the kept number are forgotten. */
  add(task: Task): void {
    this.tasks.set(task.id, task)
    this.pool.running.add(task)
    const finished = this.list().filter((t) => t.status !== 'running')
    for (const old of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED))) this.tasks.delete(old.id)
  }

  /** Called when a task has ended. */
  ended(task: Task): void {
    this.pool.running.delete(task)
  }
}

/** What the shell tool hands over to start a command in the background. */
export interface BackgroundStart {
  command: string
  /** The call's own timeout, in seconds. */
  timeoutSecs?: number
  /** How long to wait before answering, to show the first output (gemini-cli's delay_ms). */
  delayMs?: number
  backend: SandboxBackend
  launch: Launch
}

/**
 * Starts a command in the background and answers at once (or after `delayMs`) with its
 * task id. The launch (the sandbox chosen at admission) is the one a foreground run would
 * use; what it made, and the git paths a command may not change, are put back when the
 * command ends.
 */
export async function startBackground(ctx: ToolContext, start: BackgroundStart): Promise<ToolOutput> {
  try {
    ctx.tasks.checkRoom(ctx)
  } catch (err) {
    await start.launch.done().catch(() => {})
    throw err
  }
  const task = new Task(start.command, start.backend, shellTimeoutSecs(start.timeoutSecs, true, ctx), ctx.limits)
  // The git guard of a foreground command (tools/shell.ts), held while the task runs.
  const listLinks = (root: string) => listGitlinks(ctx, root)
  let guarded: GitGuard | null = null
  try {
    guarded = start.backend === 'none' ? null : await enterGitGuard([ctx.workspace, ...ctx.allowedPaths], listLinks, start.backend === 'bwrap' ? 'mounted' : 'checked')
  } catch (err) {
    await start.launch.done().catch(() => {})
    throw err
  }
  const stop = ctx.stop.signal
  const onStop = () => task.stop('emergency stop')
  stop.addEventListener('abort', onStop, { once: true })
  let started!: () => void
  const running = new Promise<void>((resolve) => {
    started = resolve
  })
  ctx.tasks.add(task)
  const run = runProcess({
    file: start.launch.file,
    args: start.launch.args,
    cwd: ctx.workspace,
    env: { ...childEnv(process.env, ctx.envPassthrough), ...start.launch.env },
    timeoutMs: task.timeoutSecs * 1000,
    // The log keeps what is read; the run's own buffer only its last words.
    maxOutputBytes: 4096,
    signal: task.signalToStop,
    registry: ctx.processes,
    // As in the foreground: bwrap's PID namespace and Landlock's filter keep every process in reach.
    sweep: start.backend === 'none' || start.backend === 'seatbelt',
    confine: start.launch.confine,
    onSpawn: (pid) => {
      task.pid = pid
      started()
    },
    onOutput: (stream, chunk) => task.log.push(stream, chunk),
  })
  task.done = run.then(
    (r) => finish(task, r),
    (err: unknown) => {
      task.status = 'failed'
      task.log.push('stderr', Buffer.from(`[the command could not be started: ${err instanceof Error ? err.message : String(err)}]\n`))
    },
  ).finally(async () => {
    started()
    task.log.end()
    task.endedAt = Date.now()
    stop.removeEventListener('abort', onStop)
    ctx.tasks.ended(task)
    if (!guarded) {
      await start.launch.done().catch(() => {})
      return
    }
    const lookIn = start.launch.env.TMPDIR && start.backend !== 'bwrap' ? [start.launch.env.TMPDIR] : []
    const guard = await leaveGitGuard(guarded, listLinks, { shown: (abs) => displayPath(ctx.workspace, abs), lookIn, done: start.launch.done })
    const said = [
      ...(guard.restored.length > 0 ? [`[fsgate put back ${clip(guard.restored.join(', '), 300)}: the command changed them, and they run code later]`] : []),
      ...(guard.quarantined.length > 0 ? [`[fsgate moved aside ${clip(guard.quarantined.join(', '), 300)}: a repository whose config or hooks would run code]`] : []),
      ...(guard.failed.length > 0 ? [`[fsgate could not put back ${clip(guard.failed.join(', '), 300)}: tell the user]`] : []),
    ]
    for (const line of said) task.log.push('stderr', Buffer.from(`${line}\n`))
    task.log.end()
  })
  await running
  if (start.delayMs !== undefined && start.delayMs > 0) {
    // Long enough to catch a command that fails at once; never longer than 30 s.
    await Promise.race([task.done, new Promise((r) => setTimeout(r, Math.min(start.delayMs as number, 30_000)))])
  }
  return backgroundAnswer(task, ctx)
}

function finish(task: Task, r: RunResult): void {
  task.exitCode = r.exitCode
  task.signal = r.signal
  if (r.killed === 'timeout') task.stoppedBy ??= 'timeout'
  if (r.killed === 'stopped') task.stoppedBy ??= 'emergency stop'
  task.status = r.killed || task.stoppedBy ? 'killed' : r.exitCode === 0 ? 'completed' : 'failed'
}

/** The answer to a call that started a task, in the words of the dialect called. */
function backgroundAnswer(task: Task, ctx: ToolContext): ToolOutput {
  const data = {
    backgroundTaskId: task.id,
    taskId: task.id,
    pid: task.pid,
    outputPath: task.outputPath,
    status: task.status,
    stdout: '',
    stderr: '',
    interrupted: false,
    sandbox: task.sandbox,
    timeoutSecs: task.timeoutSecs,
    ...(task.status === 'running' ? {} : { exitCode: task.exitCode }),
  }
  const limit = `It is killed after ${task.timeoutSecs} s, or when this conversation ends.`
  let said: string
  switch (ctx.dialect) {
    case 'claude':
      said = `Command running in background with ID: ${task.id}. Output is being written to: ${task.outputPath}\nRead that path with Read to see its output (offset and limit page it), or wait for it with TaskOutput; stop it with TaskStop. ${limit}`
      break
    case 'gemini':
      said = `Command moved to background (PID: ${task.pid ?? 'unknown'}). Task id: ${task.id}. See its output with task_output (task_id "${task.id}") and stop it with task_stop. ${limit}`
      break
    default:
      said = `Started in the background as task ${task.id}. See its output with task_output and stop it with task_stop. ${limit}`
  }
  if (task.status !== 'running') said += `\nIt has already ended: ${task.describe()}.`
  const early = [...lastLines(task, 20), ...task.log.pending()]
  if (early.length > 0) said += `\nOutput so far:\n${early.join('\n')}`
  return { content: [text(said)], data }
}

function lastLines(task: Task, n: number): string[] {
  const out: string[] = []
  for (let i = Math.max(1, task.log.lines - n + 1); i <= task.log.lines; i++) {
    const line = task.log.line(i)
    if (line !== undefined) out.push(line)
  }
  return out
}

/** Which part of a task's output to show. */
export interface OutputPage {
  /** 1-based first line; absent: the last `limit` lines. */
  offset?: number
  limit?: number
  /** Wait up to this long for the command to end first. */
  waitMs?: number
}

/**
 * A page of a task's output, numbered in the call's line style, fitted to the token
 * limit, with the lines before and after it said.
 */
export async function readTaskOutput(task: Task, page: OutputPage, ctx: ToolContext): Promise<ToolOutput> {
  let waited: 'ended' | 'timeout' | null = null
  if (page.waitMs && page.waitMs > 0 && task.status === 'running') {
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), page.waitMs).unref())
    const aborted = new Promise<'timeout'>((r) => ctx.signal?.addEventListener('abort', () => r('timeout'), { once: true }))
    waited = await Promise.race([task.done.then(() => 'ended' as const), timer, aborted])
  }
  const log = task.log
  const total = log.lines
  const limit = page.limit ?? ctx.limits.readLines
  if (page.offset !== undefined && page.offset > total + 1 && total > 0) {
    throw new InvalidInputError('INVALID_INPUT', `offset ${num(page.offset)} is past the end of task ${task.id}'s output, which has ${num(total)} lines so far.`, {
      data: { field: 'offset', totalLines: total },
    })
  }
  const first = page.offset !== undefined ? Math.max(1, page.offset) : Math.max(1, total - limit + 1)
  const last = Math.min(total, first + limit - 1)
  const rows: string[] = []
  const numbers: number[] = []
  let skipped = 0
  for (let n = first; n <= last; n++) {
    const line = log.line(n)
    if (line === undefined) {
      skipped++
      continue
    }
    rows.push(numbered(n, line, ctx.lineStyle))
    numbers.push(n)
  }
  const fit = await blocksWithin(ctx, rows, pageTokens(ctx.limits.resultTokens))
  const shown = rows.slice(0, fit)
  const end = fit > 0 ? numbers[fit - 1] : first - 1
  const notes: string[] = []
  const gap = log.dropped
  if (gap && skipped > 0) notes.push(`(lines ${num(gap[0])}-${num(gap[1])} were not kept: a task keeps the start and the latest ${num(Math.round(ctx.limits.taskOutputBytes / 1024))} KiB of its output)`)
  if (end < total) notes.push(`… ${num(total - end)} more line${total - end === 1 ? '' : 's'}; continue with offset=${end + 1}`)
  if (first > 1 && page.offset === undefined) notes.unshift(`(the last lines of ${num(total)}; read from the start with offset=1)`)
  const pending = task.status === 'running' ? log.pending() : []
  if (pending.length > 0 && end >= total) notes.push(`(being written: ${pending.join(' | ')})`)
  const state = `[task ${task.id}: ${task.describe()}${waited === 'timeout' ? '; still running after the wait' : ''}]`
  const body = shown.length > 0 ? shown.join('\n') : total === 0 ? '(no output yet)' : ''
  const out = [body, ...notes, state].filter((s) => s !== '').join('\n')
  return {
    content: [text(out)],
    data: {
      taskId: task.id,
      status: task.status,
      exitCode: task.exitCode,
      signal: task.signal,
      stoppedBy: task.stoppedBy,
      startLine: shown.length > 0 ? numbers[0] : 0,
      endLine: shown.length > 0 ? end : 0,
      totalLines: total,
      bytes: log.bytes,
      dropped: gap,
      retrieval: waited === 'timeout' ? 'timeout' : task.status === 'running' ? 'not_ready' : 'success',
    },
  }
}

/** The task an id names in this session, or NOT_FOUND saying which there are. */
export function taskById(ctx: ToolContext, id: string, field: string): Task {
  const task = ctx.tasks.get(id.trim())
  if (task) return task
  const known = ctx.tasks.list().map((t) => `${t.id} (${t.status})`)
  throw new FsgateError('NOT_FOUND', `No background task ${clip(id, 40)} in this conversation.${known.length > 0 ? ` Use one of its tasks: ${clip(known.join(', '), 100)}.` : ' It has started none: start a command in the background first.'}`, {
    data: { field, tasks: ctx.tasks.list().map((t) => t.id) },
  })
}
