/**
 * Review of issue 7 (MCP server, SDK adapters, CLI, packaging, docs): each test asserts the
 * correct behaviour and fails on the code as reviewed.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { convertToModelMessages, jsonSchema, tool } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { aiSdkTools, createToolkit, runAnthropicToolUses, runOpenAIChatToolCalls } from '../ts/index.js'
import type { ToolResult } from '../ts/result.js'
import { newest, put, removeTempDirs, tempDir } from './helpers.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cli = path.join(repo, 'dist', 'cli.js')

beforeAll(() => {
  if (!fs.existsSync(cli) || fs.statSync(cli).mtimeMs < newest(path.join(repo, 'ts'))) {
    try {
      execFileSync('npm', ['run', 'build:ts'], { cwd: repo, stdio: 'pipe' })
    } catch {
      // checked below
    }
  }
  expect(fs.existsSync(cli)).toBe(true)
})
afterAll(removeTempDirs)

function runCli(args: string[], cwd: string) {
  const env = { ...process.env }
  delete env.FORCE_COLOR
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, env, encoding: 'utf8', input: '', timeout: 30_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('adapters: the approval phrase', () => {
  it('AI SDK: the approval phrase does not reach the model when the host converts UI messages (convertToModelMessages without tools)', async () => {
    const dir = tempDir('fsgate-review-ai-')
    const session = createToolkit({ workspace: dir, policy: { sandbox: 'none' } }).createSession()
    const tools = aiSdkTools(session, { tool, jsonSchema })
    const output = (await tools.shell.execute({ command: 'touch x.txt' }, {})) as ToolResult
    expect(output.error?.code).toBe('APPROVAL_REQUIRED')
    const phrase = String(output.data?.grantPhrase)
    // The chat pattern of AI SDK 6: the UI messages (with each tool's output) come back and
    // are converted for the next request. The output must not carry the phrase the model
    // could use to approve itself.
    const messages = await convertToModelMessages([
      { id: 'u', role: 'user', parts: [{ type: 'text', text: 'make x.txt' }] },
      { id: 'a', role: 'assistant', parts: [{ type: 'tool-shell', toolCallId: 'c1', state: 'output-available', input: { command: 'touch x.txt' }, output }] },
    ] as never)
    expect(JSON.stringify(messages)).not.toContain(phrase)
  })

  it('Anthropic/OpenAI runners: the host gets each ToolResult, so it can show the user the approval phrase the model is told about', async () => {
    const dir = tempDir('fsgate-review-anthropic-')
    const session = createToolkit({ workspace: dir, policy: { sandbox: 'none' } }).createSession() // guarded, no onApproval: the phrase flow
    const seen: ToolResult[] = []
    const blocks = await runAnthropicToolUses(session, [{ type: 'tool_use', id: 't1', name: 'shell', input: { command: 'touch x.txt' } }], {
      onResult: (r: ToolResult) => seen.push(r),
    } as never)
    // The model is told "they were shown a phrase to reply with" ...
    expect(JSON.stringify(blocks)).toMatch(/were shown a phrase/)
    // ... but nothing the runner gives the host carries it.
    expect(seen.map((r) => r.data?.grantPhrase)).toEqual([expect.stringMatching(/^approve command /)])

    const seenChat: ToolResult[] = []
    await runOpenAIChatToolCalls(session, { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"command":"touch y.txt"}' } }] }, {
      onResult: (r: ToolResult) => seenChat.push(r),
    } as never)
    expect(seenChat.map((r) => r.data?.grantPhrase)).toEqual([expect.stringMatching(/^approve command /)])
  })
})

describe('packaging', () => {
  it('the release names the repository that builds it, which npm publish --provenance requires', () => {
    const release = fs.readFileSync(path.join(repo, '.github/workflows/release.yml'), 'utf8')
    expect(release).toMatch(/--provenance|NPM_CONFIG_PROVENANCE: true/)
    // npm's registry refuses a provenance statement (E422) when repository.url does not
    // match the GitHub repository that built it; napi create-npm-dirs copies it to the
    // platform packages, so it must be set before them, from the building repository.
    const setAt = release.indexOf('npm pkg set repository.type=git "repository.url=git+https://github.com/${GITHUB_REPOSITORY}.git"')
    expect(setAt).toBeGreaterThan(0)
    expect(setAt).toBeLessThan(release.indexOf('npx napi create-npm-dirs'))
  })
})

describe('CLI against its help', () => {
  it('search --top defaults to the number its --help gives', () => {
    const dir = tempDir('fsgate-review-search-')
    for (let i = 1; i <= 15; i++) put(dir, `src/f${i}.ts`, `export function hello${i}() {\n  return 'hello'\n}\n`)
    const help = runCli(['search', '--help'], dir).stdout
    const promised = Number(/--top N\s+How many results \(default (\d+)/.exec(help)?.[1])
    expect(promised).toBeGreaterThan(0)
    const out = runCli(['search', 'hello'], dir)
    expect(out.code).toBe(0)
    const results = out.stdout.split('\n').filter((l) => /^\d+\. src\/f\d+\.ts/.test(l))
    expect(results.length).toBe(promised)
  })

  it('every command takes the common options --workspace, --preset and --json, as fsgate --help and the README say', () => {
    const dir = tempDir('fsgate-review-common-')
    const help = runCli(['--help'], dir).stdout
    expect(help).toMatch(/Common options:[\s\S]*--json/)
    expect(runCli(['definitions', '--json'], dir).code).toBe(0)
    expect(runCli(['risk', 'ls', '--workspace', dir], dir).code).toBe(0)
    expect(runCli(['risk', 'ls', '--preset', 'guarded'], dir).code).toBe(0)
  })
})
