/**
 * Property suite (issue 8, hardening), everything through `session.call`:
 * - pagination: pages read one after another with random limits concatenate to the file's
 *   lines (cat -n and Revka's `N: text` with `[Lines a-b of N]`), for any text in UTF-8,
 *   UTF-8 BOM and UTF-16 LE/BE, LF/CRLF/lone CR, with and without a final newline; ranges
 *   consistent, the continuation line exactly when lines remain, cut lines marked and
 *   counted, dedup stubs on re-reads; random ranged reads of an indexed (≥ 4 MiB) file; the
 *   token gate (TOKEN_LIMIT with the largest limit that fits);
 * - edits: old→new then new→old gives the original bytes back (UTF-8, BOM, UTF-16, CRLF,
 *   .md; with LF strings on CRLF files; replace_all), `session.undo` does too, data.diff
 *   turns the old text into the new; the quotes rung changes only its span; edits sent at
 *   once all apply; ranged reads accumulate for the read-before-write contract;
 * - never throws: any name and any input resolve to a well-formed ToolResult in time,
 *   schema violations name the field, and Object.prototype stays clean;
 * - Write stores LF endings in the file's encoding; glob and content_search results match
 *   a model, sorted by path, inside the workspace.
 * Bugs the properties found are pinned at the end, in 'regressions found by the property suite'
 * (each failed before its fix).
 *
 * Runs: `FSGATE_PROPERTY_RUNS` (default 80 for a property of weight 1), seed
 * `FSGATE_PROPERTY_SEED` (fixed by default; fast-check prints seed and path on failure).
 * A soak run: `FSGATE_PROPERTY_RUNS=2000 npx vitest run __test__/property.test.ts`.
 */
import fs from 'node:fs'
import path from 'node:path'

import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit, ERROR_CODES, type Session, type Toolkit, type ToolkitOptions, type ToolResult } from '../ts/index.js'
import { expectToolResult, fails, ok, put, removeTempDirs, tempDir, textOf } from './helpers.js'
import {
  applyUnifiedDiff,
  bytesOf,
  codePoints,
  countOverlapping,
  decode,
  diffView,
  editTextArb,
  encode,
  type Encoding,
  ENCODINGS,
  fileLines,
  foldCrlf,
  foldQuotes,
  group,
  insertedAsIs,
  joinLines,
  lineArb,
  longLineArb,
  occurrences,
  params,
  replaceAll,
  shownLine,
  sniffsAsText,
  type TextFile,
  textFileArb,
  timeoutFor,
} from './property-arbitraries.js'

afterAll(removeTempDirs)

/** A token limit no generated page reaches, so the gate stays out of properties about paging. */
const NO_TOKEN_GATE = 100_000_000
/** A line length no generated line reaches. */
const NO_CUT = 1_000_000
const DEFAULT_LINE_CHARS = 2000

let counter = 0
/** A fresh relative file name. */
const fresh = (dir: string, ext = 'txt') => `${dir}/f${++counter}.${ext}`

type Style = 'cat-n' | 'colon' | 'compact'

/** The numbered form of line `n` in a page (SPEC §3.1; Claude's Read: `N<tab>`). */
const prefix = (style: Style, n: number) => (style === 'cat-n' ? `${String(n).padStart(6)}\t` : style === 'compact' ? `${n}\t` : `${n}: `)

/** The continuation line after a page ending at `end` of `total`. */
const continuation = (end: number, total: number) => {
  const more = total - end
  return `… ${group(more)} more line${more === 1 ? '' : 's'}; continue with offset=${end + 1}`
}

interface PageData {
  startLine: number
  endLine: number
  totalLines: number
  cutLines: number
  encoding: string
  lossy: boolean
  unchanged?: boolean
  kind: string
}

/**
 * Checks one successful page of `expected` (the file's lines as Read shows them) and
 * returns the lines it delivered with their numbers stripped.
 */
function checkPage(r: ToolResult, rel: string, file: TextFile, expected: string[], style: Style, maxChars: number, offset: number, limit: number): string[] {
  const text = ok(r)
  const d = r.data as unknown as PageData
  const total = expected.length
  expect(d.kind).toBe('text')
  expect(d.totalLines).toBe(total)
  expect(d.encoding).toBe(file.encoding)
  expect(d.lossy).toBe(false)
  if (total === 0) {
    expect(text).toBe(`(${rel} is empty)`)
    expect([d.startLine, d.endLine]).toEqual([0, 0])
    return []
  }
  const end = Math.min(total, offset + limit - 1)
  expect([d.startLine, d.endLine]).toEqual([offset, end])
  const lines = text.split('\n')
  const count = end - offset + 1
  const footer: string[] = []
  if (style === 'colon') footer.push(`[Lines ${offset}-${end} of ${total}]`)
  if (end < total) footer.push(continuation(end, total))
  // The continuation line appears exactly when lines remain.
  expect(lines.slice(count)).toEqual(footer)
  const got: string[] = []
  let cut = 0
  for (let i = 0; i < count; i++) {
    const n = offset + i
    const p = prefix(style, n)
    expect(lines[i].startsWith(p), `line ${n} starts with ${JSON.stringify(p)}: ${JSON.stringify(lines[i].slice(0, 20))}`).toBe(true)
    got.push(lines[i].slice(p.length))
    if (codePoints(expected[n - 1]).length > maxChars) cut++
  }
  expect(got).toEqual(expected.slice(offset - 1, end).map((l) => shownLine(l, maxChars)))
  expect(d.cutLines).toBe(cut)
  return got
}

/** The stub a re-read of the same range of an unchanged file returns (SPEC §3.1 dedup). */
function checkStub(r: ToolResult, rel: string, start: number, end: number, total: number): void {
  const text = ok(r)
  expect((r.data as unknown as PageData).unchanged).toBe(true)
  expect(text).toContain(total === 0 ? '(empty file)' : `(lines ${start}-${end} of ${total})`)
  expect(text).toContain('unchanged')
  expect(text.startsWith(rel)).toBe(true)
  // "About 100 bytes": the path plus a sentence, never the page again.
  expect(Buffer.byteLength(text) - Buffer.byteLength(rel)).toBeLessThan(120)
  expect(r.data).toMatchObject({ startLine: start, endLine: end, totalLines: total })
}

/** Limits for successive pages: a number, or undefined for the default (2000). */
const limitsArb = fc.array(fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 45 }), fc.constant(undefined)), { minLength: 1, maxLength: 6 })
/** How the first page asks for line 1: no offset, offset 0 or offset 1. */
const firstOffsetArb = fc.constantFrom<undefined | 0 | 1>(undefined, 0, 1)

/**
 * Reads `rel` page after page until the end and checks every page and the whole.
 * Returns the delivered lines (numbers stripped), in order.
 */
async function paginate(
  session: Session,
  rel: string,
  file: TextFile,
  style: Style,
  maxChars: number,
  limits: Array<number | undefined>,
  first: undefined | 0 | 1,
  dedup: boolean,
): Promise<string[]> {
  const expected = fileLines(file.text)
  const total = expected.length
  const got: string[] = []
  let offset = 1
  for (let i = 0; ; i++) {
    const limit = limits[i % limits.length]
    const input: Record<string, unknown> = { path: rel }
    if (i > 0 || first !== undefined) input.offset = i === 0 ? first : offset
    if (limit !== undefined) input.limit = limit
    const r = await session.call('file_read', input)
    got.push(...checkPage(r, rel, file, expected, style, maxChars, offset, limit ?? 2000))
    const d = r.data as unknown as PageData
    if (dedup) checkStub(await session.call('file_read', input), rel, d.startLine, d.endLine, total)
    if (total === 0 || d.endLine === total) {
      // Another request that delivers the same range (a larger limit on the last page) is a stub too.
      if (dedup && total > 0) checkStub(await session.call('file_read', { path: rel, offset: d.startLine, limit: (limit ?? 2000) + 7 }), rel, d.startLine, d.endLine, total)
      break
    }
    offset = d.endLine + 1
    expect(i, 'pagination must end').toBeLessThan(total + 1)
  }
  return got
}

describe('pagination: pages concatenated equal the file', () => {
  let dir: string
  const kits = new Map<string, Toolkit>()
  /** One toolkit per (style, line length limit), all on one workspace. */
  const kit = (style: Style, maxChars: number) => {
    const key = `${style}/${maxChars}`
    let tk = kits.get(key)
    if (!tk) {
      const limits: ToolkitOptions['limits'] = { readTokens: NO_TOKEN_GATE, ...(maxChars === DEFAULT_LINE_CHARS ? {} : { readLineChars: maxChars }) }
      // revka counts every call against 20 an hour; the budget is not what is tested here.
      tk = createToolkit(style === 'colon' ? { workspace: dir, preset: 'revka', policy: { actionsPerHour: null }, limits } : { workspace: dir, limits })
      kits.set(key, tk)
    }
    return tk
  }

  beforeAll(() => {
    dir = tempDir('fsgate-prop-page-')
  })

  const run = async (file: TextFile, style: Style, maxChars: number, limits: Array<number | undefined>, first: undefined | 0 | 1, dedup: boolean) => {
    const rel = fresh('page')
    put(dir, rel, bytesOf(file))
    const session = kit(style, maxChars).createSession({ dedup })
    return { got: await paginate(session, rel, file, style, maxChars, limits, first, dedup), expected: fileLines(file.text) }
  }

  it(
    'with limits.readLineChars raised, the pages\' lines are exactly the file\'s lines (cat -n and N: text, dedup off and on)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          textFileArb({ longLines: longLineArb(DEFAULT_LINE_CHARS) }),
          fc.constantFrom<Style>('cat-n', 'colon'),
          limitsArb,
          firstOffsetArb,
          fc.boolean(),
          async (file, style, limits, first, dedup) => {
            const { got, expected } = await run(file, style, NO_CUT, limits, first, dedup)
            expect(got).toEqual(expected)
          },
        ),
        params(1),
      )
    },
    timeoutFor(1, 40),
  )

  it(
    'with the default readLineChars (2000), long lines show the cut marker and are counted in data.cutLines',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          textFileArb({ maxLines: 25, longLines: longLineArb(DEFAULT_LINE_CHARS) }),
          fc.constantFrom<Style>('cat-n', 'colon'),
          limitsArb,
          firstOffsetArb,
          fc.boolean(),
          async (file, style, limits, first, dedup) => {
            const { got, expected } = await run(file, style, DEFAULT_LINE_CHARS, limits, first, dedup)
            expect(got).toEqual(expected.map((l) => shownLine(l, DEFAULT_LINE_CHARS)))
          },
        ),
        params(1),
      )
    },
    timeoutFor(1, 40),
  )

  it(
    'with a tiny readLineChars (7), nearly every line is cut and the pages still line up',
    async () => {
      await fc.assert(
        fc.asyncProperty(textFileArb({ maxLines: 30 }), fc.constantFrom<Style>('cat-n', 'colon'), limitsArb, firstOffsetArb, fc.boolean(), async (file, style, limits, first, dedup) => {
          const { got, expected } = await run(file, style, 7, limits, first, dedup)
          expect(got).toEqual(expected.map((l) => shownLine(l, 7)))
        }),
        params(0.5),
      )
    },
    timeoutFor(0.5, 30),
  )
})

describe('ranged reads of a large file (the line index, SPEC §3.1)', () => {
  let dir: string
  beforeAll(() => {
    dir = tempDir('fsgate-prop-big-')
  })

  /** A file of 4.5 MiB and more (UTF-8 ones are indexed from 4 MiB) built from a few random lines. */
  const bigArb = fc.record({
    units: fc.array(lineArb, { minLength: 1, maxLength: 6 }),
    eols: fc.constantFrom(['\n'], ['\r\n'], ['\n', '\r\n', '\n']),
    final: fc.boolean(),
    encoding: fc.constantFrom<Encoding>('utf-8', 'utf-8', 'utf-8-bom', 'utf-16le'),
    reads: fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 2500 })), { minLength: 4, maxLength: 10 }),
  })

  it(
    'pages read at random offsets equal the model\'s lines, also across the index\'s 1 MiB chunks and at the last line',
    async () => {
      const tk = createToolkit({ workspace: dir, limits: { readTokens: NO_TOKEN_GATE, readLineChars: NO_CUT } })
      await fc.assert(
        fc.asyncProperty(bigArb, async ({ units, eols, final, encoding, reads }) => {
          const lines: string[] = []
          let bytes = 0
          for (let i = 0; bytes < 4.5 * 1024 * 1024; i++) {
            const line = `${units[i % units.length]} ${i}`
            lines.push(line)
            bytes += Buffer.byteLength(line) + 2
          }
          let text = joinLines(lines, eols, final)
          // A leading U+FEFF in a file without a BOM would be its BOM: that file is another case.
          if (encoding === 'utf-8' && text.startsWith('\uFEFF')) text = `x${text}`
          const file: TextFile = { text, encoding }
          fc.pre(sniffsAsText(bytesOf(file)))
          const expected = fileLines(file.text)
          const rel = fresh('big')
          put(dir, rel, bytesOf(file))
          const session = tk.createSession({ dedup: false })
          const total = expected.length
          // The lines that hold each MiB boundary of the bytes (where the index has an entry).
          const straddling: number[] = []
          let pos = encoding === 'utf-8-bom' ? 3 : encoding === 'utf-16le' ? 2 : 0
          const unit = encoding === 'utf-16le' ? 2 : 1
          let line = 1
          for (const raw of file.text.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
            const next = pos + (unit === 2 ? raw.length * 2 : Buffer.byteLength(raw))
            if (Math.floor(next / 2 ** 20) > Math.floor(pos / 2 ** 20)) straddling.push(line)
            pos = next
            line++
          }
          const pages: Array<[number, number]> = [
            ...reads.map(([at, limit]) => [Math.min(total, 1 + Math.floor(at * total)), limit] as [number, number]),
            ...straddling.flatMap((b) => [[Math.max(1, b - 1), 3], [b, 1], [Math.min(total, b + 1), 2]] as Array<[number, number]>),
            [1, 1],
            [total, 3],
          ]
          for (const [offset, limit] of pages) {
            const r = await session.call('file_read', { path: rel, offset, limit })
            checkPage(r, rel, file, expected, 'cat-n', NO_CUT, offset, limit)
          }
        }),
        params(0.08),
      )
    },
    timeoutFor(0.08, 2000),
  )
})

describe('pagination under the token gate', () => {
  let dir: string
  beforeAll(() => {
    dir = tempDir('fsgate-prop-tokens-')
  })

  /** The host counter of one variant: one token per code point, so every expectation is exact. */
  const perCodePoint = (t: string) => codePoints(t).length

  /**
   * Pages through `rel` under a token limit: a page over it is TOKEN_LIMIT, whose
   * suggested limit must fit (and one more line must not); a line that alone is over
   * the limit (no suggested limit) is skipped. Returns the lines delivered and skipped.
   */
  async function paginateGated(session: Session, rel: string, file: TextFile, max: number, limits: number[], exact: boolean) {
    const expected = fileLines(file.text)
    const total = expected.length
    const got: string[] = []
    const skipped: number[] = []
    let offset = 1
    for (let i = 0; total > 0 && offset <= total; i++) {
      expect(i, 'pagination must end').toBeLessThan(4 * total + 4)
      const limit = limits[i % limits.length]
      const pageLen = Math.min(limit, total - offset + 1)
      const page = expected.slice(offset - 1, offset - 1 + pageLen).map((l, k) => prefix('cat-n', offset + k) + shownLine(l, DEFAULT_LINE_CHARS))
      const count = (k: number) => perCodePoint(page.slice(0, k).join('\n'))
      const r = await session.call('file_read', { path: rel, offset, limit })
      if (exact) expect(r.isError, `page ${offset}+${limit}: ${count(pageLen)} tokens, limit ${max}`).toBe(count(pageLen) > max)
      if (!r.isError) {
        got.push(...checkPage(r, rel, file, expected, 'cat-n', DEFAULT_LINE_CHARS, offset, limit))
        offset += pageLen
        continue
      }
      const text = fails(r, 'TOKEN_LIMIT')
      const d = r.data as { tokens: number | null; maxTokens: number; totalLines: number; suggestedLimit: number | null }
      // SPEC §3.1: about 100–300 bytes, saying how many tokens, how many lines, and a limit that fits.
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(400)
      expect(text).toContain(group(total))
      expect(text).toContain(group(max))
      expect(d.maxTokens).toBe(max)
      expect(d.totalLines).toBe(total)
      const k = d.suggestedLimit
      if (exact) {
        let fit = 0
        while (fit < pageLen && count(fit + 1) <= max) fit++
        expect(k).toBe(fit > 0 ? fit : null)
        expect(d.tokens).toBe(count(pageLen))
      }
      if (k === null) {
        expect(text).not.toMatch(/limit=\d/)
        // Not even its first line fits: that line alone is over the limit too.
        const one = await session.call('file_read', { path: rel, offset, limit: 1 })
        expect(fails(one, 'TOKEN_LIMIT')).toBeTruthy()
        expect((one.data as { suggestedLimit: unknown }).suggestedLimit).toBeNull()
        skipped.push(offset)
        offset += 1
        continue
      }
      expect(k).toBeGreaterThanOrEqual(1)
      expect(k).toBeLessThan(pageLen)
      expect(text).toContain(`offset=${offset} and limit=${k}`)
      // The suggested limit is the most lines that fit: one more line does not.
      const over = await session.call('file_read', { path: rel, offset, limit: k + 1 })
      fails(over, 'TOKEN_LIMIT')
      const fit = await session.call('file_read', { path: rel, offset, limit: k })
      got.push(...checkPage(fit, rel, file, expected, 'cat-n', DEFAULT_LINE_CHARS, offset, k))
      offset += k
    }
    return { got, skipped, expected }
  }

  const gatedFile = textFileArb({ maxLines: 30, longLines: longLineArb(60) })
  const gatedLimits = fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 })

  it(
    'built-in tokenizer: TOKEN_LIMIT suggests the largest limit that fits, and paging with it still covers the file',
    async () => {
      const max = 150
      const tk = createToolkit({ workspace: dir, limits: { readTokens: max } })
      await fc.assert(
        fc.asyncProperty(gatedFile, gatedLimits, async (file, limits) => {
          const rel = fresh('tok')
          put(dir, rel, bytesOf(file))
          const { got, skipped, expected } = await paginateGated(tk.createSession({ dedup: false }), rel, file, max, limits, false)
          const shown = expected.map((l) => shownLine(l, DEFAULT_LINE_CHARS))
          expect(got).toEqual(shown.filter((_, i) => !skipped.includes(i + 1)))
        }),
        params(0.5),
      )
    },
    timeoutFor(0.5, 60),
  )

  it(
    'host countTokens (one per code point): TOKEN_LIMIT exactly when the page is over, with the exact count and fit',
    async () => {
      const max = 90
      const tk = createToolkit({ workspace: dir, limits: { readTokens: max }, countTokens: perCodePoint })
      await fc.assert(
        fc.asyncProperty(gatedFile, gatedLimits, async (file, limits) => {
          const rel = fresh('host')
          put(dir, rel, bytesOf(file))
          const { got, skipped, expected } = await paginateGated(tk.createSession({ dedup: false }), rel, file, max, limits, true)
          const shown = expected.map((l) => shownLine(l, DEFAULT_LINE_CHARS))
          expect(got).toEqual(shown.filter((_, i) => !skipped.includes(i + 1)))
        }),
        params(0.5),
      )
    },
    timeoutFor(0.5, 60),
  )
})

// ---------------------------------------------------------------------------------------
// Edit inverse

describe('edit followed by its inverse restores the bytes', () => {
  let dir: string
  let tk: Toolkit
  beforeAll(() => {
    dir = tempDir('fsgate-prop-edit-')
    // claude-code: read-before-write on, no consent gate, no budget.
    tk = createToolkit({ workspace: dir, preset: 'claude-code', limits: { readTokens: NO_TOKEN_GATE, readLineChars: NO_CUT } })
  })

  const disk = (rel: string) => fs.readFileSync(path.join(dir, rel))

  /** Writes the file, reads it whole with Read (the contract), and returns a session. */
  async function prepare(rel: string, bytes: Buffer): Promise<Session> {
    put(dir, rel, bytes)
    const session = tk.createSession()
    ok(await session.call('Read', { file_path: rel }))
    return session
  }

  const Edit = (s: Session, rel: string, old_string: string, new_string: string, replace_all?: boolean) =>
    s.call('Edit', { file_path: rel, old_string, new_string, ...(replace_all === undefined ? {} : { replace_all }) })

  /** A span of `text` (start, end in UTF-16 units) from two random numbers, never splitting a surrogate pair. */
  const spanOf = (text: string, a: number, b: number): [number, number] => {
    const low = (i: number) => i > 0 && i < text.length && /[\uDC00-\uDFFF]/.test(text[i]) && /[\uD800-\uDBFF]/.test(text[i - 1])
    let s = a % (text.length + 1)
    if (low(s)) s--
    let e = Math.min(text.length, s + 1 + b)
    if (low(e)) e++
    return [s, e]
  }

  /** new_string: fresh text, or made from old_string or the file, so collisions and overlaps happen. */
  const replacementArb = (eol: string) =>
    fc.tuple(fc.constantFrom('fresh', 'wrap', 'shrink', 'echo', 'grow'), editTextArb(eol), fc.nat(), fc.nat({ max: 12 }))

  const makeNew = ([kind, fresh, a, b]: [string, string, number, number], old: string, text: string): string => {
    switch (kind) {
      case 'wrap': {
        const cps = codePoints(fresh)
        return cps.slice(0, 2).join('') + old + cps.slice(2).join('')
      }
      case 'shrink':
        return codePoints(old).slice(0, -1).join('')
      case 'echo': {
        const [s, e] = spanOf(text, a, b)
        return text.slice(s, e)
      }
      case 'grow':
        return old + (codePoints(old)[0] ?? '')
      default:
        return fresh
    }
  }

  /**
   * The precondition of the single-replacement inverse, on the decoded text T, the span
   * [s, e) of old_string and new_string (SPEC §3.4):
   * 1. old and new are non-empty and differ; old occurs exactly once in T and new exactly
   *    once in T1 = T[..s] + new + T[e..] (overlapping occurrences counted), so both edits
   *    match on the exact rung (no line-ending, quote, tag or whitespace folding is needed);
   * 2. neither edit reshapes its new_string (`insertedAsIs`: no trailing whitespace outside
   *    .md/.mdx, line breaks already in the text's style, the final-newline state kept, no
   *    match starting inside a CRLF);
   * 3. T1 is still text to the sniffer (no PDF or image signature at its start) and, in a
   *    UTF-8 file without a BOM, does not start with U+FEFF (that would make it a BOM file).
   */
  function inverseDefined(text: string, s: number, e: number, nw: string, markdown: boolean, encoding: Encoding): string | null {
    const old = text.slice(s, e)
    if (old === '' || nw === '' || old === nw) return null
    if (countOverlapping(text, old) !== 1) return null
    const t1 = text.slice(0, s) + nw + text.slice(e)
    if (countOverlapping(t1, nw) !== 1) return null
    if (!insertedAsIs(text, [[s, e]], nw, markdown) || !insertedAsIs(t1, [[s, s + nw.length]], old, markdown)) return null
    if (!sniffsAsText(encode(t1, encoding)) || (encoding === 'utf-8' && t1.startsWith('\uFEFF'))) return null
    return t1
  }

  const singleCase = fc
    .record({ eol: fc.constantFrom('\n', '\r\n'), encoding: fc.constantFrom(...ENCODINGS), markdown: fc.boolean(), final: fc.boolean() })
    .chain((c) =>
      fc.record({
        c: fc.constant(c),
        lines: fc.array(editTextArb(c.eol), { minLength: 1, maxLength: 6 }),
        a: fc.nat(),
        b: fc.nat({ max: 30 }),
        repl: replacementArb(c.eol),
      }),
    )

  it(
    'Edit old→new then new→old gives the original bytes back, and session.undo twice does too (UTF-8, BOM, UTF-16, CRLF, .md)',
    async () => {
      await fc.assert(
        fc.asyncProperty(singleCase, async ({ c, lines, a, b, repl }) => {
          let text = lines.join(c.eol) + (c.final ? c.eol : '')
          if (c.encoding === 'utf-8' && text.startsWith('\uFEFF')) text = `x${text}`
          const original = encode(text, c.encoding)
          fc.pre(sniffsAsText(original))
          const [s, e] = spanOf(text, a, b)
          const old = text.slice(s, e)
          const nw = makeNew(repl as [string, string, number, number], old, text)
          const t1 = inverseDefined(text, s, e, nw, c.markdown, c.encoding)
          fc.pre(t1 !== null)
          const rel = fresh('edit', c.markdown ? 'md' : 'txt')
          const session = await prepare(rel, original)

          const r1 = await Edit(session, rel, old, nw)
          ok(r1)
          expect(r1.data).toMatchObject({ matchedBy: 'exact', replacements: 1, encoding: c.encoding })
          expect(disk(rel).equals(encode(t1 as string, c.encoding)), 'after old→new').toBe(true)
          // data.diff is a unified diff that turns the old text into the new one.
          expect(applyUnifiedDiff(text, (r1.data as { diff: string }).diff)).toBe(diffView(t1 as string))

          const r2 = await Edit(session, rel, nw, old)
          ok(r2)
          expect(r2.data).toMatchObject({ matchedBy: 'exact', replacements: 1 })
          expect(applyUnifiedDiff(t1 as string, (r2.data as { diff: string }).diff)).toBe(diffView(text))
          expect(disk(rel).equals(original), 'after new→old').toBe(true)

          // undo puts back what each edit replaced, latest first.
          expect(await session.undo(rel)).toMatchObject({ restored: 'previous' })
          expect(disk(rel).equals(encode(t1 as string, c.encoding)), 'after the first undo').toBe(true)
          expect(await session.undo(rel)).toMatchObject({ restored: 'previous' })
          expect(disk(rel).equals(original), 'after the second undo').toBe(true)
          await expect(session.undo(rel)).rejects.toMatchObject({ code: 'NOT_FOUND' })
        }),
        params(1),
      )
    },
    timeoutFor(1, 60),
  )

  const lfOnCrlf = fc
    .record({ encoding: fc.constantFrom(...ENCODINGS), markdown: fc.boolean(), final: fc.boolean() })
    .chain((c) =>
      fc.record({
        c: fc.constant(c),
        lines: fc.array(editTextArb('\n').map((t) => t.replace(/[\r\n]/g, '')), { minLength: 1, maxLength: 6 }),
        a: fc.nat(),
        b: fc.nat({ max: 30 }),
        repl: replacementArb('\n'),
      }),
    )

  it(
    'on a CRLF file, edits with LF strings (as a model sends them) invert too: the CRLF bytes come back',
    async () => {
      await fc.assert(
        fc.asyncProperty(lfOnCrlf, async ({ c, lines, a, b, repl }) => {
          // The LF form the model sees; the file holds it with CRLF breaks only.
          let lf = lines.join('\n') + (c.final ? '\n' : '')
          if (c.encoding === 'utf-8' && lf.startsWith('\uFEFF')) lf = `x${lf}`
          const crlf = (t: string) => t.replace(/\n/g, '\r\n')
          const original = encode(crlf(lf), c.encoding)
          fc.pre(sniffsAsText(original))
          const [s, e] = spanOf(lf, a, b)
          const old = lf.slice(s, e)
          const nw = makeNew(repl as [string, string, number, number], old, lf).replace(/\r/g, '')
          // Precondition: that of the LF text (above), and: old and new have no '\r' and do not
          // start with U+FEFF (the line-endings rung drops a leading BOM of old_string); a
          // string with a line break goes into a text that keeps one (else it is not CRLF).
          const l1 = inverseDefined(lf, s, e, nw, c.markdown, 'utf-8')
          fc.pre(l1 !== null && !old.startsWith('\uFEFF') && !nw.startsWith('\uFEFF'))
          fc.pre(!nw.includes('\n') || lf.includes('\n'))
          fc.pre(!old.includes('\n') || (l1 as string).includes('\n'))
          fc.pre(sniffsAsText(encode(crlf(l1 as string), c.encoding)))
          const rel = fresh('crlf', c.markdown ? 'md' : 'txt')
          const session = await prepare(rel, original)

          const r1 = await Edit(session, rel, old, nw)
          ok(r1)
          // old without '\n', or starting with one (found after the '\r', which it takes along), matches exactly.
          expect(r1.data).toMatchObject({ matchedBy: crlf(lf).includes(old) ? 'exact' : 'line-endings', replacements: 1 })
          expect(disk(rel).equals(encode(crlf(l1 as string), c.encoding)), 'after old→new').toBe(true)
          ok(await Edit(session, rel, nw, old))
          expect(disk(rel).equals(original), 'after new→old').toBe(true)
        }),
        params(0.7),
      )
    },
    timeoutFor(0.7, 60),
  )

  it(
    'an old_string typed with straight quotes matches the curly ones on the quotes rung; only the span changes, and new_string\'s quotes take curly form only of the kinds the span had',
    async () => {
      await fc.assert(
        fc.asyncProperty(singleCase, async ({ c, lines, a, b, repl }) => {
          let text = lines.join(c.eol) + (c.final ? c.eol : '')
          if (c.encoding === 'utf-8' && text.startsWith('\uFEFF')) text = `x${text}`
          const original = encode(text, c.encoding)
          const [s, e] = spanOf(text, a, b)
          const span = text.slice(s, e)
          const old = foldQuotes(span)
          const nw = makeNew(repl as [string, string, number, number], old, text)
          // Precondition: the span has a curly quote; old_string (the span with its curly
          // quotes straightened) is found on no rung before the quotes rung, and exactly once
          // on it; it does not start with U+FEFF (the line-endings rung drops that); new_string
          // is non-empty, differs, and is not reshaped otherwise (`insertedAsIs`).
          fc.pre(sniffsAsText(original) && old !== span && nw !== '' && nw !== old && !old.startsWith('\uFEFF'))
          fc.pre(countOverlapping(text, old) === 0 && countOverlapping(foldCrlf(text), foldCrlf(old)) === 0)
          fc.pre(countOverlapping(foldQuotes(foldCrlf(text)), foldQuotes(foldCrlf(old))) === 1)
          fc.pre(insertedAsIs(text, [[s, e]], nw, c.markdown))
          const rel = fresh('quotes', c.markdown ? 'md' : 'txt')
          const session = await prepare(rel, original)
          const r = await Edit(session, rel, old, nw)
          const doubles = /[\u201C-\u201F]/.test(span)
          const singles = /[\u2018-\u201B]/.test(span)
          /** Whether `written` is `given` with only straight quotes of the span's curly kinds curled. */
          const curledFrom = (written: string, given: string) => {
            const [w, g] = [codePoints(written), codePoints(given)]
            return w.length === g.length && g.every((ch, i) => w[i] === ch || (ch === '"' && doubles && '“”'.includes(w[i])) || (ch === "'" && singles && '‘’'.includes(w[i])))
          }
          if (r.error?.code === 'NO_CHANGE') {
            // Only when new_string, in the span's quote style, is the span itself.
            expect(curledFrom(span, nw), `NO_CHANGE, but ${JSON.stringify(nw)} differs from the span ${JSON.stringify(span)}`).toBe(true)
            return
          }
          const after = disk(rel)
          fc.pre(sniffsAsText(after))
          ok(r)
          expect(r.data).toMatchObject({ matchedBy: 'quotes', replacements: 1 })
          const t1 = decode(after, c.encoding)
          expect(encode(t1, c.encoding).equals(after), 'the encoding and its BOM are kept').toBe(true)
          // Outside the span nothing changed.
          expect(t1.slice(0, s)).toBe(text.slice(0, s))
          const tail = text.slice(e)
          expect(t1.endsWith(tail)).toBe(true)
          const written = t1.slice(s, t1.length - tail.length)
          expect(curledFrom(written, nw), `new_string ${JSON.stringify(nw)} was written as ${JSON.stringify(written)}`).toBe(true)
        }),
        params(0.7),
      )
    },
    timeoutFor(0.7, 60),
  )

  it(
    'edits sent at once by one session all apply, one after another under the path lock, with no re-read between them',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 2, max: 8 }), fc.constantFrom(...ENCODINGS), fc.constantFrom('\n', '\r\n'), async (k, encoding, eol) => {
          const text = Array.from({ length: k }, (_, i) => `<${i}> ${'é'.repeat(i)}`).join(eol) + eol
          const rel = fresh('concurrent')
          const session = await prepare(rel, encode(text, encoding))
          const results = await Promise.all(Array.from({ length: k }, (_, i) => Edit(session, rel, `<${i}>`, `[${i}]`)))
          for (const r of results) ok(r)
          expect(disk(rel).equals(encode(text.replace(/<(\d+)>/g, '[$1]'), encoding))).toBe(true)
          // Undone in reverse, one by one, back to the original.
          for (let i = 0; i < k; i++) await session.undo(rel)
          expect(disk(rel).equals(encode(text, encoding))).toBe(true)
        }),
        params(0.3),
      )
    },
    timeoutFor(0.3, 100),
  )

  const allCase = fc
    .record({ eol: fc.constantFrom('\n', '\r\n'), encoding: fc.constantFrom(...ENCODINGS), markdown: fc.boolean() })
    .chain((c) =>
      fc.record({
        c: fc.constant(c),
        old: editTextArb(c.eol).filter((t) => t !== ''),
        parts: fc.array(editTextArb(c.eol), { minLength: 2, maxLength: 5 }),
        nw: editTextArb(c.eol).filter((t) => t !== ''),
      }),
    )

  it(
    'replace_all old→new then new→old gives the original bytes back when new does not occur in the original',
    async () => {
      await fc.assert(
        fc.asyncProperty(allCase, async ({ c, old, parts, nw }) => {
          let text = parts.join(old)
          if (c.encoding === 'utf-8' && text.startsWith('\uFEFF')) text = `x${text}`
          const original = encode(text, c.encoding)
          // Precondition: old occurs (k ≥ 1 leftmost non-overlapping times), new does not occur
          // in T, the k inserted copies of new are exactly new's occurrences in T1 (none formed
          // across a boundary), and no replacement is reshaped (`insertedAsIs`, both ways).
          fc.pre(old !== nw && sniffsAsText(original) && !text.includes(nw))
          const { out: t1, oldSpans, newSpans } = replaceAll(text, old, nw)
          fc.pre(oldSpans.length >= 1)
          fc.pre(JSON.stringify(occurrences(t1, nw)) === JSON.stringify(newSpans.map(([s]) => s)))
          fc.pre(insertedAsIs(text, oldSpans, nw, c.markdown) && insertedAsIs(t1, newSpans, old, c.markdown))
          fc.pre(sniffsAsText(encode(t1, c.encoding)) && !(c.encoding === 'utf-8' && t1.startsWith('\uFEFF')))
          const rel = fresh('all', c.markdown ? 'md' : 'txt')
          const session = await prepare(rel, original)

          const r1 = await Edit(session, rel, old, nw, true)
          ok(r1)
          expect(r1.data).toMatchObject({ matchedBy: 'exact', replacements: oldSpans.length })
          expect(disk(rel).equals(encode(t1, c.encoding)), 'after old→new').toBe(true)
          const r2 = await Edit(session, rel, nw, old, true)
          ok(r2)
          expect(r2.data).toMatchObject({ replacements: oldSpans.length })
          expect(disk(rel).equals(original), 'after new→old').toBe(true)
        }),
        params(0.7),
      )
    },
    timeoutFor(0.7, 60),
  )
})

describe('the read-before-write contract (SPEC §3.2)', () => {
  let dir: string
  let tk: Toolkit
  beforeAll(() => {
    dir = tempDir('fsgate-prop-contract-')
    tk = createToolkit({ workspace: dir, preset: 'claude-code' })
  })

  /** Merged, sorted ranges (what the ledger reports as coverage). */
  const merge = (ranges: Array<[number, number]>) => {
    const out: Array<[number, number]> = []
    for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0])) {
      const last = out[out.length - 1]
      if (last && s <= last[1] + 1) last[1] = Math.max(last[1], e)
      else out.push([s, e])
    }
    return out
  }

  it(
    'ranged reads accumulate: Edit and Write succeed exactly when the reads cover every line, else NOT_READ or PARTIAL_READ with the coverage',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 30 }),
          fc.constantFrom('\n', '\r\n'),
          fc.boolean(),
          fc.array(fc.tuple(fc.nat({ max: 33 }), fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined })), { maxLength: 6 }),
          fc.constantFrom('Edit', 'Write'),
          async (n, eol, final, reads, tool) => {
            const lines = Array.from({ length: n }, (_, i) => `<${i + 1}>`)
            const rel = fresh('contract')
            put(dir, rel, joinLines(lines, [eol], final))
            const session = tk.createSession()
            const seen: Array<[number, number]> = []
            for (const [offset, limit] of reads) {
              const r = await session.call('Read', { file_path: rel, offset, ...(limit === undefined ? {} : { limit }) })
              const first = Math.max(1, offset)
              if (first > n) {
                fails(r, 'INVALID_INPUT')
                expect(r.data?.field).toBe('offset')
                continue
              }
              ok(r)
              seen.push([first, Math.min(n, first + (limit ?? 2000) - 1)])
            }
            const r =
              tool === 'Edit'
                ? await session.call('Edit', { file_path: rel, old_string: '<1>', new_string: '<one>' })
                : await session.call('Write', { file_path: rel, content: 'replaced\n' })
            const coverage = merge(seen)
            // Sessions share no read state: another session has read nothing of it.
            const other = await tk.createSession().call('Edit', { file_path: rel, old_string: '<1>', new_string: '<one>' })
            expect(fails(other, 'NOT_READ')).toContain(rel)
            if (seen.length === 0) {
              expect(fails(r, 'NOT_READ')).toContain(rel)
              expect(r.error?.errorCode).toBe(2)
            } else if (coverage.length === 1 && coverage[0][0] === 1 && coverage[0][1] === n) {
              ok(r)
              // A read after the change delivers the new content, never a stub of the old.
              const again = await session.call('Read', { file_path: rel })
              expect(ok(again)).toContain(tool === 'Edit' ? '<one>' : 'replaced')
              expect(again.data?.unchanged).toBeUndefined()
            } else {
              fails(r, 'PARTIAL_READ')
              expect(r.error?.errorCode).toBe(2)
              expect(r.data).toMatchObject({ coverage, totalLines: n })
            }
          },
        ),
        params(1),
      )
    },
    timeoutFor(1, 20),
  )
})

// ---------------------------------------------------------------------------------------
// Write, glob

describe('write then read', () => {
  let dir: string
  let tk: Toolkit
  beforeAll(() => {
    dir = tempDir('fsgate-prop-write-')
    tk = createToolkit({ workspace: dir, preset: 'claude-code', limits: { readTokens: NO_TOKEN_GATE, readLineChars: NO_CUT } })
  })

  const contentArb = textFileArb({ maxLines: 20 }).map((f) => f.text.replace(/\0/g, ''))

  it(
    'Write stores the content with LF line endings (CRLF → LF, lone CR kept), in the existing file\'s encoding; Read gives its lines back; undo restores',
    async () => {
      await fc.assert(
        fc.asyncProperty(contentArb, fc.option(textFileArb({ maxLines: 5 }), { nil: undefined }), async (content, existing) => {
          const lf = content.replace(/\r\n/g, '\n')
          const encoding: Encoding = existing?.encoding ?? 'utf-8'
          // Precondition: the stored bytes are text to the sniffer, and (no BOM) do not start with U+FEFF.
          fc.pre(sniffsAsText(encode(lf, encoding)) && !(encoding === 'utf-8' && lf.startsWith('\uFEFF')))
          const rel = fresh('write')
          const session = tk.createSession()
          if (existing) {
            put(dir, rel, bytesOf(existing))
            ok(await session.call('Read', { file_path: rel }))
          }
          const w = await session.call('Write', { file_path: rel, content })
          ok(w)
          expect(w.data).toMatchObject({ created: existing === undefined, encoding, totalLines: fileLines(lf).length })
          const bytes = fs.readFileSync(path.join(dir, rel))
          // An empty content in a file with a BOM may keep the BOM alone.
          const allowed = [encode(lf, encoding), ...(lf === '' ? [Buffer.alloc(0)] : [])]
          expect(
            allowed.some((b) => b.equals(bytes)),
            `stored ${bytes.toString('hex').slice(0, 80)}`,
          ).toBe(true)
          const r = await session.call('Read', { file_path: rel })
          const expected = fileLines(lf)
          if (expected.length === 0) expect(ok(r)).toBe(`(${rel} is empty)`)
          else expect(ok(r).split('\n').map((l, i) => l.slice(prefix('compact', i + 1).length))).toEqual(expected)
          // undo removes a file the write created, or puts back the bytes it replaced.
          expect(await session.undo(rel)).toMatchObject({ restored: existing ? 'previous' : 'removed' })
          if (existing) expect(fs.readFileSync(path.join(dir, rel)).equals(bytesOf(existing))).toBe(true)
          else expect(fs.existsSync(path.join(dir, rel))).toBe(false)
        }),
        params(0.7),
      )
    },
    timeoutFor(0.7, 30),
  )
})

describe('glob', () => {
  let dir: string
  let tk: Toolkit
  beforeAll(() => {
    dir = tempDir('fsgate-prop-glob-')
    tk = createToolkit({ workspace: dir })
  })

  const segment = fc
    .array(fc.constantFrom('a', 'b', 'c', 'é', '😀', '-', '_', '.', '1', ' ', 'Z'), { minLength: 1, maxLength: 4 })
    .map((cs) => cs.join(''))
    .filter((s) => s !== '.' && s !== '..')
  const fileArb = fc.tuple(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '.ts', '.md', '.txt')).map(([segs, ext]) => segs.join('/') + ext)
  /** Files of a tree: no path is a folder of another. */
  const treeArb = fc
    .uniqueArray(fileArb, { minLength: 0, maxLength: 25 })
    .map((files) => files.filter((f) => !files.some((g) => g.startsWith(`${f}/`))))

  /** Component-by-component order (SPEC §3.5, `rg --sort path`): '/' sorts before every other byte. */
  const byPath = (a: string, b: string) => Buffer.compare(Buffer.from(a.replace(/\//g, '\0')), Buffer.from(b.replace(/\//g, '\0')))
  const visible = (f: string) => !f.split('/').some((s) => s.startsWith('.'))

  it(
    'glob_search lists exactly the matching files (hidden ones only with include_hidden), sorted by path, each a file inside the workspace; Glob lists them newest first',
    async () => {
      await fc.assert(
        fc.asyncProperty(treeArb, fc.constantFrom('**/*', '*.ts', '**/*.{ts,md}', '*'), fc.boolean(), async (files, pattern, hidden) => {
          const root = `g${++counter}`
          fs.mkdirSync(path.join(dir, root))
          for (const f of files) put(dir, `${root}/${f}`, f)
          const session = tk.createSession()
          const matches = (f: string) => {
            const base = f.split('/').pop() as string
            if (pattern === '*.ts') return base.endsWith('.ts')
            if (pattern === '**/*.{ts,md}') return base.endsWith('.ts') || base.endsWith('.md')
            return true
          }
          const want = files
            .filter((f) => (hidden || visible(f)) && matches(f))
            .map((f) => `${root}/${f}`)
            .sort(byPath)
          const walk = hidden ? { include_hidden: true } : {}
          const r = await session.call('glob_search', { pattern, path: root, ...walk })
          ok(r)
          const got = (r.data as { files: string[] }).files
          expect(got).toEqual(want)
          expect(r.data).toMatchObject({ numFiles: want.length, truncated: false })
          for (const f of got) {
            const abs = path.resolve(dir, f)
            expect(abs.startsWith(`${dir}${path.sep}`)).toBe(true)
            expect(fs.statSync(abs).isFile()).toBe(true)
          }
          const g = await session.call('Glob', { pattern, path: root, ...walk })
          ok(g)
          const newest = (g.data as { files: string[] }).files
          expect([...newest].sort(byPath)).toEqual(want)
          const mtime = (f: string) => fs.statSync(path.join(dir, f), { bigint: true }).mtimeNs
          for (let i = 1; i < newest.length; i++) {
            const [a, b] = [mtime(newest[i - 1]), mtime(newest[i])]
            expect(a > b || (a === b && byPath(newest[i - 1], newest[i]) < 0), `${newest[i - 1]} before ${newest[i]}`).toBe(true)
          }
        }),
        params(0.5),
      )
    },
    timeoutFor(0.5, 40),
  )
})

describe('content_search', () => {
  let dir: string
  let tk: Toolkit
  beforeAll(() => {
    dir = tempDir('fsgate-prop-grep-')
    tk = createToolkit({ workspace: dir })
  })

  /** Component-by-component order (SPEC §3.5). */
  const byPath = (a: string, b: string) => Buffer.compare(Buffer.from(a.replace(/\//g, '\0')), Buffer.from(b.replace(/\//g, '\0')))
  /** Rust regex syntax for a literal. */
  const literally = (t: string) => t.replace(/[\\.+*?()|[\]{}^$#&\-~]/g, (c) => `\\${c}`)

  const treeArb = fc.array(
    fc.record({ dir: fc.constantFrom('', 'a/', 'b/', 'a/c/'), lines: fc.array(lineArb, { maxLength: 12 }), eol: fc.constantFrom('\n', '\r\n'), final: fc.boolean() }),
    { minLength: 1, maxLength: 6 },
  )

  it(
    'a literal pattern finds exactly the lines that contain it, as path:line:text ordered by path then line, with per-file counts',
    async () => {
      await fc.assert(
        fc.asyncProperty(treeArb, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 5 }), fc.string({ minLength: 1, maxLength: 3 }), async (specs, pickFile, at, len, random) => {
          const root = `s${++counter}`
          const files = specs.map((f, i) => ({ rel: `${root}/${f.dir}f${i}.txt`, text: joinLines(f.lines, [f.eol], f.final) }))
          // Precondition: UTF-8 text without a leading U+FEFF (a BOM) and without NUL (a binary).
          fc.pre(files.every((f) => !f.text.startsWith('\uFEFF') && sniffsAsText(Buffer.from(f.text))))
          // The literal: a piece of some line, or a random string; never a '\r' or '\n'.
          const source = fileLines(files[pickFile % files.length].text).join('')
          const cps = codePoints(source)
          const start = cps.length ? at % cps.length : 0
          const literal = (cps.length ? cps.slice(start, start + len).join('') : random).replace(/[\r\n]/g, '') || random.replace(/[\r\n]/g, '')
          fc.pre(literal !== '')
          for (const f of files) put(dir, f.rel, f.text)
          const expected = files
            .map((f) => ({ rel: f.rel, hits: fileLines(f.text).flatMap((l, i) => (l.includes(literal) ? [`${f.rel}:${i + 1}:${l}`] : [])) }))
            .filter((f) => f.hits.length > 0)
            .sort((x, y) => byPath(x.rel, y.rel))
          const session = tk.createSession()
          const pattern = literally(literal)
          const content = await session.call('content_search', { pattern, path: root, output_mode: 'content' })
          ok(content)
          const lines = expected.flatMap((f) => f.hits)
          if (lines.length === 0) expect(textOf(content)).toMatch(/^No matches found/)
          else expect(textOf(content)).toBe(lines.join('\n'))
          expect(content.data).toMatchObject({ files: expected.map((f) => f.rel), numMatches: lines.length, truncated: false })
          const count = await session.call('content_search', { pattern, path: root, output_mode: 'count' })
          ok(count)
          expect(count.data).toMatchObject({ files: expected.map((f) => f.rel), counts: expected.map((f) => f.hits.length) })
          const names = await session.call('Grep', { pattern, path: root })
          ok(names)
          expect((names.data as { files: string[] }).files).toEqual(expected.map((f) => f.rel))
        }),
        params(0.5),
      )
    },
    timeoutFor(0.5, 40),
  )
})

// ---------------------------------------------------------------------------------------
// Never throws

interface Schema {
  type?: string
  enum?: unknown[]
  const?: unknown
  anyOf?: Schema[]
  items?: Schema
  minItems?: number
  minimum?: number
  exclusiveMinimum?: number
  minLength?: number
  properties?: Record<string, Schema>
  required?: string[]
}

describe('session.call never throws', () => {
  let roDir: string
  let rwDir: string
  /** Toolkits random input may reach: read-only ones (shell only in bwrap, writes refused) and one that writes (paths kept relative). */
  let readOnly: Toolkit[]
  let writer: Toolkit
  let names: string[]
  let schemas: Map<string, Schema>
  const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort()

  beforeAll(() => {
    roDir = tempDir('fsgate-prop-any-ro-')
    rwDir = tempDir('fsgate-prop-any-rw-')
    for (const d of [roDir, rwDir]) {
      put(d, 'a.txt', 'alpha\nbeta\n')
      put(d, 'src/main.ts', 'export function main() {\n  return 1\n}\n')
      put(d, 'empty.txt', '')
      put(d, 'u16.txt', encode('héllo\r\n', 'utf-16le'))
      put(d, 'doc.pdf', '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n')
      put(d, 'bin.dat', Buffer.from([0, 1, 2, 3, 0, 255]))
    }
    // Random input may reach the shell: sandboxed (bwrap: read-only root, writable
    // workspace, no network; refused outright where bwrap is missing), and read_only
    // autonomy runs only low-risk commands.
    const safe = { sandbox: 'bwrap' as const, autonomy: 'read_only' as const }
    const limits = { shellTimeoutSecs: 5 }
    readOnly = [
      createToolkit({ workspace: roDir, policy: safe, limits }),
      createToolkit({ workspace: roDir, preset: 'claude-code', policy: safe, limits }),
      createToolkit({ workspace: roDir, preset: 'revka', policy: safe, limits }),
      createToolkit({ workspace: roDir, preset: 'consent', policy: safe, limits }),
    ]
    // Writes on (supervised: medium and high commands need the host, which says nothing).
    writer = createToolkit({ workspace: rwDir, preset: 'claude-code', policy: { sandbox: 'bwrap', autonomy: 'supervised' }, limits })
    const defs = readOnly[0].definitions({ dialect: 'all' }) as Array<{ name: string; input_schema: Schema }>
    names = [...new Set(defs.map((d) => d.name))]
    schemas = new Map(defs.map((d) => [d.name, d.input_schema]))
  })

  afterAll(() => {
    // Nothing a call did reached Object.prototype.
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoBefore)
  })

  /** Keys that pollute a careless merge, and values that break careless code. */
  const NASTY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'then', 'length', '']
  const weird = fc.oneof(
    fc.constantFrom(null, undefined, NaN, Infinity, -Infinity, -0, 0, -1, 1.5, 2 ** 53, 2 ** 64, -(2 ** 63), 1e308, Number.MAX_VALUE, Number.MIN_VALUE, true, false, '', ' ', '\0', '..', '/', '~', '/etc/passwd', '/dev/zero', '/dev/urandom', '../../..', 'a\0b', '.git/config', '*', '**', '[', '{', '(', '\\', '$(id)', '`id`', '-c', '--exec=x', '\uD800', 'a\uDFFFb.txt', '\uFEFF', 'C:\\x', '\\\\?\\x', 'a/../../b', './a.txt', 'a.txt/', 'src//main.ts', 'status', 'stash', 'literal', 'content', 'x'.repeat(70_000)),
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.jsonValue({ maxDepth: 2 }),
  )
  /** A plausible value for a field of this schema (so many calls get past validation). */
  const plausible = (s: Schema | undefined): fc.Arbitrary<unknown> => {
    if (!s) return weird
    if (s.enum) return fc.constantFrom(...s.enum)
    if (s.const !== undefined) return fc.constant(s.const)
    if (s.anyOf) return fc.oneof(...s.anyOf.map(plausible))
    switch (s.type) {
      case 'string':
        return fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom('a.txt', 'src', 'src/main.ts', 'empty.txt', 'u16.txt', 'doc.pdf', 'bin.dat', 'missing.txt', '.', 'main', '1', '1-2', 'alpha', '\\w+', '*.ts', '**/*', 'echo hi', 'ls', 'pwd', 'cat a.txt', 'HEAD') },
          { weight: 1, arbitrary: fc.string({ minLength: 1 }) },
        )
      case 'integer': {
        const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0)
        return fc.oneof({ weight: 6, arbitrary: fc.integer({ min, max: min + 50 }) }, { weight: 1, arbitrary: fc.constantFrom(2 ** 31, Number.MAX_SAFE_INTEGER) })
      }
      case 'number':
        return fc.double()
      case 'boolean':
        return fc.boolean()
      case 'array':
        return fc.array(plausible(s.items), { minLength: s.minItems ?? 0, maxLength: 3 })
      default:
        return weird
    }
  }
  /**
   * An object with the tool's real field names: the required ones mostly present, each
   * field mostly holding a plausible value, sometimes a wrong one, and now and then a
   * nasty extra key. Many of these pass validation and really run.
   */
  const ABSENT = Symbol('absent')
  const fieldsOf = (name: string): fc.Arbitrary<unknown> => {
    const schema = schemas.get(name) ?? {}
    const props = schema.properties ?? {}
    const required = new Set(schema.required ?? [])
    const fields = Object.keys(props).map((k) =>
      fc
        .oneof(
          { weight: required.has(k) ? 1 : 8, arbitrary: fc.constant<unknown>(ABSENT) },
          { weight: 12, arbitrary: plausible(props[k]) },
          { weight: 1, arbitrary: weird },
        )
        .map((v) => [k, v] as const),
    )
    const extras = fc.array(fc.tuple(fc.constantFrom(...NASTY_KEYS), weird), { maxLength: 2 })
    return fc.tuple(fc.tuple(...fields), fc.oneof({ weight: 5, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extras })).map(([entries, more]) => {
      const o: Record<string, unknown> = {}
      // defineProperty, so '__proto__' becomes an own key as JSON.parse makes it.
      for (const [k, v] of [...entries, ...more]) if (v !== ABSENT) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
      return o
    })
  }
  /** JSON text with pollution attempts, parsed as an adapter would parse a model's tool call. */
  const pollutingJson = fc
    .tuple(fc.constantFrom(...NASTY_KEYS), fc.jsonValue({ maxDepth: 2 }), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }))
    .map(([k, v, rest]) => JSON.parse(JSON.stringify({ ...rest, [k]: { polluted: true, isAdmin: true, value: v } }).replace(`"${k}":`, `"__proto__":{"polluted":true},"${k}":`)))
  const nameArb = () =>
    fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...names) },
      { weight: 1, arbitrary: fc.string() },
      { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'read', 'READ', 'file_read ', 'Read\0', 'shell;', 'mcp__fs__Read') },
    )
  const inputArb = (name: string) =>
    fc.oneof(
      { weight: 10, arbitrary: fieldsOf(name) },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
      { weight: 1, arbitrary: pollutingJson },
      {
        weight: 2,
        arbitrary: fc.anything({
          maxDepth: 2,
          key: fc.oneof(fc.string(), fc.constantFrom(...NASTY_KEYS, ...Object.keys(schemas.get(name)?.properties ?? {}))),
          withBigInt: true,
          withBoxedValues: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withNullPrototype: true,
          withObjectString: true,
          withSparseArray: true,
          withTypedArray: true,
        }),
      },
    )
  const callArb = () =>
    fc.tuple(
      nameArb(),
      fc.nat(),
      fc.boolean(),
      fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.anything({ maxDepth: 1 }) }, { weight: 1, arbitrary: fc.constant({ signal: 'x' }) }),
    ).chain(([name, kit, write, options]) =>
      inputArb(name).map((input) => ({ name, kit, write, input, options })),
    )

  /** Keeps every path the writing toolkit gets relative and below its workspace (a guard for the test itself). */
  const confine = (input: unknown): unknown => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return input
    const o = input as Record<string, unknown>
    for (const key of ['path', 'file_path', 'paths']) {
      if (!Object.hasOwn(o, key)) continue
      const tame = (v: unknown) => (typeof v === 'string' ? `w/${v.replace(/^[/~]+/, '').replace(/\.\./g, '_')}` : v)
      const v = o[key]
      Object.defineProperty(o, key, { value: Array.isArray(v) ? v.map(tame) : tame(v), enumerable: true, writable: true, configurable: true })
    }
    return o
  }

  /** Calls within `ms`, failing if the call rejects or takes longer. */
  async function callInTime(session: Session, name: unknown, input: unknown, options: unknown, ms = 10_000): Promise<ToolResult> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`session.call(${String(name).slice(0, 40)}) took over ${ms} ms`)), ms)
    })
    try {
      return await Promise.race([session.call(name as string, input, options as never), late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** SPEC §2's ToolResult, plus: an error code from ERROR_CODES, INVALID_INPUT names a field, no INTERNAL. */
  function wellFormed(r: ToolResult, what: string): void {
    expectToolResult(r)
    if (!r.isError) return
    expect(r.error?.code, `${what}: ${textOf(r).slice(0, 300)}`).not.toBe('INTERNAL')
    expect(ERROR_CODES as readonly string[]).toContain(r.error?.code)
    if (r.error?.code === 'INVALID_INPUT') expect(r.data && Object.hasOwn(r.data, 'field'), `${what}: INVALID_INPUT without data.field: ${textOf(r)}`).toBe(true)
  }

  it(
    'any name with any input (JSON, fc.anything, real field names holding wrong types, pollution keys) resolves to a well-formed result in time',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(callArb(), { minLength: 1, maxLength: 4 }), async (calls) => {
          const sessions = new Map<Toolkit, Session>()
          for (const c of calls) {
            const tk = c.write ? writer : readOnly[c.kit % readOnly.length]
            const session = sessions.get(tk) ?? tk.createSession()
            sessions.set(tk, session)
            const input = c.write ? confine(c.input) : c.input
            const r = await callInTime(session, c.name, input, c.options ?? undefined)
            wellFormed(r, `${c.name}(${safeShow(input)})`)
            expect(({} as Record<string, unknown>).polluted).toBeUndefined()
            expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
          }
        }),
        params(3),
      )
      expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoBefore)
    },
    timeoutFor(3, 20),
  )

  /** A valid value for a field (the first enum member, a tiny string, the least integer). */
  const valid = (s: Schema): unknown => {
    if (s.enum) return s.enum[0]
    if (s.const !== undefined) return s.const
    if (s.anyOf) return valid(s.anyOf[0])
    switch (s.type) {
      case 'string':
        return 'x'
      case 'integer':
      case 'number':
        return Math.max(1, s.minimum ?? 1)
      case 'boolean':
        return false
      case 'array':
        return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => valid(s.items ?? { type: 'string' }))
      default:
        return 'x'
    }
  }
  /** Whether `v` has a JSON type the field accepts at all. */
  const typeAccepts = (s: Schema, v: unknown): boolean => {
    if (s.anyOf) return s.anyOf.some((t) => typeAccepts(t, v))
    if (s.enum) return s.enum.includes(v)
    if (s.const !== undefined) return v === s.const
    switch (s.type) {
      case 'string':
        return typeof v === 'string'
      case 'integer':
        return Number.isSafeInteger(v)
      case 'number':
        return typeof v === 'number' && Number.isFinite(v)
      case 'boolean':
        return typeof v === 'boolean'
      case 'array':
        return Array.isArray(v)
      default:
        return true
    }
  }
  const wrongArb = fc.oneof(
    fc.constantFrom(null, NaN, Infinity, -Infinity, 1.5, true, 'str', [], {}, [1], { a: 1 }, 2 ** 64, -1e308),
    fc.jsonValue({ maxDepth: 1 }),
  )

  it(
    'a real field holding a wrong type, a missing required field or an unknown field is INVALID_INPUT naming that field',
    async () => {
      const tk = readOnly[0]
      const session = tk.createSession()
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...names), fc.nat(), wrongArb, fc.constantFrom('wrong', 'missing', 'unknown'), fc.string({ minLength: 1 }), async (name, pick, wrong, kind, extra) => {
          const schema = schemas.get(name) as Schema
          const props = schema.properties ?? {}
          const base: Record<string, unknown> = {}
          for (const k of schema.required ?? []) base[k] = valid(props[k])
          let field: string
          if (kind === 'wrong') {
            const keys = Object.keys(props)
            field = keys[pick % keys.length]
            fc.pre(!typeAccepts(props[field], wrong))
            base[field] = wrong
          } else if (kind === 'missing') {
            const req = schema.required ?? []
            fc.pre(req.length > 0)
            field = req[pick % req.length]
            delete base[field]
          } else {
            fc.pre(!Object.hasOwn(props, extra) && extra !== 'otp')
            field = extra
            Object.defineProperty(base, extra, { value: wrong, enumerable: true, writable: true, configurable: true })
          }
          const r = await session.call(name, base)
          const text = fails(r, 'INVALID_INPUT')
          expect(r.data?.field, `${name} ${kind} ${field}: ${text}`).toBe(field)
          expect(text).toContain(field)
          // A missing field is "required"; a missing enum field lists its options.
          if (kind === 'missing') expect(text).toMatch(/is required|expected one of/)
        }),
        params(2),
      )
    },
    timeoutFor(2, 5),
  )

  it('hostile non-JSON inputs (throwing getters and proxies, cycles, symbols, functions) resolve to a result too', async () => {
    const session = readOnly[0].createSession()
    const cyclic: Record<string, unknown> = { path: 'a.txt' }
    cyclic.self = cyclic
    const throwingGetter = Object.defineProperty({}, 'path', {
      enumerable: true,
      get() {
        throw new Error('getter says no')
      },
    })
    const trap = () => {
      throw new Error('proxy says no')
    }
    const proxy = new Proxy({}, { get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, has: trap, getPrototypeOf: trap })
    const inputs: Array<[string, unknown, boolean]> = [
      ['file_read', cyclic, false],
      ['file_read', { path: 'a.txt', [Symbol('s')]: 1 }, false],
      ['file_read', () => 1, false],
      ['file_read', Symbol('x'), false],
      ['file_read', 10n, false],
      ['file_read', { path: { toString: () => 'a.txt' } }, false],
      ['file_read', { path: Object('a.txt') }, false],
      ['glob_search', Object.create({ pattern: '*' }), false],
      // These throw on the first look; INTERNAL is acceptable for them, a rejection is not.
      ['file_read', throwingGetter, true],
      ['file_read', proxy, true],
      [proxy as unknown as string, {}, true],
    ]
    for (const [name, input, mayBeInternal] of inputs) {
      const r = await callInTime(session, name, input, undefined)
      expectToolResult(r)
      if (!mayBeInternal) wellFormed(r, `${String(typeof name)} ${typeof input}`)
    }
  })

  it('many calls at once, on one session, all resolve', async () => {
    const session = writer.createSession()
    const sample = fc.sample(callArb(), { numRuns: 40, seed: params().seed })
    const results = await Promise.all(sample.map((c) => callInTime(session, c.name, confine(c.input), undefined)))
    for (const [i, r] of results.entries()) wellFormed(r, `${sample[i].name}`)
  })
})

/** A short, never-throwing description of a value for failure messages. */
function safeShow(v: unknown): string {
  try {
    return (JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v)).slice(0, 200)
  } catch {
    return Object.prototype.toString.call(v)
  }
}

// ---------------------------------------------------------------------------------------

describe('regressions found by the property suite', () => {
  // The reader keeps at most 4 × readLineChars bytes of a line (crates/core/src/page.rs,
  // Pager::push) and counts the rest by its non-continuation bytes. When that byte cap
  // falls inside a character, the character is counted nowhere (the cut count is one
  // short) or, when only its continuation bytes are left over, the kept bytes are taken
  // for invalid UTF-8 (Pager::emit): the page of a valid file is marked lossy.
  let dir: string
  beforeAll(() => {
    dir = tempDir('fsgate-prop-found-')
  })

  it('Read counts every cut character when the byte cap splits one: 3,000 × "✓" cut at 2,000 leaves 1,000, not 999', async () => {
    put(dir, 'checks.txt', `${'✓'.repeat(3000)}\n`)
    const r = await createToolkit({ workspace: dir }).createSession().call('file_read', { path: 'checks.txt' })
    expect(ok(r).slice(7 + 2000)).toBe(' … [line cut: 1,000 more characters]')
    expect(r.data).toMatchObject({ cutLines: 1, lossy: false })
  })

  it('Read does not mark a valid UTF-8 line lossy when the byte cap splits its last character ("aa✓" at readLineChars 1)', async () => {
    put(dir, 'split.txt', 'aa✓\n')
    const r = await createToolkit({ workspace: dir, limits: { readLineChars: 1 } }).createSession().call('file_read', { path: 'split.txt' })
    expect(ok(r)).toBe('     1\ta … [line cut: 2 more characters]')
    expect(r.data).toMatchObject({ cutLines: 1, lossy: false })
  })

  it('…nor at the default limit: "a" + 2,667 × "✓" (8,002 bytes) reads with no U+FFFD note', async () => {
    put(dir, 'split-default.txt', `a${'✓'.repeat(2667)}\n`)
    const r = await createToolkit({ workspace: dir }).createSession().call('file_read', { path: 'split-default.txt' })
    expect(ok(r).slice(7 + 2000)).toBe(' … [line cut: 668 more characters]')
    expect(r.data).toMatchObject({ cutLines: 1, lossy: false })
  })

  // Found by the never-throws property's hostile inputs: zod reads a schema field through
  // the prototype chain (ts/tool.ts, defineTool → form.schema.safeParse), so a field the
  // caller never sent is used. With Object.prototype polluted anywhere in the host process
  // (say `Object.prototype.path = '…'` or `.command = '…'`), every call without that field
  // would read that path or run that command. Not in SPEC; a hardening gap (issue 8).
  it('session.call takes only the input\'s own fields: a path inherited from its prototype is not read', async () => {
    put(dir, 'inherited.txt', 'not sent by the model\n')
    const r = await createToolkit({ workspace: dir }).createSession().call('file_read', Object.create({ path: 'inherited.txt' }))
    expect(fails(r, 'INVALID_INPUT')).toContain('path: is required')
    expect(r.data?.field).toBe('path')
  })
})
