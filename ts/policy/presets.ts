/** The presets of SPEC §5.5: what each one turns on, as plain data. */

export type PresetName = 'guarded' | 'claude-code' | 'revka' | 'consent'
export type Dialect = 'claude' | 'revka' | 'consent'
export type Autonomy = 'read_only' | 'supervised' | 'full'
/** What happens to a write whose real path is outside the workspace and allowedPaths. */
export type OutsideWorkspace = 'deny' | 'working-copy'

export interface Preset {
  /** The tool-name family `definitions()` exposes by default. */
  dialect: Dialect
  /** How Read numbers lines: `cat -n` or Revka's `N: text` with a `[Lines a-b of N]` footer. */
  lineStyle: 'cat-n' | 'colon'
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
  'claude-code': {
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
  },
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
