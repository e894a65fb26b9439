/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against
 * `fsgate mcp --http`. The suite needs Node 22: it runs on the binary of the `node`
 * devDependency. Every server scenario the suite knows is either applicable (it must
 * pass) or listed below as not applicable, with the reason; the list is the suite's
 * expected-failures baseline, so a scenario that starts to pass, or a new one, fails here.
 * docs/mcp.md gives the same list.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, beforeAll, expect, it } from 'vitest'

import { newest, removeTempDirs, tempDir } from './helpers.js'
import { needs } from './peers.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const NODE22 = path.join(repo, 'node_modules', 'node', 'bin', 'node')
const SUITE = path.join(repo, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const node22 = fs.existsSync(NODE22) && /^v2[2-9]\./.test(spawnSync(NODE22, ['--version'], { encoding: 'utf8' }).stdout ?? '')

/** The scenarios that test what a server like fsgate's does. */
export const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection']

const FIXTURE_TOOLS = "calls the suite's own fixture tools (test_*), which only its reference server has; fsgate's tools, errors, progress and elicitation are tested in mcp.test.ts"

/** The rest, and why each does not apply. */
export const NOT_APPLICABLE: Record<string, string> = {
  'logging-set-level': 'fsgate declares no logging capability: it sends no log notifications (an approval phrase must never travel where the model reads)',
  'completion-complete': 'fsgate has no prompts or resource templates to complete',
  'tools-call-simple-text': FIXTURE_TOOLS,
  'tools-call-image': FIXTURE_TOOLS,
  'tools-call-audio': FIXTURE_TOOLS,
  'tools-call-embedded-resource': FIXTURE_TOOLS,
  'tools-call-mixed-content': FIXTURE_TOOLS,
  'tools-call-with-logging': FIXTURE_TOOLS,
  'tools-call-error': FIXTURE_TOOLS,
  'tools-call-with-progress': FIXTURE_TOOLS,
  'tools-call-sampling': FIXTURE_TOOLS,
  'tools-call-elicitation': FIXTURE_TOOLS,
  'json-schema-2020-12': FIXTURE_TOOLS,
  'server-sse-polling':
    "calls the fixture tool test_reconnection, and sends mcp-protocol-version 2025-03-26, to which the SDK rightly sends no priming event; mcp.test.ts tests the priming event, retry and Last-Event-ID replay with a 2025-11-25 client",
  'elicitation-sep1034-defaults': FIXTURE_TOOLS,
  'elicitation-sep1330-enums': FIXTURE_TOOLS,
  'resources-list': 'fsgate serves tools only, no resources',
  'resources-read-text': 'fsgate serves tools only, no resources',
  'resources-read-binary': 'fsgate serves tools only, no resources',
  'resources-templates-read': 'fsgate serves tools only, no resources',
  'resources-subscribe': 'fsgate serves tools only, no resources',
  'resources-unsubscribe': 'fsgate serves tools only, no resources',
  'prompts-list': 'fsgate serves tools only, no prompts',
  'prompts-get-simple': 'fsgate serves tools only, no prompts',
  'prompts-get-with-args': 'fsgate serves tools only, no prompts',
  'prompts-get-embedded-resource': 'fsgate serves tools only, no prompts',
  'prompts-get-with-image': 'fsgate serves tools only, no prompts',
}

const gate = needs({ 'node 22 (the node devDependency)': node22, '@modelcontextprotocol/conformance': fs.existsSync(SUITE) }, import.meta.url)
let server: ChildProcess | undefined
let url = ''

beforeAll(async () => {
  if (!gate.available) return
  const cli = path.join(repo, 'dist', 'cli.js')
  if (!fs.existsSync(cli) || fs.statSync(cli).mtimeMs < newest(path.join(repo, 'ts'))) spawnSync('npm', ['run', 'build:ts'], { cwd: repo, stdio: 'pipe' })
  server = spawn(process.execPath, [cli, 'mcp', '--workspace', tempDir('fsgate-conformance-'), '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] })
  url = await new Promise<string>((resolve, reject) => {
    let err = ''
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${err}`)), 20_000)
    server?.stderr?.on('data', (d: Buffer) => {
      err += d.toString('utf8')
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
  })
})

afterAll(() => {
  server?.kill('SIGTERM')
  removeTempDirs()
})

function suite(args: string[]) {
  const r = spawnSync(NODE22, [SUITE, ...args], { cwd: tempDir('fsgate-conformance-out-'), encoding: 'utf8', timeout: 240_000 })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

gate.describe('MCP conformance suite', () => {
  it('every server scenario it knows is judged here: applicable or not, with a reason', () => {
    const r = suite(['list', '--server'])
    expect(r.code, r.out).toBe(0)
    const known = [...r.out.matchAll(/^\s+- ([\w-]+) \[/gm)].map((m) => m[1])
    expect(known.length).toBeGreaterThan(20)
    expect([...known].sort()).toEqual([...APPLICABLE, ...Object.keys(NOT_APPLICABLE)].sort())
  })

  it('passes every applicable scenario; the others fail as expected (the baseline)', () => {
    const baseline = path.join(tempDir('fsgate-conformance-'), 'baseline.yml')
    fs.writeFileSync(baseline, `server:\n${Object.keys(NOT_APPLICABLE).map((s) => `  - ${s}\n`).join('')}`)
    const r = suite(['server', '--url', url, '--suite', 'all', '--expected-failures', baseline])
    expect(r.code, r.out.slice(-3000)).toBe(0)
    for (const scenario of APPLICABLE) expect(r.out, scenario).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`))
  })

  it('docs/mcp.md lists the scenarios that do not apply', () => {
    const doc = fs.readFileSync(path.join(repo, 'docs', 'mcp.md'), 'utf8')
    for (const scenario of [...APPLICABLE, ...Object.keys(NOT_APPLICABLE)]) expect(doc, scenario).toContain(`\`${scenario}\``)
  })
})
