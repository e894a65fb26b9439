/**
 * Protected paths (SPEC §5.1, §5.2): where no write ever lands. Pure decisions on real
 * paths; the caller resolves the path first. Names are compared without regard to case,
 * because on macOS and Windows `~/.SSH` is `~/.ssh`.
 */
import path from 'node:path'

export interface ProtectedContext {
  /** Whether the real path is inside the workspace or allowedPaths (as the native layer decided). */
  inside: boolean
  /** The user's home folder, real. */
  home: string
}

/** System folders: never written, unless the user made one (or a folder in it) a root. */
const SYSTEM = [
  '/etc',
  '/bin',
  '/sbin',
  '/usr',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/boot',
  '/dev',
  '/proc',
  '/sys',
  '/System',
  '/Library',
  '/private/etc',
  '/private/var/db',
  'C:\\Windows',
  'C:\\Program Files',
  'C:\\Program Files (x86)',
  'C:\\ProgramData',
]

/** Where `fsgate mcp` writes approval and consent phrases for the user, beneath the home. */
export const PHRASE_FILE = '.local/state/fsgate/phrases.log'

/** Credentials and keys: never written (see `protectedReason` for where they are looked for), hidden from sandboxed commands. */
export const CREDENTIALS: readonly string[] = [
  // Where `fsgate mcp` writes phrases for the user when its stderr is no terminal.
  '.local/state/fsgate',
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.config/gcloud',
  '.config/gh',
  '.password-store',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.config/git/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.pgpass',
  '.claude/.credentials.json',
  '.config/hub',
  '.vault-token',
  '.terraform.d',
  'Library/Keychains',
  // Agents' and services' tokens.
  '.codex/auth.json',
  '.gemini/oauth_creds.json',
  '.cache/huggingface/token',
  '.huggingface/token',
  '.gradle/gradle.properties',
  '.m2/settings.xml',
  '.config/rclone',
  '.config/op',
  '.config/containers/auth.json',
  '.local/share/keyrings',
  // Browsers' cookies and saved passwords.
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
  'Library/Application Support/Google/Chrome',
  'Library/Cookies',
  // What the user typed: passwords pasted at a prompt, tokens in commands.
  '.bash_history',
  '.zsh_history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
]

/** Files and folders of a home that run code later: protected outside the roots (§5.2). */
const RUNS_LATER = [
  '.bashrc',
  '.bashrc.d',
  '.bash_aliases',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.kshrc',
  '.xprofile',
  '.xinitrc',
  '.xsession',
  '.xsessionrc',
  '.pam_environment',
  '.inputrc',
  '.vimrc',
  '.gitconfig',
  '.config/git',
  '.config/fish',
  '.config/nvim',
  '.config/autostart',
  '.config/systemd',
  '.config/environment.d',
  '.config/plasma-workspace',
  '.local/share/systemd',
  '.local/bin',
  '.ipython',
  'Library/LaunchAgents',
]

const split = (p: string) => p.toLowerCase().split(/[\\/]+/).filter(Boolean)
const CREDENTIAL_PARTS = CREDENTIALS.map(split)
const RUNS_LATER_PARTS = RUNS_LATER.map(split)

/** Why a write to `real` is refused, or null when it is not protected. */
export function protectedReason(real: string, ctx: ProtectedContext): string | null {
  const parts = split(real)
  const inRoots = ctx.inside
  // Inside the roots only the user's own home counts (a project's `.docker/` folder is
  // just files); outside them, any folder of these names, e.g. in another user's home.
  const home = split(ctx.home)
  const inHome = within(real, ctx.home) ? parts.slice(home.length) : null
  const credential = CREDENTIAL_PARTS.findIndex((seq) =>
    inRoots ? inHome !== null && contains(inHome.slice(0, seq.length), seq) : contains(parts, seq),
  )
  if (credential >= 0) return `it is inside ${CREDENTIALS[credential]}, which holds credentials`
  // A repository's internals (its hooks run code), wherever the repository is; a bare
  // repository's hooks too.
  if (parts.includes('.git')) return 'it is inside a .git folder, which only git itself should change'
  if (parts.some((p, i) => p.endsWith('.git') && parts[i + 1] === 'hooks')) return "it is a git repository's hooks folder"
  if (inRoots) return null
  const system = SYSTEM.find((dir) => within(real, dir))
  if (system) return `it is inside ${system}, a system folder`
  // Outside the roots, a write could plant code that runs later: in this user's home
  // or any other (the names are matched wherever they appear).
  const startup = RUNS_LATER_PARTS.findIndex((seq) => contains(parts, seq))
  if (startup >= 0) return `${RUNS_LATER[startup]} runs code when a shell, session or service starts`
  const base = parts[parts.length - 1] ?? ''
  if (base.endsWith('.pth') || base === 'sitecustomize.py' || base === 'usercustomize.py') {
    return `${path.basename(real)} runs code whenever Python starts`
  }
  return null
}

/** Whether `seq` occurs in `parts` as consecutive path components. */
function contains(parts: readonly string[], seq: readonly string[]): boolean {
  outer: for (let i = 0; i + seq.length <= parts.length; i++) {
    for (let j = 0; j < seq.length; j++) if (parts[i + j] !== seq[j]) continue outer
    return true
  }
  return false
}

/** Whether `p` is `dir` or inside it, ignoring case. */
function within(p: string, dir: string): boolean {
  const a = split(p)
  const b = split(dir)
  return b.length <= a.length && b.every((part, i) => a[i] === part)
}
