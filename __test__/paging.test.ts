/**
 * Paging round trips (issue 21): every paged tool, followed by the offset its
 * continuation names, gives pages that together are the unpaged result, at several page
 * sizes (counts, and the token budget); totals do not change with the page asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit, type Limits, type Session, type ToolResult } from '../ts/index.js'
import { ok, put, removeTempDirs, rng, tempDir, word } from './helpers.js'

afterAll(removeTempDirs)

/** Limits under which nothing is cut: the unpaged answer. */
const ALL: Partial<Limits> = { searchResults: 1_000_000, globResults: 1_000_000, listEntries: 1_000_000, resultTokens: 10_000_000, searchPageTokens: 10_000_000, searchOutputBytes: 1 << 30 }

let dir: string

/** A tree of 60 files in nested folders; about a third of the lines hold "needle". */
function generate(root: string): void {
  const rand = rng(21)
  for (let f = 0; f < 60; f++) {
    const lines = Array.from({ length: 5 + Math.floor(rand() * 30) }, (_, i) => {
      const words = Array.from({ length: 2 + Math.floor(rand() * 12) }, () => word(rand, 3 + Math.floor(rand() * 6)))
      if (rand() < 0.33) words.splice(Math.floor(rand() * words.length), 0, `needle${i % 7}`)
      return words.join(' ')
    })
    put(root, `d${f % 4}/e${f % 3}/file${String(f).padStart(2, '0')}.txt`, `${lines.join('\n')}\n`)
  }
  // Code for the ranker: one function per file that uses the query's words.
  for (let f = 0; f < 30; f++) put(root, `src/mod${f}.ts`, `export function parseConfig${f}(input: string) {\n  // parse the config ${f}\n  return input.split('config')\n}\n`)
}

beforeAll(() => {
  dir = tempDir('fsgate-paging-')
  generate(dir)
})

function session(preset: 'revka' | 'claude-code' | 'gemini-cli', limits: Partial<Limits> = {}): Session {
  return createToolkit({ workspace: dir, preset, policy: { actionsPerHour: null }, limits }).createSession()
}

/** The offset a continuation names, if the result has one. */
function nextOffset(t: string): number | undefined {
  const m = /[Cc]ontinue with offset=(\d+)/.exec(t)
  return m ? Number(m[1]) : undefined
}

/** The result's own lines: fsgate's notes (in parentheses) and headers left out. */
function body(t: string): string[] {
  return t.split('\n').filter((l) => !(l.startsWith('(') && l.endsWith(')')) && !/^Found \d/.test(l) && l !== '')
}

/** Calls `call(offset)` from 0, following each continuation, and returns every page. */
async function follow(call: (offset: number) => Promise<ToolResult>, most = 2000): Promise<ToolResult[]> {
  const pages: ToolResult[] = []
  let offset: number | undefined = 0
  while (offset !== undefined) {
    const r = await call(offset)
    const t = ok(r)
    pages.push(r)
    const next = nextOffset(t)
    if (next !== undefined) expect(next, `a continuation moves on: ${t.slice(-200)}`).toBeGreaterThan(offset)
    offset = next
    expect(pages.length).toBeLessThan(most)
  }
  return pages
}

const texts = (pages: ToolResult[]) => pages.map((p) => ok(p))

describe('content_search pages', () => {
  for (const mode of ['content', 'files_with_matches', 'count'] as const) {
    it(`${mode}: pages of 1, 7 and 50 together are the unpaged result`, async () => {
      const whole = body(ok(await session('revka', ALL).call('content_search', { pattern: 'needle\\d', output_mode: mode })))
      expect(whole.length).toBeGreaterThan(mode === 'content' ? 100 : 30)
      const s = session('revka', ALL)
      for (const size of [1, 7, 50]) {
        const pages = await follow((offset) => s.call('content_search', { pattern: 'needle\\d', output_mode: mode, max_results: size, offset }))
        expect(texts(pages).flatMap(body), `pages of ${size}`).toEqual(whole)
      }
    })
  }

  it('content with context: the matching lines of the pages are those of the whole, and every context line is one of the whole', async () => {
    const input = { pattern: 'needle3', output_mode: 'content' as const, context_before: 2, context_after: 2 }
    const whole = body(ok(await session('revka', ALL).call('content_search', input)))
    const matches = (lines: string[]) => lines.filter((l) => /^[^:]+:\d+:/.test(l))
    const s = session('revka', ALL)
    for (const size of [1, 4, 9]) {
      const pages = texts(await follow((offset) => s.call('content_search', { ...input, max_results: size, offset }))).flatMap(body)
      expect(matches(pages)).toEqual(matches(whole))
      for (const l of pages) expect(whole).toContain(l)
    }
  })

  it('pages cut by the token budget (not a count) together are the unpaged result, each within it', async () => {
    const whole = body(ok(await session('revka', ALL).call('content_search', { pattern: 'needle\\d', max_results: 100_000 })))
    // 1,300 tokens: 975 for the records and 325 kept for the notes.
    const s = session('revka', { ...ALL, resultTokens: 1_300 })
    const pages = await follow((offset) => s.call('content_search', { pattern: 'needle\\d', max_results: 100_000, offset }))
    expect(pages.length).toBeGreaterThan(3)
    expect(texts(pages).flatMap(body)).toEqual(whole)
    for (const p of pages.slice(0, -1)) expect(ok(p)).toMatch(/the page reached its limit of [\d,]+ KiB or 1,300 tokens/)
  })

  it('Grep (claude) pages with head_limit and offset in every mode', async () => {
    const s = session('claude-code', ALL)
    for (const mode of ['content', 'files_with_matches', 'count'] as const) {
      const whole = body(ok(await s.call('Grep', { pattern: 'needle\\d', output_mode: mode, head_limit: 0 })))
      for (const size of [3, 25]) {
        const pages = await follow((offset) => s.call('Grep', { pattern: 'needle\\d', output_mode: mode, head_limit: size, offset }))
        expect(texts(pages).flatMap(body), `${mode}, pages of ${size}`).toEqual(whole)
      }
    }
  })

  it('grep_search (gemini) pages with total_max_matches and offset, grouped by file', async () => {
    const s = session('gemini-cli', ALL)
    const matchLines = (t: string) => t.split('\n').filter((l) => /^L\d+:/.test(l))
    const whole = matchLines(ok(await s.call('grep_search', { pattern: 'needle\\d', total_max_matches: 100_000 })))
    expect(whole.length).toBeGreaterThan(60)
    const pages = await follow((offset) => s.call('grep_search', { pattern: 'needle\\d', total_max_matches: 13, offset }))
    expect(texts(pages).flatMap(matchLines)).toEqual(whole)
  })

  it('numMatches and numFiles stay the same whatever head_limit and offset', async () => {
    const s = session('claude-code')
    const seen = new Set<string>()
    for (const head_limit of [undefined, 0, 1, 10, 100, 250]) {
      for (const offset of [0, 5, 1000]) {
        const r = await s.call('Grep', { pattern: 'needle\\d', output_mode: 'content', head_limit, offset })
        seen.add(JSON.stringify([r.data?.numMatches, r.data?.numFiles]))
      }
    }
    const whole = await session('revka', ALL).call('content_search', { pattern: 'needle\\d' })
    expect([...seen]).toEqual([JSON.stringify([whole.data?.numMatches, whole.data?.numFiles])])
    expect(body(ok(whole)).length).toBe(whole.data?.numMatches)
  })

  it('a multiline match over many lines is counted whole, whatever the page', async () => {
    const s = session('revka')
    const counts = new Set<unknown>()
    for (const max_results of [1, 5, 1000]) {
      const r = await s.call('content_search', { pattern: '(?s)needle0.*?needle1', multiline: true, path: 'd0', max_results })
      counts.add(r.data?.numMatches)
    }
    expect(counts.size).toBe(1)
  })
})

describe('glob pages', () => {
  it('glob_search pages by limits.globResults together are the unpaged list', async () => {
    const whole = body(ok(await session('revka', ALL).call('glob_search', { pattern: '**/*' })))
    expect(whole.length).toBe(90)
    for (const size of [1, 7, 40]) {
      const s = session('revka', { ...ALL, globResults: size })
      const pages = await follow((offset) => s.call('glob_search', { pattern: '**/*', offset }))
      expect(texts(pages).flatMap(body), `pages of ${size}`).toEqual(whole)
      expect(pages[0].data).toMatchObject({ numFiles: 90, offset: 0, shown: size })
    }
  })

  it('Glob (claude) pages of 100 newest first reach every file', async () => {
    const s = session('claude-code')
    const whole = body(ok(await session('claude-code', ALL).call('Glob', { pattern: '**/*' })))
    const pages = await follow((offset) => s.call('Glob', { pattern: '**/*', offset }))
    expect(pages.length).toBe(1)
    const small = session('claude-code', { globResults: 11 })
    expect(texts(await follow((offset) => small.call('Glob', { pattern: '**/*', offset }))).flatMap(body)).toEqual(whole)
  })

  it('pages cut by the token budget together are the unpaged list', async () => {
    // 120 paths of about 40 tokens: several pages of 750 tokens at the floor of the budget.
    const wide = tempDir('fsgate-paging-wide-')
    for (let f = 0; f < 120; f++) put(wide, `d${f % 3}/${'a-rather-long-file-name-'.repeat(6)}${f}.txt`, 'x\n')
    const at = (limits: Partial<Limits>) => createToolkit({ workspace: wide, preset: 'revka', policy: { actionsPerHour: null }, limits }).createSession()
    const whole = body(ok(await at(ALL).call('glob_search', { pattern: '**/*.txt' })))
    const s = at({ ...ALL, resultTokens: 1_000 })
    const pages = await follow((offset) => s.call('glob_search', { pattern: '**/*.txt', offset }))
    expect(pages.length).toBeGreaterThan(2)
    expect(texts(pages).flatMap(body)).toEqual(whole)
  })
})

describe('deep pages of long lines', () => {
  it('Grep reaches the last of 4,000 long matching lines by its continuations: the lines before a deep offset do not starve its page', async () => {
    // 4,000 lines of about 210 bytes hold 860 KB: more than a search kept (twice the 256 KiB
    // output cap) when the results before the offset counted against it, so a page past
    // about line 2,400 came back empty, "past the last".
    const deep = tempDir('fsgate-paging-deep-')
    const rand = rng(7)
    put(deep, 'long.txt', `${Array.from({ length: 4000 }, (_, i) => `hit ${i} ${Array.from({ length: 30 }, () => word(rand, 6)).join(' ')}`).join('\n')}\n`)
    const s = createToolkit({ workspace: deep, preset: 'claude-code', policy: { actionsPerHour: null } }).createSession()
    const at = ok(await s.call('Grep', { pattern: 'hit', path: 'long.txt', output_mode: 'content', '-n': true, head_limit: 5, offset: 3500 }))
    const numbers = (lines: string[]) => lines.map((l) => /(?:^|:)(\d+):hit /.exec(l)?.[1])
    expect(numbers(body(at))).toEqual(['3501', '3502', '3503', '3504', '3505'])
    const pages = await follow((offset) => s.call('Grep', { pattern: 'hit', path: 'long.txt', output_mode: 'content', '-n': true, head_limit: 0, offset }))
    const lines = texts(pages).flatMap(body)
    expect(numbers(lines)).toEqual(Array.from({ length: 4000 }, (_, i) => String(i + 1)))
  })
})

describe('offsets past every result', () => {
  it('an offset of 2^32 (past what the engine counts) is past the last, not the first page again', async () => {
    const s = session('revka')
    expect(ok(await s.call('glob_search', { pattern: '**/*', offset: 2 ** 32 }))).toMatch(/^offset 4,294,967,295 is past the last of the 90 files matching \*\*\/\*; continue with offset=0\.$/)
    expect(ok(await s.call('content_search', { pattern: 'needle', offset: 2 ** 32 }))).toMatch(/but offset 4,294,967,295 is past the last; continue with offset=0\)/)
    expect(ok(await s.call('list_directory', { offset: 2 ** 32 }))).toMatch(/offset 4,294,967,296 is past the last of the \d+ entries/)
  })
})

describe('list_directory pages', () => {
  it('a tree three deep, in pages of 1, 6 and 33, is the whole tree', async () => {
    const whole = body(ok(await session('revka', ALL).call('list_directory', { depth: 3 })))
    expect(whole.length).toBeGreaterThan(90)
    const s = session('revka', ALL)
    for (const limit of [1, 6, 33]) {
      const pages = await follow((offset) => s.call('list_directory', { depth: 3, limit, offset }))
      expect(texts(pages).flatMap(body), `pages of ${limit}`).toEqual(whole)
    }
  })

  it('gemini list_directory continues with offset', async () => {
    const flat = tempDir('fsgate-paging-flat-')
    for (let i = 0; i < 30; i++) put(flat, `n${String(i).padStart(2, '0')}.txt`, 'x')
    const s = createToolkit({ workspace: flat, preset: 'gemini-cli', limits: { listEntries: 8 } }).createSession()
    const rows = (t: string) => t.split('\n').filter((l) => /^n\d\d\.txt/.test(l))
    const pages = await follow((offset) => s.call('list_directory', { dir_path: '.', offset }))
    expect(pages.length).toBe(4)
    expect(texts(pages).flatMap(rows).map((l) => l.slice(0, 7))).toEqual(Array.from({ length: 30 }, (_, i) => `n${String(i).padStart(2, '0')}.txt`))
  })
})

describe('semantic_code_search pages', () => {
  const hitsOf = (r: ToolResult) => ((r.data?.hits ?? []) as Array<{ path: string; startLine: number }>).map((h) => `${h.path}:${h.startLine}`)

  it('top_k pages of 1, 3 and 8 together are the first 25 hits', async () => {
    const s = session('revka')
    const whole = await s.call('semantic_code_search', { query: 'parse config', top_k: 25, backend: 'literal' })
    expect(hitsOf(whole)).toHaveLength(25)
    expect(whole.data?.total).toBeGreaterThanOrEqual(30)
    expect(ok(whole)).toMatch(/Continue with offset=25 for the next/)
    for (const top_k of [1, 3, 8]) {
      const pages: string[] = []
      for (let offset = 0; offset < 25; offset += top_k) {
        const r = await s.call('semantic_code_search', { query: 'parse config', top_k, offset, backend: 'literal' })
        if (offset + top_k < (r.data?.total as number)) expect(ok(r)).toMatch(new RegExp(`Continue with offset=${offset + top_k} for the next`))
        pages.push(...hitsOf(r))
      }
      expect(pages.slice(0, 25), `pages of ${top_k}`).toEqual(hitsOf(whole))
    }
  })

  it('paging ends at the largest offset the schema takes, and says to narrow the query instead of naming one past it', async () => {
    const many = tempDir('fsgate-paging-rank-')
    for (let f = 0; f < 1010; f++) put(many, `m${f}.ts`, `export function parseConfig${f}(input: string) {\n  return input.split('config')\n}\n`)
    const s = createToolkit({ workspace: many, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
    const r = await s.call('semantic_code_search', { query: 'parse config', top_k: 5, offset: 998, backend: 'literal' })
    expect(hitsOf(r)).toHaveLength(5)
    expect(ok(r)).toMatch(/Showing results 999-1,003 of [\d,]+\. Paging ends at offset 1,000: narrow the query or the path for the rest\.\)$/)
    expect(ok(r)).not.toMatch(/offset=1003/)
  })

  it('a top_k over 25 is clamped, said so, and the next results are at offset 25', async () => {
    const s = session('revka')
    const r = await s.call('semantic_code_search', { query: 'parse config', top_k: 26, backend: 'literal' })
    expect(hitsOf(r)).toHaveLength(25)
    expect(ok(r)).toMatch(/top_k 26 is more than the most, 25/)
    const next = await s.call('semantic_code_search', { query: 'parse config', top_k: 25, offset: 25, backend: 'literal' })
    const rest = hitsOf(next)
    expect(rest.length).toBe((r.data?.total as number) - 25)
    for (const h of rest) expect(hitsOf(r)).not.toContain(h)
    expect(ok(next)).toMatch(/^26\. /)
  })
})
