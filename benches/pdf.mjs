// The PDF benchmark: fsgate's pdf_read against pdfjs-dist, unpdf and the pdftotext CLI over
// a corpus of real and hostile PDFs (../shared/corpus/pdf beside the repository, or
// $FSGATE_PDF_CORPUS). First what each extracts — the word-level F1 of its text against
// pdftotext's (benches/pdf-words.mjs), and whether fsgate crashed or hung on any file —
// then how long each takes to extract the text of every page of every file. run.mjs calls
// benchPdf with its section and goal helpers, which print the tables and collect the goals.
import { spawn } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

import { ROOT } from './data.mjs'
import { fmtMs, fmtNum, fmtRatio, interleave, median, now, percentile, table } from './lib.mjs'
import { costlyFiles, peakOf } from './pdf-memory.mjs'
import { corpusFiles, f1, findCorpus, MIN_WORDS, PDFTOTEXT_ARGS, pdftotext, pdftotextVersion, scoreAgainstPdftotext, withoutNote, wordDiff, words } from './pdf-words.mjs'

const require = createRequire(import.meta.url)

/** pdf_read's largest max_chars: the whole text of every corpus file fits. */
const MAX_CHARS = 200_000
/** A pdf_read that has not finished after this long is a hang. */
const HANG_MS = 20_000
/** A pdftotext run is killed after this long (and counted as failed). */
const PDFTOTEXT_TIMEOUT_MS = 10_000
const ROUNDS = 5
const QUALITY_GOAL = 0.95
const CLEAN_ERRORS = new Set(['INVALID_PDF', 'TIMEOUT'])

/**
 * Runs the PDF benchmarks. `ctx` carries the addon's public API (`fsgate`) and run.mjs's
 * `section`, `goal`, `goalAtMost`, and `goals`/`status` for goals that are not ratios.
 */
export async function benchPdf(ctx) {
  const corpus = findCorpus(ROOT)
  if (!corpus) {
    console.log(`\nWARNING: the PDF corpus is not at ${path.resolve(ROOT, '..', 'shared', 'corpus', 'pdf')} (set FSGATE_PDF_CORPUS); the PDF benchmarks are skipped.`)
    for (const bench of ['10. pdf_read text quality vs pdftotext', '10. pdf_read corpus extraction vs pdfjs-dist']) notMeasured(ctx, bench, '—', 'no corpus')
    return
  }
  const files = corpusFiles(corpus)
  const bytes = files.reduce((n, rel) => n + statSync(path.join(corpus, rel)).size, 0)
  const inputs = { corpus, files, bytes, abs: files.map((rel) => path.join(corpus, rel)) }
  for (const file of inputs.abs) readFileSync(file) // warm the page cache

  const peers = await loadPeers()
  const popplerVersion = pdftotextVersion()
  if (!popplerVersion) console.log('\nWARNING: pdftotext (poppler-utils) does not run; the quality section and the pdftotext rows are skipped. Install it: apt-get install poppler-utils.')
  const fsgateWhy = await probeFsgate(ctx.fsgate, inputs)
  if (fsgateWhy) console.log(`\nWARNING: fsgate's pdf_read is not usable (${fsgateWhy}); the fsgate rows and goals are skipped.`)
  const env = { ...inputs, peers, popplerVersion, hasFsgate: !fsgateWhy, fsgateWhy }

  await benchQuality(ctx, env)
  await benchSpeed(ctx, env)
  if (env.hasFsgate) await benchMemory(ctx, env)
}

// ---------------------------------------------------------------------------------------
// 10a. What each extracts
// ---------------------------------------------------------------------------------------

async function benchQuality(ctx, env) {
  const { corpus, files, peers } = env
  const session = env.hasFsgate ? ctx.fsgate.createToolkit({ workspace: corpus }).createSession({ dedup: false }) : null
  const outcomes = { text: 0, 'no text (warning)': 0, INVALID_PDF: 0, TIMEOUT: 0 }
  const bad = [] // fsgate: other errors, throws and hangs
  const refused = [] // fsgate: INVALID_PDF or TIMEOUT where pdftotext opens the file
  let pdfjsFailed = 0
  const rows = [] // one per text-bearing file
  let fsgateMs = 0
  for (const rel of files) {
    const abs = path.join(corpus, rel)
    let ours = null
    let cleanError = null
    if (session) {
      const t0 = now()
      const o = await callWithDeadline((signal) => session.call('pdf_read', { path: rel, max_chars: MAX_CHARS }, { signal }))
      fsgateMs += now() - t0
      if (o.hung) bad.push(`${rel}: did not finish within ${HANG_MS / 1000} s`)
      else if (o.threw) bad.push(`${rel}: threw ${String(o.threw?.message ?? o.threw).slice(0, 160)}`)
      else if (o.result.isError) {
        const code = o.result.error?.code
        if (CLEAN_ERRORS.has(code)) {
          outcomes[code]++
          cleanError = code
        } else bad.push(`${rel}: ${code}: ${textOf(o.result).slice(0, 160)}`)
      } else {
        ours = o.result
        outcomes[ours.data?.warning ? 'no text (warning)' : 'text']++
      }
    }
    let items = null
    if (peers.pdfjs) {
      try {
        items = await pdfjsItems(peers.pdfjs, await readFile(abs))
      } catch {
        pdfjsFailed++
      }
    }
    if (!env.popplerVersion) continue
    const { text: ref, status } = pdftotext(abs, { timeoutMs: PDFTOTEXT_TIMEOUT_MS })
    const pdfjsText = items ? joinItems(items, '') : ''
    if (status === 0 && cleanError) refused.push({ rel, words: words(ref).length })
    // Text-bearing: either reference finds enough words.
    if (Math.max(words(ref).length, words(pdfjsText).length) < MIN_WORDS) continue
    const row = { rel, refWords: words(ref).length, pdfjsWords: words(pdfjsText).length }
    if (session) {
      const text = ours && !ours.data?.warning ? textOf(ours) : ''
      row.fsgate = scoreAgainstPdftotext(abs, text, ours?.data, ref)
      row.fsgateVsPdfjs = f1(withoutNote(text, ours?.data), pdfjsText)
      row.best = Math.max(row.fsgate.f1, row.fsgateVsPdfjs.f1)
      row.fsgateDiff = wordDiff(withoutNote(text, ours?.data), ref, 3)
    }
    if (peers.pdfjs) {
      row.pdfjs = f1(pdfjsText, ref)
      row.pdfjsDiff = wordDiff(pdfjsText, ref, 3)
    }
    rows.push(row)
  }

  const intro =
    `Corpus: ${files.length} PDFs, ${(env.bytes / 2 ** 20).toFixed(1)} MiB — py-pdf's sample files (real documents from pdfTeX, LibreOffice, Google Docs, ReportLab, …) and PDFium's test files (many deliberately malformed). ` +
    `References: ${env.popplerVersion ?? 'pdftotext (not installed)'} (\`pdftotext ${PDFTOTEXT_ARGS.join(' ')} FILE -\`) and pdfjs-dist ${peers.pdfjs?.version ?? '(not installed)'} (\`getTextContent()\` of every page, items joined as pdf.js and unpdf do: \`str\`, a newline after \`hasEOL\`). ` +
    `A file is text-bearing, and scored, when either reference finds at least ${MIN_WORDS} words in it (${rows.length} files). ` +
    'The score is the F1 of word multisets (benches/pdf-words.mjs: page markers removed, NFKC, hyphens at line ends joined, split on whitespace; case and punctuation count): 1 when the words are the same, whatever their order. ' +
    `fsgate: \`pdf_read {max_chars: ${fmtNum(MAX_CHARS)}}\`; against pdftotext, a result cut at max_chars is compared on the pages it gave in full. "Better of the two" takes, file by file, the higher of fsgate's F1 against pdftotext and against pdf.js.`
  if (!env.popplerVersion || !peers.pdfjs) {
    ctx.section('10a. PDF text: what each extracts, against pdftotext and pdf.js', intro, 'Not measured: pdftotext or pdfjs-dist is not installed.')
    notMeasured(ctx, '10. pdf_read text: files at F1 ≥ 0.9 vs the better of pdftotext and pdf.js', `≥ ${QUALITY_GOAL * 100}%`, 'no pdftotext or pdfjs-dist')
    return
  }
  const summary = (label, fs, failures) => {
    const good = fs.filter((x) => x >= 0.9).length
    return [label, fs.length, `${good} (${pct(good / fs.length)})`, fs.length ? median(fs).toFixed(3) : '—', fs.length ? (fs.reduce((a, b) => a + b, 0) / fs.length).toFixed(3) : '—', failures]
  }
  const qRows = []
  if (session) {
    qRows.push(summary('fsgate `pdf_read` vs pdftotext', rows.map((r) => r.fsgate.f1), `${bad.length} crashed or hung`))
    qRows.push(summary('fsgate `pdf_read` vs pdf.js', rows.map((r) => r.fsgateVsPdfjs.f1), ''))
    qRows.push(summary('fsgate `pdf_read` vs the better of the two', rows.map((r) => r.best), ''))
  }
  qRows.push(summary(`pdfjs-dist ${peers.pdfjs.version} vs pdftotext (the references against each other)`, rows.map((r) => r.pdfjs.f1), `${pdfjsFailed} threw`))
  const qTbl = table(['extractor, reference', 'scored files', 'F1 ≥ 0.9', 'median F1', 'mean F1', `failures (all ${files.length} files)`], qRows)

  const score = (s) => (s ? `${s.f1.toFixed(3)} (P ${s.precision.toFixed(2)}, R ${s.recall.toFixed(2)})` : '—')
  const diff = (d) => (d ? `missing ${d.missing.join(' ') || '—'}; extra ${d.extra.join(' ') || '—'}` : '—')
  // Every file where fsgate is under 0.9 against either reference: which one is wrong, and why.
  const low = rows.filter((r) => r.fsgate && Math.min(r.fsgate.f1, r.fsgateVsPdfjs.f1) < 0.9).sort((a, b) => a.best - b.best)
  const lowTbl = table(
    ['file (fsgate under 0.9 against either reference)', 'words (pdftotext / pdf.js)', 'fsgate vs pdftotext', 'fsgate vs pdf.js', 'pdf.js vs pdftotext', "fsgate's words vs pdftotext's (most frequent)", 'which is wrong, and why (checked by hand)'],
    low.map((r) => [r.rel, `${fmtNum(r.refWords)} / ${fmtNum(r.pdfjsWords)}`, score(r.fsgate), score(r.fsgateVsPdfjs), score(r.pdfjs), printable(diff(r.fsgateDiff)), WHY[r.rel] ?? 'not examined']),
  )
  const notes = []
  if (session) {
    notes.push(
      `fsgate over all ${files.length} files: ${Object.entries(outcomes)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}; crashed, hung (> ${HANG_MS / 1000} s) or another error: ${bad.length ? bad.join('; ') : 'none'}. The pass took ${fmtMs(fsgateMs)} in all.`,
    )
    const withText = refused.filter((r) => r.words > 0)
    notes.push(
      `fsgate refuses ${refused.length} file${refused.length === 1 ? '' : 's'} (INVALID_PDF or TIMEOUT) that pdftotext opens (exit status 0)` +
        (refused.length ? `; pdftotext finds words in ${withText.length} of them: ${withText.map((r) => `${path.basename(r.rel)} (${fmtNum(r.words)})`).join(', ') || '—'}.` : '.'),
    )
  } else notes.push(`fsgate was not measured: ${env.fsgateWhy}.`)
  const both = low.filter((r) => WHY[r.rel]?.startsWith('Both'))
  notes.push(
    `Files where both references are wrong: ${both.length ? both.map((r) => path.basename(r.rel)).join(', ') : 'none'}; files under 0.9 against the better of the two: ${rows.filter((r) => r.best < 0.9).map((r) => path.basename(r.rel)).join(', ') || 'none'}.`,
  )
  ctx.section('10a. PDF text: what each extracts, against pdftotext and pdf.js', intro, qTbl + (low.length ? `\n\n${lowTbl}` : ''), notes)
  if (session) {
    const share = rows.filter((r) => r.best >= 0.9).length / rows.length
    ctx.goals.push({ bench: '10. pdf_read text: files at F1 ≥ 0.9 vs the better of pdftotext and pdf.js', goal: `≥ ${QUALITY_GOAL * 100}%`, measured: `${pct(share)} of ${rows.length} (median ${median(rows.map((r) => r.best)).toFixed(3)})`, met: ctx.status(share / QUALITY_GOAL) })
    ctx.goals.push({ bench: '10. pdf_read: corpus files that crashed or hung', goal: '0', measured: String(bad.length), met: bad.length === 0 ? 'met' : 'missed' })
  } else notMeasured(ctx, '10. pdf_read text: files at F1 ≥ 0.9 vs the better of pdftotext and pdf.js', `≥ ${QUALITY_GOAL * 100}%`, env.fsgateWhy)
}

/**
 * Why fsgate and a reference disagree on the corpus files where they do, checked by hand
 * (the content stream, fsgate's text and each reference's). "Both" starts the entries where
 * both references are wrong.
 */
const WHY = {
  'pdfium-testing/testing_resources_split_streams.pdf':
    'pdftotext: "Test 1" … "Test 19" are drawn rotated, letter by letter; it orders the letters by position and breaks the words ("T", "st", "Te"). fsgate and pdf.js give "Test N" (pdf.js joins one pair, "3Test").',
  'pdfium-testing/testing_resources_text_in_page_marked.pdf': 'pdftotext: the content of split_streams in marked-content sequences, broken the same way.',
  'pdfium-testing/testing_resources_text_in_page_marked_indirect.pdf': 'pdftotext: the same, its marked content by reference.',
  'pdfium-testing/testing_resources_weblinks.pdf':
    'pdftotext: five of the seven lines are drawn in /F2, a font the page does not define; it drops them. pdf.js and fsgate draw them in Helvetica.',
  'pdfium-testing/testing_resources_bug_921.pdf':
    'pdf.js: a composite font with no ToUnicode and no embedded program, whose codes are Unicode (Russian); pdf.js gives the raw codes as control characters. fsgate and pdftotext read them as Unicode.',
  'pdfium-testing/testing_resources_listbox_form.pdf':
    "pdf.js: getTextContent leaves out form fields; the list box's visible options are text on the page, which fsgate and pdftotext give.",
  'py-pdf-sample-files/009-pdflatex-geotopo_GeoTopo-komprimiert.pdf':
    'pdftotext, on TeX math: it writes ≠ as "6=" and unmapped math glyphs as control characters (U+0004, U+0013). And fsgate\'s own misses: ≠ comes out as the combining slash before "=" (83 times), and a kerned parenthesis after an italic letter gets a space ("P (X )" where pdftotext has "P(X)", about 300 times). pdf.js was not examined in detail here.',
}

// ---------------------------------------------------------------------------------------
// 10b. How long each takes
// ---------------------------------------------------------------------------------------

async function benchSpeed(ctx, env) {
  const { corpus, files, abs, peers } = env
  const candidates = {}
  if (env.hasFsgate) {
    candidates.fsgate = { fn: () => viaFsgate(ctx.fsgate, corpus, files, 1) }
    candidates.fsgate2 = { fn: () => viaFsgate(ctx.fsgate, corpus, files, 2) }
  }
  if (peers.pdfjs) candidates.pdfjs = { fn: () => eachFile(abs, 1, async (file) => pageTexts(await pdfjsItems(peers.pdfjs, await readFile(file)))) }
  if (peers.unpdf) candidates.unpdf = { fn: () => eachFile(abs, 1, async (file) => viaUnpdf(peers.unpdf, await readFile(file))) }
  if (env.popplerVersion) {
    candidates.pdftotext = { fn: () => eachFile(abs, 1, runPdftotext) }
    candidates.pdftotext2 = { fn: () => eachFile(abs, 2, runPdftotext) }
  }
  const res = await interleave(candidates, { rounds: ROUNDS })
  const base = res.fsgate ?? res.pdfjs
  const baseLabel = res.fsgate ? 'fsgate, one at a time' : 'pdfjs-dist'
  const labels = {
    fsgate: 'fsgate `session.call("pdf_read")`, one file at a time',
    fsgate2: 'fsgate `session.call("pdf_read")`, two files at a time',
    pdfjs: `pdfjs-dist ${peers.pdfjs?.version} (legacy build, in process, no worker thread): \`getDocument\` → every page's \`getTextContent\``,
    unpdf: `unpdf ${peers.unpdf?.version} \`extractText\` (its bundled serverless pdf.js), one file at a time`,
    pdftotext: `pdftotext CLI (${env.popplerVersion}), spawned per file, one at a time`,
    pdftotext2: 'pdftotext CLI, spawned per file, two at a time',
  }
  const rows = Object.entries(res).map(([k, r]) => [labels[k], fmtMs(r.median), fmtMs(r.min), r.times.length, fmtNum(r.value.failed), fmtNum(r.value.chars), fmtRatio(r.median / base.median)])
  const tbl = table(['method', 'median', 'min', 'runs', 'files failed', 'characters out', `time vs ${baseLabel}`], rows)
  const missing = [...Object.entries(peers.missing)].map(([n, why]) => `${n} is not installed (${why}); install the devDependencies to compare.`)
  ctx.section(
    '10b. PDF text: extracting the whole corpus',
    `The same ${files.length} PDFs (${(env.bytes / 2 ** 20).toFixed(1)} MiB, page cache warm): the text of every page of every file, each file read from disk by the method itself. ` +
      `The methods run interleaved in ${ROUNDS} rounds after one untimed run each; the figure is the median round. fsgate: a new toolkit and session (dedup off) per run, \`max_chars: ${fmtNum(MAX_CHARS)}\`; its characters include the page-marker lines. ` +
      'A file a method cannot open counts in "files failed" and still costs its time. pdfjs-dist and unpdf run on the JS thread (pdf.js\'s "fake worker"); pdftotext\'s time includes spawning it.',
    tbl,
    missing,
  )
  if (!res.fsgate) {
    notMeasured(ctx, '10. pdf_read corpus extraction vs pdfjs-dist', '≥ 3×', env.fsgateWhy ?? 'fsgate not measured')
    return
  }
  const f = res.fsgate.median
  if (res.pdfjs) ctx.goal('10. pdf_read corpus extraction vs pdfjs-dist', 3, `${fmtRatio(res.pdfjs.median / f)} (${fmtMs(f)} vs ${fmtMs(res.pdfjs.median)})`, res.pdfjs.median / f)
  if (res.pdftotext) ctx.goalAtMost('10. pdf_read corpus extraction, time / pdftotext CLI', 1.5, `${(f / res.pdftotext.median).toFixed(2)}× (${fmtMs(f)} vs ${fmtMs(res.pdftotext.median)})`, f / res.pdftotext.median)
}

// ---------------------------------------------------------------------------------------
// 10c. Peak memory per file
// ---------------------------------------------------------------------------------------

/** Peak memory goals (docs/pdf.md states the bound these follow from), in MiB: any corpus file, and the generated costly ones. */
const BOUND_MIB = 64
const GENERATED_BOUND_MIB = 512

async function benchMemory(ctx, env) {
  const { corpus, files } = env
  const warm = files.find((f) => f.includes('001-trivial')) ?? files[0]
  const results = []
  let next = 0
  const loop = async () => {
    while (next < files.length) {
      const rel = files[next++]
      const r = await peakOf(corpus, rel, warm, MAX_CHARS)
      results.push({ rel, bytes: statSync(path.join(corpus, rel)).size, ...r })
    }
  }
  // Two children at a time: each measures only its own process.
  await Promise.all([loop(), loop()])
  const ok = results.filter((r) => !r.failed)
  const delta = (r) => Math.max(0, r.after - r.before) / 1024
  const deltas = ok.map(delta)
  const worst = [...ok].sort((a, b) => delta(b) - delta(a)).slice(0, 5)
  const { dir, files: costly } = costlyFiles()
  const generated = []
  for (const f of costly) generated.push({ ...f, ...(await peakOf(dir, f.rel, 'warm.pdf', MAX_CHARS)) })
  const cut = { ...costly[0], ...(await peakOf(dir, costly[0].rel, 'warm.pdf', 50_000)) }
  const row = (name, bytes, r, what) => [name, fmtNum(Math.round(bytes / 1024)), r.failed ? 'failed' : `${delta(r).toFixed(1)} MiB`, r.failed ? '—' : `${(r.after / 1024).toFixed(0)} MiB`, r.failed ? '—' : fmtMs(r.ms), r.code ?? 'text', what]
  const rows = [
    ...worst.map((r) => row(r.rel, r.bytes, r, 'corpus: among the five costliest')),
    ...generated.map((g) => row(`generated: ${g.rel}`, g.bytes, g, g.what)),
    row(`generated: ${cut.rel}, max_chars 50,000`, cut.bytes, cut, 'the same, with the default max_chars: pages after the cut are not read'),
  ]
  const tbl = table(['file', 'KiB', 'peak RSS above the warm process', 'peak RSS of the process', 'time', 'outcome', 'what'], rows)
  const over = ok.filter((r) => delta(r) > BOUND_MIB)
  ctx.section(
    '10c. PDF text: peak memory per file',
    `Each file is read by \`pdf_read {max_chars: ${fmtNum(MAX_CHARS)}}\` in a child process of its own (two at a time), after one small PDF has warmed the addon; the figure is the rise of the process's peak RSS (\`process.resourceUsage().maxRSS\`) over that warm process, so it counts lopdf's objects, the decoded streams, the fonts, the text and its copy into JavaScript. The generated files (benches/pdf-memory.mjs) are built to be costly, as crates/core/tests/pdf_memory.rs builds them.`,
    tbl,
    [
      `Corpus, ${ok.length} files: median ${median(deltas).toFixed(1)} MiB, 95th percentile ${percentile(deltas, 95).toFixed(1)} MiB, largest ${Math.max(...deltas).toFixed(1)} MiB (${worst[0]?.rel}); ${results.length - ok.length} child process${results.length - ok.length === 1 ? '' : 'es'} failed to report.`,
      `Files over the ${BOUND_MIB} MiB the bound allows a corpus-sized file: ${over.length ? over.map((r) => `${r.rel} (${delta(r).toFixed(1)} MiB)`).join(', ') : 'none'}.`,
    ],
  )
  const worstGenerated = Math.max(...generated.filter((g) => !g.failed).map(delta))
  const met = Math.max(...deltas) <= BOUND_MIB && worstGenerated <= GENERATED_BOUND_MIB && generated.every((g) => !g.failed)
  ctx.goals.push({
    bench: '10. pdf_read peak memory: worst corpus file / worst generated file',
    goal: `≤ ${BOUND_MIB} / ${GENERATED_BOUND_MIB} MiB`,
    measured: `${Math.max(...deltas).toFixed(1)} / ${worstGenerated.toFixed(1)} MiB (corpus median ${median(deltas).toFixed(1)})`,
    met: met ? 'met' : 'missed',
  })
}

/** Every file through pdf_read, `concurrency` at a time, in a new toolkit. */
async function viaFsgate(fsgate, corpus, files, concurrency) {
  const session = fsgate.createToolkit({ workspace: corpus }).createSession({ dedup: false })
  return eachFile(files, concurrency, async (rel) => {
    const r = await session.call('pdf_read', { path: rel, max_chars: MAX_CHARS })
    if (r.isError) throw new Error(r.error?.code)
    return r.data?.warning ? '' : textOf(r)
  })
}

/** Runs `extract` on every file, `concurrency` at a time; counts characters out and failures. */
async function eachFile(files, concurrency, extract) {
  let next = 0
  let chars = 0
  let failed = 0
  const loop = async () => {
    while (next < files.length) {
      const file = files[next++]
      try {
        const text = await extract(file) // awaited before the sum: `chars += await …` would lose the other loop's counts
        chars += text.length
      } catch {
        failed++
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  return { chars, failed }
}

/** pdftotext's text of one file, spawned; rejects when it fails or times out. */
function runPdftotext(file) {
  return new Promise((resolve, reject) => {
    const p = spawn('pdftotext', [...PDFTOTEXT_ARGS, file, '-'], { stdio: ['ignore', 'pipe', 'ignore'], timeout: PDFTOTEXT_TIMEOUT_MS, killSignal: 'SIGKILL' })
    const out = []
    p.stdout.on('data', (c) => out.push(c))
    p.on('error', reject)
    p.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString('utf8')) : reject(new Error(`pdftotext exited ${code}`))))
  })
}

// ---------------------------------------------------------------------------------------
// The peers
// ---------------------------------------------------------------------------------------

/** pdfjs-dist (legacy build) and unpdf, where installed; `missing` says why not. */
async function loadPeers() {
  const peers = { missing: {} }
  try {
    const lib = await import('pdfjs-dist/legacy/build/pdf.mjs')
    const dir = path.dirname(require.resolve('pdfjs-dist/package.json'))
    // The options pdf.js documents for Node, and unpdf sets: no eval, no font loading, and
    // the CMaps and standard fonts of the package (CJK and base-14 fonts need them).
    const options = {
      verbosity: 0,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      cMapUrl: pathToFileURL(path.join(dir, 'cmaps') + path.sep).href,
      cMapPacked: true,
      standardFontDataUrl: pathToFileURL(path.join(dir, 'standard_fonts') + path.sep).href,
    }
    peers.pdfjs = { lib, options, version: lib.version }
  } catch (err) {
    peers.missing['pdfjs-dist'] = String(err?.message ?? err).split('\n')[0]
  }
  try {
    const lib = await import('unpdf')
    // unpdf exports no ./package.json; its entry is dist/index.* in the package folder.
    const dir = path.resolve(path.dirname(require.resolve('unpdf')), '..')
    peers.unpdf = { lib, version: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version }
  } catch (err) {
    peers.missing.unpdf = String(err?.message ?? err).split('\n')[0]
  }
  return peers
}

/** pdfjs-dist's text items of every page of a PDF: an array (per page) of items. */
async function pdfjsItems(pdfjs, bytes) {
  const doc = await pdfjs.lib.getDocument({ ...pdfjs.options, data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) }).promise
  try {
    const pages = []
    for (let i = 1; i <= doc.numPages; i++) {
      const page = await doc.getPage(i)
      pages.push((await page.getTextContent()).items)
      page.cleanup()
    }
    return pages
  } finally {
    await doc.destroy()
  }
}

/** One page's items as text: each item's `str`, then a newline if it ends a line, else `sep`. */
function joinPage(items, sep) {
  let s = ''
  for (const it of items) if (it.str !== undefined) s += it.str + (it.hasEOL ? '\n' : sep)
  return s
}

function joinItems(pages, sep) {
  return pages.map((items) => joinPage(items, sep)).join('\n\n')
}

function pageTexts(pages) {
  return joinItems(pages, '')
}

/** unpdf's `extractText` (per page), with pdf.js's log quietened as for pdfjs-dist. */
async function viaUnpdf(unpdf, bytes) {
  const doc = await unpdf.lib.getDocumentProxy(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), { verbosity: 0 })
  try {
    return (await unpdf.lib.extractText(doc, { mergePages: false })).text.join('\n\n')
  } finally {
    await doc.destroy()
  }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/**
 * Whether pdf_read runs here: null when it does, else why not (the tool is missing from
 * this build, or it fails on a plain document).
 */
async function probeFsgate(fsgate, { corpus, files }) {
  const rel = files.find((f) => f.includes('001-trivial')) ?? files[0]
  try {
    const r = await fsgate.createToolkit({ workspace: corpus }).createSession().call('pdf_read', { path: rel, max_chars: MAX_CHARS })
    if (r.isError && r.error?.code === 'INVALID_INPUT' && r.data?.field === 'name') return 'this build has no pdf_read tool'
    return null
  } catch (err) {
    return `pdf_read threw: ${String(err?.message ?? err).slice(0, 200)}`
  }
}

/** One call with a deadline: the signal aborts at HANG_MS, and 2 s later the wait stops. */
async function callWithDeadline(call) {
  let timer
  const hung = new Promise((resolve) => {
    timer = setTimeout(() => resolve('hung'), HANG_MS + 2_000)
  })
  try {
    const r = await Promise.race([call(AbortSignal.timeout(HANG_MS)), hung])
    if (r === 'hung' || (r.isError && r.error?.code === 'ABORTED')) return { hung: true }
    return { result: r }
  } catch (threw) {
    return { threw }
  } finally {
    clearTimeout(timer)
  }
}

function textOf(r) {
  return r.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
}

function pct(x) {
  return `${(x * 100).toFixed(1)}%`
}

/** A table cell: control characters shown as \uXXXX, pipes escaped. */
function printable(s) {
  return s.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replace(/\|/g, '\\|')
}

function notMeasured(ctx, bench, goalText, why) {
  ctx.goals.push({ bench, goal: goalText, measured: '—', met: `not measured (${why})` })
}
