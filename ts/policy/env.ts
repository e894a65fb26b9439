/**
 * The environment a child process gets (SPEC §3.8, seed 002): cleared, then the safe
 * names copied back from the host's own, plus the names the host lists in
 * `policy.shellEnvPassthrough`. API keys and other secrets in the host's environment
 * never reach a command.
 */

/** The names every child gets from the host, when the host has them. */
export const SAFE_ENV_NAMES: readonly string[] =
  process.platform === 'win32'
    ? ['PATH', 'PATHEXT', 'USERPROFILE', 'SYSTEMROOT', 'COMSPEC', 'TEMP', 'TMP', 'HOMEDRIVE', 'HOMEPATH', 'LANG']
    : ['PATH', 'HOME', 'TERM', 'LANG', 'LC_ALL', 'LC_CTYPE', 'USER', 'SHELL', 'TMPDIR']

/** A portable name: letters, digits and underscores, not starting with a digit. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Whether `name` may be listed in shellEnvPassthrough. */
export function isEnvName(name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name)
}

/** The child's whole environment: the safe names and `passthrough`, from `from`. */
export function childEnv(from: NodeJS.ProcessEnv, passthrough: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = {}
  for (const name of [...SAFE_ENV_NAMES, ...passthrough]) {
    const value = from[name]
    if (typeof value === 'string') env[name] = value
  }
  return env
}
