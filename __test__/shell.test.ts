/**
 * shell / Bash (SPEC §3.8): process control (timeouts that kill the whole group, output
 * bounded while it streams, the cleared environment), approval per preset, the allow and
 * deny lists, and the bwrap sandbox.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { HeadTail, ProcessRegistry, runProcess } from '../ts/process/run.js'
import { alive, fails, ok, removeTempDirs, textOf, until, workspace } from './helpers.js'
import { needs } from './peers.js'

afterAll(removeTempDirs)

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' }

describe('HeadTail', () => {
  it('holds at most its head and tail, whatever goes through', () => {
    const ht = new HeadTail(1000, 1000)
    const chunk = Buffer.alloc(777, 0x61)
    for (let i = 0; i < 100_000; i++) ht.push(chunk)
    expect(ht.seen).toBe(77_700_000)
    expect(ht.held).toBe(2000)
    expect(ht.allocated).toBe(2000)
    const { text, cut } = ht.text(2000)
    expect(cut).toBe(true)
    expect(text).toMatch(/^a{1000}\n\[\.\.\. 77,698,000 bytes of output omitted; 77,700,000 in all \.\.\.\]\na{1000}$/)
  })

  it('keeps all of a stream that fits', () => {
    const ht = new HeadTail(4, 4)
    for (const part of ['ab', 'cd', 'ef']) ht.push(Buffer.from(part))
    expect(ht.text(8)).toEqual({ text: 'abcdef', cut: false })
  })
})

describe('process control', () => {
  it('kills a command that forks a grandchild, and the grandchild, right after the timeout', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const started = Date.now()
    const r = await session.call('Bash', { command: 'sh -c "sleep 300 & echo \\$! > grandchild.pid; wait" & echo $! > child.pid; sleep 300', timeout: 1000 })
    const elapsed = Date.now() - started
    fails(r, 'TIMEOUT')
    expect(textOf(r)).toMatch(/killed, with every process it started, after 1 s/)
    expect(elapsed).toBeLessThan(3000)
    for (const name of ['child.pid', 'grandchild.pid']) {
      const pid = Number(fs.readFileSync(path.join(dir, name), 'utf8'))
      expect(pid).toBeGreaterThan(1)
      expect(await until(() => !alive(pid), 1000), `${name} ${pid} still running`).toBe(true)
    }
  })

  it('leaves nothing running that left the process group (setsid), after a return or a timeout', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    ok(await session.call('Bash', { command: 'setsid sleep 300 > /dev/null 2>&1 & echo $! > escaped.pid' }))
    const pid = Number(fs.readFileSync(path.join(dir, 'escaped.pid'), 'utf8'))
    expect(await until(() => !alive(pid), 1000), `setsid'd ${pid} still running`).toBe(true)
    fails(await session.call('Bash', { command: 'setsid sleep 300 > /dev/null 2>&1 & echo $! > escaped2.pid; sleep 300', timeout: 1000 }), 'TIMEOUT')
    const pid2 = Number(fs.readFileSync(path.join(dir, 'escaped2.pid'), 'utf8'))
    expect(await until(() => !alive(pid2), 1000), `setsid'd ${pid2} still running`).toBe(true)
  })

  it('starts nothing when the call is already cancelled', async () => {
    const registry = new ProcessRegistry()
    const spawned: number[] = []
    const add = registry.add.bind(registry)
    registry.add = (kill) => {
      spawned.push(1)
      return add(kill)
    }
    const r = await runProcess({ file: 'touch', args: ['/tmp/never'], cwd: '/', env, timeoutMs: 1000, maxOutputBytes: 100, registry, signal: AbortSignal.abort() })
    expect(r.killed).toBe('aborted')
    expect(spawned).toHaveLength(0)
  })

  it('leaves nothing running after a command returns, even what it put in the background', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    ok(await session.call('Bash', { command: 'sleep 300 & echo $! > bg.pid; echo started' }))
    const pid = Number(fs.readFileSync(path.join(dir, 'bg.pid'), 'utf8'))
    expect(await until(() => !alive(pid), 1000)).toBe(true)
  })

  it('returns stdout, stderr and the exit code', async () => {
    const { session } = workspace({ preset: 'claude-code' })
    const r = await session.call('Bash', { command: 'echo out; echo err >&2; exit 3' })
    const t = ok(r)
    expect(t).toBe('out\n[stderr]\nerr\n[exit code 3]')
    expect(r.data).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', truncated: false })
  })

  it('runs in the workspace with sh', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    expect(ok(await session.call('Bash', { command: 'pwd' }))).toBe(dir)
  })

  it('holds an output flood in a bounded buffer, keeping its head and tail', async () => {
    const { session } = workspace({ preset: 'claude-code', limits: { shellOutputBytes: 64 * 1024 } })
    let peak = 0
    const base = process.memoryUsage().arrayBuffers
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)), 5)
    const r = await session.call('Bash', { command: 'echo FIRST; yes 0123456789abcdef | head -c 300000000; echo; echo LAST' })
    clearInterval(timer)
    const t = ok(r)
    expect(r.data?.stdoutBytes).toBe(300_000_000 + 'FIRST\n'.length + 1 + 'LAST\n'.length)
    expect(r.data?.truncated).toBe(true)
    expect(t.startsWith('FIRST\n')).toBe(true)
    expect(t.endsWith('LAST')).toBe(true)
    expect(t).toMatch(/\[\.\.\. [\d,]+ bytes of output omitted; 300,000,012 in all \.\.\.\]/)
    expect(Buffer.byteLength(t)).toBeLessThan(64 * 1024 + 200)
    // 300 MB went through; what is held (plus chunks awaiting the collector) stays far below it.
    expect(peak).toBeLessThan(100 * 1024 * 1024)
  })

  it('shares the output budget between stdout and stderr', async () => {
    const r = await runProcess({ file: 'sh', args: ['-c', 'head -c 5000 /dev/zero | tr "\\0" a; echo; echo small >&2'], cwd: '/', env, timeoutMs: 10_000, maxOutputBytes: 2000 })
    expect(r.stderr).toBe('small\n')
    expect(r.truncated).toBe(true)
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(2000 + 100)
  })

  it('never cuts a UTF-8 character in two', async () => {
    const r = await runProcess({ file: 'sh', args: ['-c', 'i=0; while [ $i -lt 3000 ]; do printf "가나다"; i=$((i+1)); done'], cwd: '/', env, timeoutMs: 10_000, maxOutputBytes: 1001 })
    expect(r.truncated).toBe(true)
    expect(r.stdout).not.toContain('\ufffd')
  })

  it('never passes a secret of the host environment to a child', async () => {
    process.env.FSGATE_TEST_SECRET = 'sk-live-0000-secret'
    process.env.OPENAI_API_KEY = 'sk-openai-secret'
    try {
      const { session } = workspace({ preset: 'claude-code' })
      const t = ok(await session.call('Bash', { command: 'env' }))
      expect(t).not.toContain('secret')
      expect(t).toMatch(/^PATH=/m)
      const names = t.split('\n').map((l) => l.split('=')[0])
      // FSGATE_RUN marks the run's processes for the sweep of those that leave the group.
      for (const n of names) expect(['PATH', 'HOME', 'TERM', 'LANG', 'LC_ALL', 'LC_CTYPE', 'USER', 'SHELL', 'TMPDIR', 'PWD', 'SHLVL', '_', 'OLDPWD', 'FSGATE_RUN']).toContain(n)
      const passing = workspace({ preset: 'claude-code', policy: { shellEnvPassthrough: ['FSGATE_TEST_SECRET'] } })
      const t2 = ok(await passing.session.call('Bash', { command: 'echo "$FSGATE_TEST_SECRET:$OPENAI_API_KEY"' }))
      expect(t2).toBe('sk-live-0000-secret:')
    } finally {
      delete process.env.FSGATE_TEST_SECRET
      delete process.env.OPENAI_API_KEY
    }
  })

  it('is cancelled by the call signal, killing the group', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 300)
    const started = Date.now()
    const r = await session.call('Bash', { command: 'sleep 300 & echo $! > bg.pid; sleep 300' }, { signal: ac.signal })
    fails(r, 'ABORTED')
    expect(Date.now() - started).toBeLessThan(2000)
    const pid = Number(fs.readFileSync(path.join(dir, 'bg.pid'), 'utf8'))
    expect(await until(() => !alive(pid), 1000)).toBe(true)
  })

  it('kills every running command on emergency stop, and refuses later calls until resume', async () => {
    const { toolkit, session } = workspace({ preset: 'claude-code' })
    const other = toolkit.createSession()
    const running = session.call('Bash', { command: 'sleep 300' })
    const running2 = other.call('Bash', { command: 'sleep 300' })
    await until(() => toolkit.processes.size === 2, 2000)
    const started = Date.now()
    expect(toolkit.emergencyStop('user pressed stop')).toBe(2)
    fails(await running, 'EMERGENCY_STOP')
    fails(await running2, 'EMERGENCY_STOP')
    expect(Date.now() - started).toBeLessThan(1500)
    const later = fails(await session.call('Bash', { command: 'echo hi' }), 'EMERGENCY_STOP')
    expect(later).toMatch(/user pressed stop/)
    fails(await session.call('Read', { file_path: 'x' }), 'EMERGENCY_STOP')
    fails(await session.call('NoSuchTool', {}), 'EMERGENCY_STOP')
    toolkit.resume()
    expect(ok(await session.call('Bash', { command: 'echo hi' }))).toBe('hi')
  })

  it('reports a command that cannot start', async () => {
    await expect(runProcess({ file: '/nonexistent/sh', args: [], cwd: '/', env, timeoutMs: 1000, maxOutputBytes: 100 })).rejects.toThrow(/ENOENT/)
  })

  it('unregisters finished children', async () => {
    const registry = new ProcessRegistry()
    await runProcess({ file: 'true', args: [], cwd: '/', env, timeoutMs: 1000, maxOutputBytes: 100, registry })
    expect(registry.size).toBe(0)
  })

  it('takes timeout_secs in the revka dialect', async () => {
    const { session } = workspace({ preset: 'revka', policy: { autonomy: 'full', allowedCommands: null } })
    const started = Date.now()
    fails(await session.call('shell', { command: 'sleep 30', timeout_secs: 1 }), 'TIMEOUT')
    expect(Date.now() - started).toBeLessThan(3000)
  })

  it('accepts run_in_background: false, and true starts a background task (tasks.test.ts)', async () => {
    const { session } = workspace({ preset: 'claude-code' })
    expect(ok(await session.call('Bash', { command: 'echo fg', run_in_background: false, description: 'print fg' }))).toBe('fg')
    expect(ok(await session.call('Bash', { command: 'sleep 1', run_in_background: true }))).toMatch(/^Command running in background with ID: b[0-9a-f]{8}\./)
    await session.close()
  })

  it('refuses bad input with INVALID_INPUT naming the field', async () => {
    const { session } = workspace({ preset: 'claude-code' })
    for (const [input, field] of [
      [{ command: '' }, 'command'],
      [{}, 'command'],
      [{ command: 'ls', timeout: -1 }, 'timeout'],
      [{ command: 'ls', timeout: 0 }, 'timeout'],
      [{ command: 'x'.repeat(70_000) }, 'command'],
      [{ command: 'ls', run_in_background: 'yes' }, 'run_in_background'],
    ] as const) {
      const r = await session.call('Bash', input)
      fails(r, 'INVALID_INPUT')
      expect(r.data?.field).toBe(field)
    }
  })
})

describe('approval', () => {
  it('revka: the model approves with approved: true', async () => {
    const { dir, session } = workspace({ preset: 'revka', policy: { sandbox: 'none' } })
    const r = await session.call('shell', { command: 'echo hi > out.txt' })
    const t = fails(r, 'APPROVAL_REQUIRED')
    expect(t).toMatch(/rated medium risk/)
    expect(fs.existsSync(path.join(dir, 'out.txt'))).toBe(false)
    ok(await session.call('shell', { command: 'echo hi > out.txt', approved: true }))
    expect(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8')).toBe('hi\n')
    // Low risk runs without approval.
    expect(ok(await session.call('shell', { command: 'cat out.txt' }))).toBe('hi')
  })

  it('guarded: the model cannot approve itself; a user phrase approves that exact command once', async () => {
    const { dir, session } = workspace({ policy: { sandbox: 'none' } })
    const first = await session.call('shell', { command: 'echo hi > out.txt', approved: true })
    const t = fails(first, 'APPROVAL_REQUIRED')
    const phrase = first.data?.grantPhrase as string
    expect(phrase).toMatch(/^approve command [0-9a-z-]+$/)
    expect(first.error?.nonce).toBeTypeOf('string')
    // The phrase is for the host to show the user, not in what the model reads.
    expect(t).not.toContain(phrase)
    expect(t).not.toContain(phrase.split(' ').pop())
    // A phrase for one command does not approve another (and the attempt voids nothing of it).
    fails(await session.call('shell', { command: 'echo evil > out.txt', grant_phrase: phrase }), 'APPROVAL_REQUIRED')
    expect(fs.existsSync(path.join(dir, 'out.txt'))).toBe(false)
    ok(await session.call('shell', { command: 'echo hi > out.txt', grant_phrase: phrase }))
    expect(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8')).toBe('hi\n')
    // Used once.
    fails(await session.call('shell', { command: 'echo hi > out.txt', grant_phrase: phrase }), 'APPROVAL_REQUIRED')
  })

  it('guarded: a wrong phrase voids the request', async () => {
    const { session } = workspace({ policy: { sandbox: 'none' } })
    const first = await session.call('shell', { command: 'touch a' })
    const phrase = first.data?.grantPhrase as string
    const wrong = await session.call('shell', { command: 'touch a', grant_phrase: 'approve command 0000-0000' })
    expect(fails(wrong, 'APPROVAL_REQUIRED')).toMatch(/refused/)
    fails(await session.call('shell', { command: 'touch a', grant_phrase: phrase }), 'APPROVAL_REQUIRED')
  })

  it('guarded: with user messages noted, the phrase must come from the user', async () => {
    const { session } = workspace({ policy: { sandbox: 'none' } })
    const first = await session.call('shell', { command: 'touch a' })
    session.noteUserMessage('please go ahead')
    const phrase = first.data?.grantPhrase as string
    fails(await session.call('shell', { command: 'touch a', grant_phrase: phrase }), 'APPROVAL_REQUIRED')
    const second = await session.call('shell', { command: 'touch a' })
    session.noteUserMessage(`ok:\n${second.data?.grantPhrase}`)
    ok(await session.call('shell', { command: 'touch a', grant_phrase: second.data?.grantPhrase }))
  })

  it('guarded: the host approves or declines through onApproval', async () => {
    const asked: unknown[] = []
    let answer = false
    const { dir, session } = workspace({
      onApproval: (req) => {
        asked.push(req)
        return answer
      },
    })
    const r = await session.call('shell', { command: 'rm -f gone.txt', approved: true })
    expect(fails(r, 'APPROVAL_REQUIRED')).toMatch(/declined/)
    expect(r.data?.declined).toBe(true)
    expect(asked[0]).toMatchObject({ tool: 'shell', command: 'rm -f gone.txt', risk: 'high' })
    answer = true
    fs.writeFileSync(path.join(dir, 'gone.txt'), 'x')
    ok(await session.call('shell', { command: 'rm -f gone.txt' }))
    expect(fs.existsSync(path.join(dir, 'gone.txt'))).toBe(false)
    // Low risk never asks.
    ok(await session.call('shell', { command: 'ls' }))
    expect(asked).toHaveLength(2)
  })

  it("the model's description of a command reaches onApproval (Claude's Bash, gemini's run_shell_command), and the phrase's data without a handler", async () => {
    for (const [preset, tool] of [['claude-code', 'Bash'], ['gemini-cli', 'run_shell_command']] as const) {
      const asked: Array<{ description?: string }> = []
      const onApproval = (req: { description?: string }) => {
        asked.push(req)
        return false
      }
      const { session } = workspace({ preset, policy: { autonomy: 'supervised', sandbox: 'none' }, onApproval })
      fails(await session.call(tool, { command: 'rm -f gone.txt', description: 'Delete the stale marker file' }), 'APPROVAL_REQUIRED')
      expect(asked, preset).toEqual([expect.objectContaining({ tool, command: 'rm -f gone.txt', description: 'Delete the stale marker file' })])
      // None given: none passed.
      fails(await session.call(tool, { command: 'rm -f gone.txt' }), 'APPROVAL_REQUIRED')
      expect(asked[1].description, preset).toBeUndefined()
    }
    const { session } = workspace({ preset: 'claude-code', policy: { autonomy: 'supervised', sandbox: 'none' } })
    const r = await session.call('Bash', { command: 'rm -f gone.txt', description: 'Delete the stale marker file' })
    fails(r, 'APPROVAL_REQUIRED')
    expect(r.data).toMatchObject({ command: 'rm -f gone.txt', description: 'Delete the stale marker file' })
  })

  it('full autonomy runs every command; read_only runs only low ones', async () => {
    const full = workspace({ preset: 'claude-code' })
    ok(await full.session.call('Bash', { command: 'touch made && rm made' }))
    const ro = workspace({ preset: 'claude-code', policy: { autonomy: 'read_only' } })
    expect(ok(await ro.session.call('Bash', { command: 'echo hi | wc -c' }))).toBe('3')
    const r = await ro.session.call('Bash', { command: 'ls && touch made' })
    expect(fails(r, 'AUTONOMY')).toMatch(/read-only.*rated medium/)
    expect(fs.existsSync(path.join(ro.dir, 'made'))).toBe(false)
  })
})

describe('allow and deny lists', () => {
  it('revka allows only its default commands, wrappers included', async () => {
    const { session } = workspace({ preset: 'revka', policy: { autonomy: 'full' } })
    ok(await session.call('shell', { command: 'echo hi | wc -l' }))
    for (const cmd of ['rm x', 'ls && rm x', 'echo $(rm x)', 'timeout 5 ls', 'env rm x', '$CMD x', 'sudo ls', "'rm' x", '/bin/rm x']) {
      fails(await session.call('shell', { command: cmd }), 'COMMAND_DENIED')
    }
  })

  it('denies listed commands in every autonomy, however they are wrapped', async () => {
    const { session } = workspace({ preset: 'claude-code', policy: { deniedCommands: ['curl', 'nc'] } })
    for (const cmd of ['curl http://x', 'env curl x', 'ls; "curl" x', 'echo `nc -l 1`', 'command curl x']) {
      const r = await session.call('Bash', { command: cmd })
      expect(fails(r, 'COMMAND_DENIED'), cmd).toMatch(/denied/)
    }
    ok(await session.call('Bash', { command: 'echo curl' }))
  })

  it('checks the list options', () => {
    expect(() => workspace({ policy: { deniedCommands: ['/bin/rm'] } })).toThrow(/executable names/)
    expect(() => workspace({ policy: { allowedCommands: [''] } })).toThrow(/executable names/)
    expect(() => workspace({ policy: { shellEnvPassthrough: ['A=B'] } })).toThrow(/variable names/)
    expect(() => workspace({ policy: { sandbox: 'docker' as 'none' } })).toThrow(/sandbox/)
  })
})

/** bwrap needs user namespaces (or root); .ci/run installs it. */
const bwrapWorks = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-net', '--unshare-pid', 'true']).status === 0

needs({ bwrap: bwrapWorks }, import.meta.url).describe('bwrap sandbox', () => {
  it('makes the root read-only, the workspace writable, and the network absent', async () => {
    // Not under /tmp, which the sandbox replaces with its own.
    const outside = fs.mkdtempSync('/var/tmp/fsgate-outside-')
    const { dir, session } = workspace({ preset: 'claude-code', policy: { sandbox: 'bwrap' } })
    ok(await session.call('Bash', { command: 'echo in > inside.txt' }))
    expect(fs.readFileSync(path.join(dir, 'inside.txt'), 'utf8')).toBe('in\n')
    const r = await session.call('Bash', { command: `echo out > ${outside}/escaped.txt` })
    expect(ok(r)).toMatch(/Read-only file system|Permission denied/)
    expect(fs.existsSync(path.join(outside, 'escaped.txt'))).toBe(false)
    fs.rmSync(outside, { recursive: true })
    expect(ok(await session.call('Bash', { command: 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "' }))).toBe('lo')
    // Its own PID namespace: the shell sees itself as one of very few processes.
    expect(Number(ok(await session.call('Bash', { command: 'ls /proc | grep -c "^[0-9]"' })))).toBeLessThan(6)
  })
})

describe('bwrap missing', () => {
  it('refuses to run unsandboxed when bwrap is configured but absent', async () => {
    const { dir, session } = workspace({ preset: 'claude-code', policy: { sandbox: 'bwrap' } })
    const saved = process.env.PATH
    process.env.PATH = '/nonexistent'
    try {
      const r = await session.call('Bash', { command: 'touch ran' })
      expect(fails(r, 'BACKEND_UNAVAILABLE')).toMatch(/bubblewrap is not installed/)
    } finally {
      process.env.PATH = saved
    }
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
  })
})

describe('many calls at once', () => {
  it('prints no listener warning with more than ten calls in flight on one toolkit', async () => {
    const { toolkit } = workspace({ preset: 'claude-code' })
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.name)
    process.on('warning', onWarning)
    try {
      const calls = Array.from({ length: 16 }, () => toolkit.createSession().call('Bash', { command: 'sleep 0.2' }))
      for (const r of await Promise.all(calls)) ok(r)
      await new Promise((r) => setImmediate(r))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning')
  })
})

describe('typed method', () => {
  it('session.shell returns the output and throws FsgateError codes', async () => {
    const { session } = workspace({ policy: { sandbox: 'none' } })
    const out = await session.shell({ command: 'echo typed' })
    expect(textOf(out)).toBe('typed')
    expect(out.data?.exitCode).toBe(0)
    await expect(session.shell({ command: 'touch x' })).rejects.toMatchObject({ code: 'APPROVAL_REQUIRED' })
  })
})
