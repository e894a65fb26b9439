/**
 * The Vercel AI SDK (v6) adapter: the toolkit's tools as a `ToolSet` for
 * `generateText` / `streamText`, each executing through one fsgate session.
 *
 * ```ts
 * import { generateText, jsonSchema, stepCountIs, tool } from 'ai'
 * const tools = aiSdkTools(session, { tool, jsonSchema })
 * const { text } = await generateText({ model, tools, stopWhen: stepCountIs(10), prompt })
 * ```
 *
 * Why `tool` and `jsonSchema` are passed in: 'ai' stays out of fsgate's dependencies
 * (runtime and types), the app's own copy of 'ai' builds the tools (so its schema
 * marker and types are the ones `generateText` checks, with no second copy of 'ai'),
 * and the function stays synchronous, which a dynamic `import('ai')` would not.
 *
 * Results: `execute` returns the ToolResult (so `steps[].toolResults` and UI messages
 * keep `data` and `error`) less `data.grantPhrase`, which a host that converts UI
 * messages without `tools` would send to the model whole; `onResult` gets the whole
 * result. `toModelOutput` turns it into what the model sees: `error-text` for a failed call, `text` for text, and `content` with
 * `image-data` parts when there are images. Inputs are not validated by the SDK
 * (`jsonSchema` without `validate`): fsgate validates them and answers a bad input with
 * an INVALID_INPUT result the model can read. Arguments that are not JSON at all are
 * caught by the SDK before `execute`, which sends the model a tool error itself.
 */
import type { Dialect } from '../policy/presets.js'
import type { ToolResult } from '../result.js'
import type { Session } from '../toolkit.js'
import { errorText, joinedText, type ResultHandler, withoutSecrets } from './shared.js'

/** What the model sees of a result (the SDK's `ToolResultOutput`, the kinds used here). */
export type AiSdkModelOutput =
  | { type: 'text'; value: string }
  | { type: 'error-text'; value: string }
  | { type: 'content'; value: Array<{ type: 'text'; text: string } | { type: 'image-data'; data: string; mediaType: string }> }

/** One tool as `tool()` of 'ai' returns it (it returns its argument); assignable to the SDK's `Tool`. */
export interface AiSdkTool<Schema> {
  description: string
  inputSchema: Schema
  execute: (input: unknown, options: { abortSignal?: AbortSignal; toolCallId?: string }) => Promise<ToolResult>
  toModelOutput: (options: { output: ToolResult }) => AiSdkModelOutput
}

/** The two functions of 'ai' the adapter needs: pass `{ tool, jsonSchema }` imported from 'ai'. */
export interface AiSdkFunctions<Schema> {
  tool: (spec: AiSdkTool<Schema>) => unknown
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's JSONSchema7 type is not fsgate's to name; any JSON Schema object fits.
  jsonSchema: (schema: any) => Schema
}

export interface AiSdkToolsOptions {
  /** Which tool-name family: 'claude' | 'revka' | 'consent' | 'gemini' | 'all'. Default: the toolkit's. */
  dialect?: Dialect | 'all'
  /**
   * Each call's whole ToolResult, for the host (show the user `data.grantPhrase`). What
   * `execute` returns leaves the phrase out: a host that converts UI messages without
   * `tools` sends the whole output to the model.
   */
  onResult?: ResultHandler
}

/** The session's tools as a record name → `tool(…)`, ready for `generateText({ tools })`. */
export function aiSdkTools<Schema>(session: Session, ai: AiSdkFunctions<Schema>, options: AiSdkToolsOptions = {}): Record<string, AiSdkTool<Schema>> {
  if (typeof ai?.tool !== 'function' || typeof ai?.jsonSchema !== 'function') {
    throw new TypeError("fsgate: aiSdkTools needs the AI SDK's functions: aiSdkTools(session, { tool, jsonSchema }) with both imported from 'ai'")
  }
  const tools: Record<string, AiSdkTool<Schema>> = {}
  for (const def of session.toolkit.definitions({ dialect: options.dialect, format: 'mcp' })) {
    if (!('inputSchema' in def)) throw new Error('fsgate: definitions() did not return the mcp format')
    const name = def.name
    // `tool()` returns its argument (it exists for type inference), so the spec's type is the result's.
    tools[name] = ai.tool({
      description: def.description,
      inputSchema: ai.jsonSchema(def.inputSchema),
      execute: async (input, { abortSignal, toolCallId }) => {
        const result = await session.call(name, input, { signal: abortSignal, dialect: options.dialect === 'all' ? undefined : options.dialect })
        options.onResult?.(result, { id: String(toolCallId ?? ''), name, input })
        return withoutSecrets(result)
      },
      toModelOutput: ({ output }) => toAiSdkOutput(output),
    }) as AiSdkTool<Schema>
  }
  return tools
}

/** A result as the AI SDK's model output. */
export function toAiSdkOutput(result: ToolResult): AiSdkModelOutput {
  if (result.isError) return { type: 'error-text', value: errorText(result) }
  if (result.content.every((b) => b.type === 'text')) return { type: 'text', value: joinedText(result.content) }
  return {
    type: 'content',
    value: result.content
      .filter((b) => b.type !== 'text' || b.text !== '')
      .map((b) => (b.type === 'text' ? { type: 'text' as const, text: b.text } : { type: 'image-data' as const, data: b.data, mediaType: b.mimeType })),
  }
}
