/**
 * PDF text (SPEC §3.1, §3.6): pdf_read, and the PDF pages of Read. The text comes from the
 * engine's own PDF layer; this module lays the pages out for a model, with page markers,
 * the no-text warning, the note on unmapped characters and the max_chars cut.
 */
import { z } from 'zod'

import { clip, clipMiddle, FsgateError, InvalidInputError, MaxFileReadTokenExceededError } from '../errors.js'
import { callNative, completer, type NativeReadResult } from '../native.js'
import { displayPath, resolvePath } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'
import { countTokens } from '../utils.js'
import { prefixWithin, textTokens } from './budget.js'
import { hostCount, MAX_OFFSET, num, unchanged } from './common.js'

/** The hard cap on pdf_read's max_chars (SPEC §3.6). */
export const PDF_MAX_CHARS_CAP = 200_000

/**
 * Characters of PDF text a Read extracts at most: far more than any text under the token
 * limit holds (no tokenizer packs 16 characters of extracted text into one token on
 * average), so that a Read of hostile pages stops interpreting instead of holding their
 * text in memory. Past it the pages are over the limit whatever they hold.
 */
export function readPdfMaxChars(readTokens: number): number {
  return Math.max(readTokens * 16, 100_000)
}

/** The seed's warning for a PDF with no text layer, word for word. */
export const NO_TEXT_WARNING = 'PDF contains no extractable text (may be image-only or encrypted)'

export interface PdfReadInput {
  path: string
  max_chars?: number
  /** Characters of the laid-out text (page markers included) to skip: the offset a continuation names. */
  offset?: number
}

type PdfFacts = NonNullable<NativeReadResult['pdf']>

export const pdfTool = defineTool<PdfReadInput>({
  name: 'pdf_read',
  dialects: {
    revka: {
      name: 'pdf_read',
      description: `Extracts the text of a PDF in the workspace, every page, with a marker line before each page.
- max_chars (default 50000, at most 200000) bounds the output; longer text is cut with a marker that names the offset to continue at.
- offset skips that many characters of the text as laid out here (page markers included): pages followed from offset 0 join into the whole text.
- A PDF with no text layer (scanned images, or encrypted with a password) returns a warning, not an error.
- file_read also returns PDF text, up to 20 pages a call with its pages parameter; use pdf_read for a whole document at once.`,
      schema: z.strictObject({
        path: z.string().describe('Path of the PDF, relative to the workspace or absolute.'),
        max_chars: z.number().int().min(1).optional().describe(`Most characters to return (default 50000, capped at ${PDF_MAX_CHARS_CAP}).`),
        offset: z.number().int().min(0).optional().describe('Characters of the text (page markers included) to skip, to continue a long one: the output names the offset to go on at. Default 0.'),
      }),
      toCanonical: (i) => i as unknown as PdfReadInput,
    },
  },
  run: pdfRead,
})

async function pdfRead(input: PdfReadInput, ctx: ToolContext): Promise<ToolOutput> {
  const maxChars = Math.min(input.max_chars ?? ctx.limits.pdfMaxChars, PDF_MAX_CHARS_CAP)
  const offset = Math.min(input.offset ?? 0, MAX_OFFSET)
  // The engine stops interpreting once the text reaches what this page needs: the text
  // before offset, and the page.
  const r = await readPdf(ctx, input.path, { pdfAll: true, pdfOnly: true, pdfMaxChars: Math.min(offset + maxChars, MAX_OFFSET) })
  const pdf = r.pdf as PdfFacts
  const shown = displayPath(ctx.workspace, r.realPath)
  const again = ctx.ledger.note(facts(r), null, `pdf_read:${offset}:${maxChars}`)
  const base = { path: shown, realPath: r.realPath, size: r.size, mtimeMs: r.mtimeMs, contentHash: r.hash, pageCount: pdf.pageCount }
  if (again && ctx.dedup) return unchanged(shown, base, offset > 0 ? `from character ${num(offset + 1)}` : `all ${pdf.pageCount} pages`)
  if (!hasText(pdf)) return noText(shown, pdf, base)

  const full = layout(pdf)
  // Stopped at the limit, the pages after the last one given were not read, and the
  // document's full length is not known.
  const complete = !pdf.stopped
  const total = full.length
  if (offset > 0 && offset >= total) {
    throw new InvalidInputError('INVALID_INPUT', `offset ${num(offset)} is past the end of the text of ${clipMiddle(shown, 60)}, which has ${num(total)} characters (page markers included). Use a smaller offset, or leave it out.`, {
      data: { field: 'offset', chars: total },
    })
  }
  let end = Math.min(offset + maxChars, total)
  // Never split a surrogate pair.
  if (end < total && end > offset + 1 && isHighSurrogate(full.charCodeAt(end - 1))) end -= 1
  // Then the result budget, at a line.
  const budget = textTokens(ctx)
  const page = await prefixWithin(ctx, full.slice(offset, end), budget)
  const byTokens = page.length < end - offset
  end = offset + page.length
  const truncated = end < total || !complete
  const sep = page.endsWith('\n') ? '' : '\n'
  let out = page
  if (truncated) {
    const at = lastMarker(full.slice(0, end))
    const where = at ? `, or read from page ${at} of ${pdf.pageCount} with file_read and pages="${at}-${Math.min(pdf.pageCount, at + ctx.limits.pdfPagesPerRead - 1)}"` : ''
    const of = complete ? num(total) : `more than ${num(total)}`
    const why = byTokens ? `, to fit the limit of ${num(budget)} tokens` : ''
    out += `${sep}[… truncated: showing characters ${num(offset + 1)}-${num(end)} of ${of}${why}. Continue with offset=${end}${where}.]`
  } else if (offset > 0) {
    out += `${sep}[showing characters ${num(offset + 1)}-${num(end)} of ${num(total)}: the end of the text.]`
  }
  out += unmappedNote(pdf)
  const pagesRead = pdf.pages.length
  return {
    content: [text(out)],
    data: { ...base, chars: total, complete, pagesRead, offset, shownChars: end - offset, maxChars, truncated, unmapped: pdf.unmapped, encrypted: pdf.encrypted, cut: pdf.cut },
  }
}

/** Read of a PDF: the pages asked for (or all, up to the per-call limit), through the token gate. */
export async function readPdfPages(r: NativeReadResult, ctx: ToolContext): Promise<ToolOutput> {
  const pdf = r.pdf as PdfFacts
  const shown = displayPath(ctx.workspace, r.realPath)
  const max = ctx.limits.pdfPagesPerRead
  const base = { path: shown, realPath: r.realPath, size: r.size, mtimeMs: r.mtimeMs, contentHash: r.hash, kind: 'pdf', pageCount: pdf.pageCount }
  if (pdf.tooMany) {
    throw new InvalidInputError(
      'INVALID_INPUT',
      `${shown} is a PDF of ${num(pdf.pageCount)} pages, more than the ${max} one read returns. Read it in parts with pages, e.g. pages="1-${max}", or use pdf_read for the whole text.`,
      { data: { field: 'pages', pageCount: pdf.pageCount } },
    )
  }
  if (pdf.beyond.length > 0) {
    const which = pdf.beyond.join(', ')
    throw new InvalidInputError(
      'INVALID_INPUT',
      `${pdf.beyond.length === 1 ? 'Page' : 'Pages'} ${which} ${pdf.beyond.length === 1 ? 'is' : 'are'} beyond the last page of ${shown}, which has ${num(pdf.pageCount)} page${pdf.pageCount === 1 ? '' : 's'}.`,
      { data: { field: 'pages', pageCount: pdf.pageCount } },
    )
  }
  const numbers = pdf.pages.map((p) => p.number)
  const data = { ...base, pages: numbers, unmapped: pdf.unmapped, encrypted: pdf.encrypted }
  const out = hasText(pdf) ? layout(pdf) + unmappedNote(pdf) : ''
  // The gate comes before the ledger: pages refused were not delivered.
  if (pdf.stopped) tooLong(numbers, shown, ctx.limits.readTokens)
  if (out !== '') await gate(out, numbers, shown, ctx)
  const again = ctx.ledger.note(facts(r), null, `pdf:${numbers.join(',')}`)
  if (again && ctx.dedup) return unchanged(shown, data, numbers.length === pdf.pageCount ? `all ${pdf.pageCount} pages` : `pages ${numbers.join(',')}`)
  if (out === '') return noText(shown, pdf, data)
  return { content: [text(out)], data }
}

/** Calls the engine's read for a PDF and explains its errors. */
async function readPdf(ctx: ToolContext, given: string, options: { pdfAll: boolean; pdfOnly: boolean; pdfMaxChars: number }): Promise<NativeReadResult> {
  const abs = resolvePath(ctx.workspace, given)
  return callNative<NativeReadResult>(
    (id, cancel) =>
      ctx.fs.read(completer, id, { path: abs, ranged: true, limit: 1, tokenLimit: 0, pdfMaxBytes: ctx.limits.pdfMaxBytes, ...options }, cancel),
    ctx.signal,
    ctx.lanes.compute,
  ).catch((err) => {
    throw explainPdfError(err, given, ctx)
  })
}

/** Model-facing messages for the errors only PDFs have; others pass through. */
export function explainPdfError(err: unknown, path: string, ctx: ToolContext): unknown {
  if (!(err instanceof FsgateError)) return err
  const again = (message: string) => new (err.constructor as typeof FsgateError)(err.code, message, { data: { path } })
  const given = clipMiddle(path, 60)
  switch (err.code) {
    case 'INVALID_PDF':
      if (err.message.startsWith('not a PDF')) return again(`${given} is ${clip(err.message, 60)}. pdf_read reads PDF files only: use file_read for other files.`)
      return again(`${given} cannot be read as a PDF: ${clip(err.message, 100)}. Check the file, or read another one.`)
    case 'TIMEOUT':
      return again(`${given}: ${clip(err.message, 80)}. Try a few pages at a time with file_read and pages.`)
    case 'FILE_TOO_LARGE': {
      if (!err.message.startsWith('PDF is')) return err
      const bytes = /^PDF is ([\d,]+) bytes/.exec(err.message)?.[1]
      return again(pdfTooLarge(given, bytes ? ` (${bytes} bytes)` : '', ctx))
    }
    case 'NOT_FOUND':
      return again(`File does not exist: ${given}. Check the path; relative paths start at the workspace (${ctx.workspace}).`)
    default:
      return err
  }
}

/** FILE_TOO_LARGE for a PDF over limits.pdfMaxBytes. */
export function pdfTooLarge(given: string, size: string, ctx: ToolContext): string {
  return `${given}${size} is over limits.pdfMaxBytes (${num(ctx.limits.pdfMaxBytes)}) for PDFs. Extract its text with a shell command (pdftotext -f 1 -l 5), or ask the user for a smaller file.`
}

function facts(r: NativeReadResult) {
  return { realPath: r.realPath, mtimeMs: r.mtimeMs, size: r.size, contentHash: r.hash, totalLines: 0 }
}

function hasText(pdf: PdfFacts): boolean {
  return !pdf.locked && pdf.pages.some((p) => p.text.trim() !== '')
}

function noText(shown: string, pdf: PdfFacts, data: Record<string, unknown>): ToolOutput {
  const why = pdf.locked ? 'it is encrypted with a password' : `${num(pdf.pageCount)} page${pdf.pageCount === 1 ? '' : 's'}, no text layer`
  return { content: [text(`${NO_TEXT_WARNING}\n(${shown}: ${why})`)], data: { ...data, warning: NO_TEXT_WARNING, locked: pdf.locked } }
}

/** The pages with their markers, a blank line between pages. */
function layout(pdf: PdfFacts): string {
  return pdf.pages
    .map((p) => `--- Page ${p.number} of ${pdf.pageCount} ---\n${p.text.trim() === '' ? '(no text on this page)' : p.text}`)
    .join('\n\n')
}

function unmappedNote(pdf: PdfFacts): string {
  if (pdf.unmapped === 0) return ''
  return `\n(${num(pdf.unmapped)} character${pdf.unmapped === 1 ? '' : 's'} could not be mapped to Unicode and ${pdf.unmapped === 1 ? 'is' : 'are'} shown as \u{fffd})`
}

/** The number of the last page marker in `out`. */
function lastMarker(out: string): number | undefined {
  const at = out.lastIndexOf('--- Page ')
  if (at < 0) return undefined
  const m = /^--- Page (\d+) of/.exec(out.slice(at))
  return m ? Number(m[1]) : undefined
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** Pages whose text passed `readPdfMaxChars`: over the token limit, without counting. */
function tooLong(numbers: number[], shown: string, max: number): never {
  const first = numbers[0] as number
  const chars = readPdfMaxChars(max)
  throw new MaxFileReadTokenExceededError(
    'TOKEN_LIMIT',
    `${numbers.length === 1 ? `Page ${first}` : `These ${numbers.length} pages`} of ${shown} ${numbers.length === 1 ? 'holds' : 'hold'} more than ${num(chars)} characters of text, over the ${num(max)}-token limit. Read fewer pages at a time${numbers.length > 1 ? `, e.g. pages="${first}"` : ', or use pdf_read with max_chars'}.`,
    { data: { maxTokens: max, maxChars: chars, pages: numbers } },
  )
}

/** The token gate for page text: bytes bound tokens from above, so only long text is counted. */
async function gate(out: string, numbers: number[], shown: string, ctx: ToolContext): Promise<void> {
  const max = ctx.limits.readTokens
  if (Buffer.byteLength(out) <= max) return
  const tokens = ctx.countTokens ? await hostCount(ctx, out) : await countTokens(out, { signal: ctx.signal })
  if (tokens <= max) return
  const first = numbers[0] as number
  throw new MaxFileReadTokenExceededError(
    'TOKEN_LIMIT',
    `${numbers.length === 1 ? `Page ${first}` : `These ${numbers.length} pages`} of ${shown} ${numbers.length === 1 ? 'is' : 'are'} ${num(tokens)} tokens, over the ${num(max)}-token limit. Read fewer pages at a time${numbers.length > 1 ? `, e.g. pages="${first}"` : ', or use pdf_read with max_chars'}.`,
    { data: { tokens, maxTokens: max, pages: numbers } },
  )
}
