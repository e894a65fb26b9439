/** Engine helpers for programs: exact token counts and file hashes, off the JS thread. */
import { callNative, completer, native } from './native.js'

/** Counts o200k tokens of `text` with the built-in BPE. */
export function countTokens(text: string, options: { signal?: AbortSignal } = {}): Promise<number> {
  return callNative((id) => native.countTokens(completer, id, text), options.signal)
}

/** The xxh3-128 of a file, as 32 hex digits. */
export function hashFile(path: string, options: { signal?: AbortSignal } = {}): Promise<string> {
  return callNative((id, cancel) => native.hashFile(completer, id, path, cancel), options.signal)
}

/** The content hash of bytes already in memory, as 32 hex digits. */
export function hashBuffer(data: Uint8Array, options: { signal?: AbortSignal } = {}): Promise<string> {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  return callNative((id) => native.hashBuffer(completer, id, buf), options.signal)
}
