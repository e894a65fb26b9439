/**
 * OpenAI adapters for both APIs of the `openai` SDK.
 *
 * Chat Completions: `openaiChatTools(toolkit)` for `chat.completions.create({ tools })`
 * and `runOpenAIChatToolCalls(session, message)`, which answers every tool call of an
 * assistant message with a `{ role: 'tool' }` message.
 *
 * Responses: `openaiResponsesTools(toolkit)` for `responses.create({ tools })` and
 * `runOpenAIResponsesCalls(session, response)`, which answers every `function_call`
 * item with a `function_call_output` item. In the 'codex' dialect apply_patch is a
 * freeform custom tool (Codex's Lark grammar); with `{ builtin: true }` the API's own
 * `apply_patch` and `shell` tools are declared, and their `apply_patch_call` and
 * `shell_call` items answered.
 *
 * Arguments arrive as JSON strings: arguments that do not parse become an error result
 * the model can read and correct, never a throw. Neither API has an error flag on tool
 * output, so failed calls read "Error: …" (or the preset's "[error] …").
 *
 * Images: a Chat Completions tool message carries text only, so by default each image
 * is sent in one extra user message after the tool messages (the tool message says
 * so), which vision models see; `images: 'omit'` puts an "[image omitted: …]" line
 * there instead. The Responses API takes images in `function_call_output` itself
 * (`input_image` with a data URL), so nothing extra is needed there.
 *
 * The SDK is not a dependency of fsgate, not even for types: the shapes below are
 * declared here, structurally compatible with the `openai` SDK's types (the tests check
 * that against the real SDK types).
 */
import type { Dialect } from '../policy/presets.js'
import { APPLY_PATCH_FREEFORM_DESCRIPTION, APPLY_PATCH_GRAMMAR } from '../tools/apply-patch.js'
import type { ToolResult } from '../result.js'
import type { Session, Toolkit } from '../toolkit.js'
import { clip } from '../errors.js'
import { dataUrl, errorText, imagesOf, joinedText, malformedArgumentsText, omittedImage, parseArguments, type ResultHandler } from './shared.js'

export interface OpenAIToolsOptions {
  /** Which tool-name family: 'claude' | 'revka' | 'consent' | 'gemini' | 'all'. Default: the toolkit's. */
  dialect?: Dialect | 'all'
}

export interface RunOpenAIOptions {
  /** Cancels the calls in flight; calls not yet started return ABORTED results. */
  signal?: AbortSignal
  /** Each call's whole ToolResult, for the host (show the user `data.grantPhrase`). */
  onResult?: ResultHandler
  /** The family the tools were listed in, for a name two families share (write_file). Default: the toolkit's. */
  dialect?: Dialect
}

// ---------------------------------------------------------------------------------------
// Chat Completions

/** A function tool of Chat Completions (`ChatCompletionFunctionTool`). */
export interface OpenAIChatTool {
  type: 'function'
  function: { name: string; description: string; parameters: Record<string, unknown> }
}

/** A tool call of an assistant message; only `type: 'function'` calls are fsgate's. */
export interface OpenAIChatToolCallLike {
  id: string
  type: string
  function?: { name: string; arguments: string }
}

/** A `{ role: 'tool' }` message (`ChatCompletionToolMessageParam`). */
export interface OpenAIChatToolMessage {
  role: 'tool'
  tool_call_id: string
  content: string
}

/** The user message that carries tool images (`ChatCompletionUserMessageParam`). */
export interface OpenAIChatImageMessage {
  role: 'user'
  content: Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }>
}

export type OpenAIChatResultMessage = OpenAIChatToolMessage | OpenAIChatImageMessage

export interface RunOpenAIChatOptions extends RunOpenAIOptions {
  /**
   * Where images of tool results go: 'user-message' (default) sends them in one user
   * message after the tool messages; 'omit' replaces each with an "[image omitted: …]" line.
   */
  images?: 'user-message' | 'omit'
}

/** The toolkit's tools as Chat Completions' `tools` parameter. */
export function openaiChatTools(toolkit: Toolkit, options: OpenAIToolsOptions = {}): OpenAIChatTool[] {
  return toolkit.definitions({ dialect: options.dialect, format: 'openai' }).map((def) => {
    if (!('function' in def)) throw new Error('fsgate: definitions() did not return the openai format')
    return { type: 'function', function: { ...def.function } }
  })
}

/**
 * Runs every tool call of an assistant message (a `ChatCompletionMessage`, e.g.
 * `completion.choices[0].message`) through the session, one at a time in order, and
 * returns the messages to append: one `{ role: 'tool' }` message per call, in the
 * calls' order, then (only when a result had images and `images` is 'user-message') one
 * user message with those images. Never throws. Returns [] when there are no calls.
 */
export async function runOpenAIChatToolCalls(
  session: Session,
  message: { tool_calls?: readonly OpenAIChatToolCallLike[] | null },
  options: RunOpenAIChatOptions = {},
): Promise<OpenAIChatResultMessage[]> {
  const toolMessages: OpenAIChatToolMessage[] = []
  const imageParts: OpenAIChatImageMessage['content'] = []
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function' || !call.function) {
      toolMessages.push({ role: 'tool', tool_call_id: call.id, content: `Error: '${clip(String(call.type), 40)}' tool calls are not fsgate's; call its tools as functions.` })
      continue
    }
    const { name, arguments: raw } = call.function
    const parsed = parseArguments(raw)
    if (!parsed.ok) {
      toolMessages.push({ role: 'tool', tool_call_id: call.id, content: malformedArgumentsText(name, raw, parsed.reason) })
      continue
    }
    const result = await session.call(name, parsed.input, { signal: options.signal, dialect: options.dialect })
    options.onResult?.(result, { id: call.id, name, input: parsed.input })
    const images = imagesOf(result.content)
    const lines = [result.isError ? errorText(result) : joinedText(result.content)]
    if (images.length > 0 && options.images === 'omit') {
      for (const image of images) lines.push(omittedImage(image, 'tool messages carry text only'))
    } else if (images.length > 0) {
      lines.push(`[${images.length === 1 ? 'the image is' : `the ${images.length} images are`} in the next user message]`)
      imageParts.push({ type: 'text', text: `Image${images.length === 1 ? '' : 's'} from tool call ${call.id} (${name}):` })
      for (const image of images) imageParts.push({ type: 'image_url', image_url: { url: dataUrl(image) } })
    }
    toolMessages.push({ role: 'tool', tool_call_id: call.id, content: lines.filter((l) => l !== '').join('\n\n') })
  }
  return imageParts.length > 0 ? [...toolMessages, { role: 'user', content: imageParts }] : toolMessages
}

// ---------------------------------------------------------------------------------------
// Responses

/** A function tool of the Responses API (`FunctionTool`). */
export interface OpenAIResponsesTool {
  type: 'function'
  name: string
  description: string
  parameters: Record<string, unknown>
  /** fsgate's schemas have optional fields, which strict mode does not allow. */
  strict: false
}

/** An output item of a response; function, custom tool, apply_patch and shell calls are acted on. */
export interface OpenAIResponseItemLike {
  type: string
  call_id?: string | null
  name?: string | null
  arguments?: unknown
  /** custom_tool_call: the freeform input. */
  input?: unknown
  /** apply_patch_call: `{ type, path, diff }`, what to do to which file. */
  operation?: unknown
  /** shell_call: `{ commands, timeout_ms, max_output_length }`. */
  action?: unknown
}

/** An apply_patch_call's operation. */
interface PatchOperation {
  type?: unknown
  path?: unknown
  diff?: unknown
}

/** A shell_call's action. */
interface ShellAction {
  commands?: unknown
  timeout_ms?: unknown
  max_output_length?: unknown
}

/** A custom tool of the Responses API (`CustomTool`): the freeform apply_patch, its input constrained to Codex's Lark grammar. */
export interface OpenAICustomTool {
  type: 'custom'
  name: string
  description: string
  format: { type: 'grammar'; syntax: 'lark'; definition: string }
}

/** The Responses API's own apply_patch tool (`ApplyPatchTool`). */
export interface OpenAIApplyPatchTool {
  type: 'apply_patch'
}

/** The Responses API's own shell tool (`FunctionShellTool`). */
export interface OpenAIShellTool {
  type: 'shell'
}

/** Any tool `openaiResponsesTools` declares. */
export type OpenAIResponsesAnyTool = OpenAIResponsesTool | OpenAICustomTool | OpenAIApplyPatchTool | OpenAIShellTool

export interface OpenAIResponsesToolsOptions extends OpenAIToolsOptions {
  /**
   * Declare apply_patch and the shell as the Responses API's own tools (`{ type:
   * 'apply_patch' }`, `{ type: 'shell' }`), which GPT models are trained on. Implies the
   * 'codex' dialect unless `dialect` says otherwise.
   */
  builtin?: boolean
  /** Declare apply_patch as a freeform custom tool with Codex's Lark grammar. Default: true in the 'codex' dialect. */
  freeform?: boolean
}

/** A `custom_tool_call_output` input item (`ResponseCustomToolCallOutput`). */
export interface OpenAICustomToolCallOutput {
  type: 'custom_tool_call_output'
  call_id: string
  output: string
}

/** An `apply_patch_call_output` input item (`ResponseInputItem.ApplyPatchCallOutput`). */
export interface OpenAIApplyPatchCallOutput {
  type: 'apply_patch_call_output'
  call_id: string
  status: 'completed' | 'failed'
  output: string
}

/** One command's part of a `shell_call_output` (`ResponseFunctionShellCallOutputContent`). */
export interface OpenAIShellCommandOutput {
  stdout: string
  stderr: string
  outcome: { type: 'exit'; exit_code: number } | { type: 'timeout' }
}

/** A `shell_call_output` input item (`ResponseInputItem.ShellCallOutput`). */
export interface OpenAIShellCallOutput {
  type: 'shell_call_output'
  call_id: string
  output: OpenAIShellCommandOutput[]
  max_output_length?: number | null
}

/** Any item `runOpenAIResponsesCalls` returns. */
export type OpenAIResponsesOutput = OpenAIFunctionCallOutput | OpenAICustomToolCallOutput | OpenAIApplyPatchCallOutput | OpenAIShellCallOutput

/** Content of a `function_call_output` (`ResponseFunctionCallOutputItem`). */
export type OpenAIFunctionCallOutputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' }

/** A `function_call_output` input item (`ResponseInputItem.FunctionCallOutput`). */
export interface OpenAIFunctionCallOutput {
  type: 'function_call_output'
  call_id: string
  /** The text, or text and images when the result has images. */
  output: string | OpenAIFunctionCallOutputContent[]
}

/**
 * The toolkit's tools as the Responses API's `tools` parameter: function tools; in the
 * 'codex' dialect apply_patch as a freeform custom tool; with `builtin: true`
 * `{ type: 'apply_patch' }` and `{ type: 'shell' }`.
 */
export function openaiResponsesTools(
  toolkit: Toolkit,
  options?: OpenAIToolsOptions & { dialect?: Exclude<Dialect, 'codex'> | 'all'; builtin?: false; freeform?: false },
): OpenAIResponsesTool[]
export function openaiResponsesTools(toolkit: Toolkit, options: OpenAIResponsesToolsOptions): OpenAIResponsesAnyTool[]
export function openaiResponsesTools(toolkit: Toolkit, options: OpenAIResponsesToolsOptions = {}): OpenAIResponsesAnyTool[] {
  const dialect = options.dialect ?? (options.builtin ? 'codex' : undefined)
  const freeform = options.freeform ?? dialect === 'codex'
  return openaiChatTools(toolkit, { dialect }).map(({ function: f }): OpenAIResponsesAnyTool => {
    if (options.builtin && f.name === 'apply_patch') return { type: 'apply_patch' }
    if (options.builtin && f.name === 'shell_command') return { type: 'shell' }
    if (freeform && f.name === 'apply_patch') {
      return { type: 'custom', name: f.name, description: APPLY_PATCH_FREEFORM_DESCRIPTION, format: { type: 'grammar', syntax: 'lark', definition: APPLY_PATCH_GRAMMAR } }
    }
    return { type: 'function', name: f.name, description: f.description, parameters: f.parameters, strict: false }
  })
}

/**
 * Runs every call of a response (the `Response`, or its `output` array) through the
 * session, one at a time in order, and returns one output item per call, for the next
 * request's `input` (after the response's own output items, or with
 * `previous_response_id`): `function_call` → `function_call_output`; `custom_tool_call`
 * (the freeform apply_patch) → `custom_tool_call_output`; `apply_patch_call` →
 * `apply_patch_call_output`; `shell_call` → `shell_call_output`, each command's stdout,
 * stderr and outcome, the two together cut to the call's `max_output_length`. Never throws. Returns [] when
 * the response made no calls.
 */
export async function runOpenAIResponsesCalls(
  session: Session,
  response: { output: readonly OpenAIResponseItemLike[] } | readonly OpenAIResponseItemLike[],
  options: RunOpenAIOptions = {},
): Promise<OpenAIResponsesOutput[]> {
  const items = isItemArray(response) ? response : response.output
  const outputs: OpenAIResponsesOutput[] = []
  for (const item of items) {
    if (item.type === 'custom_tool_call') outputs.push(await customToolCall(session, item, options))
    else if (item.type === 'apply_patch_call') outputs.push(await applyPatchCall(session, item, options))
    else if (item.type === 'shell_call') outputs.push(await shellCall(session, item, options))
    if (item.type !== 'function_call') continue
    const name = String(item.name)
    const callId = String(item.call_id)
    const parsed = parseArguments(item.arguments ?? '')
    if (!parsed.ok) {
      outputs.push({ type: 'function_call_output', call_id: callId, output: malformedArgumentsText(name, String(item.arguments), parsed.reason) })
      continue
    }
    const result = await session.call(name, parsed.input, { signal: options.signal, dialect: options.dialect })
    options.onResult?.(result, { id: callId, name, input: parsed.input })
    outputs.push({ type: 'function_call_output', call_id: callId, output: toResponsesOutput(result) })
  }
  return outputs
}

/** A result as `function_call_output.output`: a string, or content parts when it has images. */
export function toResponsesOutput(result: ToolResult): OpenAIFunctionCallOutput['output'] {
  if (result.isError) return errorText(result)
  if (imagesOf(result.content).length === 0) return joinedText(result.content)
  return result.content
    .filter((b) => b.type !== 'text' || b.text !== '')
    .map((b): OpenAIFunctionCallOutputContent => (b.type === 'text' ? { type: 'input_text', text: b.text } : { type: 'input_image', image_url: dataUrl(b), detail: 'auto' }))
}

/** A freeform custom tool call: its text is the `input` of the tool of that name (apply_patch). */
async function customToolCall(session: Session, item: OpenAIResponseItemLike, options: RunOpenAIOptions): Promise<OpenAICustomToolCallOutput> {
  const name = String(item.name)
  const callId = String(item.call_id)
  const input = { input: typeof item.input === 'string' ? item.input : String(item.input ?? '') }
  const result = await session.call(name, input, { signal: options.signal })
  options.onResult?.(result, { id: callId, name, input })
  return { type: 'custom_tool_call_output', call_id: callId, output: result.isError ? errorText(result) : joinedText(result.content) }
}

/** An apply_patch_call: one file's create, update or delete, made a patch and applied. */
async function applyPatchCall(session: Session, item: OpenAIResponseItemLike, options: RunOpenAIOptions): Promise<OpenAIApplyPatchCallOutput> {
  const callId = String(item.call_id)
  const patch = patchOf(item.operation)
  if (typeof patch !== 'string') return { type: 'apply_patch_call_output', call_id: callId, status: 'failed', output: `Error: ${patch.error}` }
  const input = { input: patch }
  const result = await session.call('apply_patch', input, { signal: options.signal })
  options.onResult?.(result, { id: callId, name: 'apply_patch', input })
  return { type: 'apply_patch_call_output', call_id: callId, status: result.isError ? 'failed' : 'completed', output: result.isError ? errorText(result) : joinedText(result.content) }
}

/**
 * The V4A patch of an apply_patch_call's operation: `update_file`'s diff is the hunks of
 * an `*** Update File:` section, `create_file`'s the `+` lines of an `*** Add File:` one
 * (lines without a `+` get one). An operation changes its one file: a path with a line
 * break, or a diff with a file header of its own (which would start another file's
 * section of the patch), is refused.
 */
export function patchOf(operation: unknown): string | { error: string } {
  const op = (typeof operation === 'object' && operation !== null ? operation : {}) as PatchOperation
  const path = op.path
  if (typeof path !== 'string' || path === '') return { error: 'the apply_patch_call has no operation path; send the operation again with its path.' }
  if (/[\r\n]/.test(path)) return { error: 'the operation path has a line break; send the operation again with the path of one file.' }
  const diff = (typeof op.diff === 'string' ? op.diff : '').replace(/\r?\n$/, '')
  const other = (text: string) =>
    text
      .split(/\r?\n/)
      .map((line) => /^\s*\*\*\* (?:Add|Delete|Update) File: (.*)$/.exec(line)?.[1]?.trim())
      .find((named) => named !== undefined && named !== path)
  // A model that sent a whole patch as the diff: it is the patch, if it changes the operation's file only.
  if (diff.trimStart().startsWith('*** Begin Patch')) {
    const named = other(diff)
    return named === undefined ? diff : { error: `the diff is a patch that also changes ${named}, but this apply_patch_call is for ${path}; send one operation per file.` }
  }
  if (op.type === 'update_file' && diff.split(/\r?\n/).some((line) => line.startsWith('*** ') && line !== '*** End of File')) {
    return { error: `the update_file diff of ${path} has a '*** ' line that is not '*** End of File'; give only its @@ hunks, and send other files as operations of their own.` }
  }
  switch (op.type) {
    case 'create_file': {
      const lines = diff === '' ? [] : diff.split(/\r?\n/).map((l) => (l.startsWith('+') ? l : `+${l}`))
      return ['*** Begin Patch', `*** Add File: ${path}`, ...lines, '*** End Patch'].join('\n')
    }
    case 'update_file':
      return ['*** Begin Patch', `*** Update File: ${path}`, diff, '*** End Patch'].join('\n')
    case 'delete_file':
      return ['*** Begin Patch', `*** Delete File: ${path}`, '*** End Patch'].join('\n')
    default:
      return { error: `unknown apply_patch operation '${String(op.type)}'; use create_file, update_file or delete_file.` }
  }
}

/** A shell_call: each command through the session's shell_command, its output cut to max_output_length characters. */
async function shellCall(session: Session, item: OpenAIResponseItemLike, options: RunOpenAIOptions): Promise<OpenAIShellCallOutput> {
  const callId = String(item.call_id)
  const action = (typeof item.action === 'object' && item.action !== null ? item.action : {}) as ShellAction
  const max = typeof action.max_output_length === 'number' && action.max_output_length >= 0 ? action.max_output_length : null
  const commands = Array.isArray(action.commands) ? action.commands.map(String) : []
  const output: OpenAIShellCommandOutput[] = []
  for (const command of commands) {
    const input = { command, ...(typeof action.timeout_ms === 'number' && action.timeout_ms > 0 ? { timeout_ms: action.timeout_ms } : {}) }
    const result = await session.call('shell_command', input, { signal: options.signal })
    options.onResult?.(result, { id: callId, name: 'shell_command', input })
    const data = (result.data ?? {}) as { stdout?: unknown; stderr?: unknown; exitCode?: unknown }
    const ran = typeof data.stdout === 'string'
    const stdout = ran ? String(data.stdout) : ''
    const stderr = ran ? String(data.stderr ?? '') : errorText(result)
    const outcome: OpenAIShellCommandOutput['outcome'] =
      result.error?.code === 'TIMEOUT' ? { type: 'timeout' } : { type: 'exit', exit_code: typeof data.exitCode === 'number' ? data.exitCode : ran ? 1 : 126 }
    // max_output_length is "the most characters to return from each command": stdout and stderr share it.
    const [outMax, errMax] = share(stdout.length, stderr.length, max)
    output.push({ stdout: cutTo(stdout, outMax), stderr: cutTo(stderr, errMax), outcome })
  }
  return { type: 'shell_call_output', call_id: callId, output, max_output_length: max }
}

/** `max` split between two texts: each keeps what it needs, up to half, and one gets what the other leaves. */
function share(a: number, b: number, max: number | null): [number | null, number | null] {
  if (max === null || a + b <= max) return [max, max]
  const half = Math.floor(max / 2)
  if (a <= half) return [a, max - a]
  if (b <= half) return [max - b, b]
  return [max - half, half]
}

/** At most `max` characters, keeping the start and the end, with a marker where the middle went. */
function cutTo(text: string, max: number | null): string {
  if (max === null || text.length <= max) return text
  const marker = `\n… [${text.length - max} characters cut] …\n`
  if (max <= marker.length) return text.slice(0, max)
  const half = Math.floor((max - marker.length) / 2)
  return `${text.slice(0, half)}${marker}${text.slice(text.length - (max - marker.length - half))}`
}

function isItemArray(value: unknown): value is readonly OpenAIResponseItemLike[] {
  return Array.isArray(value)
}
