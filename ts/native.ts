/**
 * The native addon, loaded once. Calls go through `callNative`, which wires an
 * AbortSignal to a cancel token and turns a native error reply into an FsgateError.
 */
import { createRequire } from 'node:module'

import type * as Binding from '../native/index.cjs'
import { AbortedError, fsgateError, isErrorCode } from './errors.js'

const require = createRequire(import.meta.url)

export const native: typeof Binding = require('../native/index.cjs')

export type NativeReadResult = Binding.ReadResult
export type NativeError = Binding.NativeError
type Reply<T> = { value?: T; error?: NativeError }

/** Runs one native call with cancellation; resolves its value or throws an FsgateError. */
export async function callNative<T>(start: (cancel?: Binding.CancelToken) => Promise<Reply<T>>, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) throw aborted()
  // A token is a wrapped native object: made only when there is a signal to wire to it.
  const token = signal ? new native.CancelToken() : undefined
  const onAbort = () => token?.cancel()
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const reply = await start(token)
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
  return new AbortedError('ABORTED', 'The call was cancelled by its AbortSignal.')
}
