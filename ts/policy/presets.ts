/** The presets of SPEC §5.5: what each one turns on, as plain data. */

export type PresetName = 'guarded' | 'claude-code' | 'revka' | 'consent'
export type Dialect = 'claude' | 'revka' | 'consent'
export type Autonomy = 'read_only' | 'supervised' | 'full'

export interface Preset {
  /** The tool-name family `definitions()` exposes by default. */
  dialect: Dialect
  /** How Read numbers lines: `cat -n` or Revka's `N: text` with a `[Lines a-b of N]` footer. */
  lineStyle: 'cat-n' | 'colon'
  /** Whether model-facing error text starts with `[error]` (the consent system's form). */
  errorPrefix: boolean
  autonomy: Autonomy
}

export const PRESETS: Readonly<Record<PresetName, Preset>> = Object.freeze({
  guarded: { dialect: 'revka', lineStyle: 'cat-n', errorPrefix: false, autonomy: 'supervised' },
  'claude-code': { dialect: 'claude', lineStyle: 'cat-n', errorPrefix: false, autonomy: 'full' },
  revka: { dialect: 'revka', lineStyle: 'colon', errorPrefix: false, autonomy: 'supervised' },
  consent: { dialect: 'consent', lineStyle: 'cat-n', errorPrefix: true, autonomy: 'supervised' },
})

export function isPresetName(name: unknown): name is PresetName {
  return typeof name === 'string' && Object.hasOwn(PRESETS, name)
}
