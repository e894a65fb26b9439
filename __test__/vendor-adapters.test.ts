/**
 * The OpenAI Responses API's own tools through fsgate: the declarations (`{ type:
 * 'apply_patch' }`, `{ type: 'shell' }`, apply_patch as a freeform custom tool with
 * Codex's grammar) checked against the `openai` SDK's types, and a reply with an
 * apply_patch_call, a custom_tool_call and a shell_call round-tripped through the real
 * SDK. Last, the two examples of these tools run against their scripted models.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'

import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { APPLY_PATCH_GRAMMAR, openaiResponsesTools, runOpenAIResponsesCalls } from '../ts/index.js'
import { patchOf } from '../ts/adapters/openai.js'
import { cannedFetch, put, removeTempDirs, workspace } from './helpers.js'

afterAll(removeTempDirs)

function response(output: unknown[]) {
  return { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [] }
}


describe('openai responses: the built-in apply_patch and shell tools', () => {
  it('declares them as the SDK types them', () => {
    const { toolkit } = workspace()
    const builtin: OpenAI.Responses.Tool[] = openaiResponsesTools(toolkit, { builtin: true })
    const applyPatch: OpenAI.Responses.ApplyPatchTool = { type: 'apply_patch' }
    const shell: OpenAI.Responses.FunctionShellTool = { type: 'shell' }
    expect(builtin).toEqual([applyPatch, shell])
    const codex: OpenAI.Responses.Tool[] = openaiResponsesTools(toolkit, { dialect: 'codex' })
    const custom = codex[0] as OpenAI.Responses.CustomTool
    expect(custom).toEqual({ type: 'custom', name: 'apply_patch', description: expect.stringContaining('FREEFORM'), format: { type: 'grammar', syntax: 'lark', definition: APPLY_PATCH_GRAMMAR } })
  })

  it('turns each apply_patch_call operation into a V4A patch', () => {
    expect(patchOf({ type: 'create_file', path: 'a.md', diff: '+# A\nno plus\n' })).toBe('*** Begin Patch\n*** Add File: a.md\n+# A\n+no plus\n*** End Patch')
    expect(patchOf({ type: 'update_file', path: 'a.md', diff: '@@\n-x\n+y\n' })).toBe('*** Begin Patch\n*** Update File: a.md\n@@\n-x\n+y\n*** End Patch')
    expect(patchOf({ type: 'delete_file', path: 'a.md' })).toBe('*** Begin Patch\n*** Delete File: a.md\n*** End Patch')
    const whole = '*** Begin Patch\n*** Update File: a.md\n@@\n-x\n+y\n*** End Patch'
    expect(patchOf({ type: 'update_file', path: 'a.md', diff: `${whole}\n` })).toBe(whole)
    expect(patchOf({ type: 'rename_file', path: 'a.md' })).toEqual({ error: expect.stringContaining("unknown apply_patch operation 'rename_file'") })
    expect(patchOf({ type: 'delete_file' })).toEqual({ error: expect.stringContaining('no operation path') })
  })

  it('an apply_patch_call changes its one file: a path or a diff that would start another file section is refused', () => {
    // As text, each of these would be a patch that also deletes README.md.
    expect(patchOf({ type: 'delete_file', path: 'a.txt\n*** Delete File: README.md' })).toEqual({ error: expect.stringContaining('line break') })
    expect(patchOf({ type: 'create_file', path: 'a.txt\r\n*** Delete File: README.md', diff: '+x' })).toEqual({ error: expect.stringContaining('line break') })
    expect(patchOf({ type: 'update_file', path: 'a.txt', diff: '@@\n-x\n+y\n*** Delete File: README.md' })).toEqual({ error: expect.stringContaining('a.txt') })
    const other = '*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Delete File: README.md\n*** End Patch'
    expect(patchOf({ type: 'update_file', path: 'a.txt', diff: other })).toEqual({ error: expect.stringContaining('README.md') })
    // A create_file's lines are all content, whatever they say; an update may end at the end of the file.
    expect(patchOf({ type: 'create_file', path: 'a.txt', diff: '*** Delete File: README.md' })).toBe('*** Begin Patch\n*** Add File: a.txt\n+*** Delete File: README.md\n*** End Patch')
    expect(typeof patchOf({ type: 'update_file', path: 'a.txt', diff: '@@\n-x\n+y\n*** End of File' })).toBe('string')
  })

  it('answers apply_patch_call, custom_tool_call and shell_call items through the SDK, in order', async () => {
    const { dir, toolkit } = workspace({ preset: 'claude-code', limits: { shellTimeoutSecs: 1 } })
    put(dir, 'app.py', 'def greet():\n    print("Hi")\n')
    put(dir, 'old.txt', 'bye\n')
    const session = toolkit.createSession()
    const calls = [
      { type: 'apply_patch_call', id: 'ap_1', call_id: 'c_update', status: 'completed', operation: { type: 'update_file', path: 'app.py', diff: '@@ def greet():\n-    print("Hi")\n+    print("Hello")\n' } },
      { type: 'apply_patch_call', id: 'ap_2', call_id: 'c_create', status: 'completed', operation: { type: 'create_file', path: 'docs/new.md', diff: '+# New\n' } },
      { type: 'apply_patch_call', id: 'ap_3', call_id: 'c_delete', status: 'completed', operation: { type: 'delete_file', path: 'old.txt' } },
      { type: 'apply_patch_call', id: 'ap_4', call_id: 'c_miss', status: 'completed', operation: { type: 'update_file', path: 'app.py', diff: '@@\n-nothing like it\n+x\n' } },
      { type: 'custom_tool_call', id: 'ct_1', call_id: 'c_custom', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: free.txt\n+freeform\n*** End Patch\n' },
      {
        type: 'shell_call',
        id: 'sh_1',
        call_id: 'c_shell',
        status: 'completed',
        environment: null,
        action: { commands: ['cat docs/new.md', 'echo err >&2; exit 4', 'sleep 5', 'yes x | head -c 3000'], timeout_ms: null, max_output_length: 100 },
      },
    ]
    const done = { type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }
    const { fetch, bodies } = cannedFetch([response(calls), response([done])])
    const client = new OpenAI({ apiKey: 'test', fetch, maxRetries: 0 })
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'go' }]
    const first = await client.responses.create({ model: 'm', tools: openaiResponsesTools(toolkit, { builtin: true }), input })
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]))
    const outputs = await runOpenAIResponsesCalls(session, first)
    const items: OpenAI.Responses.ResponseInputItem[] = outputs
    input.push(...items)

    expect(outputs.map((o) => [o.type, o.call_id])).toEqual([
      ['apply_patch_call_output', 'c_update'],
      ['apply_patch_call_output', 'c_create'],
      ['apply_patch_call_output', 'c_delete'],
      ['apply_patch_call_output', 'c_miss'],
      ['custom_tool_call_output', 'c_custom'],
      ['shell_call_output', 'c_shell'],
    ])
    expect(outputs.slice(0, 4).map((o) => (o as { status: string }).status)).toEqual(['completed', 'completed', 'completed', 'failed'])
    expect(outputs[0].output).toBe('Success. Updated the following files:\nM app.py (+1 -1)')
    expect(outputs[3].output).toMatch(/^Error: Failed to find the expected lines in app\.py/)
    expect(outputs[4].output).toBe('Success. Updated the following files:\nA free.txt (+1)')
    expect(fs.readFileSync(path.join(dir, 'app.py'), 'utf8')).toBe('def greet():\n    print("Hello")\n')
    expect(fs.readFileSync(path.join(dir, 'docs/new.md'), 'utf8')).toBe('# New\n')
    expect(fs.existsSync(path.join(dir, 'old.txt'))).toBe(false)
    const shell = outputs[5] as OpenAI.Responses.ResponseInputItem.ShellCallOutput
    expect(shell.max_output_length).toBe(100)
    expect(shell.output[0]).toEqual({ stdout: '# New\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } })
    expect(shell.output[1]).toEqual({ stdout: '', stderr: 'err\n', outcome: { type: 'exit', exit_code: 4 } })
    expect(shell.output[2].outcome).toEqual({ type: 'timeout' })
    expect(shell.output[3].stdout.length).toBe(100)
    expect(shell.output[3].stdout).toMatch(/^x\nx\n.*characters cut.*\nx\n$/s)

    const final = await client.responses.create({ model: 'm', input })
    expect(final.output_text).toBe('Done.')
    expect((bodies[1].input as unknown[]).slice(-outputs.length)).toEqual(outputs)
  })

  it('max_output_length holds for each command, its stdout and stderr together', async () => {
    const { toolkit } = workspace({ preset: 'claude-code' })
    const [out] = await runOpenAIResponsesCalls(toolkit.createSession(), [
      { type: 'shell_call', call_id: 'c', action: { commands: ['yes o | head -c 3000; yes e | head -c 3000 >&2', 'yes e | head -c 30 >&2; echo short'], timeout_ms: null, max_output_length: 100 } },
    ])
    const shell = out as OpenAI.Responses.ResponseInputItem.ShellCallOutput
    expect(shell.output[0].stdout.length + shell.output[0].stderr.length).toBeLessThanOrEqual(100)
    expect(shell.output[0].stdout).toMatch(/characters cut/)
    expect(shell.output[0].stderr).toMatch(/characters cut/)
    // Within the limit together, nothing is cut.
    expect(shell.output[1]).toMatchObject({ stdout: 'short\n', stderr: 'e\n'.repeat(15) })
  })

  it('a refused shell command is an exit with its reason on stderr', async () => {
    const { toolkit } = workspace({ preset: 'guarded', policy: { sandbox: 'none' }, onApproval: () => false })
    const [out] = await runOpenAIResponsesCalls(toolkit.createSession(), [
      { type: 'shell_call', call_id: 'c', action: { commands: ['rm -rf build'], timeout_ms: null, max_output_length: null } },
    ])
    expect(out).toMatchObject({ type: 'shell_call_output', call_id: 'c', output: [{ stdout: '', stderr: expect.stringMatching(/^Error: The user declined/), outcome: { type: 'exit', exit_code: 126 } }] })
  })
})

// ---------------------------------------------------------------------------------------
// The examples of these tools, against the built package

const root = path.resolve(import.meta.dirname, '..')

describe('examples', () => {
  beforeAll(() => {
    if (!fs.existsSync(path.join(root, 'dist/tools/apply-patch.js'))) throw new Error('dist/ has no apply_patch: run `npm run build:ts` first')
  })

  const EXAMPLES: Array<[string, string, string]> = [
    ['anthropic-text-editor.mjs', '→ str_replace_based_edit_tool {"command":"view","path":"src/greet.ts"}', 'Final answer: TODOs left: greet.ts:0, main.ts:1 (counted in src).'],
    ['openai-apply-patch.mjs', '→ apply_patch update_file src/greet.ts', 'Final answer: TODOs left: src/greet.ts:0, src/main.ts:1; README starts "# src".'],
  ]
  it.each(EXAMPLES)('examples/%s runs its agent loop against the scripted model', async (example, step, last) => {
    const env = { ...process.env }
    for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']) delete env[key]
    const { stdout } = await promisify(execFile)(process.execPath, [path.join('examples', example)], { cwd: root, env, timeout: 30_000 })
    const lines = stdout.trim().split('\n')
    expect(lines).toContain(step)
    expect(lines).toContain('host: allow changes in src/greet.ts? yes')
    expect(lines.at(-1)).toBe(last)
  })
})
