/**
 * The sandbox every shell command runs in (SPEC §8.1): the boundary, not the risk
 * rating. Inside it the workspace and allowedPaths are writable, except the git paths
 * that run code later; the rest of the file system is read-only; there is no network
 * unless the host allows it; the host's processes, environment and memory cannot be
 * seen; nothing gains privileges.
 *
 * Backends, chosen by `policy.sandbox` ('auto' takes the first that starts here):
 * - bwrap (Linux, bubblewrap): mount, PID, network, IPC and UTS namespaces. The root is
 *   bound read-only, /dev, /proc (of its own PID namespace), /tmp and /run are new,
 *   the credential folders of the home are hidden, the workspace and allowedPaths are
 *   bound writable and `.git` is bound onto itself (so it cannot be moved or replaced)
 *   with `config`, `hooks/`, `info/` and `objects/info/alternates` read-only in it.
 * - landlock (Linux 5.13+, no namespaces needed): the addon starts the child confined by
 *   Landlock (writes only beneath the workspace, allowedPaths and a private TMPDIR; no
 *   ptrace of, or signal to, the host) and seccomp (no socket but AF_UNIX, no io_uring),
 *   with no new privileges. It has no mount namespace, so the git paths are checked
 *   after the command and put back (./git-guard.ts), and /tmp is the host's, read-only.
 * - seatbelt (macOS): `sandbox-exec` with a profile of the same rules.
 * - none: the command runs as it is; in supervised autonomy everything not on the
 *   known-safe list then needs approval, and the result says it ran unsandboxed.
 */
import { execFile } from 'node:child_process'
import { accessSync, constants, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

import { native } from '../native.js'
import { CREDENTIALS } from '../policy/protected.js'
import { GIT_RUNS_LATER, gitRunsLater } from './git-runs-later.js'
import { childStarter } from './run.js'

export { GIT_RUNS_LATER }

/** What `policy.sandbox` may ask for. */
export type SandboxKind = 'auto' | 'bwrap' | 'landlock' | 'seatbelt' | 'none'
/** What actually runs a command. */
export type SandboxBackend = 'bwrap' | 'landlock' | 'seatbelt' | 'none'

export const SANDBOX_KINDS: readonly SandboxKind[] = ['auto', 'bwrap', 'landlock', 'seatbelt', 'none']


export interface SandboxOptions {
  kind: SandboxKind
  /** The workspace, real. */
  workspace: string
  /** allowedPaths, real. */
  writable: readonly string[]
  /** The user's home folder, real. */
  home: string
  /** Whether commands may reach the network. */
  network: boolean
  /** The backends 'auto' tries, in order. @internal (tests) */
  order?: readonly Exclude<SandboxBackend, 'none'>[]
}

const AUTO_ORDER = ['bwrap', 'landlock', 'seatbelt'] as const

/** How to start one command: the program, its arguments, and what the backend adds. */
export interface Launch {
  backend: SandboxBackend
  file: string
  args: string[]
  /** Variables the backend sets in the child's environment (TMPDIR). */
  env: Record<string, string>
  /** Landlock: what the addon confines the child to. */
  confine?: { writable: string[]; readable?: string[]; network: boolean }
  /** Removes what the launch made (a private TMPDIR). */
  done: () => Promise<void>
}

/** The backend in use, or why the one asked for cannot start. */
export type Resolved = { backend: SandboxBackend; unavailable?: undefined } | { backend: null; unavailable: string }

/** Where bwrap is, looked up on the host's PATH when the backend is first resolved. */
let bwrapFile: string | null = null

export class Sandbox {
  private resolved: Promise<Resolved> | null = null

  constructor(readonly options: SandboxOptions) {}

  /** The backend, found once: 'auto' tries bwrap, landlock and seatbelt in turn. */
  backend(): Promise<Resolved> {
    this.resolved ??= resolve(this.options, this.options.order ?? AUTO_ORDER)
    return this.resolved
  }

  /** How to run `sh -c command` in the workspace in `backend`. */
  launch(backend: SandboxBackend, command: string): Promise<Launch> {
    return this.exec(backend, '/bin/sh', ['-c', command], this.options.workspace)
  }

  /** How to run `file args…` in the folder `cwd` (inside the workspace) in `backend`. */
  async exec(backend: SandboxBackend, file: string, args: readonly string[], cwd: string): Promise<Launch> {
    const o = this.options
    const noop = async () => {}
    switch (backend) {
      case 'none':
        return { backend, file, args: [...args], env: {}, done: noop }
      case 'bwrap':
        return { backend, file: bwrapFile ?? 'bwrap', args: [...bwrapArgs(o, cwd), '--', file, ...args], env: { TMPDIR: '/tmp' }, done: noop }
      case 'landlock': {
        const tmp = await mkdtemp(path.join(os.tmpdir(), 'fsgate-sandbox-'))
        return {
          backend,
          file,
          args: [...args],
          env: { TMPDIR: tmp },
          confine: { writable: [o.workspace, ...o.writable, tmp], readable: readableBeside(credentialPaths(o.home)), network: o.network },
          done: () => rm(tmp, { recursive: true, force: true }),
        }
      }
      case 'seatbelt': {
        const tmp = await mkdtemp(path.join(os.tmpdir(), 'fsgate-sandbox-'))
        return {
          backend,
          file: SANDBOX_EXEC,
          args: ['-p', seatbeltProfile(o, tmp), file, ...args],
          env: { TMPDIR: tmp },
          done: () => rm(tmp, { recursive: true, force: true }),
        }
      }
    }
  }
}

const SANDBOX_EXEC = '/usr/bin/sandbox-exec'

/** Finds the backend for `kind`, starting each candidate once to see that it works here. */
async function resolve(o: SandboxOptions, order: readonly Exclude<SandboxBackend, 'none'>[]): Promise<Resolved> {
  const kind = o.kind
  if (kind === 'none') return { backend: 'none' }
  const tried: string[] = []
  for (const backend of kind === 'auto' ? order : [kind]) {
    const why = await unavailable(backend, o)
    if (why === null) return { backend }
    tried.push(`${backend}: ${why}`)
  }
  if (kind === 'auto') return { backend: 'none' }
  return { backend: null, unavailable: tried.join('; ') }
}

/** Why `backend` cannot start here, or null when it can. */
async function unavailable(backend: Exclude<SandboxBackend, 'none'>, o: SandboxOptions): Promise<string | null> {
  if (backend === 'bwrap') {
    if (process.platform !== 'linux') return 'bubblewrap runs on Linux only'
    const bwrap = findExecutable('bwrap')
    if (!bwrap) return 'bubblewrap is not installed (no bwrap on PATH)'
    // The namespaces may be refused (unprivileged user namespaces off, a container).
    const probe = await new Promise<string | null>((done) => {
      execFile(bwrap, [...bwrapArgs({ kind: 'bwrap', workspace: os.tmpdir(), writable: [], home: os.homedir(), network: false }), '--', '/bin/true'], { timeout: 10_000 }, (err, _out, stderr) =>
        done(err ? (stderr.trim() || err.message).slice(0, 300) : null),
      )
    })
    if (probe !== null) return `bwrap cannot start here (${probe})`
    bwrapFile = bwrap
    return null
  }
  if (backend === 'landlock') {
    if (process.platform !== 'linux') return 'Landlock is a Linux feature'
    if (childStarter !== 'native') return "Landlock needs the addon's own process start (FSGATE_NODE_SPAWN is set)"
    const abi = native.landlockAbi()
    if (abi < 1) return 'the kernel has no Landlock (Linux 5.13+ with landlock in the LSM list)'
    const held = credentialsInRoots(o)
    // Landlock only grants: what a writable root holds cannot be taken out of it.
    return held.length === 0 ? null : `the workspace or an allowed path holds credentials (${held.slice(0, 3).join(', ')}), which Landlock cannot hide`
  }
  if (process.platform !== 'darwin') return 'sandbox-exec runs on macOS only'
  return executable(SANDBOX_EXEC) ? null : 'sandbox-exec is not installed'
}

/** Where `name` is on the PATH, or null. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue
    const candidate = path.join(dir, name)
    if (executable(candidate)) return candidate
  }
  return null
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** What a path is now: a folder, a file (or other non-folder), or nothing. */
function kindOf(p: string): 'dir' | 'file' | null {
  // Most paths asked about do not exist: an ENOENT thrown for each costs more than the look.
  try {
    const st = lstatSync(p, { throwIfNoEntry: false })
    return st === undefined ? null : st.isDirectory() ? 'dir' : 'file'
  } catch {
    return null
  }
}

/** Whether `p` exists, a link counting by what it leads to. */
function existsThrough(p: string): boolean {
  try {
    return statSync(p, { throwIfNoEntry: false }) !== undefined
  } catch {
    return false
  }
}

/**
 * The credential files and folders of `home` that exist: each as named and, when that
 * is a link (a dotfile manager's `~/.ssh -> ~/dotfiles/ssh`), where it leads too.
 */
export function credentialPaths(home: string): string[] {
  // Looked up at every launch, never cached: a credential made a moment before (fsgate
  // mcp's phrase file) must be hidden from the very next command.
  const out: string[] = []
  for (const name of CREDENTIALS) {
    const p = path.join(home, name)
    if (kindOf(p) === null) continue
    out.push(p)
    const real = realOrNull(p)
    if (real !== null && real !== p) out.push(real)
  }
  return out
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p)
  } catch {
    return null
  }
}

/** The credential paths that lie in a writable root, which Landlock cannot take out of it. */
function credentialsInRoots(o: SandboxOptions): string[] {
  const roots = [o.workspace, ...o.writable]
  return credentialPaths(o.home).filter((c) => roots.some((r) => r === c || isUnder(r, c)))
}

/**
 * What Landlock lets a command read when `hidden` must stay closed: Landlock only
 * allows, so instead of `/` the rules name every entry beside each step of the way to a
 * hidden path (`/` but `/root`, `/root` but `/root/.ssh`, …). Undefined when nothing is
 * hidden (then `/` is readable). An entry made later beside one of those steps is not
 * readable.
 */
export function readableBeside(hidden: readonly string[]): string[] | undefined {
  if (hidden.length === 0) return undefined
  let rules = ['/']
  for (const target of hidden) {
    if (rules.includes(target)) {
      rules = rules.filter((r) => r !== target)
      continue
    }
    const from = rules.find((r) => isUnder(r, target))
    if (from === undefined) continue
    const opened: string[] = []
    let at = from
    while (at !== target) {
      const next = path.join(at, path.relative(at, target).split(path.sep)[0])
      for (const name of readdirOrNone(at)) {
        const entry = path.join(at, name)
        if (entry !== next) opened.push(entry)
      }
      at = next
    }
    rules = [...rules.filter((r) => r !== from), ...opened]
  }
  return rules
}

function isUnder(folder: string, p: string): boolean {
  const rel = path.relative(folder, p)
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)
}

function readdirOrNone(folder: string): string[] {
  try {
    return readdirSync(folder)
  } catch {
    return []
  }
}

/** bubblewrap's arguments, up to the `--` before the command. */
export function bwrapArgs(o: SandboxOptions, cwd = o.workspace): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']
  // Sockets of the host's services (docker, dbus, systemd) live in /run: a unix socket
  // is reachable on a read-only mount, and the network namespace does not cover it.
  if (kindOf('/run') === 'dir') args.push('--tmpfs', '/run')
  if (kindOf('/var/run') === 'dir') args.push('--tmpfs', '/var/run')
  // After /tmp and /run, so that a workspace under one is still the real one.
  const roots = [o.workspace, ...o.writable]
  for (const root of roots) args.push('--bind', root, root)
  // After the writable binds, so that a workspace that holds the home (or is it) does not
  // bring them back; by their real paths (a link leads where a dotfile manager put them).
  const hidden = new Set<string>()
  for (const p of credentialPaths(o.home)) {
    const real = realOrNull(p)
    // One that holds a root would hide the workspace itself.
    if (real === null || hidden.has(real) || roots.some((r) => r === real || isUnder(real, r))) continue
    hidden.add(real)
    const kind = kindOf(real)
    if (kind === 'dir') args.push('--tmpfs', real)
    else if (kind === 'file') args.push('--ro-bind', '/dev/null', real)
  }
  for (const root of roots) {
    const git = path.join(root, '.git')
    const gitKind = kindOf(git)
    if (gitKind === 'file') args.push('--ro-bind', git, git)
    else if (gitKind === 'dir') {
      // A mount point cannot be renamed: `.git` stays the root's repository.
      args.push('--bind', git, git)
      // A link is mounted where it leads (so what it leads to stays as it is); the link
      // itself is checked after the command (./git-guard.ts). One that leads nowhere is
      // only checked: bwrap cannot mount onto nothing.
      for (const rel of gitRunsLater(root)) {
        const p = path.join(root, rel)
        if (existsThrough(p)) args.push('--ro-bind', p, p)
      }
    }
  }
  if (!o.network) args.push('--unshare-net')
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--chdir', cwd)
  return args
}

/** The sandbox-exec profile: the same rules as the other backends, in Seatbelt's language. */
export function seatbeltProfile(o: SandboxOptions, tmp: string): string {
  const q = (p: string) => JSON.stringify(p)
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-exec)',
    '(allow process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    '(allow sysctl-read)',
    // Only the services a command line needs: user and group lookups, power state. Not
    // LaunchServices or Apple Events (`open`, `osascript`), which start programs outside.
    '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo") (global-name "com.apple.PowerManagement.control"))',
    '(allow ipc-posix-shm)',
    '(allow pseudo-tty)',
    '(allow file-read*)',
    `(allow file-write* ${[o.workspace, ...o.writable, tmp].map((p) => `(subpath ${q(p)})`).join(' ')} (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))`,
    ...[o.workspace, ...o.writable].flatMap((root) => gitRunsLater(root).map((rel) => `(deny file-write* (subpath ${q(path.join(root, rel))}))`)),
    // Last, so that a writable root that holds them does not open them.
    ...credentialPaths(o.home).map((p) => `(deny file-read* file-write* (subpath ${q(p)}))`),
    `(deny file-write-unlink (literal ${q(path.join(o.workspace, '.git'))}))`,
  ]
  // Without the network, no socket reaches out, not even a Unix one (Docker's, the
  // system's daemons): what is not allowed is denied.
  if (o.network) lines.push('(allow network*)', '(allow mach-lookup (global-name "com.apple.dnssd.service") (global-name "com.apple.trustd.agent"))')
  return lines.join('\n')
}
