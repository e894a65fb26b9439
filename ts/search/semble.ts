/**
 * The Semble sidecar of `semantic_code_search`: finds a `semble` binary on PATH and runs
 * `semble search` as a child process, with an argv array (never a shell), a deadline, an
 * abort signal and a byte cap on what it prints.
 *
 * Semble (github.com/MinishLab/semble) is a Python CLI. Every release takes
 * `semble search [-k N] QUERY [PATH]`; the invocation here is
 * `semble search -k N -- QUERY .` run in the searched folder, so the query stays one
 * positional argument even when it starts with `-`, and PATH is never mistaken for a git
 * URL. Two output formats are read:
 * - v0.4 and later print one JSON object: `{"query", "results": [{"file_path",
 *   "start_line", "end_line", "score", "semantic_score", "content"}]}`, or
 *   `{"error": "No results found."}`. (`content` is absent under `--max-snippet-lines 0`.)
 * - earlier releases print Markdown: a header line, then per hit
 *   `## 1. src/auth.py:12-40  [score=0.812]` and a fenced block of the chunk, or the
 *   line `No results found.`.
 * Chunk paths are relative to the searched folder in both.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

/** One chunk Semble ranked. */
export interface SembleHit {
  /** The file, as Semble printed it: relative to the searched folder when it is. */
  path: string
  /** First line of the chunk, 1-based. */
  startLine: number
  /** Last line of the chunk, 1-based, inclusive. */
  endLine: number
  score?: number
  /** The chunk's text ('' when Semble printed none). */
  snippet: string
}

export type SembleFailure = 'exit' | 'timeout' | 'parse' | 'aborted' | 'spawn'

/** Why a Semble run failed; `message` is written for the model. */
export class SembleError extends Error {
  readonly reason: SembleFailure
  /** The exit code, for reason 'exit'. */
  readonly exitCode?: number | null
  /** What Semble wrote to stderr (up to 64 KiB), when it wrote anything. */
  readonly stderr?: string

  constructor(reason: SembleFailure, message: string, details: { exitCode?: number | null; stderr?: string } = {}) {
    super(message)
    this.name = new.target.name
    this.reason = reason
    if (details.exitCode !== undefined) this.exitCode = details.exitCode
    if (details.stderr) this.stderr = details.stderr
  }
}

/**
 * The environment Semble runs with: what a Python program and Semble's model cache need,
 * and nothing else of the host's (no API keys or tokens reach a sidecar).
 */
export function sembleEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const keep = /^(PATH|PATHEXT|HOME|USER|LOGNAME|LANG|LANGUAGE|TZ|TERM|TMPDIR|TEMP|TMP|SYSTEMROOT|SYSTEMDRIVE|WINDIR|COMSPEC|APPDATA|LOCALAPPDATA|USERPROFILE|VIRTUAL_ENV|LC_\w+|XDG_\w+|HF_\w+|HUGGINGFACE_\w+|SEMBLE_\w+|UV_\w+|PYTHON\w*)$/i
  const out: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(env)) if (keep.test(k)) out[k] = v
  return out
}

export interface RunSembleOptions {
  /** How long Semble may take, indexing included. By default, 20 s. */
  timeoutMs?: number
  signal?: AbortSignal
  /** The child's environment. By default, `process.env`. */
  env?: NodeJS.ProcessEnv
}

const DEFAULT_TIMEOUT_MS = 20_000
const STDOUT_CAP = 4 * 1024 * 1024
const STDERR_CAP = 64 * 1024
const STDERR_IN_MESSAGE = 500
const FALLBACK = "use backend='literal'"

// ---------------------------------------------------------------------------------------
// Finding the binary

const found = new Map<string, string>()

/**
 * The `semble` binary on PATH (PATH and PATHEXT on Windows), or undefined; cached per
 * PATH value (a miss is looked up again next time). Relative PATH entries are skipped, so a `semble` inside the workspace is
 * never picked up through `.`; on Windows only `.exe` and `.com` count, because a
 * `.cmd` or `.bat` shim can only be run through a shell.
 */
export function findSemble(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const windows = process.platform === 'win32'
  const searchPath = envValue(env, 'PATH', windows) ?? ''
  const pathExt = windows ? (envValue(env, 'PATHEXT', windows) ?? '.COM;.EXE') : ''
  const key = `${searchPath}\0${pathExt}`
  const known = found.get(key)
  if (known !== undefined && isExecutable(known, windows)) return known
  const names = windows
    ? pathExt
        .split(';')
        .map((ext) => ext.trim().toLowerCase())
        .filter((ext) => ext === '.exe' || ext === '.com')
        .map((ext) => `semble${ext}`)
    : ['semble']
  let bin: string | undefined
  outer: for (const raw of searchPath.split(path.delimiter)) {
    const dir = windows ? raw.replace(/^"(.*)"$/, '$1') : raw
    if (!dir || !path.isAbsolute(dir)) continue
    for (const name of names) {
      const candidate = path.join(dir, name)
      if (isExecutable(candidate, windows)) {
        bin = candidate
        break outer
      }
    }
  }
  // Only a hit is remembered: a model told to install Semble may retry at once.
  if (bin) found.set(key, bin)
  return bin
}

/** `env[name]`, matched without regard to case on Windows (where it is often `Path`). */
function envValue(env: NodeJS.ProcessEnv, name: string, windows: boolean): string | undefined {
  if (!windows) return env[name]
  const key = Object.keys(env).find((k) => k.toUpperCase() === name)
  return key === undefined ? undefined : env[key]
}

function isExecutable(file: string, windows: boolean): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false
    if (!windows) fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------
// Running it

/**
 * Runs `semble search` in `dir` for `query`, at most `topK` hits. Rejects with a
 * SembleError on a non-zero exit, a timeout (default 20 s; the process tree is killed),
 * output it cannot parse (or more than 4 MiB of it), a failed start, or an aborted signal.
 */
export function runSemble(bin: string, query: string, dir: string, topK: number, opts: RunSembleOptions = {}): Promise<SembleHit[]> {
  if (!Number.isInteger(topK) || topK < 1) return Promise.reject(new RangeError(`topK must be a positive integer, got ${topK}`))
  const { signal } = opts
  if (signal?.aborted) return Promise.reject(abortedError())
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const baseEnv = sembleEnv(opts.env ?? process.env)
  // Python on Windows would otherwise print non-ASCII paths and snippets in the console code page.
  const env = baseEnv.PYTHONIOENCODING ? baseEnv : { ...baseEnv, PYTHONIOENCODING: 'utf-8' }
  const windows = process.platform === 'win32'

  return new Promise<SembleHit[]>((resolve, reject) => {
    let child: ChildProcess
    try {
      child = spawn(bin, ['search', '-k', String(topK), '--', query, '.'], {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
        // Its own process group on POSIX, so a kill reaches whatever Semble started too.
        detached: !windows,
      })
    } catch (err) {
      reject(spawnError(bin, err))
      return
    }

    const stdout: Buffer[] = []
    let stdoutBytes = 0
    const stderr: Buffer[] = []
    let stderrBytes = 0
    let settled = false

    const finish = (err: SembleError | undefined, hits?: SembleHit[]): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (err) reject(err)
      else resolve(hits ?? [])
    }
    const stop = (err: SembleError): void => {
      if (settled) return
      killTree(child, windows)
      child.stdout?.destroy()
      child.stderr?.destroy()
      finish(err)
    }
    const onAbort = (): void => stop(abortedError())

    const timer = setTimeout(() => {
      stop(
        new SembleError(
          'timeout',
          `Semble did not answer within ${formatSeconds(timeoutMs)} (indexing a large folder takes a while on first use). Retry, search a smaller folder, or ${FALLBACK}.`,
          { stderr: text(stderr) },
        ),
      )
    }, timeoutMs)
    signal?.addEventListener('abort', onAbort, { once: true })

    child.stdout?.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length
      if (stdoutBytes > STDOUT_CAP) {
        stop(new SembleError('parse', `Semble printed more than ${STDOUT_CAP / 1024 / 1024} MiB, more than a search answer can be. Ask for fewer results or ${FALLBACK}.`))
        return
      }
      stdout.push(chunk)
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderrBytes >= STDERR_CAP) return
      const room = STDERR_CAP - stderrBytes
      stderr.push(chunk.length > room ? chunk.subarray(0, room) : chunk)
      stderrBytes += Math.min(chunk.length, room)
    })
    child.on('error', (err) => finish(spawnError(bin, err)))
    child.on('close', (code, killedBy) => {
      if (settled) return
      const errText = text(stderr)
      if (code !== 0) {
        const how = code === null ? `was killed by ${killedBy ?? 'a signal'}` : `exited with code ${code}`
        const said = errText.trim() ? `: ${stderrExcerpt(errText)}` : ' and printed nothing on stderr'
        finish(new SembleError('exit', `Semble ${how}${said}. Fix the cause or ${FALLBACK}.`, { exitCode: code, stderr: errText }))
        return
      }
      try {
        finish(undefined, parseSembleOutput(text(stdout)).slice(0, topK))
      } catch (err) {
        finish(err instanceof SembleError ? err : new SembleError('parse', String(err)))
      }
    })
  })
}

/** Kills the child and, on POSIX, every process in its group; on Windows, its whole tree. */
function killTree(child: ChildProcess, windows: boolean): void {
  const pid = child.pid
  if (pid === undefined) return
  if (windows) {
    const killer = spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true })
    killer.on('error', () => child.kill())
    return
  }
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    child.kill('SIGKILL')
  }
}

function abortedError(): SembleError {
  return new SembleError('aborted', 'The semantic search was aborted.')
}

function spawnError(bin: string, err: unknown): SembleError {
  const why = err instanceof Error ? err.message : String(err)
  return new SembleError('spawn', `Could not start Semble (${bin}): ${why}. Reinstall it with pip install semble or uv tool install semble, or ${FALLBACK}.`)
}

function text(chunks: Buffer[]): string {
  return Buffer.concat(chunks).toString('utf8')
}

/** The first 500 characters of stderr, plus the exception line of a Python traceback cut off by them. */
function stderrExcerpt(stderr: string): string {
  const trimmed = stderr.trim()
  if (trimmed.length <= STDERR_IN_MESSAGE) return trimmed
  const head = `${trimmed.slice(0, STDERR_IN_MESSAGE)}…`
  if (!trimmed.includes('Traceback (most recent call last)')) return head
  const last = trimmed.slice(trimmed.lastIndexOf('\n') + 1).trim()
  return last ? `${head} ${last.slice(0, STDERR_IN_MESSAGE)}` : head
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
}

// ---------------------------------------------------------------------------------------
// Reading its answer

const NO_RESULTS = /^No results found\.?$/i
/** `## 3. path:12-40  [score=0.812]`; the oldest releases add ` (symbol)` after the range. */
const HEADING = /^## \d+\. (.+):(\d+)-(\d+)(?: \([^()]*\))?\s+\[score=([^\]]*)\]\s*$/
const FENCE = /^(`{3,}|~{3,})[^`]*$/

/** Reads what `semble search` printed, in the JSON (v0.4+) or Markdown (earlier) format. */
export function parseSembleOutput(stdout: string): SembleHit[] {
  const out = stdout.replace(/^\uFEFF/, '').trim()
  if (!out) throw parseError('it printed nothing')
  if (NO_RESULTS.test(out)) return []
  const json = jsonPayload(out)
  if (json !== undefined) return fromJson(json)
  if (/^## \d+\. /m.test(out)) return fromMarkdown(out)
  throw parseError(`it printed ${JSON.stringify(out.slice(0, 80))}${out.length > 80 ? '…' : ''}`)
}

function parseError(why: string): SembleError {
  return new SembleError('parse', `Semble's answer could not be read (${why}). Update Semble (pip install -U semble) or ${FALLBACK}.`)
}

/** The JSON object Semble printed: the whole output, or its last line that is one (after log lines). */
function jsonPayload(out: string): unknown {
  const tryParse = (s: string): unknown => {
    try {
      return JSON.parse(s)
    } catch {
      return undefined
    }
  }
  if (out.startsWith('{') || out.startsWith('[')) {
    const whole = tryParse(out)
    if (whole !== undefined) return whole
  }
  const lines = out.split(/\r?\n/)
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim()
    if (!line.startsWith('{')) continue
    const value = tryParse(line)
    if (value !== undefined) return value
  }
  return undefined
}

function fromJson(value: unknown): SembleHit[] {
  let entries: unknown
  if (Array.isArray(value)) {
    entries = value
  } else if (isRecord(value)) {
    if (Array.isArray(value.results)) entries = value.results
    else if (typeof value.error === 'string') {
      if (NO_RESULTS.test(value.error.trim())) return []
      throw parseError(`it answered with the error ${JSON.stringify(value.error)}`)
    }
  }
  if (!Array.isArray(entries)) throw parseError('the JSON has no results list')
  return entries.map((entry, i) => jsonHit(entry, i))
}

/** One result: flat (`file_path`, `start_line`, …) as Semble prints it, or nested under `chunk`. */
function jsonHit(entry: unknown, i: number): SembleHit {
  if (!isRecord(entry)) throw parseError(`result ${i + 1} is not an object`)
  const chunk = isRecord(entry.chunk) ? entry.chunk : entry
  const file = chunk.file_path
  const start = chunk.start_line
  const end = chunk.end_line
  const content = chunk.content ?? entry.content ?? ''
  if (typeof file !== 'string' || !file) throw parseError(`result ${i + 1} has no file_path`)
  if (!isLine(start) || !isLine(end) || end < start) throw parseError(`result ${i + 1} has no valid start_line and end_line`)
  if (typeof content !== 'string') throw parseError(`result ${i + 1} has a content that is not text`)
  // Line chunks keep their last newline; the Markdown format strips it, and so does this.
  const hit: SembleHit = { path: file, startLine: start, endLine: end, snippet: content.replace(/\r?\n$/, '') }
  if (typeof entry.score === 'number' && Number.isFinite(entry.score)) hit.score = entry.score
  return hit
}

function fromMarkdown(out: string): SembleHit[] {
  const lines = out.split(/\r?\n/)
  const hits: SembleHit[] = []
  let i = 0
  while (i < lines.length) {
    const m = HEADING.exec(lines[i])
    i++
    if (!m) continue
    const start = Number(m[2])
    const end = Number(m[3])
    if (!isLine(start) || !isLine(end) || end < start) throw parseError(`the hit at ${m[1]} has no valid line range`)
    const score = Number(m[4])
    const hit: SembleHit = { path: m[1], startLine: start, endLine: end, snippet: '' }
    if (m[4].trim() && Number.isFinite(score)) hit.score = score
    // Lines before the fence (a blank line, a `repo:` line) belong to no snippet.
    while (i < lines.length && !HEADING.test(lines[i]) && !FENCE.test(lines[i])) i++
    const open = i < lines.length ? FENCE.exec(lines[i]) : null
    if (open) {
      const fence = open[1]
      const body: string[] = []
      i++
      while (i < lines.length && !closes(lines[i], fence)) body.push(lines[i++])
      i++
      hit.snippet = body.join('\n')
    }
    hits.push(hit)
  }
  if (hits.length === 0) throw parseError('no result headings were found')
  return hits
}

/** Whether `line` closes a block opened by `fence` (same character, at least as long, nothing else). */
function closes(line: string, fence: string): boolean {
  const t = line.trimEnd()
  return t.length >= fence.length && t === fence[0].repeat(t.length)
}

function isLine(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
