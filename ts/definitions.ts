/** Tool definitions for each SDK, generated from the zod schemas of each dialect. */
import { z } from 'zod'

import { DIALECTS, type Dialect } from './policy/presets.js'
import type { Tool } from './tool.js'

export type DefinitionFormat = 'anthropic' | 'openai' | 'mcp'

export type JsonSchema = Record<string, unknown>

export type ToolDefinition =
  | { name: string; description: string; input_schema: JsonSchema }
  | { type: 'function'; function: { name: string; description: string; parameters: JsonSchema } }
  | { name: string; description: string; inputSchema: JsonSchema }

/**
 * The definitions of one dialect, or of all: then each name once (two dialects may use
 * one name, e.g. write_file), the form of `preferred` first, as calls resolve it.
 */
export function definitionsFor(tools: ReadonlyArray<Tool<never>>, dialect: Dialect | 'all', format: DefinitionFormat, preferred: Dialect = 'revka'): ToolDefinition[] {
  if (dialect !== 'all' && !DIALECTS.includes(dialect)) throw new TypeError(`fsgate: unknown dialect '${String(dialect)}'`)
  if (!['anthropic', 'openai', 'mcp'].includes(format)) throw new TypeError(`fsgate: unknown definitions format '${String(format)}'`)
  const wanted = dialect === 'all' ? [preferred, ...DIALECTS.filter((d) => d !== preferred)] : [dialect]
  const out: ToolDefinition[] = []
  const named = new Set<string>()
  for (const d of wanted) {
    for (const tool of tools) {
      const form = tool.dialects[d]
      if (!form || named.has(form.name)) continue
      named.add(form.name)
      const schema = jsonSchema(form.schema)
      if (format === 'anthropic') out.push({ name: form.name, description: form.description, input_schema: schema })
      else if (format === 'openai') out.push({ type: 'function', function: { name: form.name, description: form.description, parameters: schema } })
      else out.push({ name: form.name, description: form.description, inputSchema: schema })
    }
  }
  return out
}

/** The JSON Schema of a tool input, without the `$schema` key the SDKs do not want. */
export function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema
  return dropSafeIntegerBounds(rest) as JsonSchema
}

/** zod writes ±2^53-1 bounds on every integer; they say nothing to a model. */
function dropSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dropSafeIntegerBounds)
  if (typeof node !== 'object' || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'maximum' && v === Number.MAX_SAFE_INTEGER) || (k === 'minimum' && v === Number.MIN_SAFE_INTEGER)) continue
    out[k] = dropSafeIntegerBounds(v)
  }
  return out
}
