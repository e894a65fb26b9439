/**
 * Small helpers the SDK adapters share: joining a result's text, labelling errors for
 * SDKs whose tool results have no error flag, and base64 data URLs for images.
 * Internal: not exported from the package.
 */
import { clip } from '../errors.js'
import type { ContentBlock, ToolResult } from '../result.js'

export type TextBlock = Extract<ContentBlock, { type: 'text' }>
export type ImageBlock = Extract<ContentBlock, { type: 'image' }>

/** What a runner tells the host about each call it ran. */
export interface ToolCallInfo {
  /** The SDK's id of the call. */
  id: string
  name: string
  input: unknown
}

/**
 * Called with each call's whole ToolResult, `data` and `error` included. The host shows
 * the user what is meant for them and not the model: above all `data.grantPhrase`, the
 * phrase that approves a risky command (guarded preset without `onApproval`).
 */
export type ResultHandler = (result: ToolResult, call: ToolCallInfo) => void

/**
 * A result without what the model must never see (the approval phrase), for SDKs that
 * may hand a tool's whole output to the model.
 */
export function withoutSecrets(result: ToolResult): ToolResult {
  if (!result.data || !('grantPhrase' in result.data) || result.error?.code !== 'APPROVAL_REQUIRED') return result
  const { grantPhrase: _hidden, ...data } = result.data
  return { ...result, data }
}

/** The text blocks of a result, joined by blank lines. */
export function joinedText(blocks: readonly ContentBlock[]): string {
  return blocks
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('\n\n')
}

/** The image blocks of a result. */
export function imagesOf(blocks: readonly ContentBlock[]): ImageBlock[] {
  return blocks.filter((b): b is ImageBlock => b.type === 'image')
}

/**
 * The model-facing text of a failed result, for SDKs with no `is_error` flag (OpenAI):
 * starts with "Error: " unless the preset already marked it ("[error] …", "[permission_required] …").
 */
export function errorText(result: ToolResult): string {
  const text = joinedText(result.content)
  return text.startsWith('[') ? text : `Error: ${text}`
}

/** A `data:` URL of an image block. */
export function dataUrl(image: ImageBlock): string {
  return `data:${image.mimeType};base64,${image.data}`
}

/** What the model is told instead of an image it cannot receive here. */
export function omittedImage(image: ImageBlock, why: string): string {
  const bytes = Math.floor((image.data.length * 3) / 4) - (image.data.endsWith('==') ? 2 : image.data.endsWith('=') ? 1 : 0)
  return `[image omitted: ${image.mimeType}, ${bytes} bytes; ${why}]`
}

/** A JSON-ish object for tool input, or the reason it is not one. */
export function parseArguments(raw: unknown): { ok: true; input: unknown } | { ok: false; reason: string } {
  if (typeof raw !== 'string') return { ok: true, input: raw }
  // Some models send "" for a call without arguments.
  if (raw.trim() === '') return { ok: true, input: {} }
  try {
    return { ok: true, input: JSON.parse(raw) }
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) }
  }
}

/** The error text for arguments that are not JSON. */
export function malformedArgumentsText(name: string, raw: string, reason: string): string {
  const tool = clip(name, 40)
  // V8's reason quotes the input again: the start of the arguments is shown once.
  const why = clip(reason.replace(/,? ".*is not valid JSON$/s, ''), 60)
  return `Error: the arguments of this ${tool} call are not valid JSON (${why}): ${clip(raw, 40)}\nCall ${tool} again with a JSON object of named fields.`
}
