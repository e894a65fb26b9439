/**
 * Read (file_read / Read), SPEC §3.1 and §4: page format, pagination, long lines,
 * encodings, binaries, images, special files, size and token limits, dedup, concurrency.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

import { createToolkit, hashFile } from '../ts/index.js'
import {
  fails,
  GIF_1X1,
  imageInfo,
  jpegGray,
  ok,
  png,
  put,
  putLines,
  removeTempDirs,
  rng,
  tempDir,
  textOf,
  word,
  workspace,
  type Fixture,
} from './helpers.js'

const MILLION = 1_000_000
let ws: Fixture
/** The million-line file, generated once inside the shared workspace. */
let millionPath: string

/** Line i of the million-line file (also padded so the file is well over 10 MiB). */
const millionLine = (i: number) => `line ${i} of the big log ........`

beforeAll(() => {
  ws = workspace()
  millionPath = path.join(ws.dir, 'big', 'million.log')
  putLines(millionPath, MILLION, millionLine)
})

afterAll(removeTempDirs)

/** `count` lines `line 1` … `line count`, each ending in \n. */
const numbered = (count: number, from = 1) =>
  Array.from({ length: count }, (_, i) => `line ${from + i}`).join('\n') + '\n'

describe('page format', () => {
  it('numbers lines like cat -n: six columns right-aligned, a tab, the line', async () => {
    put(ws.dir, 'hello.txt', 'hello\nworld\n')
    const r = await ws.session.call('file_read', { path: 'hello.txt' })
    expect(ok(r)).toBe('     1\thello\n     2\tworld')
    expect(r.data).toMatchObject({ startLine: 1, endLine: 2, totalLines: 2, cutLines: 0 })
  })

  it('counts a last line without a final newline', async () => {
    put(ws.dir, 'nonl.txt', 'a\nb')
    const r = await ws.session.call('file_read', { path: 'nonl.txt' })
    expect(ok(r)).toBe('     1\ta\n     2\tb')
    expect(r.data?.totalLines).toBe(2)
  })

  it('keeps numbers aligned past six digits of width', async () => {
    const r = await ws.session.call('file_read', { path: millionPath, offset: 999_999, limit: 2 })
    expect(ok(r)).toBe(`999999\t${millionLine(999_999)}\n1000000\t${millionLine(MILLION)}`)
  })

  it('revka preset uses "N: text" closed by [Lines a-b of N]', async () => {
    const revka = workspace({ preset: 'revka' })
    put(revka.dir, 'a.txt', 'alpha\nbeta\ngamma\n')
    const r = await revka.session.call('file_read', { path: 'a.txt' })
    expect(ok(r)).toBe('1: alpha\n2: beta\n3: gamma\n[Lines 1-3 of 3]')
    const part = await revka.session.call('file_read', { path: 'a.txt', offset: 2, limit: 1 })
    expect(ok(part)).toBe('2: beta\n[Lines 2-2 of 3]\n… 1 more line; continue with offset=3')
  })

  it('the claude dialect (Read with file_path) gives the same lines, numbered as Claude Code 2.1 numbers them', async () => {
    put(ws.dir, 'claude.txt', 'one\ntwo\n')
    const r = await ws.session.call('Read', { file_path: 'claude.txt' })
    expect(ok(r)).toBe('1\tone\n2\ttwo')
  })
})

describe('offset and limit', () => {
  beforeAll(() => {
    put(ws.dir, 'ten.txt', numbered(10))
    put(ws.dir, 'long.txt', numbered(2500))
  })

  it('reads the requested range and says where to continue', async () => {
    const r = await ws.session.call('file_read', { path: 'ten.txt', offset: 3, limit: 2 })
    expect(ok(r)).toBe('     3\tline 3\n     4\tline 4\n… 6 more lines; continue with offset=5')
    expect(r.data).toMatchObject({ startLine: 3, endLine: 4, totalLines: 10, cutLines: 0 })
  })

  it('uses the singular for one remaining line', async () => {
    const r = await ws.session.call('file_read', { path: 'ten.txt', offset: 8, limit: 2 })
    expect(ok(r)).toBe('     8\tline 8\n     9\tline 9\n… 1 more line; continue with offset=10')
  })

  it('adds no continuation line on the last page', async () => {
    const r = await ws.session.call('file_read', { path: 'ten.txt', offset: 9, limit: 5 })
    expect(ok(r)).toBe('     9\tline 9\n    10\tline 10')
    expect(r.data).toMatchObject({ startLine: 9, endLine: 10, totalLines: 10 })
  })

  it('reads 2000 lines by default and ends with the continuation line', async () => {
    const r = await ws.session.call('file_read', { path: 'long.txt' })
    const lines = ok(r).split('\n')
    expect(lines).toHaveLength(2001)
    expect(lines[0]).toBe('     1\tline 1')
    expect(lines[1999]).toBe('  2000\tline 2000')
    expect(lines[2000]).toBe('… 500 more lines; continue with offset=2001')
    expect(r.data).toMatchObject({ startLine: 1, endLine: 2000, totalLines: 2500, cutLines: 0 })
  })

  it('continuing at the offset it names reads the rest', async () => {
    const r = await ws.session.call('file_read', { path: 'long.txt', offset: 2001 })
    const lines = ok(r).split('\n')
    expect(lines).toHaveLength(500)
    expect(lines[0]).toBe('  2001\tline 2001')
    expect(lines[499]).toBe('  2500\tline 2500')
    expect(r.data).toMatchObject({ startLine: 2001, endLine: 2500, totalLines: 2500 })
  })

  it('limits.readLines changes the default page size', async () => {
    const small = workspace({ limits: { readLines: 3 } })
    put(small.dir, 'ten.txt', numbered(10))
    const r = await small.session.call('file_read', { path: 'ten.txt' })
    expect(ok(r)).toBe('     1\tline 1\n     2\tline 2\n     3\tline 3\n… 7 more lines; continue with offset=4')
  })

  it('offset 0 means line 1', async () => {
    const s = ws.toolkit.createSession()
    const r = await s.call('file_read', { path: 'ten.txt', offset: 0, limit: 1 })
    expect(ok(r)).toBe('     1\tline 1\n… 9 more lines; continue with offset=2')
    expect(r.data).toMatchObject({ startLine: 1, endLine: 1 })
  })

  it('an offset past the end is INVALID_INPUT naming offset and the line count', async () => {
    for (const offset of [11, 5_000_000, Number.MAX_SAFE_INTEGER]) {
      const r = await ws.session.call('file_read', { path: 'ten.txt', offset })
      const text = fails(r, 'INVALID_INPUT')
      expect(r.data?.field).toBe('offset')
      expect(text).toMatch(/offset/)
      expect(text).toMatch(/\b10\b/)
    }
  })

  it('a huge limit is fine', async () => {
    const s = ws.toolkit.createSession()
    for (const limit of [1_000_000_000, Number.MAX_SAFE_INTEGER]) {
      const r = await s.call('file_read', { path: 'ten.txt', offset: 10, limit })
      expect(ok(r)).toBe('    10\tline 10')
      s.forgetReads()
    }
  })
})

describe('long lines', () => {
  it('cuts a 50,000-character line at 2000 characters with a visible marker', async () => {
    put(ws.dir, 'wide.txt', `${'x'.repeat(50_000)}\nshort\n`)
    const r = await ws.session.call('file_read', { path: 'wide.txt' })
    const [first, second] = ok(r).split('\n')
    expect(first.startsWith(`     1\t${'x'.repeat(2000)}`)).toBe(true)
    expect(first.match(/x/g)).toHaveLength(2000)
    const marker = first.slice(7 + 2000)
    expect(marker).toMatch(/cut/i)
    expect(marker).toContain('48,000')
    expect(first.length).toBeLessThan(2100)
    expect(second).toBe('     2\tshort')
    expect(r.data).toMatchObject({ cutLines: 1, totalLines: 2 })
  })

  it('counts characters, not bytes, when cutting multibyte text', async () => {
    put(ws.dir, 'wide-utf8.txt', `${'é'.repeat(3000)}\n`)
    const r = await ws.session.call('file_read', { path: 'wide-utf8.txt' })
    const text = ok(r)
    expect(text.match(/é/g)).toHaveLength(2000)
    expect(text).toContain('1,000')
    expect(text).not.toContain('\uFFFD')
    expect(r.data?.cutLines).toBe(1)
  })

  it('does not cut a line of exactly the limit; limits.readLineChars changes it', async () => {
    put(ws.dir, 'exact.txt', `${'y'.repeat(2000)}\n${'z'.repeat(11)}\n`)
    const r = await ws.session.call('file_read', { path: 'exact.txt' })
    expect(ok(r)).toBe(`     1\t${'y'.repeat(2000)}\n     2\t${'z'.repeat(11)}`)
    expect(r.data?.cutLines).toBe(0)

    const narrow = workspace({ limits: { readLineChars: 10 } }, ws.dir)
    const n = await narrow.session.call('file_read', { path: 'exact.txt' })
    const lines = ok(n).split('\n')
    expect(lines[0].startsWith(`     1\t${'y'.repeat(10)}`)).toBe(true)
    expect(lines[0]).not.toContain('y'.repeat(11))
    expect(lines[1].startsWith(`     2\t${'z'.repeat(10)}`)).toBe(true)
    expect(n.data?.cutLines).toBe(2)
  })
})

describe('encodings', () => {
  const sample = 'héllo\nwörld ✓\n'

  it('strips a UTF-8 BOM', async () => {
    put(ws.dir, 'bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(sample)]))
    const r = await ws.session.call('file_read', { path: 'bom.txt' })
    expect(ok(r)).toBe('     1\théllo\n     2\twörld ✓')
    expect(r.data?.encoding).toBe('utf-8-bom')
  })

  it('decodes UTF-16 LE with a BOM', async () => {
    const body = Buffer.from(sample, 'utf16le')
    put(ws.dir, 'le.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), body]))
    const r = await ws.session.call('file_read', { path: 'le.txt' })
    expect(ok(r)).toBe('     1\théllo\n     2\twörld ✓')
    expect(r.data?.encoding).toBe('utf-16le')
  })

  it('decodes UTF-16 BE with a BOM', async () => {
    const body = Buffer.from(sample, 'utf16le').swap16()
    put(ws.dir, 'be.txt', Buffer.concat([Buffer.from([0xfe, 0xff]), body]))
    const r = await ws.session.call('file_read', { path: 'be.txt' })
    expect(ok(r)).toBe('     1\théllo\n     2\twörld ✓')
    expect(r.data?.encoding).toBe('utf-16be')
  })

  it('shows CRLF lines without the \\r', async () => {
    put(ws.dir, 'crlf.txt', 'one\r\ntwo\r\nthree')
    const r = await ws.session.call('file_read', { path: 'crlf.txt' })
    const text = ok(r)
    expect(text).toBe('     1\tone\n     2\ttwo\n     3\tthree')
    expect(text).not.toContain('\r')
    expect(r.data?.totalLines).toBe(3)
  })

  it('decodes invalid UTF-8 lossily with U+FFFD and says so', async () => {
    put(ws.dir, 'latin1.txt', Buffer.concat([Buffer.from('ok\ncaf'), Buffer.from([0xe9]), Buffer.from(' au lait\n')]))
    const r = await ws.session.call('file_read', { path: 'latin1.txt' })
    const text = ok(r)
    expect(text.split('\n').slice(0, 2)).toEqual(['     1\tok', '     2\tcaf\uFFFD au lait'])
    expect(r.data?.lossy).toBe(true)
    expect(r.data?.kind).toBe('text')
  })
})

describe('chunk boundaries (the reader streams 256 KiB at a time)', () => {
  const CHUNK = 256 * 1024

  it.each([1, 2, 3])('a 4-byte UTF-8 character split %i byte(s) before a boundary is intact', async (k) => {
    const file = `split-utf8-${k}.txt`
    put(ws.dir, file, `${'x'.repeat(CHUNK - k - 1)}\n😀 end\n`)
    const r = await ws.session.call('file_read', { path: file, offset: 2, limit: 1 })
    expect(ok(r)).toBe('     2\t😀 end')
    expect(r.data).toMatchObject({ lossy: false, totalLines: 2 })
  })

  it.each([
    ['utf-16le', [0xff, 0xfe], (t: string) => Buffer.from(t, 'utf16le')],
    ['utf-16be', [0xfe, 0xff], (t: string) => Buffer.from(t, 'utf16le').swap16()],
  ] as const)('a %s surrogate pair split across a boundary is intact', async (encoding, bom, encode) => {
    // BOM (2 bytes) + 131,070 code units puts the emoji's high surrogate last in the first chunk.
    const text = `${'x'.repeat(131_069)}\n😀 end\nlast\n`
    const bytes = Buffer.concat([Buffer.from(bom), encode(text)])
    expect(bytes.subarray(CHUNK - 2, CHUNK + 2).equals(encode('😀'))).toBe(true)
    put(ws.dir, `split-${encoding}.txt`, bytes)
    const r = await ws.session.call('file_read', { path: `split-${encoding}.txt`, offset: 2 })
    expect(ok(r)).toBe('     2\t😀 end\n     3\tlast')
    expect(r.data).toMatchObject({ encoding, totalLines: 3, lossy: false })
  })

  it('a CRLF split across a boundary shows no \\r', async () => {
    const body = `${'w'.repeat(98)}\r\n`.repeat(2621) + `${'v'.repeat(43)}\r\nlast\r\n`
    expect(body.indexOf('v\r\n') + 1).toBe(CHUNK - 1)
    put(ws.dir, 'split-crlf.txt', body)
    const r = await ws.session.call('file_read', { path: 'split-crlf.txt', offset: 2622 })
    const text = ok(r)
    expect(text).toBe(`  2622\t${'v'.repeat(43)}\n  2623\tlast`)
    expect(text).not.toContain('\r')
  })

  it('a cut line whose CRLF straddles a boundary counts the cut characters without the \\r', async () => {
    put(ws.dir, 'split-crlf-long.txt', `${'y'.repeat(CHUNK - 1)}\r\nnext\r\n`)
    const r = await ws.session.call('file_read', { path: 'split-crlf-long.txt' })
    const [first, second] = ok(r).split('\n')
    expect(first).toContain((CHUNK - 1 - 2000).toLocaleString('en-US'))
    expect(first).not.toContain('\r')
    expect(second).toBe('     2\tnext')
    expect(r.data).toMatchObject({ cutLines: 1, totalLines: 2 })
  })
})

describe('binaries and PDFs', () => {
  it('gives a short notice, not garbage, for a file with NUL bytes', async () => {
    const bytes = Buffer.alloc(4096)
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff
    put(ws.dir, 'blob.dat', bytes)
    const r = await ws.session.call('file_read', { path: 'blob.dat' })
    const text = ok(r)
    expect(text.length).toBeLessThan(300)
    expect(text).toMatch(/binary/i)
    expect(text).toContain('4,096')
    expect(text).not.toContain('\0')
    expect(r.content).toHaveLength(1)
    expect(r.data).toMatchObject({ kind: 'binary', size: 4096 })
  })

  it('names an ELF executable', async () => {
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(120, 0)])
    put(ws.dir, 'prog', elf)
    const r = await ws.session.call('file_read', { path: 'prog' })
    const text = ok(r)
    expect(text.length).toBeLessThan(300)
    expect(text).toContain('ELF')
    expect(text).not.toContain('\0')
    expect(r.data?.kind).toBe('binary')
  })

  it('never returns the bytes of a PDF: a damaged one with no pages reads as having no text', async () => {
    const pdf = '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\nstream\nSECRET-RAW-BYTES\x00\x01\nendstream\n%%EOF\n'
    put(ws.dir, 'doc.pdf', pdf)
    put(ws.dir, 'doc-named.txt', pdf)
    for (const p of ['doc.pdf', 'doc-named.txt']) {
      const r = await ws.session.call('file_read', { path: p })
      // The table is rebuilt from the objects; the catalog has no pages, so no text.
      expect(ok(r)).toMatch(/^PDF contains no extractable text \(may be image-only or encrypted\)\n/)
      expect(r.data?.warning).toBe('PDF contains no extractable text (may be image-only or encrypted)')
      expect(r.data?.pageCount).toBe(0)
      expect(JSON.stringify(r)).not.toContain('SECRET-RAW-BYTES')
      expect(JSON.stringify(r)).not.toContain('%PDF-1.4')
      expect(r.content.every((b) => b.type === 'text')).toBe(true)
    }
  })
})

describe('images', () => {
  const decode = (r: Awaited<ReturnType<Fixture['session']['call']>>) => {
    const block = r.content.find((b) => b.type === 'image')
    expect(block, textOf(r)).toBeDefined()
    if (block?.type !== 'image') throw new Error('no image block')
    return { mimeType: block.mimeType, bytes: Buffer.from(block.data, 'base64') }
  }

  it('returns a small PNG as an image block, bytes unchanged', async () => {
    const bytes = png(16, 8)
    put(ws.dir, 'small.png', bytes)
    const r = await ws.session.call('file_read', { path: 'small.png' })
    expect(r.isError).toBe(false)
    const img = decode(r)
    expect(img.mimeType).toBe('image/png')
    expect(img.bytes.equals(bytes)).toBe(true)
    expect(r.data).toMatchObject({ kind: 'image', mimeType: 'image/png', width: 16, height: 8, resized: false })
  })

  it('returns a JPEG as an image/jpeg block', async () => {
    const bytes = jpegGray(24, 16)
    put(ws.dir, 'small.jpg', bytes)
    const r = await ws.session.call('file_read', { path: 'small.jpg' })
    expect(r.isError).toBe(false)
    const img = decode(r)
    expect(img.mimeType).toBe('image/jpeg')
    expect(imageInfo(img.bytes)).toEqual({ format: 'jpeg', width: 24, height: 16 })
    expect(r.data).toMatchObject({ width: 24, height: 16 })
  })

  it('returns a GIF as an image/gif block', async () => {
    put(ws.dir, 'dot.gif', GIF_1X1)
    const r = await ws.session.call('file_read', { path: 'dot.gif' })
    expect(decode(r).mimeType).toBe('image/gif')
  })

  it('detects images by content, not by extension', async () => {
    put(ws.dir, 'picture.txt', png(4, 4))
    const r = await ws.session.call('file_read', { path: 'picture.txt' })
    expect(decode(r).mimeType).toBe('image/png')

    put(ws.dir, 'notes.png', 'just text\n')
    const t = await ws.session.call('file_read', { path: 'notes.png' })
    expect(ok(t)).toBe('     1\tjust text')
  })

  it('downscales a 3000×100 RGB PNG to a long edge of 2000 px', async () => {
    put(ws.dir, 'wide.png', png(3000, 100))
    const r = await ws.session.call('file_read', { path: 'wide.png' })
    expect(r.isError).toBe(false)
    const img = decode(r)
    const info = imageInfo(img.bytes)
    expect(info.format).toBe(img.mimeType.slice('image/'.length))
    expect(Math.max(info.width, info.height)).toBeLessThanOrEqual(2000)
    expect(info.width).toBe(2000)
    expect(info.height).toBeGreaterThanOrEqual(66)
    expect(info.height).toBeLessThanOrEqual(67)
    expect(r.data).toMatchObject({ resized: true, originalWidth: 3000, originalHeight: 100, width: info.width, height: info.height })
    expect(textOf(r)).toContain('3000×100')
  })

  it('keeps alpha: a big RGBA PNG comes back as a smaller PNG', async () => {
    put(ws.dir, 'tall.png', png(50, 2600, { alpha: true }))
    const r = await ws.session.call('file_read', { path: 'tall.png' })
    const img = decode(r)
    expect(img.mimeType).toBe('image/png')
    expect(imageInfo(img.bytes)).toMatchObject({ format: 'png', height: 2000 })
  })

  it('downscales a big JPEG', async () => {
    put(ws.dir, 'wide.jpg', jpegGray(2400, 80))
    const r = await ws.session.call('file_read', { path: 'wide.jpg' })
    const img = decode(r)
    const info = imageInfo(img.bytes)
    expect(info.width).toBe(2000)
    expect(Math.max(info.width, info.height)).toBeLessThanOrEqual(2000)
  })

  it('honours limits.imageMaxEdge and limits.imageMaxBytes', async () => {
    const tight = workspace({ limits: { imageMaxEdge: 500, imageMaxBytes: 20_000 } }, ws.dir)
    put(ws.dir, 'wide-limits.png', png(3000, 100))
    const r = await tight.session.call('file_read', { path: 'wide-limits.png' })
    const info = imageInfo(decode(r).bytes)
    expect(Math.max(info.width, info.height)).toBe(500)

    put(ws.dir, 'noise.png', png(300, 300, { noise: true, level: 0 }))
    const n = await tight.session.call('file_read', { path: 'noise.png' })
    const img = decode(n)
    expect(img.bytes.length).toBeLessThanOrEqual(20_000)
    expect(n.data?.resized).toBe(true)
  })

  it('a corrupt image is an error, not garbage', async () => {
    put(ws.dir, 'broken.png', Buffer.concat([png(4, 4).subarray(0, 8), Buffer.from('not really a png at all')]))
    const r = await ws.session.call('file_read', { path: 'broken.png' })
    fails(r, 'INVALID_IMAGE')
    expect(r.content.every((b) => b.type === 'text')).toBe(true)
    expect(textOf(r).length).toBeLessThan(400)
  })
})

describe('empty files and special files', () => {
  it('reads an empty file as empty', async () => {
    put(ws.dir, 'empty.txt', '')
    const r = await ws.session.call('file_read', { path: 'empty.txt' })
    expect(ok(r)).toMatch(/empty/)
    expect(r.data).toMatchObject({ totalLines: 0, size: 0 })
  })

  it('reads /dev/null as empty', async () => {
    const r = await ws.toolkit.createSession().call('file_read', { path: '/dev/null' })
    expect(ok(r)).toMatch(/empty/)
    expect(r.data?.totalLines).toBe(0)
  })

  it.each(['/dev/zero', '/dev/urandom', '/dev/random'])('refuses %s with BLOCKED_DEVICE', async (dev) => {
    const r = await ws.session.call('file_read', { path: dev })
    expect(fails(r, 'BLOCKED_DEVICE')).toContain(dev)
  })

  it('refuses a symlink to /dev/zero inside the workspace', async () => {
    fs.symlinkSync('/dev/zero', path.join(ws.dir, 'zero-link'))
    fails(await ws.session.call('file_read', { path: 'zero-link' }), 'BLOCKED_DEVICE')
  })

  it('refuses a FIFO without hanging', async () => {
    const fifo = path.join(ws.dir, 'pipe')
    execFileSync('mkfifo', [fifo])
    const started = Date.now()
    const r = await Promise.race([
      ws.session.call('file_read', { path: 'pipe' }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('read of a FIFO hung')), 5000)),
    ])
    fails(r, 'BLOCKED_DEVICE')
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('refuses a Unix socket', async () => {
    const sock = path.join(ws.dir, 'app.sock')
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(sock, resolve))
    try {
      fails(await ws.session.call('file_read', { path: 'app.sock' }), 'BLOCKED_DEVICE')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  // The runner's worker has a pipe or socket on fd 0; skip only where stdin is /dev/null itself.
  const stdinIsNull = (() => {
    try {
      return fs.realpathSync('/dev/stdin') === '/dev/null'
    } catch {
      return false
    }
  })()
  it.skipIf(stdinIsNull)('refuses /dev/stdin (a pipe or socket here) with BLOCKED_DEVICE', async () => {
    const r = await ws.session.call('file_read', { path: '/dev/stdin' })
    fails(r, 'BLOCKED_DEVICE')
    fails(await ws.session.call('file_read', { path: '/proc/self/fd/0' }), 'BLOCKED_DEVICE')
  })

  it('a directory is IS_DIRECTORY', async () => {
    fs.mkdirSync(path.join(ws.dir, 'sub'), { recursive: true })
    for (const p of ['sub', '.', ws.dir]) {
      const text = fails(await ws.session.call('file_read', { path: p }), 'IS_DIRECTORY')
      expect(text).toMatch(/director/)
    }
  })

  it('a missing file is NOT_FOUND with a hint', async () => {
    const r = await ws.session.call('file_read', { path: 'nope/missing.txt' })
    const text = fails(r, 'NOT_FOUND')
    expect(text).toContain('nope/missing.txt')
  })

  it('a missing file suggests close names from its folder', async () => {
    put(ws.dir, 'near/util.ts', 'x\n')
    put(ws.dir, 'near/Index.ts', 'x\n')
    put(ws.dir, 'near/README.md', 'x\n')
    const s = ws.toolkit.createSession()
    const a = await s.call('file_read', { path: 'near/utils.ts' })
    expect(fails(a, 'NOT_FOUND')).toContain('Did you mean near/util.ts?')
    expect(a.data?.suggestions).toEqual(['near/util.ts'])
    expect(fails(await s.call('file_read', { path: 'near/index.ts' }), 'NOT_FOUND')).toContain('near/Index.ts')
    expect(fails(await s.call('file_read', { path: 'near/README.txt' }), 'NOT_FOUND')).toContain('near/README.md')
    const none = await s.call('file_read', { path: 'near/completely-different.ts' })
    expect(fails(none, 'NOT_FOUND')).not.toContain('Did you mean')
    expect(none.data?.suggestions).toEqual([])
  })
})

describe('big files', () => {
  it('refuses an unranged read of a file over 10 MiB with FILE_TOO_LARGE and a hint', async () => {
    expect(fs.statSync(millionPath).size).toBeGreaterThan(10 * 1024 * 1024)
    const r = await ws.session.call('file_read', { path: millionPath })
    const text = fails(r, 'FILE_TOO_LARGE')
    expect(text).toMatch(/offset/)
    expect(text).toMatch(/limit/)
    expect(text.length).toBeLessThan(500)
  })

  it('the same file reads with offset/limit', async () => {
    const r = await ws.session.call('file_read', { path: millionPath, offset: 1, limit: 3 })
    expect(ok(r)).toBe(
      `     1\t${millionLine(1)}\n     2\t${millionLine(2)}\n     3\t${millionLine(3)}\n… 999,997 more lines; continue with offset=4`,
    )
    expect(r.data?.totalLines).toBe(MILLION)
  })

  it('a limit alone also counts as ranged', async () => {
    const r = await ws.session.call('file_read', { path: millionPath, limit: 1 })
    expect(ok(r).split('\n')[0]).toBe(`     1\t${millionLine(1)}`)
  })

  it('reads near the end of a 1,000,000-line file', async () => {
    const r = await ws.session.call('file_read', { path: millionPath, offset: 999_990 })
    const lines = ok(r).split('\n')
    expect(lines).toHaveLength(11)
    for (const [k, line] of lines.entries()) expect(line).toBe(`${999_990 + k}\t${millionLine(999_990 + k)}`)
    expect(r.data).toMatchObject({ startLine: 999_990, endLine: MILLION, totalLines: MILLION })
  })

  it('limits.unrangedReadBytes lowers the threshold', async () => {
    const tight = workspace({ limits: { unrangedReadBytes: 100 } })
    put(tight.dir, 'small.txt', numbered(10))
    put(tight.dir, 'bigger.txt', numbered(100))
    ok(await tight.session.call('file_read', { path: 'small.txt' }))
    fails(await tight.session.call('file_read', { path: 'bigger.txt' }), 'FILE_TOO_LARGE')
    ok(await tight.session.call('file_read', { path: 'bigger.txt', offset: 1 }))
  })
})

describe('token limit', () => {
  let wordy: string
  beforeAll(() => {
    const rand = rng(1)
    const lines: string[] = []
    for (let i = 0; i < 2000; i++) lines.push(Array.from({ length: 18 }, () => word(rand, 5)).join(' '))
    wordy = put(ws.dir, 'w.txt', lines.join('\n') + '\n')
  })

  it('refuses 2000 lines over 25,000 tokens with a short error that names a limit that fits', async () => {
    const s = ws.toolkit.createSession()
    const r = await s.call('file_read', { path: 'w.txt' })
    const text = fails(r, 'TOKEN_LIMIT')
    expect(Buffer.byteLength(text)).toBeLessThan(300)
    expect(Buffer.byteLength(text)).toBeGreaterThan(60)
    expect(text).toContain('25,000')
    expect(text).toContain('2,000')
    const fit = r.data?.suggestedLimit
    expect(typeof fit).toBe('number')
    expect(fit as number).toBeGreaterThan(0)
    expect(fit as number).toBeLessThan(2000)
    expect(text).toContain(`limit=${fit as number}`)
    expect(r.data?.tokens as number).toBeGreaterThan(25_000)
    expect(text).toContain(Number(r.data?.tokens).toLocaleString('en-US'))

    const again = await s.call('file_read', { path: 'w.txt', offset: 1, limit: fit as number })
    ok(again)
    expect(again.data).toMatchObject({ startLine: 1, endLine: fit, totalLines: 2000 })
  })

  it('a huge limit on a big file is refused with a usable suggestion, counted or not', async () => {
    const s = ws.toolkit.createSession()
    for (const limit of [100_000, Number.MAX_SAFE_INTEGER]) {
      const r = await s.call('file_read', { path: millionPath, offset: 1, limit })
      const text = fails(r, 'TOKEN_LIMIT')
      expect(Buffer.byteLength(text)).toBeLessThan(300)
      expect(text).toContain('1,000,000')
      const fit = r.data?.suggestedLimit as number
      expect(fit).toBeGreaterThan(0)
      expect(text).toContain(`limit=${fit}`)
      const page = await s.call('file_read', { path: millionPath, offset: 1, limit: fit })
      expect(ok(page).split('\n')[0]).toBe(`     1\t${millionLine(1)}`)
      s.forgetReads()
    }
  })

  it('when not even one line fits, it suggests no limit (never limit 0)', async () => {
    const tiny = workspace({ limits: { readTokens: 5 } })
    put(tiny.dir, 'one.txt', 'hello world, this single line has far more than five tokens in it\nsecond\n')
    const r = await tiny.session.call('file_read', { path: 'one.txt' })
    const text = fails(r, 'TOKEN_LIMIT')
    expect(text).not.toContain('limit=0')
    expect(text).toMatch(/search/)
    const fit = r.data?.suggestedLimit
    expect(fit === null || (typeof fit === 'number' && fit >= 1), `suggestedLimit ${String(fit)} is not a valid limit`).toBe(true)
  })

  it('a later page with the suggested limit also fits', async () => {
    const s = ws.toolkit.createSession()
    const r = await s.call('file_read', { path: 'w.txt', offset: 1001 })
    fails(r, 'TOKEN_LIMIT')
    expect(textOf(r)).toContain('offset=1001')
    const fit = r.data?.suggestedLimit as number
    ok(await s.call('file_read', { path: 'w.txt', offset: 1001, limit: fit }))
  })

  it('limits.readTokens overrides the limit both ways', async () => {
    const low = workspace({ limits: { readTokens: 500 } }, ws.dir)
    put(ws.dir, 'w100.txt', fs.readFileSync(wordy, 'utf8').split('\n').slice(0, 100).join('\n') + '\n')
    const r = await low.session.call('file_read', { path: 'w100.txt' })
    fails(r, 'TOKEN_LIMIT')
    expect(r.data?.maxTokens).toBe(500)
    expect(textOf(r)).toContain('500')
    ok(await ws.toolkit.createSession().call('file_read', { path: 'w100.txt' }))

    const high = workspace({ limits: { readTokens: 1_000_000 } }, ws.dir)
    const all = await high.session.call('file_read', { path: 'w.txt' })
    expect(ok(all).split('\n')).toHaveLength(2000)
  })

  it('calls a custom countTokens only when the page is longer than the limit in bytes', async () => {
    const answer = 10
    const counter = vi.fn((_text: string) => answer)
    const custom = workspace({ countTokens: counter, limits: { readTokens: 1000 } })
    put(custom.dir, 'short.txt', numbered(20)) // ~280 bytes of page
    put(custom.dir, 'longer.txt', numbered(200)) // ~3,000 bytes of page

    ok(await custom.session.call('file_read', { path: 'short.txt' }))
    expect(counter).not.toHaveBeenCalled()

    ok(await custom.session.call('file_read', { path: 'longer.txt' }))
    expect(counter).toHaveBeenCalledTimes(1)
    expect(counter.mock.calls[0][0]).toContain('   200\tline 200')

    // Now count by length: the page is ~1,500 "tokens", over the 1,000 limit.
    counter.mockImplementation((t: string) => Math.ceil(t.length / 2))
    counter.mockClear()
    const r = await custom.toolkit.createSession().call('file_read', { path: 'longer.txt' })
    fails(r, 'TOKEN_LIMIT')
    expect(r.data).toMatchObject({ maxTokens: 1000 })
    expect(r.data?.tokens as number).toBeGreaterThan(1000)
    // The suggestion comes from a binary search over line prefixes: a handful of calls, and it fits.
    expect(counter.mock.calls.length).toBeLessThanOrEqual(10)
    const fit = r.data?.suggestedLimit as number
    expect(fit).toBeGreaterThan(0)
    expect(fit).toBeLessThan(200)
    ok(await custom.toolkit.createSession().call('file_read', { path: 'longer.txt', limit: fit }))
    fails(await custom.toolkit.createSession().call('file_read', { path: 'longer.txt', limit: fit + 1 }), 'TOKEN_LIMIT')
  })

  it('an async countTokens is awaited', async () => {
    const custom = workspace({ countTokens: async () => 99_999, limits: { readTokens: 1000 } })
    put(custom.dir, 'longer.txt', numbered(200))
    fails(await custom.session.call('file_read', { path: 'longer.txt' }), 'TOKEN_LIMIT')
  })
})

describe('dedup', () => {
  beforeAll(() => {
    put(ws.dir, 'dd.txt', numbered(50))
  })

  it('a re-read of the same range of an unchanged file is a short stub', async () => {
    const s = ws.toolkit.createSession()
    const first = await s.call('file_read', { path: 'dd.txt', offset: 1, limit: 10 })
    expect(ok(first)).toContain('     1\tline 1')
    expect(first.data?.unchanged).toBeUndefined()
    const again = await s.call('file_read', { path: 'dd.txt', offset: 1, limit: 10 })
    const text = ok(again)
    expect(Buffer.byteLength(text)).toBeLessThan(200)
    expect(text).not.toContain('line 1')
    expect(text).toMatch(/unchanged/)
    expect(again.data?.unchanged).toBe(true)
  })

  it('a different range is not a stub', async () => {
    const s = ws.toolkit.createSession()
    ok(await s.call('file_read', { path: 'dd.txt', offset: 1, limit: 10 }))
    const other = await s.call('file_read', { path: 'dd.txt', offset: 11, limit: 10 })
    expect(ok(other)).toContain('    11\tline 11')
    expect(other.data?.unchanged).toBeUndefined()
  })

  it('after a same-size modification the content is sent again', async () => {
    const s = ws.toolkit.createSession()
    put(ws.dir, 'mod.txt', 'aaaa\nbbbb\n')
    ok(await s.call('file_read', { path: 'mod.txt' }))
    put(ws.dir, 'mod.txt', 'aaaa\ncccc\n')
    const r = await s.call('file_read', { path: 'mod.txt' })
    expect(ok(r)).toBe('     1\taaaa\n     2\tcccc')
    expect(r.data?.unchanged).toBeUndefined()
  })

  it('session.forgetReads() turns the stub off for the next read', async () => {
    const s = ws.toolkit.createSession()
    ok(await s.call('file_read', { path: 'dd.txt' }))
    expect((await s.call('file_read', { path: 'dd.txt' })).data?.unchanged).toBe(true)
    s.forgetReads()
    const r = await s.call('file_read', { path: 'dd.txt' })
    expect(ok(r)).toContain('    50\tline 50')
    expect(r.data?.unchanged).toBeUndefined()
  })

  it('createSession({ dedup: false }) and toolkit dedup: false never stub', async () => {
    const s = ws.toolkit.createSession({ dedup: false })
    const off = workspace({ dedup: false }, ws.dir)
    for (const session of [s, off.session]) {
      for (let i = 0; i < 3; i++) {
        const r = await session.call('file_read', { path: 'dd.txt' })
        expect(ok(r)).toContain('    50\tline 50')
        expect(r.data?.unchanged).toBeUndefined()
      }
    }
    const on = off.toolkit.createSession({ dedup: true })
    ok(await on.call('file_read', { path: 'dd.txt' }))
    expect((await on.call('file_read', { path: 'dd.txt' })).data?.unchanged).toBe(true)
  })

  it('stubs unchanged images and binaries too', async () => {
    put(ws.dir, 'dd.png', png(8, 8))
    const s = ws.toolkit.createSession()
    expect((await s.call('file_read', { path: 'dd.png' })).content[0].type).toBe('image')
    const again = await s.call('file_read', { path: 'dd.png' })
    expect(again.data?.unchanged).toBe(true)
    expect(again.content.every((b) => b.type === 'text')).toBe(true)
    expect(Buffer.byteLength(textOf(again))).toBeLessThan(200)
  })

  it('sessions do not share dedup state', async () => {
    const a = ws.toolkit.createSession()
    const b = ws.toolkit.createSession()
    ok(await a.call('file_read', { path: 'dd.txt' }))
    const r = await b.call('file_read', { path: 'dd.txt' })
    expect(ok(r)).toContain('    50\tline 50')
    expect(r.data?.unchanged).toBeUndefined()
    expect((await a.call('file_read', { path: 'dd.txt' })).data?.unchanged).toBe(true)
  })
})

describe('content hash and concurrency', () => {
  it('data.contentHash is the file hash: stable while unchanged, new after a change', async () => {
    const s = ws.toolkit.createSession({ dedup: false })
    const file = put(ws.dir, 'h.txt', 'first\n')
    const a = (await s.call('file_read', { path: 'h.txt' })).data?.contentHash
    const b = (await s.call('file_read', { path: 'h.txt', offset: 1, limit: 1 })).data?.contentHash
    expect(a).toMatch(/^[0-9a-f]{32}$/)
    expect(b).toBe(a)
    expect(a).toBe(await hashFile(file))
    put(ws.dir, 'h.txt', 'second\n')
    const c = (await s.call('file_read', { path: 'h.txt' })).data?.contentHash
    expect(c).not.toBe(a)
    expect(c).toBe(await hashFile(file))
  })

  it('32 sessions reading at once all get correct results', async () => {
    const dir = tempDir('fsgate-read-conc-')
    const toolkit = createToolkit({ workspace: dir, policy: { allowedPaths: [path.dirname(millionPath)] } })
    for (let i = 0; i < 32; i++) put(dir, `f${i}.txt`, numbered(300, i * 1000))
    const jobs = Array.from({ length: 32 }, async (_, i) => {
      const session = toolkit.createSession()
      const own = await session.call('file_read', { path: `f${i}.txt`, offset: 100, limit: 2 })
      const shared = await session.call('file_read', { path: millionPath, offset: 500_000 + i, limit: 1 })
      return { i, own, shared }
    })
    const results = await Promise.all(jobs)
    for (const { i, own, shared } of results) {
      expect(ok(own)).toBe(`   100\tline ${i * 1000 + 99}\n   101\tline ${i * 1000 + 100}\n… 199 more lines; continue with offset=102`)
      expect(ok(shared).split('\n')[0]).toBe(`${500_000 + i}\t${millionLine(500_000 + i)}`)
      expect(shared.data?.totalLines).toBe(MILLION)
    }
  })
})

describe('regressions found in review', () => {
  it('a text file that mentions %PDF- is read as text', async () => {
    put(ws.dir, 'pdfsniff.js', 'const MAGIC = "%PDF-"\nexport default MAGIC\n')
    expect(ok(await ws.toolkit.createSession().call('file_read', { path: 'pdfsniff.js' }))).toBe('     1\tconst MAGIC = "%PDF-"\n     2\texport default MAGIC')
  })

  it('a damaged PDF is refused, and pages is checked before anything is read', async () => {
    put(ws.dir, 'doc.pdf', '%PDF-1.4\n%\u00e2\u00e3\n1 0 obj\n<<>>\nendobj\n')
    const s = ws.toolkit.createSession()
    fails(await s.call('file_read', { path: 'doc.pdf', pages: '1-3' }), 'INVALID_PDF')
    for (const bad of ['0', '3-1', 'x', '1,,2', '1-21']) {
      const r = await s.call('file_read', { path: 'doc.pdf', pages: bad })
      fails(r, 'INVALID_INPUT')
      expect(r.data?.field).toBe('pages')
    }
    put(ws.dir, 'notpdf.txt', 'a\n')
    const r = await s.call('Read', { file_path: 'notpdf.txt', pages: '1' })
    expect(fails(r, 'INVALID_INPUT')).toMatch(/only for PDF/)
  })

  it('UTF-32 is a notice, not text full of NULs; NUL bytes after a UTF-8 BOM are binary', async () => {
    const s = ws.toolkit.createSession()
    const utf32 = Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), Buffer.from('h\0\0\0i\0\0\0', 'latin1')])
    put(ws.dir, 'u32.txt', utf32)
    const r = await s.call('file_read', { path: 'u32.txt' })
    expect(ok(r)).toMatch(/UTF-32/)
    expect(ok(r)).not.toContain('\0')
    put(ws.dir, 'bomnul.txt', Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0, 0x62]))
    const b = await s.call('file_read', { path: 'bomnul.txt' })
    expect(b.data?.kind).toBe('binary')
    expect(ok(b)).not.toContain('\0')
  })

  it('an odd trailing byte in UTF-16 is shown as U+FFFD and flagged', async () => {
    put(ws.dir, 'odd16.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi\n', 'utf16le'), Buffer.from([0x41])]))
    const r = await ws.toolkit.createSession().call('file_read', { path: 'odd16.txt' })
    expect(ok(r)).toContain('\uFFFD')
    expect(r.data?.lossy).toBe(true)
  })

  it('an image declaring more pixels than imageMaxPixels is refused before decoding', async () => {
    put(ws.dir, 'wide.png', png(3000, 20))
    const tk = createToolkit({ workspace: ws.dir, limits: { imageMaxPixels: 10_000 } })
    const r = await tk.createSession().call('file_read', { path: 'wide.png' })
    expect(fails(r, 'FILE_TOO_LARGE')).toMatch(/3000×20 pixels/)
    const fine = await ws.toolkit.createSession().call('file_read', { path: 'wide.png' })
    expect(fine.isError).toBe(false)
    expect(fine.data).toMatchObject({ width: 2000, resized: true })
  })

  it('a corrupt image is INVALID_IMAGE', async () => {
    put(ws.dir, 'truncated.png', Buffer.concat([png(4000, 10).subarray(0, 40), Buffer.alloc(20)]))
    fails(await ws.toolkit.createSession().call('file_read', { path: 'truncated.png' }), 'INVALID_IMAGE')
  })

  it('TOKEN_LIMIT stays under 300 bytes even for a long path', async () => {
    const deep = path.join(...Array.from({ length: 12 }, (_, i) => `a-rather-long-folder-name-${i}`), 'file.txt')
    put(ws.dir, deep, numbered(2000))
    const tk = createToolkit({ workspace: ws.dir, limits: { readTokens: 100 } })
    const r = await tk.createSession().call('file_read', { path: deep })
    expect(Buffer.byteLength(fails(r, 'TOKEN_LIMIT'))).toBeLessThan(300)
  })

  describe('a host countTokens', () => {
    it('gets a suggested limit that really fits, even when lines differ in cost', async () => {
      // The first 50 lines are long, the rest short: a proportional guess would not fit.
      const body = Array.from({ length: 500 }, (_, i) => (i < 50 ? 'x'.repeat(400) : `l${i}`)).join('\n') + '\n'
      put(ws.dir, 'skewed.txt', body)
      const countTokens = (t: string) => Math.ceil(t.length / 4)
      const tk = createToolkit({ workspace: ws.dir, countTokens, limits: { readTokens: 3000 } })
      const r = await tk.createSession().call('file_read', { path: 'skewed.txt' })
      fails(r, 'TOKEN_LIMIT')
      const limit = r.data?.suggestedLimit as number
      expect(limit).toBeGreaterThan(0)
      const again = await tk.createSession().call('file_read', { path: 'skewed.txt', limit })
      expect(again.isError).toBe(false)
      const over = await tk.createSession().call('file_read', { path: 'skewed.txt', limit: limit + 1 })
      fails(over, 'TOKEN_LIMIT')
    })

    it.each([
      ['NaN', () => Number.NaN],
      ['a negative number', () => -1],
      ['a string', () => '12' as unknown as number],
      ['a throw', () => {
        throw new Error('quota exceeded')
      }],
    ])('that returns %s is an error, never a silent pass', async (_label, countTokens) => {
      put(ws.dir, 'counted.txt', numbered(3000))
      const tk = createToolkit({ workspace: ws.dir, countTokens, limits: { readTokens: 100 } })
      const r = await tk.createSession().call('file_read', { path: 'counted.txt' })
      expect(fails(r, 'INTERNAL')).toMatch(/countTokens/)
    })
  })
})
