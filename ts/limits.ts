/** The numbers of SPEC §4, all overridable through `limits`. */
export interface Limits {
  /** Lines per read call. */
  readLines: number
  /** Characters per line before it is cut. */
  readLineChars: number
  /** Tokens per read call. */
  readTokens: number
  /** Tokens of any tool's result (searches, listings, shell and git output, PDF text): past it, a result ends at a record boundary and says the offset to go on. */
  resultTokens: number
  /** Tokens of a search page when the call sets no count of its own (Grep's default page); well below resultTokens. */
  searchPageTokens: number
  /** Largest text file read without offset/limit, in bytes. */
  unrangedReadBytes: number
  /** PDF pages per Read call. */
  pdfPagesPerRead: number
  /** Default pdf_read max_chars (capped at 200,000). */
  pdfMaxChars: number
  /** Largest PDF, in bytes. */
  pdfMaxBytes: number
  /** content_search results. */
  searchResults: number
  /** Bytes of a content_search report in content mode; past it, the report is truncated. */
  searchOutputBytes: number
  /** glob_search results (the claude dialect's Glob uses 100). */
  globResults: number
  /** Shell timeout in seconds. */
  shellTimeoutSecs: number
  /** Shell output in bytes. */
  shellOutputBytes: number
  /** semantic_code_search top_k default (max 25). */
  semanticTopK: number
  /** Longest image edge in pixels. */
  imageMaxEdge: number
  /** Largest encoded image in bytes. */
  imageMaxBytes: number
  /** Most pixels an image may have to be decoded and downscaled. */
  imageMaxPixels: number
  /** The largest existing file Write and Edit will replace, in bytes. */
  editMaxBytes: number
  /** Bytes of replaced content a session keeps for `undo`; the oldest entries go first. */
  historyBytes: number
  /** Read with `allow_large`: the token limit it may raise readTokens to (a hard cap). */
  largeReadTokens: number
  /** Read with `allow_large`: the unranged file size it may raise unrangedReadBytes to. */
  largeReadBytes: number
  /** The largest notebook (.ipynb) Read renders and NotebookEdit changes, in bytes. */
  notebookMaxBytes: number
  /** Characters of one notebook output's text shown; a longer one keeps its start and end. */
  notebookOutputChars: number
  /** Entries in one page of list_directory. */
  listEntries: number
  /** Background commands running at once in the toolkit (every session together). */
  backgroundTasks: number
  /** Background commands running at once in one session. */
  backgroundTasksPerSession: number
  /** Bytes of a background command's output kept (its start and its latest part). */
  taskOutputBytes: number
  /** How long a background command may run, in seconds, unless the call asks for less (Claude Code: 30 min). */
  taskTimeoutSecs: number
  /** Memory of the live search index (bytes); past it the index turns itself off and searches walk the tree. */
  indexBytes: number
}

/**
 * The smallest limits.resultTokens and limits.searchPageTokens: below it a page's notes
 * (where to go on, what was cut) and one record would not fit together.
 */
export const MIN_RESULT_TOKENS = 1_000

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  readLines: 2000,
  readLineChars: 2000,
  readTokens: 25_000,
  resultTokens: 25_000,
  searchPageTokens: 10_000,
  unrangedReadBytes: 10 * 1024 * 1024,
  pdfPagesPerRead: 20,
  pdfMaxChars: 50_000,
  pdfMaxBytes: 50 * 1024 * 1024,
  searchResults: 1000,
  searchOutputBytes: 256 * 1024,
  globResults: 1000,
  shellTimeoutSecs: 60,
  shellOutputBytes: 1024 * 1024,
  semanticTopK: 8,
  imageMaxEdge: 2000,
  imageMaxBytes: 3.75 * 1024 * 1024,
  imageMaxPixels: 50_000_000,
  editMaxBytes: 64 * 1024 * 1024,
  historyBytes: 64 * 1024 * 1024,
  largeReadTokens: 100_000,
  largeReadBytes: 32 * 1024 * 1024,
  notebookMaxBytes: 100 * 1024 * 1024,
  notebookOutputChars: 10_000,
  listEntries: 1000,
  backgroundTasks: 16,
  backgroundTasksPerSession: 4,
  taskOutputBytes: 1024 * 1024,
  taskTimeoutSecs: 1800,
  indexBytes: 512 * 1024 * 1024,
})

/** Merges overrides into the defaults, refusing unknown names, numbers that are not positive integers, and token budgets under MIN_RESULT_TOKENS. */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  if (typeof overrides !== 'object' || overrides === null) throw new TypeError('fsgate: limits must be an object')
  const out: Limits = { ...DEFAULT_LIMITS }
  for (const [key, value] of Object.entries(overrides) as [keyof Limits, unknown][]) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) throw new TypeError(`fsgate: unknown limit '${key}'`)
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw new TypeError(`fsgate: limits.${key} must be a positive integer, got ${String(value)}`)
    }
    if ((key === 'resultTokens' || key === 'searchPageTokens') && value < MIN_RESULT_TOKENS) {
      throw new TypeError(`fsgate: limits.${key} must be at least ${MIN_RESULT_TOKENS.toLocaleString('en-US')} (room for a page and its notes), got ${value}`)
    }
    out[key] = value
  }
  return out
}
