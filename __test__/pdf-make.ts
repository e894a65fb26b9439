/**
 * A small PDF writer for the PDF tests, with no dependencies: objects and streams
 * (FlateDecode, ASCIIHexDecode, ASCII85Decode, alone or chained), a classic xref table
 * or object streams with an xref stream (PDF 1.5), and the byte offsets done right.
 * On top of it: simple Type1 fonts with any encoding, ToUnicode CMaps, Type0 fonts with
 * a CIDFontType2 descendant, Type3 fonts, Form XObjects and page trees with inherited
 * resources. Content streams are written raw, so a test says exactly which operators a
 * page runs. Encryption is left to qpdf (`encrypt`), and `qpdfCheck` / `pdftotext`
 * let a test check that what it made is a valid PDF with the text it expects.
 *
 * ```ts
 * const doc = new PdfDoc()
 * const f1 = type1Font(doc, 'Helvetica')
 * doc.page({ resources: { fonts: { F1: f1 } }, content: `BT /F1 12 Tf 72 700 Td ${lit('Hello')} Tj ET` })
 * const bytes = doc.build() // or doc.build({ xref: 'stream' })
 * ```
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'

// ---------------------------------------------------------------------------------------
// Values

/** An indirect reference, written `N 0 R`. */
export class Ref {
  constructor(readonly num: number) {}
  toString(): string {
    return `${this.num} 0 R`
  }
}

/**
 * A PDF value. A JS string is written as it is (a name `/Font`, a literal `(text)`, a
 * hex string `<0041>`, an operator); build names and strings with `name`, `lit` and
 * `hexStr`. A plain object is a dictionary (its keys are names, `undefined` values are
 * left out); an array is an array.
 */
export type PdfValue = number | boolean | null | string | Ref | PdfValue[] | PdfDict
export interface PdfDict {
  [key: string]: PdfValue | undefined
}

/** A number as PDF writes it: no exponent, at most four decimals. */
export function num(x: number): string {
  if (!Number.isFinite(x)) throw new Error(`pdf-make: ${x} is not a PDF number`)
  if (Number.isInteger(x)) return String(x)
  const s = x.toFixed(4).replace(/0+$/, '').replace(/\.$/, '')
  return s === '-0' ? '0' : s
}

/** A name object: `/Name`, with `#xx` escapes for bytes that need them. */
export function name(n: string): string {
  let out = '/'
  for (const b of Buffer.from(n, 'utf8')) {
    const delimiter = '()<>[]{}/%#'.includes(String.fromCharCode(b))
    out += b < 0x21 || b > 0x7e || delimiter ? `#${b.toString(16).padStart(2, '0')}` : String.fromCharCode(b)
  }
  return out
}

/**
 * A literal string `(…)`. A JS string is taken as bytes 0–255 (so `'caf\xe9'` is the
 * byte 0xE9 that WinAnsi reads as é); bytes outside printable ASCII are written as
 * octal escapes, and `\`, `(`, `)` are escaped.
 */
export function lit(s: string | Uint8Array): string {
  const bytes = typeof s === 'string' ? latin1(s) : s
  let out = '('
  for (const b of bytes) {
    if (b === 0x5c || b === 0x28 || b === 0x29) out += `\\${String.fromCharCode(b)}`
    else if (b < 0x20 || b > 0x7e) out += `\\${b.toString(8).padStart(3, '0')}`
    else out += String.fromCharCode(b)
  }
  return `${out})`
}

/** A hex string `<…>` of bytes (a JS string is taken as bytes 0–255). */
export function hexStr(s: string | Uint8Array): string {
  const bytes = typeof s === 'string' ? latin1(s) : s
  return `<${Buffer.from(bytes).toString('hex').toUpperCase()}>`
}

/** Text as UTF-16BE hex digits (surrogate pairs for characters past U+FFFF), as ToUnicode CMaps want. */
export function utf16Hex(text: string): string {
  return Buffer.from(text, 'utf16le').swap16().toString('hex').toUpperCase()
}

/** The bytes of a string whose characters are all 0–255; anything else is a mistake in the test. */
export function latin1(s: string): Buffer {
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0xff) throw new Error(`pdf-make: ${JSON.stringify(s.slice(i, i + 8))} is not 8-bit; encode it (hexStr, a font's show) first`)
  }
  return Buffer.from(s, 'latin1')
}

/** Serializes a value into PDF syntax. */
export function serialize(v: PdfValue): string {
  if (v === null) return 'null'
  if (typeof v === 'number') return num(v)
  if (typeof v === 'boolean') return String(v)
  if (typeof v === 'string') return v
  if (v instanceof Ref) return v.toString()
  if (Array.isArray(v)) return `[${v.map(serialize).join(' ')}]`
  const parts: string[] = []
  for (const [k, value] of Object.entries(v)) if (value !== undefined) parts.push(`${name(k)} ${serialize(value)}`)
  return `<< ${parts.join(' ')} >>`
}

// ---------------------------------------------------------------------------------------
// Filters

/** A stream filter by its short name: FlateDecode, ASCIIHexDecode, ASCII85Decode. */
export type Filter = 'flate' | 'hex' | 'a85'

const FILTER_NAMES: Record<Filter, string> = { flate: '/FlateDecode', hex: '/ASCIIHexDecode', a85: '/ASCII85Decode' }

/** ASCII85 as PDF's ASCII85Decode reads it (`z` for four zero bytes, `~>` at the end). */
export function ascii85(data: Uint8Array): Buffer {
  let out = ''
  for (let i = 0; i < data.length; i += 4) {
    const n = Math.min(4, data.length - i)
    const group = [0, 0, 0, 0]
    for (let k = 0; k < n; k++) group[k] = data[i + k]
    let value = ((group[0] << 24) | (group[1] << 16) | (group[2] << 8) | group[3]) >>> 0
    if (n === 4 && value === 0) {
      out += 'z'
      continue
    }
    const digits = new Array<string>(5)
    for (let k = 4; k >= 0; k--) {
      digits[k] = String.fromCharCode(33 + (value % 85))
      value = Math.floor(value / 85)
    }
    out += digits.slice(0, n + 1).join('')
  }
  // Break long runs into lines; whitespace is ignored by the decoder.
  return Buffer.from(`${out.replace(/(.{72})/g, '$1\n')}~>`, 'latin1')
}

/** Encodes `data` for `filters`, listed in the order a reader applies them (the /Filter array's order). */
export function encodeFilters(data: Uint8Array, filters: Filter[]): Buffer {
  let out: Buffer = Buffer.from(data)
  for (const f of [...filters].reverse()) {
    if (f === 'flate') out = zlib.deflateSync(out)
    else if (f === 'hex') out = Buffer.from(`${out.toString('hex').toUpperCase().replace(/(.{64})/g, '$1\n')}>`, 'latin1')
    else out = ascii85(out)
  }
  return out
}

/**
 * A FlateDecode (zlib) stream that inflates to `bytes` zero bytes (a multiple of 1 MiB),
 * made without ever holding them: one fully flushed deflate block of 1 MiB of zeros
 * repeated (a full flush resets the window, so each copy stands alone), a final empty
 * block and the Adler-32 of the whole. 200 MiB of zeros comes to about 200 KB.
 */
export function deflatedZeros(bytes: number): Buffer {
  const MIB = 1 << 20
  if (bytes <= 0 || bytes % MIB !== 0) throw new Error('pdf-make: deflatedZeros wants a positive multiple of 1 MiB')
  const flushed = zlib.deflateSync(Buffer.alloc(MIB), { finishFlush: zlib.constants.Z_FULL_FLUSH })
  const block = flushed.subarray(2) // drop the zlib header; no final block, no checksum
  const adler = Buffer.alloc(4)
  adler.writeUInt32BE((((bytes % 65521) << 16) | 1) >>> 0) // a = 1 + 0s, b = the sum of n ones
  return Buffer.concat([flushed.subarray(0, 2), ...new Array<Buffer>(bytes / MIB).fill(block), Buffer.from([0x03, 0x00]), adler])
}

// ---------------------------------------------------------------------------------------
// The writer

export interface StreamOptions {
  /** Filters in the /Filter array's order (decode order); the data is encoded to match. */
  filter?: Filter | Filter[]
  /** The data is already encoded and `dict` names its filter: write it as it is. */
  encoded?: boolean
  /**
   * A /Length as damaged files have it (readers cope; see issue 22): `tight`, an indirect
   * number written `59endobj`; `comment`, an indirect number after a comment; `self`, a
   * reference to the stream itself; `wrong`, a direct number 7 too large.
   */
  length?: 'tight' | 'comment' | 'self' | 'wrong'
}

export interface WriteOptions {
  /** A classic xref table (default) or an xref stream (PDF 1.5). */
  xref?: 'table' | 'stream'
  /** With an xref stream: put every object that is not a stream in one object stream (default true). */
  objectStreams?: boolean
  /** With an xref stream: deflate the object stream and the xref stream (default true). */
  compress?: boolean
  /** The header's version; default 1.4 with a table, 1.5 with a stream. */
  version?: string
  /** Adds this to every offset in the xref (to make a file whose xref is wrong). */
  shiftOffsets?: number
}

type Obj = { kind: 'value'; value: PdfValue } | { kind: 'stream'; dict: PdfDict; data: Buffer } | { kind: 'raw'; body: string }

/** Objects by number, written out with correct offsets and a cross-reference section. */
export class PdfWriter {
  private readonly objects: Array<Obj | undefined> = [undefined]
  /** Numbers below this belong to the file being updated (see `updating`). */
  private baseSize = 0
  private base?: { bytes: Buffer; startxref: number }
  /** The catalog; `bytes()` writes it as the trailer's /Root. */
  root?: Ref
  /** The document information dictionary, if any. */
  info?: Ref
  /** Write each stream's /Length as a reference to an object holding the number (default false). */
  indirectLengths = false

  /**
   * A writer for an incremental update of `base` (a file with a classic xref table):
   * new objects are numbered after base's, `existing(n)` names one of base's objects to
   * replace, and `bytes()` returns base followed by the update, its xref section and a
   * trailer whose /Prev points at base's xref.
   */
  static updating(base: Buffer): PdfWriter {
    const text = base.toString('latin1')
    const last = (re: RegExp) => {
      const all = [...text.matchAll(re)]
      if (all.length === 0) throw new Error(`pdf-make: no ${re.source} in the base file`)
      return Number(all[all.length - 1][1])
    }
    const w = new PdfWriter()
    w.baseSize = last(/\/Size (\d+)/g)
    w.base = { bytes: base, startxref: last(/startxref\s+(\d+)/g) }
    w.root = new Ref(last(/\/Root (\d+) 0 R/g))
    while (w.objects.length < w.baseSize) w.objects.push(undefined)
    return w
  }

  /** One of the base file's objects, to be replaced with `add` or `stream` (see `updating`). */
  existing(num: number): Ref {
    if (num <= 0 || num >= this.baseSize) throw new Error(`pdf-make: ${num} is not an object of the base file`)
    return new Ref(num)
  }

  /** Reserves an object number, to be filled by `add` or `stream` with `at`. */
  ref(): Ref {
    this.objects.push(undefined)
    return new Ref(this.objects.length - 1)
  }

  /** Adds an object (at a reserved reference if given). */
  add(value: PdfValue, at: Ref = this.ref()): Ref {
    this.objects[at.num] = { kind: 'value', value }
    return at
  }

  /** Adds an object written as it is between `N 0 obj` and the line after it (`body` ends with its own `endobj`, or none). */
  raw(body: string, at: Ref = this.ref()): Ref {
    this.objects[at.num] = { kind: 'raw', body }
    return at
  }

  /** Adds a stream; /Length and /Filter are set from the data and options. */
  stream(dict: PdfDict, data: string | Uint8Array, options: StreamOptions = {}, at: Ref = this.ref()): Ref {
    const raw = typeof data === 'string' ? latin1(data) : Buffer.from(data)
    const filters = options.filter === undefined ? [] : Array.isArray(options.filter) ? options.filter : [options.filter]
    const full: PdfDict = { ...dict }
    let encoded = raw
    if (!options.encoded && filters.length > 0) {
      encoded = encodeFilters(raw, filters)
      full.Filter = filters.length === 1 ? FILTER_NAMES[filters[0]] : filters.map((f) => FILTER_NAMES[f])
    }
    if (this.indirectLengths) full.Length = this.add(encoded.length)
    if (options.length === 'tight') full.Length = this.raw(`\n${encoded.length}endobj`)
    if (options.length === 'comment') full.Length = this.raw(`% the length\n${encoded.length}\nendobj`)
    if (options.length === 'self') full.Length = at
    if (options.length === 'wrong') full.Length = encoded.length + 7
    this.objects[at.num] = { kind: 'stream', dict: full, data: encoded }
    return at
  }

  /** The whole file. */
  bytes(options: WriteOptions = {}): Buffer {
    if (!this.root) throw new Error('pdf-make: no /Root')
    if (this.base) return this.updateBytes(this.base)
    const useStream = options.xref === 'stream'
    const version = options.version ?? (useStream ? '1.5' : '1.4')
    const parts: Buffer[] = [Buffer.from(`%PDF-${version}\n%\xe2\xe3\xcf\xd3\n`, 'latin1')]
    let at = parts[0].length
    const emit = (b: Buffer) => {
      parts.push(b)
      at += b.length
    }
    const count = this.objects.length
    for (let i = 1; i < count; i++) if (!this.objects[i]) throw new Error(`pdf-make: object ${i} was reserved but never written`)

    const objectBytes = (i: number, obj: Obj): Buffer => {
      if (obj.kind === 'value') return Buffer.from(`${i} 0 obj\n${serialize(obj.value)}\nendobj\n`, 'latin1')
      if (obj.kind === 'raw') return Buffer.from(`${i} 0 obj${obj.body}\n`, 'latin1')
      return streamBytes(i, obj.dict, obj.data)
    }
    const shift = options.shiftOffsets ?? 0
    const id = `[<${'3a'.repeat(16)}> <${'3a'.repeat(16)}>]`

    if (!useStream) {
      const offsets = [0]
      for (let i = 1; i < count; i++) {
        offsets.push(at + shift)
        emit(objectBytes(i, this.objects[i] as Obj))
      }
      const xrefAt = at
      let table = `xref\n0 ${count}\n0000000000 65535 f\r\n`
      for (let i = 1; i < count; i++) table += `${String(offsets[i]).padStart(10, '0')} 00000 n\r\n`
      const trailer = serialize({ Size: count, Root: this.root, Info: this.info, ID: id })
      emit(Buffer.from(`${table}trailer\n${trailer}\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'))
      return Buffer.concat(parts)
    }

    // Object streams and an xref stream. Entries: [type, field2, field3] with W [1 4 2].
    const compress = options.compress ?? true
    const packed = options.objectStreams ?? true
    const entries: Array<[number, number, number]> = [[0, 0, 65535]]
    const inObjStm: number[] = []
    for (let i = 1; i < count; i++) if (packed && (this.objects[i] as Obj).kind === 'value') inObjStm.push(i)
    const objStmNum = inObjStm.length > 0 ? count : -1
    const xrefNum = inObjStm.length > 0 ? count + 1 : count
    for (let i = 1; i < count; i++) {
      const obj = this.objects[i] as Obj
      const slot = inObjStm.indexOf(i)
      if (slot >= 0) {
        entries[i] = [2, objStmNum, slot]
        continue
      }
      entries[i] = [1, at + shift, 0]
      emit(objectBytes(i, obj))
    }
    if (objStmNum > 0) {
      const bodies = inObjStm.map((i) => `${serialize((this.objects[i] as { value: PdfValue }).value)}\n`)
      let header = ''
      let offset = 0
      for (let k = 0; k < inObjStm.length; k++) {
        header += `${inObjStm[k]} ${offset} `
        offset += Buffer.byteLength(bodies[k], 'latin1')
      }
      header += '\n'
      const body = Buffer.from(header + bodies.join(''), 'latin1')
      let data = body
      const dict: PdfDict = { Type: '/ObjStm', N: inObjStm.length, First: Buffer.byteLength(header, 'latin1') }
      if (compress) {
        data = zlib.deflateSync(body)
        dict.Filter = '/FlateDecode'
      }
      entries[objStmNum] = [1, at + shift, 0]
      emit(objectBytes(objStmNum, { kind: 'stream', dict, data }))
    }
    const xrefAt = at
    entries[xrefNum] = [1, xrefAt + shift, 0]
    const rows = Buffer.alloc(entries.length * 7)
    entries.forEach(([t, f2, f3], i) => {
      rows.writeUInt8(t, i * 7)
      rows.writeUInt32BE(f2, i * 7 + 1)
      rows.writeUInt16BE(f3, i * 7 + 5)
    })
    const dict: PdfDict = { Type: '/XRef', Size: entries.length, W: [1, 4, 2], Root: this.root, Info: this.info, ID: id }
    let data = rows
    if (compress) {
      data = zlib.deflateSync(rows)
      dict.Filter = '/FlateDecode'
    }
    emit(objectBytes(xrefNum, { kind: 'stream', dict, data }))
    emit(Buffer.from(`startxref\n${xrefAt}\n%%EOF\n`, 'latin1'))
    return Buffer.concat(parts)
  }

  /** The base file, then the objects set since `updating`, an xref section of them and a trailer with /Prev. */
  private updateBytes(base: { bytes: Buffer; startxref: number }): Buffer {
    const parts: Buffer[] = [base.bytes, Buffer.from('\n', 'latin1')]
    let at = base.bytes.length + 1
    const offsets = new Map<number, number>()
    for (let i = 1; i < this.objects.length; i++) {
      const obj = this.objects[i]
      if (!obj) {
        if (i >= this.baseSize) throw new Error(`pdf-make: object ${i} was reserved but never written`)
        continue
      }
      offsets.set(i, at)
      const b =
        obj.kind === 'value'
          ? Buffer.from(`${i} 0 obj\n${serialize(obj.value)}\nendobj\n`, 'latin1')
          : obj.kind === 'raw'
            ? Buffer.from(`${i} 0 obj${obj.body}\n`, 'latin1')
            : streamBytes(i, obj.dict, obj.data)
      parts.push(b)
      at += b.length
    }
    // One subsection per run of consecutive numbers.
    const nums = [...offsets.keys()]
    let table = 'xref\n'
    for (let k = 0; k < nums.length; ) {
      let j = k
      while (j + 1 < nums.length && nums[j + 1] === nums[j] + 1) j++
      table += `${nums[k]} ${j - k + 1}\n`
      for (let m = k; m <= j; m++) table += `${String(offsets.get(nums[m])).padStart(10, '0')} 00000 n\r\n`
      k = j + 1
    }
    const trailer = serialize({ Size: this.objects.length, Root: this.root, Info: this.info, Prev: base.startxref })
    parts.push(Buffer.from(`${table}trailer\n${trailer}\nstartxref\n${at}\n%%EOF\n`, 'latin1'))
    return Buffer.concat(parts)
  }
}

function streamBytes(num: number, dict: PdfDict, data: Buffer): Buffer {
  const head = Buffer.from(`${num} 0 obj\n${serialize({ ...dict, Length: dict.Length ?? data.length })}\nstream\n`, 'latin1')
  return Buffer.concat([head, data, Buffer.from('\nendstream\nendobj\n', 'latin1')])
}

// ---------------------------------------------------------------------------------------
// Incremental updates with a cross-reference stream

export interface XrefStreamUpdate {
  /** Objects by number, as their bodies (what goes between `N 0 obj` and `endobj`). */
  objects: Array<[number, string | Buffer]>
  /** Deflate the xref stream with its final block (default true); false leaves it off, as some writers do. */
  finalBlock?: boolean
  /** Compress the xref stream with Brotli and name /BrotliDecode, a filter readers may not know. */
  brotli?: boolean
}

/**
 * `base` (a file with a classic table) followed by an update whose cross-reference
 * section is a stream (`/Type /XRef`, W [1 4 2]) with /Prev pointing at base's table.
 */
export function appendXrefStreamUpdate(base: Buffer, update: XrefStreamUpdate): Buffer {
  const text = base.toString('latin1')
  const last = (re: RegExp) => Number([...text.matchAll(re)].pop()?.[1])
  const size = last(/\/Size (\d+)/g)
  const root = last(/\/Root (\d+) 0 R/g)
  const prev = last(/startxref\s+(\d+)/g)
  const parts: Buffer[] = [base]
  let at = base.length
  const offsets = new Map<number, number>()
  for (const [num, body] of update.objects) {
    const b = Buffer.concat([Buffer.from(`${num} 0 obj\n`, 'latin1'), Buffer.from(body as string | Uint8Array), Buffer.from('\nendobj\n', 'latin1')])
    offsets.set(num, at)
    parts.push(b)
    at += b.length
  }
  const xrefNum = Math.max(size, ...offsets.keys()) + 1
  offsets.set(xrefNum, at)
  const nums = [...offsets.keys()].sort((a, b) => a - b)
  const rows = Buffer.alloc(nums.length * 7)
  nums.forEach((n, i) => {
    rows.writeUInt8(1, i * 7)
    rows.writeUInt32BE(offsets.get(n) as number, i * 7 + 1)
    rows.writeUInt16BE(0, i * 7 + 5)
  })
  const data = update.brotli
    ? zlib.brotliCompressSync(rows)
    : zlib.deflateSync(rows, update.finalBlock === false ? { finishFlush: zlib.constants.Z_SYNC_FLUSH } : {})
  const dict = serialize({
    Type: '/XRef',
    Size: xrefNum + 1,
    W: [1, 4, 2],
    Index: nums.flatMap((n) => [n, 1]),
    Root: new Ref(root),
    Prev: prev,
    Filter: update.brotli ? '/BrotliDecode' : '/FlateDecode',
    Length: data.length,
  })
  parts.push(Buffer.from(`${xrefNum} 0 obj\n${dict}\nstream\n`, 'latin1'), data, Buffer.from(`\nendstream\nendobj\nstartxref\n${at}\n%%EOF\n`, 'latin1'))
  return Buffer.concat(parts)
}

// ---------------------------------------------------------------------------------------
// Documents: pages, resources, forms

/** What a page or form uses, by resource name. */
export interface Resources {
  fonts?: Record<string, Ref>
  xobjects?: Record<string, Ref>
}

export function resourceDict(r: Resources): PdfDict {
  const dict: PdfDict = { ProcSet: ['/PDF', '/Text'] }
  if (r.fonts) dict.Font = Object.fromEntries(Object.entries(r.fonts))
  if (r.xobjects) dict.XObject = Object.fromEntries(Object.entries(r.xobjects))
  return dict
}

/** A content stream: text (8-bit), bytes, or several streams (a /Contents array; a `Ref` is a stream already added). */
export type Content = string | Uint8Array | Array<string | Uint8Array | Ref>

export interface PageSpec {
  content: Content
  /** Left out: the page inherits the tree's resources (`PdfDoc`'s `resources`). */
  resources?: Resources
  filter?: Filter | Filter[]
  mediaBox?: number[]
  /** The part of the page a viewer shows. */
  cropBox?: number[]
  rotate?: number
}

export interface DocOptions {
  /** Kids per /Pages node: with fewer kids than pages, the tree gets intermediate nodes. */
  fanout?: number
}

type TreeNode = { at: Ref; count: number; kids: TreeNode[] } | { at: Ref; count: 1; leaf: { at: Ref; spec: PageSpec } }

/** A document: a catalog, a page tree and its pages, on top of `PdfWriter`. */
export class PdfDoc extends PdfWriter {
  private readonly pageSpecs: Array<{ at: Ref; spec: PageSpec }> = []
  private readonly pagesRoot: Ref
  /** Resources on the root /Pages node, inherited by every page that has none of its own. */
  resources?: Resources

  constructor(private readonly options: DocOptions = {}) {
    super()
    this.pagesRoot = this.ref()
    this.root = this.add({ Type: '/Catalog', Pages: this.pagesRoot })
  }

  /** The root /Pages node. */
  get pagesRef(): Ref {
    return this.pagesRoot
  }

  /** Adds a page; its object is written by `build`. */
  page(spec: PageSpec): Ref {
    const at = this.ref()
    this.pageSpecs.push({ at, spec })
    return at
  }

  /** Writes the page tree and returns the file. */
  build(options: WriteOptions = {}): Buffer {
    const fanout = this.options.fanout ?? Number.MAX_SAFE_INTEGER
    if (fanout < 2) throw new Error('pdf-make: fanout must be at least 2')
    // Group leaves into nodes bottom-up until one node is left: that one is the root.
    let level: TreeNode[] = this.pageSpecs.map((p) => ({ at: p.at, count: 1 as const, leaf: p }))
    while (level.length > fanout) {
      const up: TreeNode[] = []
      for (let i = 0; i < level.length; i += fanout) {
        const kids = level.slice(i, i + fanout)
        up.push({ at: this.ref(), count: kids.reduce((sum: number, k) => sum + k.count, 0), kids })
      }
      level = up
    }
    const root: TreeNode = { at: this.pagesRoot, count: level.reduce((sum: number, k) => sum + k.count, 0), kids: level }
    const write = (node: TreeNode, parent: Ref | undefined) => {
      if ('leaf' in node) {
        const { spec } = node.leaf
        const streams = Array.isArray(spec.content) ? spec.content : [spec.content]
        const refs = streams.map((c) => (c instanceof Ref ? c : this.stream({}, c, { filter: spec.filter })))
        this.add(
          {
            Type: '/Page',
            Parent: parent,
            MediaBox: spec.mediaBox ?? [0, 0, 612, 792],
            CropBox: spec.cropBox,
            Rotate: spec.rotate,
            Resources: spec.resources ? resourceDict(spec.resources) : undefined,
            Contents: Array.isArray(spec.content) ? refs : refs[0],
          },
          node.at,
        )
        return
      }
      const isRoot = parent === undefined
      this.add(
        {
          Type: '/Pages',
          Parent: parent,
          Kids: node.kids.map((k) => k.at),
          Count: node.count,
          MediaBox: isRoot ? [0, 0, 612, 792] : undefined,
          Resources: isRoot && this.resources ? resourceDict(this.resources) : undefined,
        },
        node.at,
      )
      for (const kid of node.kids) write(kid, node.at)
    }
    write(root, undefined)
    return this.bytes(options)
  }
}

export interface FormOptions {
  resources?: Resources
  bbox?: number[]
  matrix?: number[]
  filter?: Filter | Filter[]
}

/** A Form XObject (painted with `/Name Do`); pass `at` to make one that refers to itself. */
export function formXObject(w: PdfWriter, content: string | Uint8Array, options: FormOptions = {}, at?: Ref): Ref {
  return w.stream(
    {
      Type: '/XObject',
      Subtype: '/Form',
      BBox: options.bbox ?? [0, 0, 612, 792],
      Matrix: options.matrix,
      Resources: options.resources ? resourceDict(options.resources) : undefined,
    },
    content,
    { filter: options.filter },
    at,
  )
}

// ---------------------------------------------------------------------------------------
// Fonts

export const STANDARD_14 = [
  'Times-Roman', 'Times-Bold', 'Times-Italic', 'Times-BoldItalic',
  'Helvetica', 'Helvetica-Bold', 'Helvetica-Oblique', 'Helvetica-BoldOblique',
  'Courier', 'Courier-Bold', 'Courier-Oblique', 'Courier-BoldOblique',
  'Symbol', 'ZapfDingbats',
] as const

/** A simple font's encoding: a base encoding by name, or a dictionary with /Differences. */
export type Encoding =
  | 'WinAnsiEncoding'
  | 'MacRomanEncoding'
  | 'StandardEncoding'
  | {
      base?: 'WinAnsiEncoding' | 'MacRomanEncoding' | 'StandardEncoding'
      /** As in the PDF: a code, then the glyph names (without the slash) from that code on. */
      differences: Array<number | string>
    }

export function encodingValue(e: Encoding): PdfValue {
  if (typeof e === 'string') return name(e)
  return {
    Type: '/Encoding',
    BaseEncoding: e.base ? name(e.base) : undefined,
    Differences: e.differences.map((d) => (typeof d === 'number' ? d : name(d))),
  }
}

export interface SimpleFontOptions {
  /** Left out: the font's built-in encoding. */
  encoding?: Encoding
  /** /FirstChar and /Widths (glyph widths in 1/1000 em; /LastChar follows). */
  widths?: { first: number; widths: number[] }
  toUnicode?: Ref
}

/**
 * A simple Type1 font, not embedded: a standard-14 name, or any other name (then a
 * /FontDescriptor is added, as the spec requires for a font that is not standard-14).
 */
export function type1Font(w: PdfWriter, baseFont = 'Helvetica', options: SimpleFontOptions = {}): Ref {
  const standard = (STANDARD_14 as readonly string[]).includes(baseFont)
  const dict: PdfDict = {
    Type: '/Font',
    Subtype: '/Type1',
    BaseFont: name(baseFont),
    Encoding: options.encoding ? encodingValue(options.encoding) : undefined,
    ToUnicode: options.toUnicode,
  }
  if (options.widths) {
    dict.FirstChar = options.widths.first
    dict.LastChar = options.widths.first + options.widths.widths.length - 1
    dict.Widths = options.widths.widths
  }
  if (!standard) {
    if (!options.widths) throw new Error(`pdf-make: ${baseFont} is not standard-14, so it needs widths`)
    dict.FontDescriptor = w.add({
      Type: '/FontDescriptor',
      FontName: name(baseFont),
      Flags: 32,
      FontBBox: [-200, -250, 1200, 950],
      ItalicAngle: 0,
      Ascent: 750,
      Descent: -250,
      CapHeight: 700,
      StemV: 80,
    })
  }
  return w.add(dict)
}

/** A ToUnicode CMap: `bfchar` maps one code to text, `bfrange` a run of codes (text whose last unit counts up, or an array). */
export interface CMapSpec {
  /** Code length in bytes: 1 for simple fonts (default), 2 for Identity-H. */
  codeBytes?: 1 | 2
  bfchar?: Array<[number, string]>
  bfrange?: Array<[number, number, string | string[]]>
}

export function toUnicodeCMap(w: PdfWriter, spec: CMapSpec, options: StreamOptions = {}): Ref {
  const width = (spec.codeBytes ?? 1) * 2
  const code = (c: number) => `<${c.toString(16).toUpperCase().padStart(width, '0')}>`
  const lines = [
    '/CIDInit /ProcSet findresource begin',
    '12 dict begin',
    'begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def',
    '/CMapName /Adobe-Identity-UCS def',
    '/CMapType 2 def',
    '1 begincodespacerange',
    `${code(0)} ${code(width === 2 ? 0xff : 0xffff)}`,
    'endcodespacerange',
  ]
  const chunks = <T>(xs: T[]) => Array.from({ length: Math.ceil(xs.length / 100) }, (_, i) => xs.slice(i * 100, i * 100 + 100))
  for (const chunk of chunks(spec.bfchar ?? [])) {
    lines.push(`${chunk.length} beginbfchar`)
    for (const [c, t] of chunk) lines.push(`${code(c)} <${utf16Hex(t)}>`)
    lines.push('endbfchar')
  }
  for (const chunk of chunks(spec.bfrange ?? [])) {
    lines.push(`${chunk.length} beginbfrange`)
    for (const [lo, hi, t] of chunk) {
      const dst = Array.isArray(t) ? `[${t.map((s) => `<${utf16Hex(s)}>`).join(' ')}]` : `<${utf16Hex(t)}>`
      lines.push(`${code(lo)} ${code(hi)} ${dst}`)
    }
    lines.push('endbfrange')
  }
  lines.push('endcmap', 'CMapName currentdict /CMap defineresource pop', 'end', 'end')
  return w.stream({}, `${lines.join('\n')}\n`, options)
}

/** A font that knows how to write text in its own codes. */
export interface CodedFont {
  ref: Ref
  /** The string operand (hex or literal) that shows `text` in this font. */
  show(text: string): string
}

export interface CidFontOptions {
  /** Write a ToUnicode CMap (default true). */
  toUnicode?: boolean
  /** In the ToUnicode CMap, map runs of CIDs with bfrange where text counts up by one (default false: all bfchar). */
  ranges?: boolean
  baseFont?: string
  /** The Adobe collection /CIDSystemInfo names (default Identity). */
  collection?: 'Japan1' | 'GB1' | 'CNS1' | 'Korea1'
  /** The CID of each character (default: 1, 2, … in order of first use). */
  cidOf?: (ch: string) => number
}

/**
 * A Type0 font, Identity-H, with a CIDFontType2 descendant (no embedded program): every
 * distinct character of `chars` gets a CID from 1 on, in order; widths come from /W.
 */
export function cidFont(w: PdfWriter, chars: string, options: CidFontOptions = {}): CodedFont {
  const cids = new Map<string, number>()
  for (const ch of chars) if (!cids.has(ch)) cids.set(ch, options.cidOf ? options.cidOf(ch) : cids.size + 1)
  const widthOf = (ch: string) => (ch === ' ' ? 250 : (ch.codePointAt(0) as number) < 0x2e80 ? 600 : 1000)
  const baseFont = options.baseFont ?? 'AAAAAA+TestCID'
  const descriptor = w.add({
    Type: '/FontDescriptor',
    FontName: name(baseFont),
    Flags: 4,
    FontBBox: [0, -150, 1000, 880],
    ItalicAngle: 0,
    Ascent: 880,
    Descent: -120,
    CapHeight: 700,
    StemV: 80,
  })
  const descendant = w.add({
    Type: '/Font',
    Subtype: '/CIDFontType2',
    BaseFont: name(baseFont),
    CIDSystemInfo: { Registry: '(Adobe)', Ordering: `(${options.collection ?? 'Identity'})`, Supplement: 0 },
    FontDescriptor: descriptor,
    CIDToGIDMap: '/Identity',
    DW: 1000,
    W: [...cids].flatMap(([ch, cid]) => [cid, [widthOf(ch)]]),
  })
  let toUnicode: Ref | undefined
  if (options.toUnicode ?? true) {
    const entries = [...cids].map(([ch, cid]) => [cid, ch] as [number, string])
    if (options.ranges) {
      // Runs of consecutive CIDs whose text is one BMP character counting up by one.
      const bfrange: Array<[number, number, string]> = []
      const bfchar: Array<[number, string]> = []
      for (let i = 0; i < entries.length; ) {
        let j = i
        const bmp = (k: number) => entries[k][1].length === 1
        while (j + 1 < entries.length && bmp(j) && bmp(j + 1) && entries[j + 1][1].charCodeAt(0) === entries[j][1].charCodeAt(0) + 1 && (entries[j + 1][0] & 0xff) !== 0 && (entries[j + 1][1].charCodeAt(0) & 0xff) !== 0) j++
        if (j > i) bfrange.push([entries[i][0], entries[j][0], entries[i][1]])
        else bfchar.push(entries[i])
        i = j + 1
      }
      toUnicode = toUnicodeCMap(w, { codeBytes: 2, bfchar, bfrange })
    } else {
      toUnicode = toUnicodeCMap(w, { codeBytes: 2, bfchar: entries })
    }
  }
  const ref = w.add({ Type: '/Font', Subtype: '/Type0', BaseFont: name(baseFont), Encoding: '/Identity-H', DescendantFonts: [descendant], ToUnicode: toUnicode })
  return {
    ref,
    show(text: string) {
      const codes = Buffer.alloc(Array.from(text).length * 2)
      let i = 0
      for (const ch of text) {
        const cid = cids.get(ch)
        if (cid === undefined) throw new Error(`pdf-make: ${JSON.stringify(ch)} is not in this CID font`)
        codes.writeUInt16BE(cid, i)
        i += 2
      }
      return hexStr(codes)
    },
  }
}

export interface Type3Options {
  /** Write a ToUnicode CMap (default true). */
  toUnicode?: boolean
  /** The glyph name of code `i` (1-based); default `g1`, `g2`, … (not glyph-list names). */
  glyphName?: (code: number, ch: string) => string
  /** The code of each character (default: 1, 2, … in order of first use). */
  codeOf?: (ch: string) => number
  /** Glyph units per em: FontMatrix is [1/u 0 0 1/u 0 0] and the glyphs are drawn to match (default 1000). */
  unitsPerEm?: number
}

/** A Type3 font whose glyphs are filled boxes: each distinct character of `chars` gets a code from 1 on. */
export function type3Font(w: PdfWriter, chars: string, options: Type3Options = {}): CodedFont {
  const codes = new Map<string, number>()
  for (const ch of chars) if (!codes.has(ch)) codes.set(ch, options.codeOf ? options.codeOf(ch) : codes.size + 1)
  if (codes.size > 255 || [...codes.values()].some((c) => c < 1 || c > 255)) throw new Error('pdf-make: a Type3 font holds codes 1-255 here')
  const glyphName = options.glyphName ?? ((code: number) => `g${code}`)
  const u = (options.unitsPerEm ?? 1000) / 1000
  const procs: PdfDict = {}
  const byCode = new Map<number, string>()
  for (const [ch, code] of codes) {
    const n = glyphName(code, ch)
    byCode.set(code, n)
    procs[n] = w.stream({}, ch === ' ' ? `${num(250 * u)} 0 d0\n` : `${num(600 * u)} 0 0 0 ${num(500 * u)} ${num(700 * u)} d1\n${num(50 * u)} 0 ${num(450 * u)} ${num(700 * u)} re f\n`)
  }
  const first = Math.min(...codes.values())
  const last = Math.max(...codes.values())
  const widths: number[] = []
  const differences: Array<number | string> = []
  for (let c = first; c <= last; c++) {
    const ch = [...codes].find(([, code]) => code === c)?.[0]
    widths.push(ch === undefined ? 0 : (ch === ' ' ? 250 : 600) * u)
    const n = byCode.get(c)
    if (n !== undefined) differences.push(c, name(n))
  }
  const toUnicode = (options.toUnicode ?? true) ? toUnicodeCMap(w, { bfchar: [...codes].map(([ch, code]) => [code, ch] as [number, string]) }) : undefined
  const ref = w.add({
    Type: '/Font',
    Subtype: '/Type3',
    FontBBox: [0, 0, 600 * u, 700 * u],
    FontMatrix: [0.001 / u, 0, 0, 0.001 / u, 0, 0],
    CharProcs: procs,
    Encoding: { Type: '/Encoding', Differences: differences },
    FirstChar: first,
    LastChar: last,
    Widths: widths,
    Resources: { ProcSet: ['/PDF'] },
    ToUnicode: toUnicode,
  })
  return {
    ref,
    show(text: string) {
      return lit(Buffer.from(Array.from(text, (ch) => {
        const c = codes.get(ch)
        if (c === undefined) throw new Error(`pdf-make: ${JSON.stringify(ch)} is not in this Type3 font`)
        return c
      })))
    },
  }
}

// ---------------------------------------------------------------------------------------
// Quick documents

export interface TextPdfOptions extends WriteOptions {
  /** Font size (default 12); lines are 1.2 × that apart, moved with T*. */
  size?: number
  /** Filters for the content streams (default none). */
  filter?: Filter | Filter[]
}

/**
 * A Helvetica (WinAnsi) document with one page per entry of `pages`, each page the given
 * lines from the top down, one `Tj` a line; line text is 8-bit (`'caf\xe9'`).
 */
export function textPdf(pages: string[][], options: TextPdfOptions = {}): Buffer {
  const doc = new PdfDoc()
  const f1 = type1Font(doc, 'Helvetica', { encoding: 'WinAnsiEncoding' })
  const size = options.size ?? 12
  for (const lines of pages) {
    const body = lines.map((l) => `${lit(l)} Tj T*`).join('\n')
    doc.page({
      resources: { fonts: { F1: f1 } },
      content: `BT\n/F1 ${size} Tf\n${num(size * 1.2)} TL\n72 720 Td\n${body}\nET\n`,
      filter: options.filter,
    })
  }
  return doc.build(options)
}

// ---------------------------------------------------------------------------------------
// External tools: qpdf for encryption and checks, pdftotext as a second opinion

function has(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** qpdf is on the PATH. */
export const hasQpdf = has('qpdf', ['--version'])
/** pdftotext (poppler-utils) is on the PATH. */
export const hasPdftotext = has('pdftotext', ['-v'])

/** Runs `cmd … in.pdf [out]` on a temp copy of `bytes`; returns the output file (or stdout) and the exit status. */
function runOnFile(cmd: string, args: (inFile: string, outFile: string) => string[], bytes: Uint8Array, okStatus: number[] = [0]): { out: Buffer; stdout: string; status: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-pdfmake-'))
  try {
    const inFile = path.join(dir, 'in.pdf')
    const outFile = path.join(dir, 'out')
    fs.writeFileSync(inFile, bytes)
    let stdout = ''
    let status = 0
    try {
      stdout = execFileSync(cmd, args(inFile, outFile), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 << 20 })
    } catch (err) {
      const e = err as { status?: number; stdout?: string; stderr?: string }
      status = e.status ?? -1
      stdout = `${e.stdout ?? ''}${e.stderr ?? ''}`
      if (!okStatus.includes(status)) throw new Error(`${cmd} failed (${status}): ${stdout}`)
    }
    const out = fs.existsSync(outFile) ? fs.readFileSync(outFile) : Buffer.alloc(0)
    return { out, stdout, status }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export interface EncryptOptions {
  /** The user password ('' opens the file without one). */
  user?: string
  owner?: string
  /** 128: RC4-128 (qpdf needs --allow-weak-crypto for it); 256: AES-256. */
  bits: 128 | 256
}

/** Encrypts a PDF with qpdf (`qpdf --encrypt user owner bits -- in out`). */
export function encrypt(bytes: Uint8Array, options: EncryptOptions): Buffer {
  const weak = options.bits === 128 ? ['--allow-weak-crypto'] : []
  const { out } = runOnFile(
    'qpdf',
    (i, o) => [...weak, '--encrypt', options.user ?? '', options.owner ?? 'owner', String(options.bits), '--', i, o],
    bytes,
  )
  return out
}

/** `qpdf --check`: the exit status (0 clean, 2 errors, 3 warnings) and its report. */
export function qpdfCheck(bytes: Uint8Array, password?: string): { status: number; report: string } {
  const pw = password === undefined ? [] : [`--password=${password}`]
  const r = runOnFile('qpdf', (i) => [...pw, '--check', i], bytes, [0, 2, 3])
  return { status: r.status, report: r.stdout }
}

/** What pdftotext makes of a PDF (`-enc UTF-8`, optionally a page range), or its error. */
export function pdftotext(bytes: Uint8Array, options: { first?: number; last?: number; password?: string } = {}): string {
  const extra = [
    ...(options.first ? ['-f', String(options.first)] : []),
    ...(options.last ? ['-l', String(options.last)] : []),
    ...(options.password ? ['-upw', options.password] : []),
  ]
  return runOnFile('pdftotext', (i) => ['-q', '-enc', 'UTF-8', ...extra, i, '-'], bytes).stdout
}
