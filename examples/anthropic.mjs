/**
 * An agent loop on the Anthropic Messages API with fsgate's tools.
 *
 *   node examples/anthropic.mjs                          # a scripted stand-in model, no network
 *   ANTHROPIC_API_KEY=sk-ant-… node examples/anthropic.mjs   # a real model (ANTHROPIC_MODEL to choose)
 *
 * The stand-in is the real SDK client with a `fetch` that answers with canned Messages
 * API JSON, so the SDK's own request and response handling runs.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import Anthropic from '@anthropic-ai/sdk'

import { anthropicTools, createToolkit, runAnthropicToolUses } from '../dist/index.js'

// A small project for the agent to look at.
const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-example-'))
fs.mkdirSync(path.join(workspace, 'src'))
fs.writeFileSync(path.join(workspace, 'src/greet.ts'), "export function greet(name: string): string {\n  return 'Hello, ' + name // TODO: localize\n}\n")
fs.writeFileSync(path.join(workspace, 'src/main.ts'), "import { greet } from './greet.js'\n\n// TODO: read the name from argv\nconsole.log(greet('world'))\n")

const live = Boolean(process.env.ANTHROPIC_API_KEY)
const client = new Anthropic(live ? {} : { apiKey: 'scripted', fetch: scriptedModel })
const model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-6'

const toolkit = createToolkit({ workspace })
const session = toolkit.createSession() // one per conversation
const tools = anthropicTools(toolkit)

const messages = [{ role: 'user', content: 'Read src/greet.ts and search the project for TODO. What does greet return, and how many TODOs are there, in which files?' }]
try {
  for (let turn = 0; ; turn++) {
    if (turn === 10) throw new Error('the model did not finish in 10 turns')
    const reply = await client.messages.create({ model, max_tokens: 1024, tools, messages })
    messages.push({ role: 'assistant', content: reply.content })
    for (const block of reply.content) if (block.type === 'tool_use') console.log(`→ ${block.name} ${JSON.stringify(block.input)}`)
    const results = await runAnthropicToolUses(session, reply, { signal: AbortSignal.timeout(30_000) })
    if (results.length === 0) {
      const answer = reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
      console.log(`Final answer: ${answer}`)
      break
    }
    messages.push({ role: 'user', content: results })
  }
} finally {
  fs.rmSync(workspace, { recursive: true, force: true })
}

/**
 * The stand-in model: a `fetch` for POST /v1/messages. First turn: ask for a read and a
 * grep. Next turn: answer from the tool results it was sent (so they must arrive).
 */
async function scriptedModel(_url, init) {
  const request = JSON.parse(String(init.body))
  const last = request.messages.at(-1)
  const results = Array.isArray(last.content) ? last.content.filter((b) => b.type === 'tool_result') : []
  const content =
    results.length === 0
      ? [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_01', name: 'file_read', input: { path: 'src/greet.ts' } },
          { type: 'tool_use', id: 'toolu_02', name: 'content_search', input: { pattern: 'TODO' } },
        ]
      : [{ type: 'text', text: answerFrom(results.map((r) => r.content.map((c) => c.text ?? '').join('\n'))) }]
  const message = {
    id: `msg_${request.messages.length}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content,
    stop_reason: results.length === 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 20 },
  }
  return new Response(JSON.stringify(message), { status: 200, headers: { 'content-type': 'application/json' } })
}

/** The stand-in's answer, read off the file_read and content_search outputs. */
function answerFrom([read, grep]) {
  const returned = read.match(/return (.+?)(?: \/\/|$)/m)?.[1]
  const files = [...new Set(grep.split('\n').filter((l) => l.includes('TODO')).map((l) => l.split(':')[0]))].sort()
  if (!returned || files.length === 0) throw new Error(`the tool results did not arrive: ${JSON.stringify([read, grep])}`)
  return `greet returns ${returned}; there are ${files.length} TODOs, in ${files.join(' and ')}.`
}
