/**
 * PDF text: pdf_read and PDF pages in Read / file_read. Page markers and layout, max_chars,
 * the no-text warning, unmapped characters, limits and errors; the text rules (line moves,
 * TJ gaps, glyph positions, ToUnicode, simple encodings, Type0, Type3, Form XObjects,
 * object streams, incremental updates, inline images, encryption, scaled and rotated
 * text); Read's page selection, token gate and dedup; and damaged or hostile files, each
 * of which must finish quickly.
 *
 * Every PDF is made by ./pdf-make.ts. The last block checks the test PDFs themselves with
 * qpdf --check and pdftotext (where installed), so a failure above is fsgate's, not the
 * fixture's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { ToolResult } from '../ts/index.js'
import { expectToolResult, fails, ok, put, removeTempDirs, rng, tempDir, textOf, word, workspace, type Fixture } from './helpers.js'
import {
  cidFont,
  deflatedZeros,
  encrypt,
  formXObject,
  hasPdftotext,
  hasQpdf,
  lit,
  PdfDoc,
  PdfWriter,
  pdftotext,
  qpdfCheck,
  type Resources,
  textPdf,
  toUnicodeCMap,
  type1Font,
  type3Font,
} from './pdf-make.js'
import { needs } from './peers.js'

const NO_TEXT = 'PDF contains no extractable text (may be image-only or encrypted)'
const MARKER = /^--- Page (\d+) of (\d+) ---$/
const TRUNCATED = /^\[… truncated/

// ---------------------------------------------------------------------------------------
// The test PDFs

/** A one-page document whose content is `ops`, with F1 = Helvetica (WinAnsi) unless `resources` says otherwise. */
function onePage(ops: string | ((doc: PdfDoc) => { ops: string; resources: Resources })): Buffer {
  const doc = new PdfDoc()
  if (typeof ops === 'string') {
    const f1 = type1Font(doc, 'Helvetica', { encoding: 'WinAnsiEncoding' })
    doc.page({ resources: { fonts: { F1: f1 } }, content: ops })
  } else {
    const made = ops(doc)
    doc.page({ resources: made.resources, content: made.ops })
  }
  return doc.build()
}

/** `count` pages, page i reading "This is page i" and "Line two of page i". */
const numberedPages = (count: number) => textPdf(Array.from({ length: count }, (_, i) => [`This is page ${i + 1}`, `Line two of page ${i + 1}`]))

/** Pages of pseudo-random words in small type: `pages` × `lines` lines of about 80 characters. */
function manyWords(pages: number, lines: number, seed = 1): Buffer {
  const rand = rng(seed)
  const text = Array.from({ length: pages }, (_, p) =>
    Array.from({ length: lines }, (_, l) => {
      let line = `p${p + 1} l${l + 1}`
      while (line.length < 75) line += ` ${word(rand, 2 + Math.floor(rand() * 8))}`
      return line
    }),
  )
  return textPdf(text, { size: 2, filter: 'flate' })
}

/** Helvetica's widths (1/1000 em) for "Hello" and "Hel": H 722, e 556, l 222, o 556. */
const HELLO = 22.78 // at 10 pt
const HEL = 15

interface Sample {
  build: () => Buffer
  /** Text pdftotext finds in it: checks the fixture, not fsgate (the last block). */
  poppler?: string[]
  /** Deliberately damaged: qpdf --check is not expected to pass. */
  broken?: true
  /** Needs qpdf to be made. */
  qpdf?: true
  /** The user password, for the fixture check. */
  password?: string
}

const SAMPLES = {
  'two-pages': { build: () => textPdf([['First page', 'has two lines'], ['Second page']]), poppler: ['First page', 'has two lines', 'Second page'] },
  'five-pages': { build: () => numberedPages(5), poppler: ['This is page 1', 'Line two of page 5'] },
  'twenty-five-pages': { build: () => numberedPages(25), poppler: ['This is page 25'] },
  'empty-middle': {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      doc.page({ resources: { fonts: { F1: f1 } }, content: `BT /F1 12 Tf 72 720 Td ${lit('Before the gap')} Tj ET` })
      doc.page({ resources: { fonts: { F1: f1 } }, content: '0 0 m 200 200 l S\n' })
      doc.page({ resources: { fonts: { F1: f1 } }, content: `BT /F1 12 Tf 72 720 Td ${lit('After the gap')} Tj ET` })
      return doc.build()
    },
    poppler: ['Before the gap', 'After the gap'],
  },
  'no-text': {
    build: () => {
      const doc = new PdfDoc()
      doc.page({ content: '0.5 g 72 72 200 200 re f\n' })
      doc.page({ content: '0 0 m 300 300 l S\n' })
      return doc.build()
    },
  },
  'line-moves': {
    build: () =>
      onePage(
        [
          'BT /F1 10 Tf 72 720 Td (one) Tj',
          '0 -14 Td (two) Tj',
          '0 -14 TD (three) Tj', // TD also sets the leading to 14
          '1 0 0 1 72 660 Tm (four) Tj',
          'T* (five) Tj',
          "(six) '",
          '0 0 (seven) "',
          'ET',
          'BT /F1 10 Tf 72 560 Td (eight) Tj ET',
        ].join('\n'),
      ),
    poppler: ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'],
  },
  'tj-gaps': {
    build: () =>
      onePage(
        [
          'BT /F1 10 Tf 14 TL 72 720 Td',
          '[(Hello) -300 (World)] TJ T*',
          '[(W) -20 (or) 15 (ld) -10 (s)] TJ T*',
          '[(Big) -3000 (gap)] TJ T*',
          '[(Kerned) -40 ( ) -40 (space)] TJ',
          'ET',
        ].join('\n'),
      ),
    poppler: ['Hello World', 'Worlds', 'Kerned space'],
  },
  'placed-words-helvetica': {
    // Helvetica without /Widths: the standard-14 metrics decide.
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      const ops = [
        'BT /F1 10 Tf 72 720 Td (Hello) Tj',
        `${HELLO} 0 Td (World) Tj`, // abuts "Hello"
        `${-HELLO} -20 Td (Hello) Tj`,
        `${HELLO + 5} 0 Td (World) Tj`, // 5 pt after it
        `${-(HELLO + 5)} -20 Td (Hel) Tj`,
        `${HEL + 0.3} 0 Td (lo) Tj`, // 0.3 pt: as good as abutting
        'ET',
      ]
      doc.page({ resources: { fonts: { F1: f1 } }, content: ops.join('\n') })
      return doc.build()
    },
    poppler: ['HelloWorld', 'Hello World', 'Hello'],
  },
  'placed-words-widths': {
    // A font that is not standard-14: only its /Widths (600 each) tell where a word ends.
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'TestMono', { encoding: 'WinAnsiEncoding', widths: { first: 32, widths: new Array(95).fill(600) } })
      const ops = [
        'BT /F1 10 Tf 72 720 Td (Hello) Tj',
        '30 0 Td (World) Tj', // 5 × 6 pt: abuts
        '-30 -20 Td (Hello) Tj',
        '36 0 Td (World) Tj', // 6 pt after it
        'ET',
      ]
      doc.page({ resources: { fonts: { F1: f1 } }, content: ops.join('\n') })
      return doc.build()
    },
    poppler: ['HelloWorld', 'Hello World'],
  },
  'to-unicode-wins': {
    build: () =>
      onePage((doc) => {
        const cmap = toUnicodeCMap(doc, {
          bfchar: [[0x41, 'X']],
          bfrange: [
            [0x42, 0x44, 'p'], // B C D → p q r
            [0x45, 0x46, ['Ω', 'fi']], // E → Ω, F → "fi"
          ],
        })
        const f1 = type1Font(doc, 'Helvetica', { encoding: 'WinAnsiEncoding', toUnicode: cmap })
        return { ops: `BT /F1 12 Tf 72 720 Td ${lit('ABCDEF')} Tj ET`, resources: { fonts: { F1: f1 } } }
      }),
    poppler: ['XpqrΩfi'],
  },
  'win-ansi': {
    build: () => onePage(`BT /F1 12 Tf 72 720 Td ${lit('caf\xe9 co\xfbte \x805 l\x92homme \x93quoted\x94')} Tj ET`),
    poppler: ['café coûte €5 l’homme “quoted”'],
  },
  'mac-roman': {
    build: () =>
      onePage((doc) => {
        const f1 = type1Font(doc, 'Helvetica', { encoding: 'MacRomanEncoding' })
        return { ops: `BT /F1 12 Tf 72 720 Td ${lit('caf\x8e Stra\xa7e \xd2hi\xd3')} Tj ET`, resources: { fonts: { F1: f1 } } }
      }),
    poppler: ['café Straße “hi”'],
  },
  'standard-encoding': {
    // 0x27 is quoteright, 0x60 quoteleft and 0xB1 endash in StandardEncoding (WinAnsi differs).
    build: () =>
      onePage((doc) => {
        const f1 = type1Font(doc, 'Helvetica', { encoding: 'StandardEncoding' })
        const f2 = type1Font(doc, 'Times-Roman') // no /Encoding: the built-in one, StandardEncoding
        const line = lit("it's 1\xb12 `q'")
        return { ops: `BT /F1 12 Tf 14 TL 72 720 Td ${line} Tj T* /F2 12 Tf ${line} Tj ET`, resources: { fonts: { F1: f1, F2: f2 } } }
      }),
    poppler: ['it’s 1–2 ‘q’'],
  },
  differences: {
    build: () =>
      onePage((doc) => {
        const f1 = type1Font(doc, 'Helvetica', { encoding: { base: 'WinAnsiEncoding', differences: [65, 'eacute', 'fi', 'uni20AC'] } })
        return { ops: `BT /F1 12 Tf 72 720 Td ${lit('cafA Bne 5C')} Tj ET`, resources: { fonts: { F1: f1 } } }
      }),
    poppler: ['café', 'ne 5€'],
  },
  unmapped: {
    // No ToUnicode, and /glyph123, /glyph124 are neither glyph names nor names that spell a
    // code (as g123 would: "{"): A and B cannot be mapped.
    build: () =>
      onePage((doc) => {
        const f1 = type1Font(doc, 'Helvetica', { encoding: { differences: [65, 'glyph123', 'glyph124'] } })
        return { ops: `BT /F1 12 Tf 72 720 Td ${lit('ABAB Cat')} Tj ET`, resources: { fonts: { F1: f1 } } }
      }),
  },
  cid: {
    build: () => {
      const doc = new PdfDoc()
      const lines = ['你好世界', '안녕하세요 세계', 'สวัสดีครับ', 'Emoji 😀 too']
      const font = cidFont(doc, lines.join(''))
      const ops = ['BT /F1 10 Tf 14 TL 72 720 Td', ...lines.map((l) => `${font.show(l)} Tj T*`), 'ET']
      doc.page({ resources: { fonts: { F1: font.ref } }, content: ops.join('\n') })
      // Page 2: a ToUnicode of bfrange runs (consecutive CIDs, consecutive characters).
      const ranged = cidFont(doc, 'αβγδε ABCDE', { ranges: true, baseFont: 'BBBBBB+Ranged' })
      doc.page({ resources: { fonts: { F1: ranged.ref } }, content: `BT /F1 10 Tf 72 720 Td ${ranged.show('αβγδε ABCDE')} Tj ET` })
      return doc.build()
    },
    poppler: ['你好世界', '안녕하세요 세계', 'สวัสดีครับ', 'Emoji 😀 too', 'αβγδε ABCDE'],
  },
  type3: {
    build: () =>
      onePage((doc) => {
        const font = type3Font(doc, 'Type3 glyphs')
        return { ops: `BT /T3 10 Tf 72 720 Td ${font.show('Type3 glyphs')} Tj ET`, resources: { fonts: { T3: font.ref } } }
      }),
    poppler: ['Type3 glyphs'],
  },
  forms: {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      const inner = formXObject(doc, `BT /F1 12 Tf 72 580 Td ${lit('Nested form text')} Tj ET`, { resources: { fonts: { F1: f1 } } })
      const outer = formXObject(doc, `BT /F1 12 Tf 72 700 Td ${lit('Form text')} Tj ET\n/Fm2 Do`, {
        resources: { fonts: { F1: f1 }, xobjects: { Fm2: inner } },
        matrix: [1, 0, 0, 1, 0, -50],
      })
      doc.page({
        resources: { fonts: { F1: f1 }, xobjects: { Fm1: outer } },
        content: `BT /F1 12 Tf 72 720 Td ${lit('Page text')} Tj ET\nq /Fm1 Do Q\nBT /F1 12 Tf 72 400 Td ${lit('Page end')} Tj ET`,
      })
      return doc.build()
    },
    poppler: ['Page text', 'Form text', 'Nested form text', 'Page end'],
  },
  'form-loops': {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      const self = doc.ref()
      formXObject(doc, `BT /F1 12 Tf 72 700 Td ${lit('Loop self')} Tj ET\n/Me Do`, { resources: { fonts: { F1: f1 }, xobjects: { Me: self } } }, self)
      const a = doc.ref()
      const b = doc.ref()
      formXObject(doc, `BT /F1 12 Tf 72 600 Td ${lit('Loop A')} Tj ET\n/B Do`, { resources: { fonts: { F1: f1 }, xobjects: { B: b } } }, a)
      formXObject(doc, `BT /F1 12 Tf 72 500 Td ${lit('Loop B')} Tj ET\n/A Do`, { resources: { fonts: { F1: f1 }, xobjects: { A: a } } }, b)
      doc.page({
        resources: { fonts: { F1: f1 }, xobjects: { Self: self, A: a } },
        content: `q /Self Do Q q /A Do Q\nBT /F1 12 Tf 72 300 Td ${lit('After the loops')} Tj ET`,
      })
      return doc.build()
    },
    poppler: ['Loop self', 'Loop A', 'Loop B', 'After the loops'],
  },
  'object-streams': {
    build: () => textPdf([['Packed in an object stream'], ['Found through an xref stream']], { xref: 'stream', filter: 'flate' }),
    poppler: ['Packed in an object stream', 'Found through an xref stream'],
  },
  filters: {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      const page = (text: string) => `BT /F1 12 Tf 72 720 Td ${lit(text)} Tj ET`
      doc.page({ resources: { fonts: { F1: f1 } }, content: page('Deflated text'), filter: 'flate' })
      doc.page({ resources: { fonts: { F1: f1 } }, content: page('Hex text'), filter: 'hex' })
      doc.page({ resources: { fonts: { F1: f1 } }, content: page('Base85 over deflate'), filter: ['a85', 'flate'] })
      doc.page({ resources: { fonts: { F1: f1 } }, content: [`BT /F1 12 Tf 72 720 Td ${lit('Split across')} Tj`, `( two streams) Tj ET`] })
      return doc.build()
    },
    poppler: ['Deflated text', 'Hex text', 'Base85 over deflate', 'Split across two streams'],
  },
  'inherited-tree': {
    // Resources only on the root /Pages node, and a tree three levels deep.
    build: () => {
      const doc = new PdfDoc({ fanout: 2 })
      doc.resources = { fonts: { F1: type1Font(doc, 'Helvetica') } }
      for (let i = 1; i <= 5; i++) doc.page({ content: `BT /F1 12 Tf 72 720 Td ${lit(`Leaf ${i}`)} Tj ET` })
      return doc.build()
    },
    poppler: ['Leaf 1', 'Leaf 5'],
  },
  'scaled-rotated': {
    build: () =>
      onePage(
        [
          'BT /F1 10 Tf 3 0 0 3 72 700 Tm [(Big) -300 (scaled)] TJ ET',
          'BT /F1 10 Tf 0.5 0 0 0.5 72 640 Tm (Small scaled text) Tj ET',
          `q 2 0 0 2 0 0 cm BT /F1 10 Tf 36 300 Td (Hello) Tj ${HELLO} 0 Td (World) Tj ${-HELLO} -10 Td (Hello) Tj ${HELLO + 5} 0 Td (World) Tj ET Q`,
          'BT /F1 10 Tf 0 1 -1 0 500 100 Tm (Rotated text) Tj ET',
        ].join('\n'),
      ),
    poppler: ['Big scaled', 'Small scaled text', 'HelloWorld', 'Hello World', 'Rotated text'],
  },
  'string-syntax': {
    // Escapes, an octal escape, a line continuation, hex strings with spaces and an odd digit.
    build: () =>
      onePage(
        [
          'BT /F1 12 Tf 14 TL 72 720 Td',
          '(Paren \\(x\\) back\\\\slash) Tj T*',
          '(\\124\\145\\170t in octal) Tj T*',
          '(con\\\ntinued) Tj T*',
          '<48656C6C6F 20 776F726C64> Tj T*',
          '<41424> Tj',
          'ET',
        ].join('\n'),
      ),
    poppler: ['Paren (x) back\\slash', 'Text in octal', 'continued', 'Hello world', 'AB@'],
  },
  rise: {
    // A superscript and a subscript (Ts, smaller size) stay on their line, joined to their word.
    build: () =>
      onePage('BT /F1 12 Tf 72 720 Td (E = mc) Tj 5 Ts /F1 8 Tf (2) Tj 0 Ts /F1 12 Tf ( and x) Tj -3 Ts /F1 8 Tf (i) Tj 0 Ts /F1 12 Tf ( too) Tj ET'),
    poppler: ['E = mc2 and xi too'],
  },
  'page-rotate': {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      for (const rotate of [90, 270]) {
        doc.page({ rotate, resources: { fonts: { F1: f1 } }, content: `BT /F1 12 Tf 14 TL 72 720 Td ${lit(`Page rotated ${rotate}`)} Tj T* ${lit('second line')} Tj ET` })
      }
      return doc.build()
    },
    poppler: ['Page rotated 90', 'Page rotated 270'],
  },
  'indirect-length': {
    build: () => {
      const doc = new PdfDoc()
      doc.indirectLengths = true
      const f1 = type1Font(doc, 'Helvetica')
      doc.page({ resources: { fonts: { F1: f1 } }, content: `BT /F1 12 Tf 72 720 Td ${lit('Length by reference')} Tj ET`, filter: 'flate' })
      return doc.build()
    },
    poppler: ['Length by reference'],
  },
  'inline-image': {
    // The image's 16 bytes of data look like text operators; they must not be read as such.
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      const data = Buffer.concat([Buffer.from('BT (x) Tj ET', 'latin1'), Buffer.from([0, 0xff, 0x0a, 0x29])])
      const content = Buffer.concat([
        Buffer.from(`BT /F1 12 Tf 72 720 Td ${lit('Before the image')} Tj ET\nq 40 0 0 40 72 600 cm\nBI /W 4 /H 4 /BPC 8 /CS /G ID `, 'latin1'),
        data,
        Buffer.from(`\nEI Q\nBT /F1 12 Tf 72 500 Td ${lit('After the image')} Tj ET\n`, 'latin1'),
      ])
      doc.page({ resources: { fonts: { F1: f1 } }, content })
      return doc.build()
    },
    poppler: ['Before the image', 'After the image'],
  },
  incremental: {
    // An incremental update gives page 1 new content: the newest revision is the one read.
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      const page = doc.page({ resources: { fonts: { F1: f1 } }, content: `BT /F1 12 Tf 72 720 Td ${lit('Old revision')} Tj ET` })
      const base = doc.build()
      const update = PdfWriter.updating(base)
      const content = update.stream({}, `BT /F1 12 Tf 72 720 Td ${lit('New revision')} Tj ET`)
      update.add(
        { Type: '/Page', Parent: doc.pagesRef, MediaBox: [0, 0, 612, 792], Resources: { Font: { F1: f1 } }, Contents: content },
        update.existing(page.num),
      )
      return update.bytes()
    },
    poppler: ['New revision'],
  },
  'many-words': { build: () => manyWords(14, 250), poppler: ['p1 l1', 'p14 l250'] },
  'token-heavy': { build: () => manyWords(2, 40, 7), poppler: ['p2 l40'] },
  'rc4-128': { build: () => encrypt(textPdf([['Secret but open', 'RC4 with 128 bits']]), { bits: 128 }), qpdf: true, poppler: ['Secret but open'] },
  'aes-256': {
    build: () => encrypt(textPdf([['Secret but open', 'AES with 256 bits']], { xref: 'stream' }), { bits: 256 }),
    qpdf: true,
    poppler: ['AES with 256 bits'],
  },
  'user-password': {
    build: () => encrypt(textPdf([['Locked text']]), { bits: 256, user: 'secret' }),
    qpdf: true,
    password: 'secret',
    poppler: ['Locked text'],
  },
  // Damaged and hostile files.
  truncated: {
    build: () => {
      const whole = numberedPages(5)
      return whole.subarray(0, whole.length >> 1)
    },
    broken: true,
  },
  'random-bytes': {
    build: () => {
      const rand = rng(99)
      return Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from(Array.from({ length: 65_536 }, () => Math.floor(rand() * 256)))])
    },
    broken: true,
  },
  'header-only': { build: () => Buffer.from('%PDF-1.7\n%%EOF\n'), broken: true },
  'not-a-pdf': { build: () => Buffer.from('This is a plain text file with a .pdf name.\n'), broken: true },
  'wrong-offsets': { build: () => textPdf([['Offsets are off']], { shiftOffsets: 7 }), broken: true, poppler: ['Offsets are off'] },
  'kids-loop': {
    build: () => {
      const w = new PdfWriter()
      const pages = w.ref()
      const page = w.ref()
      const f1 = type1Font(w, 'Helvetica')
      const content = w.stream({}, `BT /F1 12 Tf 72 720 Td ${lit('Before the loop')} Tj ET`)
      w.add({ Type: '/Page', Parent: pages, MediaBox: [0, 0, 612, 792], Resources: { Font: { F1: f1 } }, Contents: content }, page)
      w.add({ Type: '/Pages', Kids: [page, pages], Count: 2 }, pages)
      w.root = w.add({ Type: '/Catalog', Pages: pages })
      return w.bytes()
    },
    broken: true,
  },
  'kids-cycle': {
    build: () => {
      const w = new PdfWriter()
      const a = w.ref()
      const b = w.ref()
      w.add({ Type: '/Pages', Kids: [b], Count: 1 }, a)
      w.add({ Type: '/Pages', Parent: a, Kids: [a], Count: 1 }, b)
      w.root = w.add({ Type: '/Catalog', Pages: a })
      return w.bytes()
    },
    broken: true,
  },
  'inflate-bomb': {
    // 200 MiB of zeros in about 200 KB, then a stream with real text.
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      const bomb = doc.stream({ Filter: '/FlateDecode' }, deflatedZeros(200 << 20), { encoded: true })
      doc.page({ resources: { fonts: { F1: f1 } }, content: [bomb, `BT /F1 12 Tf 72 720 Td ${lit('After the bomb')} Tj ET`] })
      return doc.build()
    },
    poppler: ['After the bomb'],
  },
  'million-ops': {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica')
      // A page wide enough for the whole line: glyphs outside it would not be its text.
      doc.page({ resources: { fonts: { F1: f1 } }, content: `BT /F1 10 Tf 72 720 Td\n${'(a) Tj '.repeat(1_000_000)}\nET\n`, filter: 'flate', mediaBox: [0, 0, 6_000_000, 792] })
      return doc.build()
    },
    poppler: ['aaaaaaaaaa'],
  },
} satisfies Record<string, Sample>

type SampleName = keyof typeof SAMPLES

const built = new Map<SampleName, Buffer>()
function bytesOf(name: SampleName): Buffer {
  let b = built.get(name)
  if (!b) {
    b = (SAMPLES[name] as Sample).build()
    built.set(name, b)
  }
  return b
}

let ws: Fixture

/** Writes a sample into the workspace (once) and returns its relative path. */
function save(name: SampleName): string {
  const rel = `${name}.pdf`
  put(ws.dir, rel, bytesOf(name))
  return rel
}

beforeAll(() => {
  ws = workspace({ preset: 'revka' })
})

afterAll(removeTempDirs)

// ---------------------------------------------------------------------------------------
// Reading results

/** pdf_read in a fresh session (so no dedup can answer). */
function pdfRead(file: string, extra: Record<string, unknown> = {}, fixture: Fixture = ws): Promise<ToolResult> {
  return fixture.toolkit.createSession().call('pdf_read', { path: file, ...extra })
}

interface Page {
  n: number
  of: number
  lines: string[]
}

/** The pages of a PDF text result: each marker and the non-empty, trimmed lines after it. */
function pagesOf(text: string): Page[] {
  const pages: Page[] = []
  for (const line of text.split('\n')) {
    const m = MARKER.exec(line)
    if (m) {
      pages.push({ n: Number(m[1]), of: Number(m[2]), lines: [] })
      continue
    }
    if (TRUNCATED.test(line)) break
    expect(pages.length, `text before the first page marker: ${JSON.stringify(line)}`).toBeGreaterThan(0)
    if (line.trim() !== '') pages[pages.length - 1].lines.push(line.trim())
  }
  return pages
}

/** The lines of a one-page result. */
function onlyPage(r: ToolResult): string[] {
  const pages = pagesOf(ok(r))
  expect(pages.map((p) => [p.n, p.of])).toEqual([[1, 1]])
  return pages[0].lines
}

/** The numbers in a line ("1,234" counts as 1234). */
const numbersIn = (line: string) => (line.match(/\d[\d,]*/g) ?? []).map((s) => Number(s.replace(/,/g, '')))

/** Runs `call` and returns its result and how long it took. */
async function timed(call: () => Promise<ToolResult>): Promise<{ r: ToolResult; ms: number }> {
  const t0 = performance.now()
  const r = await call()
  return { r, ms: performance.now() - t0 }
}

// ---------------------------------------------------------------------------------------
// pdf_read

describe('pdf_read: output format', () => {
  it('marks each page "--- Page N of M ---" and separates pages by a blank line', async () => {
    const r = await pdfRead(save('two-pages'))
    expect(ok(r).trimEnd()).toBe('--- Page 1 of 2 ---\nFirst page\nhas two lines\n\n--- Page 2 of 2 ---\nSecond page')
    expect(r.data).toMatchObject({ pageCount: 2, unmapped: 0 })
    expect(r.data?.truncated).toBeFalsy()
    expect(r.data?.warning).toBeUndefined()
  })

  it('data.chars counts the text', async () => {
    const r = await pdfRead(save('five-pages'))
    const text = ok(r)
    const chars = r.data?.chars as number
    expect(Number.isInteger(chars)).toBe(true)
    // contract: whether the markers count is not said; the count is the text's length, give or take the five markers.
    expect(Math.abs(text.trimEnd().length - chars)).toBeLessThanOrEqual(5 * '--- Page 5 of 5 ---\n\n'.length)
    expect(chars).toBeGreaterThanOrEqual('This is page 1Line two of page 1'.length * 5)
  })

  it('gives every page a marker, even one without text, in page order', async () => {
    const r = await pdfRead(save('empty-middle'))
    const pages = pagesOf(ok(r))
    expect(pages.map((p) => [p.n, p.of])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ])
    expect(pages[0].lines).toEqual(['Before the gap'])
    expect(pages[2].lines).toEqual(['After the gap'])
    // contract: an empty page shows nothing, or one parenthesized notice such as "(no text on this page)".
    expect(pages[1].lines.length).toBeLessThanOrEqual(1)
    for (const line of pages[1].lines) expect(line).toMatch(/^\(.*\)$/)
    expect(r.data?.warning).toBeUndefined()
  })

  it('reads every page of a longer document, in order', async () => {
    const r = await pdfRead(save('twenty-five-pages'))
    const pages = pagesOf(ok(r))
    expect(pages.map((p) => p.n)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
    for (const p of pages) {
      expect(p.of).toBe(25)
      expect(p.lines).toEqual([`This is page ${p.n}`, `Line two of page ${p.n}`])
    }
    expect(r.data?.pageCount).toBe(25)
  })

  it('says so, as a success with data.warning, when no page has text', async () => {
    const r = await pdfRead(save('no-text'))
    const text = ok(r)
    expect(text).toContain(NO_TEXT)
    expect(r.data).toMatchObject({ warning: NO_TEXT, pageCount: 2 })
  })

  it('session.pdf is the typed form: it returns the output and throws the error classes', async () => {
    const session = ws.toolkit.createSession()
    const out = await session.pdf({ path: save('two-pages') })
    expect(out.data?.pageCount).toBe(2)
    await expect(session.pdf({ path: 'missing.pdf' })).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('is listed in the revka dialect, with path, max_chars and offset', () => {
    const defs = ws.toolkit.definitions({ dialect: 'revka', format: 'mcp' }) as Array<{ name: string; inputSchema: Record<string, unknown> }>
    const def = defs.find((d) => d.name === 'pdf_read')
    expect(def, defs.map((d) => d.name).join(', ')).toBeDefined()
    expect(Object.keys((def?.inputSchema.properties ?? {}) as object).sort()).toEqual(['max_chars', 'offset', 'path'])
  })
})

describe('pdf_read: max_chars', () => {
  /** The cut text (before the truncation line), the truncation line, and the counts it names. */
  function cut(r: ToolResult) {
    const text = ok(r)
    const lines = text.split('\n')
    const at = lines.findIndex((l) => TRUNCATED.test(l))
    expect(at, 'no "[… truncated" line').toBeGreaterThan(0)
    const shownText = lines.slice(0, at).join('\n')
    return { shownText, notice: lines[at], counts: numbersIn(lines[at]), after: lines.slice(at + 1).join('\n') }
  }

  it('cuts the text at max_chars, says how much was shown, and reads no page past the cut', async () => {
    const file = save('five-pages')
    const full = await pdfRead(file)
    const total = full.data?.chars as number
    const r = await pdfRead(file, { max_chars: 100 })
    const { shownText, notice, counts } = cut(r)
    // contract: max_chars bounds the text shown before the notice, markers included.
    expect(shownText.length).toBeLessThanOrEqual(100)
    expect(shownText.length).toBeGreaterThan(40)
    expect(shownText.startsWith('--- Page 1 of 5 ---\nThis is page 1')).toBe(true)
    expect(counts, 'the shown count').toContain(shownText.length)
    // The engine stopped at the cut: the document's length is not known, only that it is more.
    expect(notice).toMatch(/showing characters 1-100 of more than [\d,]+\. Continue with offset=100, /)
    expect(r.data).toMatchObject({ truncated: true, complete: false, pageCount: 5 })
    expect(r.data?.pagesRead as number).toBeLessThan(5)
    expect(r.data?.chars as number).toBeLessThan(total)
    expect(ok(full)).not.toMatch(/\[… truncated/m)
    expect(full.data).toMatchObject({ truncated: false, complete: true, pagesRead: 5 })
  })

  it('defaults to 50,000 characters', async () => {
    const r = await pdfRead(save('many-words'))
    const { shownText, counts } = cut(r)
    // contract: the cut falls at max_chars (perhaps at the line or word before it), not at a page break.
    expect(shownText.length).toBeLessThanOrEqual(50_000)
    expect(shownText.length).toBeGreaterThan(45_000)
    expect(r.data?.truncated).toBe(true)
    expect(r.data).toMatchObject({ complete: false })
    expect(r.data?.pagesRead as number).toBeLessThan(r.data?.pageCount as number)
    expect(counts).toContain(r.data?.chars)
    // The page names its last character; a page cut at a line keeps the line's newline.
    expect(counts).toContain(r.data?.shownChars)
    expect(ok(r).slice(0, r.data?.shownChars as number).replace(/\n$/, '')).toBe(shownText)
  })

  it('caps max_chars at 200,000 (under a result budget that would hold more)', async () => {
    const file = save('many-words')
    const wide = workspace({ preset: 'revka', limits: { resultTokens: 1_000_000 } }, ws.dir)
    for (const max of [200_000, 1_000_000]) {
      const r = await pdfRead(file, { max_chars: max }, wide)
      const { shownText } = cut(r)
      expect(shownText.length).toBeLessThanOrEqual(200_000)
      expect(shownText.length).toBeGreaterThan(190_000)
      expect(r.data?.truncated).toBe(true)
    }
  })

  it('does not cut text that fits, even when it fits exactly', async () => {
    const file = save('two-pages')
    const full = await pdfRead(file)
    const r = await pdfRead(file, { max_chars: full.data?.chars })
    expect(ok(r)).toBe(ok(full))
    expect(r.data?.truncated).toBeFalsy()
  })

  it.each([0, -1, 2.5, '100', null])('refuses max_chars %j with INVALID_INPUT naming the field', async (max_chars) => {
    const r = await pdfRead(save('two-pages'), { max_chars })
    fails(r, 'INVALID_INPUT')
    expect(r.data?.field).toBe('max_chars')
  })
})

describe('pdf_read: errors and limits', () => {
  it('a missing file is NOT_FOUND', async () => {
    fails(await pdfRead('no-such-file.pdf'), 'NOT_FOUND')
  })

  it.each(['not-a-pdf', 'header-only'] as const)('%s is INVALID_PDF with a short message', async (name) => {
    const r = await pdfRead(save(name))
    const text = fails(r, 'INVALID_PDF')
    expect(text).toMatch(/PDF/)
    expect(text.length).toBeLessThan(500)
    expectToolResult(r)
  })

  it('a PDF over limits.pdfMaxBytes is FILE_TOO_LARGE, for pdf_read and Read alike', async () => {
    const small = workspace({ preset: 'revka', limits: { pdfMaxBytes: 1000 } })
    const bytes = bytesOf('five-pages')
    expect(bytes.length).toBeGreaterThan(1000)
    put(small.dir, 'big.pdf', bytes)
    put(small.dir, 'tiny.pdf', bytesOf('header-only'))
    fails(await pdfRead('big.pdf', {}, small), 'FILE_TOO_LARGE')
    // contract: Read's PDF pages obey the same size limit.
    fails(await small.toolkit.createSession().call('Read', { file_path: 'big.pdf', pages: '1' }), 'FILE_TOO_LARGE')
    // Under the limit the size check passes and the file is judged on its content.
    fails(await pdfRead('tiny.pdf', {}, small), 'INVALID_PDF')
  })

  it('a PDF outside the workspace is PATH_OUTSIDE_WORKSPACE', async () => {
    const elsewhere = put(tempDir(), 'outside.pdf', bytesOf('two-pages'))
    fails(await pdfRead(elsewhere), 'PATH_OUTSIDE_WORKSPACE')
  })

  it('eight calls at once all get their own file right', async () => {
    const files = Array.from({ length: 8 }, (_, i) => {
      put(ws.dir, `conc-${i}.pdf`, textPdf([[`Concurrent file ${i}`]]))
      return `conc-${i}.pdf`
    })
    const results = await Promise.all(files.map((f) => pdfRead(f)))
    for (const [i, r] of results.entries()) expect(onlyPage(r)).toEqual([`Concurrent file ${i}`])
  })
})

describe('text: lines and words', () => {
  it('Td, TD, Tm, T*, \' and " each start a new line, as does a new BT at a lower y', async () => {
    const lines = onlyPage(await pdfRead(save('line-moves')))
    expect(lines).toEqual(['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'])
  })

  it('a large TJ gap is a space, kerning is not, and a word gap is one space however wide', async () => {
    const lines = onlyPage(await pdfRead(save('tj-gaps')))
    expect(lines).toEqual(['Hello World', 'Worlds', 'Big gap', 'Kerned space'])
  })

  it('words placed by Td on one baseline: joined when they abut, a space when a gap shows (Helvetica, no /Widths)', async () => {
    const lines = onlyPage(await pdfRead(save('placed-words-helvetica')))
    expect(lines).toEqual(['HelloWorld', 'Hello World', 'Hello'])
  })

  it('the same with a font that has /Widths and is not standard-14', async () => {
    const lines = onlyPage(await pdfRead(save('placed-words-widths')))
    expect(lines).toEqual(['HelloWorld', 'Hello World'])
  })

  it('string syntax: escapes, octal, a line continuation, hex strings with spaces and an odd last digit', async () => {
    expect(onlyPage(await pdfRead(save('string-syntax')))).toEqual(['Paren (x) back\\slash', 'Text in octal', 'continued', 'Hello world', 'AB@'])
  })

  it('a superscript and a subscript (Ts) stay on their line', async () => {
    // contract: text rise is not a line move; the raised glyph abuts its word, so no space is added.
    expect(onlyPage(await pdfRead(save('rise')))).toEqual(['E = mc2 and xi too'])
  })

  it('scaled (Tm, cm) and rotated text still reads', async () => {
    const lines = onlyPage(await pdfRead(save('scaled-rotated')))
    expect(lines).toContain('Big scaled')
    expect(lines).toContain('Small scaled text')
    expect(lines).toContain('HelloWorld')
    expect(lines).toContain('Hello World')
    expect(lines).toContain('Rotated text')
  })
})

describe('text: fonts and encodings', () => {
  it('a ToUnicode CMap (bfchar, bfrange, bfrange array) wins over /Encoding', async () => {
    const r = await pdfRead(save('to-unicode-wins'))
    expect(onlyPage(r)).toEqual(['XpqrΩfi'])
    expect(r.data?.unmapped).toBe(0)
  })

  it('WinAnsiEncoding: é, û, €, ’ and curly quotes', async () => {
    const r = await pdfRead(save('win-ansi'))
    expect(onlyPage(r)).toEqual(['café coûte €5 l’homme “quoted”'])
    expect(r.data?.unmapped).toBe(0)
  })

  it('MacRomanEncoding', async () => {
    expect(onlyPage(await pdfRead(save('mac-roman')))).toEqual(['café Straße “hi”'])
  })

  it('StandardEncoding, named and built in', async () => {
    expect(onlyPage(await pdfRead(save('standard-encoding')))).toEqual(['it’s 1–2 ‘q’', 'it’s 1–2 ‘q’'])
  })

  it('/Differences with glyph names (eacute, fi, uni20AC)', async () => {
    const r = await pdfRead(save('differences'))
    const [line, ...rest] = onlyPage(r)
    expect(rest).toEqual([])
    // contract: the fi ligature may come out as U+FB01 or as "fi".
    expect(line).toMatch(/^café (fi|ﬁ)ne 5€$/)
    expect(r.data?.unmapped).toBe(0)
  })

  it('codes that cannot be mapped are U+FFFD, counted in data.unmapped and noted at the end', async () => {
    const r = await pdfRead(save('unmapped'))
    const text = ok(r)
    const lines = text.trimEnd().split('\n')
    expect(lines[0]).toBe('--- Page 1 of 1 ---')
    expect(lines[1].trim()).toBe('\uFFFD\uFFFD\uFFFD\uFFFD Cat')
    expect(r.data?.unmapped).toBe(4)
    expect(text.match(/\uFFFD/g)?.length ?? 0).toBeGreaterThanOrEqual(4)
    const note = lines[lines.length - 1]
    expect(lines.length).toBeGreaterThan(2)
    expect(note).not.toContain('Cat')
    // contract: the note's wording is not fixed; it names the unmapped characters somehow.
    expect(note).toMatch(/unmapped|not be mapped|could not map|U\+FFFD|\uFFFD/i)
  })

  it('a Type0 Identity-H font with ToUnicode: Chinese, Korean, Thai and a character past U+FFFF', async () => {
    const r = await pdfRead(save('cid'))
    const pages = pagesOf(ok(r))
    expect(pages).toEqual([
      { n: 1, of: 2, lines: ['你好世界', '안녕하세요 세계', 'สวัสดีครับ', 'Emoji 😀 too'] },
      { n: 2, of: 2, lines: ['αβγδε ABCDE'] },
    ])
    expect(r.data?.unmapped).toBe(0)
  })

  it('a Type3 font through its ToUnicode (its glyph names mean nothing)', async () => {
    const r = await pdfRead(save('type3'))
    expect(onlyPage(r)).toEqual(['Type3 glyphs'])
    expect(r.data?.unmapped).toBe(0)
  })
})

describe('text: document structure', () => {
  it('includes the text of Form XObjects, nested ones too', async () => {
    expect(onlyPage(await pdfRead(save('forms')))).toEqual(['Page text', 'Form text', 'Nested form text', 'Page end'])
  })

  it('a Form XObject that paints itself, or two that paint each other, terminate', { timeout: 30_000 }, async () => {
    const { r, ms } = await timed(() => pdfRead(save('form-loops')))
    const text = ok(r)
    expect(ms).toBeLessThan(5_000)
    for (const t of ['Loop self', 'Loop A', 'Loop B']) {
      const n = text.split(t).length - 1
      expect(n, t).toBeGreaterThanOrEqual(1)
      expect(n, t).toBeLessThanOrEqual(100)
    }
    expect(text).toContain('After the loops')
  })

  it('reads a PDF 1.5 file with object streams and an xref stream', async () => {
    const pages = pagesOf(ok(await pdfRead(save('object-streams'))))
    expect(pages).toEqual([
      { n: 1, of: 2, lines: ['Packed in an object stream'] },
      { n: 2, of: 2, lines: ['Found through an xref stream'] },
    ])
  })

  it('decodes FlateDecode, ASCIIHexDecode and ASCII85Decode + FlateDecode, and a /Contents array', async () => {
    const pages = pagesOf(ok(await pdfRead(save('filters'))))
    expect(pages.map((p) => p.lines)).toEqual([['Deflated text'], ['Hex text'], ['Base85 over deflate'], ['Split across two streams']])
  })

  it('a page with /Rotate reads like any other', async () => {
    const pages = pagesOf(ok(await pdfRead(save('page-rotate'))))
    expect(pages.map((p) => p.lines)).toEqual([
      ['Page rotated 90', 'second line'],
      ['Page rotated 270', 'second line'],
    ])
  })

  it('a stream whose /Length is an indirect object', async () => {
    expect(onlyPage(await pdfRead(save('indirect-length')))).toEqual(['Length by reference'])
  })

  it('skips an inline image whose data looks like text operators', async () => {
    expect(onlyPage(await pdfRead(save('inline-image')))).toEqual(['Before the image', 'After the image'])
  })

  it('reads the newest revision of an incrementally updated file', async () => {
    const bytes = bytesOf('incremental')
    expect(bytes.toString('latin1').match(/%%EOF/g)).toHaveLength(2)
    expect(onlyPage(await pdfRead(save('incremental')))).toEqual(['New revision'])
  })

  it('finds pages through a deep page tree and uses the resources they inherit', async () => {
    const r = await pdfRead(save('inherited-tree'))
    expect(pagesOf(ok(r)).map((p) => p.lines)).toEqual([['Leaf 1'], ['Leaf 2'], ['Leaf 3'], ['Leaf 4'], ['Leaf 5']])
  })
})

needs({ qpdf: hasQpdf }, import.meta.url).describe('encrypted PDFs', () => {
  it('an empty user password (RC4-128) opens: the text is read', async () => {
    const r = await pdfRead(save('rc4-128'))
    expect(bytesOf('rc4-128').includes('/Encrypt')).toBe(true)
    expect(onlyPage(r)).toEqual(['Secret but open', 'RC4 with 128 bits'])
    expect(r.data?.encrypted).toBe(true)
  })

  it('an empty user password (AES-256) opens: the text is read', async () => {
    expect(onlyPage(await pdfRead(save('aes-256')))).toEqual(['Secret but open', 'AES with 256 bits'])
  })

  it('a user password gives the no-text warning, not an error', async () => {
    const r = await pdfRead(save('user-password'))
    const text = ok(r)
    expect(text).toContain(NO_TEXT)
    expect(text).not.toContain('Locked text')
    expect(r.data?.warning).toBe(NO_TEXT)
  })
})

// ---------------------------------------------------------------------------------------
// Read and file_read

describe('Read of a PDF', () => {
  const read = (input: Record<string, unknown>, session = ws.toolkit.createSession()) => session.call('Read', input)

  it('shows the selected pages in the pdf_read format', async () => {
    const file = save('five-pages')
    const r = await read({ file_path: file, pages: '2,4-5' })
    expect(ok(r).trimEnd()).toBe(
      [
        '--- Page 2 of 5 ---\nThis is page 2\nLine two of page 2',
        '--- Page 4 of 5 ---\nThis is page 4\nLine two of page 4',
        '--- Page 5 of 5 ---\nThis is page 5\nLine two of page 5',
      ].join('\n\n'),
    )
    expect(r.data).toMatchObject({ kind: 'pdf', pageCount: 5, pages: [2, 4, 5] })
  })

  it('file_read (revka, path) reads the same way', async () => {
    const r = await ws.toolkit.createSession().call('file_read', { path: save('five-pages'), pages: '3' })
    expect(pagesOf(ok(r))).toEqual([{ n: 3, of: 5, lines: ['This is page 3', 'Line two of page 3'] }])
    expect(r.data).toMatchObject({ kind: 'pdf', pageCount: 5, pages: [3] })
  })

  it('shows pages in page order whatever order they were asked in', async () => {
    const r = await read({ file_path: save('five-pages'), pages: '4,1-2' })
    expect(pagesOf(ok(r)).map((p) => p.n)).toEqual([1, 2, 4])
    expect(r.data?.pages).toEqual([1, 2, 4])
  })

  it('without pages, a PDF of up to 20 pages is read whole', async () => {
    const r = await read({ file_path: save('five-pages') })
    expect(pagesOf(ok(r)).map((p) => p.n)).toEqual([1, 2, 3, 4, 5])
    expect(r.data).toMatchObject({ kind: 'pdf', pageCount: 5, pages: [1, 2, 3, 4, 5] })
  })

  it('without pages, a PDF of more than 20 pages is INVALID_INPUT naming the count and pages', async () => {
    const file = save('twenty-five-pages')
    const text = fails(await read({ file_path: file }), 'INVALID_INPUT')
    expect(text).toMatch(/\b25\b/)
    expect(text).toMatch(/pages/)
    const tooMany = await read({ file_path: file, pages: '1-21' })
    fails(tooMany, 'INVALID_INPUT')
    expect(tooMany.data?.field).toBe('pages')
    const last = await read({ file_path: file, pages: '21-25' })
    expect(pagesOf(ok(last)).map((p) => [p.n, p.of])).toEqual([
      [21, 25],
      [22, 25],
      [23, 25],
      [24, 25],
      [25, 25],
    ])
  })

  it.each(['26', '3,26', '30-31'])('pages %s, past the last page, is INVALID_INPUT naming the page count', async (pages) => {
    const text = fails(await read({ file_path: save('twenty-five-pages'), pages }), 'INVALID_INPUT')
    expect(text).toMatch(/\b25\b/)
  })

  it('pages on a file that is not a PDF is still INVALID_INPUT', async () => {
    put(ws.dir, 'plain.txt', 'just text\n')
    expect(fails(await read({ file_path: 'plain.txt', pages: '1' }), 'INVALID_INPUT')).toMatch(/PDF/)
  })

  it('a damaged PDF is INVALID_PDF', async () => {
    fails(await read({ file_path: save('header-only') }), 'INVALID_PDF')
  })

  it('a page with a number past a million is INVALID_INPUT before anything is read', async () => {
    const r = await read({ file_path: save('token-heavy'), pages: '4294967297' })
    fails(r, 'INVALID_INPUT')
    expect(r.data?.field).toBe('pages')
  })

  it('a page over the token limit is TOKEN_LIMIT', async () => {
    const tight = workspace({ preset: 'revka', limits: { readTokens: 50 } }, ws.dir)
    const file = save('token-heavy')
    const session = tight.toolkit.createSession()
    fails(await session.call('Read', { file_path: file, pages: '1' }), 'TOKEN_LIMIT')
    // Refused pages were not delivered: asking again is refused again, not answered with the "unchanged" stub.
    fails(await session.call('Read', { file_path: file, pages: '1' }), 'TOKEN_LIMIT')
    fails(await tight.toolkit.createSession().call('Read', { file_path: file }), 'TOKEN_LIMIT')
    // The same pages fit the default limit.
    expect(pagesOf(ok(await read({ file_path: file, pages: '1' })))[0].lines).toHaveLength(40)
  })

  it('a re-read of the same pages of an unchanged PDF is a short stub; other pages are not', async () => {
    const file = save('five-pages')
    const s = ws.toolkit.createSession()
    const first = await read({ file_path: file, pages: '1-2' }, s)
    expect(ok(first)).toContain('This is page 1')
    expect(first.data?.unchanged).toBeUndefined()

    const again = await read({ file_path: file, pages: '1-2' }, s)
    const stub = ok(again)
    expect(Buffer.byteLength(stub)).toBeLessThan(200)
    expect(stub).toMatch(/unchanged/)
    expect(stub).not.toContain('This is page')
    expect(again.data?.unchanged).toBe(true)

    const other = await read({ file_path: file, pages: '3' }, s)
    expect(ok(other)).toContain('This is page 3')
    expect(other.data?.unchanged).toBeUndefined()
  })

  it('after the PDF changes, the same pages are sent again', async () => {
    put(ws.dir, 'changing.pdf', textPdf([['Old words']]))
    const s = ws.toolkit.createSession()
    expect(ok(await read({ file_path: 'changing.pdf' }, s))).toContain('Old words')
    put(ws.dir, 'changing.pdf', textPdf([['New words']]))
    const r = await read({ file_path: 'changing.pdf' }, s)
    expect(ok(r)).toContain('New words')
    expect(r.data?.unchanged).toBeUndefined()
  })
})

// ---------------------------------------------------------------------------------------
// Damaged and hostile files

describe('damaged and hostile PDFs finish quickly with INVALID_PDF or a result', () => {
  /**
   * Success, or INVALID_PDF. A success carries the page format, or the no-text warning;
   * when `expectedText` is given (the file's page has that text, and pdftotext finds it),
   * a success must show it: "no extractable text" would be a wrong answer, not a refusal.
   */
  function cleanOutcome(r: ToolResult, expectedText?: string) {
    expectToolResult(r)
    if (r.isError) {
      expect(r.error?.code, textOf(r)).toBe('INVALID_PDF')
      return
    }
    const text = textOf(r)
    if (expectedText) {
      expect(text).toMatch(/^--- Page 1 of \d+ ---$/m)
      expect(text).toContain(expectedText)
    } else if (r.data?.warning === NO_TEXT) {
      expect(text).toContain(NO_TEXT)
    } else {
      expect(text).toMatch(/^--- Page 1 of \d+ ---$/m)
    }
  }

  it.each([
    ['truncated', undefined],
    ['random-bytes', undefined],
    ['wrong-offsets', 'Offsets are off'],
    ['kids-loop', 'Before the loop'],
    ['kids-cycle', undefined],
  ] as const)('%s', { timeout: 30_000 }, async (name, expectedText) => {
    const file = save(name)
    for (const call of [() => pdfRead(file), () => ws.toolkit.createSession().call('Read', { file_path: file, pages: '1' })]) {
      const { r, ms } = await timed(call)
      expect(ms).toBeLessThan(5_000)
      if (r.isError && r.error?.code === 'INVALID_INPUT') continue // Read: page 1 may not exist in what could be recovered
      cleanOutcome(r, expectedText)
    }
  })

  it('a content stream that inflates to 200 MiB', { timeout: 60_000 }, async () => {
    const bytes = bytesOf('inflate-bomb')
    expect(bytes.length).toBeLessThan(400_000)
    const { r, ms } = await timed(() => pdfRead(save('inflate-bomb')))
    expect(ms).toBeLessThan(10_000)
    cleanOutcome(r)
  })

  it('a content stream of 1,000,000 text operators', { timeout: 60_000 }, async () => {
    const { r, ms } = await timed(() => pdfRead(save('million-ops')))
    expect(ms).toBeLessThan(5_000)
    const text = ok(r)
    expect(text.startsWith('--- Page 1 of 1 ---\naaaaaaaaaa')).toBe(true)
    // max_chars (50,000 by default) stops the interpreter well before the millionth operator.
    expect(r.data).toMatchObject({ truncated: true, complete: false, pagesRead: 1 })
  })
})

// ---------------------------------------------------------------------------------------
// The test PDFs themselves

describe('the test PDFs', () => {
  const all = Object.entries(SAMPLES) as Array<[SampleName, Sample]>

  needs({ qpdf: hasQpdf }, import.meta.url).describe('in qpdf', () => {
    it.each(all.filter(([, s]) => !s.broken))('%s passes qpdf --check', { timeout: 60_000 }, (name, sample) => {
      const { status, report } = qpdfCheck(bytesOf(name), sample.password)
      expect(status, report).toBe(0)
    })

    it('damaged samples really are damaged', () => {
      for (const name of ['truncated', 'random-bytes', 'header-only', 'not-a-pdf', 'kids-cycle'] as const) {
        expect(qpdfCheck(bytesOf(name)).status, name).not.toBe(0)
      }
    })
  })

  // The samples qpdf encrypts need it too.
  needs({ pdftotext: hasPdftotext }, import.meta.url).describe('in pdftotext', () => {
    it.each(all.filter(([, s]) => s.poppler && (!s.qpdf || hasQpdf)))('%s reads in pdftotext', { timeout: 60_000 }, (name, sample) => {
      const text = pdftotext(bytesOf(name), { password: sample.password })
      for (const expected of sample.poppler ?? []) expect(text, text.slice(0, 500)).toContain(expected)
    })
  })
})
