/**
 * `defineTool`: the one wrapper that does what every tool needs — validate the input
 * against the dialect's schema (telling the model how to fix it), run, and shape one
 * result. Tools never build results by hand.
 */
import type { z } from 'zod'

import { clip, FsgateError, fitMessage, InvalidInputError, MAX_MESSAGE_BYTES } from './errors.js'
import type { Limits } from './limits.js'
import type { Preset, PresetName } from './policy/presets.js'
import type { Dialect, LineStyle } from './policy/presets.js'
import type { ContentBlock, ToolOutput, ToolResult } from './result.js'
import type { SessionLanes } from './contract/fair.js'
import type { EditHistory } from './contract/history.js'
import type { ReadLedger } from './contract/ledger.js'
import type { PathLocks } from './contract/locks.js'
import type { ConsentGate, PermissionHandler } from './policy/consent.js'
import type { native } from './native.js'
import type { ProcessRegistry } from './process/run.js'
import type { Sandbox } from './process/sandbox.js'
import type { SessionTasks } from './process/tasks.js'
import type { ApprovalGrants } from './policy/approval.js'
import { chargeBudget, checkAutonomyAndOtp, type GateContext, type StopSwitch } from './policy/gate.js'

/** Everything a tool's `run` may use; built by the session for each call. */
export interface ToolContext {
  workspace: string
  /** policy.allowedPaths, real. */
  allowedPaths: readonly string[]
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
  /** The session's turns at the addon's pools: native calls pass one (contract/fair.ts). */
  lanes: SessionLanes
  /** The name the model called the tool by. */
  calledAs: string
  dialect: Dialect
  /** The checks at dispatch: autonomy, OTP, the budget. */
  gate: GateContext
  /** The toolkit's emergency stop. */
  stop: StopSwitch
  /** The toolkit's running child processes (shell, git), which an emergency stop kills. */
  processes: ProcessRegistry
  /** Names copied from the host's environment into a child's, beyond the safe ones (SPEC §3.8). */
  envPassthrough: readonly string[]
  /** The host's approval UI for risky commands (SPEC §3.8). */
  onApproval?: ApprovalHandler
  /** The session's one-time approvals of exact commands (guarded preset without onApproval). */
  approvals: ApprovalGrants
  /** Executables shell never runs (policy.deniedCommands). */
  deniedCommands: readonly string[]
  /** The sandbox shell commands run in. */
  sandbox: Sandbox
  /** Whether the host lets a model ask for an unsandboxed run (policy.allowUnsandboxed). */
  allowUnsandboxed: boolean
  /** How Read numbers lines in this call (policy.lineStyle, else the dialect's). */
  lineStyle: LineStyle
  /** The session's background commands. */
  tasks: SessionTasks
}

/** A risky command waiting for the host's approval. */
export interface ApprovalRequest {
  sessionId: string
  /** The tool name the model called. */
  tool: string
  /** The exact command. */
  command: string
  risk: 'medium' | 'high'
  /** Why it is rated so, for the user. */
  reason: string
  /** Whether it would run inside the sandbox (false: unsandboxed, with the host's own rights). */
  sandboxed: boolean
  /**
   * What the model says the command does (Claude Code's and gemini-cli's `description`),
   * when it gave one: its words, not a checked fact, so show it beside the command, never
   * instead of it.
   */
  description?: string
}

export type ApprovalHandler = (request: ApprovalRequest) => Promise<boolean> | boolean

/**
 * What a call would do, decided from its input before it runs, for the checks every
 * call passes at dispatch (SPEC §5.4): autonomy, OTP gating and the action budget.
 */
export interface CallEffect {
  /** Whether it changes anything (files, the repository, processes): counted by the budget. */
  sideEffect: boolean
  /** Whether read_only autonomy refuses it. */
  write: boolean
  /** Names beyond the tool's own that policy.otp.actions may list, e.g. 'shell:high', 'git:write'. */
  labels?: string[]
  /** The AUTONOMY message, when the tool has its own wording. */
  readOnlyMessage?: string
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
  /**
   * Shapes a successful result as this dialect's own tool answers (its wording, the
   * facts its structured output has). By default, the canonical result as it is.
   */
  present?: (output: ToolOutput, input: C, ctx: ToolContext) => ToolOutput
}

export interface ToolSpec<C> {
  /** The canonical (revka) name. */
  name: string
  dialects: Partial<Record<Dialect, DialectForm<C>>>
  /** What the call would do (default: nothing, a read). */
  effect?: (input: C, ctx: ToolContext) => CallEffect
  /**
   * The tool's own admission, after autonomy and OTP and before the budget is charged:
   * shell's allow/deny lists and approval. Throws to refuse.
   */
  admit?: (input: C, ctx: ToolContext) => Promise<void>
  run: (input: C, ctx: ToolContext) => Promise<ToolOutput>
}

export interface Tool<C = unknown> extends ToolSpec<C> {
  /** Every name this tool answers to, with a dialect that uses it (two dialects may share a name). */
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
    // The one dispatch point (SPEC §5.4): stop → schema → autonomy → OTP → the tool's
    // own admission → budget → run.
    async invoke(input, ctx) {
      ctx.stop.check()
      const form = spec.dialects[ctx.dialect]
      if (!form) throw new InvalidInputError('INVALID_INPUT', `Tool ${ctx.calledAs} has no ${ctx.dialect} form.`)
      const { otp, rest } = ctx.gate.otp ? takeOtp(input) : { otp: undefined, rest: input }
      const own = ownFields(rest)
      const parsed = form.schema.safeParse(own)
      if (!parsed.success) throw schemaError(ctx.calledAs, own, parsed.error)
      const canonical = ownFields(form.toCanonical(ownFields(parsed.data) as Record<string, unknown>)) as C
      const facts = { tool: spec.name, calledAs: ctx.calledAs, effect: spec.effect?.(canonical, ctx) ?? READ_ONLY, otp }
      const code = checkAutonomyAndOtp(ctx.gate, facts)
      await spec.admit?.(canonical, ctx)
      // The host may have been asked (approval) meanwhile: a stop since then holds.
      ctx.stop.check()
      chargeBudget(ctx.gate, facts)
      code.spend()
      try {
        const out = await spec.run(canonical, ctx)
        return form.present ? form.present(out, canonical, ctx) : out
      } catch (err) {
        // A call the emergency stop cut short says so, not merely that it was aborted.
        if (err instanceof FsgateError && err.code === 'ABORTED') ctx.stop.check()
        throw err
      }
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

/**
 * A call's input as the model sent it: only its own fields, in objects without a
 * prototype (nested too). A field inherited from the input's prototype, or from a
 * polluted `Object.prototype` in the host, is never read as one the model gave, neither
 * by the schema nor by the tool reading an optional field the model left out.
 */
function ownFields(value: unknown, depth = 0, seen = new Map<object, unknown>()): unknown {
  // Tool inputs are a few levels deep; what lies deeper is the schema's to refuse.
  if (typeof value !== 'object' || value === null || depth > 16) return value
  const copied = seen.get(value)
  if (copied !== undefined) return copied
  if (Array.isArray(value)) {
    const out: unknown[] = []
    seen.set(value, out)
    for (const item of value) out.push(ownFields(item, depth + 1, seen))
    return out
  }
  if (Object.prototype.toString.call(value) !== '[object Object]') return value
  const out: Record<string, unknown> = Object.create(null)
  seen.set(value, out)
  for (const key of Object.keys(value)) out[key] = ownFields((value as Record<string, unknown>)[key], depth + 1, seen)
  return out
}

/** The effect of a tool that declares none: it only looks. */
const READ_ONLY: CallEffect = { sideEffect: false, write: false }

/** Takes the `otp` field out of a call's input (it is the gate's, not the tool's). */
function takeOtp(input: unknown): { otp: string | undefined; rest: unknown } {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || !Object.hasOwn(input, 'otp')) return { otp: undefined, rest: input }
  const { otp, ...rest } = input as Record<string, unknown>
  return { otp: typeof otp === 'number' ? String(otp) : typeof otp === 'string' ? otp.trim() : '', rest }
}

/** Turns anything thrown into a ToolResult; unknown failures become INTERNAL. */
export function errorResult(err: unknown, errorPrefix = false): ToolResult {
  const e =
    err instanceof FsgateError
      ? err
      : new FsgateError('INTERNAL', `Internal error: ${clip(err instanceof Error ? err.message : String(err), 120)}. This is a bug in fsgate; try another approach.`)
  // The consent system shows a gate as [permission_required] and any other failure as [error].
  const prefix = errorPrefix ? `${e.code === 'PERMISSION_REQUIRED' ? '[permission_required]' : '[error]'} ` : ''
  const content: ContentBlock[] = [{ type: 'text', text: prefix + fitMessage(e.message, MAX_MESSAGE_BYTES - prefix.length) }]
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
  let what = clip(issue.message, 120)
  if (issue.code === 'unrecognized_keys') {
    field = clip(issue.keys[0] ?? '', 40)
    const named = issue.keys.slice(0, 3).map((k) => `'${clip(k, 40)}'`)
    what = `unknown field${issue.keys.length > 1 ? 's' : ''} ${named.join(', ')}${issue.keys.length > 3 ? ` and ${issue.keys.length - 3} more` : ''}`
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
