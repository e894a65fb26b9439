/** The presets of SPEC §5.5: what each one turns on, as plain data. */

export type PresetName = 'guarded' | 'claude-code' | 'revka' | 'consent' | 'gemini-cli'
export type Dialect = 'claude' | 'revka' | 'consent' | 'anthropic' | 'codex' | 'gemini'
/** Every dialect, in the order `definitions({ dialect: 'all' })` lists them. */
export const DIALECTS: readonly Dialect[] = ['revka', 'claude', 'consent', 'anthropic', 'codex', 'gemini']
/**
 * How Read numbers lines: `cat-n` (the number right-aligned in six columns, a tab),
 * `compact` (the number, a tab: Claude Code's Read today), `colon` (Revka's `N: text`
 * with a `[Lines a-b of N]` footer) or `none` (the lines alone: gemini-cli's read_file).
 */
export type LineStyle = 'cat-n' | 'compact' | 'colon' | 'none'
export type Autonomy = 'read_only' | 'supervised' | 'full'
/** What happens to a write whose real path is outside the workspace and allowedPaths. */
export type OutsideWorkspace = 'deny' | 'working-copy'

export interface Preset {
  /** The tool-name family `definitions()` exposes by default. */
  dialect: Dialect
  /** How Read numbers lines for the revka and consent dialects (Claude's and gemini's names use their own; see lineStyleFor). */
  lineStyle: LineStyle
  /** Whether model-facing error text starts with `[error]` (the consent system's form). */
  errorPrefix: boolean
  autonomy: Autonomy
  /** Write/Edit of an existing file needs a full read of its current version first (SPEC §3.2). */
  readBeforeWrite: boolean
  /** Replacing an existing file needs the user's grant for its top-level folder (SPEC §5.3). */
  consentGate: boolean
  /** 'deny', or new files anywhere not protected and working copies of existing ones (SPEC §5.2). */
  outsideWorkspace: OutsideWorkspace
  /** Side-effecting actions per session per sliding hour; null for no budget (SPEC §5.4). */
  actionsPerHour: number | null
  /** Whether the budget counts every call, as Revka does, not only side-effecting ones. */
  countEveryCall: boolean
  /** Who approves a medium or high command in supervised autonomy (SPEC §3.8): the model's `approved: true`, or the host. */
  approval: 'model' | 'host'
  /** Executables shell may run; null for any (SPEC §3.8). */
  allowedCommands: readonly string[] | null
}

/** Revka's default command allowlist (seed 002). */
export const REVKA_COMMANDS: readonly string[] = ['git', 'npm', 'cargo', 'ls', 'cat', 'grep', 'find', 'echo', 'pwd', 'wc', 'head', 'tail', 'date', 'python', 'python3', 'pip', 'node']

/** Claude Code's own defaults: full autonomy, read before write, no consent gate. */
const CLAUDE_CODE: Preset = {
  dialect: 'claude',
  lineStyle: 'cat-n',
  errorPrefix: false,
  autonomy: 'full',
  readBeforeWrite: true,
  consentGate: false,
  outsideWorkspace: 'deny',
  actionsPerHour: null,
  countEveryCall: false,
  approval: 'host',
  allowedCommands: null,
}

export const PRESETS: Readonly<Record<PresetName, Preset>> = Object.freeze({
  guarded: {
    dialect: 'revka',
    lineStyle: 'cat-n',
    errorPrefix: false,
    autonomy: 'supervised',
    readBeforeWrite: true,
    consentGate: true,
    outsideWorkspace: 'deny',
    actionsPerHour: null,
    countEveryCall: false,
    approval: 'host',
    allowedCommands: null,
  },
  'claude-code': CLAUDE_CODE,
  revka: {
    dialect: 'revka',
    lineStyle: 'colon',
    errorPrefix: false,
    autonomy: 'supervised',
    readBeforeWrite: false,
    consentGate: false,
    outsideWorkspace: 'deny',
    actionsPerHour: 20,
    countEveryCall: true,
    approval: 'model',
    allowedCommands: REVKA_COMMANDS,
  },
  // gemini-cli's tools with Claude Code's defaults (gemini-cli itself neither asks for a read before a write nor gates one).
  'gemini-cli': { ...CLAUDE_CODE, dialect: 'gemini', lineStyle: 'none' },
  consent: {
    dialect: 'consent',
    lineStyle: 'cat-n',
    errorPrefix: true,
    autonomy: 'supervised',
    readBeforeWrite: false,
    consentGate: true,
    outsideWorkspace: 'working-copy',
    actionsPerHour: null,
    countEveryCall: false,
    approval: 'host',
    allowedCommands: null,
  },
})

export function isPresetName(name: unknown): name is PresetName {
  return typeof name === 'string' && Object.hasOwn(PRESETS, name)
}

/**
 * How Read numbers the lines of a call: the host's `policy.lineStyle` when it set one,
 * else what the tool family the model called was trained on: Claude Code's Read shows
 * `N<tab>`, gemini-cli's read_file the lines alone, and the other families the preset's.
 */
export function lineStyleFor(dialect: Dialect, preset: Preset, chosen: LineStyle | undefined): LineStyle {
  if (chosen !== undefined) return chosen
  if (dialect === 'claude') return 'compact'
  if (dialect === 'gemini') return 'none'
  return preset.lineStyle
}
