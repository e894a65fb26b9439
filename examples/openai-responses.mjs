/**
 * An agent loop on the OpenAI Responses API with fsgate's tools.
 *
 *   node examples/openai-responses.mjs                      # a scripted stand-in model, no network
 *   OPENAI_API_KEY=sk-… node examples/openai-responses.mjs  # a real model (OPENAI_MODEL to choose)
 *
 * The stand-in is the real SDK client with a `fetch` that answers with canned Responses
 * API JSON, so the SDK's own request and response handling runs. The loop keeps the
 * conversation itself (no `previous_response_id`), so it also works with `store: false`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import OpenAI from 'openai'

import { createToolkit, openaiResponsesTools, runOpenAIResponsesCalls } from '../dist/index.js'

// A small project for the agent to look at.
const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-example-'))
fs.mkdirSync(path.join(workspace, 'src'))
fs.writeFileSync(path.join(workspace, 'src/greet.ts'), "export function greet(name: string): string {\n  return 'Hello, ' + name // TODO: localize\n}\n")
fs.writeFileSync(path.join(workspace, 'src/main.ts'), "import { greet } from './greet.js'\n\n// TODO: read the name from argv\nconsole.log(greet('world'))\n")

const live = Boolean(process.env.OPENAI_API_KEY)
const client = new OpenAI(live ? {} : { apiKey: 'scripted', fetch: scriptedModel })
const model = process.env.OPENAI_MODEL ?? 'gpt-5-mini'

const toolkit = createToolkit({ workspace })
const session = toolkit.createSession() // one per conversation
const tools = openaiResponsesTools(toolkit)

const input = [{ role: 'user', content: 'Read src/greet.ts and search the project for TODO. What does greet return, and how many TODOs are there, in which files?' }]
try {
  for (let turn = 0; ; turn++) {
    if (turn === 10) throw new Error('the model did not finish in 10 turns')
    const response = await client.responses.create({ model, tools, input })
    input.push(...response.output) // the model's own items (calls, reasoning) go back with the results
    for (const item of response.output) if (item.type === 'function_call') console.log(`→ ${item.name} ${item.arguments}`)
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

/**
 * The stand-in model: a `fetch` for POST /responses. First turn: ask for a read and a
 * grep. Next turn: answer from the function_call_output items it was sent.
 */
async function scriptedModel(_url, init) {
  const request = JSON.parse(String(init.body))
  const results = request.input.filter((item) => item.type === 'function_call_output')
  const output =
    results.length === 0
      ? [
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'file_read', arguments: JSON.stringify({ path: 'src/greet.ts' }), status: 'completed' },
          { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'content_search', arguments: JSON.stringify({ pattern: 'TODO' }), status: 'completed' },
        ]
      : [
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: answerFrom(results.map((r) => r.output)), annotations: [] }],
          },
        ]
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

/** The stand-in's answer, read off the file_read and content_search outputs. */
function answerFrom([read, grep]) {
  const returned = read.match(/return (.+?)(?: \/\/|$)/m)?.[1]
  const files = [...new Set(grep.split('\n').filter((l) => l.includes('TODO')).map((l) => l.split(':')[0]))].sort()
  if (!returned || files.length === 0) throw new Error(`the tool results did not arrive: ${JSON.stringify([read, grep])}`)
  return `greet returns ${returned}; there are ${files.length} TODOs, in ${files.join(' and ')}.`
}
