// The packed tarball, installed in an empty folder as a user would install it, works from an
// ES module, from CommonJS (require() on Node 20, which cannot require an ES module), from
// TypeScript in both module formats, and as the `fsgate` command.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..')
const windows = process.platform === 'win32'
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version
let out: string
let app: string

/** Runs a command in the consumer folder; npm and npx are .cmd files on Windows. */
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: app, encoding: 'utf8', shell: windows && cmd !== process.execPath })

/** A consumer that reads hello.txt through a session and prints the result as JSON. */
const consumer = (load: string) => `${load}
;(async () => {
  const session = createToolkit({ workspace: process.cwd() }).createSession()
  const result = await session.call('Read', { file_path: 'hello.txt', offset: 2 })
  console.log(JSON.stringify({ isError: result.isError, text: result.content[0].text, totalLines: result.data.totalLines }))
})()
`

describe('consumers of the installed tarball', () => {
  beforeAll(() => {
    out = mkdtempSync(path.join(tmpdir(), 'fsgate-pack-'))
    app = mkdtempSync(path.join(tmpdir(), 'fsgate-app-'))
    // --ignore-scripts: `prepare` would rebuild the addon with cargo; the built dist/ and
    // native/*.node are packed as they are.
    execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', out], { cwd: root, stdio: 'pipe', shell: windows })
    const tarball = path.join(out, readdirSync(out).find((f) => f.endsWith('.tgz'))!)
    // No "type": the folder is CommonJS by default, as most older projects are.
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }))
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--ignore-scripts', '--prefer-offline', tarball], {
      cwd: app,
      stdio: 'pipe',
      shell: windows,
    })
    writeFileSync(path.join(app, 'hello.txt'), 'one\ntwo\n')
  }, 180_000)

  afterAll(() => {
    for (const dir of [out, app]) if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const expected = { isError: false, text: '2\ttwo', totalLines: 2 }

  it('works from an ES module: import { createToolkit } from "fsgate"', () => {
    writeFileSync(path.join(app, 'esm.mjs'), consumer(`import { createToolkit } from 'fsgate'`))
    expect(JSON.parse(run(process.execPath, ['esm.mjs']))).toEqual(expected)
  })

  it('works from CommonJS: const { createToolkit } = require("fsgate")', () => {
    writeFileSync(path.join(app, 'cjs.cjs'), consumer(`const { createToolkit } = require('fsgate')`))
    expect(JSON.parse(run(process.execPath, ['cjs.cjs']))).toEqual(expected)
    // The CommonJS entry is the package's own CommonJS build, not an ES module reached by
    // require(esm) (Node 22.12+ only).
    const entry = run(process.execPath, ['-p', `require.resolve('fsgate')`]).trim()
    expect(entry.endsWith(path.join('fsgate', 'dist', 'index.cjs'))).toBe(true)
  })

  it('serves both formats in one process from one addon (each build with its own completer)', () => {
    const script = `const cjs = require('fsgate')
import('fsgate').then(async (esm) => {
  const counts = await Promise.all([cjs.countTokens('hello world'), esm.countTokens('hello world')])
  console.log(JSON.stringify([typeof cjs.createToolkit, typeof esm.createToolkit, ...counts]))
})`
    writeFileSync(path.join(app, 'both.cjs'), script)
    const [a, b, n, m] = JSON.parse(run(process.execPath, ['both.cjs']))
    expect([a, b]).toEqual(['function', 'function'])
    expect(n).toBeGreaterThan(0)
    expect(m).toBe(n)
  })

  it('type-checks from TypeScript in both module formats (module nodenext)', () => {
    const body = `const session = createToolkit({ workspace: '.' }).createSession()
export async function first(): Promise<string> {
  const result: ToolResult = await session.call('Read', { file_path: 'hello.txt' })
  const block = result.content[0]
  return block && block.type === 'text' ? block.text : ''
}
`
    writeFileSync(path.join(app, 'typed.mts'), `import { createToolkit, type ToolResult } from 'fsgate'\n${body}`)
    writeFileSync(path.join(app, 'typed.cts'), `import { createToolkit, type ToolResult } from 'fsgate'\n${body}`)
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [path.join(root, 'node_modules', '@types')],
        },
        files: ['typed.mts', 'typed.cts'],
      }),
    )
    // A wrong import (a misspelt export) must fail, so the check can fail at all.
    writeFileSync(path.join(app, 'wrong.cts'), `import { createToolkitt } from 'fsgate'\nexport const x = createToolkitt\n`)
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    expect(run(process.execPath, [tsc, '-p', '.'])).toBe('')
    let wrong = ''
    try {
      run(process.execPath, [tsc, '--module', 'nodenext', '--noEmit', '--skipLibCheck', '--types', 'node', '--typeRoots', path.join(root, 'node_modules', '@types'), 'wrong.cts'])
    } catch (e) {
      wrong = String((e as { stdout: string }).stdout)
    }
    expect(wrong).toMatch(/wrong\.cts.*error TS2724: '"fsgate"' has no exported member named 'createToolkitt'/)
  })

  it('runs the fsgate command: npx fsgate --version and read', () => {
    expect(run('npx', ['--no-install', 'fsgate', '--version']).trim()).toBe(version)
    expect(run('npx', ['--no-install', 'fsgate', 'read', 'hello.txt'])).toBe('     1\tone\n     2\ttwo\n')
  })
})
