// Types of pdf-words.mjs, for __test__/pdf-corpus.test.ts (the benchmarks are plain JS).

export interface Score {
  precision: number
  recall: number
  f1: number
  /** Words the two texts share, counted as a multiset. */
  common: number
  candidateWords: number
  referenceWords: number
}

export function stripMarkers(text: string): string
export function splitPages(text: string): Array<{ page: number; of: number; text: string }>
export function normalize(text: string): string
export function words(text: string): string[]
export function f1(candidateText: string, referenceText: string): Score
export function wordDiff(candidateText: string, referenceText: string, n?: number): { extra: string[]; missing: string[] }

export const CORPUS_SETS: readonly string[]
export const MIN_WORDS: number
export function findCorpus(repoRoot: string): string | null
export function corpusFiles(corpusDir: string): string[]
export function pyPdfManifest(corpusDir: string): Array<{ rel: string; listed: string; pages: number; encrypted: boolean; present: boolean }>
export function pdftotextVersion(): string | null
export const PDFTOTEXT_ARGS: readonly string[]
export function pdftotext(file: string, options?: { first?: number; last?: number; timeoutMs?: number }): { text: string; status: number | null; timedOut: boolean }
/** The facts of a pdf_read result that the scorer uses. */
export interface PdfReadData {
  truncated?: unknown
  unmapped?: unknown
}
export function withoutNote(text: string, data?: PdfReadData): string
export function scoreAgainstPdftotext(file: string, text: string, data: PdfReadData | undefined, reference: string): Score & { pages: string }
