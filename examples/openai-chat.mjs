/**
 * An agent loop on OpenAI Chat Completions with fsgate's tools.
 *
 *   node examples/openai-chat.mjs                      # a scripted stand-in model, no network
 *   OPENAI_API_KEY=sk-… node examples/openai-chat.mjs  # a real model (OPENAI_MODEL to choose)
 *
 * The stand-in is the real SDK client with a `fetch` that answers with canned Chat
 * Completions JSON, so the SDK's own request and response handling runs.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import OpenAI from 'openai'

import { createToolkit, openaiChatTools, runOpenAIChatToolCalls } from '../dist/index.js'

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
const tools = openaiChatTools(toolkit)

const messages = [{ role: 'user', content: 'Read src/greet.ts and search the project for TODO. What does greet return, and how many TODOs are there, in which files?' }]
try {
  for (let turn = 0; ; turn++) {
    if (turn === 10) throw new Error('the model did not finish in 10 turns')
    const completion = await client.chat.completions.create({ model, tools, messages })
    const message = completion.choices[0].message
    messages.push(message)
    for (const call of message.tool_calls ?? []) if (call.type === 'function') console.log(`→ ${call.function.name} ${call.function.arguments}`)
    // One { role: 'tool' } message per call (and a user message with any images).
    const results = await runOpenAIChatToolCalls(session, message, { signal: AbortSignal.timeout(30_000) })
    if (results.length === 0) {
      console.log(`Final answer: ${message.content}`)
      break
    }
    messages.push(...results)
  }
} finally {
  fs.rmSync(workspace, { recursive: true, force: true })
}

/**
 * The stand-in model: a `fetch` for POST /chat/completions. First turn: ask for a read
 * and a grep. Next turn: answer from the tool messages it was sent (so they must arrive).
 */
async function scriptedModel(_url, init) {
  const request = JSON.parse(String(init.body))
  const results = request.messages.filter((m) => m.role === 'tool')
  const message =
    results.length === 0
      ? {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'file_read', arguments: JSON.stringify({ path: 'src/greet.ts' }) } },
            { id: 'call_2', type: 'function', function: { name: 'content_search', arguments: JSON.stringify({ pattern: 'TODO' }) } },
          ],
        }
      : { role: 'assistant', content: answerFrom(results.map((m) => m.content)), refusal: null }
  const completion = {
    id: `chatcmpl-${request.messages.length}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop', logprobs: null }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  }
  return new Response(JSON.stringify(completion), { status: 200, headers: { 'content-type': 'application/json' } })
}

/** The stand-in's answer, read off the file_read and content_search outputs. */
function answerFrom([read, grep]) {
  const returned = read.match(/return (.+?)(?: \/\/|$)/m)?.[1]
  const files = [...new Set(grep.split('\n').filter((l) => l.includes('TODO')).map((l) => l.split(':')[0]))].sort()
  if (!returned || files.length === 0) throw new Error(`the tool results did not arrive: ${JSON.stringify([read, grep])}`)
  return `greet returns ${returned}; there are ${files.length} TODOs, in ${files.join(' and ')}.`
}
