// `npm pack` of the root gives a tarball that installs in an empty folder and works there.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..')
let app: string
let out: string
let files: string[]

describe('npm pack', () => {
  beforeAll(() => {
    out = mkdtempSync(path.join(tmpdir(), 'fsgate-pack-'))
    const report = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: root, encoding: 'utf8' })) as Array<{
      filename: string
      files: Array<{ path: string }>
    }>
    files = report[0].files.map((f) => f.path)
    app = mkdtempSync(path.join(tmpdir(), 'fsgate-app-'))
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module' }))
    execFileSync('npm', ['install', '--no-audit', '--no-fund', path.join(out, readdirSync(out)[0])], { cwd: app, stdio: 'pipe' })
    writeFileSync(path.join(app, 'hello.txt'), 'one\ntwo\n')
  }, 180_000)

  afterAll(() => {
    for (const dir of [out, app]) if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('ships the facade, the loader and the addon, and no tests or sources', () => {
    expect(files).toContain('dist/index.js')
    expect(files).toContain('dist/index.d.ts')
    expect(files).toContain('dist/cli.js')
    expect(files).toContain('native/index.cjs')
    expect(files.some((f) => f.endsWith('.node'))).toBe(true)
    expect(files.filter((f) => /^(__test__|benches|crates|ts)\//.test(f))).toEqual([])
  })

  it('runs the CLI from the installed package', () => {
    const out = execFileSync('npx', ['fsgate', 'read', 'hello.txt'], { cwd: app, encoding: 'utf8' })
    expect(out).toBe('     1\tone\n     2\ttwo\n')
  })

  it('imports the API from the installed package', () => {
    const script = `import { createToolkit } from 'fsgate'
const s = createToolkit({ workspace: process.cwd() }).createSession()
const r = await s.call('Read', { file_path: 'hello.txt', offset: 2 })
console.log(JSON.stringify(r))`
    const out = JSON.parse(execFileSync('node', ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' }))
    expect(out.isError).toBe(false)
    expect(out.content[0].text).toBe('     2\ttwo')
    expect(out.data.totalLines).toBe(2)
  })
})
