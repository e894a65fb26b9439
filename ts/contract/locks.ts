/**
 * The per-path write lock (SPEC §3.2 step 3), held by the toolkit so every session of it
 * takes the same one: the last staleness check and the write happen as one step, and
 * two writers of one file queue instead of interleaving.
 */

export class PathLocks {
  private readonly tails = new Map<string, Promise<void>>()

  /** Runs `fn` once every earlier holder of `key` has finished. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve()
    let release!: () => void
    const mine = new Promise<void>((resolve) => {
      release = resolve
    })
    const tail = before.then(() => mine)
    this.tails.set(key, tail)
    await before
    try {
      return await fn()
    } finally {
      release()
      // The last holder leaves nothing behind, so the map holds only contended paths.
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }

  /** How many paths have a holder or a queue (for tests and leak checks). */
  get size(): number {
    return this.tails.size
  }
}
