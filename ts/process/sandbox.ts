/**
 * The sandbox layer around shell commands (SPEC §3.8, seed 002's "NoopSandbox" and real
 * sandboxes): 'none' runs the command as it is; 'bwrap' runs it in bubblewrap with the
 * whole filesystem read-only except the workspace, a private /tmp, no network, its own
 * PID namespace (so nothing it starts outlives it) and no controlling terminal.
 */
import { accessSync, constants } from 'node:fs'
import path from 'node:path'

export type SandboxKind = 'none' | 'bwrap'

/** Where bwrap is, or null: looked up once per PATH. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue
    const candidate = path.join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // Not here.
    }
  }
  return null
}

/** The file and arguments that run `sh -c command` inside the sandbox. */
export function sandboxed(kind: SandboxKind, bwrap: string | null, workspace: string, command: string): { file: string; args: string[] } {
  if (kind === 'none') return { file: '/bin/sh', args: ['-c', command] }
  if (!bwrap) throw new Error('bwrap is not installed')
  return {
    file: bwrap,
    args: [
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      // After /tmp, so that a workspace under /tmp is still the real one.
      '--bind', workspace, workspace,
      '--chdir', workspace,
      '--unshare-net',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--die-with-parent',
      '--new-session',
      '--',
      '/bin/sh', '-c', command,
    ],
  }
}
