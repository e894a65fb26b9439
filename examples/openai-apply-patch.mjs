/**
 * An agent loop on the OpenAI Responses API with the API's own apply_patch and shell
 * tools, implemented by fsgate.
 *
 *   node examples/openai-apply-patch.mjs                      # a scripted stand-in model, no network
 *   OPENAI_API_KEY=sk-… node examples/openai-apply-patch.mjs  # a real model (OPENAI_MODEL to choose)
 *
 * The stand-in is the real SDK client with a `fetch` that answers with canned Responses
 * API JSON: a shell_call to look, apply_patch_calls to change two files (V4A diffs), and
 * a shell_call to check.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import OpenAI from 'openai'

import { createToolkit, openaiResponsesTools, runOpenAIResponsesCalls } from '../dist/index.js'

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-example-'))
fs.mkdirSync(path.join(workspace, 'src'))
fs.writeFileSync(path.join(workspace, 'src/greet.ts'), "export function greet(name: string): string {\n  return 'Hello, ' + name // TODO: localize\n}\n")
fs.writeFileSync(path.join(workspace, 'src/main.ts'), "import { greet } from './greet.js'\n\n// TODO: read the name from argv\nconsole.log(greet('world'))\n")

const live = Boolean(process.env.OPENAI_API_KEY)
const client = new OpenAI(live ? {} : { apiKey: 'scripted', fetch: scriptedModel })
const model = process.env.OPENAI_MODEL ?? 'gpt-5.1'

const toolkit = createToolkit({
  workspace,
  onPermissionRequest: (req) => (console.log(`host: allow changes in ${req.path}? yes`), true),
  onApproval: (req) => (console.log(`host: run ${req.command}? yes`), true),
})
const session = toolkit.createSession()
const tools = openaiResponsesTools(toolkit, { builtin: true }) // [{ type: 'apply_patch' }, { type: 'shell' }]

const input = [{ role: 'user', content: 'Use a template literal in src/greet.ts and drop its TODO, add src/README.md saying what greet does, then count the TODOs left in src.' }]
try {
  for (let turn = 0; ; turn++) {
    if (turn === 10) throw new Error('the model did not finish in 10 turns')
    const response = await client.responses.create({ model, tools, input })
    input.push(...response.output)
    for (const item of response.output) {
      if (item.type === 'shell_call') console.log(`→ shell ${JSON.stringify(item.action.commands)}`)
      if (item.type === 'apply_patch_call') console.log(`→ apply_patch ${item.operation.type} ${item.operation.path}`)
    }
    const outputs = await runOpenAIResponsesCalls(session, response, { signal: AbortSignal.timeout(30_000) })
    if (outputs.length === 0) {
      console.log(`Final answer: ${response.output_text}`)
      break
    }
    input.push(...outputs)
  }
} finally {
  fs.rmSync(workspace, { recursive: true, force: true })
}

/** The stand-in model: a `fetch` for POST /responses, one step per turn, reading the outputs it was sent. */
async function scriptedModel(_url, init) {
  const request = JSON.parse(String(init.body))
  const outputs = request.input.filter((i) => i.type === 'shell_call_output' || i.type === 'apply_patch_call_output')
  const turn = request.input.filter((i) => i.type === 'shell_call' || i.type === 'apply_patch_call').length === 0 ? 0 : outputs.at(-1).type === 'shell_call_output' && outputs.length === 1 ? 1 : outputs.length === 3 ? 2 : 3
  const shell = (id, commands) => ({ type: 'shell_call', id: `sh_${id}`, call_id: `call_${id}`, action: { commands, timeout_ms: 10_000, max_output_length: 4096 }, status: 'completed', environment: null })
  const patch = (id, operation) => ({ type: 'apply_patch_call', id: `ap_${id}`, call_id: `call_${id}`, operation, status: 'completed' })
  let output
  if (turn === 0) output = [shell('look', ['cat src/greet.ts'])]
  else if (turn === 1) {
    const seen = outputs[0].output[0].stdout
    const line = seen.split('\n').find((l) => l.includes('TODO'))
    output = [
      patch('edit', { type: 'update_file', path: 'src/greet.ts', diff: `@@ export function greet(name: string): string {\n-${line}\n+  return \`Hello, \${name}\`\n` }),
      patch('add', { type: 'create_file', path: 'src/README.md', diff: '+# src\n+\n+greet(name) returns a greeting.\n' }),
    ]
  } else if (turn === 2) {
    const failed = outputs.slice(1).filter((o) => o.status !== 'completed')
    if (failed.length > 0) throw new Error(`a patch failed: ${failed.map((o) => o.output).join(' | ')}`)
    output = [shell('check', ['grep -c TODO src/greet.ts src/main.ts', 'head -1 src/README.md'])]
  } else {
    const [counts, readme] = outputs.at(-1).output.map((o) => o.stdout.trim())
    output = [
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `TODOs left: ${counts.split('\n').join(', ')}; README starts "${readme}".`, annotations: [] }] },
    ]
  }
  const response = {
    id: `resp_${request.input.length}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: request.model,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: request.tools,
    usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
  }
  return new Response(JSON.stringify(response), { status: 200, headers: { 'content-type': 'application/json' } })
}
