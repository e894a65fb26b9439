/**
 * `defineTool`: the one wrapper that does what every tool needs — validate the input
 * against the dialect's schema (telling the model how to fix it), run, and shape one
 * result. Tools never build results by hand.
 */
import type { z } from 'zod'

import { FsgateError, InvalidInputError } from './errors.js'
import type { Limits } from './limits.js'
import type { Preset, PresetName } from './policy/presets.js'
import type { Dialect } from './policy/presets.js'
import type { ContentBlock, ToolOutput, ToolResult } from './result.js'
import type { EditHistory } from './contract/history.js'
import type { ReadLedger } from './contract/ledger.js'
import type { PathLocks } from './contract/locks.js'
import type { ConsentGate, PermissionHandler } from './policy/consent.js'
import type { native } from './native.js'

/** Everything a tool's `run` may use; built by the session for each call. */
export interface ToolContext {
  workspace: string
  /** The user's home folder, real. */
  home: string
  sessionId: string
  fs: InstanceType<typeof native.Workspace>
  limits: Limits
  presetName: PresetName
  preset: Preset
  ledger: ReadLedger
  history: EditHistory
  consent: ConsentGate
  locks: PathLocks
  /** Working copies this toolkit made outside the roots (they may be changed in place). */
  workingCopies: Set<string>
  onPermissionRequest?: PermissionHandler
  dedup: boolean
  countTokens?: (text: string) => Promise<number> | number
  signal?: AbortSignal
  /** The name the model called the tool by. */
  calledAs: string
  dialect: Dialect
}

export interface DialectForm<C> {
  /** The tool's name in this dialect. */
  name: string
  /** What the model reads: what the tool does and when to use it. */
  description: string
  /** The input schema, as the model sees it. */
  schema: z.ZodObject
  /** Maps the validated input to the tool's canonical input. */
  toCanonical: (input: Record<string, unknown>) => C
}

export interface ToolSpec<C> {
  /** The canonical (revka) name. */
  name: string
  dialects: Partial<Record<Dialect, DialectForm<C>>>
  run: (input: C, ctx: ToolContext) => Promise<ToolOutput>
}

export interface Tool<C = unknown> extends ToolSpec<C> {
  /** Every name this tool answers to, with its dialect. */
  readonly names: ReadonlyMap<string, Dialect>
  /** Validates and runs; throws FsgateError. */
  invoke(input: unknown, ctx: ToolContext): Promise<ToolOutput>
  /** Validates and runs; never throws. */
  call(input: unknown, ctx: ToolContext): Promise<ToolResult>
}

export function defineTool<C>(spec: ToolSpec<C>): Tool<C> {
  const names = new Map<string, Dialect>()
  for (const [dialect, form] of Object.entries(spec.dialects) as [Dialect, DialectForm<C>][]) names.set(form.name, dialect)
  const tool: Tool<C> = {
    ...spec,
    names,
    async invoke(input, ctx) {
      const form = spec.dialects[ctx.dialect]
      if (!form) throw new InvalidInputError('INVALID_INPUT', `Tool ${ctx.calledAs} has no ${ctx.dialect} form.`)
      const parsed = form.schema.safeParse(input)
      if (!parsed.success) throw schemaError(ctx.calledAs, input, parsed.error)
      return spec.run(form.toCanonical(parsed.data as Record<string, unknown>), ctx)
    },
    async call(input, ctx) {
      try {
        const out = await tool.invoke(input, ctx)
        return { isError: false, content: out.content, ...(out.data ? { data: out.data } : {}) }
      } catch (err) {
        return errorResult(err, ctx.preset.errorPrefix)
      }
    },
  }
  return tool
}

/** Turns anything thrown into a ToolResult; unknown failures become INTERNAL. */
export function errorResult(err: unknown, errorPrefix = false): ToolResult {
  const e =
    err instanceof FsgateError
      ? err
      : new FsgateError('INTERNAL', `Internal error: ${err instanceof Error ? err.message : String(err)}. This is a bug in fsgate; try another approach.`)
  // The consent system shows a gate as [permission_required] and any other failure as [error].
  const prefix = e.code === 'PERMISSION_REQUIRED' ? '[permission_required]' : '[error]'
  const content: ContentBlock[] = [{ type: 'text', text: errorPrefix ? `${prefix} ${e.message}` : e.message }]
  const error: ToolResult['error'] = { code: e.code }
  if (e.errorCode !== undefined) error.errorCode = e.errorCode
  if (e.nonce !== undefined) error.nonce = e.nonce
  if (e.retryAfterMs !== undefined) error.retryAfterMs = e.retryAfterMs
  return { isError: true, content, error, ...(e.data ? { data: e.data } : {}) }
}

function schemaError(tool: string, input: unknown, error: z.ZodError): InvalidInputError {
  const issue = error.issues[0]
  if (issue.path.length === 0 && (typeof input !== 'object' || input === null || Array.isArray(input))) {
    return new InvalidInputError('INVALID_INPUT', `Invalid input for ${tool}: the input must be an object of named fields. Call ${tool} again with an object.`, {
      data: { field: null },
    })
  }
  let field = issue.path.map(String).join('.')
  let what = issue.message
  if (issue.code === 'unrecognized_keys') {
    field = issue.keys[0]
    what = `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`
  } else if (issue.code === 'invalid_type' && !present(input, issue.path)) {
    what = 'is required'
  }
  const where = field ? `${field}: ` : ''
  return new InvalidInputError('INVALID_INPUT', `Invalid input for ${tool}: ${where}${what}. Fix it and call ${tool} again.`, {
    data: { field: field || null, issues: error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
  })
}

/** Whether the input has a value (even a wrong one) at `path`. */
function present(input: unknown, path: readonly PropertyKey[]): boolean {
  let node = input
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return false
    node = (node as Record<PropertyKey, unknown>)[key]
  }
  return node !== undefined
}
