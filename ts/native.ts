/**
 * The native addon, loaded once. Every call gets an id; the addon answers through one
 * `Completer` (one threadsafe function for the whole module), and `callNative` wires an
 * AbortSignal to a cancel token and turns an error reply into an FsgateError.
 */
import { createRequire } from 'node:module'

import type * as Binding from '../native/index.cjs'
import type { SessionLane } from './contract/fair.js'
import { AbortedError, fsgateError, isErrorCode } from './errors.js'

// Not named `require`: the CommonJS build (scripts/build-cjs.mjs) compiles this file too.
const load = createRequire(import.meta.url)

export const native: typeof Binding = load('../native/index.cjs')

export type NativeReadResult = Binding.ReadResult
export type NativeError = Binding.NativeError
export type NativeWriteResult = Binding.WriteResult
export type NativeEditResult = Binding.EditResult
export type NativePatchResult = Binding.PatchResult
export type NativeTarget = Binding.TargetResult
export type NativeChecks = Binding.ChangeChecks
export type NativeWalkOptions = Binding.WalkOptions
export type NativeGlobResult = Binding.GlobResult
export type NativeGrepResult = Binding.GrepResult
export type NativeRankResult = Binding.RankResult
export type NativeSpawnedChild = Binding.SpawnedChild
export type NativeChildExit = Binding.ChildExit
export type NativeNotebookResult = Binding.NotebookResult
export type NativeNotebookEditResult = Binding.NotebookEditResult
export type NativeListResult = Binding.ListResult
type Reply = { value?: unknown; error?: NativeError }

const waiting = new Map<number, (reply: Reply) => void>()
let lastId = 0
/** A timer that keeps the process alive while the addon works (its completer does not). */
let keepAlive: NodeJS.Timeout | undefined

/**
 * Hands a reply to the call waiting for `id`. The completer calls it; benchmarks that
 * replace the addon with a stub call it too. @internal
 */
export function deliver(id: number, reply: Reply): void {
  const resolve = waiting.get(id)
  waiting.delete(id)
  if (waiting.size === 0 && keepAlive) {
    clearInterval(keepAlive)
    keepAlive = undefined
  }
  resolve?.(reply)
}

/** The module's completer: `native.*` calls take it and an id, and answer through it. */
export const completer = new native.Completer(deliver)

type Start = (id: number, cancel?: Binding.CancelToken) => void

/**
 * Starts one native call and waits for its reply; resolves its value or throws an
 * FsgateError. `start` gets the request id and, when there is a signal, a cancel token.
 * With a session's `lane`, the call waits for the session's turn before it starts
 * (contract/fair.ts), so that no session's flood holds the pool from the others.
 */
export async function callNative<T>(start: Start, signal?: AbortSignal, lane?: SessionLane): Promise<T> {
  if (signal?.aborted) throw aborted()
  return lane ? lane.run(() => startNative<T>(start, signal), signal) : startNative<T>(start, signal)
}

async function startNative<T>(start: Start, signal: AbortSignal | undefined): Promise<T> {
  if (signal?.aborted) throw aborted()
  // A token is a wrapped native object: made only when there is a signal to wire to it.
  const token = signal ? new native.CancelToken() : undefined
  const onAbort = () => token?.cancel()
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const reply = await new Promise<Reply>((resolve) => {
      lastId = (lastId + 1) >>> 0
      const id = lastId
      waiting.set(id, resolve)
      keepAlive ??= setInterval(() => {}, 2 ** 30)
      try {
        start(id, token)
      } catch (err) {
        // Answered here, through the same path, so that the keep-alive timer is released.
        deliver(id, { error: { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) } })
      }
    })
    if (reply.error) {
      if (reply.error.code === 'ABORTED') throw aborted()
      const code = isErrorCode(reply.error.code) ? reply.error.code : 'INTERNAL'
      throw fsgateError(code, reply.error.message, { data: { native: reply.error } })
    }
    return reply.value as T
  } finally {
    signal?.removeEventListener('abort', onAbort)
  }
}

function aborted(): AbortedError {
  return new AbortedError('ABORTED', 'The call was cancelled by its AbortSignal. Call again if it is still needed.')
}

