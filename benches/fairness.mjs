// The fairness benchmark (issue 17): a quiet session's small calls while another session
// of the same toolkit keeps 120 content searches in flight, side by side with the same
// calls alone, and the flooding session's own rate with and without the quiet one.
// run.mjs calls benchFairness with its section helper and its goals.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

import { DATA } from './data.mjs'
import { fmtMs, fmtNum, fmtRatio, now, percentile, rng, table } from './lib.mjs'

const TREE = path.join(DATA, 'fairness')
const TREE_VERSION = 1
const FILES = 3000
const LINES = 120
const FLOOD = 120
const READS = 300
const SMALL_SEARCHES = 40
const READ_GOAL_MS = 20
const SEARCH = { pattern: 'value_\\d+_7 = [a-m]', output_mode: 'count' }
const SMALL_SEARCH = { pattern: 'value_tiny', path: 'tiny' }

/**
 * Runs the fairness benchmark. `ctx` carries the addon's public API (`fsgate`), run.mjs's
 * `section`, and `goals`/`status` for a goal that is not a ratio.
 */
export async function benchFairness({ fsgate, section, goals, status }) {
  const dir = fairnessTree()
  const toolkit = fsgate.createToolkit({ workspace: dir })
  const flooder = toolkit.createSession()
  const quiet = toolkit.createSession({ dedup: false })
  const read = (i) => quiet.call('file_read', { path: 'small.txt', offset: 1 + (i % 40), limit: 5 })
  const small = () => quiet.call('content_search', SMALL_SEARCH)
  const expected = textOf(await flooder.call('content_search', SEARCH))

  // Alone: the quiet session's calls on an idle toolkit, and the flood on its own.
  const aloneReads = await timed(READS, read)
  const aloneSearches = await timed(SMALL_SEARCHES, small)
  const t0 = now()
  const results = await Promise.all(Array.from({ length: FLOOD }, () => flooder.call('content_search', SEARCH)))
  const floodAloneMs = now() - t0
  if (results.some((r) => textOf(r) !== expected)) throw new Error('a flooded search gave another answer than the same search alone')

  // Together: the flood is kept at 120 in flight while the quiet session works.
  const flood = keepFlooding(flooder, expected)
  await flood.ready()
  const floodReads = await timed(READS, read)
  const floodSearches = await timed(SMALL_SEARCHES, small)
  const { searches, ms } = await flood.stop()

  const row = (what, alone, busy) => [
    what,
    fmtMs(percentile(alone, 50)),
    fmtMs(percentile(alone, 99)),
    fmtMs(percentile(busy, 50)),
    fmtMs(percentile(busy, 99)),
    fmtRatio(percentile(busy, 99) / percentile(alone, 99)),
  ]
  const p99 = percentile(floodReads, 99)
  section(
    '14. Fair shares: a quiet session while another floods',
    `One toolkit, two sessions. The flooding session keeps ${FLOOD} content searches in flight (each a count of a regex over ${fmtNum(FILES)} files of ${LINES} lines, ${fmtMs(floodAloneMs / FLOOD)} per search when ${FLOOD} run back to back); the quiet session meanwhile makes its calls one after another. "Alone" is the same calls with no flood. Before issue 17 every call waited first come, first served behind the flood: a 5-line read took as long as all ${FLOOD} searches.`,
    table(
      ["the quiet session's call", 'alone p50', 'alone p99', 'during the flood p50', 'during the flood p99', 'p99 cost ×'],
      [
        row(`5-line read (file_read, ${READS} calls)`, aloneReads, floodReads),
        row(`search of a 1-file folder (content_search, ${SMALL_SEARCHES} calls)`, aloneSearches, floodSearches),
      ],
    ),
    [
      `The flooding session's own rate: ${fmtNum((FLOOD / floodAloneMs) * 1000)} searches/s alone, ${fmtNum((searches / ms) * 1000)} searches/s while the quiet session works.`,
      "A session's calls wait in its own queue (ts/contract/fair.ts); free slots of each pool go to the session with the fewest running, and reads and searches run on separate pools of the addon, so a read never waits behind a search's tasks.",
    ],
  )
  goals.push({
    bench: `14. 5-line read p99 while another session floods ${FLOOD} searches`,
    goal: `< ${READ_GOAL_MS} ms`,
    measured: `${fmtMs(p99)} (p50 ${fmtMs(percentile(floodReads, 50))}; alone p99 ${fmtMs(percentile(aloneReads, 99))})`,
    met: status(READ_GOAL_MS / p99),
  })
}

/** Times `n` calls of `call(i)` one after another; each must succeed. */
async function timed(n, call) {
  const times = []
  for (let i = 0; i < n; i++) {
    const t = now()
    const r = await call(i)
    times.push(now() - t)
    if (r.isError) throw new Error(`the quiet session's call failed: ${textOf(r)}`)
  }
  return times
}

/** Keeps FLOOD searches of `session` in flight until `stop()`, which cancels the rest. */
function keepFlooding(session, expected) {
  const abort = new AbortController()
  let done = 0
  let started = 0
  let failure
  const t0 = now()
  const one = async () => {
    while (!abort.signal.aborted) {
      started++
      const r = await session.call('content_search', SEARCH, { signal: abort.signal })
      if (abort.signal.aborted) return
      if (textOf(r) !== expected) failure ??= new Error(`a flooded search gave another answer: ${textOf(r).slice(0, 200)}`)
      done++
    }
  }
  const all = Promise.all(Array.from({ length: FLOOD }, one))
  return {
    // Every search is handed to the toolkit before the quiet session starts.
    ready: async () => {
      while (started < FLOOD) await new Promise((resolve) => setImmediate(resolve))
    },
    stop: async () => {
      const ms = now() - t0
      abort.abort()
      await all
      if (failure) throw failure
      return { searches: done, ms }
    },
  }
}

function textOf(result) {
  return result.content.map((b) => b.text ?? '').join('\n')
}

/** FILES files of LINES lines under .bench-data/fairness, made once, and a small file to read. */
function fairnessTree() {
  const marker = path.join(TREE, '.complete')
  if (existsSync(marker) && JSON.parse(readFileSync(marker, 'utf8')).version === TREE_VERSION) return TREE
  rmSync(TREE, { recursive: true, force: true })
  const r = rng(17)
  const word = (n) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('')
  for (let i = 0; i < FILES; i++) {
    const sub = path.join(TREE, `d${i % 20}`, `e${i % 7}`)
    mkdirSync(sub, { recursive: true })
    const lines = Array.from({ length: LINES }, (_, l) => `${word(5)} ${word(8)} value_${i}_${l} = ${word(10)}`)
    writeFileSync(path.join(sub, `f${i}.txt`), `${lines.join('\n')}\n`)
  }
  writeFileSync(path.join(TREE, 'small.txt'), Array.from({ length: 50 }, (_, i) => `line ${i + 1}\n`).join(''))
  mkdirSync(path.join(TREE, 'tiny'), { recursive: true })
  writeFileSync(path.join(TREE, 'tiny', 'one.txt'), 'value_tiny = 1\n')
  writeFileSync(marker, JSON.stringify({ version: TREE_VERSION }))
  return TREE
}
