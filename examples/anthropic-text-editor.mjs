/**
 * An agent loop on the Anthropic Messages API with Anthropic's own tools, implemented by
 * fsgate: the text editor (text_editor_20250728) and bash (bash_20250124).
 *
 *   node examples/anthropic-text-editor.mjs                            # a scripted stand-in model, no network
 *   ANTHROPIC_API_KEY=sk-ant-… node examples/anthropic-text-editor.mjs   # a real model (ANTHROPIC_MODEL to choose)
 *
 * The stand-in is the real SDK client with a `fetch` that answers with canned Messages
 * API JSON. It views a file, fixes a TODO with str_replace, and counts the TODOs left
 * with bash, in the folder an earlier bash call moved to (the bash session persists).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import Anthropic from '@anthropic-ai/sdk'

import { anthropicTools, createToolkit, runAnthropicToolUses } from '../dist/index.js'

// A small project for the agent to work on.
const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-example-'))
fs.mkdirSync(path.join(workspace, 'src'))
fs.writeFileSync(path.join(workspace, 'src/greet.ts'), "export function greet(name: string): string {\n  return 'Hello, ' + name // TODO: localize\n}\n")
fs.writeFileSync(path.join(workspace, 'src/main.ts'), "import { greet } from './greet.js'\n\n// TODO: read the name from argv\nconsole.log(greet('world'))\n")

const live = Boolean(process.env.ANTHROPIC_API_KEY)
const client = new Anthropic(live ? {} : { apiKey: 'scripted', fetch: scriptedModel })
const model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-6'

// The guarded preset: edits of existing files ask the host once per folder, risky commands
// ask too. This host says yes to both, and shows what it was asked.
const toolkit = createToolkit({
  workspace,
  onPermissionRequest: (req) => (console.log(`host: allow changes in ${req.path}? yes`), true),
  onApproval: (req) => (console.log(`host: run ${req.command}? yes`), true),
})
const session = toolkit.createSession() // one per conversation, with its own bash session
const tools = anthropicTools(toolkit, { builtin: true, maxCharacters: 20_000 })

const messages = [
  { role: 'user', content: 'In src/greet.ts, replace the string concatenation with a template literal and drop its TODO. Then, in src, count the TODOs left per file.' },
]
try {
  for (let turn = 0; ; turn++) {
    if (turn === 10) throw new Error('the model did not finish in 10 turns')
    const reply = await client.messages.create({ model, max_tokens: 2048, tools, messages })
    messages.push({ role: 'assistant', content: reply.content })
    for (const block of reply.content) if (block.type === 'tool_use') console.log(`→ ${block.name} ${JSON.stringify(block.input)}`)
    const results = await runAnthropicToolUses(session, reply, { maxCharacters: 20_000, signal: AbortSignal.timeout(30_000) })
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
 * The stand-in model: a `fetch` for POST /v1/messages, one step per turn; it reads the
 * results it is sent, so they must have made the round trip.
 */
async function scriptedModel(_url, init) {
  const request = JSON.parse(String(init.body))
  const turn = request.messages.filter((m) => m.role === 'assistant').length
  const last = request.messages.at(-1)
  const results = Array.isArray(last.content) ? last.content.filter((b) => b.type === 'tool_result') : []
  const texts = results.map((r) => r.content.map((c) => c.text ?? '').join('\n'))
  if (results.some((r) => r.is_error)) throw new Error(`a tool failed: ${texts.join(' | ')}`)
  const use = (id, name, input) => ({ type: 'tool_use', id: `toolu_${turn}${id}`, name, input })
  let content
  if (turn === 0) {
    content = [use('a', 'str_replace_based_edit_tool', { command: 'view', path: 'src/greet.ts' }), use('b', 'bash', { command: 'cd src' })]
  } else if (turn === 1) {
    const line = texts[0].split('\n').find((l) => l.includes('TODO')) // "2:   return 'Hello, ' + name // TODO: localize"
    const old = line.slice(line.indexOf(': ') + 2)
    content = [use('a', 'str_replace_based_edit_tool', { command: 'str_replace', path: 'src/greet.ts', old_str: old, new_str: '  return `Hello, ${name}`' })]
  } else if (turn === 2) {
    if (!texts[0].startsWith('Successfully replaced text at exactly one location.')) throw new Error(`the edit did not arrive: ${texts[0]}`)
    content = [use('a', 'bash', { command: 'grep -c TODO greet.ts main.ts; pwd' })]
  } else {
    const [counts, where] = [texts[0].split('\n').slice(0, 2), texts[0].split('\n').at(-1)]
    content = [{ type: 'text', text: `TODOs left: ${counts.join(', ')} (counted in ${path.basename(where)}).` }]
  }
  const message = {
    id: `msg_${turn}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content,
    stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 20 },
  }
  return new Response(JSON.stringify(message), { status: 200, headers: { 'content-type': 'application/json' } })
}
