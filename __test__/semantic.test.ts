/**
 * semantic_code_search through `session.call`: the built-in ranker (definitions first,
 * Korean and Thai queries, the index reused and refreshed), the output a model reads,
 * top_k, and the backends: Semble when it is on PATH, the fallback when it fails, and
 * BACKEND_UNAVAILABLE with the install hint when it is demanded but missing.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit, type Session, type ToolResult } from '../ts/index.js'
import { fails, ok, put, removeTempDirs, tempDir } from './helpers.js'

let dir: string

interface HitData {
  path: string
  startLine: number
  endLine: number
  score: number
}
const hitsOf = (r: ToolResult) => (r.data?.hits ?? []) as HitData[]
let session: Session

beforeAll(() => {
  dir = tempDir('fsgate-semantic-')
  put(dir, '.gitignore', 'dist/\n')
  put(dir, 'src/config.ts', '/** Reads the settings file. */\nexport function parseConfig(text: string): Config {\n  return JSON.parse(text)\n}\n')
  put(dir, 'src/app.ts', "import { parseConfig } from './config'\n\nexport function start() {\n  const config = parseConfig(load())\n  return parseConfig(load())\n}\n")
  put(dir, 'src/config.test.ts', "import { parseConfig } from './config'\n\ntest('parseConfig', () => {\n  parseConfig('{}')\n  parseConfig('[]')\n})\n")
  put(dir, 'dist/bundle.js', 'function parseConfig(t) { return JSON.parse(t) }\n')
  put(dir, 'src/blob.bin', Buffer.from('parseConfig\0\x01\x02'))
  put(dir, 'src/compress.rs', '/// 도구 출력의 컨텍스트를 압축합니다.\npub fn compress_context(out: &str) -> String {\n    out.to_string()\n}\n')
  put(dir, 'src/disk.rs', '// ฟังก์ชันนี้อ่านไฟล์จากดิสก์\npub fn load_from_disk(path: &str) -> Vec<u8> {\n    std::fs::read(path).unwrap()\n}\n')
  session = createToolkit({ workspace: dir, preset: 'revka' }).createSession()
})

afterAll(removeTempDirs)

describe('the built-in ranker', () => {
  it('ranks the definition of a queried symbol first, with path, lines, score and a numbered snippet', async () => {
    const r = await session.call('semantic_code_search', { query: 'parseConfig', backend: 'literal' })
    const text = ok(r)
    expect(text.split('\n')[0]).toMatch(/^1\. src\/config\.ts:1-4 {2}parseConfig {2}\(score \d+\.\d\d\)$/)
    expect(text).toContain('     2\texport function parseConfig(text: string): Config {')
    const hits = hitsOf(r)
    expect(hits[0]).toMatchObject({ path: 'src/config.ts', startLine: 1, endLine: 4 })
    expect(hits.map((h) => h.path)).not.toContain('dist/bundle.js')
    const test = hits.findIndex((h) => h.path === 'src/config.test.ts')
    expect(test).toBeGreaterThan(0)
    expect(r.data).toMatchObject({ backend: 'builtin', query: 'parseConfig', skippedFiles: 1 })
    expect(hits.map((h) => h.path)).not.toContain('src/blob.bin')
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score)
  })

  it('splits natural language and identifiers alike', async () => {
    const r = await session.call('semantic_code_search', { query: 'where is the config parsed? parse config', backend: 'literal' })
    expect(hitsOf(r)[0].path).toBe('src/config.ts')
  })

  it('answers Korean and Thai queries', async () => {
    const ko = await session.call('semantic_code_search', { query: '컨텍스트 압축', backend: 'literal' })
    expect(hitsOf(ko)[0].path).toBe('src/compress.rs')
    const th = await session.call('semantic_code_search', { query: 'อ่านไฟล์', backend: 'literal' })
    expect(hitsOf(th)[0].path).toBe('src/disk.rs')
  })

  it('reuses its index across calls and sessions, and sees a changed file', async () => {
    const s = createToolkit({ workspace: dir, preset: 'revka' }).createSession()
    const first = await s.call('semantic_code_search', { query: 'load from disk', backend: 'literal' })
    expect(first.data?.filesIndexed).toBeGreaterThan(0)
    const again = await s.call('semantic_code_search', { query: 'compress', backend: 'literal' })
    expect(again.data).toMatchObject({ filesIndexed: 0 })
    put(dir, 'src/disk.rs', '// ฟังก์ชันนี้อ่านไฟล์จากดิสก์\npub fn load_from_disk(path: &str) -> Vec<u8> {\n    std::fs::read(path).unwrap()\n}\npub fn quantum_flux() {}\n')
    const changed = await s.call('semantic_code_search', { query: 'quantum flux', backend: 'literal' })
    expect(changed.data).toMatchObject({ filesIndexed: 1 })
    expect(hitsOf(changed)[0].path).toBe('src/disk.rs')
  })

  it('top_k defaults to 8 and is capped at 25', async () => {
    const many = tempDir('fsgate-semantic-many-')
    for (let i = 0; i < 40; i++) put(many, `m${i}.ts`, `export function handler${i}() {\n  return retryRequest()\n}\n`)
    const s = createToolkit({ workspace: many, preset: 'revka' }).createSession()
    expect((await s.call('semantic_code_search', { query: 'retry request', backend: 'literal' })).data?.hits).toHaveLength(8)
    expect((await s.call('semantic_code_search', { query: 'retry request', backend: 'literal', top_k: 3 })).data?.hits).toHaveLength(3)
    expect((await s.call('semantic_code_search', { query: 'retry request', backend: 'literal', top_k: 100 })).data?.hits).toHaveLength(25)
  })

  it('cuts a long chunk to 40 lines and says where the rest is', async () => {
    const long = tempDir('fsgate-semantic-long-')
    const body = Array.from({ length: 70 }, (_, i) => `  step${i}()`).join('\n')
    put(long, 'big.ts', `export function migrateDatabase() {\n${body}\n}\n`)
    const r = await createToolkit({ workspace: long, preset: 'revka' }).createSession().call('semantic_code_search', { query: 'migrate database', backend: 'literal' })
    const text = ok(r)
    expect(text.split('\n')[0]).toMatch(/^1\. big\.ts:1-72 {2}migrateDatabase/)
    expect(text).toContain('    40\t  step38()')
    expect(text).not.toContain('    41\t')
    expect(text).toMatch(/… 32 more lines; read big\.ts with offset=41 for the rest$/)
  })

  it('no hits says so; bad input and paths are errors', async () => {
    expect(ok(await session.call('semantic_code_search', { query: 'zyxwvut', backend: 'literal' }))).toMatch(/^No code found for "zyxwvut"/)
    expect(fails(await session.call('semantic_code_search', { query: '   ' }), 'INVALID_INPUT')).toMatch(/query is blank/)
    expect(fails(await session.call('semantic_code_search', { query: 'x', top_k: 0 }), 'INVALID_INPUT')).toMatch(/top_k/)
    expect(fails(await session.call('semantic_code_search', { query: 'x', backend: 'vector' }), 'INVALID_INPUT')).toMatch(/backend/)
    fails(await session.call('semantic_code_search', { query: 'x', path: '/etc', backend: 'literal' }), 'PATH_OUTSIDE_WORKSPACE')
    fails(await session.call('semantic_code_search', { query: 'x', path: 'nope', backend: 'literal' }), 'NOT_FOUND')
    expect(fails(await session.call('semantic_code_search', { query: 'x', path: 'src/app.ts', backend: 'literal' }), 'INVALID_INPUT')).toMatch(/src\/app\.ts is a file, not a folder/)
  })
})

describe('backends', () => {
  const savedPath = process.env.PATH
  afterEach(() => {
    process.env.PATH = savedPath
  })

  /** Puts a fake `semble` first on PATH; `body` is the Node script's code. */
  function fakeSemble(body: string): void {
    const bin = tempDir('fsgate-fake-semble-')
    const file = path.join(bin, 'semble')
    fs.writeFileSync(file, `#!/usr/bin/env node\n${body}\n`)
    fs.chmodSync(file, 0o755)
    process.env.PATH = `${bin}${path.delimiter}${savedPath}`
  }

  it("backend 'semble' without Semble is BACKEND_UNAVAILABLE with the install hint", async () => {
    process.env.PATH = '/nonexistent'
    const r = await session.call('semantic_code_search', { query: 'parseConfig', backend: 'semble' })
    expect(fails(r, 'BACKEND_UNAVAILABLE')).toContain("Install with pip install semble or uv tool install semble, or use backend='literal'")
  })

  it("'auto' without Semble uses the built-in ranker", async () => {
    process.env.PATH = '/nonexistent'
    const r = await session.call('semantic_code_search', { query: 'parseConfig' })
    expect(r.data).toMatchObject({ backend: 'builtin' })
    expect(r.data?.fallback).toBeUndefined()
  })

  it("'auto' uses Semble when it is on PATH, with paths shown from the workspace", async () => {
    const results = [{ file_path: 'config.ts', start_line: 2, end_line: 4, score: 0.9, content: 'export function parseConfig(text: string): Config {\n  return JSON.parse(text)\n}' }]
    fakeSemble(`process.stdout.write(JSON.stringify({ query: process.argv.at(-2), results: ${JSON.stringify(results)} }) + '\\n')`)
    const r = await session.call('semantic_code_search', { query: 'parseConfig', path: 'src' })
    expect(r.data).toMatchObject({ backend: 'semble', hits: [{ path: 'src/config.ts', startLine: 2, endLine: 4, score: 0.9 }] })
    expect(ok(r)).toContain('     2\texport function parseConfig(text: string): Config {')
  })

  it("'auto' falls back to the built-in ranker when Semble fails, and says so", async () => {
    fakeSemble("process.stderr.write('Traceback...\\nValueError: boom\\n'); process.exit(1)")
    const r = await session.call('semantic_code_search', { query: 'parseConfig' })
    expect(r.data).toMatchObject({ backend: 'builtin', fallback: expect.stringContaining('Semble failed (exit)') })
    expect(ok(r).split('\n')[0]).toBe('(Semble failed (exit); these results are from the built-in ranker.)')
    expect(hitsOf(r)[0].path).toBe('src/config.ts')
  })

  it("backend 'semble' reports Semble's failure instead of falling back", async () => {
    fakeSemble("process.stderr.write('ValueError: boom\\n'); process.exit(1)")
    const r = await session.call('semantic_code_search', { query: 'parseConfig', backend: 'semble' })
    expect(fails(r, 'BACKEND_UNAVAILABLE')).toMatch(/Semble failed: .*boom/s)
  })

  it('drops a Semble hit that leads outside the folder searched, and shows the file\'s own lines', async () => {
    const outside = tempDir('fsgate-semantic-outside-')
    put(outside, 'secret.txt', 'TOKEN=hunter2\n')
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'src/leak.txt'))
    const results = [
      { file_path: 'src/leak.txt', start_line: 1, end_line: 1, score: 0.99, content: 'TOKEN=hunter2' },
      { file_path: 'src/config.ts', start_line: 2, end_line: 4, score: 0.5, content: 'not what the file says' },
    ]
    fakeSemble(`process.stdout.write(JSON.stringify({ query: 'q', results: ${JSON.stringify(results)} }) + '\\n')`)
    try {
      const r = await session.call('semantic_code_search', { query: 'token' })
      expect(r.data).toMatchObject({ backend: 'semble', droppedHits: 1, hits: [{ path: 'src/config.ts', startLine: 2, endLine: 4 }] })
      expect(ok(r)).not.toContain('hunter2')
      expect(ok(r)).toContain('     2\texport function parseConfig(text: string): Config {')
      expect(ok(r)).not.toContain('not what the file says')
    } finally {
      fs.unlinkSync(path.join(dir, 'src/leak.txt'))
    }
  })

  it('never runs a semble that lies inside the workspace', async () => {
    const bin = path.join(dir, '.venv/bin')
    fs.mkdirSync(bin, { recursive: true })
    const marker = path.join(tempDir('fsgate-semantic-marker-'), 'ran')
    fs.writeFileSync(path.join(bin, 'semble'), `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(marker)}, 'x')\n`)
    fs.chmodSync(path.join(bin, 'semble'), 0o755)
    process.env.PATH = `${bin}${path.delimiter}${savedPath}`
    try {
      const auto = await session.call('semantic_code_search', { query: 'parseConfig' })
      expect(auto.data).toMatchObject({ backend: 'builtin', fallback: expect.stringContaining('inside the workspace') })
      expect(fails(await session.call('semantic_code_search', { query: 'parseConfig', backend: 'semble' }), 'BACKEND_UNAVAILABLE')).toMatch(/inside the workspace/)
      expect(fs.existsSync(marker)).toBe(false)
    } finally {
      fs.rmSync(path.join(dir, '.venv'), { recursive: true })
    }
  })

  it('after Semble fails, auto skips it for a while; the environment it gets holds no secrets', async () => {
    const log = path.join(tempDir('fsgate-semantic-log-'), 'runs')
    fakeSemble(`require('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify(Object.keys(process.env)) + '\\n'); process.exit(3)`)
    process.env.FSGATE_TEST_API_KEY = 'sk-secret'
    try {
      const first = await session.call('semantic_code_search', { query: 'parseConfig', path: 'src' })
      expect(first.data?.fallback).toMatch(/Semble failed \(exit\)/)
      const second = await session.call('semantic_code_search', { query: 'parseConfig', path: 'src' })
      expect(second.data?.fallback).toMatch(/less than a minute ago \(exit\)/)
      const runs = fs.readFileSync(log, 'utf8').trim().split('\n')
      expect(runs).toHaveLength(1)
      const keys = JSON.parse(runs[0]) as string[]
      expect(keys).toContain('PATH')
      expect(keys).not.toContain('FSGATE_TEST_API_KEY')
    } finally {
      delete process.env.FSGATE_TEST_API_KEY
    }
  })
})
