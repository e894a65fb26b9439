// The drop-in benchmark (issue 18): what each of Read's line styles costs in tokens on a
// 2,000-line page of real source, and what a listing of a 1,000-entry folder costs in
// each form, against the raw text; and the time of that listing against fs.readdir.
// Tokens are counted with js-tiktoken's o200k_base and with fsgate's built-in counter.
// run.mjs calls benchDialects with its section helper.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import path from 'node:path'

import { DATA, ROOT } from './data.mjs'
import { fmtMs, fmtNum, median, now, table } from './lib.mjs'

const PAGE_FROM = 20_001
const PAGE_LINES = 2000
const ENTRIES = 1000
const FOLDERS = 100
const LIST_RUNS = 30

export async function benchDialects({ fsgate, section }) {
  const { Tiktoken } = await import('js-tiktoken/lite')
  const o200k = (await import('js-tiktoken/ranks/o200k_base')).default
  const enc = new Tiktoken(o200k)
  const tik = (t) => enc.encode(t).length
  const own = (t) => fsgate.countTokens(t)

  // 1. A 2,000-line page of real source in each line style.
  const source = path.join(ROOT, 'node_modules', 'typescript', 'lib', 'typescript.js')
  const dir = path.join(DATA, 'dialects')
  mkdirSync(dir, { recursive: true })
  const file = path.join(dir, 'typescript.js')
  if (!existsSync(file)) writeFileSync(file, readFileSync(source))
  const raw = readFileSync(file, 'utf8').split('\n').slice(PAGE_FROM - 1, PAGE_FROM - 1 + PAGE_LINES).join('\n')
  const rawTik = tik(raw)
  const rawOwn = await own(raw)
  const rows = [['raw text (no numbers)', fmtNum(rawTik), fmtNum(rawOwn), '—', '1.00×']]
  const styles = [
    ['cat-n', "fsgate's file_read (six columns, tab)"],
    ['compact', "Claude Code 2.1's Read (N, tab)"],
    ['colon', "Revka's N: text"],
    ['none', "gemini-cli's read_file"],
  ]
  const measured = {}
  for (const [style, who] of styles) {
    const toolkit = fsgate.createToolkit({ workspace: dir, policy: { lineStyle: style }, limits: { readTokens: 1_000_000 } })
    const r = await toolkit.createSession({ dedup: false }).call('file_read', { path: 'typescript.js', offset: PAGE_FROM, limit: PAGE_LINES })
    if (r.isError) throw new Error(`file_read in ${style}: ${r.content[0].text}`)
    const text = r.content[0].text
    const t = tik(text)
    measured[style] = t
    rows.push([`\`${style}\`: ${who}`, fmtNum(t), fmtNum(await own(text)), ((t - rawTik) / PAGE_LINES).toFixed(2), `${(t / rawTik).toFixed(2)}×`])
  }
  section(
    '15a. Tokens of a 2,000-line page in each line style',
    `Lines ${fmtNum(PAGE_FROM)}–${fmtNum(PAGE_FROM + PAGE_LINES - 1)} of TypeScript's \`lib/typescript.js\` (${fmtNum(Buffer.byteLength(raw))} bytes), read with file_read and \`policy.lineStyle\`; the page's continuation line is included. Tokens counted with js-tiktoken (o200k_base) and with fsgate's built-in o200k counter (they agree).`,
    table(['form', 'tokens (js-tiktoken)', 'tokens (fsgate)', 'extra tokens a line', 'vs raw'], rows),
    [
      `compact saves ${fmtNum(measured['cat-n'] - measured.compact)} tokens (${(((measured['cat-n'] - measured.compact) / measured['cat-n']) * 100).toFixed(0)}%) of a cat-n page; none saves ${fmtNum(measured['cat-n'] - measured.none)} (${(((measured['cat-n'] - measured.none) / measured['cat-n']) * 100).toFixed(0)}%).`,
    ],
  )

  // 2. A 1,000-entry folder listed in each form.
  const folder = listingFolder()
  const names = readdirSync(folder, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort()
  const plain = names.map((n) => n.replace(/\/$/, '')).join('\n')
  const forms = [['raw names (`ls -1`)', plain]]
  const revka = fsgate.createToolkit({ workspace: folder }).createSession({ dedup: false })
  const gemini = fsgate.createToolkit({ workspace: folder, preset: 'gemini-cli' }).createSession({ dedup: false })
  const call = async (s, name, input) => {
    const r = await s.call(name, input)
    if (r.isError) throw new Error(`${name}: ${r.content[0].text}`)
    return r.content[0].text
  }
  forms.push(['fsgate list_directory (folders end in /)', await call(revka, 'list_directory', {})])
  forms.push(['fsgate list_directory, sizes: true', await call(revka, 'list_directory', { sizes: true })])
  forms.push(["gemini list_directory (gemini-cli's form)", await call(gemini, 'list_directory', { dir_path: '.' })])
  const mcp = names.map((n) => (n.endsWith('/') ? `[DIR] ${n.slice(0, -1)}` : `[FILE] ${n}`)).join('\n')
  forms.push(["MCP filesystem server's list_directory form (made here, for comparison)", mcp])
  const plainTik = tik(plain)
  const listRows = []
  for (const [what, text] of forms) {
    const t = tik(text)
    listRows.push([what, fmtNum(text.split('\n').length), fmtNum(t), fmtNum(await own(text)), `${(t / plainTik).toFixed(2)}×`])
  }
  // Time: the listing through session.call against fs.readdir of the same folder.
  const timesFsgate = []
  const timesReaddir = []
  for (let i = 0; i < LIST_RUNS; i++) {
    let t = now()
    await revka.call('list_directory', {})
    timesFsgate.push(now() - t)
    t = now()
    const entries = await readdir(folder, { withFileTypes: true })
    entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort()
    timesReaddir.push(now() - t)
  }
  section(
    `15b. Tokens of a listing of a ${fmtNum(ENTRIES)}-entry folder`,
    `A folder of ${fmtNum(ENTRIES - FOLDERS)} files and ${FOLDERS} folders named after the files of this checkout's node_modules (real names), listed at depth 1. Tokens counted with js-tiktoken (o200k_base) and fsgate's counter.`,
    table(['form', 'lines', 'tokens (js-tiktoken)', 'tokens (fsgate)', 'vs raw names'], listRows),
    [
      `Time of the listing (median of ${LIST_RUNS}): fsgate list_directory through session.call ${fmtMs(median(timesFsgate))}, fs.readdir withFileTypes + sort ${fmtMs(median(timesReaddir))} (${(median(timesFsgate) / median(timesReaddir)).toFixed(1)}× — a walk with ignore rules, confinement and token fitting, against a bare readdir).`,
    ],
  )
}

/** A folder of ENTRIES entries with real file names, made once and reused. */
function listingFolder() {
  const folder = path.join(DATA, 'listing-1000')
  if (existsSync(folder) && readdirSync(folder).length === ENTRIES) return folder
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  const seen = new Set()
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (seen.size >= ENTRIES) return
      if (e.isDirectory()) walk(path.join(d, e.name))
      else if (!e.name.startsWith('.')) seen.add(e.name)
    }
  }
  walk(path.join(ROOT, 'node_modules'))
  const list = [...seen].sort()
  for (const [i, name] of list.entries()) {
    if (i < FOLDERS) mkdirSync(path.join(folder, name.replace(/\.[^.]*$/, '') || `dir${i}`), { recursive: true })
    else writeFileSync(path.join(folder, name), 'x'.repeat(i * 37))
  }
  // Folders whose names collided with a file's stem: top up to exactly ENTRIES.
  let extra = 0
  while (readdirSync(folder).length < ENTRIES) writeFileSync(path.join(folder, `extra-${extra++}.txt`), '')
  return folder
}
