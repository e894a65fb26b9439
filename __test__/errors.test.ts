/**
 * Every error a model can meet, in every dialect and over every way it reaches the model
 * (the result itself, the SDK adapters' text, MCP): at most MAX_ERROR_BYTES, with its
 * stable code, naming what to do next. The walk is keyed by ERROR_CODES, so a new code
 * without a case fails here. Also: the consent gate comes after validation (the user is
 * asked only about a change that would succeed), and FILE_TOO_LARGE for text.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { errorText, malformedArgumentsText } from '../ts/adapters/shared.js'
import { CUT_MARK, ERROR_CODES, type ErrorCode, FsgateError, fitMessage, MAX_ERROR_BYTES } from '../ts/errors.js'
import type { Toolkit, ToolkitOptions, ToolResult } from '../ts/index.js'
import type { Dialect } from '../ts/policy/presets.js'
import { base32Decode, totp } from '../ts/policy/otp.js'
import { errorResult } from '../ts/tool.js'
import { explainChange } from '../ts/tools/change.js'
import { nearMiss } from '../ts/tools/near-miss.js'
import { fails, ok, put, removeTempDirs, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

const bytes = (s: string) => Buffer.byteLength(s)

/** Imperative verbs a next step starts with. */
const VERBS =
  'read|call|give|use|retry|ask|fix|check|choose|add|set|wait|write|remove|try|run|pass|install|free|make|tell|search|repeat|copy|view|change|name|send|narrow|split|do not|start|look|resume|continue|extract|escape|merge|provide|include|create|delete|edit|list|pick|leave|quote|rename|close|stop|open|describe|pipe|keep|find|move|shorten|cut|drop|lower|raise'
/** A sentence (or clause after ";", ":", "then", "or") that starts with an imperative verb, or a "Did you mean …?". */
const NEXT_STEP = new RegExp(`(?:^|[.!?)]\\s+|[;:—]\\s*|\\bthen\\s+|,?\\s+or\\s+|\\n)(?:${VERBS}|did you mean)\\b`, 'i')

/** What a model reads of a failed result, per way it reaches the model. */
async function channels(result: ToolResult, mcp?: () => Promise<{ text: string; isError: boolean }>): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [
    ['result', textOf(result)],
    // OpenAI Chat/Responses and the AI SDK: "Error: …"; Anthropic: the blocks with is_error.
    ['openai/ai-sdk', errorText(result)],
  ]
  if (mcp) out.push(['mcp', (await mcp()).text])
  return out
}

function expectGoodError(text: string, code: string, where: string): void {
  expect(bytes(text), `${where}: ${bytes(text)} bytes:\n${text}`).toBeLessThanOrEqual(MAX_ERROR_BYTES)
  expect(text, `${where}: needed the last-resort cut:\n${text}`).not.toContain(CUT_MARK)
  expect(text, `${where}: names no next step:\n${text}`).toMatch(NEXT_STEP)
  if (where.endsWith('mcp')) expect(text).toContain(`[error code: ${code}]`)
}

interface Step {
  name: string
  input: Record<string, unknown>
}

interface Case {
  dialect: Dialect
  options?: Partial<ToolkitOptions>
  /** Files put in the workspace first. */
  setup?: (dir: string) => void
  /** Run on the toolkit before the last step. */
  before?: (toolkit: Toolkit, dir: string) => void
  /** Calls that succeed, then the one that fails with the code. */
  steps: Step[]
  /** Whether MCP carries it too (a call cancelled by its caller's AbortSignal does not). */
  mcp?: boolean
  abort?: boolean
}

/** A code no call can be made to fail with here: its message, made where the tools make it. */
interface Made {
  why: string
  make: () => ToolResult
}

const s = (name: string, input: Record<string, unknown>): Step => ({ name, input })
const LONG = 'x'.repeat(5000)
const NEAR_LINE = `  const total = computeTotal(items, ${'options.'.repeat(15)}rounding)`
const SECRET = 'JBSWY3DPEHPK3PXP'
const noSandbox: Partial<ToolkitOptions> = { policy: { sandbox: 'none' } }

/** Every code, with a call in each dialect that has a tool for it (or, for the few no call can reach, how it is made). */
const CASES: Record<ErrorCode, Case[] | Made> = {
  NO_CHANGE: [
    { dialect: 'revka', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('file_read', { path: 'a.txt' }), s('file_edit', { path: 'a.txt', old_string: 'alpha', new_string: 'alpha' })] },
    { dialect: 'claude', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('Read', { file_path: 'a.txt' }), s('Edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'alpha' })] },
    { dialect: 'anthropic', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('str_replace_based_edit_tool', { command: 'view', path: 'a.txt' }), s('str_replace_based_edit_tool', { command: 'insert', path: 'a.txt', insert_line: 1, insert_text: '' })] },
  ],
  NOT_READ: [
    { dialect: 'revka', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('file_edit', { path: 'a.txt', old_string: 'alpha', new_string: 'beta' })] },
    { dialect: 'gemini', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('write_file', { file_path: 'a.txt', content: 'x' })] },
    { dialect: 'codex', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('apply_patch', { input: '*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch' })] },
  ],
  PARTIAL_READ: [
    { dialect: 'claude', setup: (d) => put(d, 'a.txt', 'a\nb\nc\n'), steps: [s('Read', { file_path: 'a.txt', limit: 1 }), s('Edit', { file_path: 'a.txt', old_string: 'a', new_string: 'z' })] },
    { dialect: 'gemini', setup: (d) => put(d, 'a.txt', 'a\nb\nc\n'), steps: [s('read_file', { file_path: 'a.txt', end_line: 1 }), s('replace', { file_path: 'a.txt', instruction: 'x', old_string: 'a', new_string: 'z' })] },
  ],
  STALE: [
    {
      dialect: 'revka',
      setup: (d) => put(d, 'a.txt', 'alpha\n'),
      before: (_, d) => put(d, 'a.txt', 'changed\n'),
      steps: [s('file_read', { path: 'a.txt' }), s('file_write', { path: 'a.txt', content: 'x' })],
    },
    {
      dialect: 'claude',
      setup: (d) => put(d, 'a.txt', 'alpha\n'),
      before: (_, d) => put(d, 'a.txt', 'changed\n'),
      steps: [s('Read', { file_path: 'a.txt' }), s('Edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'beta' })],
    },
  ],
  STRING_NOT_FOUND: [
    {
      dialect: 'revka',
      setup: (d) => put(d, 'a.js', `function f() {\n${NEAR_LINE}\n}\n`),
      steps: [s('file_read', { path: 'a.js' }), s('file_edit', { path: 'a.js', old_string: NEAR_LINE.replace('rounding', 'rownding'), new_string: 'x' })],
    },
    {
      dialect: 'claude',
      setup: (d) => put(d, 'a.js', `${NEAR_LINE}\n${NEAR_LINE.replace('total', 'totals')}\n${NEAR_LINE.replace('items', 'itemz')}\n`),
      steps: [s('Read', { file_path: 'a.js' }), s('Edit', { file_path: 'a.js', old_string: `${LONG}\n${NEAR_LINE.replace('total', 'tot')}`, new_string: 'x' })],
    },
    {
      dialect: 'gemini',
      setup: (d) => put(d, 'a.js', `${NEAR_LINE}\n`),
      steps: [s('read_file', { file_path: 'a.js' }), s('replace', { file_path: 'a.js', instruction: 'x', old_string: NEAR_LINE.replace('rounding', 'rownding'), new_string: 'x' })],
    },
    {
      dialect: 'anthropic',
      setup: (d) => put(d, 'a.js', `${NEAR_LINE}\n`),
      steps: [s('str_replace_based_edit_tool', { command: 'view', path: 'a.js' }), s('str_replace_based_edit_tool', { command: 'str_replace', path: 'a.js', old_str: NEAR_LINE.replace('const', 'let'), new_str: 'x' })],
    },
    {
      dialect: 'codex',
      setup: (d) => put(d, 'a.js', `${NEAR_LINE}\n`),
      steps: [s('apply_patch', { input: `*** Begin Patch\n*** Update File: a.js\n@@\n-${NEAR_LINE.replace('items', 'itemz')}\n+x\n*** End Patch` })],
    },
  ],
  AMBIGUOUS_MATCH: [
    { dialect: 'revka', setup: (d) => put(d, 'a.txt', 'x\nx\n'), steps: [s('file_read', { path: 'a.txt' }), s('file_edit', { path: 'a.txt', old_string: 'x', new_string: 'y' })] },
    { dialect: 'consent', options: { preset: 'consent', onPermissionRequest: () => true }, setup: (d) => put(d, 'a.txt', 'x\nx\n'), steps: [s('edit', { path: 'a.txt', old_string: 'x', new_string: 'y' })] },
    { dialect: 'anthropic', setup: (d) => put(d, 'a.txt', 'x\nx\n'), steps: [s('str_replace_based_edit_tool', { command: 'view', path: 'a.txt' }), s('str_replace_based_edit_tool', { command: 'str_replace', path: 'a.txt', old_str: 'x', new_str: 'y' })] },
  ],
  INVALID_INPUT: [
    { dialect: 'revka', steps: [s('file_read', { path: 'a.txt', [LONG]: 1 })] },
    { dialect: 'claude', steps: [s('Read', {})] },
    { dialect: 'gemini', steps: [s('read_file', { file_path: 'a.txt', start_line: 0 })] },
    { dialect: 'codex', steps: [s('apply_patch', { input: `*** Begin Patch\n*** Frobnicate File: ${LONG}\n*** End Patch` })] },
    { dialect: 'anthropic', steps: [s('str_replace_based_edit_tool', { command: 'view', path: LONG })] },
    { dialect: 'consent', options: { preset: 'consent' }, steps: [s('edit', { path: 'a.txt' })] },
  ],
  INVALID_PATTERN: [
    { dialect: 'revka', steps: [s('content_search', { pattern: `(${LONG}` })] },
    { dialect: 'claude', steps: [s('Grep', { pattern: `[${LONG}` })] },
    { dialect: 'gemini', steps: [s('grep_search', { pattern: `(${LONG}` })] },
    { dialect: 'claude', steps: [s('Glob', { pattern: `{${LONG}` })] },
  ],
  NOT_FOUND: [
    { dialect: 'revka', steps: [s('file_read', { path: `${'x'.repeat(250)}/missing.txt` })] },
    { dialect: 'claude', steps: [s('Read', { file_path: 'missing.txt' })] },
    { dialect: 'gemini', steps: [s('read_file', { file_path: 'missing.txt' })] },
    { dialect: 'anthropic', steps: [s('str_replace_based_edit_tool', { command: 'view', path: 'missing.txt' })] },
    { dialect: 'codex', steps: [s('apply_patch', { input: '*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch' })] },
    { dialect: 'revka', steps: [s('list_directory', { path: 'missing' })] },
    { dialect: 'gemini', steps: [s('list_directory', { dir_path: 'missing' })] },
    { dialect: 'revka', steps: [s('file_info', { path: `missing/${'y'.repeat(200)}` })] },
    { dialect: 'revka', steps: [s('task_output', { task_id: LONG.slice(0, 300) })] },
    { dialect: 'claude', steps: [s('TaskStop', { task_id: 'nope' })] },
    { dialect: 'revka', steps: [s('git_operations', { operation: 'status', path: 'missing' })] },
    {
      dialect: 'revka',
      setup: (d) => put(d, 'a.ipynb', '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}'),
      steps: [s('file_read', { path: 'a.ipynb' }), s('notebook_edit', { notebook_path: 'a.ipynb', cell_id: LONG, new_source: 'y' })],
    },
  ],
  IS_DIRECTORY: [
    { dialect: 'revka', setup: (d) => fs.mkdirSync(path.join(d, 'sub')), steps: [s('file_read', { path: 'sub' })] },
    { dialect: 'claude', setup: (d) => fs.mkdirSync(path.join(d, 'sub')), steps: [s('Read', { file_path: 'sub' })] },
  ],
  FILE_EXISTS: [
    { dialect: 'consent', options: { preset: 'consent' }, setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('write_file', { path: 'a.txt', content: 'x' })] },
    { dialect: 'claude', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('Read', { file_path: 'a.txt' }), s('Edit', { file_path: 'a.txt', old_string: '', new_string: 'x' })] },
  ],
  FILE_TOO_LARGE: [
    { dialect: 'revka', options: { limits: { unrangedReadBytes: 100 } }, setup: (d) => put(d, 'big.log', 'line\n'.repeat(100)), steps: [s('file_read', { path: 'big.log' })] },
    { dialect: 'claude', options: { limits: { unrangedReadBytes: 100 } }, setup: (d) => put(d, 'big.log', 'line\n'.repeat(100)), steps: [s('Read', { file_path: 'big.log' })] },
    { dialect: 'gemini', options: { limits: { unrangedReadBytes: 100 } }, setup: (d) => put(d, 'big.log', 'line\n'.repeat(100)), steps: [s('read_file', { file_path: 'big.log' })] },
    { dialect: 'revka', options: { limits: { pdfMaxBytes: 10 } }, setup: (d) => put(d, 'a.pdf', '%PDF-1.4\n%%EOF\n'.repeat(4)), steps: [s('pdf_read', { path: 'a.pdf' })] },
  ],
  ENCODING: [
    { dialect: 'revka', setup: (d) => put(d, 'a.txt', Buffer.from('caf\xe9 au lait\n', 'latin1')), steps: [s('file_read', { path: 'a.txt' }), s('file_edit', { path: 'a.txt', old_string: 'au', new_string: 'or' })] },
    { dialect: 'claude', setup: (d) => put(d, 'a.txt', Buffer.from('caf\xe9 au lait\n', 'latin1')), steps: [s('Read', { file_path: 'a.txt' }), s('Edit', { file_path: 'a.txt', old_string: 'au', new_string: 'or' })] },
  ],
  TOKEN_LIMIT: [
    { dialect: 'revka', options: { limits: { readTokens: 50 } }, setup: (d) => put(d, 'a.txt', 'word '.repeat(400)), steps: [s('file_read', { path: 'a.txt' })] },
    { dialect: 'claude', options: { limits: { readTokens: 50 } }, setup: (d) => put(d, 'a.txt', 'word '.repeat(400)), steps: [s('Read', { file_path: 'a.txt' })] },
    { dialect: 'gemini', options: { limits: { readTokens: 50 } }, setup: (d) => put(d, 'a.txt', 'word '.repeat(400)), steps: [s('read_file', { file_path: 'a.txt' })] },
  ],
  BLOCKED_DEVICE: [{ dialect: 'claude', options: { policy: { allowedPaths: ['/dev'] } }, steps: [s('Read', { file_path: '/dev/zero' })] }],
  PATH_OUTSIDE_WORKSPACE: [
    { dialect: 'revka', steps: [s('file_read', { path: `../${'x'.repeat(250)}` })] },
    { dialect: 'claude', steps: [s('Write', { file_path: '/etc/fsgate-test.txt', content: 'x' })] },
    { dialect: 'codex', steps: [s('apply_patch', { input: '*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch' })] },
  ],
  PROTECTED_PATH: [
    { dialect: 'revka', setup: (d) => put(d, '.git/config', '[core]\n'), steps: [s('file_write', { path: '.git/config', content: 'x' })] },
    { dialect: 'claude', steps: [s('Write', { file_path: '.git/hooks/pre-commit', content: 'x' })] },
  ],
  PERMISSION_REQUIRED: [
    { dialect: 'revka', setup: (d) => put(d, `src/${'deep/'.repeat(20)}a.txt`, 'alpha\n'), steps: [s('file_read', { path: `src/${'deep/'.repeat(20)}a.txt` }), s('file_edit', { path: `src/${'deep/'.repeat(20)}a.txt`, old_string: 'alpha', new_string: 'beta' })] },
    { dialect: 'consent', options: { preset: 'consent' }, setup: (d) => put(d, `${'long-folder-name-'.repeat(6)}/a.txt`, 'alpha\n'), steps: [s('edit', { path: `${'long-folder-name-'.repeat(6)}/a.txt`, old_string: 'alpha', new_string: 'beta' })] },
    { dialect: 'consent', options: { preset: 'consent' }, setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('edit', { path: 'a.txt', old_string: 'alpha', new_string: 'beta', grant_phrase: 'allow edits in a.txt wrong' })] },
    { dialect: 'anthropic', setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('str_replace_based_edit_tool', { command: 'view', path: 'a.txt' }), s('str_replace_based_edit_tool', { command: 'str_replace', path: 'a.txt', old_str: 'alpha', new_str: 'beta' })] },
  ],
  PERMISSION_DENIED: [
    { dialect: 'consent', options: { preset: 'consent', onPermissionRequest: () => false }, setup: (d) => put(d, 'a.txt', 'alpha\n'), steps: [s('edit', { path: 'a.txt', old_string: 'alpha', new_string: 'beta' })], mcp: false },
    {
      dialect: 'claude',
      options: {
        preset: 'guarded',
        onPermissionRequest: () => {
          throw new Error(LONG)
        },
      },
      setup: (d) => put(d, 'a.txt', 'alpha\n'),
      steps: [s('Read', { file_path: 'a.txt' }), s('Edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'beta' })],
      mcp: false,
    },
  ],
  AUTONOMY: [
    { dialect: 'revka', options: { policy: { autonomy: 'read_only' } }, steps: [s('file_write', { path: 'a.txt', content: 'x' })] },
    { dialect: 'claude', options: { policy: { autonomy: 'read_only', sandbox: 'none' } }, steps: [s('Bash', { command: `rm -rf ${LONG}` })] },
  ],
  APPROVAL_REQUIRED: [
    { dialect: 'revka', options: noSandbox, steps: [s('shell', { command: `rm -rf src ${LONG}` })] },
    { dialect: 'claude', options: noSandbox, steps: [s('Bash', { command: 'rm -rf src' })] },
    { dialect: 'gemini', options: noSandbox, steps: [s('run_shell_command', { command: 'rm -rf src' })] },
    { dialect: 'codex', options: noSandbox, steps: [s('shell_command', { command: 'rm -rf src' })] },
    { dialect: 'anthropic', options: noSandbox, steps: [s('bash', { command: 'rm -rf src' })] },
    { dialect: 'revka', options: noSandbox, steps: [s('shell', { command: 'rm -rf src', grant_phrase: 'approve command nope' })] },
  ],
  COMMAND_DENIED: [
    { dialect: 'revka', options: { policy: { sandbox: 'none', deniedCommands: ['curl'] } }, steps: [s('shell', { command: `curl ${LONG}` })] },
    { dialect: 'claude', options: { policy: { sandbox: 'none', deniedCommands: ['curl'] } }, steps: [s('Bash', { command: 'curl example.com' })] },
  ],
  OTP_REQUIRED: [
    { dialect: 'revka', options: { preset: 'claude-code', policy: { otp: { secret: SECRET, actions: ['file_write'] } } }, steps: [s('file_write', { path: 'a.txt', content: 'x' })] },
    { dialect: 'claude', options: { preset: 'claude-code', policy: { otp: { secret: SECRET, actions: ['file_write'] } } }, steps: [s('Write', { file_path: 'a.txt', content: 'x', otp: '000000' })] },
  ],
  RATE_LIMITED: [
    { dialect: 'revka', options: { preset: 'claude-code', policy: { actionsPerHour: 1 } }, steps: [s('file_write', { path: 'a.txt', content: 'x' }), s('file_write', { path: 'b.txt', content: 'x' })] },
    { dialect: 'claude', options: { preset: 'claude-code', policy: { actionsPerHour: 1 } }, steps: [s('Write', { file_path: 'a.txt', content: 'x' }), s('Write', { file_path: 'b.txt', content: 'x' })] },
  ],
  TIMEOUT: [
    { dialect: 'revka', options: { preset: 'claude-code', policy: { sandbox: 'none' } }, steps: [s('shell', { command: 'sleep 5', timeout_secs: 1 })] },
    { dialect: 'claude', options: { preset: 'claude-code', policy: { sandbox: 'none' } }, steps: [s('Bash', { command: 'sleep 5', timeout: 500 })] },
  ],
  BACKEND_UNAVAILABLE: [{ dialect: 'revka', steps: [s('semantic_code_search', { query: 'parse', backend: 'semble' })] }],
  EMERGENCY_STOP: [
    { dialect: 'revka', before: (t) => t.emergencyStop(LONG), steps: [s('file_read', { path: 'a.txt' })] },
    { dialect: 'claude', before: (t) => t.emergencyStop(), steps: [s('Bash', { command: 'ls' })] },
  ],
  INVALID_PDF: [
    { dialect: 'revka', setup: (d) => put(d, 'a.pdf', `%PDF-1.4\n${LONG}`), steps: [s('pdf_read', { path: 'a.pdf' })] },
    { dialect: 'revka', setup: (d) => put(d, 'a.txt', 'text\n'), steps: [s('pdf_read', { path: 'a.txt' })] },
  ],
  INVALID_IMAGE: [{ dialect: 'claude', setup: (d) => put(d, 'a.png', Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from(LONG)])), steps: [s('Read', { file_path: 'a.png' })] }],
  INVALID_NOTEBOOK: [
    { dialect: 'claude', setup: (d) => put(d, 'a.ipynb', `{"cells": [${LONG}`), steps: [s('Read', { file_path: 'a.ipynb' }), s('NotebookEdit', { notebook_path: 'a.ipynb', cell_id: 'x', new_source: 'y' })] },
    { dialect: 'revka', setup: (d) => put(d, 'a.ipynb', '{"cells": 7}'), steps: [s('file_read', { path: 'a.ipynb' }), s('notebook_edit', { notebook_path: 'a.ipynb', cell_id: 'c1', new_source: 'y' })] },
  ],

  ABORTED: [{ dialect: 'revka', setup: (d) => put(d, 'a.txt', 'alpha\n'), abort: true, mcp: false, steps: [s('file_read', { path: 'a.txt' })] }],
  NO_SPACE: { why: 'a full disk cannot be arranged in a test', make: () => errorResult(explainChange(new FsgateError('NO_SPACE', 'no space left on device'), `src/${LONG}.txt`, fakeCtx()) as FsgateError) },
  IO_ERROR: { why: 'a failing disk cannot be arranged in a test', make: () => errorResult(explainChange(new FsgateError('IO_ERROR', `read failed: ${LONG}`), 'a.txt', fakeCtx()) as FsgateError) },
  INTERNAL: { why: 'a bug cannot be arranged on purpose', make: () => errorResult(new TypeError(LONG)) },
}

/** What `explainChange` reads of a call's context. */
function fakeCtx(): Parameters<typeof explainChange>[2] {
  return { workspace: '/w', dialect: 'revka', calledAs: 'file_edit' } as Parameters<typeof explainChange>[2]
}

/** Runs a case's steps through a session; returns the failed last result. */
async function runDirect(c: Case): Promise<ToolResult> {
  const { dir, toolkit, session } = workspace(c.options ?? {})
  c.setup?.(dir)
  const steps = c.steps.slice(0, -1)
  for (const step of steps) ok(await session.call(step.name, step.input, { dialect: c.dialect }))
  c.before?.(toolkit, dir)
  const last = c.steps[c.steps.length - 1] as Step
  const controller = new AbortController()
  if (c.abort) controller.abort()
  return session.call(last.name, last.input, { dialect: c.dialect, signal: controller.signal })
}

/** Runs a case's steps through an MCP server in this process; returns the last result as the model reads it. */
async function runMcp(c: Case, tellUser?: (dir: string) => string): Promise<{ text: string; isError: boolean }> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
  const { createMcpServer } = await import('../ts/mcp/server.js')
  const { dir, toolkit } = workspace(c.options ?? {})
  c.setup?.(dir)
  const server = createMcpServer(toolkit, { dialect: c.dialect, tellUser: () => (tellUser ? tellUser(dir) : path.join(dir, '.fsgate/phrases.log')) })
  const client = new Client({ name: 'errors-test', version: '1' })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await Promise.all([server.connect(a), client.connect(b)])
  try {
    let result: { text: string; isError: boolean } = { text: '', isError: false }
    for (const [i, step] of c.steps.entries()) {
      if (i === c.steps.length - 1) c.before?.(toolkit, dir)
      const r = await client.callTool({ name: step.name, arguments: step.input })
      result = { text: (r.content as Array<{ type: string; text?: string }>).map((b) => b.text ?? '').join('\n'), isError: r.isError === true }
      if (i < c.steps.length - 1) expect(result.isError, result.text).toBe(false)
    }
    return result
  } finally {
    await client.close()
  }
}

describe('every error code in every dialect', () => {
  it('has a case for every code', () => {
    expect(Object.keys(CASES).sort()).toEqual([...ERROR_CODES].sort())
  })

  for (const code of ERROR_CODES) {
    const cases = CASES[code]
    if (!Array.isArray(cases)) {
      it(`${code}: made as the tools make it (${cases.why})`, async () => {
        const result = cases.make()
        expect(result.error?.code).toBe(code)
        for (const [where, text] of await channels(result)) expectGoodError(text, code, `${code} via ${where}`)
      })
      continue
    }
    for (const [i, c] of cases.entries()) {
      it(`${code} #${i + 1} (${c.dialect}: ${c.steps[c.steps.length - 1]?.name}) is short, coded and says what to do next`, async () => {
        const result = await runDirect(c)
        fails(result, code)
        const mcp = c.mcp === false ? undefined : () => runMcp(c)
        for (const [where, text] of await channels(result, mcp)) expectGoodError(text, code, `${code} #${i + 1} ${c.dialect} via ${where}`)
      })
    }
  }

  it('in the consent preset, errors keep their [error] or [permission_required] mark within the size', async () => {
    const { dir, session } = workspace({ preset: 'consent' })
    put(dir, `${'long-folder-name-'.repeat(6)}/a.txt`, 'alpha\n')
    const gate = fails(await session.call('edit', { path: `${'long-folder-name-'.repeat(6)}/a.txt`, old_string: 'alpha', new_string: 'beta' }), 'PERMISSION_REQUIRED')
    expect(gate).toMatch(/^\[permission_required\] /)
    const missing = fails(await session.call('write_file', { path: `${'x'.repeat(300)}/a.txt`, content: 'x', overwrite: 'yes' }), 'INVALID_INPUT')
    expect(missing).toMatch(/^\[error\] /)
    for (const text of [gate, missing]) expectGoodError(text, '', 'consent')
  })

  it('over MCP, the consent preset keeps its [permission_required] mark on a gate told anew', async () => {
    const c: Case = {
      dialect: 'consent',
      options: { preset: 'consent' },
      setup: (d) => put(d, `${'long-folder-name-'.repeat(6)}/a.txt`, 'alpha\n'),
      steps: [s('edit', { path: `${'long-folder-name-'.repeat(6)}/a.txt`, old_string: 'alpha', new_string: 'beta' })],
    }
    const { text, isError } = await runMcp(c)
    expect(isError).toBe(true)
    expect(text).toMatch(/^\[permission_required\] Changing files in /)
    expect(text).not.toMatch(/allow edits in/)
    expectGoodError(text, 'PERMISSION_REQUIRED', 'consent via mcp')
  })

  it('over MCP, a phrase file of a long home is named whole or not at all, within the size, also after a wrong phrase', async () => {
    const unit = 'long-folder-name-'.repeat(6)
    const edit = { path: `${unit}/a.txt`, old_string: 'alpha', new_string: 'beta' }
    for (const home of ['/home/u', `/home/users/engineering/${'platform-team-'.repeat(6)}derberg`]) {
      const where = `the file ${home}/.local/state/fsgate/phrases.log`
      for (const steps of [[s('edit', edit)], [s('edit', { ...edit, grant_phrase: 'wrong phrase here' })]]) {
        const { text } = await runMcp({ dialect: 'consent', options: { preset: 'consent' }, setup: (d) => put(d, `${unit}/a.txt`, 'alpha\n'), steps }, () => where)
        expectGoodError(text, 'PERMISSION_REQUIRED', `consent via mcp, home ${home.length} bytes`)
        expect(text.includes(where) || text.includes("the server's phrase log"), text).toBe(true)
      }
    }
  })

  it('the OpenAI adapters\' error for arguments that are not JSON is short and names the fix', () => {
    const text = malformedArgumentsText('file_read', `{"path": "${LONG}`, `Unterminated string in JSON at position 5010 (line 1 column 5011)`)
    expectGoodError(text, '', 'openai arguments')
    expect(text).toContain('not valid JSON')
    let reason = ''
    try {
      JSON.parse(`{"path": ${LONG}}`)
    } catch (err) {
      reason = (err as Error).message
    }
    expectGoodError(malformedArgumentsText(LONG, `{"path": ${LONG}}`, reason), '', 'openai arguments (V8 reason)')
  })

  it('the last-resort cut keeps the start and the end (the next step) within the size', () => {
    const message = `Start ${'middle '.repeat(100)}Read the file again, then retry.`
    const cut = fitMessage(message)
    expect(bytes(cut)).toBeLessThanOrEqual(256)
    expect(cut).toMatch(/^Start /)
    expect(cut).toMatch(/Read the file again, then retry\.$/)
    expect(cut).toContain(CUT_MARK)
    expect(fitMessage('short')).toBe('short')
  })
})

describe('long paths', () => {
  it('NOT_FOUND, NOT_READ and PARTIAL_READ of a 230-byte path fit without the last-resort cut and keep their "Did you mean" and next step', async () => {
    const deep = Array.from({ length: 4 }, (_, i) => `folder-number-${i}-${'d'.repeat(40)}`).join('/')
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, `${deep}/file.txt`, Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n'))
    const checks: Array<[string, ToolResult, string]> = [
      ['Edit of a missing name', await session.call('Edit', { file_path: `${deep}/file.txtx`, old_string: 'a', new_string: 'b' }), 'NOT_FOUND'],
      ['Read of a missing name', await session.call('Read', { file_path: `${deep}/file.txtx` }), 'NOT_FOUND'],
      ['Grep in a missing folder', await session.call('Grep', { pattern: 'x', path: `${deep}/file.txtx` }), 'NOT_FOUND'],
      ['Edit before a read', await session.call('Edit', { file_path: `${deep}/file.txt`, old_string: 'line 1', new_string: 'b' }), 'NOT_READ'],
    ]
    ok(await session.call('Read', { file_path: `${deep}/file.txt`, offset: 1, limit: 10 }))
    checks.push(['Edit after a partial read', await session.call('Edit', { file_path: `${deep}/file.txt`, old_string: 'line 1\n', new_string: 'b\n' }), 'PARTIAL_READ'])
    for (const [what, result, code] of checks) {
      const text = fails(result, code)
      expectGoodError(text, code, what)
      if (code === 'NOT_FOUND') expect(text, what).toMatch(/Did you mean (\S*\/)?file\.txt/)
    }
  })
})

describe('near-miss lines', () => {
  it('are cut to a window around where they part from old_string', () => {
    const line = `${'a'.repeat(100)}XYZ${'b'.repeat(100)}`
    const cut = nearMiss(line, `${'a'.repeat(100)}QQQ`)
    expect(cut).toContain('XYZ')
    expect([...cut].length).toBeLessThanOrEqual(62)
    expect(cut.startsWith('…') && cut.endsWith('…')).toBe(true)
    expect(nearMiss('short line', 'other')).toBe('short line')
  })

  it('STRING_NOT_FOUND shows the closest line at the place it differs, with its number', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'a.js', `function f() {\n${NEAR_LINE}\n}\n`)
    ok(await session.call('Read', { file_path: 'a.js' }))
    const text = fails(await session.call('Edit', { file_path: 'a.js', old_string: NEAR_LINE.replace('rounding', 'rownding'), new_string: 'x' }), 'STRING_NOT_FOUND')
    expect(text, text).toMatch(/\n2: …[^\n]*options\.rounding\)\n/)
    expect(bytes(text)).toBeLessThanOrEqual(256)
  })
})

describe('FILE_TOO_LARGE for a text file', () => {
  it('names the text limit and how to read a part, once, in each dialect (a 15 MB log)', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const fd = fs.openSync(path.join(dir, 'big.log'), 'w')
    const chunk = Buffer.from('2026-12-03 12:00:00 INFO request served in 12 ms\n'.repeat(20_000))
    for (let written = 0; written < 15 * 1024 * 1024; written += chunk.length) fs.writeSync(fd, chunk)
    fs.closeSync(fd)
    for (const [dialect, name, input, part] of [
      ['revka', 'file_read', { path: 'big.log' }, /offset=1 limit=(\d+)/],
      ['claude', 'Read', { file_path: 'big.log' }, /offset=1 limit=(\d+)/],
      ['gemini', 'read_file', { file_path: 'big.log' }, /start_line=1 end_line=(\d+)/],
    ] as const) {
      const text = fails(await session.call(name, input, { dialect }), 'FILE_TOO_LARGE')
      expect(text).toMatch(/limits\.unrangedReadBytes/)
      const lines = Number(part.exec(text)?.[1])
      expect(text).not.toMatch(/pdf/i)
      expect(text.match(/big\.log/g)?.length).toBe(1)
      expect(text).toMatch(/^big\.log \([\d,]+ bytes\) is over limits\.unrangedReadBytes \(10,485,760\)/)
      // The part it names can be read.
      expect(lines).toBeGreaterThan(0)
      ok(await session.call(name, dialect === 'gemini' ? { file_path: 'big.log', start_line: 1, end_line: lines } : { ...input, offset: 1, limit: lines }, { dialect }))
    }
  })

  it('a PDF over its limit names limits.pdfMaxBytes', async () => {
    const { dir, session } = workspace({ preset: 'claude-code', limits: { pdfMaxBytes: 10 } })
    put(dir, 'a.pdf', '%PDF-1.4\n%%EOF\n'.repeat(4))
    const text = fails(await session.call('Read', { file_path: 'a.pdf' }), 'FILE_TOO_LARGE')
    expect(text).toMatch(/^a\.pdf \(60 bytes\) is over limits\.pdfMaxBytes \(10\)/)
    expect(text).not.toMatch(/too large to read:.*too large to read/)
  })
})

describe('the consent gate comes after validation', () => {
  /** A guarded session whose host UI records each question and says `answer`. */
  function guarded() {
    const asked: string[] = []
    const f = workspace({
      preset: 'guarded',
      onPermissionRequest: (req) => {
        asked.push(req.path)
        return true
      },
    })
    return { ...f, asked }
  }

  it('an edit that would fail returns its real error and asks nobody', async () => {
    const { dir, session, asked } = guarded()
    put(dir, 'src/a.txt', 'x\nx\nalpha\n')
    put(dir, 'src/latin.txt', Buffer.from('caf\xe9\n', 'latin1'))
    ok(await session.call('file_read', { path: 'src/a.txt' }))
    ok(await session.call('file_read', { path: 'src/latin.txt' }))
    fails(await session.call('file_edit', { path: 'src/a.txt', old_string: 'beta', new_string: 'gamma' }), 'STRING_NOT_FOUND')
    fails(await session.call('file_edit', { path: 'src/a.txt', old_string: 'x', new_string: 'y' }), 'AMBIGUOUS_MATCH')
    fails(await session.call('file_edit', { path: 'src/latin.txt', old_string: 'caf', new_string: 'tea' }), 'ENCODING')
    fs.appendFileSync(path.join(dir, 'src/a.txt'), 'more\n')
    fails(await session.call('file_edit', { path: 'src/a.txt', old_string: 'alpha', new_string: 'beta' }), 'STALE')
    fails(await session.call('file_write', { path: 'src/a.txt', content: 'new\n' }), 'STALE')
    expect(asked).toEqual([])
    expect(fs.readFileSync(path.join(dir, 'src/a.txt'), 'utf8')).toBe('x\nx\nalpha\nmore\n')
    // A change that would succeed is asked about, once, and made.
    ok(await session.call('file_read', { path: 'src/a.txt' }))
    ok(await session.call('file_edit', { path: 'src/a.txt', old_string: 'alpha', new_string: 'beta' }))
    expect(asked).toEqual(['src/a.txt'])
    expect(fs.readFileSync(path.join(dir, 'src/a.txt'), 'utf8')).toBe('x\nx\nbeta\nmore\n')
  })

  it('a change into a folder that cannot be written is refused before anyone is asked (write, edit, apply_patch)', async () => {
    const { dir, session, asked } = guarded()
    put(dir, 'locked/a.txt', 'alpha\n')
    const locked = path.join(dir, 'locked')
    // Root passes mode bits, so as root the folder is made immutable instead.
    const root = process.getuid?.() === 0
    const lock = (on: boolean): boolean => {
      if (root) return spawnSync('chattr', [on ? '+i' : '-i', locked]).status === 0
      fs.chmodSync(locked, on ? 0o555 : 0o755)
      return true
    }
    ok(await session.call('file_read', { path: 'locked/a.txt' }))
    expect(lock(true), 'chattr +i (root needs a file system with attributes, as ext4)').toBe(true)
    try {
      fails(await session.call('file_edit', { path: 'locked/a.txt', old_string: 'alpha', new_string: 'beta' }), 'PERMISSION_DENIED')
      fails(await session.call('file_write', { path: 'locked/a.txt', content: 'new\n' }), 'PERMISSION_DENIED')
      const patch = '*** Begin Patch\n*** Update File: locked/a.txt\n@@\n-alpha\n+beta\n*** End Patch'
      fails(await session.call('apply_patch', { input: patch }), 'PERMISSION_DENIED')
    } finally {
      lock(false)
    }
    expect(asked).toEqual([])
    expect(fs.readFileSync(path.join(locked, 'a.txt'), 'utf8')).toBe('alpha\n')
  })

  it('without a host UI, a failing edit gets its real error, not a phrase to ask the user for', async () => {
    const { dir, session } = workspace({ preset: 'consent' })
    put(dir, 'a.txt', 'alpha\n')
    fails(await session.call('edit', { path: 'a.txt', old_string: 'beta', new_string: 'gamma' }), 'STRING_NOT_FOUND')
    const gate = fails(await session.call('edit', { path: 'a.txt', old_string: 'alpha', new_string: 'beta' }), 'PERMISSION_REQUIRED')
    expect(gate).toMatch(/allow edits in a\.txt [0-9a-z-]+/)
  })

  it('the other changing tools validate first too: text editor insert, notebook, apply_patch', async () => {
    const { dir, session, asked } = guarded()
    put(dir, 'src/a.txt', 'alpha\n')
    put(dir, 'src/n.ipynb', JSON.stringify({ cells: [{ id: 'c1', cell_type: 'code', source: 'x', metadata: {}, outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 5 }))
    ok(await session.call('str_replace_based_edit_tool', { command: 'view', path: 'src/a.txt' }, { dialect: 'anthropic' }))
    fails(await session.call('str_replace_based_edit_tool', { command: 'insert', path: 'src/a.txt', insert_line: 9, insert_text: 'x' }, { dialect: 'anthropic' }), 'INVALID_INPUT')
    fails(await session.call('str_replace_based_edit_tool', { command: 'str_replace', path: 'src/a.txt', old_str: 'nope', new_str: 'x' }, { dialect: 'anthropic' }), 'STRING_NOT_FOUND')
    ok(await session.call('Read', { file_path: 'src/n.ipynb' }, { dialect: 'claude' }))
    const cell = await session.call('NotebookEdit', { notebook_path: 'src/n.ipynb', cell_id: 'nope', new_source: 'y' }, { dialect: 'claude' })
    expect(cell.isError).toBe(true)
    expect(cell.error?.code).not.toBe('PERMISSION_DENIED')
    fails(await session.call('apply_patch', { input: '*** Begin Patch\n*** Update File: src/a.txt\n@@\n-beta\n+gamma\n*** End Patch' }, { dialect: 'codex' }), 'STRING_NOT_FOUND')
    expect(asked).toEqual([])
    ok(await session.call('apply_patch', { input: '*** Begin Patch\n*** Update File: src/a.txt\n@@\n-alpha\n+gamma\n*** End Patch' }, { dialect: 'codex' }))
    expect(asked).toEqual(['src/a.txt'])
  })

  it('the change is checked again after the grant: a file changed while the user was asked is STALE', async () => {
    let dir = ''
    const { session, dir: d } = workspace({
      preset: 'guarded',
      onPermissionRequest: () => {
        fs.writeFileSync(path.join(dir, 'src/a.txt'), 'changed meanwhile\n')
        return true
      },
    })
    dir = d
    put(dir, 'src/a.txt', 'alpha\n')
    ok(await session.call('file_read', { path: 'src/a.txt' }))
    fails(await session.call('file_edit', { path: 'src/a.txt', old_string: 'alpha', new_string: 'beta' }), 'STALE')
    expect(fs.readFileSync(path.join(dir, 'src/a.txt'), 'utf8')).toBe('changed meanwhile\n')
  })
})

describe('OTP codes are still accepted (the walk uses a wrong one)', () => {
  it('a current code lets the write through', async () => {
    const { session } = workspace({ preset: 'claude-code', policy: { otp: { secret: SECRET, actions: ['file_write'] } } })
    ok(await session.call('file_write', { path: 'a.txt', content: 'x', otp: totp(base32Decode(SECRET), Date.now()) }))
  })
})
