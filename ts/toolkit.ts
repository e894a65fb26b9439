/**
 * The toolkit (shared by every conversation: configuration, the native workspace) and
 * its sessions (one per conversation: read record, dedup state).
 */
import { randomUUID } from 'node:crypto'
import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'

import { ReadLedger } from './contract/ledger.js'
import { definitionsFor, type DefinitionFormat, type ToolDefinition } from './definitions.js'
import { FsgateError, InvalidInputError } from './errors.js'
import { resolveLimits, type Limits } from './limits.js'
import { native } from './native.js'
import { isPresetName, PRESETS, type Autonomy, type Dialect, type Preset, type PresetName } from './policy/presets.js'
import type { ToolOutput, ToolResult } from './result.js'
import { errorResult, type Tool, type ToolContext } from './tool.js'
import { TOOLS } from './tools/index.js'
import type { ReadInput } from './tools/read.js'

export interface PolicyOptions {
  /** Folders outside the workspace whose real paths tools may reach. */
  allowedPaths?: string[]
  /** read_only | supervised | full; the preset decides when absent. */
  autonomy?: Autonomy
}

export interface ToolkitOptions {
  /** The workspace folder; relative tool paths resolve here. Required. */
  workspace: string
  /** 'guarded' (default) | 'claude-code' | 'revka' | 'consent'. */
  preset?: PresetName
  policy?: PolicyOptions
  limits?: Partial<Limits>
  /** An exact token counter (e.g. a provider's API); the built-in o200k BPE otherwise. */
  countTokens?: (text: string) => Promise<number> | number
  /** Stubs for unchanged re-reads of the same range. Default true. */
  dedup?: boolean
}

export interface SessionOptions {
  /** Overrides the toolkit's `dedup` for this session. */
  dedup?: boolean
}

export interface CallOptions {
  signal?: AbortSignal
}

export interface DefinitionsOptions {
  /** Which name family: 'claude' | 'revka' | 'consent' | 'all'. Default: the preset's. */
  dialect?: Dialect | 'all'
  /** Which SDK shape. Default 'anthropic'. */
  format?: DefinitionFormat
}

/** Creates a toolkit. Throws TypeError on bad options (a programming error, not a tool result). */
export function createToolkit(options: ToolkitOptions): Toolkit {
  return new Toolkit(options)
}

export class Toolkit {
  readonly workspace: string
  readonly presetName: PresetName
  readonly preset: Preset
  readonly limits: Limits
  readonly allowedPaths: readonly string[]
  /** @internal */
  readonly fs: InstanceType<typeof native.Workspace>
  /** @internal */
  readonly options: Readonly<ToolkitOptions>
  private readonly byName = new Map<string, { tool: Tool<never>; dialect: Dialect }>()

  constructor(options: ToolkitOptions) {
    if (!options || typeof options.workspace !== 'string' || options.workspace === '') {
      throw new TypeError('fsgate: createToolkit needs { workspace: "/path/to/folder" }')
    }
    const preset = options.preset ?? 'guarded'
    if (!isPresetName(preset)) throw new TypeError(`fsgate: unknown preset '${String(preset)}'`)
    checkPolicy(options.policy)
    if (options.countTokens !== undefined && typeof options.countTokens !== 'function') {
      throw new TypeError('fsgate: countTokens must be a function (text) => number | Promise<number>')
    }
    this.workspace = realDir(options.workspace, 'workspace')
    this.presetName = preset
    this.preset = { ...PRESETS[preset], ...(options.policy?.autonomy ? { autonomy: options.policy.autonomy } : {}) }
    this.limits = resolveLimits(options.limits)
    this.allowedPaths = (options.policy?.allowedPaths ?? []).map((p) => realDir(p, 'policy.allowedPaths entry'))
    this.fs = new native.Workspace([this.workspace, ...this.allowedPaths])
    this.options = options
    for (const tool of TOOLS) for (const [name, dialect] of tool.names) this.byName.set(name, { tool, dialect })
  }

  createSession(options: SessionOptions = {}): Session {
    return new Session(this, options)
  }

  /** Tool definitions for an SDK, generated from the zod schemas. */
  definitions(options: DefinitionsOptions = {}): ToolDefinition[] {
    return definitionsFor(TOOLS, options.dialect ?? this.preset.dialect, options.format ?? 'anthropic')
  }

  /** @internal */
  lookup(name: string): { tool: Tool<never>; dialect: Dialect } | undefined {
    return this.byName.get(name)
  }

  /** Names a model may call: the preset's dialect first, else every name. */
  toolNames(): string[] {
    const own = [...this.byName].filter(([, v]) => v.dialect === this.preset.dialect).map(([n]) => n)
    return own.length > 0 ? own : [...this.byName.keys()]
  }
}

export class Session {
  readonly id = randomUUID()
  /** @internal */
  readonly ledger = new ReadLedger()
  private readonly dedup: boolean

  constructor(
    readonly toolkit: Toolkit,
    options: SessionOptions = {},
  ) {
    this.dedup = options.dedup ?? toolkit.options.dedup ?? true
  }

  /** Calls a tool by any of its names. Never throws: failures are results with isError. */
  async call(name: string, input: unknown, options: CallOptions = {}): Promise<ToolResult> {
    try {
      const found = this.toolkit.lookup(name)
      if (!found) {
        return errorResult(
          new InvalidInputError('INVALID_INPUT', `Unknown tool '${String(name)}'. Available tools: ${this.toolkit.toolNames().join(', ')}.`, {
            data: { field: 'name' },
          }),
          this.toolkit.preset.errorPrefix,
        )
      }
      return await found.tool.call(input, this.context(name, found.dialect, options))
    } catch (err) {
      return errorResult(err, this.toolkit.preset.errorPrefix)
    }
  }

  /** Reads a file (typed form of file_read). Throws FsgateError subclasses. */
  async read(input: ReadInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('file_read', input, options)
  }

  /** Forgets every read, so the next read of any file returns its content again. */
  forgetReads(): void {
    this.ledger.forget()
  }

  private async invoke(name: string, input: unknown, options: CallOptions): Promise<ToolOutput> {
    const found = this.toolkit.lookup(name)
    if (!found) throw new FsgateError('INTERNAL', `tool ${name} is not registered`)
    return found.tool.invoke(input, this.context(name, found.dialect, options))
  }

  private context(name: string, dialect: Dialect, options: CallOptions | undefined | null): ToolContext {
    const signal = options?.signal
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new InvalidInputError('INVALID_INPUT', 'The call options.signal must be an AbortSignal.', { data: { field: 'signal' } })
    }
    const tk = this.toolkit
    return {
      workspace: tk.workspace,
      fs: tk.fs,
      limits: tk.limits,
      presetName: tk.presetName,
      preset: tk.preset,
      ledger: this.ledger,
      dedup: this.dedup,
      countTokens: tk.options.countTokens,
      signal,
      calledAs: name,
      dialect,
    }
  }
}

const POLICY_KEYS = new Set(['allowedPaths', 'autonomy'])
const AUTONOMY = new Set(['read_only', 'supervised', 'full'])

function checkPolicy(policy: PolicyOptions | undefined): void {
  if (policy === undefined) return
  if (typeof policy !== 'object' || policy === null) throw new TypeError('fsgate: policy must be an object')
  for (const key of Object.keys(policy)) if (!POLICY_KEYS.has(key)) throw new TypeError(`fsgate: unknown policy option '${key}'`)
  if (policy.autonomy !== undefined && !AUTONOMY.has(policy.autonomy)) {
    throw new TypeError(`fsgate: policy.autonomy must be read_only, supervised or full, got '${String(policy.autonomy)}'`)
  }
  if (policy.allowedPaths !== undefined && !(Array.isArray(policy.allowedPaths) && policy.allowedPaths.every((p) => typeof p === 'string'))) {
    throw new TypeError('fsgate: policy.allowedPaths must be an array of folder paths')
  }
}

function realDir(p: string, what: string): string {
  const abs = path.resolve(p)
  let real: string
  try {
    real = realpathSync(abs)
  } catch {
    throw new TypeError(`fsgate: ${what} ${abs} does not exist`)
  }
  if (!statSync(real).isDirectory()) throw new TypeError(`fsgate: ${what} ${abs} is not a directory`)
  return real
}
