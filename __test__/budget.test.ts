/**
 * One output budget for every tool (issue 21): at its defaults and at its largest inputs,
 * each tool's result is at most limits.resultTokens by the real token counter (o200k, or
 * the host's own), a search page without a count of its own is at most
 * limits.searchPageTokens, and a result that was cut names the offset to go on at.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { countTokens, createToolkit, DEFAULT_LIMITS, type Limits, type Session, type ToolResult } from '../ts/index.js'
import { textPdf } from './pdf-make.js'
import { ok, put, removeTempDirs, rng, tempDir, textOf, word } from './helpers.js'

afterAll(removeTempDirs)

const BUDGET = DEFAULT_LIMITS.resultTokens
const PAGE = DEFAULT_LIMITS.searchPageTokens

let dir: string

/** Lines of about 450 characters, every one with "needle": any page of them is large. */
function longLines(rand: () => number, n: number): string {
  return Array.from({ length: n }, (_, i) => {
    let line = `needle ${i}`
    while (line.length < 450) line += ` ${word(rand, 2 + Math.floor(rand() * 9))}`
    return line
  }).join('\n')
}

beforeAll(() => {
  dir = tempDir('fsgate-budget-')
  const rand = rng(2121)
  // 1,500 files with long paths (listings), 40 with long lines (searches), code for the ranker.
  for (let f = 0; f < 1500; f++) put(dir, `many/${'folder-with-a-long-name/'.repeat(2)}file-number-${String(f).padStart(5, '0')}-with-a-long-name.txt`, 'x\n')
  for (let f = 0; f < 1500; f++) put(dir, `wide/${'a-long-name-'.repeat(12)}${String(f).padStart(5, '0')}.txt`, 'x\n')
  for (let f = 0; f < 40; f++) put(dir, `long/f${f}.txt`, `${longLines(rand, 200)}\n`)
  for (let f = 0; f < 30; f++) {
    const body = Array.from({ length: 38 }, (_, i) => `  const config${i} = parse(${JSON.stringify(longLines(rand, 1).slice(0, 300))})`).join('\n')
    put(dir, `src/m${f}.ts`, `export function parseConfig${f}() {\n${body}\n}\n`)
  }
})

function session(preset: 'revka' | 'claude-code' | 'gemini-cli', limits: Partial<Limits> = {}, countTokensFn?: (t: string) => number): Session {
  return createToolkit({ workspace: dir, preset, policy: { actionsPerHour: null }, limits, ...(countTokensFn ? { countTokens: countTokensFn } : {}) }).createSession()
}

/** The tokens of a result's text, by the built-in o200k counter. */
async function tokens(r: ToolResult): Promise<number> {
  return countTokens(textOf(r))
}

/** Asserts the result fits `max` tokens and returns the offset it names, if any. */
async function within(r: ToolResult, max = BUDGET): Promise<number | undefined> {
  const t = ok(r)
  const n = await tokens(r)
  expect(n, `${n} tokens: ${t.slice(-300)}`).toBeLessThanOrEqual(max)
  const m = /offset=(\d+)/.exec(t.split('\n').slice(-3).join('\n'))
  return m ? Number(m[1]) : undefined
}

describe('searches', () => {
  it('Grep at its defaults is a page well below the budget, and its continuation names the next result', async () => {
    const s = session('claude-code')
    for (const extra of [{}, { '-C': 5 }, { '-n': false }]) {
      const r = await s.call('Grep', { pattern: 'needle', path: 'long', output_mode: 'content', ...extra })
      const next = await within(r, PAGE)
      expect(next).toBe(r.data?.shown)
      expect(r.data?.numMatches).toBe(8000)
      // The next page starts at the first result this one left out.
      const after = await s.call('Grep', { pattern: 'needle', path: 'long', output_mode: 'content', offset: next, head_limit: 1, '-n': true })
      const all = await session('claude-code', { resultTokens: 10_000_000, searchOutputBytes: 1 << 30 }).call('Grep', { pattern: 'needle', path: 'long', output_mode: 'content', head_limit: (next as number) + 1, '-n': true })
      expect(ok(after).split('\n')[0]).toBe(ok(all).split('\n')[next as number])
    }
  })

  it('Grep with the largest inputs (every result, the most context) stays within the budget', async () => {
    const s = session('claude-code')
    for (const input of [
      { output_mode: 'content', head_limit: 0, '-C': 10_000 },
      { output_mode: 'content', head_limit: 0 },
      { output_mode: 'files_with_matches', head_limit: 0, pattern: 'x' },
      { output_mode: 'count', head_limit: 0, pattern: 'x' },
    ]) {
      const r = await s.call('Grep', { pattern: 'needle', ...input })
      const next = await within(r)
      expect(next, JSON.stringify(input)).toBe(r.data?.shown)
    }
  })

  it('a match whose context alone passes the page is shown with the context nearest it, and says so', async () => {
    const r = await session('claude-code').call('Grep', { pattern: '^needle 100 ', output_mode: 'content', head_limit: 0, '-C': 10_000, path: 'long/f0.txt' })
    await within(r)
    expect(ok(r)).toContain('needle 100 ')
    expect(ok(r)).toMatch(/context of the first match was cut to fit the page/)
  })

  it('content_search and grep_search at their defaults and largest inputs', async () => {
    const revka = session('revka')
    await within(await revka.call('content_search', { pattern: 'needle' }), PAGE)
    await within(await revka.call('content_search', { pattern: 'needle', max_results: 1_000_000, context_before: 100, context_after: 100 }))
    await within(await revka.call('content_search', { pattern: '.', output_mode: 'files_with_matches', max_results: 1_000_000, include_hidden: true, include_ignored: true }))
    const gemini = session('gemini-cli')
    await within(await gemini.call('grep_search', { pattern: 'needle' }), PAGE)
    expect(await within(await gemini.call('grep_search', { pattern: 'needle', total_max_matches: 1_000_000, context: 100 }))).toBeGreaterThan(0)
  })

  it('a host token counter cuts the page by its own count', async () => {
    // One token per character: far stricter than o200k.
    const s = session('claude-code', {}, (t) => t.length)
    const r = await s.call('Grep', { pattern: 'needle', output_mode: 'content', head_limit: 0 })
    expect(textOf(r).length).toBeLessThanOrEqual(BUDGET)
    expect(ok(r)).toMatch(new RegExp(`Continue with offset=${r.data?.shown}`))
  })

  it('glob_search, Glob and glob at the largest lists', async () => {
    const big = { globResults: 1_000_000 }
    const next = await within(await session('revka', big).call('glob_search', { pattern: '**/*' }))
    expect(next).toBeGreaterThan(100)
    // Newest first: another order, so another cut.
    expect(await within(await session('claude-code', big).call('Glob', { pattern: '**/*' }))).toBeGreaterThan(100)
    const gemini = await session('gemini-cli', big).call('glob', { pattern: '**/*' })
    await within(gemini)
    expect(ok(gemini)).toMatch(/\(Showing the first [\d,]+ of [\d,]+\. Use a more specific pattern or dir_path to see the rest\.\)$/)
  })

  it('semantic_code_search with the most snippets stays within the budget', async () => {
    const r = await session('revka').call('semantic_code_search', { query: 'parse config', top_k: 25, backend: 'literal' })
    const next = await within(r)
    expect((r.data?.hits as unknown[] | undefined)?.length).toBe(next)
    expect(next).toBeLessThan(25)
  })
})

describe('listings', () => {
  it('list_directory at its defaults and as the deepest, longest tree', async () => {
    const s = session('revka', { listEntries: 1_000_000 })
    await within(await s.call('list_directory', {}))
    const r = await s.call('list_directory', { path: 'wide', sizes: true, include_hidden: true, include_ignored: true })
    await within(await s.call('list_directory', { depth: 64, sizes: true, include_hidden: true, include_ignored: true }))
    const next = await within(r)
    expect(next).toBe(r.data?.shown)
    expect(next).toBeLessThan(r.data?.total as number)
  })
})

describe('command output', () => {
  it('shell output keeps its first and last lines and names the lines cut, with the offset to read them at', async () => {
    const s = session('claude-code')
    for (const n of [100_000, 400_000]) {
      const r = await s.call('Bash', { command: `seq 1 ${n}` })
      await within(r)
      const t = ok(r)
      const m = /\[… stdout (?:lines ([\d,]+)-([\d,]+) of ([\d,]+)|from line ([\d,]+) on).*offset=(\d+)/.exec(t)
      expect(m, t.slice(0, 300)).not.toBeNull()
      const lines = t.split('\n')
      const at = lines.findIndex((l) => l.startsWith('[… stdout'))
      const from = Number((m?.[1] ?? m?.[4] ?? '').replaceAll(',', ''))
      expect(Number(m?.[5])).toBe(from)
      // The line before the cut is the one before `from`; the output ends with the command's last line.
      expect(lines[at - 1]).toBe(String(from - 1))
      expect(lines.at(-1)).toBe(String(n))
      if (m?.[2]) expect(lines[at + 1]).toBe(String(Number(m[2].replaceAll(',', '')) + 1))
    }
  })

  it('one line longer than the budget is cut, and stderr keeps its share', async () => {
    const s = session('claude-code')
    await within(await s.call('Bash', { command: "head -c 900000 /dev/zero | tr '\\0' a" }))
    const both = await s.call('Bash', { command: 'seq 1 200000; seq 1 200000 >&2' })
    await within(both)
    expect(ok(both)).toMatch(/\[stderr\]\n1\n2\n/)
  })

  it('git diff, status and log of a large change stay within the budget and say what to narrow', async () => {
    const repo = tempDir('fsgate-budget-git-')
    const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo, encoding: 'utf8' })
    git('init', '-q')
    const rand = rng(7)
    fs.writeFileSync(path.join(repo, 'big.txt'), `${longLines(rand, 2000)}\n`)
    git('add', '.')
    git('commit', '-qm', 'first')
    fs.writeFileSync(path.join(repo, 'big.txt'), `${longLines(rand, 2000)}\n`)
    for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(repo, `untracked-file-with-a-long-name-${i}.txt`), 'x')
    const s = createToolkit({ workspace: repo, preset: 'revka', policy: { actionsPerHour: null } }).createSession()
    const diff = await s.call('git_operations', { operation: 'diff' })
    await within(diff)
    expect(ok(diff)).toMatch(/\(Showing lines 1-[\d,]+ of [\d,]+, to fit the limit of [\d,]+ tokens; continue with offset=([\d]+), or give files= of fewer files\.\)$/)
    expect(diff.data?.shownLines).toBe(Number(/offset=(\d+)/.exec(ok(diff))?.[1]))
    expect(diff.data?.truncated).toBe(true)
    const status = await s.call('git_operations', { operation: 'status' })
    await within(status)
    await within(await s.call('git_operations', { operation: 'log', limit: 100 }))
  })
})

describe('PDF text', () => {
  it('pdf_read of 200,000 characters is cut at a line to the budget, naming the offset and the page to go on at', async () => {
    const rand = rng(3)
    // Digits and short words: many tokens per character.
    const pages = Array.from({ length: 40 }, (_, p) => Array.from({ length: 120 }, (_, l) => `p${p + 1} l${l + 1} ${Array.from({ length: 12 }, () => `${Math.floor(rand() * 1e6)}`).join(' ')}`))
    fs.writeFileSync(path.join(dir, 'numbers.pdf'), textPdf(pages, { size: 2, filter: 'flate' }))
    const r = await session('revka').call('pdf_read', { path: 'numbers.pdf', max_chars: 200_000 })
    await within(r)
    expect(ok(r)).toMatch(/\[… truncated: showing characters 1-([\d,]+) of (?:more than )?[\d,]+, to fit the limit of [\d,]+ tokens\. Continue with offset=(\d+), or read from page (\d+) of 40 with file_read and pages="\3-\d+"\.\]$/)
    expect(r.data?.truncated).toBe(true)
  })
})
