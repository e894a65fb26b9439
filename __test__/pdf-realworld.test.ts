/**
 * PDF text: the causes issue 22 found in real-world files that came out wrong, each
 * reproduced by a generated PDF (./pdf-make.ts): Flate streams without a final block in
 * an appended xref stream, damaged /Length entries, junk before the header or none,
 * an inline /Root with no table, an unknown filter, Type 3 fonts with numeric glyph names
 * and their word gaps, CID fonts of an Adobe CJK collection with no ToUnicode, text
 * outside the crop box, GBK text in a simple font, right-to-left text, and pdf_read's
 * max_chars and Read's pages stopping the interpreter.
 *
 * The last block checks the fixtures with pdftotext where it is installed (required in
 * CI), so a failure above is fsgate's, not the fixture's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { ToolResult } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, workspace, type Fixture } from './helpers.js'
import {
  appendXrefStreamUpdate,
  cidFont,
  deflatedZeros,
  hasPdftotext,
  lit,
  PdfDoc,
  pdftotext,
  type StreamOptions,
  textPdf,
  type1Font,
  type3Font,
} from './pdf-make.js'

let ws: Fixture
beforeAll(() => {
  ws = workspace({ preset: 'revka' })
})
afterAll(removeTempDirs)

function pdfRead(bytes: Buffer, name: string, extra: Record<string, unknown> = {}): Promise<ToolResult> {
  put(ws.dir, name, bytes)
  return ws.toolkit.createSession().call('pdf_read', { path: name, ...extra })
}

/** The text of each page of a pdf_read result, without markers. */
function pages(r: ToolResult): string[] {
  const out: string[] = []
  for (const line of ok(r).split('\n')) {
    if (/^--- Page \d+ of \d+ ---$/.test(line)) out.push('')
    else if (/^\[… truncated/.test(line)) break
    else if (out.length > 0) out[out.length - 1] += (out[out.length - 1] ? '\n' : '') + line
  }
  return out.map((p) => p.trim())
}

/** A Helvetica page showing `lines`, its content stream written with `stream` options. */
function helvetica(lines: string[], stream: StreamOptions = {}): Buffer {
  const doc = new PdfDoc()
  const f1 = type1Font(doc, 'Helvetica', { encoding: 'WinAnsiEncoding' })
  const body = lines.map((l) => `${lit(l)} Tj T*`).join(' ')
  const content = doc.stream({}, `BT /F1 12 Tf 14 TL 72 720 Td ${body} ET`, stream)
  doc.page({ resources: { fonts: { F1: f1 } }, content: [content] })
  return doc.build()
}

// Every fixture, built once: name → [bytes, the text pdftotext finds in it (or null when it cannot be asked)].
const FIXTURES: Record<string, { build: () => Buffer; poppler?: string[] }> = {
  'flate-without-final-block': {
    build: () => {
      const base = helvetica(['Before the update'])
      // Replace the content stream (object 4 in helvetica's numbering is the stream; find it).
      const content = 'BT /F1 12 Tf 72 720 Td (After the update) Tj ET'
      const num = contentObject(base)
      return appendXrefStreamUpdate(base, { objects: [[num, `<< /Length ${content.length} >>\nstream\n${content}\nendstream`]], finalBlock: false })
    },
    poppler: ['After the update'],
  },
  'xref-stream-brotli': {
    build: () => {
      const base = helvetica(['Base text'])
      const content = 'BT /F1 12 Tf 72 720 Td (Updated text) Tj ET'
      return appendXrefStreamUpdate(base, { objects: [[contentObject(base), `<< /Length ${content.length} >>\nstream\n${content}\nendstream`]], brotli: true })
    },
  },
  'length-tight': { build: () => helvetica(['Length 59endobj'], { length: 'tight' }), poppler: ['Length 59endobj'] },
  'length-comment': { build: () => helvetica(['Length after a comment'], { length: 'comment' }), poppler: ['Length after a comment'] },
  'length-self': { build: () => helvetica(['Length of itself'], { length: 'self' }), poppler: ['Length of itself'] },
  'length-wrong': { build: () => helvetica(['Length too long'], { length: 'wrong' }), poppler: ['Length too long'] },
  'junk-before-header': {
    // Offsets counted from the header, as a file wrapped by a mail or web server has them.
    build: () => Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n'), textPdf([['Behind some junk']])]),
    poppler: ['Behind some junk'],
  },
  'junk-before-header-absolute': {
    // Offsets counted from the start of the file, junk included.
    build: () => {
      const junk = Buffer.from('Some junk text that is not part of the PDF.\n'.repeat(4))
      return Buffer.concat([junk, textPdf([['Absolute offsets']], { shiftOffsets: junk.length })])
    },
    poppler: ['Absolute offsets'],
  },
  'header-without-version': {
    build: () => Buffer.from(textPdf([['Header without version']]).toString('latin1').replace('%PDF-1.4\n', '%PDF\n\n\n\n\n'), 'latin1'),
    poppler: ['Header without version'],
  },
  'no-header': {
    build: () => {
      const full = textPdf([['No header at all']]).toString('latin1')
      return Buffer.from(full.slice(full.indexOf('1 0 obj')), 'latin1')
    },
    poppler: ['No header at all'],
  },
  'inline-root-no-xref': {
    build: () => {
      const content = 'BT /F1 12 Tf 72 720 Td (Inline catalog) Tj ET'
      return Buffer.from(
        [
          '%PDF-1.4',
          '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >> endobj',
          '3 0 obj << /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >> endobj',
          '4 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj',
          `5 0 obj << /Length ${content.length} >>\nstream\n${content}\nendstream\nendobj`,
          'trailer',
          '<< /Size 6 /Root << /Type /Catalog /Pages 2 0 R >> >>',
          '%%EOF',
          '',
        ].join('\n'),
        'latin1',
      )
    },
  },
  'type3-numeric-names': {
    build: () => {
      const doc = new PdfDoc()
      // Glyph names a72, a101, … spell their codes; no ToUnicode. Glyph space is 10 units
      // per em (FontMatrix [0.1 0 0 0.1 0 0]): the words are set apart by Td, not by spaces.
      const t3 = type3Font(doc, 'Helloworld', { toUnicode: false, glyphName: (_, ch) => `a${ch.charCodeAt(0)}`, codeOf: (ch) => ch.charCodeAt(0), unitsPerEm: 10 })
      const ops = `BT /T3 20 Tf 72 700 Td ${t3.show('Hello')} Tj 70 0 Td ${t3.show('world')} Tj ET`
      doc.page({ resources: { fonts: { T3: t3.ref } }, content: ops })
      return doc.build()
    },
    poppler: ['Hello world'],
  },
  'cid-collections-no-tounicode': {
    build: () => {
      const doc = new PdfDoc()
      // CIDs of the collections (what their Uni*-UCS2-H CMaps give these characters).
      const ja = cidFont(doc, 'あ亜', { toUnicode: false, collection: 'Japan1', baseFont: 'KozMinPr6N-Regular', cidOf: (ch) => ({ あ: 843, 亜: 1125 })[ch] as number })
      const gb = cidFont(doc, '中', { toUnicode: false, collection: 'GB1', baseFont: 'STSong-Light', cidOf: () => 4559 })
      const tw = cidFont(doc, '中', { toUnicode: false, collection: 'CNS1', baseFont: 'MSung-Light', cidOf: () => 661 })
      const ko = cidFont(doc, '한', { toUnicode: false, collection: 'Korea1', baseFont: 'HYSMyeongJo-Medium', cidOf: () => 3296 })
      const ops = `BT /J 12 Tf 72 700 Td ${ja.show('あ亜')} Tj 0 -20 Td /G 12 Tf ${gb.show('中')} Tj 0 -20 Td /T 12 Tf ${tw.show('中')} Tj 0 -20 Td /K 12 Tf ${ko.show('한')} Tj ET`
      doc.page({ resources: { fonts: { J: ja.ref, G: gb.ref, T: tw.ref, K: ko.ref } }, content: ops })
      return doc.build()
    },
  },
  'crop-boxes-share-content': {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica', { encoding: 'WinAnsiEncoding' })
      // One content stream, two pages: each shows its half of it.
      const shared = doc.stream({}, 'BT /F1 12 Tf 100 700 Td (Left half) Tj 306 0 Td (Right half) Tj ET')
      doc.page({ resources: { fonts: { F1: f1 } }, content: [shared], cropBox: [0, 0, 306, 792] })
      doc.page({ resources: { fonts: { F1: f1 } }, content: [shared], cropBox: [306, 0, 612, 792] })
      return doc.build()
    },
  },
  'gbk-simple-font': {
    build: () => {
      const doc = new PdfDoc()
      // 宋体 (SimSun) named in GBK, not embedded, WinAnsiEncoding: the strings are GBK.
      const font = doc.add({
        Type: '/Font',
        Subtype: '/TrueType',
        BaseFont: '/#CB#CE#CC#E5',
        Encoding: '/WinAnsiEncoding',
        FirstChar: 32,
        LastChar: 126,
        Widths: Array(95).fill(500),
        FontDescriptor: doc.add({ Type: '/FontDescriptor', FontName: '/#CB#CE#CC#E5', Flags: 32, FontBBox: [0, -141, 1000, 859], ItalicAngle: 0, Ascent: 859, Descent: -141, CapHeight: 859, StemV: 80 }),
      })
      const gbk = Buffer.from([0xd6, 0xd0, 0xce, 0xc4, 0x20, 0x41, 0x42, 0x43]) // 中文 ABC
      doc.page({ resources: { fonts: { F1: font } }, content: `BT /F1 12 Tf 72 700 Td ${lit(gbk)} Tj ET` })
      return doc.build()
    },
  },
  'crop-box-edges': {
    build: () => {
      const doc = new PdfDoc()
      const f1 = type1Font(doc, 'Helvetica', { encoding: 'WinAnsiEncoding' })
      // Crop box x 100–400, y 100–700. Of a word across its left edge, the glyphs wholly
      // outside go ("Str", x 80–95.3) and the one across the edge stays ("a", 95.3–102);
      // words below, above, right and left of it go.
      const at = (x: number, y: number, t: string) => `BT /F1 12 Tf ${x} ${y} Td ${lit(t)} Tj ET`
      const content = [at(150, 600, 'Inside'), at(80, 500, 'Straddles'), at(150, 50, 'Below'), at(150, 750, 'Above'), at(450, 400, 'Right'), at(10, 300, 'Left')]
      doc.page({ resources: { fonts: { F1: f1 } }, content: content.join('\n'), cropBox: [100, 100, 400, 700] })
      // A crop box that misses the media box altogether is ignored: the whole page shows.
      doc.page({ resources: { fonts: { F1: f1 } }, content: at(72, 700, 'Whole page'), cropBox: [700, 900, 800, 1000] })
      return doc.build()
    },
  },
  'gbk-named-but-embedded': {
    build: () => {
      const doc = new PdfDoc()
      // Named 宋体 but embedded: its program is the truth, and WinAnsiEncoding reads the bytes.
      const program = doc.stream({}, Buffer.from('not a real TrueType program'))
      const descriptor = { Type: '/FontDescriptor', FontName: '/#CB#CE#CC#E5', Flags: 32, FontBBox: [0, -141, 1000, 859], ItalicAngle: 0, Ascent: 859, Descent: -141, CapHeight: 859, StemV: 80, FontFile2: program }
      const font = doc.add({ Type: '/Font', Subtype: '/TrueType', BaseFont: '/#CB#CE#CC#E5', Encoding: '/WinAnsiEncoding', FirstChar: 32, LastChar: 255, Widths: Array(224).fill(500), FontDescriptor: doc.add(descriptor) })
      // The same name with a style suffix, not embedded: GBK.
      const bold = doc.add({ Type: '/Font', Subtype: '/TrueType', BaseFont: '/#CB#CE#CC#E5,Bold', Encoding: '/WinAnsiEncoding', FirstChar: 32, LastChar: 126, Widths: Array(95).fill(500) })
      const gbk = Buffer.from([0xd6, 0xd0, 0xce, 0xc4, 0x20, 0x41, 0x42, 0x43]) // 中文 ABC in GBK
      doc.page({ resources: { fonts: { F1: font, F2: bold } }, content: `BT /F1 12 Tf 72 700 Td ${lit(gbk)} Tj /F2 12 Tf 0 -20 Td ${lit(gbk)} Tj ET` })
      return doc.build()
    },
  },
  'arabic-visual-order': {
    build: () => {
      const doc = new PdfDoc()
      // "سلام عليكم" shaped into presentation forms, drawn from the left (the last letter
      // first), as word processors write it; ToUnicode maps each glyph to its form.
      const visual = '\ufee2\ufedc\ufef4\ufee0\ufecb \ufee1\ufefc\ufeb3'
      const font = cidFont(doc, visual)
      doc.page({ resources: { fonts: { A: font.ref } }, content: `BT /A 14 Tf 72 700 Td ${font.show(visual)} Tj ET` })
      return doc.build()
    },
  },
  'hebrew-logical-order': {
    build: () => {
      const doc = new PdfDoc()
      // "שלום עולם" drawn letter by letter from the right (logical order).
      const word = 'שלום עולם'
      const font = cidFont(doc, word)
      let ops = 'BT /H 12 Tf 300 700 Td '
      // Td moves the line's start: each letter 7.2 (its width) left of the one before.
      for (const ch of word) ops += ch === ' ' ? '-4 0 Td ' : `-7.2 0 Td ${font.show(ch)} Tj `
      doc.page({ resources: { fonts: { H: font.ref } }, content: `${ops}ET` })
      return doc.build()
    },
  },
}

/** The object number of the first page's content stream in a PdfDoc file. */
function contentObject(file: Buffer): number {
  const m = /\/Contents \[?(\d+) 0 R/.exec(file.toString('latin1'))
  if (!m) throw new Error('no /Contents')
  return Number(m[1])
}

const built = new Map<string, Buffer>()
function fixture(name: keyof typeof FIXTURES): Buffer {
  let b = built.get(name)
  if (!b) {
    b = FIXTURES[name].build()
    built.set(name, b)
  }
  return b
}

async function read(name: keyof typeof FIXTURES, extra: Record<string, unknown> = {}): Promise<ToolResult> {
  return pdfRead(fixture(name), `${name}.pdf`, extra)
}

describe('damaged structure that readers repair', () => {
  it('an appended xref stream deflated without its final block: what it decoded counts (2 held-out files)', async () => {
    expect(pages(await read('flate-without-final-block'))).toEqual(['After the update'])
  })

  it('an xref stream in a filter fsgate does not know (BrotliDecode) is not a reason to refuse: the table is rebuilt', async () => {
    // The rebuilt table comes from the objects themselves, and the last definition wins.
    expect(pages(await read('xref-stream-brotli'))).toEqual(['Updated text'])
  })

  it.each([
    ['length-tight', 'Length 59endobj'],
    ['length-comment', 'Length after a comment'],
    ['length-self', 'Length of itself'],
    ['length-wrong', 'Length too long'],
  ] as const)('a /Length written as in %s: the data ends at endstream, as poppler and pdf.js read it', async (name, text) => {
    expect(pages(await read(name))).toEqual([text])
  })

  it('junk before %PDF-, with offsets from the header or from the start of the file', async () => {
    expect(pages(await read('junk-before-header'))).toEqual(['Behind some junk'])
    expect(pages(await read('junk-before-header-absolute'))).toEqual(['Absolute offsets'])
  })

  it('a header with no version, and no header at all', async () => {
    expect(pages(await read('header-without-version'))).toEqual(['Header without version'])
    expect(pages(await read('no-header'))).toEqual(['No header at all'])
  })

  it('Read of a .pdf file with text junk before its header reads it as a PDF', async () => {
    put(ws.dir, 'junk-read.pdf', fixture('junk-before-header'))
    const r = await ws.toolkit.createSession().call('file_read', { path: 'junk-read.pdf' })
    expect(ok(r)).toContain('Behind some junk')
    expect(r.data?.kind).toBe('pdf')
  })

  it('a trailer that gives the catalog inline, with no table', async () => {
    expect(pages(await read('inline-root-no-xref'))).toEqual(['Inline catalog'])
  })

  it('text that is not a PDF is still INVALID_PDF', async () => {
    const r = await pdfRead(Buffer.from('Just a note about PDF files.\n'), 'note.pdf')
    expect(fails(r, 'INVALID_PDF')).toMatch(/not a PDF/)
  })
})

describe('fonts', () => {
  it('a Type 3 font with /aNN glyph names reads them as codes, and its word gaps are measured in text space', async () => {
    expect(pages(await read('type3-numeric-names'))).toEqual(['Hello world'])
  })

  it('CID fonts of Adobe-Japan1, GB1, CNS1 and Korea1 with no ToUnicode read through the collections', async () => {
    const r = await read('cid-collections-no-tounicode')
    expect(pages(r)).toEqual(['あ亜\n中\n中\n한'])
    expect(r.data?.unmapped).toBe(0)
  })

  it('a simple font named in GBK and not embedded reads its strings as GBK (the pdf.js heuristic)', async () => {
    expect(pages(await read('gbk-simple-font'))).toEqual(['中文 ABC'])
  })

  it('a font named in GBK but embedded keeps its encoding; a style suffix on the name still reads GBK', async () => {
    expect(pages(await read('gbk-named-but-embedded'))).toEqual(['\u00d6\u00d0\u00ce\u00c4 ABC\n中文 ABC'])
  })
})

describe('layout', () => {
  it('a content stream shared by pages with different crop boxes gives each page only its visible text', async () => {
    expect(pages(await read('crop-boxes-share-content'))).toEqual(['Left half', 'Right half'])
  })

  it('glyphs wholly outside the crop box go, one across its edge stays, a box off the page is ignored', async () => {
    expect(pages(await read('crop-box-edges'))).toEqual(['Inside\n\naddles', 'Whole page'])
  })

  it('Arabic drawn in visual order comes out in logical order, presentation forms as letters', async () => {
    expect(pages(await read('arabic-visual-order'))).toEqual(['\u0633\u0644\u0627\u0645 \u0639\u0644\u064a\u0643\u0645'])
  })

  it('Hebrew drawn right to left, letter by letter, keeps its order and its word gap', async () => {
    expect(pages(await read('hebrew-logical-order'))).toEqual(['שלום עולם'])
  })
})

describe('work stops where the text does', () => {
  /** Five pages of text, then a page whose content inflates past the stream limit (INVALID_PDF if interpreted). */
  function fiveThenBomb(): Buffer {
    const doc = new PdfDoc()
    const f1 = type1Font(doc, 'Helvetica', { encoding: 'WinAnsiEncoding' })
    for (let i = 1; i <= 5; i++) doc.page({ resources: { fonts: { F1: f1 } }, content: `BT /F1 12 Tf 72 700 Td (Page ${i} of the text that comes first) Tj ET` })
    const bomb = doc.stream({ Filter: '/FlateDecode' }, deflatedZeros(80 << 20), { encoded: true })
    doc.page({ resources: { fonts: { F1: f1 } }, content: [bomb] })
    return doc.build()
  }

  it('pdf_read stops interpreting at max_chars: the pages after the cut are not read', async () => {
    const bytes = fiveThenBomb()
    fails(await pdfRead(bytes, 'bomb-last.pdf'), 'INVALID_PDF')
    const r = await pdfRead(bytes, 'bomb-last.pdf', { max_chars: 100 })
    const text = ok(r)
    expect(text).toMatch(/^--- Page 1 of 6 ---\nPage 1 of the text/)
    expect(text).toMatch(/\[… truncated: showing characters 1-100 of more than \d+\. Continue with offset=100, or read from page 2 of 6 with file_read and pages="2-6"\.\]/)
    expect(r.data).toMatchObject({ truncated: true, complete: false, pagesRead: 2, shownChars: 100, pageCount: 6 })
  })

  it("Read's pages interprets only the pages asked for", async () => {
    put(ws.dir, 'bomb-read.pdf', fiveThenBomb())
    const s = ws.toolkit.createSession()
    expect(ok(await s.call('file_read', { path: 'bomb-read.pdf', pages: '2-3' }))).toContain('Page 3 of the text')
    fails(await s.call('file_read', { path: 'bomb-read.pdf', pages: '6' }), 'INVALID_PDF')
  })

  it('Read of pages whose text is far over the token limit stops early with TOKEN_LIMIT', async () => {
    // 300 lines of 600 characters in tiny type: 180,000 characters on one page.
    const line = 'word '.repeat(120)
    const many = textPdf([Array.from({ length: 300 }, () => line)], { size: 0.5 })
    const fx = workspace({ preset: 'revka', limits: { readTokens: 1000 } })
    put(fx.dir, 'long.pdf', many)
    const r = await fx.session.call('file_read', { path: 'long.pdf', pages: '1' })
    expect(fails(r, 'TOKEN_LIMIT')).toMatch(/^Page 1 of long\.pdf holds more than 100,000 characters of text, over the 1,000-token limit/)
    expect(r.data).toMatchObject({ maxChars: 100_000, maxTokens: 1000 })
  })
})

describe('the fixtures, by pdftotext', () => {
  const withPoppler = Object.entries(FIXTURES).filter(([, f]) => f.poppler)
  it.skipIf(!hasPdftotext && process.env.CI !== 'true').each(withPoppler.map(([n]) => n))('%s reads as expected in pdftotext', (name) => {
    const words = (t: string) => t.split(/\s+/).filter(Boolean)
    expect(words(pdftotext(fixture(name as keyof typeof FIXTURES)))).toEqual(words((FIXTURES[name].poppler as string[]).join(' ')))
  })
  if (!hasPdftotext) console.log('pdf-realworld: pdftotext (poppler-utils) is not installed; the fixture checks are skipped')
})
