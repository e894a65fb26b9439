/**
 * The toolkit (shared by every conversation: configuration, the native workspace, the
 * per-path write locks) and its sessions (one per conversation: read record, dedup
 * state, consent grants, edit history).
 */
import { randomUUID } from 'node:crypto'
import { realpathSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'

import { FairShares } from './contract/fair.js'
import { EditHistory, type HistoryEntry } from './contract/history.js'
import { ReadLedger } from './contract/ledger.js'
import { PathLocks } from './contract/locks.js'
import { definitionsFor, type DefinitionFormat, type ToolDefinition } from './definitions.js'
import { FsgateError, InvalidInputError, NotFoundError, StaleFileError } from './errors.js'
import { resolveLimits, type Limits } from './limits.js'
import { callNative, completer, native, type NativeTarget, type NativeWriteResult } from './native.js'
import { ApprovalGrants } from './policy/approval.js'
import { ActionBudget } from './policy/budget.js'
import { ConsentGate, type PermissionHandler } from './policy/consent.js'
import { isEnvName } from './policy/env.js'
import { StopSwitch } from './policy/gate.js'
import { OtpGate, type OtpOptions } from './policy/otp.js'
import { ProcessRegistry } from './process/run.js'
import { Sandbox, SANDBOX_KINDS, type SandboxKind } from './process/sandbox.js'
import { resolvePath } from './policy/paths.js'
import { DIALECTS, isPresetName, lineStyleFor, PRESETS, type Autonomy, type Dialect, type LineStyle, type OutsideWorkspace, type Preset, type PresetName } from './policy/presets.js'
import { SessionTasks, TaskPool, watchExit } from './process/tasks.js'
import type { ToolOutput, ToolResult } from './result.js'
import { errorResult, type ApprovalHandler, type Tool, type ToolContext } from './tool.js'
import type { EditInput } from './tools/edit.js'
import type { FileInfoInput } from './tools/file-info.js'
import type { ListInput } from './tools/list.js'
import type { NotebookEditInput } from './tools/notebook.js'
import type { GitInput } from './tools/git.js'
import type { GlobInput } from './tools/glob.js'
import type { ContentSearchInput } from './tools/grep.js'
import { TOOLS } from './tools/index.js'
import { undoPatch, type UndoResult } from './contract/undo-patch.js'
import type { ReadInput } from './tools/read.js'
import type { PdfReadInput } from './tools/pdf.js'
import type { SemanticInput } from './tools/semantic.js'
import type { ShellInput } from './tools/shell.js'
import type { WriteInput } from './tools/write.js'

export interface PolicyOptions {
  /** Folders outside the workspace whose real paths tools may reach. */
  allowedPaths?: string[]
  /** read_only | supervised | full; the preset decides when absent. */
  autonomy?: Autonomy
  /** Require a full read of the current version before Write/Edit (SPEC §3.2); the preset decides when absent. */
  readBeforeWrite?: boolean
  /** Require the user's grant before replacing existing files (SPEC §5.3); the preset decides when absent. */
  consentGate?: boolean
  /** 'deny' or 'working-copy' for writes outside the workspace (SPEC §5.2); the preset decides when absent. */
  outsideWorkspace?: OutsideWorkspace
  /** Side-effecting actions per session per sliding hour (null: no budget); the preset decides when absent. */
  actionsPerHour?: number | null
  /** Actions that need a current TOTP code passed as `otp` (SPEC §5.4). */
  otp?: OtpOptions
  /** Environment variable names shell and git children get beyond the safe ones (SPEC §3.8). */
  shellEnvPassthrough?: string[]
  /** Executables shell may run (null: any); the preset decides when absent. */
  allowedCommands?: string[] | null
  /** Executables shell never runs. */
  deniedCommands?: string[]
  /**
   * Where shell commands run (SPEC §8.1): 'auto' (the default, except in full autonomy,
   * where it is 'none') takes bwrap, else Landlock, else Seatbelt, else none; 'bwrap',
   * 'landlock' and 'seatbelt' insist on that one (BACKEND_UNAVAILABLE when it cannot start).
   */
  sandbox?: SandboxKind
  /** Whether sandboxed commands may reach the network. Default false. */
  network?: boolean
  /** Whether a model may ask for an unsandboxed run (`dangerouslyDisableSandbox`), which then needs approval. Default false. */
  allowUnsandboxed?: boolean
  /**
   * Whether the host process stays dumpable. By default a toolkit in supervised or
   * read_only autonomy makes it not dumpable (Linux): its memory and environment, where
   * approval phrases and API keys live, are then closed to the commands of the same user
   * that run outside a sandbox. It also writes no core dump and cannot be attached to by
   * a debugger of that user. `true` leaves it as it is.
   */
  hostDumpable?: boolean
  /**
   * How Read numbers lines, for every dialect: 'cat-n' (six columns, a tab), 'compact'
   * (the number, a tab), 'colon' (`N: text`) or 'none'. By default each dialect's own:
   * Claude's Read 'compact' (as Claude Code shows it), gemini's read_file 'none', the
   * others the preset's ('cat-n'; 'colon' in the revka preset).
   */
  lineStyle?: LineStyle
}

export interface ToolkitOptions {
  /** The workspace folder; relative tool paths resolve here. Required. */
  workspace: string
  /** 'guarded' (default) | 'claude-code' | 'revka' | 'consent' | 'gemini-cli'. */
  preset?: PresetName
  /**
   * The tool-name family this toolkit speaks by default: what `definitions()` lists and
   * how a name two families share resolves (write_file, list_directory). Default: the preset's.
   */
  dialect?: Dialect
  policy?: PolicyOptions
  limits?: Partial<Limits>
  /** An exact token counter (e.g. a provider's API); the built-in o200k BPE otherwise. */
  countTokens?: (text: string) => Promise<number> | number
  /** Stubs for unchanged re-reads of the same range. Default true. */
  dedup?: boolean
  /** A host UI for the consent gate: return true to grant the request's unit for the session. */
  onPermissionRequest?: PermissionHandler
  /** A host UI for risky commands in supervised autonomy: return true to run the command once (SPEC §3.8). */
  onApproval?: ApprovalHandler
  /**
   * The live search index of the workspace (docs/performance.md): 'lazy' (the default)
   * builds it in the background on the first search, 'auto' at once, 'off' never.
   * Searches before it is ready, or that it cannot answer, walk the tree.
   */
  index?: IndexMode
}

/** When the workspace's live search index is built. */
export type IndexMode = 'lazy' | 'auto' | 'off'

/** What the live search index is doing and holds. */
export interface IndexStatus {
  state: 'idle' | 'building' | 'ready' | 'off'
  /** Why it is off. */
  reason?: string
  files: number
  /** Memory it holds, in bytes. */
  bytes: number
  /** limits.indexBytes. */
  budget: number
  /** How long its last build took. */
  buildMs: number
  /** File-system events its watcher has reported. */
  events: number
}

export interface SessionOptions {
  /** Overrides the toolkit's `dedup` for this session. */
  dedup?: boolean
}

export interface CallOptions {
  signal?: AbortSignal
  /** The tool-name family the model was given, for a name two families share. Default: the toolkit's. */
  dialect?: Dialect
}

export interface DefinitionsOptions {
  /** Which name family: 'claude' | 'revka' | 'consent' | 'gemini' | 'all'. Default: the toolkit's. */
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
  /** The tool-name family this toolkit speaks by default. */
  readonly dialect: Dialect
  readonly limits: Limits
  readonly allowedPaths: readonly string[]
  /** @internal */
  readonly fs: InstanceType<typeof native.Workspace>
  /** The per-path write locks every session shares. @internal */
  readonly locks = new PathLocks()
  /** Each session's fair share of the addon's pools (issue 17). @internal */
  readonly fair = new FairShares()
  /** Working copies made outside the roots (SPEC §5.2), which may be changed in place. @internal */
  readonly workingCopies = new Set<string>()
  /** The user's home folder, real. @internal */
  readonly home: string
  /** @internal */
  readonly options: Readonly<ToolkitOptions>
  /** The emergency stop every session checks. @internal */
  readonly stopSwitch = new StopSwitch()
  /** Shell and git children running now. @internal */
  readonly processes = new ProcessRegistry()
  /** @internal */
  readonly otp: OtpGate | null
  /** @internal */
  readonly envPassthrough: readonly string[]
  /** @internal */
  readonly deniedCommands: readonly string[]
  /** The sandbox of every shell command. @internal */
  readonly sandbox: Sandbox
  /** Background commands of every session. @internal */
  readonly tasks = new TaskPool()
  private readonly byName = new Map<string, Array<{ tool: Tool<never>; dialect: Dialect }>>()

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
    for (const key of ['onPermissionRequest', 'onApproval'] as const) {
      if (options[key] !== undefined && typeof options[key] !== 'function') {
        throw new TypeError(`fsgate: ${key} must be a function (request) => boolean | Promise<boolean>`)
      }
    }
    this.workspace = realDir(options.workspace, 'workspace')
    this.presetName = preset
    this.preset = { ...PRESETS[preset], ...presetOverrides(options.policy) }
    if (options.dialect !== undefined && !DIALECTS.includes(options.dialect)) {
      throw new TypeError(`fsgate: unknown dialect '${String(options.dialect)}' (${DIALECTS.join(', ')})`)
    }
    this.dialect = options.dialect ?? this.preset.dialect
    this.limits = resolveLimits(options.limits)
    this.allowedPaths = (options.policy?.allowedPaths ?? []).map((p) => realDir(p, 'policy.allowedPaths entry'))
    this.fs = new native.Workspace([this.workspace, ...this.allowedPaths])
    const index = options.index ?? 'lazy'
    if (!['lazy', 'auto', 'off'].includes(index)) throw new TypeError(`fsgate: index must be 'lazy', 'auto' or 'off', got '${String(index)}'`)
    if (index !== 'off') this.fs.useIndex(this.limits.indexBytes, index === 'auto')
    this.home = realOrSelf(homedir())
    this.options = options
    // A tool listed by any of its names is gated under all of them.
    this.otp = options.policy?.otp ? new OtpGate(options.policy.otp, (a) => [a, ...(TOOLS.find((t) => t.names.has(a))?.names.keys() ?? [])]) : null
    this.envPassthrough = [...(options.policy?.shellEnvPassthrough ?? [])]
    this.deniedCommands = [...(options.policy?.deniedCommands ?? [])]
    this.sandbox = new Sandbox({
      kind: options.policy?.sandbox ?? (this.preset.autonomy === 'full' ? 'none' : 'auto'),
      workspace: this.workspace,
      writable: this.allowedPaths,
      home: this.home,
      network: options.policy?.network === true,
    })
    if (this.preset.autonomy !== 'full' && options.policy?.hostDumpable !== true) native.setHostDumpable(false)
    for (const tool of TOOLS) {
      // Each dialect's form: two dialects may give one tool the same name (list_directory).
      for (const [dialect, form] of Object.entries(tool.dialects) as [Dialect, { name: string }][]) {
        const name = form.name
        const forms = this.byName.get(name) ?? []
        forms.push({ tool, dialect })
        this.byName.set(name, forms)
      }
    }
    watchExit(this.tasks)
  }

  /**
   * Ends what the toolkit runs in the background: every session's background commands
   * are killed (with everything they started). Resolves when they are gone.
   */
  async close(): Promise<void> {
    this.fs.closeIndex()
    await this.tasks.stopAll('toolkit closed')
  }

  /** What the workspace's live search index is doing and holds; null when `index: 'off'`. */
  indexStatus(): IndexStatus | null {
    const s = this.fs.indexStatus()
    if (!s) return null
    return { state: s.state as IndexStatus['state'], ...(s.reason ? { reason: s.reason } : {}), files: s.files, bytes: s.bytes, budget: s.budget, buildMs: s.buildMs, events: s.events }
  }

  /**
   * Stops every tool of every session: running shell and git commands are killed, calls
   * in flight are aborted, and every later call fails with EMERGENCY_STOP until
   * `resume()`. Returns how many processes were killed.
   */
  emergencyStop(reason?: string): number {
    this.stopSwitch.stop(reason ?? '')
    return this.processes.killAll()
  }

  /** Lets calls run again after `emergencyStop()`. */
  resume(): void {
    this.stopSwitch.resume()
  }

  /** Whether an emergency stop is in force. */
  get stopped(): boolean {
    return this.stopSwitch.stopped
  }

  createSession(options: SessionOptions = {}): Session {
    return new Session(this, options)
  }

  /** Tool definitions for an SDK, generated from the zod schemas. */
  definitions(options: DefinitionsOptions = {}): ToolDefinition[] {
    const defs = definitionsFor(TOOLS, options.dialect ?? this.dialect, options.format ?? 'anthropic', this.dialect)
    const otp = this.options.policy?.otp
    if (otp) for (const def of defs) if (this.mayNeedOtp(nameOf(def), otp.actions)) addOtpField(def)
    return defs
  }

  /** Whether OTP gating may ask a call of this tool for a code. */
  private mayNeedOtp(name: string, actions: readonly string[]): boolean {
    const tool = this.lookup(name)?.tool
    if (!tool) return false
    const labels = tool.name === 'shell' ? ['shell:low', 'shell:medium', 'shell:high'] : tool.name === 'git_operations' ? ['git:write'] : []
    return actions.some((a) => tool.names.has(a) || labels.includes(a))
  }

  /**
   * The tool a name calls, and in which dialect: the form of `dialect` (else the
   * toolkit's) when two families share the name, else the only one. @internal
   */
  lookup(name: string, dialect: Dialect = this.dialect): { tool: Tool<never>; dialect: Dialect } | undefined {
    const forms = this.byName.get(name)
    if (!forms) return undefined
    return forms.find((f) => f.dialect === dialect) ?? forms.find((f) => f.dialect === this.dialect) ?? forms[0]
  }

  /** Names a model may call: the toolkit's dialect first, else every name. */
  toolNames(): string[] {
    const own = [...this.byName].filter(([, forms]) => forms.some((f) => f.dialect === this.dialect)).map(([n]) => n)
    return own.length > 0 ? own : [...this.byName.keys()]
  }
}

export class Session {
  readonly id = randomUUID()
  /** @internal */
  readonly ledger = new ReadLedger()
  /** @internal */
  readonly consent = new ConsentGate()
  /** @internal */
  readonly approvals = new ApprovalGrants()
  /** This session's background commands. @internal */
  readonly tasks: SessionTasks
  /** This session's hourly action budget, or null. @internal */
  readonly budget: ActionBudget | null
  private readonly changes: EditHistory
  private readonly dedup: boolean

  constructor(
    readonly toolkit: Toolkit,
    options: SessionOptions = {},
  ) {
    this.dedup = options.dedup ?? toolkit.options.dedup ?? true
    this.changes = new EditHistory(toolkit.limits.historyBytes)
    this.tasks = new SessionTasks(toolkit.tasks)
    const perHour = toolkit.preset.actionsPerHour
    this.budget = perHour === null ? null : new ActionBudget(perHour)
  }

  /** Calls a tool by any of its names. Never throws: failures are results with isError. */
  async call(name: string, input: unknown, options: CallOptions = {}): Promise<ToolResult> {
    try {
      this.toolkit.stopSwitch.check()
      const found = this.toolkit.lookup(name, options?.dialect)
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

  /** Writes a whole file (typed form of file_write). Throws FsgateError subclasses. */
  async write(input: WriteInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('file_write', input, options)
  }

  /** Replaces exact text in a file (typed form of file_edit). Throws FsgateError subclasses. */
  async edit(input: EditInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('file_edit', input, options)
  }

  /** Lists files matching a glob (typed form of glob_search). Throws FsgateError subclasses. */
  async glob(input: GlobInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('glob_search', input, options)
  }

  /** Searches file contents (typed form of content_search). Throws FsgateError subclasses. */
  async grep(input: ContentSearchInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('content_search', input, options)
  }

  /** The text of a whole PDF (typed form of pdf_read). Throws FsgateError subclasses. */
  async pdf(input: PdfReadInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('pdf_read', input, options)
  }

  /** Runs a shell command (typed form of shell). Throws FsgateError subclasses. */
  async shell(input: ShellInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('shell', input, options)
  }

  /** A git operation (typed form of git_operations). Throws FsgateError subclasses. */
  async git(input: GitInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('git_operations', input, options)
  }

  /** Lists a folder or a tree (typed form of list_directory). Throws FsgateError subclasses. */
  async listDirectory(input: ListInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('list_directory', input, options)
  }

  /** What one path is (typed form of file_info). Throws FsgateError subclasses. */
  async fileInfo(input: FileInfoInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('file_info', input, options)
  }

  /** Replaces, inserts or deletes one notebook cell (typed form of notebook_edit). Throws FsgateError subclasses. */
  async editNotebook(input: NotebookEditInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('notebook_edit', input, options)
  }

  /** A background command's output (typed form of task_output, `wait_secs` to wait). Throws FsgateError subclasses. */
  async taskOutput(input: { task_id: string; offset?: number; limit?: number; wait_secs?: number }, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('task_output', input, options)
  }

  /** Stops a background command (typed form of task_stop). Throws FsgateError subclasses. */
  async stopTask(input: { task_id: string }, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('task_stop', input, options)
  }

  /** Ranked code search (typed form of semantic_code_search). Throws FsgateError subclasses. */
  async search(input: SemanticInput, options: CallOptions = {}): Promise<ToolOutput> {
    return this.invoke('semantic_code_search', input, options)
  }

  /**
   * Tells the consent gate what the user wrote. Once a host calls this, a grant phrase
   * is accepted only if the user wrote it after it was issued, so a model cannot grant
   * itself.
   */
  noteUserMessage(text: string): void {
    this.consent.noteUserMessage(text)
  }

  /** The changes this session made that can still be undone, oldest first. */
  history(): Array<Omit<HistoryEntry, 'previous'> & { previousBytes: number | null }> {
    return this.changes.list().map(({ previous, ...rest }) => ({ ...rest, dropped: rest.dropped ?? false, previousBytes: previous ? previous.length : null }))
  }

  /**
   * Undoes this session's latest change of `file`: puts back the content it replaced, or
   * removes the file it created. Refused (STALE) when the file changed since, so that
   * nobody's later work is lost. A change made by apply_patch is undone whole: every file
   * of the patch is put back together, or none is (`patch` lists them). Returns what was done.
   */
  async undo(file: string, options: CallOptions = {}): Promise<UndoResult> {
    const tk = this.toolkit
    tk.stopSwitch.check()
    const abs = resolvePath(tk.workspace, file)
    const t = await callNative<NativeTarget>((id) => tk.fs.target(completer, id, abs, true), options.signal)
    const entry = this.changes.latest(t.realPath)
    if (!entry) throw new NotFoundError('NOT_FOUND', `This session has no change of ${file} left to undo.`, { data: { path: file } })
    if (entry.group) return undoPatch(tk, this.changes, this.ledger, entry, file, options.signal)
    if (entry.dropped) {
      throw new FsgateError('FILE_TOO_LARGE', `The content this session's change of ${file} replaced was larger than limits.historyBytes, so it was not kept and cannot be restored.`, {
        data: { path: file },
      })
    }
    const after = entry.after as NonNullable<HistoryEntry['after']>
    return tk.locks.run(t.realPath, async () => {
      const checks = { expectSize: after.size, expectHash: after.hash, allowOutside: !t.inside }
      await callNative<NativeWriteResult>(
        (id) =>
          entry.previous
            ? tk.fs.write(completer, id, { path: t.realPath, bytes: entry.previous, checks })
            : tk.fs.remove(completer, id, { path: t.realPath, checks }),
        options.signal,
      ).catch((err) => {
        if (err instanceof FsgateError && err.code === 'STALE') {
          throw new StaleFileError('STALE', `${file} changed after this session's change, so the change was not undone.`, { data: { path: file } })
        }
        throw err
      })
      this.changes.remove(entry)
      this.ledger.forgetPath(t.realPath)
      return { path: entry.path, realPath: t.realPath, restored: entry.previous ? ('previous' as const) : ('removed' as const) }
    })
  }

  /**
   * Ends the conversation's background work: its background commands are killed (with
   * everything they started) and no new one starts. Resolves when they are gone. Call it
   * when the conversation ends; an MCP connection does when it closes.
   */
  async close(): Promise<void> {
    await this.tasks.close('session closed')
  }

  /** The conversation's background commands: id, command, status, output size. */
  backgroundTasks(): Array<{ id: string; command: string; status: string; exitCode: number | null; startedAt: number; endedAt: number | null; outputBytes: number }> {
    return this.tasks.list().map((t) => ({ id: t.id, command: t.command, status: t.status, exitCode: t.exitCode, startedAt: t.startedAt, endedAt: t.endedAt, outputBytes: t.log.bytes }))
  }

  /** Forgets every read, so the next read of any file returns its content again. */
  forgetReads(): void {
    this.ledger.forget()
  }

  private async invoke(name: string, input: unknown, options: CallOptions): Promise<ToolOutput> {
    // Typed methods take the canonical (revka) input, whatever the toolkit's dialect.
    const found = this.toolkit.lookup(name, 'revka')
    if (!found) throw new FsgateError('INTERNAL', `tool ${name} is not registered`)
    return found.tool.invoke(input, this.context(name, found.dialect, options))
  }

  private context(name: string, dialect: Dialect, options: CallOptions | undefined | null): ToolContext {
    const signal = options?.signal
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new InvalidInputError('INVALID_INPUT', 'The call options.signal must be an AbortSignal.', { data: { field: 'signal' } })
    }
    const tk = this.toolkit
    const stop = tk.stopSwitch.signal
    return {
      workspace: tk.workspace,
      home: tk.home,
      sessionId: this.id,
      allowedPaths: tk.allowedPaths,
      fs: tk.fs,
      limits: tk.limits,
      presetName: tk.presetName,
      preset: tk.preset,
      ledger: this.ledger,
      history: this.changes,
      consent: this.consent,
      locks: tk.locks,
      workingCopies: tk.workingCopies,
      onPermissionRequest: tk.options.onPermissionRequest,
      dedup: this.dedup,
      countTokens: tk.options.countTokens,
      // A stop aborts the calls in flight too.
      signal: signal ? AbortSignal.any([signal, stop]) : stop,
      lanes: tk.fair.lanes(this.id),
      calledAs: name,
      dialect,
      gate: { autonomy: tk.preset.autonomy, budget: this.budget, countEveryCall: tk.preset.countEveryCall, otp: tk.otp },
      stop: tk.stopSwitch,
      processes: tk.processes,
      envPassthrough: tk.envPassthrough,
      onApproval: tk.options.onApproval,
      approvals: this.approvals,
      deniedCommands: tk.deniedCommands,
      sandbox: tk.sandbox,
      allowUnsandboxed: tk.options.policy?.allowUnsandboxed === true,
      lineStyle: lineStyleFor(dialect, tk.preset, tk.options.policy?.lineStyle),
      tasks: this.tasks,
    }
  }
}

const POLICY_KEYS = new Set([
  'allowedPaths',
  'autonomy',
  'readBeforeWrite',
  'consentGate',
  'outsideWorkspace',
  'actionsPerHour',
  'otp',
  'shellEnvPassthrough',
  'allowedCommands',
  'deniedCommands',
  'sandbox',
  'network',
  'allowUnsandboxed',
  'hostDumpable',
  'lineStyle',
])
const AUTONOMY = new Set(['read_only', 'supervised', 'full'])

/** The policy options that override a preset's switches. */
function presetOverrides(policy: PolicyOptions | undefined): Partial<Preset> {
  const out: Partial<Preset> = {}
  if (policy?.autonomy !== undefined) out.autonomy = policy.autonomy
  if (policy?.readBeforeWrite !== undefined) out.readBeforeWrite = policy.readBeforeWrite
  if (policy?.consentGate !== undefined) out.consentGate = policy.consentGate
  if (policy?.outsideWorkspace !== undefined) out.outsideWorkspace = policy.outsideWorkspace
  if (policy?.actionsPerHour !== undefined) out.actionsPerHour = policy.actionsPerHour
  if (policy?.allowedCommands !== undefined) out.allowedCommands = policy.allowedCommands === null ? null : [...policy.allowedCommands]
  return out
}

function checkPolicy(policy: PolicyOptions | undefined): void {
  if (policy === undefined) return
  if (typeof policy !== 'object' || policy === null) throw new TypeError('fsgate: policy must be an object')
  for (const key of Object.keys(policy)) if (!POLICY_KEYS.has(key)) throw new TypeError(`fsgate: unknown policy option '${key}'`)
  if (policy.autonomy !== undefined && !AUTONOMY.has(policy.autonomy)) {
    throw new TypeError(`fsgate: policy.autonomy must be read_only, supervised or full, got '${String(policy.autonomy)}'`)
  }
  for (const key of ['readBeforeWrite', 'consentGate'] as const) {
    if (policy[key] !== undefined && typeof policy[key] !== 'boolean') throw new TypeError(`fsgate: policy.${key} must be true or false`)
  }
  if (policy.outsideWorkspace !== undefined && policy.outsideWorkspace !== 'deny' && policy.outsideWorkspace !== 'working-copy') {
    throw new TypeError(`fsgate: policy.outsideWorkspace must be 'deny' or 'working-copy', got '${String(policy.outsideWorkspace)}'`)
  }
  if (policy.actionsPerHour !== undefined && policy.actionsPerHour !== null && !(Number.isSafeInteger(policy.actionsPerHour) && policy.actionsPerHour > 0)) {
    throw new TypeError(`fsgate: policy.actionsPerHour must be a positive integer or null, got ${String(policy.actionsPerHour)}`)
  }
  if (policy.shellEnvPassthrough !== undefined && !(Array.isArray(policy.shellEnvPassthrough) && policy.shellEnvPassthrough.every(isEnvName))) {
    throw new TypeError('fsgate: policy.shellEnvPassthrough must be an array of environment variable names')
  }
  for (const key of ['allowedCommands', 'deniedCommands'] as const) {
    const list = policy[key]
    if (list === undefined || (key === 'allowedCommands' && list === null)) continue
    if (!(Array.isArray(list) && list.every((n) => typeof n === 'string' && n !== '' && !n.includes('/')))) {
      throw new TypeError(`fsgate: policy.${key} must be an array of executable names (no paths)`)
    }
  }
  if (policy.sandbox !== undefined && !SANDBOX_KINDS.includes(policy.sandbox)) {
    throw new TypeError(`fsgate: policy.sandbox must be one of ${SANDBOX_KINDS.join(', ')}, got '${String(policy.sandbox)}'`)
  }
  for (const key of ['network', 'allowUnsandboxed', 'hostDumpable'] as const) {
    if (policy[key] !== undefined && typeof policy[key] !== 'boolean') throw new TypeError(`fsgate: policy.${key} must be true or false`)
  }
  if (policy.lineStyle !== undefined && !['cat-n', 'compact', 'colon', 'none'].includes(policy.lineStyle)) {
    throw new TypeError(`fsgate: policy.lineStyle must be 'cat-n', 'compact', 'colon' or 'none', got '${String(policy.lineStyle)}'`)
  }
  if (policy.otp !== undefined) checkOtp(policy.otp)
  if (policy.allowedPaths !== undefined && !(Array.isArray(policy.allowedPaths) && policy.allowedPaths.every((p) => typeof p === 'string'))) {
    throw new TypeError('fsgate: policy.allowedPaths must be an array of folder paths')
  }
}

function nameOf(def: ToolDefinition): string {
  return 'function' in def ? def.function.name : def.name
}

/** Adds the optional `otp` field to a definition's input schema. */
function addOtpField(def: ToolDefinition): void {
  const schema = 'function' in def ? def.function.parameters : 'input_schema' in def ? def.input_schema : def.inputSchema
  schema.properties = { ...(schema.properties as Record<string, unknown> | undefined), otp: { type: 'string', description: 'The current one-time code from the user\'s authenticator app, when this action needs one (the call fails with OTP_REQUIRED otherwise). Ask the user; never guess.' } }
}

const OTP_LABELS = new Set(['shell:low', 'shell:medium', 'shell:high', 'git:write'])

function checkOtp(otp: OtpOptions): void {
  if (typeof otp !== 'object' || otp === null) throw new TypeError('fsgate: policy.otp must be { secret, actions }')
  if (!(typeof otp.secret === 'string' || otp.secret instanceof Uint8Array)) throw new TypeError('fsgate: policy.otp.secret must be a base32 string or bytes')
  if (!Array.isArray(otp.actions) || otp.actions.length === 0) throw new TypeError('fsgate: policy.otp.actions must list the tool names or labels that need a code')
  for (const action of otp.actions) {
    if (typeof action !== 'string' || !(OTP_LABELS.has(action) || TOOLS.some((t) => t.names.has(action)))) {
      throw new TypeError(`fsgate: policy.otp.actions: '${String(action)}' is neither a tool name nor one of ${[...OTP_LABELS].join(', ')}`)
    }
  }
  for (const key of ['period', 'digits', 'window'] as const) {
    const v = otp[key]
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= (key === 'window' ? 0 : 1))) throw new TypeError(`fsgate: policy.otp.${key} must be a positive integer`)
  }
  if (otp.digits !== undefined && (otp.digits < 6 || otp.digits > 10)) throw new TypeError('fsgate: policy.otp.digits must be 6 to 10')
  if (otp.algorithm !== undefined && !['sha1', 'sha256', 'sha512'].includes(otp.algorithm)) throw new TypeError("fsgate: policy.otp.algorithm must be 'sha1', 'sha256' or 'sha512'")
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
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
