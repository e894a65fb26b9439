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
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { readFileSync } from 'node:fs'
import path from 'node:path'

import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type RequestId, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'

import { clip } from '../errors.js'
import type { PermissionRequest } from '../policy/consent.js'
import type { Dialect } from '../policy/presets.js'
import type { ToolResult } from '../result.js'
import type { ApprovalRequest } from '../tool.js'
import { createToolkit, type Session, type Toolkit, type ToolkitOptions } from '../toolkit.js'

/** The toolkits one MCP endpoint serves from (see the file comment for why two). */
export interface McpToolkits {
  /** For clients without elicitation: no handlers, so the nonce/phrase flows apply. */
  plain: Toolkit
  /** For clients that declare elicitation: created with `elicitationHandlers()`. */
  eliciting?: Toolkit
}

export interface McpServerOptions {
  /** Which tool-name family `tools/list` shows: 'claude' | 'revka' | 'consent' | 'all'. Default: the preset's. */
  dialect?: Dialect | 'all'
  /** Where the server's own lines go (stderr in `fsgate mcp`; stdout is the protocol on stdio). */
  log?: (line: string) => void
}

/**
 * Both toolkits for `createMcpServer`, from one set of options. Handlers in `options`
 * are replaced: over MCP the user is asked through the client or not at all.
 */
export function createMcpToolkits(options: ToolkitOptions): McpToolkits {
  const { onPermissionRequest: _p, onApproval: _a, ...rest } = options
  return { plain: createToolkit(rest), eliciting: createToolkit({ ...rest, ...elicitationHandlers() }) }
}

/**
 * A server for one MCP connection (connect it to one transport). Pass the same toolkits
 * to every connection: they hold what sessions share (configuration, write locks, caches).
 */
export function createMcpServer(toolkits: McpToolkits | Toolkit, options: McpServerOptions = {}): Server {
  const { plain, eliciting } = 'plain' in toolkits ? toolkits : { plain: toolkits, eliciting: undefined }
  const log = options.log ?? (() => {})
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
    const readOnly = READ_ONLY.has(plain.lookup(name)?.tool.name ?? '')
    return { name, description, inputSchema, annotations: { readOnlyHint: readOnly } }
  })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))

  // The session is made at the first call, when the client's capabilities are known.
  let session: Session | undefined
  const sessionFor = (): Session => {
    if (!session) {
      const elicits = eliciting !== undefined && server.getClientCapabilities()?.elicitation?.form !== undefined
      session = (elicits ? eliciting : plain).createSession()
      const client = server.getClientVersion()
      log(`session ${session.id} for ${client ? `${client.name} ${client.version}` : 'a client'}${elicits ? ', asking the user through elicitation' : ''}`)
    }
    return session
  }

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const s = sessionFor()
    const { name, arguments: input = {} } = request.params
    // extra.signal is aborted when the client cancels the call or the connection closes;
    // a running shell or git command is then killed.
    const call: CurrentCall = { server, requestId: extra.requestId, signal: extra.signal, workspace: s.toolkit.workspace }
    const result = await currentCall.run(call, () => s.call(name, input, { signal: extra.signal }))
    const phrase = result.data?.grantPhrase
    let note: string | undefined
    if (result.error?.code === 'APPROVAL_REQUIRED' && typeof phrase === 'string') {
      // Without elicitation the approval phrase must reach the user but not the model
      // (SPEC §8.1). Nothing sent to the client is safe: a log notification travels on
      // the tool call's own response stream, which the client's model side reads. The
      // server's own log (stderr, or the terminal of `fsgate mcp --http`) is the user's.
      log(`approval needed (session ${s.id}): to run ${JSON.stringify(clip(String(result.data?.command ?? ''), 400))} once, tell the assistant: ${phrase}`)
      note = "The phrase was written to the fsgate server's own log (its stderr), which you cannot see. Ask the user to look there and tell you the phrase."
    }
    return toCallToolResult(result, note)
  })
  return server
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
          `The assistant wants to run this ${req.risk}-risk shell command ${req.sandboxed ? 'in the sandbox' : 'WITHOUT the sandbox, with your own rights'} (${req.reason}):\n\n${req.command}\n\nRun it once?`,
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

/** What a grant covers, as the user knows it: `src/`, `README.md`, or a folder outside the workspace. */
function unitLabel(req: PermissionRequest, workspace: string): string {
  const rel = path.relative(workspace, req.unit)
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return `${req.unit}${path.sep}`
  return req.unit === req.realPath ? rel : `${rel}/`
}

/** Tools that only look; MCP clients may run them without asking. */
const READ_ONLY = new Set(['file_read', 'glob_search', 'content_search', 'semantic_code_search', 'pdf_read'])

/**
 * A ToolResult as MCP's CallToolResult: `content` (plus `note`, for the model) and
 * `isError`, and for an error the code as a last text line, since the model sees only content.
 *
 * No `structuredContent`: `data` holds facts for the host program (diffs, stdout again,
 * hashes), and an MCP client hands results to the model, some preferring
 * structuredContent over content — so it would cost tokens twice, bypass the text shaped
 * for models, and carry `data.grantPhrase`, which would let the model approve itself.
 */
export function toCallToolResult(result: ToolResult, note?: string): CallToolResult {
  const content: CallToolResult['content'] = [...result.content]
  if (note !== undefined) content.push({ type: 'text', text: note })
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
