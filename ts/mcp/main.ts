/**
 * `fsgate mcp` (SPEC §7): serves every tool over MCP, on stdio by default or on Streamable
 * HTTP with `--http [host:]port`. The CLI calls `mcpMain(argv)` with the arguments after
 * `mcp` and exits with the number it resolves to once the server has stopped (the
 * client closed stdio, or SIGINT/SIGTERM): 0 after a clean stop, 2 for a usage or
 * configuration error, 1 when the server could not run.
 *
 * Everything the server says goes to stderr: on stdio, stdout is the protocol.
 *
 * Over HTTP each MCP session (the `mcp-session-id` the transport issues) is its own
 * connection with its own fsgate Session; every connection shares the toolkits. The
 * endpoint is `/mcp`; `GET /healthz` answers `ok` without a token (it says nothing but
 * that the process is up, and probes seldom carry credentials). Streams are resumable:
 * every SSE event has an id, each stream opens with a priming event and `retry:`, and a
 * client that lost one reconnects with Last-Event-ID (events.ts). A bearer token, when
 * set, is checked before anything else; it is required whenever the server listens
 * beyond loopback, since the tools include a shell. On loopback, requests whose Host or
 * Origin is not loopback are refused, so a web page cannot reach the server through DNS
 * rebinding or a cross-site request.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import { appendFileSync, chmodSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { isIP } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'

import type { Limits } from '../limits.js'
import { BoundedEventStore } from './events.js'
import { isPresetName, type Dialect, type PresetName } from '../policy/presets.js'
import { PHRASE_FILE } from '../policy/protected.js'
import type { PolicyOptions } from '../toolkit.js'
import { createMcpServer, createMcpToolkits, type McpServerOptions, type McpToolkits } from './server.js'

const HELP = `fsgate mcp — serve fsgate's tools over the Model Context Protocol

Usage:
  fsgate mcp [--workspace DIR] [--preset P] [--dialect D] [--roots] [--http [HOST:]PORT] [--token T] [--config FILE]

Options:
  --workspace DIR     The workspace the tools work in (default: the current folder)
  --preset P          guarded (default) | claude-code | revka | consent | gemini-cli
  --dialect D         Which tool names to list: claude | revka | consent | anthropic | codex | gemini | all (default: the preset's)
  --roots             Take the client's MCP Roots (the folders open in it) as the session's
                      allowed folders; without --workspace the first root is the workspace
  --http [HOST:]PORT  Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
                      (HOST defaults to 127.0.0.1; PORT 0 picks a free port)
  --token T           Require "Authorization: Bearer T" over HTTP (or set FSGATE_MCP_TOKEN,
                      which other users cannot see in the process list); required when
                      HOST is not a loopback address
  --config FILE       JSON: { "workspace", "preset", "dialect", "roots", "policy", "limits" };
                      flags override it, relative paths in it resolve from its folder
  -h, --help          Show this help

Consent and approval of risky commands are asked through MCP elicitation when the
client supports it; otherwise the one-time phrase flow applies, and the phrase goes
to the terminal this server runs in, or, when stderr is no terminal, to the private
file ~/.local/state/fsgate/phrases.log (hidden from sandboxed commands); never to the
client. With policy.network and --http, FSGATE_MCP_TOKEN is required.
`

const DIALECTS = new Set(['claude', 'revka', 'consent', 'anthropic', 'codex', 'gemini', 'all'])
const CONFIG_KEYS = new Set(['workspace', 'preset', 'dialect', 'roots', 'policy', 'limits'])

/** The settings of one run, after the config file and the flags. */
interface Settings {
  workspace: string
  /** Whether the workspace was given (flag or config), rather than the current folder. */
  workspaceGiven: boolean
  roots: boolean
  preset?: PresetName
  dialect?: Dialect | 'all'
  policy?: PolicyOptions
  limits?: Partial<Limits>
  http?: { host: string; port: number }
  token?: string
}

/** A usage or configuration error: the message is printed and the exit code is 2. */
class UsageError extends Error {}

/** Runs `fsgate mcp`; resolves to the exit code once the server has stopped. */
export async function mcpMain(argv: string[]): Promise<number> {
  const log = (line: string) => process.stderr.write(`fsgate mcp: ${line}\n`)
  let settings: Settings | 'help'
  let toolkits: McpToolkits
  try {
    settings = parseSettings(argv)
    if (settings === 'help') {
      process.stdout.write(HELP)
      return 0
    }
    const { workspace, preset, policy, limits, dialect } = settings
    toolkits = createMcpToolkits({ workspace, preset, policy, limits, ...(dialect && dialect !== 'all' ? { dialect } : {}) })
  } catch (err) {
    // createToolkit reports bad options (workspace, policy, limits) as TypeError.
    if (!(err instanceof UsageError || err instanceof TypeError)) throw err
    log(`${err.message.replace(/^fsgate: /, '')}\n\n${HELP}`)
    return 2
  }
  const progress = positiveEnv('FSGATE_MCP_PROGRESS_MS')
  const options: McpServerOptions = {
    dialect: settings.dialect,
    log,
    tellUser: phraseChannel(log),
    roots: settings.roots,
    rootsWorkspace: settings.roots && !settings.workspaceGiven,
    progressIntervalMs: progress,
  }
  return settings.http ? serveHttp(toolkits, options, settings.http, settings.token, log) : serveStdio(toolkits, options, log)
}

function parseSettings(argv: string[]): Settings | 'help' {
  let values: ReturnType<typeof parseFlags>['values']
  try {
    values = parseFlags(argv).values
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  if (values.help) return 'help'
  const config = values.config !== undefined ? readConfig(values.config) : {}
  const preset = values.preset ?? config.preset
  if (preset !== undefined && !isPresetName(preset)) throw new UsageError(`unknown preset '${preset}'`)
  const dialect = values.dialect ?? config.dialect
  if (dialect !== undefined && !DIALECTS.has(dialect)) throw new UsageError(`unknown dialect '${dialect}' (claude, revka, consent, anthropic, codex, gemini or all)`)
  const settings: Settings = {
    workspace: path.resolve(values.workspace ?? config.workspace ?? '.'),
    workspaceGiven: (values.workspace ?? config.workspace) !== undefined,
    roots: values.roots === true || config.roots === true,
    preset: preset as PresetName | undefined,
    dialect: dialect as Dialect | 'all' | undefined,
    policy: config.policy,
    limits: config.limits,
  }
  if (values.http !== undefined) {
    settings.http = parseListen(values.http)
    const token = values.token ?? process.env.FSGATE_MCP_TOKEN
    if (token !== undefined && token !== '') settings.token = token
    else if (!isLoopback(settings.http.host)) {
      throw new UsageError(`listening on ${settings.http.host} exposes the tools (a shell among them) beyond this machine: set a bearer token with --token or FSGATE_MCP_TOKEN`)
    }
    // With the network, a sandboxed command reaches this server too: without a token it
    // could open a session of its own, answer its own approval questions (elicitation)
    // and so run anything, outside the sandbox too. Under Landlock it can also read this
    // process's command line, so the token must come from the environment.
    if (config.policy?.network === true) {
      if (settings.token === undefined || values.token !== undefined) {
        throw new UsageError(
          'policy.network lets sandboxed commands reach this server, which could then approve their own commands: set a bearer token in FSGATE_MCP_TOKEN (not --token, which a sandboxed command can read in the process list)',
        )
      }
    }
  } else if (values.token !== undefined) {
    throw new UsageError('--token applies only with --http')
  }
  return settings
}

function parseFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: false,
    options: {
      workspace: { type: 'string' },
      preset: { type: 'string' },
      dialect: { type: 'string' },
      roots: { type: 'boolean' },
      http: { type: 'string' },
      token: { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

interface ConfigFile {
  workspace?: string
  preset?: string
  dialect?: string
  roots?: boolean
  policy?: PolicyOptions
  limits?: Partial<Limits>
}

/** Reads and checks the config file; its relative paths resolve from its own folder. */
function readConfig(file: string): ConfigFile {
  let config: unknown
  try {
    config = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new UsageError(`cannot read the config file ${file}: ${(err as Error).message}`)
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new UsageError(`the config file ${file} must hold a JSON object`)
  const c = config as Record<string, unknown>
  for (const key of Object.keys(c)) {
    if (!CONFIG_KEYS.has(key)) throw new UsageError(`unknown key '${key}' in the config file ${file} (allowed: ${[...CONFIG_KEYS].join(', ')})`)
  }
  for (const key of ['workspace', 'preset', 'dialect'] as const) {
    if (c[key] !== undefined && typeof c[key] !== 'string') throw new UsageError(`'${key}' in the config file ${file} must be a string`)
  }
  if (c.roots !== undefined && typeof c.roots !== 'boolean') throw new UsageError(`'roots' in the config file ${file} must be true or false`)
  for (const key of ['policy', 'limits'] as const) {
    if (c[key] !== undefined && (typeof c[key] !== 'object' || c[key] === null || Array.isArray(c[key]))) {
      throw new UsageError(`'${key}' in the config file ${file} must be an object`)
    }
  }
  const dir = path.dirname(path.resolve(file))
  const out = { ...c } as ConfigFile
  if (out.workspace !== undefined) out.workspace = path.resolve(dir, out.workspace)
  const allowed = out.policy?.allowedPaths
  if (Array.isArray(allowed)) out.policy = { ...out.policy, allowedPaths: allowed.map((p) => (typeof p === 'string' ? path.resolve(dir, p) : p)) }
  return out
}

/** `8080`, `127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`, `localhost:0`. */
function parseListen(spec: string): { host: string; port: number } {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(spec)
  const port = m ? Number(m[2]) : Number.NaN
  if (!m || port > 65535) throw new UsageError(`--http takes [host:]port, e.g. 8080 or 127.0.0.1:8080, got '${spec}'`)
  return { host: m[1] ? m[1].replace(/^\[|\]$/g, '') : '127.0.0.1', port }
}

/** Whether a host name or address means this machine only. */
function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '')
  if (h === 'localhost' || h === '::1') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  return h.startsWith('::ffff:127.')
}

/** Calls `stop` at the first SIGINT or SIGTERM; the returned function removes the listeners. */
function onSignals(stop: (signal: string) => void): () => void {
  const handler = (signal: NodeJS.Signals) => stop(signal)
  process.once('SIGINT', handler)
  process.once('SIGTERM', handler)
  return () => {
    process.off('SIGINT', handler)
    process.off('SIGTERM', handler)
  }
}

/** Kills the shell and git commands still running, so that none outlives the server. */
function stopToolkits(toolkits: McpToolkits): void {
  toolkits.plain.emergencyStop('the MCP server stopped')
  toolkits.eliciting?.emergencyStop('the MCP server stopped')
  for (const own of toolkits.own ?? []) own.emergencyStop('the MCP server stopped')
}

async function serveStdio(toolkits: McpToolkits, options: McpServerOptions, log: (line: string) => void): Promise<number> {
  const server = createMcpServer(toolkits, options)
  const transport = new StdioServerTransport()
  let release = () => {}
  const stopped = new Promise<void>((resolve) => {
    // The SDK's stdio transport does not watch for the end of stdin: the client closing
    // its end is how it says goodbye, so watch for it here.
    process.stdin.once('end', () => resolve())
    process.stdin.once('close', () => resolve())
    const closeSession = server.onclose
    server.onclose = () => {
      closeSession?.()
      resolve()
    }
    release = onSignals((signal) => {
      log(`${signal}: stopping`)
      resolve()
    })
  })
  await server.connect(transport)
  log(`serving ${toolkits.plain.workspace} (preset ${toolkits.plain.presetName}) over stdio`)
  await stopped
  release()
  // Closing aborts the calls in flight (their signals), which kills their commands.
  await server.close().catch(() => {})
  stopToolkits(toolkits)
  process.stdin.pause()
  return 0
}

interface Connection {
  transport: StreamableHTTPServerTransport
  close: () => Promise<void>
  /** When a request of this session last came in (ms). */
  seen: number
}

/**
 * HTTP sessions a client never ends (the SDK's `Client.close()` sends no DELETE) are
 * closed after this long without a request; a client that comes back gets 404 and starts
 * a new one, as the protocol says. At most MAX_SESSIONS are open at once.
 */
export const IDLE_MS = positiveEnv('FSGATE_MCP_IDLE_MS') ?? 30 * 60_000
export const MAX_SESSIONS = positiveEnv('FSGATE_MCP_MAX_SESSIONS') ?? 256
/** The `retry:` a stream's priming event gives: how long a client waits before it reconnects. */
export const RETRY_MS = 1000

/** A positive integer from the environment (operators and tests tune the HTTP limits so). */
function positiveEnv(name: string): number | undefined {
  const v = Number(process.env[name])
  return Number.isSafeInteger(v) && v > 0 ? v : undefined
}

async function serveHttp(
  toolkits: McpToolkits,
  options: McpServerOptions,
  listen: { host: string; port: number },
  token: string | undefined,
  log: (line: string) => void,
): Promise<number> {
  const connections = new Map<string, Connection>()
  const loopback = isLoopback(listen.host)
  const expected = token !== undefined ? digest(token) : undefined

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname === '/healthz' && req.method === 'GET') return reply(res, 200, 'ok\n')
    if (expected && !bearerMatches(req.headers.authorization, expected)) {
      return reply(res, 401, 'missing or wrong bearer token\n', { 'www-authenticate': 'Bearer' })
    }
    if (loopback && !(hostIsLoopback(req.headers.host) && originIsLoopback(req.headers.origin))) {
      return reply(res, 403, 'requests to a loopback server must come from this machine\n')
    }
    if (url.pathname !== '/mcp') return reply(res, 404, 'not found: the MCP endpoint is /mcp\n')

    const id = req.headers['mcp-session-id']
    if (typeof id === 'string') {
      const conn = connections.get(id)
      if (!conn) return jsonRpcError(res, 404, -32001, 'Session not found: start a new session without mcp-session-id')
      conn.seen = Date.now()
      return conn.transport.handleRequest(req, res)
    }
    if (req.method !== 'POST') return jsonRpcError(res, 400, -32000, 'Bad request: no mcp-session-id; start a session with an initialize POST')
    if (connections.size >= MAX_SESSIONS) {
      return jsonRpcError(res, 503, -32000, `Too many open sessions (${MAX_SESSIONS}); end one with DELETE, or retry later`)
    }

    // A new connection. The transport answers anything but an initialize request with
    // an error and then has no session id; such a connection is dropped at once.
    const server = createMcpServer(toolkits, options)
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      // Resumable streams: ids on every event, a priming event, and how soon to reconnect.
      eventStore: new BoundedEventStore(),
      retryInterval: RETRY_MS,
      onsessioninitialized: (sid) => {
        connections.set(sid, { transport, close: () => server.close(), seen: Date.now() })
      },
    })
    transport.onclose = () => {
      if (transport.sessionId) connections.delete(transport.sessionId)
    }
    await server.connect(transport)
    await transport.handleRequest(req, res)
    if (!transport.sessionId) await server.close()
  }

  // Idle sessions are closed (their transport's onclose drops them from the map).
  const sweeper = setInterval(
    () => {
      const stale = Date.now() - IDLE_MS
      for (const [sid, conn] of connections) {
        if (conn.seen >= stale) continue
        connections.delete(sid)
        log(`session ${sid} idle for ${IDLE_MS / 60_000} minutes: closed`)
        conn.close().catch(() => {})
      }
    },
    Math.max(10, Math.min(IDLE_MS, 60_000)),
  )
  sweeper.unref()

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(`request failed: ${err instanceof Error ? err.message : String(err)}`)
      if (!res.headersSent) reply(res, 500, 'internal error\n')
      else res.end()
    })
  })

  const listening = await new Promise<Error | null>((resolve) => {
    http.once('error', resolve)
    http.listen(listen.port, listen.host, () => resolve(null))
  })
  if (listening) {
    log(`cannot listen on ${listen.host}:${listen.port}: ${listening.message}`)
    return 1
  }
  const address = http.address()
  const port = typeof address === 'object' && address ? address.port : listen.port
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host
  log(`serving ${toolkits.plain.workspace} (preset ${toolkits.plain.presetName}) at http://${host}:${port}/mcp${expected ? ' (bearer token required)' : ''}`)

  await new Promise<void>((resolve) => {
    const release = onSignals((signal) => {
      log(`${signal}: stopping`)
      release()
      resolve()
    })
  })
  http.close()
  clearInterval(sweeper)
  await Promise.allSettled([...connections.values()].map((c) => c.close()))
  connections.clear()
  stopToolkits(toolkits)
  http.closeAllConnections()
  return 0
}

function reply(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(body)
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}

/** Tokens are compared as SHA-256 digests: equal lengths for timingSafeEqual, and no length leak. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  return m !== null && timingSafeEqual(digest(m[1]), expected)
}

/** The Host header names a loopback address (a DNS-rebinding page sends its own name). */
function hostIsLoopback(host: string | undefined): boolean {
  if (!host) return false
  const m = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(host)
  return m !== null && isLoopback(m[1])
}

/** No Origin (not a browser) or a loopback one. */
function originIsLoopback(origin: string | undefined): boolean {
  if (origin === undefined) return true
  try {
    return isLoopback(new URL(origin).hostname)
  } catch {
    return false
  }
}

/**
 * Where a phrase goes for the user, when the client cannot elicit: the terminal the
 * server runs in, or else a file only the user can read that no sandbox shows
 * (`~/.local/state/fsgate/phrases.log`, on the list of hidden credentials). Not stderr
 * when it is not a terminal: clients keep a server's stderr in log files (Claude
 * Desktop's under the home), which a sandboxed command could read.
 */
export function phraseChannel(log: (line: string) => void, terminal = process.stderr.isTTY === true, home = os.homedir()): (line: string) => string {
  if (terminal) {
    return (line) => {
      log(line)
      return 'the terminal where the fsgate server runs'
    }
  }
  const file = path.join(home, PHRASE_FILE)
  // Made before any command runs, so that every sandbox hides it from the start.
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  return (line) => {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    appendFileSync(file, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 })
    chmodSync(file, 0o600)
    log(`${line.slice(0, line.indexOf(':'))}: the phrase is in ${file}`)
    return `the file ${file}`
  }
}
