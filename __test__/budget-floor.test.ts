/**
 * The smallest result budget (issue 21): limits.resultTokens and searchPageTokens have a
 * floor, MIN_RESULT_TOKENS, refused below it with a message that names it; at the floor
 * and a few budgets above it, every tool that returns a list or text keeps its whole
 * result (every content block, notes included) within the budget by the o200k counter,
 * on inputs that need cutting.
 */
import { spawnSync } from 'node:child_process'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { countTokens, createToolkit, MIN_RESULT_TOKENS, type Limits, type Session, type ToolResult } from '../ts/index.js'
import { textPdf } from './pdf-make.js'
import { put, removeTempDirs, rng, tempDir, textOf, word } from './helpers.js'

afterAll(removeTempDirs)

let dir: string

/** Lines of about `chars` characters, each with "needle". */
function longLines(rand: () => number, n: number, chars: number): string {
  return Array.from({ length: n }, (_, i) => {
    let line = `needle ${i}`
    while (line.length < chars) line += ` ${word(rand, 2 + Math.floor(rand() * 9))}`
    return line
  }).join('\n')
}

beforeAll(() => {
  dir = tempDir('fsgate-floor-')
  const rand = rng(1000)
  const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: dir })
  git('init', '-q')
  for (let f = 0; f < 10; f++) put(dir, `long/f${f}.txt`, `${longLines(rand, 100, 450)}\n`)
  // A match whose context alone passes any page of these budgets.
  put(dir, 'one/huge.txt', `${longLines(rand, 300, 300).replaceAll('needle', 'hay')}\nneedle alone\n${longLines(rand, 300, 300).replaceAll('needle', 'hay')}\n`)
  for (let f = 0; f < 300; f++) put(dir, `wide/${'a-long-folder-name-'.repeat(4)}/${'a-long-name-'.repeat(10)}${f}.txt`, 'x\n')
  for (let f = 0; f < 12; f++) {
    const body = Array.from({ length: 38 }, (_, i) => `  const config${i} = parse(${JSON.stringify(longLines(rand, 1, 300))})`).join('\n')
    put(dir, `src/m${f}.ts`, `export function parseConfig${f}() {\n${body}\n}\n`)
  }
  const pages = Array.from({ length: 10 }, (_, p) => Array.from({ length: 60 }, (_, l) => `p${p + 1} l${l + 1} ${Array.from({ length: 12 }, () => `${Math.floor(rand() * 1e6)}`).join(' ')}`))
  put(dir, 'numbers.pdf', textPdf(pages, { size: 2 }))
  git('add', '.')
  git('commit', '-qm', 'first')
  for (let i = 0; i < 100; i++) git('commit', '-q', '--allow-empty', '-m', `commit ${i}: ${longLines(rand, 1, 200)}`)
  for (let f = 0; f < 10; f++) put(dir, `long/f${f}.txt`, `${longLines(rand, 100, 450)}\n`)
})

function session(preset: 'revka' | 'claude-code', limits: Partial<Limits>): Session {
  return createToolkit({ workspace: dir, preset, policy: { actionsPerHour: null }, limits }).createSession()
}

const CALLS: ReadonlyArray<readonly [preset: 'revka' | 'claude-code', tool: string, input: Record<string, unknown>]> = [
  ['claude-code', 'Grep', { pattern: 'needle', output_mode: 'content', '-C': 3 }],
  ['claude-code', 'Grep', { pattern: 'needle', output_mode: 'content', head_limit: 0, '-C': 10_000, path: 'one/huge.txt' }],
  ['claude-code', 'Grep', { pattern: '.', output_mode: 'files_with_matches', head_limit: 0 }],
  ['claude-code', 'Grep', { pattern: '.', output_mode: 'count', head_limit: 0 }],
  ['revka', 'content_search', { pattern: 'needle', max_results: 100_000, context_before: 2, context_after: 2 }],
  ['revka', 'content_search', { pattern: '.', output_mode: 'files_with_matches', max_results: 100_000 }],
  ['revka', 'content_search', { pattern: '.', output_mode: 'count', max_results: 100_000 }],
  ['claude-code', 'Glob', { pattern: '**/*' }],
  ['revka', 'glob_search', { pattern: '**/*' }],
  ['revka', 'list_directory', { depth: 8, sizes: true }],
  ['claude-code', 'Read', { file_path: 'long/f0.txt' }],
  ['claude-code', 'Read', { file_path: 'long/f0.txt', offset: 1, limit: 3 }],
  ['revka', 'git_operations', { operation: 'diff' }],
  ['revka', 'git_operations', { operation: 'log', limit: 100 }],
  ['revka', 'git_operations', { operation: 'status' }],
  ['revka', 'pdf_read', { path: 'numbers.pdf', max_chars: 200_000 }],
  ['revka', 'shell', { command: 'seq 1 100000; seq 1 3000 >&2' }],
  ['claude-code', 'Bash', { command: "head -c 200000 /dev/zero | tr '\\0' a" }],
  ['revka', 'semantic_code_search', { query: 'parse config', top_k: 25, backend: 'literal' }],
]

describe('the floor of limits.resultTokens', () => {
  it('is 1,000, for resultTokens and searchPageTokens, refused below with the minimum named', () => {
    expect(MIN_RESULT_TOKENS).toBe(1_000)
    for (const key of ['resultTokens', 'searchPageTokens'] as const) {
      expect(() => createToolkit({ workspace: dir, limits: { [key]: 999 } })).toThrow(new TypeError(`fsgate: limits.${key} must be at least 1,000 (room for a page and its notes), got 999`))
      expect(() => createToolkit({ workspace: dir, limits: { [key]: 1_000 } })).not.toThrow()
    }
    expect(() => createToolkit({ workspace: dir, limits: { resultTokens: 0 } })).toThrow(/limits\.resultTokens must be a positive integer/)
  })

  // Read's own gate is limits.readTokens: the sweep sets it to the same budget.
  for (const budget of [MIN_RESULT_TOKENS, 1_500, 4_000]) {
    it(`at resultTokens ${budget.toLocaleString('en-US')}, every list and text result fits, all its blocks counted`, async () => {
      const sessions = { revka: session('revka', { resultTokens: budget, readTokens: budget }), 'claude-code': session('claude-code', { resultTokens: budget, readTokens: budget }) }
      let cut = 0
      for (const [preset, tool, input] of CALLS) {
        const r: ToolResult = await sessions[preset].call(tool, input)
        const t = textOf(r)
        const n = await countTokens(t)
        expect(n, `${tool} ${JSON.stringify(input)} at ${budget}: ${n} tokens\n${t.slice(-300)}`).toBeLessThanOrEqual(budget)
        if (/offset=\d+|cut|truncated|TOKEN_LIMIT|over the/i.test(t)) cut++
      }
      // The inputs are big enough to need cutting: nearly every call was cut.
      expect(cut).toBeGreaterThanOrEqual(CALLS.length - 2)
    })
  }
})
