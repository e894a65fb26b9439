/**
 * Protected paths (SPEC §5.1, §5.2): where no write ever lands. Pure decisions on real
 * paths; the caller resolves the path first.
 */
import path from 'node:path'

export interface ProtectedContext {
  /** The workspace and allowedPaths, real. */
  roots: readonly string[]
  /** The workspace, real. */
  workspace: string
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

/** Credentials and keys under the home folder: never written, wherever the roots are. */
const CREDENTIALS = [
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
  '.vault-token',
  '.terraform.d',
  'Library/Keychains',
]

/** Files and folders under home that run code later: protected outside the workspace (§5.2). */
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
  '.vimrc',
  '.config/nvim',
  '.ipython',
  '.local/bin',
  '.config/plasma-workspace',
  '.inputrc',
  '.gitconfig',
  '.config/git',
  '.config/fish',
  '.config/autostart',
  '.config/systemd',
  '.config/environment.d',
  '.local/share/systemd',
  'Library/LaunchAgents',
]

/** Why a write to `real` is refused, or null when it is not protected. */
export function protectedReason(real: string, ctx: ProtectedContext): string | null {
  const inRoots = ctx.roots.some((root) => within(real, root))
  const inHome = (list: readonly string[]) => list.find((rel) => within(real, path.join(ctx.home, rel)))
  const credential = inHome(CREDENTIALS)
  if (credential) return `it is inside ~/${credential}, which holds credentials`
  const parts = real.split(path.sep)
  // A repository's internals (its hooks run code), wherever the repository is; a bare
  // repository's hooks too.
  if (parts.includes('.git')) return 'it is inside a .git folder, which only git itself should change'
  if (parts.some((p, i) => p.endsWith('.git') && parts[i + 1] === 'hooks')) return "it is a git repository's hooks folder"
  if (inRoots) return null
  const system = SYSTEM.find((dir) => within(real, dir))
  if (system) return `it is inside ${system}, a system folder`
  // Outside the roots, a write could plant code that runs later.
  const startup = inHome(RUNS_LATER)
  if (startup) return `~/${startup} runs code when a shell, session or service starts`
  const base = path.basename(real)
  if (base.endsWith('.pth') || base === 'sitecustomize.py' || base === 'usercustomize.py') {
    return `${base} runs code whenever Python starts`
  }
  return null
}

function within(p: string, dir: string): boolean {
  const rel = path.relative(dir, p)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
}
