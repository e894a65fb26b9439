/**
 * OpenAI adapters for both APIs of the `openai` SDK.
 *
 * Chat Completions: `openaiChatTools(toolkit)` for `chat.completions.create({ tools })`
 * and `runOpenAIChatToolCalls(session, message)`, which answers every tool call of an
 * assistant message with a `{ role: 'tool' }` message.
 *
 * Responses: `openaiResponsesTools(toolkit)` for `responses.create({ tools })` and
 * `runOpenAIResponsesCalls(session, response)`, which answers every `function_call`
 * item with a `function_call_output` item.
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
import type { ToolResult } from '../result.js'
import type { Session, Toolkit } from '../toolkit.js'
import { dataUrl, errorText, imagesOf, joinedText, malformedArgumentsText, omittedImage, parseArguments, type ResultHandler } from './shared.js'

export interface OpenAIToolsOptions {
  /** Which tool-name family: 'claude' | 'revka' | 'consent' | 'all'. Default: the preset's. */
  dialect?: Dialect | 'all'
}

export interface RunOpenAIOptions {
  /** Cancels the calls in flight; calls not yet started return ABORTED results. */
  signal?: AbortSignal
  /** Each call's whole ToolResult, for the host (show the user `data.grantPhrase`). */
  onResult?: ResultHandler
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
      toolMessages.push({ role: 'tool', tool_call_id: call.id, content: `Error: '${call.type}' tool calls are not fsgate's; call its tools as functions.` })
      continue
    }
    const { name, arguments: raw } = call.function
    const parsed = parseArguments(raw)
    if (!parsed.ok) {
      toolMessages.push({ role: 'tool', tool_call_id: call.id, content: malformedArgumentsText(name, raw, parsed.reason) })
      continue
    }
    const result = await session.call(name, parsed.input, { signal: options.signal })
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

/** An output item of a response; only `function_call` items are acted on. */
export interface OpenAIResponseItemLike {
  type: string
  call_id?: string | null
  name?: string | null
  arguments?: unknown
}

/** Content of a `function_call_output` (`ResponseFunctionCallOutputItem`). */
export type OpenAIFunctionCallOutputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' }

/** A `function_call_output` input item (`ResponseInputItem.FunctionCallOutput`). */
export interface OpenAIFunctionCallOutput {
  type: 'function_call_output'
  call_id: string
  /** The text, or text and images when the result has images. */
  output: string | OpenAIFunctionCallOutputContent[]
}

/** The toolkit's tools as the Responses API's `tools` parameter. */
export function openaiResponsesTools(toolkit: Toolkit, options: OpenAIToolsOptions = {}): OpenAIResponsesTool[] {
  return openaiChatTools(toolkit, options).map(({ function: f }) => ({ type: 'function', name: f.name, description: f.description, parameters: f.parameters, strict: false }))
}

/**
 * Runs every `function_call` item of a response (the `Response`, or its `output`
 * array) through the session, one at a time in order, and returns one
 * `function_call_output` item per call, for the next request's `input` (after the
 * response's own output items, or with `previous_response_id`). Never throws. Returns
 * [] when the response made no calls.
 */
export async function runOpenAIResponsesCalls(
  session: Session,
  response: { output: readonly OpenAIResponseItemLike[] } | readonly OpenAIResponseItemLike[],
  options: RunOpenAIOptions = {},
): Promise<OpenAIFunctionCallOutput[]> {
  const items = isItemArray(response) ? response : response.output
  const outputs: OpenAIFunctionCallOutput[] = []
  for (const item of items) {
    if (item.type !== 'function_call') continue
    const name = String(item.name)
    const callId = String(item.call_id)
    const parsed = parseArguments(item.arguments ?? '')
    if (!parsed.ok) {
      outputs.push({ type: 'function_call_output', call_id: callId, output: malformedArgumentsText(name, String(item.arguments), parsed.reason) })
      continue
    }
    const result = await session.call(name, parsed.input, { signal: options.signal })
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

function isItemArray(value: unknown): value is readonly OpenAIResponseItemLike[] {
  return Array.isArray(value)
}
