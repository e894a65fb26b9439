/**
 * pdf_read over a corpus of real and hostile PDFs (../shared/corpus/pdf beside the
 * repository, or $FSGATE_PDF_CORPUS): py-pdf's sample files (real documents, with
 * files.json giving their page counts) and PDFium's test files (many deliberately
 * malformed).
 *
 * - Robustness: every file finishes within HANG_MS with success or a clean error
 *   (INVALID_PDF, TIMEOUT) — never INTERNAL, never a throw, never a hang — and its output
 *   has the contract's shape; Read of page 1 works on every file pdf_read could open.
 * - Page counts: pdf_read's pageCount equals files.json's for every unencrypted file.
 * - Text, differentially: on every file where pdftotext (poppler-utils) finds at least
 *   MIN_WORDS words, the word-level F1 of pdf_read's text against pdftotext's (see
 *   benches/pdf-words.mjs) is at least 0.9 on SHARE_FLOOR of the files, and at least 0.95
 *   on a handful of clean documents. Without pdftotext this part fails; it never skips.
 *
 * The whole corpus is read once, in beforeAll; the tests check what that pass recorded.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { beforeAll, describe, expect, it } from 'vitest'

import {
  corpusFiles,
  f1,
  findCorpus,
  MIN_WORDS,
  pdftotext,
  pdftotextVersion,
  pyPdfManifest,
  type Score,
  scoreAgainstPdftotext,
  splitPages,
  withoutNote,
  wordDiff,
  words,
} from '../benches/pdf-words.mjs'
import { createToolkit, type Toolkit, type ToolResult } from '../ts/index.js'
import { expectToolResult, textOf } from './helpers.js'
import { needs } from './peers.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CORPUS = findCorpus(ROOT)
if (!CORPUS) {
  console.warn(
    `pdf-corpus.test.ts: skipped, the PDF corpus is not at ${path.resolve(ROOT, '..', 'shared', 'corpus', 'pdf')} ` +
      '(folders py-pdf-sample-files/ and pdfium-testing/); set FSGATE_PDF_CORPUS to its folder to run these tests.',
  )
}
const PDFTOTEXT = pdftotextVersion()

/** A call that has not finished after this long is a hang. */
const HANG_MS = 10_000
/** The error codes a PDF may end in: damaged or not a PDF, or given up on as hostile. */
const CLEAN_ERRORS = ['INVALID_PDF', 'TIMEOUT']
const NO_TEXT = 'PDF contains no extractable text (may be image-only or encrypted)'
const MAX_CHARS = 200_000
/**
 * The share of text-bearing files that must reach F1 ≥ 0.9 against pdftotext: measured
 * 32 of 35 (91.4%), less one file of slack (31 of 35 is 88.6%). The goal is 95%; the files
 * below 0.9 are listed in the test output (the three left are drawn rotated along a
 * spiral, which pdftotext breaks into fragments; see BENCHMARKS.md, section 10).
 */
const SHARE_FLOOR = 0.88
/** Clean documents whose text must match pdftotext's closely (F1 ≥ 0.95). */
const CLEAN_DOCS = [
  'py-pdf-sample-files/001-trivial_minimal-document.pdf',
  'py-pdf-sample-files/002-trivial-libre-office-writer_002-trivial-libre-office-writer.pdf',
  'py-pdf-sample-files/004-pdflatex-4-pages_pdflatex-4-pages.pdf',
  'py-pdf-sample-files/006-pdflatex-outline_pdflatex-outline.pdf',
  'py-pdf-sample-files/011-google-doc-document_google-doc-document.pdf',
  'py-pdf-sample-files/021-pdfa_crazyones-pdfa.pdf',
  'py-pdf-sample-files/026-latex-multicolumn_multicolumn.pdf',
]

/** What one call did: its result, or that it threw or did not finish. */
type Outcome = { result: ToolResult; ms: number } | { threw: unknown; ms: number } | { hung: true; ms: number }

/** Runs one call with a deadline: the signal aborts at HANG_MS, and 2 s later we stop waiting. */
async function timed(call: (signal: AbortSignal) => Promise<ToolResult>): Promise<Outcome> {
  const t0 = performance.now()
  let timer: NodeJS.Timeout | undefined
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), HANG_MS + 2_000)
  })
  try {
    const r = await Promise.race([call(AbortSignal.timeout(HANG_MS)), hung])
    const ms = performance.now() - t0
    // An abort by our deadline is a hang too: the tool did not give up by itself.
    if (r === 'hung' || (r.isError && r.error?.code === 'ABORTED')) return { hung: true, ms }
    return { result: r, ms }
  } catch (threw) {
    return { threw, ms: performance.now() - t0 }
  } finally {
    clearTimeout(timer)
  }
}

/** What is wrong with an outcome of pdf_read, or null when it is a success or a clean error. */
function fault(o: Outcome): string | null {
  if ('hung' in o) return `did not finish within ${HANG_MS / 1000} s`
  if ('threw' in o) return `threw ${String((o.threw as Error)?.stack ?? o.threw).slice(0, 300)}`
  try {
    expectToolResult(o.result)
  } catch (err) {
    return `not a ToolResult: ${(err as Error).message.slice(0, 300)}`
  }
  const r = o.result
  if (r.isError) return CLEAN_ERRORS.includes(r.error!.code) ? null : `${r.error!.code}: ${textOf(r).slice(0, 300)}`
  return shapeFault(textOf(r), r.data ?? {})
}

/** What is wrong with a successful pdf_read's text and data (the contract's shape), or null. */
function shapeFault(text: string, data: Record<string, unknown>): string | null {
  const { pageCount, chars, truncated, unmapped, warning } = data
  if (!Number.isInteger(pageCount) || (pageCount as number) < 0) return `data.pageCount is ${pageCount}`
  if (warning !== undefined) {
    if (warning !== NO_TEXT || !text.includes(NO_TEXT)) return `unexpected warning ${JSON.stringify(warning)} / text ${JSON.stringify(text.slice(0, 200))}`
    return null
  }
  if (typeof chars !== 'number' || typeof truncated !== 'boolean' || typeof unmapped !== 'number') {
    return `data lacks chars/truncated/unmapped: ${JSON.stringify({ chars, truncated, unmapped })}`
  }
  if (words(text).length === 0) return 'no words and no warning'
  const markers = [...text.matchAll(/^--- Page (\d+) of (\d+) ---$/gm)]
  if (markers[0]?.index !== 0) return `text does not start with a page marker: ${JSON.stringify(text.slice(0, 80))}`
  if (markers.some((m, i) => Number(m[1]) !== i + 1 || Number(m[2]) !== pageCount)) return `page markers out of order or not "of ${pageCount}"`
  if (truncated ? markers.length > (pageCount as number) : markers.length !== pageCount) return `${markers.length} page markers for pageCount ${pageCount}`
  const joined = markers.slice(1).find((m) => text.slice(m.index - 2, m.index) !== '\n\n')
  if (joined) return `page ${joined[1]} is not preceded by a blank line`
  return null
}

/** A one-line account of an outcome, for failure messages. */
function account(o: Outcome | undefined): string {
  if (!o) return 'not run'
  if ('result' in o) return o.result.isError ? `${o.result.error?.code}: ${textOf(o.result).slice(0, 160)}` : 'success'
  return fault(o) as string
}

const fmt = (x: number) => x.toFixed(3)

describe.skipIf(!CORPUS)('pdf_read over the PDF corpus', () => {
  const corpus = CORPUS as string
  const files = CORPUS ? corpusFiles(corpus) : []
  const outcomes = new Map<string, Outcome>()
  let toolkit: Toolkit

  beforeAll(async () => {
    // The corpus folder itself is the workspace: every file is only read.
    toolkit = createToolkit({ workspace: corpus })
    const session = toolkit.createSession({ dedup: false })
    for (const rel of files) outcomes.set(rel, await timed((signal) => session.call('pdf_read', { path: rel, max_chars: MAX_CHARS }, { signal })))
  }, 240_000)

  const success = (rel: string) => {
    const o = outcomes.get(rel)
    return o && 'result' in o && !o.result.isError ? o.result : undefined
  }

  it('finds the corpus', () => {
    expect(files.length, `PDFs under ${corpus}`).toBeGreaterThanOrEqual(300)
  })

  it('finishes every PDF with success or INVALID_PDF/TIMEOUT, in the contract shape', () => {
    const faults = files.flatMap((rel) => {
      const f = fault(outcomes.get(rel)!)
      return f ? [`${rel}: ${f}`] : []
    })
    const tally = new Map<string, number>()
    for (const o of outcomes.values()) {
      const key = 'result' in o ? (o.result.isError ? o.result.error!.code : o.result.data?.warning ? 'no text' : 'text') : 'hung' in o ? 'hung' : 'threw'
      tally.set(key, (tally.get(key) ?? 0) + 1)
    }
    const slowest = [...outcomes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 3)
    console.log(
      `pdf_read over ${files.length} PDFs: ${[...tally].map(([k, n]) => `${k} ${n}`).join(', ')}; ` +
        `slowest: ${slowest.map(([rel, o]) => `${path.basename(rel)} ${o.ms.toFixed(0)} ms`).join(', ')}`,
    )
    expect(faults).toEqual([])
    // The real documents of py-pdf are mostly fine: a reader that refuses them all is broken.
    expect(tally.get('text') ?? 0).toBeGreaterThanOrEqual(40)
  })

  it('reads page 1 with Read (file_read, pages "1") of every PDF pdf_read could open', async () => {
    const session = toolkit.createSession({ dedup: false })
    const faults: string[] = []
    let read = 0
    for (const rel of files) {
      const r = success(rel)
      if (!r || !((r.data?.pageCount as number) >= 1)) continue
      read++
      const o = await timed((signal) => session.call('file_read', { path: rel, pages: '1' }, { signal }))
      if (!('result' in o) || o.result.isError) {
        faults.push(`${rel}: ${account(o)}`)
        continue
      }
      // Page 1 of Read is page 1 of pdf_read: every word of the one is in the other.
      const page1 = r.data?.warning ? '' : (splitPages(withoutNote(textOf(r), r.data))[0]?.text ?? '')
      const score = f1(textOf(o.result), page1)
      if (words(page1).length > 0 && score.recall < 0.99) faults.push(`${rel}: Read's page 1 has ${fmt(score.recall)} of pdf_read's page-1 words`)
    }
    expect(read).toBeGreaterThanOrEqual(40)
    expect(faults).toEqual([])
  })

  it("gives files.json's page count for every unencrypted py-pdf file", () => {
    // 017's catalog points at a page tree (object 172) that is not in the file, and only
    // three objects in it are pages; files.json (and poppler) say four, qpdf finds none.
    // fsgate rebuilds the table and lists the three pages there are.
    const damaged: Record<string, number> = { '017-unreadable-meta-data_unreadablemetadata.pdf': 3 }
    const listed = pyPdfManifest(corpus).filter((m) => m.present && !m.encrypted)
    expect(listed.length).toBeGreaterThanOrEqual(25)
    const wrong = listed.flatMap((m) => {
      const r = success(m.rel)
      if (!r) return [`${m.rel}: not read (${account(outcomes.get(m.rel))})`]
      const expected = damaged[path.basename(m.rel)] ?? m.pages
      return r.data?.pageCount === expected ? [] : [`${m.rel}: pageCount ${r.data?.pageCount}, expected ${expected}`]
    })
    expect(wrong).toEqual([])
  })

  needs({ pdftotext: Boolean(PDFTOTEXT) }, import.meta.url).describe('text, against pdftotext', () => {
    const scores = new Map<string, Score & { pages: string }>()
    /** Files pdf_read refused that pdftotext opens: reported, not failed (many are damaged on purpose). */
    const refused: Array<{ rel: string; code: string; words: number }> = []

    // The differential part needs pdftotext: missing, every test below fails with this
    // message; it is never skipped in silence.
    const needPdftotext = () => {
      if (!PDFTOTEXT) throw new Error('pdftotext (poppler-utils) is not installed or does not run, so pdf_read cannot be compared with it: apt-get install poppler-utils')
    }

    beforeAll(() => {
      if (!PDFTOTEXT) return
      for (const rel of files) {
        const { text: ref, status } = pdftotext(path.join(corpus, rel))
        const o = outcomes.get(rel)
        if (status === 0 && o && 'result' in o && o.result.isError) refused.push({ rel, code: o.result.error!.code, words: words(ref).length })
        if (words(ref).length < MIN_WORDS) continue
        const r = success(rel)
        const text = r && !r.data?.warning ? textOf(r) : ''
        scores.set(rel, scoreAgainstPdftotext(path.join(corpus, rel), text, r?.data, ref))
      }
    }, 120_000)

    it(`reaches F1 ≥ 0.9 on at least ${SHARE_FLOOR * 100}% of the text-bearing files`, () => {
      needPdftotext()
      const all = [...scores].sort((a, b) => a[1].f1 - b[1].f1)
      const good = all.filter(([, s]) => s.f1 >= 0.9).length
      const share = good / all.length
      const median = all[all.length >> 1]?.[1].f1 ?? 0
      const worst = all.slice(0, 10).map(([rel, s]) => {
        const r = success(rel)
        const diff = r ? wordDiff(withoutNote(textOf(r), r.data), pdftotext(path.join(corpus, rel)).text, 4) : { extra: [], missing: ['(not read)'] }
        return `  ${fmt(s.f1)}  P ${fmt(s.precision)} R ${fmt(s.recall)}  ${s.referenceWords} words  ${rel}${s.pages === 'all' ? '' : ` (pages ${s.pages})`}  extra ${JSON.stringify(diff.extra)} missing ${JSON.stringify(diff.missing)}`
      })
      console.log(
        [
          `pdf_read vs ${PDFTOTEXT}: ${all.length} text-bearing files (pdftotext ≥ ${MIN_WORDS} words); F1 ≥ 0.9 on ${good} (${(share * 100).toFixed(1)}%); median F1 ${fmt(median)}`,
          'lowest F1:',
          ...worst,
          `refused by pdf_read, opened by pdftotext (exit 0): ${refused.length} files; those where pdftotext finds words: ${
            refused
              .filter((r) => r.words > 0)
              .map((r) => `${path.basename(r.rel)} (${r.code}, ${r.words} words)`)
              .join(', ') || 'none'
          }`,
        ].join('\n'),
      )
      expect(all.length).toBeGreaterThanOrEqual(30)
      expect(share).toBeGreaterThanOrEqual(SHARE_FLOOR)
    })

    it('reaches F1 ≥ 0.95 on clean documents', () => {
      needPdftotext()
      const low = CLEAN_DOCS.flatMap((rel) => {
        const s = scores.get(rel)
        if (!s) return [`${rel}: not scored (is it in the corpus, with text?)`]
        return s.f1 >= 0.95 ? [] : [`${rel}: F1 ${fmt(s.f1)} (P ${fmt(s.precision)}, R ${fmt(s.recall)})`]
      })
      expect(low).toEqual([])
    })
  })
})
