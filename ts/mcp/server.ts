/**
 * The MCP server (SPEC §7): fsgate's tools served over the Model Context Protocol with the
 * official SDK's low-level `Server`. `tools/list` is `toolkit.definitions({ format: 'mcp' })`
 * and `tools/call` is `session.call(name, arguments, { signal })`, one Session per MCP
 * connection, so read records, consent grants and the budget are per connection as they
 * are per conversation in-process.
 *
 * Why the low-level `Server` and not `McpServer`: the schemas already exist as JSON
 * Schema (generated from the zod schemas, with the `otp` field when policy adds it);
 * `McpServer` would want them again as zod shapes and validate input a second time.
 *
 * The user, not the model, answers the consent gate (SPEC §5.3) and approves risky
 * commands (§3.8). When the client declares MCP elicitation, the server asks the user
 * through it (`elicitation/create`, a yes/no form). A toolkit's `onPermissionRequest` and
 * `onApproval` are fixed when it is created, and their presence decides the flow (with a
 * handler there is no phrase flow), so a server holds two toolkits built from the same
 * options: one whose handlers elicit, for clients that can, and one without handlers,
 * where the nonce/phrase flows apply. The handlers find the connection and the tool call
 * to ask through in an AsyncLocalStorage set around each `session.call`, so one toolkit
 * serves any number of connections. (Sessions of the two toolkits do not share the
 * per-path write lock; a write still checks the file's version right before its rename,
 * so a concurrent change from the other is STALE, never lost.)
 *
 * Also: a call with a `progressToken` gets `notifications/progress` while it runs longer
 * than a moment (a heartbeat with the elapsed time, which keeps a client's request
 * timeout from firing during a long shell command or search); a tool that is not listed is
 * a JSON-RPC error -32602 (MCP 2025-11-25), not a result; and with `roots` the client's
 * MCP Roots become the session's allowed folders (roots.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { readFileSync } from 'node:fs'
import path from 'node:path'

import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ProgressToken,
  type RequestId,
  RootsListChangedNotificationSchema,
  type ServerNotification,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'

import { clip, fitMessage, MAX_MESSAGE_BYTES } from '../errors.js'
import type { PermissionRequest } from '../policy/consent.js'
import type { Dialect } from '../policy/presets.js'
import type { ToolResult } from '../result.js'
import type { ApprovalRequest } from '../tool.js'
import { createToolkit, type Session, type Toolkit, type ToolkitOptions } from '../toolkit.js'
import { rootFolders } from './roots.js'

/** The toolkits one MCP endpoint serves from (see the file comment for why two). */
export interface McpToolkits {
  /** For clients without elicitation: no handlers, so the nonce/phrase flows apply. */
  plain: Toolkit
  /** For clients that declare elicitation: created with `elicitationHandlers()`. */
  eliciting?: Toolkit
  /** The options both were made from: a connection whose roots widen the allowed folders makes its own from them. */
  options?: ToolkitOptions
  /** Toolkits made for one connection's roots, so that a stop reaches their commands too. */
  own?: Set<Toolkit>
}

export interface McpServerOptions {
  /** Which tool-name family `tools/list` shows: 'claude' | 'revka' | 'consent' | 'gemini' | 'all'. Default: the toolkit's. */
  dialect?: Dialect | 'all'
  /** Where the server's own lines go (stderr in `fsgate mcp`; stdout is the protocol on stdio). */
  log?: (line: string) => void
  /**
   * Take the client's MCP Roots as the session's allowed folders (the host's opt-in:
   * `fsgate mcp --roots`): each root folder is added to `policy.allowedPaths`, and when
   * `rootsWorkspace` is set the first root is the workspace too. Default false.
   */
  roots?: boolean
  /** With `roots`: the first root is the workspace (no --workspace was given). */
  rootsWorkspace?: boolean
  /** How long a call runs before its first progress notification, and between them. Default 1000 ms. */
  progressIntervalMs?: number
  /**
   * Tells the user a phrase (approval, consent) by a way the model and its commands cannot
   * read, for clients without elicitation; returns where the user finds it, for the model.
   * Default: the `log` line (`fsgate mcp` passes a terminal, or a private file).
   */
  tellUser?: (line: string) => string
}

/**
 * Both toolkits for `createMcpServer`, from one set of options. Handlers in `options`
 * are replaced: over MCP the user is asked through the client or not at all.
 */
export function createMcpToolkits(options: ToolkitOptions): McpToolkits {
  const { onPermissionRequest: _p, onApproval: _a, ...rest } = options
  return { plain: createToolkit(rest), eliciting: createToolkit({ ...rest, ...elicitationHandlers() }), options: rest, own: new Set() }
}

/**
 * A server for one MCP connection (connect it to one transport). Pass the same toolkits
 * to every connection: they hold what sessions share (configuration, write locks, caches).
 */
export function createMcpServer(toolkits: McpToolkits | Toolkit, options: McpServerOptions = {}): Server {
  const { plain, eliciting, options: base, own } = 'plain' in toolkits ? toolkits : { plain: toolkits, eliciting: undefined, options: undefined, own: undefined }
  const log = options.log ?? (() => {})
  const tellUser =
    options.tellUser ??
    ((line: string) => {
      log(line)
      return "the fsgate server's own log (its stderr)"
    })
  const every = options.progressIntervalMs ?? 1000
  const server = new Server(
    { name: 'fsgate', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions: `File and code tools for the workspace ${plain.workspace}; relative paths resolve there.${plain.preset.readBeforeWrite ? ' Read a file before you change it.' : ''}`,
    },
  )

  // Listed once: the definitions do not change while the server runs.
  const tools: McpTool[] = plain.definitions({ dialect: options.dialect, format: 'mcp' }).map((def) => {
    const { name, description, inputSchema } = def as { name: string; description: string; inputSchema: McpTool['inputSchema'] }
    const readOnly = READ_ONLY.has(plain.lookup(name, options.dialect === 'all' ? undefined : options.dialect)?.tool.name ?? '')
    return { name, description, inputSchema, annotations: { readOnlyHint: readOnly } }
  })
  const listed = new Set(tools.map((t) => t.name))
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
  // The connection's background commands end with it.
  server.onclose = () => {
    void session?.then((s) => s.close())
  }

  // The session is made at the first call, when the client's capabilities (and roots) are known.
  let session: Promise<Session> | undefined
  const makeSession = async (): Promise<Session> => {
    const elicits = eliciting !== undefined && server.getClientCapabilities()?.elicitation?.form !== undefined
    let toolkit = elicits ? (eliciting as Toolkit) : plain
    let where = ''
    if (options.roots && base && server.getClientCapabilities()?.roots) {
      const roots = await rootFolders(server, log)
      if (roots.length > 0) {
        const allowed = [...(base.policy?.allowedPaths ?? []), ...roots]
        const workspace = options.rootsWorkspace ? roots[0] : base.workspace
        toolkit = createToolkit({ ...base, workspace, policy: { ...base.policy, allowedPaths: allowed }, ...(elicits ? elicitationHandlers() : {}) })
        own?.add(toolkit)
        where = `, roots ${roots.join(', ')}`
      }
    }
    const s = toolkit.createSession()
    const client = server.getClientVersion()
    log(`session ${s.id} for ${client ? `${client.name} ${client.version}` : 'a client'}${elicits ? ', asking the user through elicitation' : ''}${where}`)
    return s
  }
  const sessionFor = (): Promise<Session> => {
    session ??= makeSession()
    return session
  }
  // New roots take effect at the next call, in a new session (read records and grants start over).
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    if (!options.roots || session === undefined) return
    log('the client changed its roots: the next call starts a new session with them')
    session = undefined
  })

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: input = {} } = request.params
    // A tool this server does not list is a protocol error (MCP 2025-11-25), not a tool result.
    // (A plain Error with a code: McpError would put "MCP error -32602:" into the message.)
    if (!listed.has(name)) throw Object.assign(new Error(`Unknown tool: ${clip(name, 100)}`), { code: ErrorCode.InvalidParams })
    const s = await sessionFor()
    // extra.signal is aborted when the client cancels the call or the connection closes;
    // a running shell or git command is then killed.
    const call: CurrentCall = { server, requestId: extra.requestId, signal: extra.signal, workspace: s.toolkit.workspace }
    // A name two families share (write_file) is the one of the family listed.
    const dialect = options.dialect === 'all' ? undefined : options.dialect
    const token = request.params._meta?.progressToken
    const stop = token === undefined ? () => {} : heartbeat(token, PROGRESS_WORDS[plain.lookup(name, dialect)?.tool.name ?? ''] ?? 'working', every, extra.sendNotification)
    let result: ToolResult
    try {
      result = await currentCall.run(call, () => s.call(name, input, { signal: extra.signal, dialect }))
    } finally {
      stop()
    }
    const phrase = result.data?.grantPhrase
    const code = result.error?.code
    if ((code === 'APPROVAL_REQUIRED' || code === 'PERMISSION_REQUIRED') && typeof phrase === 'string') {
      // Without elicitation a phrase must reach the user but not the model (SPEC §8.1):
      // over MCP nobody notes the user's messages, so a phrase the model read it could
      // repeat. Nothing sent to the client is safe: a log notification travels on the tool
      // call's own response stream, which the client's model side reads. The approval
      // line shows the whole command (the phrase approves all of it), on one line, with
      // every character that could hide or reorder what the user reads escaped.
      const what =
        code === 'APPROVAL_REQUIRED'
          ? `approval needed (session ${s.id}): to run ${visible(JSON.stringify(String(result.data?.command ?? '')))} once, tell the assistant: ${phrase}`
          : `consent needed (session ${s.id}): to let the assistant change existing files in ${visible(String(result.data?.unit ?? ''))}, tell it: ${phrase}`
      const where = tellUser(what)
      result = phraseElsewhere(result, code, where)
    }
    return toCallToolResult(result)
  })
  return server
}

/** What the progress messages say each tool is doing. */
const PROGRESS_WORDS: Record<string, string> = {
  shell: 'running the command',
  git_operations: 'running git',
  content_search: 'searching',
  glob_search: 'walking the folders',
  semantic_code_search: 'indexing and ranking',
  pdf_read: 'extracting the text',
  file_read: 'reading',
  file_write: 'writing',
  file_edit: 'editing',
}

/**
 * Sends `notifications/progress` for `token` every `every` ms, the first after `every`
 * ms, until the returned function is called. The native calls report no fraction done,
 * so `progress` counts the notifications (it must increase) and there is no `total`; the
 * message says what the tool is doing and for how long.
 */
function heartbeat(token: ProgressToken, doing: string, every: number, send: (n: ServerNotification) => Promise<void>): () => void {
  const started = Date.now()
  let n = 0
  const timer = setInterval(() => {
    n++
    const seconds = Math.round((Date.now() - started) / 1000)
    send({ method: 'notifications/progress', params: { progressToken: token, progress: n, message: `${doing}: ${seconds} s` } }).catch(() => {})
  }, every)
  timer.unref()
  return () => clearInterval(timer)
}

/** The call an elicitation asks about: its connection, its request (HTTP streams the question on it), its signal. */
interface CurrentCall {
  server: Server
  requestId: RequestId
  signal: AbortSignal
  workspace: string
}

const currentCall = new AsyncLocalStorage<CurrentCall>()

/** How long the user has to answer an elicitation (the SDK's default is 60 s, short for a person). */
const ELICIT_TIMEOUT_MS = 10 * 60_000

/**
 * `onPermissionRequest` and `onApproval` that ask the user through MCP elicitation: a
 * yes/no form in the client. Outside an MCP tool call there is nobody to ask, so the
 * answer is no; a failed question (the client errs, the call is cancelled) is a refusal too.
 */
export function elicitationHandlers(): Required<Pick<ToolkitOptions, 'onPermissionRequest' | 'onApproval'>> {
  return {
    onPermissionRequest: (req: PermissionRequest) =>
      ask(
        (call) =>
          `The assistant wants to change the existing file ${req.path} (${req.tool}). Allow it to replace existing files in ${unitLabel(req, call.workspace)} for the rest of this session?`,
        'Allow changes to existing files there',
      ),
    onApproval: (req: ApprovalRequest) =>
      ask(
        () =>
          `The assistant wants to run this ${req.risk}-risk shell command ${req.sandboxed ? 'in the sandbox' : 'WITHOUT the sandbox, with your own rights'} (${req.reason}):\n\n${visible(req.command)}\n\n${req.description ? `The assistant says it will: ${visible(req.description)}\n\n` : ''}Run it once?`,
        'Run this command once',
      ),
  }
}

async function ask(message: (call: CurrentCall) => string, title: string): Promise<boolean> {
  const call = currentCall.getStore()
  if (!call) return false
  const answer = await call.server.elicitInput(
    {
      message: message(call),
      requestedSchema: {
        type: 'object',
        properties: { allow: { type: 'boolean', title, description: 'Yes to allow, no to refuse.', default: false } },
        required: ['allow'],
      },
    },
    { relatedRequestId: call.requestId, signal: call.signal, timeout: ELICIT_TIMEOUT_MS },
  )
  return answer.action === 'accept' && answer.content?.allow === true
}

/**
 * `text` with the characters that would hide or reorder what a person reads escaped as
 * `\u….`: controls other than line breaks and tabs (a terminal's escape sequences), and
 * format and separator characters (right-to-left overrides, zero-width ones).
 */
export function visible(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => {
    if (c === '\n' || c === '\t') return c
    const code = c.codePointAt(0) as number
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

/** What a grant covers, as the user knows it: `src/`, `README.md`, or a folder outside the workspace. */
function unitLabel(req: PermissionRequest, workspace: string): string {
  const rel = path.relative(workspace, req.unit)
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return `${req.unit}${path.sep}`
  return req.unit === req.realPath ? rel : `${rel}/`
}

/** Tools that only look; MCP clients may run them without asking. */
const READ_ONLY = new Set(['file_read', 'glob_search', 'content_search', 'semantic_code_search', 'pdf_read', 'list_directory', 'file_info', 'task_output'])

/**
 * A ToolResult as MCP's CallToolResult: `content` (plus `note`, for the model) and
 * `isError`, and for an error the code as a last text line, since the model sees only content.
 *
 * No `structuredContent`: `data` holds facts for the host program (diffs, stdout again,
 * hashes), and an MCP client hands results to the model, some preferring
 * structuredContent over content — so it would cost tokens twice, bypass the text shaped
 * for models, and carry `data.grantPhrase`, which would let the model approve itself.
 */
/**
 * `result` as the model reads it when its phrase went to `where` (the server's log): the
 * gate's own text names the phrase and says the host showed it, so it is told anew, short,
 * with where the user finds the phrase and what to do next.
 */
function phraseElsewhere(result: ToolResult, code: 'APPROVAL_REQUIRED' | 'PERMISSION_REQUIRED', where: string): ToolResult {
  const d = result.data ?? {}
  // The consent preset's mark ("[permission_required] ") stays first.
  const first = result.content[0]
  const mark = first?.type === 'text' ? (/^\[[a-z_]+\] /.exec(first.text)?.[0] ?? '') : ''
  const refused = d.refused === true ? 'Phrase refused. ' : ''
  const what =
    code === 'APPROVAL_REQUIRED'
      ? `This ${String(d.risk ?? 'risky')}-risk command needs the user's approval.`
      : `Changing files in ${clip(String(d.unit ?? ''), 32)} needs the user's consent.`
  // The place is told whole, or not at all: a path cut in its middle is one the user cannot open.
  const told = (place: string) => `${mark}${refused}${what} The phrase is in ${place}, hidden from you: ask the user for it, then repeat the call with grant_phrase.`
  const text = Buffer.byteLength(told(where)) <= MAX_MESSAGE_BYTES ? told(where) : told("the server's phrase log (its stderr names it)")
  return { ...result, content: [{ type: 'text', text: fitMessage(text) }] }
}

export function toCallToolResult(result: ToolResult): CallToolResult {
  const content: CallToolResult['content'] = [...result.content]
  if (result.isError && result.error) content.push({ type: 'text', text: `[error code: ${result.error.code}]` })
  return { content, isError: result.isError }
}

function readVersion(): string {
  try {
    // ts/mcp/ and dist/mcp/ are both two folders below package.json.
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  } catch {
    return '0.0.0'
  }
}

const VERSION = readVersion()
