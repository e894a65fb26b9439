/**
 * The SDK adapters (ts/adapters/): each one round-trips a scripted tool-use turn through
 * the real SDK (Anthropic and OpenAI clients with a canned `fetch`, the AI SDK with
 * MockLanguageModelV3): text and image results, an error result, malformed arguments.
 * The assignments to SDK types check, at compile time, that the adapters' own shapes fit
 * the SDKs'. Last, each example in examples/ runs as a child process against the built
 * package (dist/, from `npm run build:ts`) and must print its expected final line.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'

import Anthropic from '@anthropic-ai/sdk'
import { generateText, jsonSchema, stepCountIs, tool, type ToolSet } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import {
  aiSdkTools,
  anthropicTools,
  openaiChatTools,
  openaiResponsesTools,
  runAnthropicToolUses,
  runOpenAIChatToolCalls,
  runOpenAIResponsesCalls,
  toAiSdkOutput,
  toAnthropicContent,
  type Session,
  type Toolkit,
  type ToolResult,
} from '../ts/index.js'
import { cannedFetch, png, put, removeTempDirs, workspace } from './helpers.js'

const PICTURE = png(4, 3)
const PICTURE_B64 = PICTURE.toString('base64')

let dir: string
let toolkit: Toolkit
let session: Session

beforeAll(() => {
  ;({ dir, toolkit } = workspace())
  put(dir, 'notes.txt', 'alpha\nbeta\n')
  put(dir, 'pic.png', PICTURE)
})
// A fresh session per test: a session answers an unchanged re-read with a short stub.
beforeEach(() => {
  session = toolkit.createSession()
})
afterAll(removeTempDirs)


// ---------------------------------------------------------------------------------------
// Anthropic

function anthropicMessage(content: unknown[], stop_reason: string) {
  return { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content, stop_reason, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }
}

describe('anthropic adapter', () => {
  it('gives the definitions as Messages API tools', () => {
    const tools: Anthropic.Tool[] = anthropicTools(toolkit)
    const union: Anthropic.Messages.ToolUnion[] = tools
    expect(union).toHaveLength(toolkit.toolNames().length)
    expect(tools.map((t) => t.name)).toEqual(toolkit.toolNames())
    const read = anthropicTools(toolkit, { dialect: 'claude' }).find((t) => t.name === 'Read')
    expect(read?.input_schema).toMatchObject({ type: 'object', required: ['file_path'] })
  })

  it('round-trips text, image, error and malformed tool_use blocks through the SDK', async () => {
    const { fetch, bodies } = cannedFetch([
      anthropicMessage(
        [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'tu_text', name: 'file_read', input: { path: 'notes.txt' } },
          { type: 'tool_use', id: 'tu_image', name: 'file_read', input: { path: 'pic.png' } },
          { type: 'tool_use', id: 'tu_missing', name: 'file_read', input: { path: 'missing.txt' } },
          { type: 'tool_use', id: 'tu_bad', name: 'file_read', input: 'not an object' },
          { type: 'tool_use', id: 'tu_unknown', name: 'no_such_tool', input: {} },
        ],
        'tool_use',
      ),
      anthropicMessage([{ type: 'text', text: 'Done.' }], 'end_turn'),
    ])
    const client = new Anthropic({ apiKey: 'test', fetch, maxRetries: 0 })
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'go' }]
    const reply = await client.messages.create({ model: 'm', max_tokens: 100, tools: anthropicTools(toolkit), messages })
    messages.push({ role: 'assistant', content: reply.content })
    const results = await runAnthropicToolUses(session, reply)
    messages.push({ role: 'user', content: results })

    expect(results.map((r) => [r.tool_use_id, r.is_error])).toEqual([
      ['tu_text', false],
      ['tu_image', false],
      ['tu_missing', true],
      ['tu_bad', true],
      ['tu_unknown', true],
    ])
    expect(results[0].content).toEqual([{ type: 'text', text: expect.stringContaining('alpha') }])
    expect(results[1].content).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PICTURE_B64 } }])
    expect(results[2].content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('does not exist') })
    expect(results[3].content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('must be an object') })
    expect(results[4].content[0]).toMatchObject({ type: 'text', text: expect.stringContaining("Unknown tool 'no_such_tool'") })

    const final = await client.messages.create({ model: 'm', max_tokens: 100, messages })
    expect(final.content).toEqual([{ type: 'text', text: 'Done.' }])
    // What went over the wire is what the adapter made.
    const sent = bodies[1].messages as Anthropic.MessageParam[]
    expect(sent.at(-1)).toEqual({ role: 'user', content: results })
    expect(await runAnthropicToolUses(session, final)).toEqual([])
  })

  it('takes a content array and an AbortSignal', async () => {
    const blocks = [{ type: 'tool_use', id: 'a', name: 'file_read', input: { path: 'notes.txt' } }]
    const [result] = await runAnthropicToolUses(session, blocks, { signal: AbortSignal.abort() })
    expect(result).toMatchObject({ tool_use_id: 'a', is_error: true, content: [{ type: 'text', text: expect.stringContaining('cancelled') }] })
  })

  it('converts content blocks: empty text dropped, unsupported images named', () => {
    expect(toAnthropicContent([{ type: 'text', text: '' }])).toEqual([{ type: 'text', text: '(no output)' }])
    expect(toAnthropicContent([{ type: 'image', data: 'AAAA', mimeType: 'image/bmp' }])).toEqual([
      { type: 'text', text: '[image omitted: image/bmp, 3 bytes; the Messages API does not accept this image type]' },
    ])
  })
})

// ---------------------------------------------------------------------------------------
// OpenAI Chat Completions

function chatCompletion(message: Record<string, unknown>, finish_reason: string) {
  return { id: 'c1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { refusal: null, ...message }, finish_reason, logprobs: null }] }
}

const chatCalls = [
  { id: 'call_text', type: 'function', function: { name: 'file_read', arguments: '{"path":"notes.txt"}' } },
  { id: 'call_image', type: 'function', function: { name: 'file_read', arguments: '{"path":"pic.png"}' } },
  { id: 'call_missing', type: 'function', function: { name: 'file_read', arguments: '{"path":"missing.txt"}' } },
  { id: 'call_bad', type: 'function', function: { name: 'file_read', arguments: '{"path": "notes.txt"' } },
  { id: 'call_empty', type: 'function', function: { name: 'file_read', arguments: '' } },
  { id: 'call_custom', type: 'custom', custom: { name: 'x', input: 'y' } },
]

describe('openai chat completions adapter', () => {
  it('gives the definitions as function tools', () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = openaiChatTools(toolkit)
    expect(tools.map((t) => t.type === 'function' && t.function.name)).toEqual(toolkit.toolNames())
    expect(tools[0]).toMatchObject({ type: 'function', function: { name: 'file_read', parameters: { type: 'object' } } })
  })

  it('round-trips text, image, error and malformed tool calls through the SDK', async () => {
    const { fetch, bodies } = cannedFetch([
      chatCompletion({ role: 'assistant', content: null, tool_calls: chatCalls }, 'tool_calls'),
      chatCompletion({ role: 'assistant', content: 'Done.' }, 'stop'),
    ])
    const client = new OpenAI({ apiKey: 'test', fetch, maxRetries: 0 })
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }]
    const completion = await client.chat.completions.create({ model: 'm', tools: openaiChatTools(toolkit), messages })
    const message = completion.choices[0].message
    messages.push(message)
    const results = await runOpenAIChatToolCalls(session, message)
    messages.push(...results)

    // One tool message per call, in order, then one user message with the image.
    expect(results.map((m) => (m.role === 'tool' ? m.tool_call_id : m.role))).toEqual([...chatCalls.map((c) => c.id), 'user'])
    const text = (i: number) => String(results[i].content)
    expect(text(0)).toContain('alpha')
    expect(text(1)).toBe('[the image is in the next user message]')
    expect(text(2)).toMatch(/^Error: File does not exist: missing\.txt/)
    expect(text(3)).toMatch(/^Error: the arguments of this file_read call are not valid JSON \(.+\): \{"path": "notes\.txt"\nCall file_read again/)
    expect(text(4)).toMatch(/^Error: Invalid input for file_read: path: is required/)
    expect(text(5)).toContain("'custom' tool calls are not fsgate's")
    expect(results[6]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Image from tool call call_image (file_read):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PICTURE_B64}` } },
      ],
    })

    const final = await client.chat.completions.create({ model: 'm', messages })
    expect(final.choices[0].message.content).toBe('Done.')
    expect((bodies[1].messages as unknown[]).slice(-results.length)).toEqual(results)
    expect(await runOpenAIChatToolCalls(session, final.choices[0].message)).toEqual([])
  })

  it("says '[image omitted: …]' instead with images: 'omit'", async () => {
    const results = await runOpenAIChatToolCalls(session, { tool_calls: [chatCalls[1]] }, { images: 'omit' })
    expect(results).toEqual([
      { role: 'tool', tool_call_id: 'call_image', content: `[image omitted: image/png, ${PICTURE.length} bytes; tool messages carry text only]` },
    ])
  })
})

// ---------------------------------------------------------------------------------------
// OpenAI Responses

function response(output: unknown[]) {
  return { id: 'r1', object: 'response', created_at: 0, status: 'completed', model: 'm', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [] }
}

const responseCalls = [
  { type: 'reasoning', id: 'rs_1', summary: [] },
  { type: 'function_call', id: 'fc_1', call_id: 'call_text', name: 'file_read', arguments: '{"path":"notes.txt"}', status: 'completed' },
  { type: 'function_call', id: 'fc_2', call_id: 'call_image', name: 'file_read', arguments: '{"path":"pic.png"}', status: 'completed' },
  { type: 'function_call', id: 'fc_3', call_id: 'call_missing', name: 'file_read', arguments: '{"path":"missing.txt"}', status: 'completed' },
  { type: 'function_call', id: 'fc_4', call_id: 'call_bad', name: 'file_read', arguments: '{path: notes.txt}', status: 'completed' },
]

describe('openai responses adapter', () => {
  it('gives the definitions as non-strict function tools', () => {
    const tools: OpenAI.Responses.Tool[] = openaiResponsesTools(toolkit)
    expect(tools.map((t) => t.type === 'function' && t.name)).toEqual(toolkit.toolNames())
    expect(tools[0]).toMatchObject({ type: 'function', name: 'file_read', strict: false, parameters: { type: 'object' } })
  })

  it('round-trips text, image, error and malformed function calls through the SDK', async () => {
    const done = { type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }
    const { fetch, bodies } = cannedFetch([response(responseCalls), response([done])])
    const client = new OpenAI({ apiKey: 'test', fetch, maxRetries: 0 })
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'go' }]
    const first = await client.responses.create({ model: 'm', tools: openaiResponsesTools(toolkit), input })
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]))
    const outputs = await runOpenAIResponsesCalls(session, first)
    input.push(...outputs)

    expect(outputs.map((o) => o.call_id)).toEqual(['call_text', 'call_image', 'call_missing', 'call_bad'])
    expect(outputs.every((o) => o.type === 'function_call_output')).toBe(true)
    expect(outputs[0].output).toContain('alpha')
    expect(outputs[1].output).toEqual([{ type: 'input_image', image_url: `data:image/png;base64,${PICTURE_B64}`, detail: 'auto' }])
    expect(outputs[2].output).toMatch(/^Error: File does not exist/)
    expect(outputs[3].output).toMatch(/^Error: the arguments of this file_read call are not valid JSON/)

    const final = await client.responses.create({ model: 'm', input })
    expect(final.output_text).toBe('Done.')
    expect((bodies[1].input as unknown[]).slice(-outputs.length)).toEqual(outputs)
    // The output array works too, and items other than function calls are skipped.
    expect(await runOpenAIResponsesCalls(toolkit.createSession(), first.output.slice(0, 2))).toEqual([outputs[0]])
    expect(await runOpenAIResponsesCalls(session, final)).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------
// Vercel AI SDK

describe('ai sdk adapter', () => {
  it('builds one tool per definition with the functions passed in', () => {
    const tools: ToolSet = aiSdkTools(session, { tool, jsonSchema })
    expect(Object.keys(tools)).toEqual(toolkit.toolNames())
    expect(Object.keys(aiSdkTools(session, { tool, jsonSchema }, { dialect: 'claude' }))).toContain('Read')
    // @ts-expect-error the functions from 'ai' are required
    expect(() => aiSdkTools(session)).toThrow(/aiSdkTools\(session, \{ tool, jsonSchema \}\)/)
  })

  it('round-trips text, image, error and malformed tool calls through generateText', async () => {
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
    const call = (toolCallId: string, input: string) => ({ type: 'tool-call' as const, toolCallId, toolName: 'file_read', input })
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            call('call_text', '{"path":"notes.txt"}'),
            call('call_image', '{"path":"pic.png"}'),
            call('call_missing', '{"path":"missing.txt"}'),
            call('call_bad', '{"path": '),
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
      ],
    })
    const result = await generateText({ model, tools: aiSdkTools(session, { tool, jsonSchema }), stopWhen: stepCountIs(5), prompt: 'go' })
    expect(result.text).toBe('Done.')

    // execute returned fsgate's ToolResult, data and all.
    const outputs = Object.fromEntries(result.steps[0].toolResults.map((r) => [r.toolCallId, r.output as ToolResult]))
    expect(outputs.call_text.isError).toBe(false)
    expect(outputs.call_text.data).toMatchObject({ path: 'notes.txt', totalLines: 2 })
    expect(outputs.call_missing.error?.code).toBe('NOT_FOUND')

    // What the model was sent in the second step, through toModelOutput.
    const sent = model.doGenerateCalls[1].prompt.flatMap((m) => (m.role === 'tool' ? m.content : []))
    const byId = Object.fromEntries(sent.map((p) => [p.type === 'tool-result' ? p.toolCallId : '', p.type === 'tool-result' ? p.output : null]))
    expect(byId.call_text).toEqual({ type: 'text', value: expect.stringContaining('alpha') })
    expect(byId.call_image).toEqual({ type: 'content', value: [{ type: 'image-data', data: PICTURE_B64, mediaType: 'image/png' }] })
    expect(byId.call_missing).toEqual({ type: 'error-text', value: expect.stringMatching(/^Error: File does not exist/) })
    // Arguments that are not JSON never reach fsgate: the SDK answers with a tool error itself.
    expect(byId.call_bad).toMatchObject({ type: 'error-text' })
  })

  it('maps results to model output', () => {
    expect(toAiSdkOutput({ isError: false, content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toEqual({ type: 'text', value: 'a\n\nb' })
    expect(toAiSdkOutput({ isError: true, content: [{ type: 'text', text: '[error] nope' }], error: { code: 'NOT_FOUND' } })).toEqual({ type: 'error-text', value: '[error] nope' })
    expect(
      toAiSdkOutput({
        isError: false,
        content: [
          { type: 'text', text: 'see:' },
          { type: 'image', data: 'AAAA', mimeType: 'image/gif' },
        ],
      }),
    ).toEqual({ type: 'content', value: [{ type: 'text', text: 'see:' }, { type: 'image-data', data: 'AAAA', mediaType: 'image/gif' }] })
  })
})

// ---------------------------------------------------------------------------------------
// The examples, against the built package

const root = path.resolve(import.meta.dirname, '..')
const FINAL = "Final answer: greet returns 'Hello, ' + name; there are 2 TODOs, in src/greet.ts and src/main.ts."

describe('examples', () => {
  beforeAll(() => {
    if (!fs.existsSync(path.join(root, 'dist/adapters/anthropic.js'))) throw new Error('dist/ has no adapters: run `npm run build:ts` first')
  })

  for (const example of ['anthropic.mjs', 'openai-chat.mjs', 'openai-responses.mjs', 'ai-sdk.mjs']) {
    it(`examples/${example} runs its agent loop against the scripted model`, async () => {
      // Without the keys, each example uses its scripted model and no network.
      const env = { ...process.env }
      for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'AI_GATEWAY_API_KEY', 'VERCEL_OIDC_TOKEN']) delete env[key]
      const { stdout } = await promisify(execFile)(process.execPath, [path.join('examples', example)], { cwd: root, env, timeout: 30_000 })
      const lines = stdout.trim().split('\n')
      expect(lines).toContain('→ file_read {"path":"src/greet.ts"}')
      expect(lines.at(-1)).toBe(FINAL)
    })
  }
})
