/**
 * `fsgate mcp` (SPEC §7) as a real process from dist/, driven by the official MCP SDK's
 * Client: every tool over stdio, errors as isError results naming their code, the
 * consent gate and command approval through elicitation (accept and decline) and,
 * without it, the phrase flows (the approval phrase never in what the model reads);
 * Streamable HTTP with sessions, the bearer token, the loopback guards and /healthz;
 * the flags, the config file and the exit codes.
 *
 * The CLI's wiring of `mcp` is not this suite's: a one-line launcher imports
 * dist/mcp/main.js and calls mcpMain with the arguments.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { BoundedEventStore } from '../ts/mcp/events.js'
import { newest, put, removeTempDirs, tempDir } from './helpers.js'
import { textPdf } from './pdf-make.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const mainJs = path.join(repo, 'dist', 'mcp', 'main.js')
const LAUNCH = `import(${JSON.stringify(pathToFileURL(mainJs).href)}).then((m) => m.mcpMain(process.argv.slice(1))).then((code) => { process.exitCode = code })`
/** The server's environment: the SDK's safe defaults, and never a token from the host. */
const ENV = getDefaultEnvironment()

beforeAll(() => {
  // Build the facade when dist/ is missing or older than the sources. tsc emits even when
  // another part of ts/ has a type error, so judge by the file, not the exit code.
  if (!fs.existsSync(mainJs) || fs.statSync(mainJs).mtimeMs < newest(path.join(repo, 'ts'))) {
    try {
      execFileSync('npm', ['run', 'build:ts'], { cwd: repo, stdio: 'pipe' })
    } catch {
      // checked below
    }
  }
  expect(fs.existsSync(mainJs), 'dist/mcp/main.js is missing: run npm run build:ts').toBe(true)
})

afterAll(removeTempDirs)

// ---------------------------------------------------------------------------------------
// Helpers

/** A workspace that is also a git repository with one commit. */
function makeWorkspace(): string {
  const dir = tempDir('fsgate-mcp-')
  put(dir, 'notes.txt', 'alpha\nbeta\ngamma\n')
  put(dir, 'src/parse.ts', 'export function parseConfig(text: string) {\n  return JSON.parse(text)\n}\n')
  fs.writeFileSync(path.join(dir, 'doc.pdf'), textPdf([['Quarterly report'], ['Second page']]))
  const git = (...args: string[]) => execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd: dir, stdio: 'pipe', env: { ...ENV, GIT_CONFIG_GLOBAL: '/dev/null' } })
  git('init', '-q', '-b', 'main')
  git('config', 'user.name', 'Test')
  git('config', 'user.email', 'test@example.com')
  git('add', '-A')
  git('commit', '-q', '-m', 'initial')
  return dir
}

type Answer = ElicitResult | ((message: string) => ElicitResult)

interface Connected {
  client: Client
  /** Every elicitation message the server sent. */
  asked: string[]
  /** Every log notification's data. */
  logs: string[]
}

/** A client, optionally declaring elicitation and answering every question with `answer`. */
function newClient(answer?: Answer): Connected {
  const asked: string[] = []
  const logs: string[] = []
  const client = new Client({ name: 'fsgate-test', version: '1.0.0' }, { capabilities: answer ? { elicitation: {} } : {} })
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      const message = String(req.params.message)
      asked.push(message)
      return typeof answer === 'function' ? answer(message) : answer
    })
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data))
  })
  return { client, asked, logs }
}

const open: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => {})
})

/** Starts the server over stdio on workspace `dir` (null: none given) and connects a client; stderr is collected. */
async function stdio(
  dir: string | null,
  args: string[] = [],
  answer?: Answer,
  options: { env?: NodeJS.ProcessEnv; client?: Connected } = {},
): Promise<Connected & { stderr: () => string }> {
  const c = options.client ?? newClient(answer)
  const where = dir === null ? [] : ['--workspace', dir]
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--input-type=module', '-e', LAUNCH, '--', ...where, ...args],
    env: (options.env ?? ENV) as Record<string, string>,
    stderr: 'pipe',
  })
  let err = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8')
  })
  await c.client.connect(transport)
  open.push(() => c.client.close())
  return { ...c, stderr: () => err }
}

/** Spawns the server with `args` (no client). */
function spawnServer(args: string[], env: NodeJS.ProcessEnv = ENV): ChildProcess & { stderrText: () => string } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', LAUNCH, '--', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] })
  let err = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8')
  })
  return Object.assign(child, { stderrText: () => err })
}

/** Runs the server to completion (for usage errors and --help). */
function runServer(args: string[], env: NodeJS.ProcessEnv = ENV) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', LAUNCH, '--', ...args], { env, encoding: 'utf8', timeout: 20_000, input: '' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

/** Waits until the server's stderr has a line matching `re`. */
async function waitFor(read: () => string, re: RegExp, ms = 10_000): Promise<RegExpExecArray> {
  const until = Date.now() + ms
  for (;;) {
    const m = re.exec(read())
    if (m) return m
    if (Date.now() > until) throw new Error(`timed out waiting for ${re} in: ${read()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Starts the server over HTTP and returns its MCP URL once it listens. */
async function startHttp(dir: string, args: string[] = [], env: NodeJS.ProcessEnv = ENV) {
  const child = spawnServer(['--workspace', dir, '--http', '127.0.0.1:0', ...args], env)
  open.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  const m = await waitFor(child.stderrText, /at (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/)
  return { child, url: new URL(m[1]), port: Number(m[2]) }
}

async function httpClient(url: URL, answer?: Answer, headers: Record<string, string> = {}): Promise<Connected> {
  const c = newClient(answer)
  await c.client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }))
  open.push(() => c.client.close())
  return c
}

function textOf(r: CallToolResult): string {
  return r.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n')
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult
}

/** Asserts success and returns the text. */
async function ok(c: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const r = await call(c, name, args)
  expect(r.isError, textOf(r)).toBe(false)
  expect(r.structuredContent).toBeUndefined()
  return textOf(r)
}

/** Asserts an isError result whose text names `code`, and returns the text. */
async function fails(c: Client, name: string, args: Record<string, unknown>, code: string): Promise<string> {
  const r = await call(c, name, args)
  const text = textOf(r)
  expect(r.isError, text).toBe(true)
  expect(text).toContain(`[error code: ${code}]`)
  expect(r.structuredContent).toBeUndefined()
  return text
}

/** A raw HTTP request (fetch cannot set Host). */
function request(port: number, options: { path?: string; method?: string; headers?: Record<string, string>; body?: string }) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: options.path ?? '/mcp', method: options.method ?? 'POST', headers: options.headers }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => {
        body += d.toString('utf8')
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}


interface SseEvent {
  id?: string
  retry?: string
  data: string
}

/** Sends a request whose answer is an SSE stream and collects its events until `enough` holds (or 5 s pass), then drops the connection. */
function sse(port: number, options: { method?: string; headers: Record<string, string>; body?: string }, enough: (events: SseEvent[]) => boolean) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; events: SseEvent[] }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: options.method ?? 'POST', headers: options.headers }, (res) => {
      const events: SseEvent[] = []
      let buffer = ''
      const done = () => {
        clearTimeout(timer)
        res.destroy()
        resolve({ status: res.statusCode ?? 0, headers: res.headers, events })
      }
      const timer = setTimeout(done, 5000)
      res.on('data', (d: Buffer) => {
        buffer += d.toString('utf8')
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event: SseEvent = { data: '' }
          for (const line of block.split('\n')) {
            const m = /^(\w+): ?(.*)$/.exec(line)
            if (m?.[1] === 'id') event.id = m[2]
            else if (m?.[1] === 'retry') event.retry = m[2]
            else if (m?.[1] === 'data') event.data += m[2]
          }
          if (!block.startsWith(':')) events.push(event)
        }
        if (enough(events)) done()
      })
      res.on('end', done)
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

// ---------------------------------------------------------------------------------------
// stdio

describe('stdio', () => {
  it('lists the preset dialect with JSON Schemas and read-only hints', async () => {
    const { client } = await stdio(makeWorkspace())
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual([
      'file_read',
      'file_write',
      'file_edit',
      'notebook_edit',
      'glob_search',
      'content_search',
      'list_directory',
      'file_info',
      'semantic_code_search',
      'pdf_read',
      'git_operations',
      'shell',
      'task_output',
      'task_stop',
    ])
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object')
      expect(t.description?.length ?? 0).toBeGreaterThan(20)
    }
    const read = tools.find((t) => t.name === 'file_read')
    expect(Object.keys(read?.inputSchema.properties ?? {})).toContain('path')
    expect(read?.annotations?.readOnlyHint).toBe(true)
    expect(tools.find((t) => t.name === 'shell')?.annotations?.readOnlyHint).toBe(false)
  })

  it('calls every tool', async () => {
    const dir = makeWorkspace()
    const home = tempDir()
    const { client, stderr } = await stdio(dir, [], undefined, { env: { ...ENV, HOME: home } })
    expect(await ok(client, 'file_read', { path: 'notes.txt' })).toBe('     1\talpha\n     2\tbeta\n     3\tgamma')
    expect(await ok(client, 'file_write', { path: 'new/hello.txt', content: 'hello\n' })).toMatch(/hello\.txt/)
    expect(fs.readFileSync(path.join(dir, 'new/hello.txt'), 'utf8')).toBe('hello\n')
    expect(await ok(client, 'glob_search', { pattern: '**/*.ts' })).toContain('src/parse.ts')
    expect(await ok(client, 'content_search', { pattern: 'parseConfig', output_mode: 'content' })).toMatch(/src\/parse\.ts.*parseConfig/s)
    expect(await ok(client, 'semantic_code_search', { query: 'parseConfig', backend: 'literal' })).toContain('src/parse.ts')
    expect(await ok(client, 'pdf_read', { path: 'doc.pdf' })).toMatch(/Quarterly report[\s\S]*Second page/)
    expect(await ok(client, 'git_operations', { operation: 'status' })).toContain('?? new/')
    expect(await ok(client, 'git_operations', { operation: 'log' })).toContain('initial')
    expect(await ok(client, 'shell', { command: 'echo from-shell' })).toContain('from-shell')
    // The file just written is the session's own: an edit needs no new read, and the
    // consent gate for new/ asks for the phrase. Over MCP nobody notes the user's messages,
    // so the phrase is not in the text the model reads (SPEC §8.1): it goes to the user,
    // here a private file, as stderr is no terminal.
    const gate = await fails(client, 'file_edit', { path: 'new/hello.txt', old_string: 'hello', new_string: 'howdy' }, 'PERMISSION_REQUIRED')
    expect(gate).not.toMatch(/allow edits in new\/ [0-9a-z-]+/)
    const file = (await waitFor(stderr, /consent needed \(session [^)]*\): the phrase is in (\S+)/))[1]
    expect(file).toBe(path.join(home, '.local/state/fsgate/phrases.log'))
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    const phrase = /allow edits in new\/ [0-9a-z-]+/.exec(fs.readFileSync(file, 'utf8'))?.[0]
    expect(phrase).toBeDefined()
    await ok(client, 'file_edit', { path: 'new/hello.txt', old_string: 'hello', new_string: 'howdy', grant_phrase: phrase })
    expect(fs.readFileSync(path.join(dir, 'new/hello.txt'), 'utf8')).toBe('howdy\n')
  })

  it('returns errors as isError results naming the code', async () => {
    const dir = makeWorkspace()
    const { client } = await stdio(dir)
    expect(await fails(client, 'file_read', { path: 'missing.txt' }, 'NOT_FOUND')).toMatch(/does not exist/)
    expect(await fails(client, 'file_read', { path: '../outside.txt' }, 'PATH_OUTSIDE_WORKSPACE')).toBeTruthy()
    await fails(client, 'file_write', { path: 'notes.txt', content: 'x' }, 'NOT_READ')
    await fails(client, 'file_read', { offset: 1 }, 'INVALID_INPUT')
    // A tool the server does not list is a protocol error (-32602), not a result (MCP 2025-11-25);
    // so is a tool of another dialect than the one listed.
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: no_such_tool') })
    await expect(client.callTool({ name: 'Read', arguments: { file_path: 'notes.txt' } })).rejects.toMatchObject({ code: -32602 })
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n')
  })

  it('sends the approval phrase to the user, never to the model, when the client cannot elicit', async () => {
    const dir = makeWorkspace()
    const home = tempDir()
    const { client, logs, stderr } = await stdio(dir, [], undefined, { env: { ...ENV, HOME: home } })
    // High: a sandboxed command that still needs the user.
    const text = await fails(client, 'shell', { command: 'rm -rf src' }, 'APPROVAL_REQUIRED')
    expect(text).not.toMatch(/approve command/)
    expect(text).toMatch(/phrases\.log, hidden from you: ask the user for it/)
    // The phrase is in a file only the user reads (stderr is no terminal here, and clients
    // keep a server's stderr in logs): nothing sent to the client carries it, not even a
    // log notification (it travels on the tool call's response stream), nor stderr.
    const file = (await waitFor(stderr, /approval needed \(session [^)]*\): the phrase is in (\S+)/))[1]
    expect(stderr()).not.toMatch(/approve command/)
    const phrase = (/tell the assistant: (approve command [0-9a-z-]+)/.exec(fs.readFileSync(file, 'utf8')) ?? [])[1] as string
    expect(phrase).toBeDefined()
    expect(logs.some((l) => l.includes(phrase) || l.includes(phrase.split(' ').pop() as string))).toBe(false)
    expect(fs.existsSync(path.join(dir, 'src'))).toBe(true)
    await ok(client, 'shell', { command: 'rm -rf src', grant_phrase: phrase })
    expect(fs.existsSync(path.join(dir, 'src'))).toBe(false)
  })

  it("aborts a running command when the client cancels the call", async () => {
    const dir = makeWorkspace()
    const { client } = await stdio(dir, ['--preset', 'claude-code'])
    const started = Date.now()
    const pending = client.callTool({ name: 'Bash', arguments: { command: 'sleep 1 && touch late.txt' } }, undefined, { signal: AbortSignal.timeout(200) })
    await expect(pending).rejects.toThrow()
    await new Promise((r) => setTimeout(r, 1300))
    expect(fs.existsSync(path.join(dir, 'late.txt'))).toBe(false)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await ok(client, 'Bash', { command: 'echo still-serving' })).toContain('still-serving')
  })

  it('exits 0 when the client closes stdin, and on SIGTERM', async () => {
    const dir = makeWorkspace()
    for (const stop of ['stdin', 'SIGTERM'] as const) {
      const child = spawnServer(['--workspace', dir])
      let out = ''
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString('utf8')
      })
      child.stdin?.write(`${INITIALIZE}\n`)
      await waitFor(() => out, /"serverInfo":\{"name":"fsgate"/)
      if (stop === 'stdin') child.stdin?.end()
      else child.kill('SIGTERM')
      expect(await exited(child)).toBe(0)
      expect(child.stderrText()).toMatch(/serving .* over stdio/)
    }
  })
})

// ---------------------------------------------------------------------------------------
// Elicitation

describe('elicitation', () => {
  const accept: ElicitResult = { action: 'accept', content: { allow: true } }

  it('asks the user for consent and approval, and acts on yes', async () => {
    const dir = makeWorkspace()
    const { client, asked } = await stdio(dir, [], accept)
    await ok(client, 'file_read', { path: 'src/parse.ts' })
    await ok(client, 'file_write', { path: 'src/parse.ts', content: 'export const x = 1\n' })
    expect(fs.readFileSync(path.join(dir, 'src/parse.ts'), 'utf8')).toBe('export const x = 1\n')
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatch(/src\/parse\.ts/)
    expect(asked[0]).toMatch(/src\//)
    await ok(client, 'shell', { command: 'rm -rf src' })
    expect(fs.existsSync(path.join(dir, 'src'))).toBe(false)
    expect(asked[1]).toMatch(/high-risk shell command in the sandbox[\s\S]*rm -rf src/)
  })

  it('refuses on no, decline and cancel', async () => {
    const dir = makeWorkspace()
    const answers: ElicitResult[] = [{ action: 'decline' }, { action: 'accept', content: { allow: false } }, { action: 'cancel' }]
    const { client, asked } = await stdio(dir, [], () => answers[(asked.length - 1) % answers.length])
    await ok(client, 'file_read', { path: 'notes.txt' })
    expect(await fails(client, 'file_write', { path: 'notes.txt', content: 'x\n' }, 'PERMISSION_DENIED')).toMatch(/declined/)
    expect(await fails(client, 'shell', { command: 'rm -rf src' }, 'APPROVAL_REQUIRED')).toMatch(/declined/)
    expect(fs.existsSync(path.join(dir, 'src/parse.ts'))).toBe(true)
    await fails(client, 'file_edit', { path: 'notes.txt', old_string: 'beta', new_string: 'BETA' }, 'PERMISSION_DENIED')
    expect(asked).toHaveLength(3)
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n')
    expect(fs.existsSync(path.join(dir, 'no.txt'))).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------
// Streamable HTTP

describe('Streamable HTTP', () => {
  it('serves sessions on loopback, with /healthz and an elicitation on the call stream', async () => {
    const dir = makeWorkspace()
    const { child, url, port } = await startHttp(dir)
    expect(await request(port, { path: '/healthz', method: 'GET' })).toEqual({ status: 200, body: 'ok\n' })

    const a = await httpClient(url)
    expect((await a.client.listTools()).tools).toHaveLength(14)
    expect(await ok(a.client, 'file_read', { path: 'notes.txt', offset: 2, limit: 1 })).toContain('beta')
    await fails(a.client, 'shell', { command: 'rm -rf src' }, 'APPROVAL_REQUIRED')
    // Over HTTP no notification carries the phrase on the call's stream either.
    expect(a.logs.some((l) => /approve command/.test(l))).toBe(false)
    expect(fs.existsSync(path.join(dir, 'src'))).toBe(true)

    // A second session, whose client elicits: its own fsgate session and flow.
    const b = await httpClient(url, { action: 'accept', content: { allow: true } })
    await ok(b.client, 'shell', { command: 'rm -rf src' })
    expect(b.asked).toHaveLength(1)
    expect(fs.existsSync(path.join(dir, 'src'))).toBe(false)

    child.kill('SIGTERM')
    expect(await exited(child)).toBe(0)
  })

  it('resumable streams: a priming event with an id and retry, ids on every event, and Last-Event-ID replays what was missed', async () => {
    const { port } = await startHttp(makeWorkspace())
    const init = await sse(
      port,
      { headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) },
      (e) => e.length >= 2,
    )
    expect(init.status).toBe(200)
    // The priming event: an id, retry, and empty data.
    expect(init.events[0]).toEqual({ id: expect.any(String), retry: '1000', data: '' })
    expect(init.events[1].id).toEqual(expect.any(String))
    expect(JSON.parse(init.events[1].data).result.protocolVersion).toBe('2025-11-25')
    const session = { ...MCP_HEADERS, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' }
    expect((await request(port, { headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status).toBe(202)

    // A call whose stream the client loses right after the priming event: the answer is replayed on reconnection.
    const list = await sse(port, { headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) }, (e) => e.length >= 2)
    const [priming, answer] = list.events
    expect(priming.data).toBe('')
    expect(JSON.parse(answer.data).id).toBe(2)
    const resumed = await sse(port, { method: 'GET', headers: { ...session, accept: 'text/event-stream', 'last-event-id': String(priming.id) } }, (e) => e.length >= 1)
    expect(resumed.status).toBe(200)
    expect(resumed.events[0]).toEqual({ id: answer.id, data: answer.data })
    // An id the server never issued (or no longer keeps) cannot be resumed.
    const unknown = await request(port, { method: 'GET', headers: { ...session, accept: 'text/event-stream', 'last-event-id': 'nope' } })
    expect(unknown.status).toBe(400)
  })

  it('the event store is bounded: the oldest events go first, and a dropped id cannot be resumed', async () => {
    const store = new BoundedEventStore(3, 1 << 20)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(await store.storeEvent('s1', { jsonrpc: '2.0', method: 'n', params: { i } }))
    expect(store.size).toBe(3)
    expect(await store.getStreamIdForEventId(ids[0])).toBeUndefined()
    await expect(store.replayEventsAfter(ids[0], { send: async () => {} })).rejects.toThrow(/no longer kept/)
    const sent: unknown[] = []
    expect(await store.replayEventsAfter(ids[2], { send: async (_id, m) => void sent.push(m) })).toBe('s1')
    expect(sent).toEqual([{ jsonrpc: '2.0', method: 'n', params: { i: 3 } }, { jsonrpc: '2.0', method: 'n', params: { i: 4 } }])
    const small = new BoundedEventStore(100, 200)
    for (let i = 0; i < 10; i++) await small.storeEvent('s', { jsonrpc: '2.0', method: 'x'.repeat(50) })
    expect(small.size).toBeLessThan(4)
  })

  it('refuses requests that are not from this machine, and unknown sessions', async () => {
    const { port } = await startHttp(makeWorkspace())
    expect((await request(port, { headers: { ...MCP_HEADERS, host: 'evil.example:80' }, body: INITIALIZE })).status).toBe(403)
    expect((await request(port, { headers: { ...MCP_HEADERS, origin: 'https://evil.example' }, body: INITIALIZE })).status).toBe(403)
    expect((await request(port, { headers: { ...MCP_HEADERS, 'mcp-session-id': 'nope' }, body: INITIALIZE })).status).toBe(404)
    expect((await request(port, { path: '/other', headers: MCP_HEADERS, body: INITIALIZE })).status).toBe(404)
    expect((await request(port, { headers: MCP_HEADERS, body: INITIALIZE })).status).toBe(200)
  })

  it('closes sessions left idle, and caps how many are open', async () => {
    const { port } = await startHttp(makeWorkspace(), [], { ...ENV, FSGATE_MCP_IDLE_MS: '300', FSGATE_MCP_MAX_SESSIONS: '2' })
    const opened = await request(port, { headers: MCP_HEADERS, body: INITIALIZE })
    expect(opened.status).toBe(200)
    expect((await request(port, { headers: MCP_HEADERS, body: INITIALIZE })).status).toBe(200)
    // The cap: a third session is refused while two are open.
    expect((await request(port, { headers: MCP_HEADERS, body: INITIALIZE })).status).toBe(503)
    // Idle past 300 ms: both are closed, so new sessions start again.
    await new Promise((r) => setTimeout(r, 700))
    expect((await request(port, { headers: MCP_HEADERS, body: INITIALIZE })).status).toBe(200)
  })

  it('requires the bearer token when one is set', async () => {
    const { url, port } = await startHttp(makeWorkspace(), ['--token', 's3cret-token'])
    expect((await request(port, { headers: MCP_HEADERS, body: INITIALIZE })).status).toBe(401)
    expect((await request(port, { headers: { ...MCP_HEADERS, authorization: 'Bearer wrong' }, body: INITIALIZE })).status).toBe(401)
    expect((await request(port, { path: '/healthz', method: 'GET' })).status).toBe(200)
    const c = await httpClient(url, undefined, { authorization: 'Bearer s3cret-token' })
    expect(await ok(c.client, 'glob_search', { pattern: '*.txt' })).toContain('notes.txt')
  })

  it('takes the token from FSGATE_MCP_TOKEN', async () => {
    const { url, port } = await startHttp(makeWorkspace(), [], { ...ENV, FSGATE_MCP_TOKEN: 'from-env' })
    expect((await request(port, { headers: MCP_HEADERS, body: INITIALIZE })).status).toBe(401)
    const c = await httpClient(url, undefined, { authorization: 'Bearer from-env' })
    expect((await c.client.listTools()).tools.length).toBe(14)
  })

  it('refuses to listen beyond loopback without a token (exit 2)', () => {
    const r = runServer(['--workspace', makeWorkspace(), '--http', '0.0.0.0:0'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--token or FSGATE_MCP_TOKEN/)
  })
})

// ---------------------------------------------------------------------------------------
// Flags and the config file

describe('progress', () => {
  it('sends progress notifications while a call with a progressToken runs, and none for a quick one', async () => {
    const dir = makeWorkspace()
    const { client } = await stdio(dir, ['--preset', 'claude-code'], undefined, { env: { ...ENV, FSGATE_MCP_PROGRESS_MS: '150' } })
    const seen: Progress[] = []
    const r = (await client.callTool({ name: 'Bash', arguments: { command: 'sleep 1 && echo done' } }, undefined, { onprogress: (p) => seen.push(p) })) as CallToolResult
    expect(textOf(r)).toContain('done')
    expect(seen.length).toBeGreaterThanOrEqual(3)
    expect(seen.map((p) => p.progress)).toEqual(seen.map((_, i) => i + 1))
    expect(seen[0].message).toMatch(/^running the command: \d+ s$/)
    expect(seen[0].total).toBeUndefined()
    const quick: Progress[] = []
    await client.callTool({ name: 'Read', arguments: { file_path: path.join(dir, 'notes.txt') } }, undefined, { onprogress: (p) => quick.push(p) })
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(quick).toEqual([])
  })

  it("keeps a client's request timeout from firing during a long call", async () => {
    const { client } = await stdio(makeWorkspace(), ['--preset', 'claude-code'], undefined, { env: { ...ENV, FSGATE_MCP_PROGRESS_MS: '100' } })
    const r = (await client.callTool({ name: 'Bash', arguments: { command: 'sleep 1.2 && echo late' } }, undefined, {
      timeout: 600,
      resetTimeoutOnProgress: true,
      onprogress: () => {},
    })) as CallToolResult
    expect(textOf(r)).toContain('late')
  })
})

describe('roots', () => {
  /** A client that declares roots and answers roots/list with `folders`. */
  function rootsClient(folders: () => string[]): Connected {
    const asked: string[] = []
    const logs: string[] = []
    const client = new Client({ name: 'fsgate-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } })
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: folders().map((f) => ({ uri: pathToFileURL(f).href, name: path.basename(f) })) }))
    return { client, asked, logs }
  }

  it('with --roots the client roots are the session allowed folders; without it they are not', async () => {
    const dir = makeWorkspace()
    const other = tempDir('fsgate-mcp-root-')
    put(other, 'elsewhere.txt', 'from a root\n')
    const withRoots = await stdio(dir, ['--roots'], undefined, { client: rootsClient(() => [other]) })
    expect(await ok(withRoots.client, 'file_read', { path: path.join(other, 'elsewhere.txt') })).toContain('from a root')
    expect(await ok(withRoots.client, 'file_read', { path: 'notes.txt' })).toContain('alpha')
    expect(withRoots.stderr()).toContain(`roots ${other}`)
    const without = await stdio(dir, [], undefined, { client: rootsClient(() => [other]) })
    await fails(without.client, 'file_read', { path: path.join(other, 'elsewhere.txt') }, 'PATH_OUTSIDE_WORKSPACE')
  })

  it('without --workspace the first root is the workspace; a changed list applies to the next call; / and missing folders are skipped', async () => {
    const first = tempDir('fsgate-mcp-root-a-')
    const second = tempDir('fsgate-mcp-root-b-')
    put(first, 'a.txt', 'in a\n')
    put(second, 'b.txt', 'in b\n')
    let roots = ['/', path.join(first, 'missing'), first]
    const c = rootsClient(() => roots)
    const s = await stdio(null, ['--roots'], undefined, { client: c })
    expect(await ok(c.client, 'file_read', { path: 'a.txt' })).toContain('in a')
    expect(s.stderr()).toMatch(/root "file:\/\/\/" skipped: the file system root is never an allowed folder/)
    await fails(c.client, 'file_read', { path: path.join(second, 'b.txt') }, 'PATH_OUTSIDE_WORKSPACE')
    roots = [second]
    await c.client.sendRootsListChanged()
    await waitFor(s.stderr, /the client changed its roots/)
    expect(await ok(c.client, 'file_read', { path: 'b.txt' })).toContain('in b')
  })
})

describe('flags and config', () => {
  it('prints help and rejects bad flags with exit 2', () => {
    const help = runServer(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^fsgate mcp/)
    for (const args of [['--preset', 'nope'], ['--dialect', 'nope'], ['--bogus'], ['--http', 'host:99999'], ['--token', 't'], ['--workspace', '/no/such/folder']]) {
      const r = runServer(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^fsgate mcp: /)
    }
  })

  it('reads the config file, and flags override it', async () => {
    const dir = makeWorkspace()
    const configDir = tempDir('fsgate-mcp-config-')
    const config = path.join(configDir, 'fsgate.json')
    fs.writeFileSync(config, JSON.stringify({ workspace: path.relative(configDir, dir), preset: 'claude-code', policy: { autonomy: 'read_only' }, limits: { readLines: 1 } }))
    const a = await stdio(configDir, ['--config', config, '--workspace', dir])
    expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['Read', 'Write', 'Edit', 'NotebookEdit', 'Glob', 'Grep', 'Bash', 'TaskOutput', 'TaskStop'])
    expect(await ok(a.client, 'Read', { file_path: 'notes.txt' })).toMatch(/^1\talpha\n.*offset=2/)
    await fails(a.client, 'Write', { file_path: 'x.txt', content: 'x' }, 'AUTONOMY')

    // The config's workspace, relative to the config file; --dialect over the preset's.
    const b = await stdio(null, ['--config', config, '--dialect', 'all'])
    const names = (await b.client.listTools()).tools.map((t) => t.name)
    expect(names).toContain('file_read')
    expect(names).toContain('Read')
    expect(names).toContain('write_file')
    expect(await ok(b.client, 'Read', { file_path: 'notes.txt' })).toContain('alpha')

    fs.writeFileSync(config, JSON.stringify({ preset: 'guarded', extra: 1 }))
    const bad = runServer(['--config', config])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/unknown key 'extra'/)
  })
})
