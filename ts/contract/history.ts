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
  /** 'created' (there was no file), 'replaced', or 'removed' (a patch deleted or moved it). */
  action: 'created' | 'replaced' | 'removed'
  /** When, in ms since the epoch. */
  at: number
  /** The bytes replaced (`null` for a creation, or when they were too large to keep). */
  previous: Buffer | null
  /** The mode bits of the file a patch replaced or removed (Unix): an undo of the patch gives them back. */
  previousMode?: number
  /** Whether the replaced bytes were too large for the history and were not kept. */
  dropped?: boolean
  /** The version the change left, which an undo requires to still be there (null: none, the file was removed). */
  after: { size: number; hash: string } | null
  /** The change of several files this one belongs to (an apply_patch), and how many files it changed: an undo puts all of them back. */
  group?: { id: string; files: number }
  /** The folders a creation made, the deepest first: an undo of the patch removes them when it leaves them empty. */
  madeFolders?: string[]
}

/** What an entry costs besides its content, so that many small ones are bounded too. */
const ENTRY_BYTES = 512

export class EditHistory {
  private readonly entries: HistoryEntry[] = []
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  add(entry: HistoryEntry): void {
    // Content larger than the whole history is not kept (that change cannot be undone),
    // rather than pushing out every other entry.
    if (entry.previous && entry.previous.length + ENTRY_BYTES > this.maxBytes) {
      entry = { ...entry, previous: null, dropped: true }
    }
    this.entries.push(entry)
    this.bytes += cost(entry)
    while (this.bytes > this.maxBytes && this.entries.length > 0) {
      this.bytes -= cost(this.entries.shift() as HistoryEntry)
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
    this.bytes -= cost(entry)
  }

  /** The entries of a change of several files, oldest first. */
  group(id: string): HistoryEntry[] {
    return this.entries.filter((e) => e.group?.id === id)
  }

  /** Every kept entry, oldest first. */
  list(): readonly HistoryEntry[] {
    return [...this.entries]
  }
}

function cost(entry: HistoryEntry): number {
  return ENTRY_BYTES + (entry.previous?.length ?? 0)
}
