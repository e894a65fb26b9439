/**
 * An agent loop on the Vercel AI SDK (v6) with fsgate's tools: `generateText` runs the
 * loop itself (tool calls, results, next step) until the model answers.
 *
 *   node examples/ai-sdk.mjs                               # a scripted stand-in model, no network
 *   AI_GATEWAY_API_KEY=… node examples/ai-sdk.mjs          # a real model via the AI Gateway (AI_MODEL to choose)
 *
 * The stand-in is `MockLanguageModelV3` from 'ai/test', so the SDK's own step loop,
 * tool execution and prompt conversion run.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import { generateText, jsonSchema, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'

import { aiSdkTools, createToolkit } from '../dist/index.js'

// A small project for the agent to look at.
const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-example-'))
fs.mkdirSync(path.join(workspace, 'src'))
fs.writeFileSync(path.join(workspace, 'src/greet.ts'), "export function greet(name: string): string {\n  return 'Hello, ' + name // TODO: localize\n}\n")
fs.writeFileSync(path.join(workspace, 'src/main.ts'), "import { greet } from './greet.js'\n\n// TODO: read the name from argv\nconsole.log(greet('world'))\n")

const live = Boolean(process.env.AI_GATEWAY_API_KEY)
// A string model id goes through the AI Gateway; any provider's model object works too.
const model = live ? (process.env.AI_MODEL ?? 'anthropic/claude-sonnet-4.6') : new MockLanguageModelV3({ doGenerate: scriptedModel })

const toolkit = createToolkit({ workspace })
const session = toolkit.createSession() // one per conversation
const tools = aiSdkTools(session, { tool, jsonSchema })

try {
  const result = await generateText({
    model,
    tools,
    stopWhen: stepCountIs(10),
    abortSignal: AbortSignal.timeout(120_000),
    prompt: 'Read src/greet.ts and search the project for TODO. What does greet return, and how many TODOs are there, in which files?',
    onStepFinish: (step) => {
      for (const call of step.toolCalls) console.log(`→ ${call.toolName} ${JSON.stringify(call.input)}`)
    },
  })
  console.log(`Final answer: ${result.text}`)
} finally {
  fs.rmSync(workspace, { recursive: true, force: true })
}

/**
 * The stand-in model's doGenerate. First step: ask for a read and a grep. Next step:
 * answer from the tool results in the prompt (so they must arrive).
 */
async function scriptedModel({ prompt }) {
  const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content.filter((p) => p.type === 'tool-result'))
  const usage = { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: 0 } }
  if (results.length === 0) {
    return {
      content: [
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'file_read', input: JSON.stringify({ path: 'src/greet.ts' }) },
        { type: 'tool-call', toolCallId: 'call_2', toolName: 'content_search', input: JSON.stringify({ pattern: 'TODO' }) },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    }
  }
  const texts = results.map((r) => (r.output.type === 'text' || r.output.type === 'error-text' ? r.output.value : JSON.stringify(r.output.value)))
  return { content: [{ type: 'text', text: answerFrom(texts) }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
}

/** The stand-in's answer, read off the file_read and content_search outputs. */
function answerFrom([read, grep]) {
  const returned = read.match(/return (.+?)(?: \/\/|$)/m)?.[1]
  const files = [...new Set(grep.split('\n').filter((l) => l.includes('TODO')).map((l) => l.split(':')[0]))].sort()
  if (!returned || files.length === 0) throw new Error(`the tool results did not arrive: ${JSON.stringify([read, grep])}`)
  return `greet returns ${returned}; there are ${files.length} TODOs, in ${files.join(' and ')}.`
}
