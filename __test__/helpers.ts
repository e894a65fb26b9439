/**
 * Shared helpers for the vitest suites: temp workspaces, result accessors, and tiny
 * encoders that make real PNG, JPEG and GIF files without any image library.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'

import { expect } from 'vitest'

import { createToolkit, ERROR_CODES, type Session, type Toolkit, type ToolkitOptions, type ToolResult } from '../ts/index.js'

// ---------------------------------------------------------------------------------------
// Temp folders

const made: string[] = []

/** A fresh folder under os.tmpdir(), removed by `removeTempDirs`. Returns its real path. */
export function tempDir(prefix = 'fsgate-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  made.push(dir)
  return dir
}

/** Removes every folder made by `tempDir` (call it in afterAll). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

/** Writes `data` to `dir/rel` (making folders) and returns the absolute path. */
export function put(dir: string, rel: string, data: string | Uint8Array): string {
  const abs = path.join(dir, rel)
  fs.mkdirSync(path.dirname(abs), { recursive: true })
  fs.writeFileSync(abs, data)
  return abs
}

/** Writes a file of `count` lines made by `line(i)` (1-based), in chunks, without building it in memory. */
export function putLines(file: string, count: number, line: (i: number) => string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const fd = fs.openSync(file, 'w')
  try {
    let buf: string[] = []
    for (let i = 1; i <= count; i++) {
      buf.push(line(i))
      if (buf.length === 50_000) {
        fs.writeSync(fd, buf.join('\n') + '\n')
        buf = []
      }
    }
    if (buf.length) fs.writeSync(fd, buf.join('\n') + '\n')
  } finally {
    fs.closeSync(fd)
  }
}

/** Writes `totalBytes` bytes made of repeats of `unit` (its length must divide the total). */
export function putRepeated(file: string, unit: string, totalBytes: number): void {
  const chunk = Buffer.from(unit.repeat(Math.max(1, Math.floor((1 << 20) / unit.length))))
  const fd = fs.openSync(file, 'w')
  try {
    let left = totalBytes
    while (left > 0) {
      const n = Math.min(left, chunk.length)
      fs.writeSync(fd, chunk, 0, n)
      left -= n
    }
  } finally {
    fs.closeSync(fd)
  }
}

// ---------------------------------------------------------------------------------------
// Processes and builds

/**
 * Whether a process is still running. A zombie (exited, waiting for a parent that does
 * not reap it, as a container's pid 1 may never) counts as gone.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return process.platform !== 'linux'
  }
}

/** Waits until `cond()` holds, checking every 20 ms for at most `ms`; returns whether it held. */
export async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (cond()) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return cond()
}

/** The newest modification time of any file under `dir` (to tell whether dist/ is stale). */
export function newest(dir: string): number {
  let t = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) t = Math.max(t, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return t
}

// ---------------------------------------------------------------------------------------
// Toolkits and results

export interface Fixture {
  dir: string
  toolkit: Toolkit
  session: Session
}

/** A temp workspace with a toolkit and one session. */
export function workspace(options: Partial<ToolkitOptions> = {}, dir = tempDir()): Fixture {
  const toolkit = createToolkit({ workspace: dir, ...options })
  return { dir, toolkit, session: toolkit.createSession() }
}

/** Every text block of a result, joined with newlines. */
export function textOf(result: ToolResult | { content: ToolResult['content'] }): string {
  return result.content
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
}

/** Asserts a successful result and returns its text. */
export function ok(result: ToolResult): string {
  expect(result.isError, `expected success, got: ${textOf(result)}`).toBe(false)
  expect(result.error).toBeUndefined()
  return textOf(result)
}

/** Asserts a failed result with `code` and returns its text. */
export function fails(result: ToolResult, code: string): string {
  expect(result.isError, `expected ${code}, got success: ${textOf(result).slice(0, 300)}`).toBe(true)
  expect(result.error?.code, textOf(result)).toBe(code)
  return textOf(result)
}

/** Asserts that `value` has the ToolResult shape of SPEC §2 (and is JSON-safe). */
export function expectToolResult(value: unknown): asserts value is ToolResult {
  expect(value).toBeTypeOf('object')
  const r = value as ToolResult
  expect(typeof r.isError).toBe('boolean')
  expect(Array.isArray(r.content)).toBe(true)
  expect(r.content.length).toBeGreaterThan(0)
  for (const block of r.content) {
    if (block.type === 'text') expect(typeof block.text).toBe('string')
    else {
      expect(block.type).toBe('image')
      expect(typeof block.data).toBe('string')
      expect(block.mimeType).toMatch(/^image\//)
    }
  }
  if (r.isError) {
    expect(r.error).toBeDefined()
    expect(ERROR_CODES as readonly string[]).toContain(r.error?.code)
  } else {
    expect(r.error).toBeUndefined()
  }
  if (r.data !== undefined) expect(typeof r.data).toBe('object')
  expect(() => JSON.stringify(r)).not.toThrow()
}

/** Calls `fn` and returns what it threw (failing when it does not throw). */
export async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn()
  } catch (err) {
    return err
  }
  throw new Error('expected the call to throw')
}

/** A deterministic pseudo-random generator (an LCG), so generated files are the same every run. */
export function rng(seed = 42): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** A nonsense lowercase word of `n` letters. */
export function word(rand: () => number, n = 6): string {
  let w = ''
  for (let i = 0; i < n; i++) w += String.fromCharCode(97 + Math.floor(rand() * 26))
  return w
}

// ---------------------------------------------------------------------------------------
// Images

const CRC_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

function crc32(buf: Uint8Array): number {
  let c = 0xffffffff
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([len, body, crc])
}

export interface PngOptions {
  /** RGBA instead of RGB. */
  alpha?: boolean
  /** Random pixels (incompressible) instead of a gradient. */
  noise?: boolean
  /** zlib level; 0 stores the pixels uncompressed. */
  level?: number
}

/** A valid 8-bit RGB or RGBA PNG of `width`×`height`. */
export function png(width: number, height: number, options: PngOptions = {}): Buffer {
  const channels = options.alpha ? 4 : 3
  const stride = width * channels + 1
  const raw = Buffer.alloc(stride * height)
  const rand = rng(7)
  for (let y = 0; y < height; y++) {
    const row = y * stride
    raw[row] = 0 // filter: none
    for (let x = 0; x < width; x++) {
      const i = row + 1 + x * channels
      if (options.noise) {
        raw[i] = (rand() * 256) | 0
        raw[i + 1] = (rand() * 256) | 0
        raw[i + 2] = (rand() * 256) | 0
      } else {
        raw[i] = x & 0xff
        raw[i + 1] = y & 0xff
        raw[i + 2] = 128
      }
      if (channels === 4) raw[i + 3] = 255
    }
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = options.alpha ? 6 : 2 // colour type: RGBA or RGB
  ihdr[10] = 0
  ihdr[11] = 0
  ihdr[12] = 0
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(raw, { level: options.level ?? 6 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/**
 * A valid baseline JPEG of `width`×`height`, one grey channel, every pixel 128: every
 * 8×8 block is "DC difference 0, end of block", coded with one-symbol Huffman tables.
 */
export function jpegGray(width: number, height: number): Buffer {
  const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff]
  const seg = (marker: number, body: number[]) => [0xff, marker, ...u16(body.length + 2), ...body]
  const oneCodeOfLength2 = [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8)
  const scan = Buffer.alloc(Math.ceil((blocks * 4) / 8))
  if ((blocks * 4) % 8 !== 0) scan[scan.length - 1] = 0x0f // pad the last byte with 1 bits
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    Buffer.from(seg(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, ...u16(1), ...u16(1), 0, 0])),
    Buffer.from(seg(0xdb, [0x00, ...new Array<number>(64).fill(1)])),
    Buffer.from(seg(0xc0, [8, ...u16(height), ...u16(width), 1, 1, 0x11, 0])),
    Buffer.from(seg(0xc4, [0x00, ...oneCodeOfLength2, 0x00])),
    Buffer.from(seg(0xc4, [0x10, ...oneCodeOfLength2, 0x00])),
    Buffer.from(seg(0xda, [1, 1, 0x00, 0, 63, 0])),
    scan,
    Buffer.from([0xff, 0xd9]),
  ])
}

/** The classic 1×1 GIF. */
export const GIF_1X1 = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64')

/** Format and dimensions of an encoded PNG, JPEG or GIF, read from its header. */
export function imageInfo(bytes: Buffer): { format: 'png' | 'jpeg' | 'gif'; width: number; height: number } {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    expect(bytes.toString('latin1', 12, 16)).toBe('IHDR')
    return { format: 'png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
  }
  if (bytes.toString('latin1', 0, 4) === 'GIF8') {
    return { format: 'gif', width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) }
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    let i = 2
    while (i + 9 < bytes.length) {
      if (bytes[i] !== 0xff) throw new Error(`bad JPEG marker at ${i}`)
      const marker = bytes[i + 1]
      if (marker === 0xff) {
        i += 1
        continue
      }
      const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
      if (isSof) return { format: 'jpeg', height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) }
      i += 2 + bytes.readUInt16BE(i + 2)
    }
    throw new Error('JPEG without a frame header')
  }
  throw new Error(`not an image: ${bytes.subarray(0, 8).toString('hex')}`)
}

// ---------------------------------------------------------------------------------------
// Unified diffs

/** A text's lines, each with its '\n' if it has one. */
export const rawLines = (t: string): string[] => t.match(/[^\n]*\n|[^\n]+$/g) ?? []

/** A line as a unified diff shows it: one '\r' before its '\n' (or at the end of the text) kept out. */
export const shownInDiff = (line: string): string => {
  const nl = line.endsWith('\n')
  const body = nl ? line.slice(0, -1) : line
  return (body.endsWith('\r') ? body.slice(0, -1) : body) + (nl ? '\n' : '')
}

/** A text as a unified diff shows it (see `shownInDiff`). */
export const diffView = (t: string): string => rawLines(t).map(shownInDiff).join('')

/**
 * Applies a unified diff to `old` and returns the result as the diff shows text
 * (`diffView`), checking every context and removed line against `old` and every hunk's
 * counts, so a diff that `patch` would reject fails the test. (It takes LF,
 * CRLF and lone-CR lines alike.)
 */
export function applyUnifiedDiff(old: string, diff: string): string {
  const src = rawLines(old).map(shownInDiff)
  const lines = diff.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  let i = 0
  while (i < lines.length && !lines[i].startsWith('@@')) i++
  const out: string[] = []
  let pos = 0
  while (i < lines.length) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(lines[i])
    if (!m) throw new Error(`bad hunk header: ${JSON.stringify(lines[i])}`)
    const oldStart = Number(m[1])
    const oldCount = m[2] === undefined ? 1 : Number(m[2])
    const newCount = m[4] === undefined ? 1 : Number(m[4])
    const start = oldCount === 0 ? oldStart : oldStart - 1
    if (start < pos) throw new Error(`hunks overlap or go backwards at ${lines[i]}`)
    while (pos < start) out.push(src[pos++])
    i++
    let seenOld = 0
    let seenNew = 0
    while (i < lines.length && !lines[i].startsWith('@@')) {
      const line = lines[i]
      const noEol = lines[i + 1]?.startsWith('\\') ?? false
      const tag = line[0] ?? ' '
      const body = line.slice(1) + (noEol ? '' : '\n')
      if (tag === ' ' || tag === '-') {
        if (src[pos] !== body) throw new Error(`diff line ${JSON.stringify(line)} does not match old line ${pos + 1}: ${JSON.stringify(src[pos])}`)
        if (tag === ' ') out.push(body)
        pos++
        seenOld++
        if (tag === ' ') seenNew++
      } else if (tag === '+') {
        out.push(body)
        seenNew++
      } else if (tag !== '\\') {
        throw new Error(`bad diff line ${JSON.stringify(line)}`)
      }
      i++
      if (noEol) i++
    }
    if (seenOld !== oldCount || seenNew !== newCount) throw new Error(`hunk ${m[0]} counts ${seenOld}/${seenNew} lines`)
  }
  while (pos < src.length) out.push(src[pos++])
  return out.join('')
}

/** A `fetch` for an SDK client that records each request body and answers with the next canned JSON reply. */
export function cannedFetch(replies: unknown[]): { fetch: typeof globalThis.fetch; bodies: Array<Record<string, unknown>> } {
  const bodies: Array<Record<string, unknown>> = []
  const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
    bodies.push(JSON.parse(String(init?.body)))
    const reply = replies.shift()
    if (reply === undefined) throw new Error('the scripted model has no more replies')
    return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return { fetch: fetch as typeof globalThis.fetch, bodies }
}
