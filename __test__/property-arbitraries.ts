/**
 * Generators and reference models for the property suite (`property.test.ts`): text files
 * in every encoding Read decodes, what Read must show of them, and the exact conditions
 * under which an edit followed by its inverse must give the original bytes back.
 *
 * The models are deliberately small and literal, so a disagreement with the tools is
 * easy to judge: each function states the rule of SPEC.md it encodes.
 */
import fc from 'fast-check'

// ---------------------------------------------------------------------------------------
// Run settings

function envInt(name: string): number | undefined {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return undefined
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`)
  return n
}

/** Runs of a property of weight 1 (the others scale from it). `FSGATE_PROPERTY_RUNS` overrides. */
export const RUNS = envInt('FSGATE_PROPERTY_RUNS') ?? 80
/** The fixed seed (so CI failures reproduce); `FSGATE_PROPERTY_SEED` overrides. fast-check prints it on failure. */
export const SEED = envInt('FSGATE_PROPERTY_SEED') ?? 0x5eed_f5
/** fast-check parameters for a property worth `weight` × RUNS runs. */
export function params(weight = 1): { numRuns: number; seed: number; maxSkipsPerRun: number } {
  return { numRuns: Math.max(1, Math.round(RUNS * weight)), seed: SEED, maxSkipsPerRun: 1000 }
}

/** A vitest timeout for a property of `weight` whose run takes about `msPerRun` (at least 60 s). */
export function timeoutFor(weight: number, msPerRun: number): number {
  return Math.max(60_000, Math.round(RUNS * weight * msPerRun * 4))
}

// ---------------------------------------------------------------------------------------
// Text

export type Encoding = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be'
export const ENCODINGS: readonly Encoding[] = ['utf-8', 'utf-8-bom', 'utf-16le', 'utf-16be']

/** The bytes of `text` in `encoding`, with its byte-order mark. */
export function encode(text: string, encoding: Encoding): Buffer {
  switch (encoding) {
    case 'utf-8':
      return Buffer.from(text, 'utf8')
    case 'utf-8-bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')])
    case 'utf-16le':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
    case 'utf-16be':
      return Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()])
  }
}

/**
 * Whether fsgate's sniffer (SPEC §3.1: by content, first 8 KiB) takes these bytes for
 * text: no image or PDF signature, no NUL outside UTF-16, no UTF-32 mark.
 */
export function sniffsAsText(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 8192)
  const starts = (sig: number[] | string) => head.subarray(0, sig.length).equals(Buffer.from(sig as never))
  if (starts([0xff, 0xfe, 0, 0]) || starts([0, 0, 0xfe, 0xff])) return false
  if (starts([0xff, 0xfe]) || starts([0xfe, 0xff])) return true
  if (starts([0x89, 0x50, 0x4e, 0x47]) || starts([0xff, 0xd8, 0xff]) || starts('GIF87a') || starts('GIF89a')) return false
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return false
  if (head.includes(0)) return false
  let i = 0
  while (i < head.length && [0x20, 0x09, 0x0a, 0x0c, 0x0d].includes(head[i])) i++
  return !head.subarray(i, i + 5).equals(Buffer.from('%PDF-'))
}

/**
 * The lines Read shows of a decoded text (SPEC §3.1): split on '\n'; a last line without
 * one counts; one '\r' before a line's '\n' (CRLF), or at the very end of the file, is
 * not shown; every other '\r' (a lone CR) is part of its line.
 */
export function fileLines(text: string): string[] {
  if (text === '') return []
  const parts = text.split('\n')
  if (text.endsWith('\n')) parts.pop()
  return parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
}

/** A count as fsgate prints it (thousands separated by commas). */
export const group = (n: number): string => n.toLocaleString('en-US')

/** Code points of a string (what "characters" means in SPEC §3.1's line cut). */
export const codePoints = (s: string): string[] => Array.from(s)

/**
 * A line as Read shows it with lines cut at `max` characters: the first `max` code points,
 * then the visible marker with how many more there were.
 */
export function shownLine(line: string, max: number): string {
  const cps = codePoints(line)
  if (cps.length <= max) return line
  return `${cps.slice(0, max).join('')} … [line cut: ${group(cps.length - max)} more characters]`
}

/** Pieces lines are made of: any code point (astral ones too), and the troublesome ones often. */
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
  { weight: 3, arbitrary: fc.string({ unit: fc.constantFrom('a', 'b', 'é', '✓', '한', '😀', '𝄞', ' ', '\t', '"', '“', '’'), maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom('\r', '\r\r', '\u2028', '\u0085', '\uFEFF', '\u200B', '<fnr>', '%PDF-', '\\', '$&') },
)

/** One line's content: never a '\n' (that would be two lines) nor a NUL (that makes a binary). */
export const lineArb: fc.Arbitrary<string> = fc.array(piece, { maxLength: 4 }).map((ps) => ps.join('').replace(/[\n\0]/g, ''))

/**
 * A line near or past `around` code points, made by repeating a short random unit: mixed
 * widths (1–4 UTF-8 bytes), so the reader's byte cap splits characters.
 */
export function longLineArb(around: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }), fc.integer({ min: around - 2, max: around + 1100 }))
    .map(([unit, n]) => {
      const cps = codePoints(unit.replace(/[\n\0]/g, '') || 'x✓')
      return Array.from({ length: n }, (_, i) => cps[i % cps.length]).join('')
    })
}

export interface TextFile {
  /** The decoded text, line breaks and all. */
  text: string
  encoding: Encoding
}

/** The bytes of a generated file on disk. */
export const bytesOf = (f: TextFile): Buffer => encode(f.text, f.encoding)

/** How a generated file breaks its lines. */
export type Eol = 'lf' | 'crlf' | 'mixed'

/** Joins lines with the given breaks, with or without a final one. */
export function joinLines(lines: readonly string[], eols: readonly string[], final: boolean): string {
  return lines.map((l, i) => l + (i < lines.length - 1 || final ? eols[i % eols.length] : '')).join('')
}

/**
 * A text file Read must show as text: arbitrary lines (empty ones, lone CRs, astral
 * characters, a few long ones), LF, CRLF or mixed breaks, with or without a final
 * newline, in UTF-8, UTF-8 with BOM or UTF-16 LE/BE with BOM; sometimes empty.
 */
export function textFileArb(options: { maxLines?: number; longLines?: fc.Arbitrary<string> } = {}): fc.Arbitrary<TextFile> {
  const line = options.longLines
    ? fc.oneof({ weight: 12, arbitrary: lineArb }, { weight: 2, arbitrary: fc.constant('') }, { weight: 1, arbitrary: options.longLines })
    : fc.oneof({ weight: 6, arbitrary: lineArb }, { weight: 1, arbitrary: fc.constant('') })
  return fc
    .record({
      lines: fc.array(line, { maxLength: options.maxLines ?? 40 }),
      eol: fc.constantFrom<Eol>('lf', 'crlf', 'mixed'),
      mixed: fc.array(fc.constantFrom('\n', '\r\n'), { minLength: 1, maxLength: 7 }),
      final: fc.boolean(),
      encoding: fc.constantFrom(...ENCODINGS),
    })
    .map(({ lines, eol, mixed, final, encoding }) => {
      const eols = eol === 'lf' ? ['\n'] : eol === 'crlf' ? ['\r\n'] : mixed
      let text = joinLines(lines, eols, final)
      // A leading U+FEFF in a file without a BOM would be its BOM: that file is another case.
      if (encoding === 'utf-8' && text.startsWith('\uFEFF')) text = `x${text}`
      return { text, encoding }
    })
    .filter((f) => sniffsAsText(bytesOf(f)))
}

// ---------------------------------------------------------------------------------------
// Edits

/** Whether a text has more CRLF than lone-LF line breaks (then Edit writes new_string with CRLF). */
export function crlfDominant(text: string): boolean {
  let crlf = 0
  let all = 0
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    all++
    if (i > 0 && text[i - 1] === '\r') crlf++
  }
  return crlf > all - crlf
}

/** Occurrences of `needle` in `text`, overlapping ones included. */
export function countOverlapping(text: string, needle: string): number {
  let n = 0
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) n++
  return n
}

/** Start offsets of the leftmost non-overlapping occurrences (what replace_all replaces). */
export function occurrences(text: string, needle: string): number[] {
  const out: number[] = []
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) out.push(i)
  return out
}

/**
 * Whether Edit puts `replacement` into `text` in place of the spans `[start, end)` exactly
 * as given, i.e. none of SPEC §3.4's shaping applies:
 * - outside .md/.mdx no line of it has trailing spaces or tabs (before its line break,
 *   or at its end when the span ends at a line end);
 * - its line breaks are already the text's (CRLF in a text with more CRLF than LF breaks:
 *   every '\n' of it preceded by '\r'; else no "\r\n" in it);
 * - the final-newline state is unchanged when the last span reaches the end of the text;
 * - no span starts at the '\n' of a CRLF (such a match takes its '\r' along).
 */
export function insertedAsIs(text: string, spans: Array<[number, number]>, replacement: string, markdown: boolean): boolean {
  if (replacement.includes('\n') && crlfDominant(text)) {
    if (/(^|[^\r])\n/.test(replacement)) return false
  } else if (replacement.includes('\r\n')) {
    return false
  }
  for (const [start, end] of spans) {
    if (!markdown) {
      if (/[ \t]\r?\n/.test(replacement)) return false
      const atLineEnd = end === text.length || text[end] === '\n' || text[end] === '\r'
      if (atLineEnd && /[ \t]$/.test(replacement)) return false
    }
    if (end === text.length && replacement.length > 0 && replacement.endsWith('\n') !== text.endsWith('\n')) return false
    if (text[start] === '\n' && start > 0 && text[start - 1] === '\r') return false
  }
  return true
}

/** `text` with the leftmost non-overlapping occurrences of `needle` replaced; the spans replaced and inserted. */
export function replaceAll(text: string, needle: string, replacement: string): { out: string; oldSpans: Array<[number, number]>; newSpans: Array<[number, number]> } {
  const at = occurrences(text, needle)
  let out = ''
  let copied = 0
  const oldSpans: Array<[number, number]> = []
  const newSpans: Array<[number, number]> = []
  for (const s of at) {
    out += text.slice(copied, s)
    newSpans.push([out.length, out.length + replacement.length])
    out += replacement
    oldSpans.push([s, s + needle.length])
    copied = s + needle.length
  }
  return { out: out + text.slice(copied), oldSpans, newSpans }
}

/** A piece of text for edits: from a small alphabet (so strings collide and repeat) or any code points. */
export function editTextArb(eol: string): fc.Arbitrary<string> {
  const unit = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'é', '😀', ' ', '\t', '"', "'", '“', '”', '‘', '’', 'x', '=', '(', ')') },
    { weight: 2, arbitrary: fc.constant(eol) },
    { weight: 1, arbitrary: fc.constantFrom('\r', '<fnr>', '\uFEFF') },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }) },
  )
  return fc.array(unit, { maxLength: 24 }).map((u) => u.join('').replace(/\0/g, ''))
}

/** Curly quotes folded to straight ones (SPEC §3.4 rung 3: U+2018–U+201B → ', U+201C–U+201F → "). */
export const foldQuotes = (s: string): string => s.replace(/[\u2018-\u201B]/g, "'").replace(/[\u201C-\u201F]/g, '"')

/** CRLF folded to LF (SPEC §3.4 rung 2). */
export const foldCrlf = (s: string): string => s.replace(/\r\n/g, '\n')

/** The text of a file's bytes, decoded as fsgate decodes it (BOM removed). */
export function decode(bytes: Buffer, encoding: Encoding): string {
  switch (encoding) {
    case 'utf-8':
      return bytes.toString('utf8')
    case 'utf-8-bom':
      return bytes.subarray(3).toString('utf8')
    case 'utf-16le':
      return bytes.subarray(2).toString('utf16le')
    case 'utf-16be':
      return Buffer.from(bytes.subarray(2)).swap16().toString('utf16le')
  }
}

export { applyUnifiedDiff, diffView } from './helpers.js'
