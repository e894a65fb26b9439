/** Engine helpers for programs: exact token counts and file hashes, off the JS thread. */
import { callNative, native } from './native.js'

/** Counts o200k tokens of `text` with the built-in BPE. */
export function countTokens(text: string, options: { signal?: AbortSignal } = {}): Promise<number> {
  return callNative(() => native.countTokens(text), options.signal)
}

/** The xxh3-128 of a file, as 32 hex digits. */
export function hashFile(path: string, options: { signal?: AbortSignal } = {}): Promise<string> {
  return callNative((cancel) => native.hashFile(path, cancel), options.signal)
}
