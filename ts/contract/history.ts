/**
 * The session's edit history (SPEC §2, §3.3): what each write or edit replaced, so that
 * `session.undo(path)` can put it back. Memory is bounded: past `maxBytes` of kept
 * content the oldest entries are dropped.
 */

export interface HistoryEntry {
  /** The real path changed. */
  realPath: string
  /** The path as the model named it (relative to the workspace when inside). */
  path: string
  /** The tool name the change was made by. */
  tool: string
  /** 'created' (there was no file) or 'replaced'. */
  action: 'created' | 'replaced'
  /** When, in ms since the epoch. */
  at: number
  /** The bytes replaced (`null` for a creation). */
  previous: Buffer | null
  /** The version the change left, which an undo requires to still be there. */
  after: { size: number; hash: string }
}

export class EditHistory {
  private readonly entries: HistoryEntry[] = []
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  add(entry: HistoryEntry): void {
    this.entries.push(entry)
    this.bytes += entry.previous?.length ?? 0
    while (this.bytes > this.maxBytes && this.entries.length > 0) {
      const dropped = this.entries.shift() as HistoryEntry
      this.bytes -= dropped.previous?.length ?? 0
    }
  }

  /** The latest change of a real path, if it is still kept. */
  latest(realPath: string): HistoryEntry | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.entries[i].realPath === realPath) return this.entries[i]
    return undefined
  }

  /** Removes an entry (after it was undone). */
  remove(entry: HistoryEntry): void {
    const i = this.entries.lastIndexOf(entry)
    if (i < 0) return
    this.entries.splice(i, 1)
    this.bytes -= entry.previous?.length ?? 0
  }

  /** Every kept entry, oldest first. */
  list(): readonly HistoryEntry[] {
    return [...this.entries]
  }
}
