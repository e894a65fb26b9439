/**
 * The session's read record (SPEC §3.1 dedup, §3.2 step 1): what was read of which
 * version of each file. Coverage of one version accumulates across ranged reads; a new
 * version (a different content hash) starts over.
 */

export interface ReadFacts {
  realPath: string
  mtimeMs: number
  size: number
  contentHash: string
  totalLines: number
}

export interface ReadRecord extends ReadFacts {
  /** Merged, sorted 1-based line ranges delivered from this version. */
  coverage: Array<[number, number]>
}

export class ReadLedger {
  private readonly records = new Map<string, ReadRecord>()
  private readonly delivered = new Map<string, Set<string>>()

  /**
   * Records that `range` of this version was delivered (`null` for the whole file, e.g.
   * an image). Returns true when exactly this range of this version was delivered before.
   * `key` names what was delivered when a line range cannot (a PDF's pages).
   */
  note(facts: ReadFacts, range: [number, number] | null, key?: string): boolean {
    let record = this.records.get(facts.realPath)
    let seen = this.delivered.get(facts.realPath)
    if (!record || !seen || record.contentHash !== facts.contentHash || record.size !== facts.size) {
      record = { ...facts, coverage: [] }
      seen = new Set()
      this.records.set(facts.realPath, record)
      this.delivered.set(facts.realPath, seen)
    }
    record.mtimeMs = facts.mtimeMs
    const delivered = key ?? (range ? `${range[0]}-${range[1]}` : 'whole')
    const again = seen.has(delivered)
    seen.add(delivered)
    record.coverage = mergeRange(record.coverage, range ?? [1, Math.max(1, facts.totalLines)])
    return again
  }

  /**
   * Records a version this session wrote: fully known (so the next write needs no read),
   * but not yet delivered by a read (so a read returns it, not a stub).
   */
  noteWritten(facts: ReadFacts): void {
    this.records.set(facts.realPath, { ...facts, coverage: facts.totalLines > 0 ? [[1, facts.totalLines]] : [] })
    this.delivered.set(facts.realPath, new Set())
  }

  /** Forgets one path (after an undo put back content the model has not seen). */
  forgetPath(realPath: string): void {
    this.records.delete(realPath)
    this.delivered.delete(realPath)
  }

  /** The record of a real path, if it was read in this session. */
  get(realPath: string): ReadRecord | undefined {
    return this.records.get(realPath)
  }

  /** Whether the reads of this version cover every line. */
  isComplete(record: ReadRecord): boolean {
    if (record.totalLines === 0) return true
    const [first] = record.coverage
    return record.coverage.length === 1 && first[0] <= 1 && first[1] >= record.totalLines
  }

  /** Forgets every read (call after the host compacts its context). */
  forget(): void {
    this.records.clear()
    this.delivered.clear()
  }
}

/** Adds a range to a sorted list of disjoint ranges, merging overlapping and adjacent ones. */
export function mergeRange(ranges: Array<[number, number]>, add: [number, number]): Array<[number, number]> {
  const all = [...ranges, add].sort((a, b) => a[0] - b[0])
  const out: Array<[number, number]> = []
  for (const [s, e] of all) {
    const last = out[out.length - 1]
    if (last && s <= last[1] + 1) last[1] = Math.max(last[1], e)
    else out.push([s, e])
  }
  return out
}
