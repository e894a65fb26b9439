/**
 * OTP gating (SPEC §5.4, seed 002): actions the host lists need a current TOTP code
 * (RFC 6238, the code of the user's authenticator app) passed as `otp` in the call.
 * Revka configures this but never enforces it; here it is checked at dispatch.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export interface OtpOptions {
  /** The shared secret: base32 as authenticator apps show it, or raw bytes. */
  secret: string | Uint8Array
  /** What needs a code: tool names (any dialect), 'shell:high', 'shell:medium', 'git:write'. */
  actions: string[]
  /** Seconds per code. Default 30. */
  period?: number
  /** Digits per code. Default 6. */
  digits?: number
  /** HMAC hash. Default 'sha1', as authenticator apps use. */
  algorithm?: 'sha1' | 'sha256' | 'sha512'
  /** Codes this many periods early or late still count, for clock drift. Default 1. */
  window?: number
}

/** The code of RFC 6238 for `secret` at counter `counter` (RFC 4226's HOTP). */
export function hotp(secret: Uint8Array, counter: number, digits = 6, algorithm: OtpOptions['algorithm'] = 'sha1'): string {
  const msg = Buffer.alloc(8)
  msg.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac(algorithm ?? 'sha1', secret).update(msg).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const bin = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits
  return String(bin).padStart(digits, '0')
}

/** The TOTP code at `timeMs`. */
export function totp(secret: Uint8Array, timeMs: number, options: Pick<OtpOptions, 'period' | 'digits' | 'algorithm'> = {}): string {
  const counter = Math.floor(timeMs / 1000 / (options.period ?? 30))
  return hotp(secret, counter, options.digits, options.algorithm)
}

/** RFC 4648 base32, as authenticator apps show secrets: case, spaces and padding ignored. */
export function base32Decode(text: string): Uint8Array {
  const clean = text.toUpperCase().replace(/[\s-]+/g, '').replace(/=+$/, '')
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const ch of clean) {
    const v = alphabet.indexOf(ch)
    if (v < 0) throw new TypeError(`fsgate: policy.otp.secret is not base32 (bad character '${ch}')`)
    value = (value << 5) | v
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Uint8Array.from(out)
}

/** Wrong codes allowed in FAILURE_WINDOW_MS before the gate stops checking codes for a while. */
const MAX_FAILURES = 10
const FAILURE_WINDOW_MS = 10 * 60_000

/** A configured gate: which actions need a code, and the check of one. */
export class OtpGate {
  private readonly secret: Uint8Array
  private readonly actions: ReadonlySet<string>
  /** Codes already used, so that one code opens one call (RFC 6238 §5.2). */
  private readonly used = new Map<string, number>()
  /** Times of wrong codes: guessing is throttled (RFC 4226 §7.3). */
  private failures: number[] = []

  /** `names` maps a tool name the host may list to every name of that tool. */
  constructor(
    private readonly options: OtpOptions,
    names: (action: string) => readonly string[] = (a) => [a],
  ) {
    this.secret = typeof options.secret === 'string' ? base32Decode(options.secret) : Uint8Array.from(options.secret)
    if (this.secret.length < 10) throw new TypeError('fsgate: policy.otp.secret must hold at least 80 bits')
    this.actions = new Set(options.actions.flatMap(names))
  }

  /** The first of `names` the host listed, or null when none needs a code. */
  gated(names: readonly string[]): string | null {
    return names.find((n) => this.actions.has(n)) ?? null
  }

  /**
   * Checks `code` without spending it: a key to `spend` once the call is admitted, or
   * 'wrong', or 'throttled' (with the wait) after too many wrong codes.
   */
  check(code: string, nowMs = Date.now()): { key: string } | { wrong: true; retryAfterMs?: number } {
    this.failures = this.failures.filter((t) => t > nowMs - FAILURE_WINDOW_MS)
    if (this.failures.length >= MAX_FAILURES) return { wrong: true, retryAfterMs: this.failures[0] + FAILURE_WINDOW_MS - nowMs }
    const key = this.match(code, nowMs)
    if (key === null) {
      this.failures.push(nowMs)
      return { wrong: true }
    }
    return { key }
  }

  /** Spends a checked code, so it opens no other call. False when a concurrent call spent it first. */
  spend(key: string, nowMs = Date.now()): boolean {
    if (this.used.has(key)) return false
    const counter = Math.floor(nowMs / 1000 / (this.options.period ?? 30))
    this.used.set(key, Number(key.split(':')[0]))
    const window = this.options.window ?? 1
    for (const [k, at] of this.used) if (at < counter - window - 1) this.used.delete(k)
    return true
  }

  /** Checks and spends in one step. */
  accept(code: string, nowMs = Date.now()): boolean {
    const r = this.check(code, nowMs)
    return 'key' in r && this.spend(r.key, nowMs)
  }

  /** The `counter:code` key of a current, unused code, or null. */
  private match(code: string, nowMs: number): string | null {
    const digits = this.options.digits ?? 6
    if (typeof code !== 'string' || !/^\d+$/.test(code) || code.length > digits) return null
    // A code passed as a number loses its leading zeros.
    code = code.padStart(digits, '0')
    const period = this.options.period ?? 30
    const window = this.options.window ?? 1
    const counter = Math.floor(nowMs / 1000 / period)
    for (let d = -window; d <= window; d++) {
      const c = counter + d
      if (c < 0) continue
      const expected = Buffer.from(hotp(this.secret, c, digits, this.options.algorithm))
      if (timingSafeEqual(expected, Buffer.from(code)) && !this.used.has(`${c}:${code}`)) return `${c}:${code}`
    }
    return null
  }
}
