/**
 * Running a child process for shell and git (SPEC §3.7, §3.8): no shell of ours in
 * between, its own process group so that a timeout, an abort or an emergency stop kills
 * everything it started, and output held in a bounded buffer (head and tail) while it
 * streams, so a flood costs a fixed amount of memory.
 *
 * Runs on libuv's event loop (pipes and a timer), not on a worker thread: a command that
 * sleeps for a minute holds no thread of the addon's pool. On Linux the child is started
 * by the addon (`posix_spawn` on its I/O pool) rather than by Node's spawn, which forks
 * the host on the JS thread: a fork copies every page table, so its cost grows with the
 * host's memory (7–30 ms a command for a host of 300–400 MiB, by machine), where
 * posix_spawn's does not, and it is paid off the JS thread.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { readdir, readFile } from 'node:fs/promises'
import net from 'node:net'
import { constants } from 'node:os'
import type { Readable, Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'

import { FsgateError } from '../errors.js'
import { callNative, completer, native, type NativeChildExit, type NativeSpawnedChild } from '../native.js'

export interface RunOptions {
  /** The executable; looked up on `env.PATH` when it has no slash. */
  file: string
  args: readonly string[]
  cwd: string
  /** The whole environment of the child: nothing else is inherited. */
  env: Readonly<Record<string, string>>
  timeoutMs: number
  /** Bytes of stdout and stderr kept together; past it the middle is dropped. */
  maxOutputBytes: number
  signal?: AbortSignal
  /** Written to the child's stdin, which is then closed (stdin is empty otherwise). */
  input?: string
  /** Told of the running child, so that an emergency stop can kill it. */
  registry?: ProcessRegistry
  /**
   * Also kill, when the call ends, every process that still carries this run's mark in
   * its environment: those that left the process group (setsid, daemons). Linux only.
   */
  sweep?: boolean
  /**
   * Confines the child with Landlock and seccomp (the 'landlock' sandbox): it may read
   * and run anything, write only beneath `writable` (each must exist) and a few device
   * files, and use no network unless `network`. Needs the native spawn (Linux): without
   * it the run is refused, never run unconfined.
   */
  confine?: { writable: string[]; readable?: string[]; network?: boolean }
  /** Told the child's pid once it has started (background tasks). */
  onSpawn?: (pid: number) => void
  /** Given each chunk of output as it comes, besides the bounded buffer (background tasks). */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void
}

export interface RunResult {
  /** The exit code, or null when a signal ended it. */
  exitCode: number | null
  /** The signal that ended it, e.g. 'SIGKILL'. */
  signal: string | null
  stdout: string
  stderr: string
  /** Bytes the child wrote to each stream, kept or not. */
  stdoutBytes: number
  stderrBytes: number
  /** Whether the middle of the output was dropped. */
  truncated: boolean
  /** Why it was killed, if it was. */
  killed: 'timeout' | 'aborted' | 'stopped' | null
  durationMs: number
}

/** The children running now, so that `emergencyStop()` can kill them all. */
export class ProcessRegistry {
  private readonly running = new Set<(why: 'stopped') => void>()

  /** @internal */
  add(kill: (why: 'stopped') => void): () => void {
    this.running.add(kill)
    return () => this.running.delete(kill)
  }

  /** Kills every running child's process group; returns how many there were. */
  killAll(): number {
    const n = this.running.size
    for (const kill of [...this.running]) kill('stopped')
    return n
  }

  get size(): number {
    return this.running.size
  }
}

/** After the child exits, how long its pipes may stay open before they are cut. */
const DRAIN_MS = 250

/**
 * Runs `file args` and resolves when it has exited and its output is read. Never
 * rejects for the child's own failure (a non-zero exit is a result); rejects only
 * when the process cannot be started (ENOENT, EACCES), with the spawn error.
 */
export function runProcess(options: RunOptions): Promise<RunResult> {
  const started = performance.now()
  const half = Math.max(1, Math.floor(options.maxOutputBytes / 2))
  const out = new HeadTail(half, half)
  const err = new HeadTail(half, half)
  const result = (killed: RunResult['killed'], exit: { code: number | null; signal: string | null } | null): RunResult => {
    const [outBudget, errBudget] = share(options.maxOutputBytes, out.seen, err.seen)
    const stdout = out.text(outBudget)
    const stderr = err.text(errBudget)
    return {
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stdout: stdout.text,
      stderr: stderr.text,
      stdoutBytes: out.seen,
      stderrBytes: err.seen,
      truncated: stdout.cut || stderr.cut,
      killed,
      durationMs: Math.round(performance.now() - started),
    }
  }
  // Cancelled (or stopped) before it began: nothing is started.
  if (options.signal?.aborted) return Promise.resolve(result('aborted', null))
  const mark = options.sweep && process.platform === 'linux' ? `${MARK}=${randomBytes(12).toString('hex')}` : null
  const env = mark ? { ...options.env, [MARK]: mark.slice(MARK.length + 1) } : { ...options.env }
  return start(options.file, options.args, options.cwd, env, options.input !== undefined, options.confine).then((child) => supervise(child))

  function supervise(child: Child): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      let killed: RunResult['killed'] = null
      let exit: { code: number | null; signal: string | null } | null = null
      let settled = false
      const killGroup = (why: NonNullable<RunResult['killed']>) => {
        killed ??= why
        signalGroup(child, 'SIGKILL')
      }
      const timer = setTimeout(() => killGroup('timeout'), options.timeoutMs)
      const onAbort = () => killGroup('aborted')
      options.signal?.addEventListener('abort', onAbort, { once: true })
      const unregister = options.registry?.add(killGroup) ?? (() => {})
      let drain: NodeJS.Timeout | undefined

      const finish = () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        clearTimeout(drain)
        options.signal?.removeEventListener('abort', onAbort)
        unregister()
        child.stdout?.destroy()
        child.stderr?.destroy()
        const done = () => resolve(result(killed, exit))
        // After a kill, every process is looked at; after a plain exit, only those started
        // since the child (pids count up; a wrap of the pid space between the two is missed).
        if (mark) sweep(mark, killed ? 0 : (child.pid ?? 0)).then(done, done)
        else done()
      }

      const onOutput = options.onOutput
      child.stdout?.on('data', (chunk: Buffer) => {
        out.push(chunk)
        onOutput?.('stdout', chunk)
      })
      child.stderr?.on('data', (chunk: Buffer) => {
        err.push(chunk)
        onOutput?.('stderr', chunk)
      })
      if (child.pid !== undefined) options.onSpawn?.(child.pid)
      child.once('error', (e) => {
        if (exit === null && child.pid === undefined) {
          settled = true
          clearTimeout(timer)
          options.signal?.removeEventListener('abort', onAbort)
          unregister()
          reject(e)
        }
      })
      child.once('exit', (code, signal) => {
        exit = { code, signal }
        // Whatever it left behind in its group goes with it: no call leaves processes
        // running after it returns.
        signalGroup(child, 'SIGKILL')
        // A descendant that left the group may still hold the pipes open: cut them after a
        // while. Not from the timer itself: timers run before I/O in an event-loop turn, so
        // after a stall of the JS thread the output waiting in the pipes would be cut
        // unread. An immediate runs after that turn's I/O, which reads it first.
        drain = setTimeout(() => setImmediate(finish), DRAIN_MS)
      })
      child.once('close', finish)
      if (options.input !== undefined && child.stdin) {
        child.stdin.on('error', () => {})
        child.stdin.end(options.input)
      }
      if (options.signal?.aborted) onAbort()
    })
  }
}

/** A started child, whichever way it was started: Node's ChildProcess has this shape. */
interface Child extends EventEmitter {
  readonly pid?: number
  readonly stdin: Writable | null
  readonly stdout: Readable | null
  readonly stderr: Readable | null
  kill(signal?: NodeJS.Signals): boolean
}

/** Whether children are started by the addon (Linux), or by Node's spawn. */
const NATIVE_SPAWN = native.nativeSpawnAvailable() && process.env.FSGATE_NODE_SPAWN !== '1'

/** How children are started in this process: by the addon, or by Node's spawn. @internal */
export const childStarter: 'native' | 'node' = NATIVE_SPAWN ? 'native' : 'node'

/**
 * Starts `file args` in a new session and process group (so that `kill(-pid)` reaches
 * every descendant that did not leave it on purpose), with piped output and, when
 * `withInput`, piped input. A program that cannot be started rejects with an error whose
 * `code` is ENOENT or EACCES, as Node's spawn does.
 */
async function start(
  file: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  withInput: boolean,
  confine: RunOptions['confine'],
): Promise<Child> {
  if (!NATIVE_SPAWN && confine) {
    throw new Error(
      `landlock confinement needs the native spawn (Linux, without FSGATE_NODE_SPAWN=1); ${file} was not run, rather than run unconfined`,
    )
  }
  if (!NATIVE_SPAWN) {
    return spawn(file, args, { cwd, env, detached: true, stdio: [withInput ? 'pipe' : 'ignore', 'pipe', 'pipe'], windowsHide: true })
  }
  const started = await callNative<NativeSpawnedChild>((id) =>
    native.spawnChild(completer, id, {
      file,
      args: [...args],
      env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      cwd,
      stdin: withInput,
      confine: confine && { writable: [...confine.writable], readable: confine.readable && [...confine.readable], network: confine.network },
    }),
  ).catch((err: unknown) => {
    throw spawnError(err, file)
  })
  return new SpawnedChild(started)
}

/** A child the addon started: its pipes as sockets, its end from the addon's wait. */
class SpawnedChild extends EventEmitter implements Child {
  readonly pid: number
  readonly stdin: Writable | null
  readonly stdout: Readable
  readonly stderr: Readable
  private exited = false
  private open = 2

  constructor(started: NativeSpawnedChild) {
    super()
    this.pid = started.pid
    this.stdout = new net.Socket({ fd: started.stdout, readable: true, writable: false })
    this.stderr = new net.Socket({ fd: started.stderr, readable: true, writable: false })
    this.stdin = started.stdin == null ? null : new net.Socket({ fd: started.stdin, readable: false, writable: true })
    for (const stream of [this.stdout, this.stderr]) {
      stream.once('close', () => {
        this.open--
        this.closeIfDone()
      })
    }
    callNative<NativeChildExit>((id) => native.waitChild(completer, id, started.pid)).then(
      (exit) => this.ended(exit.code ?? null, exit.signal == null ? null : signalName(exit.signal)),
      () => this.ended(null, null),
    )
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exited) return false
    try {
      process.kill(this.pid, signal)
      return true
    } catch {
      return false
    }
  }

  private ended(code: number | null, signal: string | null): void {
    this.exited = true
    this.emit('exit', code, signal)
    this.closeIfDone()
  }

  /** 'close' as Node has it: after the exit, once both output pipes are closed. */
  private closeIfDone(): void {
    if (this.exited && this.open === 0) this.emit('close')
  }
}

/** The name of a signal number, e.g. 9 → 'SIGKILL'. */
function signalName(n: number): string {
  return Object.entries(constants.signals).find(([, v]) => v === n)?.[0] ?? `SIG${n}`
}

/** The addon's refusal to start a program, as Node's spawn reports it (code ENOENT, EACCES). */
function spawnError(err: unknown, file: string): unknown {
  if (!(err instanceof FsgateError)) return err
  const code = err.code === 'NOT_FOUND' ? 'ENOENT' : err.code === 'PERMISSION_DENIED' ? 'EACCES' : undefined
  return Object.assign(new Error(`spawn ${file} ${code ?? err.code}: ${err.message}`), { code: code ?? err.code, path: file, syscall: `spawn ${file}` })
}

/** The environment variable that marks a run's processes for the sweep. */
const MARK = 'FSGATE_RUN'

/**
 * Kills every process above pid `after` whose environment carries `mark` (the
 * `NAME=value` string), in a few passes in case one forks while it is read. Processes of other users, and those
 * that cleared their environment on purpose, are out of its reach.
 */
async function sweep(mark: string, after: number): Promise<void> {
  const needle = Buffer.from(`\0${mark}\0`)
  const first = Buffer.from(`${mark}\0`)
  for (let pass = 0; pass < 3; pass++) {
    const pids = (await readdir('/proc')).filter((e) => /^\d+$/.test(e) && Number(e) > after && Number(e) !== process.pid)
    const marked = await Promise.all(
      pids.map(async (pid) => {
        try {
          const env = await readFile(`/proc/${pid}/environ`)
          return env.includes(needle) || env.subarray(0, first.length).equals(first) ? Number(pid) : 0
        } catch {
          return 0
        }
      }),
    )
    const found = marked.filter((pid) => pid > 0)
    if (found.length === 0) return
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // Gone already.
      }
    }
  }
}

/** Splits the output budget: a stream that needs less than half gives the rest to the other. */
function share(keep: number, a: number, b: number): [number, number] {
  if (a + b <= keep) return [a, b]
  const half = Math.floor(keep / 2)
  if (b <= half) return [keep - b, b]
  if (a <= half) return [a, keep - a]
  return [half, keep - half]
}

function signalGroup(child: Child, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // The group is already gone (or, on Windows, there are no groups).
    try {
      child.kill(signal)
    } catch {
      // Already exited.
    }
  }
}

/**
 * The first `headMax` bytes and the last `tailMax` bytes of a stream, and how many it
 * had. Bytes are copied into one head buffer (grown by doubling up to `headMax`) and one
 * ring buffer of `tailMax` (made when the head is full), so memory stays at most
 * `headMax + tailMax` and each chunk costs a copy, however many tiny chunks come.
 */
export class HeadTail {
  seen = 0
  private head = Buffer.alloc(0)
  private headLen = 0
  private ring: Buffer | null = null
  /** Where the next tail byte goes in the ring. */
  private ringPos = 0
  private ringLen = 0

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  /** Bytes held now. */
  get held(): number {
    return this.headLen + this.ringLen
  }

  /** Bytes allocated now. */
  get allocated(): number {
    return this.head.length + (this.ring?.length ?? 0)
  }

  push(chunk: Buffer): void {
    this.seen += chunk.length
    if (this.headLen < this.headMax) {
      const take = Math.min(chunk.length, this.headMax - this.headLen)
      if (this.headLen + take > this.head.length) {
        const grown = Buffer.alloc(Math.min(this.headMax, Math.max(this.headLen + take, this.head.length * 2, 4096)))
        this.head.copy(grown, 0, 0, this.headLen)
        this.head = grown
      }
      chunk.copy(this.head, this.headLen, 0, take)
      this.headLen += take
      chunk = chunk.subarray(take)
      if (chunk.length === 0) return
    }
    if (!this.ring) this.ring = Buffer.alloc(this.tailMax)
    const ring = this.ring
    if (chunk.length >= ring.length) {
      chunk.copy(ring, 0, chunk.length - ring.length)
      this.ringPos = 0
      this.ringLen = ring.length
      return
    }
    const first = Math.min(chunk.length, ring.length - this.ringPos)
    chunk.copy(ring, this.ringPos, 0, first)
    chunk.copy(ring, 0, first)
    this.ringPos = (this.ringPos + chunk.length) % ring.length
    this.ringLen = Math.min(ring.length, this.ringLen + chunk.length)
  }

  /**
   * The stream as text in at most `budget` bytes: all of it when it fits, else its start
   * and its end around a marker that says how much was left out. Cuts fall on line
   * breaks where one is near, and never inside a UTF-8 character.
   */
  text(budget: number): { text: string; cut: boolean } {
    const headAll = this.head.subarray(0, this.headLen)
    const tailAll = this.tail()
    if (this.seen <= budget && this.seen === headAll.length + tailAll.length) {
      return { text: decode(Buffer.concat([headAll, tailAll])), cut: false }
    }
    const headKeep = snapBack(headAll.subarray(0, Math.min(headAll.length, Math.ceil(budget / 2))))
    const tailKeep = snapForward(tailAll.subarray(Math.max(0, tailAll.length - Math.floor(budget / 2))))
    const dropped = this.seen - headKeep.length - tailKeep.length
    const marker = `\n[... ${dropped.toLocaleString('en-US')} bytes of output omitted; ${this.seen.toLocaleString('en-US')} in all ...]\n`
    return { text: decode(headKeep) + marker + decode(tailKeep), cut: true }
  }

  /** The tail bytes in order. */
  private tail(): Buffer {
    if (!this.ring) return Buffer.alloc(0)
    if (this.ringLen < this.ring.length) return this.ring.subarray(0, this.ringLen)
    return Buffer.concat([this.ring.subarray(this.ringPos), this.ring.subarray(0, this.ringPos)])
  }
}

function decode(bytes: Buffer): string {
  const d = new StringDecoder('utf8')
  return d.write(bytes) + d.end()
}

/** Ends the head at the last line break in its final 4 KiB, or at a character boundary. */
function snapBack(b: Buffer): Buffer {
  const nl = b.lastIndexOf(0x0a)
  if (nl >= 0 && b.length - nl <= 4096) return b.subarray(0, nl + 1)
  let end = b.length
  // Step back over continuation bytes to the start of a whole character.
  let i = end - 1
  while (i >= 0 && end - i <= 4 && (b[i] & 0xc0) === 0x80) i--
  if (i >= 0) {
    const lead = b[i]
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
    if (end - i < need) end = i
  }
  return b.subarray(0, end)
}

/** Starts the tail after the first line break in its first 4 KiB, or at a character boundary. */
function snapForward(b: Buffer): Buffer {
  const nl = b.indexOf(0x0a)
  if (nl >= 0 && nl < 4096) return b.subarray(nl + 1)
  let start = 0
  while (start < b.length && start < 4 && (b[start] & 0xc0) === 0x80) start++
  return b.subarray(start)
}
