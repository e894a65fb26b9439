/**
 * The result budget for text that is not a list of records: a command's output, git's,
 * PDF text. Each is cut at a line (never inside one, unless one line alone passes the
 * page) before it passes `limits.resultTokens`, and says which lines were left out.
 */
import type { ToolContext } from '../tool.js'
import { mostWithin, num, pageTokens, tokensOf } from './common.js'

/** Characters of one line kept when a text must be cut (Read's line cut). */
const LINE_CHARS = 2000
/** No tokenizer packs more than this many bytes of real text into a token on average: lines past it are not counted. */
const BYTES_PER_TOKEN = 16

/** Whether `t` fits `max` tokens: bytes bound tokens from above, so only long text is counted. */
export async function fits(ctx: ToolContext, t: string, max: number): Promise<boolean> {
  return Buffer.byteLength(t) <= max || (await tokensOf(ctx, t)) <= max
}

/** A line cut to LINE_CHARS characters, saying how long it was. */
function cutLine(line: string): string {
  const chars = [...line]
  return chars.length <= LINE_CHARS ? line : `${chars.slice(0, LINE_CHARS).join('')}… [line of ${num(chars.length)} characters cut]`
}

/**
 * The start of `t` in at most `maxBytes` UTF-8 bytes, never splitting a character: it
 * fits `maxBytes` tokens whatever the tokenizer, since no token is shorter than a byte.
 */
export function startWithin(t: string, maxBytes: number): string {
  if (Buffer.byteLength(t) <= maxBytes) return t
  let bytes = 0
  let end = 0
  for (const ch of t) {
    const b = Buffer.byteLength(ch)
    if (bytes + b > maxBytes) break
    bytes += b
    end += ch.length
  }
  return t.slice(0, end)
}

/**
 * The longest start of `t` that fits `budget` tokens and ends at a line's end (its
 * newline kept, so the rest starts a line); when the first line alone passes the budget,
 * its start. Always a prefix of `t`, unchanged, and never empty unless `t` is.
 */
export async function prefixWithin(ctx: ToolContext, t: string, budget: number): Promise<string> {
  if (await fits(ctx, t, budget)) return t
  // Only line ends that could fit are tried: a token is rarely more than 16 bytes.
  const ends: number[] = []
  for (let at = t.indexOf('\n'); at >= 0 && at < budget * BYTES_PER_TOKEN; at = t.indexOf('\n', at + 1)) ends.push(at + 1)
  const k = await mostWithin(ends.length, (n) => tokensOf(ctx, t.slice(0, ends[n - 1])), budget)
  if (k > 0) return t.slice(0, ends[k - 1])
  return startWithin(t.slice(0, ends[0] ?? t.length), budget) || String.fromCodePoint(t.codePointAt(0) as number)
}

/**
 * A record shown alone on a page that it passes by itself (a long snippet, a long path):
 * its start, within `budget` tokens with the words that say so.
 */
export async function loneWithin(ctx: ToolContext, record: string, budget: number): Promise<string> {
  if (await fits(ctx, record, budget)) return record
  const mark = `… [cut to fit the limit of ${num(budget)} tokens]`
  return `${startWithin(record, Math.max(1, budget - Buffer.byteLength(mark)))}${mark}`
}

/** How many of `lines`, from the start (or from the end), fit `max` tokens together. */
async function linesWithin(ctx: ToolContext, lines: readonly string[], max: number, fromEnd = false): Promise<number> {
  // Only as many lines as could fit are tried: a token is rarely more than 16 bytes.
  let n = 0
  let bytes = 0
  for (let i = 0; i < lines.length && bytes <= max * BYTES_PER_TOKEN; i++, n++) bytes += Buffer.byteLength(lines[fromEnd ? lines.length - 1 - i : i]) + 1
  const part = (k: number) => (fromEnd ? lines.slice(lines.length - k) : lines.slice(0, k)).join('\n')
  return mostWithin(n, (k) => tokensOf(ctx, part(k)), max)
}

/** A text cut to a budget: what is kept, and the lines left out (1-based, inclusive). */
export interface Cut {
  text: string
  /** Lines left out, when any. */
  left?: { from: number; to: number; of: number }
}

/** The first lines of `t` that fit `budget` tokens. */
export async function headWithin(ctx: ToolContext, t: string, budget: number): Promise<Cut> {
  if (await fits(ctx, t, budget)) return { text: t }
  const lines = t.split('\n').map(cutLine)
  const k = Math.max(1, await linesWithin(ctx, lines, budget))
  const head = lines.slice(0, k).join('\n')
  // One line alone past the page: its start, no more bytes than the page has tokens.
  const text = (await fits(ctx, head, budget)) ? head : startWithin(head, budget)
  return { text, left: k < lines.length ? { from: k + 1, to: lines.length, of: lines.length } : undefined }
}

/** The first and last lines of `t` that fit `budget` tokens, the middle left out and `marker` (one line) in its place. */
export async function headTailWithin(ctx: ToolContext, t: string, budget: number, marker: (left: NonNullable<Cut['left']>) => string): Promise<Cut> {
  if (await fits(ctx, t, budget)) return { text: t }
  const lines = t.split('\n').map(cutLine)
  const head = await linesWithin(ctx, lines, Math.floor(budget / 2))
  const rest = lines.slice(head)
  const used = head > 0 ? await tokensOf(ctx, lines.slice(0, head).join('\n')) : 0
  // The marker's line is kept out of the budget of the lines (NOTE_TOKENS holds it).
  const tail = await linesWithin(ctx, rest, Math.max(0, budget - used), true)
  if (head + tail >= lines.length) return { text: lines.join('\n') }
  const left = { from: head + 1, to: lines.length - tail, of: lines.length }
  return { text: [...lines.slice(0, head), marker(left), ...lines.slice(lines.length - tail)].join('\n'), left }
}

/** The tokens a tool's text may take: the result budget less room for its notes. */
export function textTokens(ctx: ToolContext, share = 1): number {
  return Math.max(1, Math.floor(pageTokens(ctx.limits.resultTokens) * share))
}
