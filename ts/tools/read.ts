/**
 * Read (file_read / Read), SPEC §3.1: numbered pages of text, images as image blocks,
 * a short notice for binaries, special files refused, the two-stage token gate, and
 * ~100-byte stubs for unchanged re-reads.
 */
import { z } from 'zod'

import { clip, clipMiddle, FsgateError, InvalidInputError, MaxFileReadTokenExceededError } from '../errors.js'
import { callNative, completer, type NativeReadResult } from '../native.js'
import { displayPath, resolvePath } from '../policy/paths.js'
import { didYouMean, similarNames } from '../similar.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'
import { readTaskOutput } from '../process/tasks.js'
import { hostCount, mostWithin, num, pathField, unchanged } from './common.js'
import { readNotebook } from './notebook.js'
import { explainPdfError, pdfTooLarge, readPdfMaxChars, readPdfPages } from './pdf.js'

export interface ReadInput {
  path: string
  offset?: number
  limit?: number
  pages?: string
  /** Claude Code's allow_large: raise the token and size limits, up to the host's hard caps. */
  allow_large?: boolean  /** The file's text as it is, never a notebook's cells (the text editor's view, whose edits are of the text). */
  raw?: boolean
}

const offset = z
  .number()
  .int()
  .min(0)
  .describe('The 1-based line to start at. Give it only for files too large to read at once; 0 or absent means line 1.')
const limit = z.number().int().min(1).describe('How many lines to read (default 2000). Give it only for files too large to read at once.')

const pages = z.string().describe('For PDF files only: the pages to read, e.g. "3", "1-5" or "2,4-6" (at most 20 a call).')
const allowLarge = z
  .boolean()
  .describe('Read a text file, or a range of one, that is over the usual size limits, up to a hard cap. Only when you need all of it or the user asked; otherwise read it in parts with offset and limit, or search it.')
/** Claude Code types offset and limit as numbers: a fraction is taken down to a whole line. */
const whole = (n: unknown) => (typeof n === 'number' ? Math.floor(n) : undefined)

const guide = (search: string) =>
  `Reads a file from the workspace. Relative paths start at the workspace root.
- Returns up to 2000 lines from the start by default, each with its line number; lines over 2000 characters are cut. For a large file, read a range with offset and limit; the output says where to continue.
- On a big tree, find the lines you need with ${search} first, then read just that range.
- Reads text (UTF-8, UTF-16), images (PNG, JPEG, GIF, WebP), which you see as images, PDFs, as text with a marker line before each page (at most 20 pages a call: give pages, e.g. "1-5", for a longer PDF), and Jupyter notebooks (.ipynb), as their cells with their outputs (offset and limit count cells there). Binary files get a one-line notice.
- Read a file before you change it: edits and writes to a file you have not read are refused.
- Reading the same range of an unchanged file again returns a short notice that your earlier result is still current.`

export const readTool = defineTool<ReadInput>({
  name: 'file_read',
  dialects: {
    revka: {
      name: 'file_read',
      description: guide('content_search'),
      schema: z.strictObject({ path: z.string().describe('Path of the file, relative to the workspace or absolute.'), offset: offset.optional(), limit: limit.optional(), pages: pages.optional() }),
      toCanonical: (i) => i as unknown as ReadInput,
    },
    claude: {
      name: 'Read',
      description: `${guide('Grep')}
- A background command's output is read here too: Read the output path that Bash named when it started the command.`,
      schema: z.strictObject({
        file_path: z.string().describe('The path of the file to read.'),
        offset: z.number().min(0).describe(offset.description as string).optional(),
        limit: z.number().min(1).describe(limit.description as string).optional(),
        pages: pages.optional(),
        allow_large: allowLarge.optional(),
      }),
      toCanonical: ({ file_path, offset, limit, ...rest }) =>
        ({ path: file_path as string, ...rest, ...(offset !== undefined ? { offset: whole(offset) } : {}), ...(limit !== undefined ? { limit: Math.max(1, whole(limit) ?? 1) } : {}) }) as ReadInput,
    },
    gemini: {
      name: 'read_file',
      description: `Reads a file and returns its content. Relative paths start at the workspace root. Read targeted sections with start_line and end_line: at most 2000 lines come back at once, and the output says where to continue.
- Reads text, images (PNG, JPEG, GIF, WebP) and PDFs (as text, at most 20 pages a call), and Jupyter notebooks as their cells.
- Read a file before you change it: replace and write_file refuse files you have not read.
- On a big tree, find what you need with grep_search first, then read just those lines.`,
      schema: z.strictObject({
        file_path: z.string().describe('The path to the file to read.'),
        start_line: z.number().int().min(1).describe('Optional: the 1-based line number to start reading from.').optional(),
        end_line: z.number().int().min(1).describe('Optional: the 1-based line number to end reading at (inclusive).').optional(),
      }),
      toCanonical: ({ file_path, start_line, end_line }) => {
        const start = start_line as number | undefined
        const end = end_line as number | undefined
        if (start !== undefined && end !== undefined && start > end) {
          throw new InvalidInputError('INVALID_INPUT', `start_line (${start}) cannot be greater than end_line (${end}). Give a range that starts before it ends.`, { data: { field: 'start_line' } })
        }
        return { path: file_path as string, ...(start !== undefined ? { offset: start } : {}), ...(end !== undefined ? { limit: end - (start ?? 1) + 1 } : {}) }
      },
      present: geminiAnswer,
    },
  },
  run: read,
})

async function read(input: ReadInput, ctx: ToolContext): Promise<ToolOutput> {
  // A background command's output (Claude Code names a file; fsgate keeps it in memory).
  const task = ctx.tasks.forOutputPath(input.path)
  if (task) return readTaskOutput(task, { offset: Math.max(1, input.offset ?? 1), limit: input.limit }, ctx)
  const abs = resolvePath(ctx.workspace, input.path)
  if (/\.ipynb$/i.test(abs) && input.pages === undefined && input.raw !== true) {
    const nb = await readNotebook(abs, input, ctx).catch(async (err) => {
      throw await explain(err, input.path, abs, ctx)
    })
    if (!('invalid' in nb)) return nb
    // Not a notebook after all: its text, said so (still paged and gated as any text).
    const out = await readFile(input, abs, ctx)
    const first = out.content[0]
    if (first?.type === 'text') out.content[0] = text(`(${input.path} is not a valid notebook: it ${nb.invalid}. Its text follows.)\n${first.text}`)
    return { ...out, data: { ...out.data, invalidNotebook: nb.invalid } }
  }
  return readFile(input, abs, ctx)
}

async function readFile(input: ReadInput, abs: string, ctx: ToolContext): Promise<ToolOutput> {
  const L = ctx.limits
  const large = input.allow_large === true
  const maxTokens = large ? Math.max(L.readTokens, L.largeReadTokens) : L.readTokens
  const pageList = input.pages === undefined ? undefined : parsePages(input.pages, L.pdfPagesPerRead)
  const r = await callNative<NativeReadResult>(
    (id, cancel) =>
      ctx.fs.read(
        completer,
        id,
        {
          path: abs,
          offset: input.offset,
          // allow_large without a limit: every line, up to the raised token cap.
          limit: input.limit ?? (large ? 1e12 : L.readLines),
          ranged: input.offset !== undefined || input.limit !== undefined,
          style: ctx.lineStyle,
          maxLineChars: L.readLineChars,
          maxUnrangedBytes: large ? Math.max(L.unrangedReadBytes, L.largeReadBytes) : L.unrangedReadBytes,
          tokenLimit: ctx.countTokens ? 0 : maxTokens,
          imageMaxEdge: L.imageMaxEdge,
          imageMaxBytes: L.imageMaxBytes,
          imageMaxPixels: L.imageMaxPixels,
          pdfPages: pageList,
          pdfMaxPages: L.pdfPagesPerRead,
          pdfMaxBytes: L.pdfMaxBytes,
          pdfMaxChars: readPdfMaxChars(maxTokens),
        },
        cancel,
      ),
    ctx.signal,
    ctx.lanes.compute,
  ).catch(async (err) => {
    throw await explain(err, input.path, abs, ctx)
  })
  const shown = displayPath(ctx.workspace, r.realPath)
  const facts = { realPath: r.realPath, mtimeMs: r.mtimeMs, size: r.size, contentHash: r.hash, totalLines: r.totalLines ?? 0 }
  const base = { path: shown, realPath: r.realPath, size: r.size, mtimeMs: r.mtimeMs, contentHash: r.hash }

  if (pageList && r.kind !== 'pdf') {
    throw new InvalidInputError('INVALID_INPUT', `pages is only for PDF files, and ${shown} is not one. Read it with offset and limit instead.`, {
      data: { field: 'pages' },
    })
  }
  switch (r.kind) {
    case 'pdf':
      return readPdfPages(r, ctx)
    case 'binary': {
      const again = ctx.ledger.note(facts, null)
      if (again && ctx.dedup) return unchanged(shown, base, 'notice')
      return {
        content: [text(`${shown} is a binary file (${num(r.size)} bytes, detected type: ${r.binaryKind}); its contents are not shown.`)],
        data: { ...base, kind: 'binary', binaryType: r.binaryKind },
      }
    }
    case 'image': {
      const again = ctx.ledger.note(facts, null)
      if (again && ctx.dedup) return unchanged(shown, base, 'image')
      const data = {
        ...base,
        kind: 'image',
        mimeType: r.mime,
        width: r.width,
        height: r.height,
        originalWidth: r.originalWidth,
        originalHeight: r.originalHeight,
        resized: r.resized,
      }
      const content: ToolOutput['content'] = [{ type: 'image', data: r.imageBase64 as string, mimeType: r.mime as string }]
      if (r.resized) content.push(text(`[image ${shown}: ${r.originalWidth}×${r.originalHeight} shown downscaled to ${r.width}×${r.height}]`))
      return { content, data }
    }
    default:
      return readText(r, input, ctx, shown, facts, base, maxTokens)
  }
}

async function readText(
  r: NativeReadResult,
  input: ReadInput,
  ctx: ToolContext,
  shown: string,
  facts: Parameters<ToolContext['ledger']['note']>[0],
  base: { path: string; realPath: string; size: number; mtimeMs: number; contentHash: string },
  maxTokens: number,
): Promise<ToolOutput> {
  const total = r.totalLines as number
  const start = r.startLine as number
  const end = r.endLine as number
  const first = Math.max(1, input.offset ?? 1)
  if (total > 0 && first > total) {
    throw new InvalidInputError('INVALID_INPUT', `offset ${num(first)} is past the end of ${shown}, which has ${num(total)} lines. Use an offset from 1 to ${total}.`, {
      data: { field: 'offset', totalLines: total },
    })
  }
  await gate(r, ctx, total, first, maxTokens, input.allow_large === true)
  const again = ctx.ledger.note(facts, total === 0 ? null : [start, end])
  // Spelled out rather than spread: this object is built on every read, and a spread
  // followed by more keys takes V8's slow path.
  const data = {
    path: base.path,
    realPath: base.realPath,
    size: base.size,
    mtimeMs: base.mtimeMs,
    contentHash: base.contentHash,
    kind: 'text',
    startLine: start,
    endLine: end,
    totalLines: total,
    cutLines: r.cutLines,
    encoding: r.encoding,
    lossy: r.lossy,
  }
  if (again && ctx.dedup) return unchanged(shown, data, total === 0 ? 'empty file' : `lines ${start}-${end} of ${total}`)
  if (total === 0) return { content: [text(`(${shown} is empty)`)], data }
  let out = (r.text as string).slice(0, -1)
  const more = total - end
  if (ctx.lineStyle === 'colon') out += `\n[Lines ${start}-${end} of ${total}]`
  if (more > 0) out += `\n… ${num(more)} more line${more === 1 ? '' : 's'}; continue with ${ctx.dialect === 'gemini' ? 'start_line' : 'offset'}=${end + 1}`
  if (r.lossy) out += '\n(bytes that are not valid text in this encoding are shown as U+FFFD)'
  return { content: [text(out)], data }
}

/** The second stage of the token gate (the first, in Rust, skips pages that cannot be over). */
async function gate(r: NativeReadResult, ctx: ToolContext, total: number, first: number, max: number, large: boolean): Promise<void> {
  let tokens = r.tokens ?? undefined
  let fit = r.fitLines ?? undefined
  const page = r.text as string
  if (ctx.countTokens && (r.overflow || Buffer.byteLength(page) > max)) {
    const lines = page.split('\n').slice(0, -1)
    const count = (k: number) => hostCount(ctx, lines.slice(0, k).join('\n'))
    if (!r.overflow) tokens = await count(lines.length)
    if (r.overflow || (tokens as number) > max) fit = await mostWithin(lines.length, count, max)
  }
  const over = r.overflow || (tokens !== undefined && tokens > max)
  if (!over) return
  const size = tokens !== undefined && !r.overflow ? num(tokens) : `more than ${num(max)}`
  const range = ctx.dialect === 'gemini' ? `start_line=${first} and end_line=${first + (fit ?? 1) - 1}` : `offset=${first} and limit=${fit}`
  const bigger = ctx.dialect === 'claude' && !large && ctx.limits.largeReadTokens > max ? `, or set allow_large to read up to ${num(ctx.limits.largeReadTokens)} tokens if you need all of it` : ''
  const hint = fit && fit > 0 ? `read part of it with ${range}, or search for what you need${bigger}` : `search for what you need instead${bigger}`
  throw new MaxFileReadTokenExceededError(
    'TOKEN_LIMIT',
    `This page is ${size} tokens, over the ${num(max)}-token limit. The file has ${num(total)} lines; ${hint}.`,
    { data: { tokens: tokens ?? null, maxTokens: max, totalLines: total, suggestedLimit: fit && fit > 0 ? fit : null } },
  )
}

/** Turns a native error into a message that tells the model what to do next. */
async function explain(err: unknown, path: string, abs: string, ctx: ToolContext): Promise<unknown> {
  if (!(err instanceof FsgateError)) return err
  const data = { path }
  // What the messages echo of the path (data keeps it whole).
  const given = clipMiddle(path, 60)
  const say = (message: string) => new (err.constructor as typeof FsgateError)(err.code, message, { data })
  switch (err.code) {
    case 'NOT_FOUND': {
      const near = (await similarNames(abs)).map((p) => displayPath(ctx.workspace, p))
      const hint = near.length > 0 ? didYouMean(near) : ` Check the path; relative paths start at the workspace (${clipMiddle(ctx.workspace, 60)}).`
      return new (err.constructor as typeof FsgateError)(err.code, `File does not exist: ${given}.${hint}`, { data: { path, suggestions: near } })
    }
    case 'IS_DIRECTORY':
      return say(`${given} is a directory, not a file. Read a file inside it instead.`)
    case 'BLOCKED_DEVICE':
      return say(`${given} is a device, FIFO, socket or other special file, which Read refuses (it may never end). Read a regular file.`)
    case 'PATH_OUTSIDE_WORKSPACE':
      return say(`${given} is outside the workspace (${ctx.workspace}) and the allowed paths, so it cannot be read. Use a path inside the workspace.`)
    case 'FILE_TOO_LARGE':
      return say(tooLarge(err.message, given, ctx))
    case 'IO_ERROR':
      return say(`${given} could not be read (${clip(err.message, 80)}). Retry, or read another file.`)
    case 'PERMISSION_DENIED':
      return say(`Permission denied reading ${given}. It cannot be read by this process; try another file.`)
    case 'INVALID_IMAGE':
      return say(`${given} looks like an image but cannot be decoded (${clip(err.message, 80)}). Check the file, or read another one.`)
    case 'INVALID_INPUT': {
      const field = pathField(ctx)
      return new InvalidInputError('INVALID_INPUT', `${field} ${given} ${clip(err.message, 80)}. Give a valid file path.`, { data: { field, path } })
    }
    default:
      return explainPdfError(err, path, ctx)
  }
}

/**
 * FILE_TOO_LARGE as the engine said it ("file is …", "image is …", "PDF is …"), told
 * with the limit that refused it and how to read the file anyway.
 */
function tooLarge(native: string, given: string, ctx: ToolContext): string {
  const bytes = /^\S+ is ([\d,]+) bytes/.exec(native)?.[1]
  const size = bytes ? ` (${bytes} bytes)` : ''
  if (native.startsWith('file is')) {
    // A quarter of a default page: lines of a log this size fit the token limit at that count.
    const lines = Math.max(1, Math.floor(ctx.limits.readLines / 4))
    const part = ctx.dialect === 'gemini' ? `start_line=1 end_line=${lines}` : `offset=1 limit=${lines}`
    return `${given}${size} is over limits.unrangedReadBytes (${num(ctx.limits.unrangedReadBytes)}) for a read without a range. Read part of it with ${part}, or search it for what you need.`
  }
  if (native.startsWith('image is')) return `${given}: ${clip(native, 100)}. Make a smaller copy (with a shell command), then read that.`
  if (native.startsWith('PDF is')) return pdfTooLarge(given, size, ctx)
  return `${given} is too large to read (${clip(native, 80)}). Search it for what you need instead.`
}

/**
 * Parses a page selection ("3", "1-5", "2,4-6") into sorted, distinct 1-based page
 * numbers; INVALID_INPUT for bad syntax, reversed ranges or more than `max` pages.
 */
/** The largest page number `pages` accepts. */
const MAX_PAGE_NUMBER = 1_000_000

export function parsePages(spec: string, max: number): number[] {
  const bad = (why: string) => new InvalidInputError('INVALID_INPUT', `pages ${why}. Use a form like "3", "1-5" or "2,4-6".`, { data: { field: 'pages' } })
  const picked = new Set<number>()
  for (const part of spec.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part)
    if (!m) throw bad(`"${spec}" is not a page list`)
    const from = Number(m[1])
    const to = m[2] === undefined ? from : Number(m[2])
    if (from < 1 || to < from) throw bad(`"${part.trim()}" is not a valid range (pages start at 1)`)
    // No PDF has this many pages (the engine lists at most a million); larger numbers would not survive the trip to Rust.
    if (to > MAX_PAGE_NUMBER) throw bad(`"${part.trim()}" names a page past ${MAX_PAGE_NUMBER.toLocaleString('en-US')}`)
    if (to - from + 1 > max) throw bad(`selects more than ${max} pages; read at most ${max} a call`)
    for (let p = from; p <= to; p++) picked.add(p)
    if (picked.size > max) throw bad(`selects more than ${max} pages; read at most ${max} a call`)
  }
  return [...picked].sort((a, b) => a - b)
}

/** gemini-cli's read_file answer: the lines alone, and its notice when they are not the whole file. */
function geminiAnswer(out: ToolOutput): ToolOutput {
  const d = out.data as { kind?: string; startLine?: number; endLine?: number; totalLines?: number; unchanged?: boolean }
  const first = out.content[0]
  if (d.kind !== 'text' || d.unchanged || first?.type !== 'text' || !d.totalLines || (d.startLine === 1 && d.endLine === d.totalLines)) return out
  const notice = `IMPORTANT: The file content has been truncated.
Status: Showing lines ${d.startLine}-${d.endLine} of ${d.totalLines} total lines.
Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call.${(d.endLine ?? 0) < d.totalLines ? ` For example, to read the next section of the file, use start_line: ${(d.endLine ?? 0) + 1}.` : ''}

--- FILE CONTENT (truncated) ---
`
  // fsgate's own continuation line says the same: the notice replaces it.
  const body = first.text.replace(/\n… [\d,]+ more lines?; continue with start_line=\d+$/, '')
  return { ...out, content: [text(notice + body), ...out.content.slice(1)] }
}
