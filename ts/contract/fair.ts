/**
 * Fair shares of the addon's worker pools between sessions (issue 17).
 *
 * The addon runs calls on small pools (a thread per core) that take work first come,
 * first served. Without this, one session's flood of 120 searches filled that queue and
 * another session's 5-line read waited for all of them. A `FairQueue` sits in front of
 * a pool: each session has its own queue (a lane),
 * at most `slots` calls are handed to the pool at once, and a free slot goes to the
 * waiting session with the fewest calls running (among equals, the one served longest
 * ago). A session alone may still fill every slot; a session with nothing running is let
 * in at once even when the slots are full (up to `reserve` more), so its call waits
 * behind the ones running, never behind another session's queue.
 *
 * A call waiting in a lane is dropped the moment its AbortSignal fires (an emergency
 * stop fires every call's signal), so nothing is left queued; a lane with nothing
 * waiting or running is forgotten, so sessions that end leave nothing behind.
 */
import { availableParallelism } from 'node:os'

import { AbortedError } from '../errors.js'

export interface FairQueueOptions {
  /** Calls in the pool at once. */
  slots: number
  /** Calls one session may have in the pool at once. By default, all the slots. */
  perSession?: number
  /** Calls beyond `slots` let in for sessions that have none running. By default, 1. */
  reserve?: number
}

/** A call waiting for its turn. */
interface Waiting {
  start: () => void
  signal?: AbortSignal
  onAbort?: () => void
}

/** One session's calls: those running in the pool, and those waiting, oldest first. */
interface Lane {
  readonly session: string
  running: number
  readonly waiting: Waiting[]
  /** When it last had a call let in (a count of admissions): the lane served longest ago goes first. */
  served: number
}

export class FairQueue {
  readonly slots: number
  readonly perSession: number
  readonly reserve: number
  private readonly lanes = new Map<string, Lane>()
  /** Lanes with calls waiting. */
  private turns: Lane[] = []
  private running = 0
  private admitted = 0

  constructor(options: FairQueueOptions) {
    this.slots = Math.max(1, Math.floor(options.slots))
    this.perSession = Math.max(1, Math.floor(options.perSession ?? this.slots))
    this.reserve = Math.max(0, Math.floor(options.reserve ?? 1))
  }

  /**
   * Runs `task` when `session`'s turn comes and resolves what it resolves. A call whose
   * signal fires while it waits rejects with ABORTED at once and never starts.
   */
  run<T>(session: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(aborted())
    const lane = this.lane(session)
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        lane.running++
        lane.served = ++this.admitted
        this.running++
        let pending: Promise<T>
        try {
          pending = task()
        } catch (err) {
          pending = Promise.reject(err)
        }
        // The slot is free before the caller hears back, so its next call may take it.
        pending.then(
          (value) => {
            this.finish(lane)
            resolve(value)
          },
          (err: unknown) => {
            this.finish(lane)
            reject(err)
          },
        )
      }
      if (lane.waiting.length === 0 && this.admits(lane)) return start()
      const entry: Waiting = { start, signal }
      if (signal) {
        entry.onAbort = () => {
          this.drop(lane, entry)
          reject(aborted())
        }
        signal.addEventListener('abort', entry.onAbort, { once: true })
      }
      if (lane.waiting.push(entry) === 1) this.turns.push(lane)
    })
  }

  /** Calls handed to the pool and not yet finished. */
  get inFlight(): number {
    return this.running
  }

  /** Calls waiting for their turn, over all sessions. */
  get queued(): number {
    let n = 0
    for (const lane of this.lanes.values()) n += lane.waiting.length
    return n
  }

  /** Sessions with calls waiting or running (the others hold nothing here). */
  get sessions(): number {
    return this.lanes.size
  }

  private lane(session: string): Lane {
    let lane = this.lanes.get(session)
    if (!lane) {
      lane = { session, running: 0, waiting: [], served: 0 }
      this.lanes.set(session, lane)
    }
    return lane
  }

  /** Whether `lane` may hand one more call to the pool now. */
  private admits(lane: Lane): boolean {
    if (lane.running >= this.perSession) return false
    return this.running < this.slots || (lane.running === 0 && this.running < this.slots + this.reserve)
  }

  private finish(lane: Lane): void {
    lane.running--
    this.running--
    this.forgetIfIdle(lane)
    this.pump()
  }

  /**
   * Hands free slots to waiting calls: to the lane with the fewest calls running, and
   * among those to the one served longest ago.
   */
  private pump(): void {
    while (this.turns.length > 0) {
      let best: Lane | undefined
      for (const lane of this.turns) {
        if (!this.admits(lane)) continue
        if (!best || lane.running < best.running || (lane.running === best.running && lane.served < best.served)) best = lane
      }
      if (!best) return
      const entry = best.waiting.shift() as Waiting
      if (best.waiting.length === 0) this.turns.splice(this.turns.indexOf(best), 1)
      if (entry.onAbort) entry.signal?.removeEventListener('abort', entry.onAbort)
      entry.start()
    }
  }

  /** Takes an aborted call out of its lane. */
  private drop(lane: Lane, entry: Waiting): void {
    const at = lane.waiting.indexOf(entry)
    if (at < 0) return
    lane.waiting.splice(at, 1)
    if (lane.waiting.length === 0) this.turns = this.turns.filter((l) => l !== lane)
    this.forgetIfIdle(lane)
  }

  private forgetIfIdle(lane: Lane): void {
    if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(lane.session)
  }
}

/** A session's place in a queue: what a native call is handed to. */
export class SessionLane {
  constructor(
    readonly queue: FairQueue,
    readonly session: string,
  ) {}

  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.queue.run(this.session, task, signal)
  }
}

/** A session's lanes, one in front of each of the addon's pools. */
export interface SessionLanes {
  /** Reads and the other short calls: the worker pool, one thread per core. */
  compute: SessionLane
  /** Globs, content searches and ranking: the search pool, one thread per core. */
  search: SessionLane
  /** Writes and edits, which wait on the disk: the I/O pool. */
  io: SessionLane
}

/**
 * A toolkit's queues, one in front of each of the addon's pools. Searches: one at a time
 * for each session (a search spreads over every core by itself, so a session alone loses
 * nothing), two at once, and a third for a session with none running: one for each of
 * the addon's three search pools (SEARCH_POOLS in crates/node/src/lib.rs), so that no
 * search shares a pool with another session's. Short calls: twice as many as the worker
 * pool has threads, so that its threads never wait on the event loop between calls.
 * Writes: as many as the I/O pool has threads.
 */
export class FairShares {
  readonly compute: FairQueue
  readonly search: FairQueue
  readonly io: FairQueue

  constructor(cores = availableParallelism()) {
    const threads = Math.max(2, cores)
    this.compute = new FairQueue({ slots: 2 * threads })
    this.search = new FairQueue({ slots: 2, perSession: 1, reserve: 1 })
    this.io = new FairQueue({ slots: Math.min(16, Math.max(4, cores * 4)) })
  }

  /** `session`'s lanes (handles only: a lane holds nothing while it has no calls). */
  lanes(session: string): SessionLanes {
    return {
      compute: new SessionLane(this.compute, session),
      search: new SessionLane(this.search, session),
      io: new SessionLane(this.io, session),
    }
  }
}

function aborted(): AbortedError {
  return new AbortedError('ABORTED', 'The call was cancelled by its AbortSignal. Call again if it is still needed.')
}
