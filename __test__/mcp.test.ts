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
import { type CallToolResult, ElicitRequestSchema, type ElicitResult, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

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
async function stdio(dir: string | null, args: string[] = [], answer?: Answer): Promise<Connected & { stderr: () => string }> {
  const c = newClient(answer)
  const where = dir === null ? [] : ['--workspace', dir]
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--input-type=module', '-e', LAUNCH, '--', ...where, ...args], env: ENV, stderr: 'pipe' })
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
      'glob_search',
      'content_search',
      'semantic_code_search',
      'pdf_read',
      'git_operations',
      'shell',
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
    const { client } = await stdio(dir)
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
    // consent gate for new/ asks for the phrase, which is in the text (SPEC §5.3).
    const gate = await fails(client, 'file_edit', { path: 'new/hello.txt', old_string: 'hello', new_string: 'howdy' }, 'PERMISSION_REQUIRED')
    const phrase = /allow edits in new\/ [0-9a-z-]+/.exec(gate)?.[0]
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
    await fails(client, 'no_such_tool', {}, 'INVALID_INPUT')
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n')
  })

  it('sends the approval phrase to the user, never to the model, when the client cannot elicit', async () => {
    const dir = makeWorkspace()
    const { client, logs, stderr } = await stdio(dir)
    // High: a sandboxed command that still needs the user.
    const text = await fails(client, 'shell', { command: 'rm -rf src' }, 'APPROVAL_REQUIRED')
    expect(text).not.toMatch(/approve command/)
    expect(text).toMatch(/server's own log/)
    // The phrase is in the server's own log only: nothing sent to the client carries it,
    // not even a log notification (it travels on the tool call's response stream).
    const phrase = (await waitFor(stderr, /tell the assistant: (approve command [0-9a-z-]+)/))[1]
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
    expect((await a.client.listTools()).tools).toHaveLength(9)
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
    expect((await c.client.listTools()).tools.length).toBe(9)
  })

  it('refuses to listen beyond loopback without a token (exit 2)', () => {
    const r = runServer(['--workspace', makeWorkspace(), '--http', '0.0.0.0:0'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--token or FSGATE_MCP_TOKEN/)
  })
})

// ---------------------------------------------------------------------------------------
// Flags and the config file

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
    expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['Read', 'Write', 'Edit', 'Glob', 'Grep', 'Bash'])
    expect(await ok(a.client, 'Read', { file_path: 'notes.txt' })).toMatch(/^ {5}1\talpha\n.*offset=2/)
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
