/**
 * The checks at dispatch (SPEC §5.4): autonomy across every tool and preset, the hourly
 * action budget, OTP gating (TOTP against RFC 6238's own test vectors) and the
 * emergency stop.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { ActionBudget } from '../ts/policy/budget.js'
import { base32Decode, hotp, OtpGate, totp } from '../ts/policy/otp.js'
import { fails, ok, put, removeTempDirs, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

describe('TOTP (RFC 6238)', () => {
  // Appendix B: the seeds are ASCII "1234567890" repeated to the hash's length; 8 digits.
  const seeds = {
    sha1: Buffer.from('12345678901234567890'),
    sha256: Buffer.from('12345678901234567890123456789012'),
    sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
  }
  const vectors: Array<[number, string, string, string]> = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ]
  it.each(vectors)('at %i s', (t, sha1, sha256, sha512) => {
    expect(totp(seeds.sha1, t * 1000, { digits: 8, algorithm: 'sha1' })).toBe(sha1)
    expect(totp(seeds.sha256, t * 1000, { digits: 8, algorithm: 'sha256' })).toBe(sha256)
    expect(totp(seeds.sha512, t * 1000, { digits: 8, algorithm: 'sha512' })).toBe(sha512)
  })

  it('HOTP (RFC 4226 appendix D)', () => {
    const want = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489']
    expect(want.map((_, i) => hotp(seeds.sha1, i))).toEqual(want)
  })

  it('decodes base32 secrets as authenticator apps show them', () => {
    expect(Buffer.from(base32Decode('GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ')).toString()).toBe('12345678901234567890')
    expect(Buffer.from(base32Decode('gezdgnbvgy3tqojqgezdgnbvgy3tqojq====')).toString()).toBe('12345678901234567890')
    expect(() => base32Decode('GEZ1')).toThrow(/base32/)
  })

  it('accepts a code once, within the drift window', () => {
    const gate = new OtpGate({ secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', actions: ['shell'] })
    const now = 1_700_000_000_000
    const code = totp(seeds.sha1, now)
    expect(gate.accept(code, now)).toBe(true)
    expect(gate.accept(code, now)).toBe(false)
    expect(gate.accept(totp(seeds.sha1, now - 30_000), now)).toBe(true)
    expect(gate.accept(totp(seeds.sha1, now - 90_000), now)).toBe(false)
    expect(gate.accept('12345a', now)).toBe(false)
    expect(gate.accept('', now)).toBe(false)
  })
})

const SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'
const code = (at = Date.now()) => totp(base32Decode(SECRET), at)

describe('OTP gating at dispatch', () => {
  it('needs a current code for the listed tools, once per code', async () => {
    const { dir, session } = workspace({ preset: 'claude-code', policy: { otp: { secret: SECRET, actions: ['file_write'] } } })
    const r = await session.call('Write', { file_path: 'a.txt', content: 'x' })
    expect(fails(r, 'OTP_REQUIRED')).toMatch(/authenticator app/)
    expect(fs.existsSync(path.join(dir, 'a.txt'))).toBe(false)
    fails(await session.call('Write', { file_path: 'a.txt', content: 'x', otp: '000000' === code() ? '111111' : '000000' }), 'OTP_REQUIRED')
    const c = code()
    ok(await session.call('Write', { file_path: 'a.txt', content: 'x', otp: c }))
    // Spent: the same code does not open a second call.
    fails(await session.call('Write', { file_path: 'b.txt', content: 'x', otp: c }), 'OTP_REQUIRED')
    // Reads are not listed.
    ok(await session.call('Read', { file_path: 'a.txt' }))
  })

  it("gates shell by risk: 'shell:high' lets low commands through", async () => {
    const { session } = workspace({ preset: 'claude-code', policy: { otp: { secret: SECRET, actions: ['shell:high'] } } })
    ok(await session.call('Bash', { command: 'echo hi' }))
    fails(await session.call('Bash', { command: 'rm -f nothing' }), 'OTP_REQUIRED')
    ok(await session.call('Bash', { command: 'rm -f nothing', otp: code() }))
  })

  it('keeps a code that a refusal after it did not use (approval), and spends it on the call that runs', async () => {
    const { dir, session } = workspace({ policy: { sandbox: 'none', otp: { secret: SECRET, actions: ['shell:medium'] } } })
    const c = code()
    const first = await session.call('shell', { command: 'touch made', otp: c })
    fails(first, 'APPROVAL_REQUIRED')
    ok(await session.call('shell', { command: 'touch made', otp: c, grant_phrase: first.data?.grantPhrase }))
    expect(fs.existsSync(path.join(dir, 'made'))).toBe(true)
    const again = await session.call('shell', { command: 'touch made2' })
    fails(await session.call('shell', { command: 'touch made2', otp: c, grant_phrase: again.data?.grantPhrase }), 'OTP_REQUIRED')
  })

  it('stops checking codes after 10 wrong ones in 10 minutes', () => {
    const gate = new OtpGate({ secret: SECRET, actions: ['shell'] })
    const now = 1_700_000_000_000
    const right = totp(base32Decode(SECRET), now)
    const wrong = right === '000000' ? '111111' : '000000'
    for (let i = 0; i < 10; i++) expect(gate.check(wrong, now + i)).toEqual({ wrong: true })
    const locked = gate.check(right, now + 20)
    expect(locked).toMatchObject({ wrong: true })
    expect((locked as { retryAfterMs: number }).retryAfterMs).toBe(600_000 - 20)
    const later = now + 600_001
    expect(gate.accept(totp(base32Decode(SECRET), later), later)).toBe(true)
  })

  it('shows the otp field on the gated tools only', () => {
    const { toolkit } = workspace({ policy: { otp: { secret: SECRET, actions: ['file_write', 'git:write'] } } })
    const defs = toolkit.definitions({ format: 'anthropic' }) as unknown as Array<{ name: string; input_schema: { properties: Record<string, unknown> } }>
    const gated = defs.filter((d) => 'otp' in d.input_schema.properties).map((d) => d.name)
    expect(gated.sort()).toEqual(['file_write', 'git_operations'])
    const openai = toolkit.definitions({ format: 'openai', dialect: 'all' }) as unknown as Array<{ function: { name: string; parameters: { properties: Record<string, unknown> } } }>
    expect(openai.filter((d) => 'otp' in d.function.parameters.properties).map((d) => d.function.name).sort()).toEqual(['Write', 'file_write', 'git_operations', 'write_file'])
    expect(workspace().toolkit.definitions().some((d) => JSON.stringify(d).includes('"otp"'))).toBe(false)
  })

  it('refuses a bad configuration', () => {
    expect(() => workspace({ policy: { otp: { secret: SECRET, actions: ['nope'] } } })).toThrow(/neither a tool name/)
    expect(() => workspace({ policy: { otp: { secret: 'GEZA', actions: ['shell'] } } })).toThrow(/80 bits/)
    expect(() => workspace({ policy: { otp: { secret: '!!', actions: ['shell'] } } })).toThrow(/base32/)
  })
})

describe('the hourly action budget', () => {
  it('is a sliding window', () => {
    const b = new ActionBudget(2, 1000)
    expect(b.take(0)).toBe(0)
    expect(b.take(400)).toBe(0)
    expect(b.take(500)).toBe(500)
    expect(b.take(999)).toBe(1)
    expect(b.take(1000)).toBe(0)
    expect(b.take(1001)).toBe(399)
    expect(b.remaining(1401)).toBe(1)
  })

  it('counts side-effecting calls per session and reports retryAfterMs', async () => {
    const { toolkit, session } = workspace({ preset: 'claude-code', policy: { actionsPerHour: 3 } })
    for (let i = 0; i < 3; i++) ok(await session.call('Write', { file_path: `f${i}.txt`, content: 'x' }))
    // Reads do not count.
    for (let i = 0; i < 5; i++) ok(await session.call('Read', { file_path: 'f0.txt' }))
    const r = await session.call('Bash', { command: 'echo hi' })
    expect(fails(r, 'RATE_LIMITED')).toMatch(/hourly budget of 3/)
    expect(r.error?.retryAfterMs).toBeGreaterThan(3_590_000)
    expect(r.error?.retryAfterMs).toBeLessThanOrEqual(3_600_000)
    // Another session has its own budget.
    ok(await toolkit.createSession().call('Bash', { command: 'echo hi' }))
  })

  it('revka counts every call, 20 an hour', async () => {
    const { dir, session } = workspace({ preset: 'revka' })
    put(dir, 'a.txt', 'a\n')
    for (let i = 0; i < 20; i++) ok(await session.call('file_read', { path: 'a.txt' }))
    fails(await session.call('glob_search', { pattern: '*' }), 'RATE_LIMITED')
  })

  it('does not charge calls refused before they run', async () => {
    const { session } = workspace({ preset: 'claude-code', policy: { actionsPerHour: 1, autonomy: 'read_only' } })
    fails(await session.call('Write', { file_path: 'a.txt', content: 'x' }), 'AUTONOMY')
    ok(await session.call('Bash', { command: 'echo still within budget' }))
    fails(await session.call('Bash', { command: 'echo over' }), 'RATE_LIMITED')
  })

  it('checks the option', () => {
    expect(() => workspace({ policy: { actionsPerHour: 0 } })).toThrow(/positive integer or null/)
    expect(() => workspace({ preset: 'revka', policy: { actionsPerHour: null } })).not.toThrow()
  })
})

describe('autonomy across tools and presets', () => {
  for (const preset of ['guarded', 'claude-code', 'revka', 'consent'] as const) {
    it(`${preset}: read_only refuses every change and allows every look`, async () => {
      const { dir, toolkit, session } = workspace({ preset, policy: { autonomy: 'read_only' } })
      put(dir, 'a.txt', 'hello\n')
      const names = new Set(toolkit.toolNames())
      const read = names.has('Read') ? 'Read' : 'file_read'
      const pathKey = read === 'Read' ? 'file_path' : 'path'
      if (names.has(read)) ok(await session.call(read, { [pathKey]: 'a.txt' }))
      const write = ['Write', 'file_write', 'write_file'].find((n) => names.has(n))!
      const edit = ['Edit', 'file_edit', 'edit'].find((n) => names.has(n))!
      const wKey = write === 'Write' ? 'file_path' : 'path'
      expect(fails(await session.call(write, { [wKey]: 'b.txt', content: 'x' }), 'AUTONOMY')).toMatch(/read-only/)
      fails(await session.call(edit, { [wKey]: 'a.txt', old_string: 'hello', new_string: 'bye' }), 'AUTONOMY')
      expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('hello\n')
      expect(fs.existsSync(path.join(dir, 'b.txt'))).toBe(false)
      const shell = ['Bash', 'shell'].find((n) => names.has(n))
      if (shell) {
        fails(await session.call(shell, { command: 'touch c.txt' }), 'AUTONOMY')
        expect(fs.existsSync(path.join(dir, 'c.txt'))).toBe(false)
      }
    })
  }
})

describe('emergency stop', () => {
  it('fails every later call of every session with EMERGENCY_STOP until resume', async () => {
    const { dir, toolkit, session } = workspace()
    put(dir, 'a.txt', 'a\n')
    const other = toolkit.createSession()
    toolkit.emergencyStop()
    expect(toolkit.stopped).toBe(true)
    for (const s of [session, other]) {
      fails(await s.call('file_read', { path: 'a.txt' }), 'EMERGENCY_STOP')
      fails(await s.call('glob_search', { pattern: '*' }), 'EMERGENCY_STOP')
      fails(await s.call('file_write', { path: 'b.txt', content: 'x' }), 'EMERGENCY_STOP')
    }
    await expect(session.read({ path: 'a.txt' })).rejects.toMatchObject({ code: 'EMERGENCY_STOP' })
    await expect(session.undo('a.txt')).rejects.toMatchObject({ code: 'EMERGENCY_STOP' })
    expect(fs.existsSync(path.join(dir, 'b.txt'))).toBe(false)
    toolkit.resume()
    expect(textOf(await session.call('file_read', { path: 'a.txt' }))).toMatch(/a/)
  })

  it('aborts calls in flight', async () => {
    const { dir, toolkit, session } = workspace({ preset: 'claude-code' })
    for (let i = 0; i < 2000; i++) put(dir, `d${i % 20}/f${i}.txt`, 'needle '.repeat(200))
    const pending = session.call('Grep', { pattern: 'needle', output_mode: 'count' })
    toolkit.emergencyStop()
    fails(await pending, 'EMERGENCY_STOP')
    toolkit.resume()
    ok(await session.call('Grep', { pattern: 'needle', output_mode: 'count' }))
  })
})
