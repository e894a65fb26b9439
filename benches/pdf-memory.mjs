// Peak memory of pdf_read, one file per process (benches/pdf.mjs, section 10c), and the
// generated files built to be costly. Run as a script it is the child: it loads fsgate,
// reads a small PDF once (so the addon and its pools are up), notes its resident set,
// reads the file it was given while sampling the resident set, and prints the highest;
// the difference is what the file cost at its worst moment.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import zlib from 'node:zlib'

import { DATA, ROOT } from './data.mjs'

const SELF = fileURLToPath(import.meta.url)

/** Peak RSS (KiB) of pdf_read on `rel` in `workspace`, in a child process: `{ before, after, ms, code }`. */
export function peakOf(workspace, rel, warm, maxChars) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [SELF, workspace, rel, warm, String(maxChars)], { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    p.stdout.on('data', (c) => {
      out += c
    })
    p.on('close', () => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()))
      } catch {
        resolve({ failed: true })
      }
    })
  })
}

// ---------------------------------------------------------------------------------------
// Costly files, generated (as crates/core/tests/pdf_memory.rs builds them)

function file(objects) {
  const parts = [Buffer.from('%PDF-1.5\n')]
  let at = parts[0].length
  const offsets = []
  objects.forEach((body, i) => {
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'), Buffer.from('\nendobj\n')])
    offsets.push(at)
    parts.push(b)
    at += b.length
  })
  let table = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const o of offsets) table += `${String(o).padStart(10, '0')} 00000 n \n`
  parts.push(Buffer.from(`${table}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`))
  return Buffer.concat(parts)
}

function stream(dict, data) {
  return Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')])
}

/** Pages of CJK text in Type 0 fonts whose maps name every 16-bit code; each page inflates to `ops` strings. */
function costlyText(pages, fonts, ops) {
  const objects = ['', '']
  let cmap = '/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange 16 beginbfrange\n'
  for (let k = 0; k < 16; k++) cmap += `<${(k * 4096).toString(16).padStart(4, '0')}> <${(k * 4096 + 4095).toString(16).padStart(4, '0')}> <${(0x4e00 + k * 16).toString(16)}>\n`
  cmap += 'endbfrange endcmap CMapName currentdict /CMap defineresource pop end end'
  const tu = zlib.deflateSync(cmap)
  let fontRefs = ''
  for (let f = 0; f < fonts; f++) {
    objects.push(stream('/Filter /FlateDecode', tu))
    const t = objects.length
    objects.push('<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Costly /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /W [0 65535 500] /DW 1000 >>')
    const d = objects.length
    objects.push(`<< /Type /Font /Subtype /Type0 /BaseFont /Costly /Encoding /Identity-H /DescendantFonts [${d} 0 R] /ToUnicode ${t} 0 R >>`)
    fontRefs += `/F${f} ${objects.length} 0 R `
  }
  let content = 'BT 1 Tf 10 19990 Td\n'
  for (let i = 0; i < ops; i++) content += `/F${i % fonts} 1 Tf <00410042004300440045004600470048> Tj 0 -1 Td\n`
  const c = zlib.deflateSync(`${content}ET`)
  let kids = ''
  for (let p = 0; p < pages; p++) {
    objects.push(stream('/Filter /FlateDecode', c))
    const ci = objects.length
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 20000 20000] /Resources << /Font << ${fontRefs}>> >> /Contents ${ci} 0 R >>`)
    kids += `${objects.length} 0 R `
  }
  objects[0] = '<< /Type /Catalog /Pages 2 0 R >>'
  objects[1] = `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`
  return file(objects)
}

/** An object stream packed with `n` arrays of eight numbers (about 11 tokens each). */
function objectBomb(n) {
  let header = ''
  let body = ''
  for (let i = 0; i < n; i++) {
    header += `${i + 4} ${body.length} `
    body += '[1 2 3 4 5 6 7 8]\n'
  }
  return file([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [] /Count 0 >>',
    stream(`/Type /ObjStm /N ${n} /First ${header.length + 1} /Filter /FlateDecode`, zlib.deflateSync(`${header}\n${body}`)),
  ])
}

/** Writes the generated files into .bench-data/pdf-costly and returns [{ rel, what }]. */
export function costlyFiles() {
  const dir = path.join(DATA, 'pdf-costly')
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'warm.pdf'), costlyText(1, 1, 1))
  const files = [
    ['text-40-pages.pdf', costlyText(40, 1, 16_000), '40 pages, each inflating to 16,000 strings (640,000 CJK characters in all), a font mapping all 65,536 codes'],
    ['fonts-60.pdf', costlyText(2, 60, 200), '60 Type 0 fonts, each with a ToUnicode and widths for all 65,536 codes'],
    ['objects-100k.pdf', objectBomb(100_000), 'an object stream of 100,000 arrays of 8 numbers (1.1 million tokens, under the 2 Mi cap)'],
    ['objects-300k.pdf', objectBomb(300_000), 'the same with 300,000 arrays (3.3 million tokens: refused)'],
  ]
  for (const [name, bytes] of files) writeFileSync(path.join(dir, name), bytes)
  return { dir, files: files.map(([rel, bytes, what]) => ({ rel, what, bytes: bytes.length })) }
}

// ---------------------------------------------------------------------------------------
// The child

if (process.argv[1] === SELF) {
  const [workspace, rel, warm, maxChars] = process.argv.slice(2)
  const fsgate = await import(pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href)
  const session = fsgate.createToolkit({ workspace }).createSession({ dedup: false })
  await session.call('pdf_read', { path: warm, max_chars: 100 })
  // The resident set is sampled every 2 ms while the call runs (its work is on the addon's
  // threads, so the JS thread is free to sample); the process's own high-water mark
  // counts too where it rose, so a spike between samples is not missed.
  const rss = () => process.memoryUsage.rss() / 1024
  const before = rss()
  const maxBefore = process.resourceUsage().maxRSS
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, rss())
  }, 2)
  const t0 = performance.now()
  const r = await session.call('pdf_read', { path: rel, max_chars: Number(maxChars) })
  const ms = performance.now() - t0
  clearInterval(timer)
  peak = Math.max(peak, rss())
  const maxAfter = process.resourceUsage().maxRSS
  if (maxAfter > maxBefore) peak = Math.max(peak, maxAfter)
  process.stdout.write(`${JSON.stringify({ before, after: peak, ms, code: r.isError ? r.error?.code : null })}\n`)
}
