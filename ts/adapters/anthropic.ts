/**
 * The Anthropic Messages API adapter: tool definitions for `messages.create({ tools })`
 * and a runner that answers every `tool_use` block of a reply with a `tool_result` block.
 *
 * ```ts
 * const tools = anthropicTools(toolkit)
 * const reply = await anthropic.messages.create({ model, max_tokens, tools, messages })
 * messages.push({ role: 'assistant', content: reply.content })
 * const results = await runAnthropicToolUses(session, reply)
 * if (results.length > 0) messages.push({ role: 'user', content: results })
 * ```
 *
 * The SDK is not a dependency of fsgate, not even for types: the shapes below are
 * declared here, structurally compatible with `@anthropic-ai/sdk`'s `Tool`, `Message`
 * and `ToolResultBlockParam` (the tests check that against the real SDK types), so the
 * published declarations resolve whether or not the SDK is installed.
 */
import type { Dialect } from '../policy/presets.js'
import type { ContentBlock } from '../result.js'
import type { Session, Toolkit } from '../toolkit.js'
import { omittedImage, type ResultHandler } from './shared.js'

/** A custom tool of the Messages API (`Anthropic.Tool`). */
export interface AnthropicTool {
  name: string
  description: string
  input_schema: { type: 'object'; [key: string]: unknown }
}

/** The image types the Messages API accepts; fsgate reads exactly these four. */
export type AnthropicImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'

/** A content block of a `tool_result` (`TextBlockParam | ImageBlockParam`). */
export type AnthropicToolResultContent =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: AnthropicImageMediaType; data: string } }

/** A `tool_result` block (`Anthropic.ToolResultBlockParam`), to send in a user message. */
export interface AnthropicToolResultBlock {
  type: 'tool_result'
  tool_use_id: string
  content: AnthropicToolResultContent[]
  is_error: boolean
}

/** Any content block of a reply; only `tool_use` blocks are acted on. */
export interface AnthropicContentBlockLike {
  type: string
  id?: string
  name?: string
  input?: unknown
}

export interface AnthropicToolsOptions {
  /** Which tool-name family: 'claude' | 'revka' | 'consent' | 'all'. Default: the preset's. */
  dialect?: Dialect | 'all'
}

export interface RunAnthropicOptions {
  /** Cancels the calls in flight; calls not yet started return ABORTED results. */
  signal?: AbortSignal
  /** Each call's whole ToolResult, for the host (show the user `data.grantPhrase`). */
  onResult?: ResultHandler
}

const MEDIA_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

/** The toolkit's tools as the Messages API's `tools` parameter. */
export function anthropicTools(toolkit: Toolkit, options: AnthropicToolsOptions = {}): AnthropicTool[] {
  return toolkit.definitions({ dialect: options.dialect, format: 'anthropic' }).map((def) => {
    if (!('input_schema' in def)) throw new Error('fsgate: definitions() did not return the anthropic format')
    return { name: def.name, description: def.description, input_schema: { ...def.input_schema, type: 'object' } }
  })
}

/**
 * Runs every `tool_use` block of `message` (a Messages API reply, or its `content`
 * array) through the session, one at a time in the model's order (so an edit followed
 * by a read of the same file sees the edit), and returns one `tool_result` block per
 * call: push them as `{ role: 'user', content: results }`. Never throws: a failed call
 * is a block with `is_error: true` whose text says what went wrong. Returns [] when the
 * reply asked for no tools.
 */
export async function runAnthropicToolUses(
  session: Session,
  message: { content: readonly AnthropicContentBlockLike[] } | readonly AnthropicContentBlockLike[],
  options: RunAnthropicOptions = {},
): Promise<AnthropicToolResultBlock[]> {
  const blocks = isBlockArray(message) ? message : message.content
  const results: AnthropicToolResultBlock[] = []
  for (const block of blocks) {
    if (block.type !== 'tool_use') continue
    const result = await session.call(String(block.name), block.input, { signal: options.signal })
    options.onResult?.(result, { id: String(block.id), name: String(block.name), input: block.input })
    results.push({ type: 'tool_result', tool_use_id: String(block.id), content: toAnthropicContent(result.content), is_error: result.isError })
  }
  return results
}

/**
 * fsgate content blocks (MCP's shape) as `tool_result` content: images become base64
 * `source` blocks. Empty text blocks are dropped (the API refuses them); an image of a
 * type the API does not take becomes a line of text saying so.
 */
export function toAnthropicContent(blocks: readonly ContentBlock[]): AnthropicToolResultContent[] {
  const out: AnthropicToolResultContent[] = []
  for (const block of blocks) {
    if (block.type === 'text') {
      if (block.text !== '') out.push({ type: 'text', text: block.text })
    } else if (isMediaType(block.mimeType)) {
      out.push({ type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } })
    } else {
      out.push({ type: 'text', text: omittedImage(block, 'the Messages API does not accept this image type') })
    }
  }
  if (out.length === 0) out.push({ type: 'text', text: '(no output)' })
  return out
}

function isMediaType(type: string): type is AnthropicImageMediaType {
  return MEDIA_TYPES.has(type)
}

function isBlockArray(value: unknown): value is readonly AnthropicContentBlockLike[] {
  return Array.isArray(value)
}
