/**
 * The hourly action budget (SPEC §5.4): a sliding window per session. Each admitted
 * action is stamped; one more is allowed while fewer than `limit` stamps lie in the last
 * `windowMs`. Past it, the caller learns how long until the oldest stamp leaves.
 */

export class ActionBudget {
  /** Times of admitted actions, oldest first; never more than `limit` of them. */
  private readonly stamps: number[] = []

  constructor(
    readonly limit: number,
    readonly windowMs = 3_600_000,
  ) {}

  /** Takes one action now; returns 0, or the milliseconds to wait when the budget is spent. */
  take(now = Date.now()): number {
    while (this.stamps.length > 0 && this.stamps[0] <= now - this.windowMs) this.stamps.shift()
    if (this.stamps.length >= this.limit) return this.stamps[0] + this.windowMs - now
    this.stamps.push(now)
    return 0
  }

  /** Actions left in the window now. */
  remaining(now = Date.now()): number {
    return this.limit - this.stamps.filter((t) => t > now - this.windowMs).length
  }
}
