// Heavy work runs on the addon's own worker threads: never on the JS thread, and never
// on libuv's pool that Node's own fs and crypto calls share.
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit } from '../ts/index.js'

const root = path.resolve(import.meta.dirname, '..')
let ws: string

describe('threads', () => {
  beforeAll(() => {
    ws = mkdtempSync(path.join(tmpdir(), 'fsgate-threads-'))
    const fd = openSync(path.join(ws, 'big.log'), 'w')
    const block = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `log line ${i} ${'x'.repeat(80)}\n`).join(''))
    for (let i = 0; i < 60; i++) writeSync(fd, block) // ~110 MB, 1.2 M lines
    closeSync(fd)
  }, 60_000)

  afterAll(() => rmSync(ws, { recursive: true, force: true }))

  it('reads while every libuv pool thread is busy', () => {
    // One libuv thread, held by a slow pbkdf2; a read must still finish long before it.
    const script = `
      import { pbkdf2 } from 'node:crypto'
      import { createToolkit } from ${JSON.stringify(path.join(root, 'dist', 'index.js'))}
      const t0 = performance.now()
      let cryptoDone = 0
      pbkdf2('pw', 'salt', 3_000_000, 32, 'sha256', () => { cryptoDone = performance.now() - t0 })
      const s = createToolkit({ workspace: ${JSON.stringify(ws)} }).createSession()
      const r = await s.call('file_read', { path: 'big.log', offset: 1_000_000, limit: 5 })
      const readDone = performance.now() - t0
      const wait = () => new Promise((ok) => setTimeout(ok, 20))
      while (!cryptoDone) await wait()
      console.log(JSON.stringify({ ok: !r.isError, readDone, cryptoDone }))
    `
    const out = execFileSync('node', ['--input-type=module', '-e', script], {
      env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
      encoding: 'utf8',
    })
    const { ok, readDone, cryptoDone } = JSON.parse(out) as { ok: boolean; readDone: number; cryptoDone: number }
    expect(ok).toBe(true)
    expect(cryptoDone).toBeGreaterThan(500)
    expect(readDone).toBeLessThan(cryptoDone)
  })

  it('keeps the event loop responsive during a full pass over a large file', async () => {
    const s = createToolkit({ workspace: ws }).createSession({ dedup: false })
    let worst = 0
    let last = performance.now()
    const timer = setInterval(() => {
      const t = performance.now()
      worst = Math.max(worst, t - last - 5)
      last = t
    }, 5)
    try {
      // Fresh toolkits so every read is a full pass (no index yet).
      for (let i = 0; i < 3; i++) {
        const r = await createToolkit({ workspace: ws }).createSession().call('file_read', { path: 'big.log', offset: 1_100_000, limit: 3 })
        expect(r.isError).toBe(false)
      }
      const r = await s.call('file_read', { path: 'big.log', offset: 5, limit: 1 })
      expect(r.isError).toBe(false)
    } finally {
      clearInterval(timer)
    }
    expect(worst).toBeLessThan(50)
  })
})
