/**
 * Security review of shell / git_operations / the dispatch gate (SPEC §3.7, §3.8, §5.4).
 * Every test asserts the SECURE behaviour: a failing test is a finding. Everything that
 * could change files runs in temp folders only (markers that `rm` would delete).
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { base32Decode, totp } from '../ts/policy/otp.js'
import { SAFE_ENV_NAMES } from '../ts/policy/env.js'
import { classifyCommand } from '../ts/policy/risk.js'
import { HeadTail } from '../ts/process/run.js'
import { alive, fails, ok, put, removeTempDirs, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

/** A workspace holding `marker`, where every medium or high command is declined by the host. */
function declining(extra: Parameters<typeof workspace>[0] = {}) {
  const asked: string[] = []
  const fx = workspace({ onApproval: (r) => (asked.push(r.command), false), ...extra })
  put(fx.dir, 'marker', 'keep me')
  return { ...fx, asked, marker: path.join(fx.dir, 'marker') }
}

function gitRepo(dir: string): void {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, GIT_CONFIG_NOSYSTEM: '1' }
  for (const args of [['init', '-q', '.'], ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'init']]) {
    const r = spawnSync('git', args, { cwd: dir, env })
    expect(r.status, String(r.stderr)).toBe(0)
  }
}

// ---------------------------------------------------------------------------------------
// /bin/sh is dash: the parser reads bash syntax that dash reads otherwise

describe('classifier vs dash: a command the classifier rates low runs rm', () => {
  const cases: Array<[string, string]> = [
    // bash: one ANSI-C string. dash: `$` + '\' then `; rm -f marker`, then a comment.
    ['ANSI-C $\'…\' quoting (dash has none)', "echo $'\\'; rm -f marker #'"],
    // bash: arithmetic `$[…]`. dash: a literal `$[`, then `;` ends the command.
    ['$[ … ] arithmetic (dash has none)', 'echo $[;rm -f marker;]'],
    // bash: `|` is part of the =~ regex. dash: `[[ x =~ a` piped into `rm -f marker ]]`.
    ['`|` inside a [[ =~ ]] regex (dash has no [[)', '[[ x =~ a|rm -f marker ]]'],
  ]
  it.each(cases)('%s', async (_what, command) => {
    const { session, marker, asked } = declining()
    const r = await session.call('shell', { command })
    expect(fs.existsSync(marker), `rm ran: ${textOf(r)}`).toBe(true)
    expect(r.isError).toBe(true)
    expect(asked).toEqual([command])
    expect(classifyCommand(command).risk).not.toBe('low')
  })

  it('the revka allowlist is bypassed the same way (touch is not on it)', async () => {
    const { session, dir } = workspace({ preset: 'revka' })
    const r = await session.call('shell', { command: "echo $'\\'; touch made #'" })
    fails(r, 'COMMAND_DENIED')
    expect(fs.existsSync(path.join(dir, 'made'))).toBe(false)
  })
})

describe('policy.deniedCommands', () => {
  it('a denied program named by a glob or substitution still runs in full autonomy', async () => {
    const { session, marker } = declining({ policy: { autonomy: 'full', deniedCommands: ['rm'] } })
    fails(await session.call('shell', { command: '/bin/r[m] -f marker' }), 'COMMAND_DENIED')
    expect(fs.existsSync(marker)).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------
// Commands rated low that write files or run programs (read_only runs every low command)

describe('low-rated commands that write files or run programs', () => {
  const writers = [
    "uniq - out <<'E'\nany content\nE",
    'xxd -r hex out',
    'shuf -o out in',
    'sort -oout in',
    'sort --output out in',
    'git log -1 --format=x --output=out',
    "sed 's/a/b/w out' in",
    'tree -o out',
  ]
  it.each(writers)('writes a file: %j', (command) => {
    expect(classifyCommand(command).risk).not.toBe('low')
  })

  const runners = [
    "sed 's/x/y/e' in",
    "sed '1e touch pwned' in",
    'rg --pre ./script x',
    'fdfind -x touch pwned',
    'fd --exec touch pwned',
    // A code variable set without NAME=value syntax, then exported to git.
    "read GIT_CONFIG_PARAMETERS <<'E'\n'core.fsmonitor'='touch pwned'\nE\nexport GIT_CONFIG_PARAMETERS; git status",
    'for PATH in .; do ls; done',
  ]
  it.each(runners)('runs a program: %j', (command) => {
    expect(classifyCommand(command).risk).not.toBe('low')
  })

  it('read_only autonomy: two low commands plant core.fsmonitor and run it', async () => {
    const { dir, session } = workspace({ policy: { autonomy: 'read_only' } })
    gitRepo(dir)
    const plant = "git log -1 --format='[core]%n%x09fsmonitor = touch pwned' --output=.git/config"
    const r1 = await session.call('shell', { command: plant })
    const r2 = await session.call('shell', { command: 'git status' })
    expect(fs.existsSync(path.join(dir, 'pwned')), `${textOf(r1)}\n${textOf(r2)}`).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------
// Environment

describe('environment', () => {
  it("the host's own variables cannot be read back through /proc (low-rated cat)", async () => {
    const own = fs
      .readFileSync('/proc/self/environ', 'utf8')
      .split('\0')
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const)
      .find(([k, v]) => k !== '' && v.length >= 3 && !SAFE_ENV_NAMES.includes(k))
    expect(own, 'the test process has a non-safe variable').toBeDefined()
    // Without a sandbox the same user's /proc is readable, so the read itself is rated high:
    // it needs the user's approval, and the host's variable is not printed.
    const { session } = workspace()
    const r = await session.call('shell', { command: 'cat /proc/$PPID/environ' })
    expect(fails(r, 'APPROVAL_REQUIRED')).toMatch(/rated high/)
    expect(textOf(r).includes(`${own![0]}=${own![1]}`), `${own![0]} of the host was read by the command`).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------
// Process control

describe('process control', () => {
  it('nothing the command starts keeps running after the call returns (setsid, low-rated)', async () => {
    // setsid is medium (it needs approval); in full autonomy it runs, and the sweep ends it.
    const { session } = workspace({ preset: 'claude-code' })
    const out = ok(await session.call('Bash', { command: 'setsid sleep 30 >/dev/null 2>&1 & echo $!; sleep 0.5' }))
    const pid = Number(out.trim())
    expect(pid).toBeGreaterThan(1)
    await new Promise((r) => setTimeout(r, 500))
    const survived = alive(pid)
    if (survived) process.kill(pid, 'SIGKILL')
    expect(survived).toBe(false)
  })

  it('an emergency stop while the host is asking for approval spawns nothing afterwards', async () => {
    let fx!: ReturnType<typeof workspace>
    fx = workspace({
      onApproval: () => {
        fx.toolkit.emergencyStop('test')
        return true
      },
    })
    put(fx.dir, 'marker', 'x')
    let spawned = 0
    const add = fx.toolkit.processes.add.bind(fx.toolkit.processes)
    fx.toolkit.processes.add = (kill) => {
      spawned++
      return add(kill)
    }
    try {
      const r = await fx.session.call('shell', { command: 'rm -f marker' })
      fails(r, 'EMERGENCY_STOP')
      expect(spawned).toBe(0)
    } finally {
      fx.toolkit.resume()
    }
  })

  it('output in many tiny chunks is held in a bounded number of buffers', () => {
    const ht = new HeadTail(64 * 1024, 64 * 1024)
    const one = Buffer.from('x')
    for (let i = 0; i < 200_000; i++) ht.push(one)
    // One head buffer and one ring: 200,000 one-byte chunks hold exactly head + tail.
    expect(ht.allocated).toBe(128 * 1024)
    expect(ht.held).toBe(128 * 1024)
  })
})

// ---------------------------------------------------------------------------------------
// OTP gating

const SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'

describe('OTP gating', () => {
  it('a tool listed by one of its names is gated under every name', async () => {
    const { session } = workspace({ policy: { autonomy: 'full', otp: { secret: SECRET, actions: ['Bash', 'write_file'] } } })
    fails(await session.call('shell', { command: 'echo hi' }), 'OTP_REQUIRED')
    fails(await session.call('file_write', { path: 'new.txt', content: 'x' }), 'OTP_REQUIRED')
  })

  it("'shell:medium' also gates high-risk commands", async () => {
    const { session, marker } = declining({ policy: { autonomy: 'full', otp: { secret: SECRET, actions: ['shell:medium'] } } })
    fails(await session.call('shell', { command: 'touch made' }), 'OTP_REQUIRED')
    fails(await session.call('shell', { command: 'rm -f marker' }), 'OTP_REQUIRED')
    expect(fs.existsSync(marker)).toBe(true)
  })

  it('pins: a current code opens one call, and not twice', async () => {
    const { session } = workspace({ policy: { autonomy: 'full', otp: { secret: SECRET, actions: ['shell'] } } })
    const code = totp(base32Decode(SECRET), Date.now())
    ok(await session.call('shell', { command: 'echo hi', otp: code }))
    fails(await session.call('shell', { command: 'echo hi', otp: code }), 'OTP_REQUIRED')
  })
})

// ---------------------------------------------------------------------------------------
// Approval (pins: these hold today)

describe('approval in the guarded and consent presets (pins)', () => {
  it.each(['guarded', 'consent'] as const)('%s: the model never reads the phrase, and a grant is for one exact command, once', async (preset) => {
    const { session, dir } = workspace({ preset })
    put(dir, 'a', 'x')
    const first = await session.call('shell', { command: 'rm -f a', approved: true })
    const text = fails(first, 'APPROVAL_REQUIRED')
    const phrase = String(first.data?.grantPhrase)
    expect(phrase).toMatch(/^approve command /)
    expect(text).not.toContain(phrase)
    expect(text).not.toContain(phrase.split(' ').pop()!)
    // Not for another command (even one space more), and then the request is void.
    fails(await session.call('shell', { command: 'rm -f a ', grant_phrase: phrase }), 'APPROVAL_REQUIRED')
    expect(fs.existsSync(path.join(dir, 'a'))).toBe(true)
    const again = await session.call('shell', { command: 'rm -f a' })
    const p2 = String(again.data?.grantPhrase)
    ok(await session.call('shell', { command: 'rm -f a', grant_phrase: p2 }))
    put(dir, 'a', 'x')
    fails(await session.call('shell', { command: 'rm -f a', grant_phrase: p2 }), 'APPROVAL_REQUIRED')
    expect(fs.existsSync(path.join(dir, 'a'))).toBe(true)
  })
})
