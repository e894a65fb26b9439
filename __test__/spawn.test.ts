/**
 * How shell and git start their children (ts/process/run.ts): on Linux by the addon
 * (posix_spawn on its I/O pool, waited for on a thread of its own), elsewhere by Node's
 * spawn. Both ways must give the same results: output and input through pipes, exit codes
 * and signals, a new process group, ENOENT for a missing program. Node's way is forced
 * with FSGATE_NODE_SPAWN=1, so that the fallback other platforms use is tested here too.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterEach, describe, expect, it, vi } from 'vitest'

import { createToolkit } from '../ts/index.js'
import { fails, put, tempDir } from './helpers.js'

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

  it.skipIf(process.platform !== 'linux')('finds a program through a relative folder on PATH from the child\'s folder, not the host\'s', async () => {
    const { runProcess } = await load(mode)
    const opts = base()
    fs.chmodSync(put(opts.cwd, 'bin/only-here', '#!/bin/sh\necho found\n'), 0o755)
    expect(process.cwd()).not.toBe(opts.cwd)
    const env = { ...ENV, PATH: `bin:${ENV.PATH}` }
    expect(await runProcess({ ...opts, env, file: 'only-here', args: [] })).toMatchObject({ exitCode: 0, stdout: 'found\n' })
    const elsewhere = await runProcess({ ...base(), env, file: 'only-here', args: [] }).catch((e) => e)
    expect(elsewhere.code).toBe('ENOENT')
  })

  it.skipIf(mode === 'native' && process.platform !== 'linux')('rejects a program that is not there with ENOENT, as Node does', async () => {
    const { runProcess } = await load(mode)
    const err = await runProcess({ ...base(), file: 'no-such-program-fsgate', args: [] }).catch((e) => e)
    expect(err).toBeInstanceOf(Error)
    expect(err.code).toBe('ENOENT')
  })
})

/** The pids of the processes whose command line holds `needle`. */
function running(needle: string): number[] {
  const pids: number[] = []
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue
    try {
      if (fs.readFileSync(path.join('/proc', e, 'cmdline'), 'utf8').includes(needle)) pids.push(Number(e))
    } catch {
      // Gone already.
    }
  }
  return pids
}

describe.skipIf(process.platform !== 'linux')('an emergency stop while a child is being started', () => {
  // The addon starts a child on its I/O pool, so a stop can land between the call's
  // start and the child's: that child must be killed too, and the call end at once.
  it('leaves no process running, however early or late the stop comes', async () => {
    const toolkit = createToolkit({ workspace: tempDir('fsgate-spawn-stop-'), preset: 'claude-code' })
    const session = toolkit.createSession()
    for (const [i, delay] of [0, 0, 0.2, 0.5, 1, 1, 2, 3, 5, 8].entries()) {
      const needle = `sleep 4${i}.125`
      const started = performance.now()
      const call = session.call('Bash', { command: needle })
      await new Promise((resolve) => (delay === 0 ? queueMicrotask(() => resolve(null)) : setTimeout(resolve, delay)))
      toolkit.emergencyStop('test')
      fails(await call, 'EMERGENCY_STOP')
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(running(needle), `stop after ${delay} ms`).toEqual([])
      toolkit.resume()
    }
  })
})
