// Word-level scoring of extracted PDF text, shared by __test__/pdf-corpus.test.ts and
// benches/pdf.mjs: fsgate's pdf_read (or a peer) is the candidate, pdftotext the reference.
// The end of the file holds what both need besides the score: the corpus's files and
// py-pdf's files.json, and pdftotext run the one way both use it.
//
// A "word" is a run of non-whitespace after this normalisation, applied to both sides:
//   1. fsgate's page-marker lines (`--- Page N of M ---`) are removed (`stripMarkers`), so
//      the markers are not counted as words of the document;
//   2. Unicode NFKC, which expands the ligatures (ﬁ ﬂ ﬀ ﬃ ﬄ ﬅ ﬆ → fi fl ff ffi ffl st st),
//      maps full-width and compatibility forms and no-break spaces to their plain forms,
//      and U+2011 (non-breaking hyphen) to U+2010;
//   3. U+2010 (hyphen) becomes ASCII "-";
//   4. a word broken at a line end — a letter, "-" or U+00AD (soft hyphen), a line break,
//      then a lowercase letter — is joined and its hyphen dropped, on both sides, so it
//      does not matter whether an extractor keeps "infor-\nmation" or has already joined
//      it. (A real hyphen that falls at a line end, "well-\nknown", becomes "wellknown" on
//      both sides alike.) Any other soft hyphen is invisible and is removed;
//   5. the text is split on whitespace (JavaScript's \s: spaces, tabs, line and page
//      breaks — pdftotext ends each page with a form feed — and the Unicode spaces) and
//      empty tokens are dropped.
// Case, punctuation attached to a word and every other character are kept as they are, so
// "Hello," and "Hello" are different words: the score is strict about what a reader sees.
// Order is ignored (a multiset), so a different but sensible reading order of columns or
// of a page's blocks is not punished; missing, extra, split ("T able") or merged words are.

import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** One of fsgate's page-marker lines. */
const MARKER = /^--- Page \d+ of \d+ ---[ \t]*$/

/** Removes fsgate's `--- Page N of M ---` lines from `text`; everything else is kept. */
export function stripMarkers(text) {
  return text
    .split('\n')
    .filter((line) => !MARKER.test(line))
    .join('\n')
}

/**
 * Splits pdf_read output into its pages: `[{ page, of, text }]`, `text` without the marker
 * line. Text before the first marker (there should be none) is dropped.
 */
export function splitPages(text) {
  const pages = []
  let current
  for (const line of text.split('\n')) {
    const m = /^--- Page (\d+) of (\d+) ---[ \t]*$/.exec(line)
    if (m) {
      current = { page: Number(m[1]), of: Number(m[2]), lines: [] }
      pages.push(current)
    } else if (current) current.lines.push(line)
  }
  return pages.map(({ page, of, lines }) => ({ page, of, text: lines.join('\n') }))
}

/** The text as the scorer sees it before splitting (steps 1–4 above). */
export function normalize(text) {
  return stripMarkers(text)
    .normalize('NFKC')
    .replace(/\u2010/g, '-')
    .replace(/(\p{L})[-\u00AD][ \t\r]*\n\s*(?=\p{Ll})/gu, '$1')
    .replace(/\u00AD/g, '')
}

/** The words of `text` (see the top of this file). */
export function words(text) {
  return normalize(text)
    .split(/\s+/u)
    .filter((w) => w !== '')
}

function counts(ws) {
  const m = new Map()
  for (const w of ws) m.set(w, (m.get(w) ?? 0) + 1)
  return m
}

/**
 * Multiset word overlap of `candidateText` against `referenceText`:
 * precision = common / candidate words, recall = common / reference words, F1 their
 * harmonic mean, where a word that occurs c times in one and r times in the other counts
 * min(c, r) times in `common`. Both empty: all three are 1. One empty: all three are 0.
 */
export function f1(candidateText, referenceText) {
  const cand = words(candidateText)
  const ref = words(referenceText)
  const result = (precision, recall, f, common) => ({ precision, recall, f1: f, common, candidateWords: cand.length, referenceWords: ref.length })
  if (cand.length === 0 && ref.length === 0) return result(1, 1, 1, 0)
  if (cand.length === 0 || ref.length === 0) return result(0, 0, 0, 0)
  const r = counts(ref)
  let common = 0
  for (const [w, c] of counts(cand)) common += Math.min(c, r.get(w) ?? 0)
  const precision = common / cand.length
  const recall = common / ref.length
  const f = common === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  return result(precision, recall, f, common)
}

/**
 * The words that differ most: up to `n` of each side's surplus (candidate-only and
 * reference-only occurrences), most frequent first — for reports on the worst files.
 */
export function wordDiff(candidateText, referenceText, n = 8) {
  const c = counts(words(candidateText))
  const r = counts(words(referenceText))
  const surplus = (a, b) =>
    [...a]
      .map(([w, k]) => [w, k - (b.get(w) ?? 0)])
      .filter(([, k]) => k > 0)
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, n)
      .map(([w, k]) => (k > 1 ? `${w}×${k}` : w))
  return { extra: surplus(c, r), missing: surplus(r, c) }
}

// ---------------------------------------------------------------------------------------
// The corpus and the reference
// ---------------------------------------------------------------------------------------

/** The corpus's folders: real documents from py-pdf, and PDFium's (often malformed) test files. */
export const CORPUS_SETS = ['py-pdf-sample-files', 'pdfium-testing']

/** A file is "text-bearing", and scored, when pdftotext finds at least this many words in it. */
export const MIN_WORDS = 20

/**
 * The corpus folder: $FSGATE_PDF_CORPUS, else `../shared/corpus/pdf` beside the repository
 * at `repoRoot`, else /work/shared/corpus/pdf; null when it is not there.
 */
export function findCorpus(repoRoot) {
  // Beside the repository (the project's layout), or the shared folder of this machine
  // when the repository is a clone elsewhere (CI clones into a temporary folder).
  const candidates = process.env.FSGATE_PDF_CORPUS
    ? [process.env.FSGATE_PDF_CORPUS]
    : [path.resolve(repoRoot, '..', 'shared', 'corpus', 'pdf'), '/work/shared/corpus/pdf']
  return candidates.find((dir) => CORPUS_SETS.every((set) => existsSync(path.join(dir, set)))) ?? null
}

/** Every PDF of the corpus as a path relative to `corpusDir` ("set/name.pdf"), sorted. */
export function corpusFiles(corpusDir) {
  return CORPUS_SETS.flatMap((set) =>
    readdirSync(path.join(corpusDir, set))
      .filter((name) => name.toLowerCase().endsWith('.pdf'))
      .map((name) => `${set}/${name}`),
  ).sort()
}

/**
 * py-pdf's files.json: `[{ rel, pages, encrypted, present }]`. The corpus keeps the
 * files flat, "001-trivial/minimal-document.pdf" as "001-trivial_minimal-document.pdf";
 * `present` says whether that copy is in the folder (not every listed file is).
 */
export function pyPdfManifest(corpusDir) {
  const set = 'py-pdf-sample-files'
  const { data } = JSON.parse(readFileSync(path.join(corpusDir, set, 'files.json'), 'utf8'))
  return data.map((entry) => {
    const rel = `${set}/${entry.path.replace('/', '_')}`
    return { rel, listed: entry.path, pages: entry.pages, encrypted: entry.encrypted, present: existsSync(path.join(corpusDir, rel)) }
  })
}

/** Whether the pdftotext CLI (poppler-utils) runs; its version line, or null. */
export function pdftotextVersion() {
  const r = spawnSync('pdftotext', ['-v'], { encoding: 'utf8' })
  if (r.error || r.status !== 0) return null
  return (r.stderr || r.stdout).split('\n')[0].trim()
}

/** The arguments both the test and the benchmark give pdftotext, before the file. */
export const PDFTOTEXT_ARGS = ['-q', '-enc', 'UTF-8']

/**
 * pdftotext's text of `file` (`pdftotext -q -enc UTF-8 [-f first -l last] file -`), or ''
 * when it fails or takes longer than `timeoutMs` (then `timedOut`). Its exit status is
 * kept: a damaged file it cannot open is status 1 or 99 and gives no text.
 */
export function pdftotext(file, { first, last, timeoutMs = 10_000 } = {}) {
  const range = [...(first ? ['-f', String(first)] : []), ...(last ? ['-l', String(last)] : [])]
  const r = spawnSync('pdftotext', [...PDFTOTEXT_ARGS, ...range, file, '-'], { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1 << 28 })
  const timedOut = r.error?.code === 'ETIMEDOUT'
  if (r.error && !timedOut) throw r.error
  return { text: r.status === 0 ? r.stdout : '', status: r.status, timedOut }
}

/**
 * pdf_read's text without the note it adds at the end when some characters could not be
 * mapped to Unicode (`data.unmapped` > 0): its last non-empty line. The note's wording is
 * not fixed, and it is about the text, not part of it. The U+FFFD characters stay.
 */
export function withoutNote(text, data = {}) {
  if (!(data.unmapped > 0)) return text
  const lines = text.trimEnd().split('\n')
  if (lines.length > 1 && !MARKER.test(lines[lines.length - 1])) lines.pop()
  return lines.join('\n')
}

/**
 * Scores pdf_read's `text` of `file` (with its result's `data`) against pdftotext's
 * `reference` (its text of the whole file). When the output was cut at max_chars
 * (`data.truncated`), only the pages it gave in full are compared: its pages before the
 * last one it began (which holds the cut and its notice), against pdftotext's text of the
 * same pages. Returns `f1`'s figures and `pages` (the pages compared: 'all', '1-N' or
 * 'none').
 */
export function scoreAgainstPdftotext(file, text, data, reference) {
  if (!data?.truncated) return { ...f1(withoutNote(text, data), reference), pages: 'all' }
  const pages = splitPages(text)
  const full = pages.length - 1
  if (full < 1) return { ...f1('', reference), pages: 'none' }
  const ours = pages
    .slice(0, full)
    .map((p) => p.text)
    .join('\n')
  return { ...f1(ours, pdftotext(file, { first: 1, last: full }).text), pages: `1-${full}` }
}
