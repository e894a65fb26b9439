/**
 * semantic_code_search (SPEC §3.5): code snippets ranked for a natural-language or
 * symbol query. backend 'auto' runs the Semble sidecar when a `semble` binary is on
 * PATH and falls back to the built-in ranker (and says so) when it fails; 'semble'
 * insists on it; 'literal' is the built-in ranker: identifier- and Unicode-aware terms,
 * chunks by definitions and blank-line blocks, BM25, boosts for defined symbols and file
 * names, tests and generated files damped, one index per workspace reused across calls.
 */
import path from 'node:path'

import { z } from 'zod'

import { AbortedError, clip, FsgateError, InvalidInputError } from '../errors.js'
import { callNative, completer, type NativeRankResult, type NativeReadResult, type NativeTarget } from '../native.js'
import { displayPath } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { explainSearchError, givenPath, plural, searchBase, walkErrors } from '../search/scope.js'
import { findSemble, runSemble, SembleError, type SembleHit } from '../search/semble.js'
import { defineTool, type ToolContext } from '../tool.js'
import { loneWithin } from './budget.js'
import { num, pageTokens, recordsWithin } from './common.js'

export type Backend = 'auto' | 'semble' | 'literal'

export interface SemanticInput {
  query: string
  path?: string
  top_k?: number
  /** Snippets to skip, in rank order, to go on past an earlier page. */
  offset?: number
  backend?: Backend
}

/** The most snippets a call returns (SPEC §4). */
const MAX_TOP_K = 25
/** The deepest a call may page into the ranking (the engine's bound too). */
const MAX_OFFSET = 1000
/** Lines of a snippet shown (the built-in ranker's cut too). */
const SNIPPET_LINES = 40
const INSTALL_HINT = "Install with pip install semble or uv tool install semble, or use backend='literal'."

interface Hit {
  path: string
  startLine: number
  endLine: number
  score: number
  symbol?: string
  snippet: string
  /** Lines of the chunk left out of the snippet. */
  moreLines?: number
}

export const semanticTool = defineTool<SemanticInput>({
  name: 'semantic_code_search',
  dialects: {
    revka: {
      name: 'semantic_code_search',
      description: `Finds the code most relevant to a natural-language or symbol query and returns ranked snippets (path, line range, score) instead of whole files — far fewer tokens than grep plus read.
- Good queries: "where is the config parsed", "parseConfig", "retry with backoff", "토큰 압축" (any language).
- Finds definitions of the symbols you name first; tests and generated files rank lower.
- For an exact string or regex, use content_search; to list files by name, glob_search.`,
      schema: z.strictObject({
        query: z.string().min(1).describe('What to find: a natural-language description or a symbol name.'),
        path: z.string().optional().describe('The folder to search, relative to the workspace or absolute. Default: the workspace root.'),
        top_k: z.number().int().min(1).optional().describe('How many snippets to return. Default 8, at most 25 (a larger top_k is cut to 25, and the result says so).'),
        offset: z.number().int().min(0).max(MAX_OFFSET).optional().describe('Snippets to skip, in rank order, to see the next results: the output names the offset to go on at. Default 0.'),
        backend: z
          .enum(['auto', 'semble', 'literal'])
          .optional()
          .describe("'auto' (default): the Semble sidecar when installed, else the built-in ranker; 'semble': only Semble; 'literal': only the built-in ranker."),
      }),
      toCanonical: (i) => i as unknown as SemanticInput,
    },
  },
  run: semantic,
})

/** After Semble fails in auto mode, calls use the built-in ranker for this long. */
const BACKOFF_MS = 60_000
/** When Semble last failed, by binary and folder, and why. */
const failed = new Map<string, { until: number; reason: string }>()

async function semantic(input: SemanticInput, ctx: ToolContext): Promise<ToolOutput> {
  if (input.query.trim() === '') throw new InvalidInputError('INVALID_INPUT', 'query is blank. Describe the code you are looking for, or name a symbol.', { data: { field: 'query' } })
  const given = givenPath(input.path)
  const abs = searchBase(ctx, given)
  const asked = input.top_k ?? ctx.limits.semanticTopK
  const page: Page = { offset: input.offset ?? 0, topK: Math.min(asked, MAX_TOP_K), asked }
  const topK = page.topK
  const backend = input.backend ?? 'auto'
  const explain = (err: unknown) => explainSearchError(err, given, abs, ctx, { folderOnly: true })
  let fallback: string | undefined
  if (backend !== 'literal') {
    const bin = await usableSemble(ctx)
    if (typeof bin !== 'string' && backend === 'semble') {
      throw new FsgateError('BACKEND_UNAVAILABLE', `${bin.why} ${INSTALL_HINT}`, { data: { backend } })
    }
    if (typeof bin !== 'string' && bin.refused) fallback = `${bin.why} These results are from the built-in ranker.`
    if (typeof bin === 'string') {
      const real = await callNative<string>((id) => ctx.fs.searchRoot(completer, id, abs), ctx.signal, ctx.lanes.compute).catch(async (err) => {
        throw await explain(err)
      })
      const key = `${bin}\0${real}`
      const recent = failed.get(key)
      if (backend === 'auto' && recent && recent.until > Date.now()) {
        fallback = `Semble failed less than a minute ago (${recent.reason}); these results are from the built-in ranker.`
      } else {
        try {
          // Semble has no offset: the hits up to the page's end, past those before it.
          const found = (await runSemble(bin, input.query, real, page.offset + topK, { signal: ctx.signal })).slice(page.offset)
          failed.delete(key)
          const { hits, dropped } = await confirmHits(found, real, ctx)
          // Semble gives no total: a full page may have more after it.
          return shape(input, ctx, abs, hits, { backend: 'semble', ...(dropped ? { droppedHits: dropped } : {}) }, { ...page, more: found.length === topK })
        } catch (err) {
          if (!(err instanceof SembleError)) throw err
          if (err.reason === 'aborted') throw new AbortedError('ABORTED', 'The call was cancelled by its AbortSignal. Call again if it is still needed.')
          failed.set(key, { until: Date.now() + BACKOFF_MS, reason: err.reason })
          if (backend === 'semble') {
            throw new FsgateError(err.reason === 'timeout' ? 'TIMEOUT' : 'BACKEND_UNAVAILABLE', `Semble failed: ${clip(err.message, 100)} Retry, or use backend='literal'.`, {
              data: { backend, reason: err.reason },
            })
          }
          fallback = `Semble failed (${err.reason}); these results are from the built-in ranker.`
        }
      }
    }
  }
  const r = await callNative<NativeRankResult>(
    (id, cancel) => ctx.fs.rank(completer, id, { path: abs, displayRoot: ctx.workspace, query: input.query, topK, offset: page.offset }, cancel),
    ctx.signal,
    ctx.lanes.search,
  ).catch(async (err) => {
    throw await explain(err)
  })
  const hits = r.hits.map((h) => ({ path: h.path, startLine: h.startLine, endLine: h.endLine, score: h.score, symbol: h.symbol ?? undefined, snippet: h.snippet, moreLines: h.moreLines }))
  const facts = {
    backend: 'builtin',
    filesIndexed: r.filesIndexed,
    filesConsidered: r.filesConsidered,
    fromIndex: r.fromIndex,
    chunks: r.chunks,
    total: r.total,
    ...(r.skipped ? { skippedFiles: r.skipped } : {}),
    ...(r.errors.length ? { errors: r.errors.slice(0, 20) } : {}),
    ...(fallback ? { fallback } : {}),
  }
  return shape(input, ctx, abs, hits, facts, { ...page, total: r.total })
}

/**
 * The Semble binary on PATH, unless it lies inside the workspace or allowedPaths: a
 * program the agent can change is never run by a search (that would be a shell without
 * the shell's checks).
 */
async function usableSemble(ctx: ToolContext): Promise<string | { why: string; refused: boolean }> {
  const bin = findSemble()
  if (!bin) return { why: 'Semble is not installed (no semble binary on PATH).', refused: false }
  const where = await callNative<NativeTarget>((id) => ctx.fs.target(completer, id, bin, true), ctx.signal, ctx.lanes.compute).catch(() => undefined)
  if (!where || where.inside) {
    return { why: `The semble on PATH (${bin}) is inside the workspace or an allowed path, where the agent could change it, so fsgate does not run it.`, refused: true }
  }
  return bin
}

/**
 * Semble's hits, each read again through the confined reader: a path that leads outside
 * the folder searched (a symlink Semble followed) is dropped, and the snippet shown is
 * the file's own lines, cut as the built-in ranker cuts them.
 */
async function confirmHits(found: SembleHit[], real: string, ctx: ToolContext): Promise<{ hits: Hit[]; dropped: number }> {
  const read = async (h: SembleHit): Promise<Hit | undefined> => {
    const full = path.isAbsolute(h.path) ? h.path : path.join(real, h.path)
    const lines = Math.max(1, h.endLine - h.startLine + 1)
    const r = await callNative<NativeReadResult>(
      (id, cancel) =>
        ctx.fs.read(completer, id, { path: full, offset: h.startLine, limit: Math.min(lines, SNIPPET_LINES), ranged: true, maxLineChars: 500, tokenLimit: 0 }, cancel),
      ctx.signal,
      ctx.lanes.compute,
    ).catch(() => undefined)
    const within = r !== undefined && (r.realPath === real || r.realPath.startsWith(real + path.sep))
    if (!within || r.kind !== 'text' || !r.text) return undefined
    const snippet = r.text
      .slice(0, -1)
      .split('\n')
      .map((l) => l.replace(/^ *\d+\t/, ''))
      .join('\n')
    const end = Math.max(h.startLine, Math.min(h.endLine, r.totalLines ?? h.endLine))
    return { path: displayPath(ctx.workspace, r.realPath), startLine: h.startLine, endLine: end, score: h.score ?? 0, snippet, moreLines: Math.max(0, end - (r.endLine ?? end)) }
  }
  const checked = await Promise.all(found.map(read))
  const hits = checked.filter((h): h is Hit => h !== undefined)
  return { hits, dropped: found.length - hits.length }
}

/** Which part of the ranking a call asked for. */
interface Page {
  offset: number
  /** top_k after the clamp. */
  topK: number
  /** top_k as asked. */
  asked: number
  /** Every hit there is (the built-in ranker knows it). */
  total?: number
  /** Whether a page from a ranker without a total may have more after it. */
  more?: boolean
}

async function shape(input: SemanticInput, ctx: ToolContext, abs: string, found: Hit[], facts: Record<string, unknown>, page: Page): Promise<ToolOutput> {
  const notes = typeof facts.fallback === 'string' ? [`(${facts.fallback})`] : []
  if (Array.isArray(facts.errors) && facts.errors.length) notes.push(`(${walkErrors(facts.errors)})`)
  if (page.asked > page.topK) notes.push(`(top_k ${num(page.asked)} is more than the most, ${MAX_TOP_K}: showing at most ${MAX_TOP_K}; the next ones are at the offset named below.)`)
  const blocks = found.map((h, i) => {
    const head = `${page.offset + i + 1}. ${h.path}:${h.startLine}-${h.endLine}${h.symbol ? `  ${h.symbol}` : ''}  (score ${h.score.toFixed(2)})`
    const body = h.snippet === '' ? '' : `\n${numbered(h.snippet, h.startLine)}`
    const shownTo = h.endLine - (h.moreLines ?? 0)
    const more = h.moreLines ? `\n… ${h.moreLines} more lines; read ${h.path} with offset=${shownTo + 1} for the rest` : ''
    return head + body + more
  })
  // Snippets past the result budget wait for the next page.
  const fit = await recordsWithin(ctx, blocks.map((b) => `${b}\n`))
  if (fit === 1) blocks[0] = await loneWithin(ctx, blocks[0], pageTokens(ctx.limits.resultTokens))
  const hits = found.slice(0, fit)
  const next = page.offset + fit
  const more = page.total !== undefined ? next < page.total : fit < found.length || page.more === true
  const data = { query: input.query, path: displayPath(ctx.workspace, abs), ...facts, offset: page.offset, topK: page.topK, truncated: more, hits: hits.map(({ snippet: _s, moreLines: _m, ...h }) => h) }
  if (hits.length === 0) {
    const past = page.offset > 0 ? ` (offset ${num(page.offset)} is past the last of ${page.total === undefined ? 'the results' : plural(page.total, 'result')}; continue with offset=0)` : ''
    return { content: [text([...notes, `No code found for "${input.query}"${past}. Try other words or a symbol name, or use content_search for an exact string.`].join('\n'))], data }
  }
  if (more) {
    const of = page.total !== undefined ? ` of ${num(page.total)}` : ''
    // Paging ends at MAX_OFFSET: past it, the way on is a narrower query, not an offset the schema refuses.
    const onward = next <= MAX_OFFSET ? `Continue with offset=${next} for the next.` : `Paging ends at offset ${num(MAX_OFFSET)}: narrow the query or the path for the rest.`
    blocks.splice(fit, blocks.length, `(Showing results ${num(page.offset + 1)}-${num(next)}${of}. ${onward})`)
  }
  return { content: [text([...notes, ...blocks.slice(0, fit + (more ? 1 : 0))].join('\n\n'))], data }
}

/** The snippet with cat -n line numbers, so the model can cite and read the lines. */
function numbered(snippet: string, first: number): string {
  return snippet
    .split('\n')
    .map((line, i) => `${String(first + i).padStart(6)}\t${line}`)
    .join('\n')
}
