/**
 * How shell and git start their children (ts/process/run.ts): on Linux by the addon
 * (posix_spawn on its I/O pool, waited for on a thread of its own), elsewhere by Node's
 * spawn. Both ways must give the same results: output and input through pipes, exit codes
 * and signals, a new process group, ENOENT for a missing program. Node's way is forced
 * with FSGATE_NODE_SPAWN=1, so that the fallback other platforms use is tested here too.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'

import { tempDir } from './helpers.js'

type Run = typeof import('../ts/process/run.js')

async function load(mode: 'native' | 'node'): Promise<Run> {
  vi.resetModules()
  vi.stubEnv('FSGATE_NODE_SPAWN', mode === 'node' ? '1' : '')
  return import('../ts/process/run.js')
}

afterEach(() => {
  vi.unstubAllEnvs()
})

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' }

describe.each(['native', 'node'] as const)('children started the %s way', (mode) => {
  const base = () => ({ cwd: tempDir('fsgate-spawn-'), env: ENV, timeoutMs: 10_000, maxOutputBytes: 1 << 20 })

  it.skipIf(mode === 'native' && process.platform !== 'linux')('passes input, output, errors and the exit code', async () => {
    const { runProcess, childStarter } = await load(mode)
    expect(childStarter).toBe(mode)
    const opts = base()
    const r = await runProcess({ ...opts, file: 'sh', args: ['-c', 'cat; pwd; echo "$LANG"; echo err >&2; exit 3'], input: 'hello\n' })
    expect(r).toMatchObject({ exitCode: 3, signal: null, stdout: `hello\n${opts.cwd}\nC\n`, stderr: 'err\n', killed: null })
  })

  it.skipIf(process.platform !== 'linux')('reports the signal that ended it, and runs it in a process group of its own', async () => {
    const { runProcess } = await load(mode)
    const group = await runProcess({ ...base(), file: 'sh', args: ['-c', "cut -d' ' -f5 /proc/$$/stat; echo $$"] })
    const [pgid, pid] = group.stdout.trim().split(/\s+/)
    expect(pgid).toBe(pid)
    const killed = await runProcess({ ...base(), file: 'sh', args: ['-c', 'kill -9 $$'] })
    expect(killed).toMatchObject({ exitCode: null, signal: 'SIGKILL' })
    // SIGPIPE is at its default in the child (the host ignores it): `yes | head` ends.
    const piped = await runProcess({ ...base(), file: 'sh', args: ['-c', 'yes | head -2'] })
    expect(piped.stdout).toBe('y\ny\n')
  })

  it.skipIf(mode === 'native' && process.platform !== 'linux')('kills the whole group at the timeout', async () => {
    const { runProcess } = await load(mode)
    const t = performance.now()
    const r = await runProcess({ ...base(), timeoutMs: 300, file: 'sh', args: ['-c', 'sleep 30 & sleep 30; echo never'] })
    expect(r.killed).toBe('timeout')
    expect(r.stdout).toBe('')
    expect(performance.now() - t).toBeLessThan(5_000)
  })

  it.skipIf(mode === 'native' && process.platform !== 'linux')('rejects a program that is not there with ENOENT, as Node does', async () => {
    const { runProcess } = await load(mode)
    const err = await runProcess({ ...base(), file: 'no-such-program-fsgate', args: [] }).catch((e) => e)
    expect(err).toBeInstanceOf(Error)
    expect(err.code).toBe('ENOENT')
  })
})
