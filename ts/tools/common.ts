/** Small pieces the file tools share: numbers for people, the unchanged-read stub, the host's token counter. */
import { FsgateError } from '../errors.js'
import type { LineStyle } from '../policy/presets.js'
import { text, type ToolOutput } from '../result.js'
import type { ToolContext } from '../tool.js'
import { countTokens } from '../utils.js'

/** A count with thousands separators, as the messages print them. */
export function num(n: number): string {
  return n.toLocaleString('en-US')
}

/** The ~100-byte stub for a read of something this session already has, unchanged. */
export function unchanged(shown: string, data: Record<string, unknown>, what: string): ToolOutput {
  return {
    content: [text(`${shown} is unchanged since you read it (${what}); that earlier result is still current.`)],
    data: { ...data, unchanged: true },
  }
}

/** Calls the host's token counter, refusing anything that is not a count. */
export async function hostCount(ctx: ToolContext, t: string): Promise<number> {
  let n: unknown
  try {
    n = await (ctx.countTokens as (t: string) => Promise<number> | number)(t)
  } catch (err) {
    throw new FsgateError('INTERNAL', `The host's countTokens function failed (${err instanceof Error ? err.message : String(err)}), so the file was not read.`)
  }
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
    throw new FsgateError('INTERNAL', `The host's countTokens function returned ${String(n)}, not a token count, so the file was not read.`)
  }
  return n
}

/** The name of the path field in the dialect the model called (Claude's and gemini's tools say file_path). */
export function pathField(ctx: ToolContext): 'file_path' | 'path' {
  return ctx.dialect === 'claude' || ctx.dialect === 'gemini' ? 'file_path' : 'path'
}

/** The tokens of a text: the host's counter when it gave one, else the built-in o200k BPE. */
export async function tokensOf(ctx: ToolContext, t: string): Promise<number> {
  return ctx.countTokens ? hostCount(ctx, t) : countTokens(t, { signal: ctx.signal })
}

/** The largest k in [0, n] with count(k) <= max, by binary search (about log2(n) counts). */
export async function mostWithin(n: number, count: (k: number) => Promise<number>, max: number): Promise<number> {
  let lo = 0
  let hi = n
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if ((await count(mid)) <= max) lo = mid
    else hi = mid - 1
  }
  return lo
}

/**
 * How many of `blocks` (joined by newlines) fit in `max` tokens. A token is at least one
 * byte, so text of at most `max` bytes fits without counting; longer text is counted.
 */
export async function blocksWithin(ctx: ToolContext, blocks: readonly string[], max: number): Promise<number> {
  const joined = (k: number) => blocks.slice(0, k).join('\n')
  if (Buffer.byteLength(joined(blocks.length)) <= max) return blocks.length
  if ((await tokensOf(ctx, joined(blocks.length))) <= max) return blocks.length
  return mostWithin(blocks.length, (k) => tokensOf(ctx, joined(k)), max)
}

/** The largest offset the engine takes (a u32); any offset past it is past every result. */
export const MAX_OFFSET = 2 ** 32 - 1

/** Tokens kept, out of a result's budget, for the notes around a page (counts, where to go on). */
export const NOTE_TOKENS = 1_000

/**
 * The tokens the records of one page may take: the budget less room for its notes,
 * NOTE_TOKENS or a quarter of a small budget (250 at the floor, MIN_RESULT_TOKENS, of
 * limits.resultTokens: a continuation note is about 50).
 */
export function pageTokens(budget: number): number {
  return Math.max(1, budget - Math.min(NOTE_TOKENS, Math.floor(budget / 4)))
}

/**
 * How many records (lines, entries, matches with their context) a page shows: as many as
 * fit `limits.resultTokens` (or a smaller `budget`) with room for the notes, and never
 * fewer than one, so that a continuation always moves on.
 */
export async function recordsWithin(ctx: ToolContext, records: readonly string[], budget = ctx.limits.resultTokens): Promise<number> {
  if (records.length === 0) return 0
  return Math.max(1, await blocksWithin(ctx, records, pageTokens(Math.min(budget, ctx.limits.resultTokens))))
}

/** A line as Read numbers it, in the call's line style. */
export function numbered(n: number, line: string, style: LineStyle): string {
  switch (style) {
    case 'cat-n':
      return `${String(n).padStart(6)}\t${line}`
    case 'compact':
      return `${n}\t${line}`
    case 'colon':
      return `${n}: ${line}`
    case 'none':
      return line
  }
}

/** How the model reads a file in the dialect it called: the tool it should use before a change. */
export function readToolName(ctx: ToolContext): string {
  if (ctx.dialect === 'claude') return 'Read'
  if (ctx.dialect === 'anthropic') return 'str_replace_based_edit_tool (view)'
  if (ctx.dialect === 'gemini') return 'read_file'
  return 'file_read'
}
