/** The numbers of SPEC §4, all overridable through `limits`. */
export interface Limits {
  /** Lines per read call. */
  readLines: number
  /** Characters per line before it is cut. */
  readLineChars: number
  /** Tokens per read call. */
  readTokens: number
  /** Largest text file read without offset/limit, in bytes. */
  unrangedReadBytes: number
  /** Longest image edge in pixels. */
  imageMaxEdge: number
  /** Largest encoded image in bytes. */
  imageMaxBytes: number
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  readLines: 2000,
  readLineChars: 2000,
  readTokens: 25_000,
  unrangedReadBytes: 10 * 1024 * 1024,
  imageMaxEdge: 2000,
  imageMaxBytes: 3.75 * 1024 * 1024,
})

/** Merges overrides into the defaults, refusing numbers that are not positive integers. */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  const out: Limits = { ...DEFAULT_LIMITS }
  for (const [key, value] of Object.entries(overrides) as [keyof Limits, unknown][]) {
    if (!(key in DEFAULT_LIMITS)) throw new TypeError(`fsgate: unknown limit '${key}'`)
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw new TypeError(`fsgate: limits.${key} must be a positive integer, got ${String(value)}`)
    }
    out[key] = value
  }
  return out
}
