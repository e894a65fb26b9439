/**
 * Paging of text results (issue 21): git_operations pages status, diff, log and branch by
 * lines, pdf_read its laid-out text by characters; each continuation names the exact
 * offset, and the pages followed from offset 0 join into the unpaged text. A bad offset
 * is INVALID_INPUT naming the field; so is a page past the end.
 */
import { spawnSync } from 'node:child_process'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { countTokens, createToolkit, type Limits, type Session, type ToolResult } from '../ts/index.js'
import { textPdf } from './pdf-make.js'
import { fails, ok, put, removeTempDirs, rng, tempDir, textOf, word } from './helpers.js'

afterAll(removeTempDirs)

/** Limits under which nothing is cut: the unpaged answer. */
const ALL: Partial<Limits> = { resultTokens: 10_000_000, searchPageTokens: 10_000_000 }

let repo: string

function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' })
  expect(r.status, r.stderr).toBe(0)
  return r.stdout
}

/** Lines of words, about `chars` characters each. */
function lines(rand: () => number, n: number, chars: number, tag: string): string {
  return Array.from({ length: n }, (_, i) => {
    let line = `${tag} ${i}`
    while (line.length < chars) line += ` ${word(rand, 2 + Math.floor(rand() * 8))}`
    return line
  }).join('\n')
}

beforeAll(() => {
  repo = tempDir('fsgate-paging-text-')
  const rand = rng(2103)
  git(repo, 'init', '-q', '-b', 'main')
  put(repo, 'big.txt', `${lines(rand, 300, 90, 'old')}\n`)
  git(repo, 'add', '.')
  git(repo, 'commit', '-qm', 'first')
  for (let i = 0; i < 100; i++) git(repo, 'commit', '-q', '--allow-empty', '-m', `commit ${i}: ${lines(rand, 1, 110, 'subject')}`)
  for (let i = 0; i < 60; i++) git(repo, 'branch', `topic/${word(rand, 20)}-${i}`)
  put(repo, 'big.txt', `${lines(rand, 300, 90, 'new')}\n`)
  for (let i = 0; i < 400; i++) put(repo, `untracked-${word(rand, 30)}-${i}.txt`, 'x')
})

function session(dir: string, limits: Partial<Limits> = {}): Session {
  return createToolkit({ workspace: dir, preset: 'revka', policy: { actionsPerHour: null }, limits }).createSession()
}

/** Calls `call(offset)` from 0, following each `offset=N` the continuation names. */
async function follow(call: (offset: number) => Promise<ToolResult>, budget: number): Promise<ToolResult[]> {
  const pages: ToolResult[] = []
  let offset: number | undefined = 0
  while (offset !== undefined) {
    const r = await call(offset)
    const t = ok(r)
    expect(await countTokens(textOf(r)), `page at offset ${offset}`).toBeLessThanOrEqual(budget)
    pages.push(r)
    const next = /[Cc]ontinue with offset=(\d+)/.exec(t)
    const at = next ? Number(next[1]) : undefined
    if (at !== undefined) expect(at, t.slice(-200)).toBeGreaterThan(offset)
    offset = at
    expect(pages.length).toBeLessThan(1000)
  }
  return pages
}

describe('git_operations pages by lines', () => {
  const NOTE = /\n\(Showing lines [\d,]+-[\d,]+ of [\d,]+(?:, to fit the limit of [\d,]+ tokens; continue with offset=\d+, [^\n]*|: the end)\.\)$/

  for (const [operation, extra] of [
    ['diff', {}],
    ['status', {}],
    ['log', { limit: 100 }],
    ['branch', {}],
  ] as const) {
    it(`${operation}: pages followed from offset 0 join into the unpaged text, at 1,000 and 3,000 tokens`, async () => {
      const whole = ok(await session(repo, ALL).call('git_operations', { operation, ...extra }))
      const total = whole.split('\n').length
      for (const budget of [1_000, 3_000]) {
        const s = session(repo, { resultTokens: budget })
        const pages = await follow((offset) => s.call('git_operations', { operation, ...extra, offset }), budget)
        if (operation !== 'branch' || budget === 1_000) expect(pages.length, `${operation} at ${budget}`).toBeGreaterThan(1)
        expect(pages.map((p) => ok(p).replace(NOTE, '')).join('\n')).toBe(whole)
        // data carries the figures of each page.
        let at = 0
        for (const [i, p] of pages.entries()) {
          expect(p.data).toMatchObject({ offset: at, lines: total })
          at += p.data?.shownLines as number
          if (i < pages.length - 1) expect(p.data?.truncated).toBe(true)
        }
        expect(at).toBe(total)
      }
    })
  }

  it('the continuation names the exact next line, and a page from an offset says where it ends', async () => {
    const s = session(repo, { resultTokens: 1_000 })
    const first = ok(await s.call('git_operations', { operation: 'diff' }))
    const m = /\(Showing lines 1-(\d+) of ([\d,]+), to fit the limit of 750 tokens; continue with offset=(\d+), or give files= of fewer files\.\)$/.exec(first)
    expect(m, first.slice(-200)).not.toBeNull()
    expect(m?.[3]).toBe(m?.[1])
    const whole = ok(await session(repo, ALL).call('git_operations', { operation: 'diff' })).split('\n')
    const next = ok(await s.call('git_operations', { operation: 'diff', offset: Number(m?.[3]) }))
    expect(next.split('\n')[0]).toBe(whole[Number(m?.[3])])
    const last = await s.call('git_operations', { operation: 'diff', offset: whole.length - 1 })
    expect(ok(last)).toBe(`${whole.at(-1)}\n(Showing lines ${whole.length.toLocaleString('en-US')}-${whole.length.toLocaleString('en-US')} of ${whole.length.toLocaleString('en-US')}: the end.)`)
    expect(last.data).toMatchObject({ offset: whole.length - 1, shownLines: 1, lines: whole.length, truncated: false })
  })

  it('refuses a bad offset, one past the end, and offset on an operation that writes', async () => {
    const s = session(repo)
    for (const offset of [-1, 1.5, '3']) {
      const r = await s.call('git_operations', { operation: 'log', offset })
      fails(r, 'INVALID_INPUT')
      expect(r.data?.field).toBe('offset')
      expect(textOf(r)).toMatch(/offset/)
    }
    const past = await s.call('git_operations', { operation: 'log', offset: 500 })
    expect(fails(past, 'INVALID_INPUT')).toMatch(/^offset 500 is past the end: git log gave 11 lines\. Use an offset from 0 to 10, or leave it out\.$/)
    expect(past.data).toMatchObject({ field: 'offset', lines: 11 })
    for (const input of [{ operation: 'commit', message: 'm' }, { operation: 'add', paths: 'big.txt' }, { operation: 'stash', stash_action: 'list' }]) {
      const r = await s.call('git_operations', { ...input, offset: 1 })
      expect(fails(r, 'INVALID_INPUT')).toMatch(/^offset is not used by (commit|add|stash); remove it\./)
    }
    // Nothing was staged by the refused add.
    expect(git(repo, 'diff', '--cached', '--name-only')).toBe('')
  })
})

describe('pdf_read pages by characters', () => {
  let dir: string
  beforeAll(() => {
    dir = tempDir('fsgate-paging-pdf-')
    const rand = rng(21)
    const pages = Array.from({ length: 12 }, (_, p) => Array.from({ length: 40 }, (_, l) => `p${p + 1} l${l + 1} ${lines(rand, 1, 70, 'w')}`))
    put(dir, 'doc.pdf', textPdf(pages))
    // Every line ends with a space: the engine counts it, then trims it.
    const spaced = Array.from({ length: 40 }, (_, p) => Array.from({ length: 40 }, (_, l) => `page ${p + 1} line ${l + 1} ends with a space `))
    put(dir, 'spaced.pdf', textPdf(spaced))
  })

  /** The page's own text: the first shownChars characters (the notices follow). */
  const own = (r: ToolResult) => ok(r).slice(0, r.data?.shownChars as number)

  it('pages followed from offset 0 join into the whole text, cut by max_chars and by the token budget', async () => {
    const all = await session(dir, ALL).call('pdf_read', { path: 'doc.pdf', max_chars: 200_000 })
    expect(all.data).toMatchObject({ complete: true, truncated: false })
    const whole = ok(all)
    expect(whole.length).toBe(all.data?.chars)
    for (const [limits, max_chars, budget] of [
      [{}, 5_000, 25_000],
      [{}, 777, 25_000],
      [{ resultTokens: 1_000 }, undefined, 1_000],
      [{ resultTokens: 3_000 }, 200_000, 3_000],
    ] as const) {
      const s = session(dir, limits)
      const pages = await follow((offset) => s.call('pdf_read', { path: 'doc.pdf', offset, ...(max_chars ? { max_chars } : {}) }), budget)
      expect(pages.length).toBeGreaterThan(2)
      expect(pages.map(own).join(''), `max_chars ${max_chars}, ${JSON.stringify(limits)}`).toBe(whole)
      for (const p of pages.slice(0, -1)) {
        const end = (p.data?.offset as number) + (p.data?.shownChars as number)
        expect(ok(p).slice(p.data?.shownChars as number)).toMatch(new RegExp(`^\\n?\\[… truncated: showing characters [\\d,]+-${end.toLocaleString('en-US')} of [^\\]]*Continue with offset=${end}, or read from page \\d+ of 12 with file_read and pages="\\d+-12"\\.\\]$`))
      }
      expect(ok(pages.at(-1) as ToolResult)).toMatch(/\[showing characters [\d,]+-([\d,]+) of \1: the end of the text\.\]$/)
    }
  })

  it('an offset deep in a text whose lines end with spaces gets a whole page (the engine counts the text it gives)', async () => {
    const all = ok(await session(dir, ALL).call('pdf_read', { path: 'spaced.pdf', max_chars: 200_000 }))
    const s = session(dir)
    for (const offset of [10_000, all.length - 200]) {
      const r = await s.call('pdf_read', { path: 'spaced.pdf', offset, max_chars: 50 })
      expect(r.data).toMatchObject({ offset, shownChars: 50, truncated: true })
      expect(own(r)).toBe(all.slice(offset, offset + 50))
    }
  })

  it('two pages of one session are both shown (the unchanged-read stub is per offset)', async () => {
    const s = session(dir)
    const a = await s.call('pdf_read', { path: 'doc.pdf', max_chars: 1000 })
    const b = await s.call('pdf_read', { path: 'doc.pdf', max_chars: 1000, offset: 1000 })
    expect(b.data?.unchanged).toBeUndefined()
    expect(own(a) + own(b)).toBe(ok(await session(dir, ALL).call('pdf_read', { path: 'doc.pdf', max_chars: 2000 })).slice(0, 2000))
  })

  it('refuses a bad offset and one past the end, naming the field', async () => {
    const s = session(dir)
    for (const offset of [-1, 2.5, '10']) {
      const r = await s.call('pdf_read', { path: 'doc.pdf', offset })
      fails(r, 'INVALID_INPUT')
      expect(r.data?.field).toBe('offset')
    }
    const chars = (await s.call('pdf_read', { path: 'doc.pdf', max_chars: 200_000 })).data?.chars as number
    const past = await s.call('pdf_read', { path: 'doc.pdf', offset: chars })
    expect(fails(past, 'INVALID_INPUT')).toBe(`offset ${chars.toLocaleString('en-US')} is past the end of the text of doc.pdf, which has ${chars.toLocaleString('en-US')} characters (page markers included). Use a smaller offset, or leave it out.`)
    expect(past.data).toMatchObject({ field: 'offset', chars })
  })
})
