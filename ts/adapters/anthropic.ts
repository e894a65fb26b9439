/**
 * The Anthropic Messages API adapter: tool definitions for `messages.create({ tools })`
 * and a runner that answers every `tool_use` block of a reply with a `tool_result` block.
 *
 * ```ts
 * const tools = anthropicTools(toolkit)      // or anthropicTools(toolkit, { builtin: true }): text_editor_20250728 and bash_20250124
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
  /** Which tool-name family: 'claude' | 'revka' | 'consent' | 'anthropic' | 'codex' | 'gemini' | 'all'. Default: the toolkit's ('anthropic' with `builtin`). */
  dialect?: Dialect | 'all'
  /**
   * Declare the tools Anthropic defines as its own (`text_editor_20250728`,
   * `bash_20250124`), whose schemas Claude is trained on, rather than as custom tools.
   * Implies the 'anthropic' dialect unless `dialect` says otherwise.
   */
  builtin?: boolean
  /** text_editor_20250728's `max_characters`: view output is cut there (pass the same to `runAnthropicToolUses`). */
  maxCharacters?: number
}

/** Anthropic's own text editor (`Anthropic.ToolTextEditor20250728`). */
export interface AnthropicTextEditorTool {
  type: 'text_editor_20250728'
  name: 'str_replace_based_edit_tool'
  max_characters?: number
}

/** Anthropic's own bash tool (`Anthropic.ToolBash20250124`). */
export interface AnthropicBashTool {
  type: 'bash_20250124'
  name: 'bash'
}

/** A tool declaration for `messages.create({ tools })`: custom, or one Anthropic defines. */
export type AnthropicAnyTool = AnthropicTool | AnthropicTextEditorTool | AnthropicBashTool

export interface RunAnthropicOptions {
  /** Cancels the calls in flight; calls not yet started return ABORTED results. */
  signal?: AbortSignal
  /** The `max_characters` declared for the text editor: each view's output is cut there. */
  maxCharacters?: number
  /** Each call's whole ToolResult, for the host (show the user `data.grantPhrase`). */
  onResult?: ResultHandler
  /** The family the tools were listed in, for a name two families share (write_file). Default: the toolkit's. */
  dialect?: Dialect
}

const MEDIA_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

/**
 * The toolkit's tools as the Messages API's `tools` parameter. With `builtin: true`, the
 * text editor and bash are declared as Anthropic's own tools (and the dialect is
 * 'anthropic' unless given).
 */
export function anthropicTools(toolkit: Toolkit, options?: AnthropicToolsOptions & { builtin?: false }): AnthropicTool[]
export function anthropicTools(toolkit: Toolkit, options: AnthropicToolsOptions): AnthropicAnyTool[]
export function anthropicTools(toolkit: Toolkit, options: AnthropicToolsOptions = {}): AnthropicAnyTool[] {
  const dialect = options.dialect ?? (options.builtin ? 'anthropic' : undefined)
  return toolkit.definitions({ dialect, format: 'anthropic' }).map((def): AnthropicAnyTool => {
    if (!('input_schema' in def)) throw new Error('fsgate: definitions() did not return the anthropic format')
    if (options.builtin && def.name === 'str_replace_based_edit_tool') {
      return { type: 'text_editor_20250728', name: def.name, ...(options.maxCharacters !== undefined ? { max_characters: options.maxCharacters } : {}) }
    }
    if (options.builtin && def.name === 'bash') return { type: 'bash_20250124', name: def.name }
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
    const result = await session.call(String(block.name), withMaxCharacters(block, options.maxCharacters), { signal: options.signal, dialect: options.dialect })
    options.onResult?.(result, { id: String(block.id), name: String(block.name), input: block.input })
    results.push({ type: 'tool_result', tool_use_id: String(block.id), content: toAnthropicContent(result.content), is_error: result.isError })
  }
  return results
}

/** A text editor view's input with the declared max_characters, unless it has its own. */
function withMaxCharacters(block: AnthropicContentBlockLike, max: number | undefined): unknown {
  const input = block.input
  if (max === undefined || block.name !== 'str_replace_based_edit_tool' || typeof input !== 'object' || input === null || Array.isArray(input)) return input
  return 'max_characters' in input ? input : { ...input, max_characters: max }
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
