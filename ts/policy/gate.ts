/**
 * The checks every call passes at its one dispatch point (SPEC §5.4), in this order:
 * emergency stop → (schema) → autonomy → OTP → the tool's own admission → the action
 * budget. Decisions only; the state they read (the stop flag, the budget's window, the
 * spent codes) lives here too, so that a reader finds each rule by its name.
 */
import { setMaxListeners } from 'node:events'

import { clip, FsgateError } from '../errors.js'
import type { ActionBudget } from './budget.js'
import type { OtpGate } from './otp.js'
import type { Autonomy } from './presets.js'

/** What a call would do; see CallEffect in ts/tool.ts. */
export interface Effect {
  sideEffect: boolean
  write: boolean
  labels?: string[]
  readOnlyMessage?: string
}

/** The toolkit's emergency stop: every later call fails until `resume()`. */
export class StopSwitch {
  private controller = StopSwitch.controller()
  private reason: string | null = null

  /** Every call in flight listens to the stop signal: no listener limit (and no warning). */
  private static controller(): AbortController {
    const c = new AbortController()
    setMaxListeners(0, c.signal)
    return c
  }

  get stopped(): boolean {
    return this.reason !== null
  }

  /** Fires for calls running when the stop comes. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  stop(reason: string): void {
    if (this.reason !== null) return
    this.reason = reason
    this.controller.abort(new FsgateError('EMERGENCY_STOP', this.message()))
  }

  resume(): void {
    this.reason = null
    this.controller = StopSwitch.controller()
  }

  /** Throws EMERGENCY_STOP while stopped. */
  check(): void {
    if (this.reason !== null) throw new FsgateError('EMERGENCY_STOP', this.message())
  }

  private message(): string {
    const why = this.reason ? ` (${clip(this.reason, 80)})` : ''
    return `All tools are stopped by an emergency stop${why}. Do not retry; tell the user, who can resume the tools.`
  }
}

export interface GateContext {
  autonomy: Autonomy
  /** Null when there is no budget. */
  budget: ActionBudget | null
  /** Whether the budget counts every call (the revka preset) or only side-effecting ones. */
  countEveryCall: boolean
  /** Null when OTP gating is off. */
  otp: OtpGate | null
}

export interface CallFacts {
  /** The tool's canonical name. */
  tool: string
  /** The name the model called it by. */
  calledAs: string
  effect: Effect
  /** The `otp` the call carried, if any. */
  otp?: string
}

/**
 * Autonomy, then OTP: throws AUTONOMY or OTP_REQUIRED. A good code is only checked here;
 * the returned `spend` uses it up once the call is admitted, so a call refused later
 * (approval, the budget) does not cost the user a code.
 */
export function checkAutonomyAndOtp(gate: GateContext, call: CallFacts, now = Date.now()): { spend: () => void } {
  if (gate.autonomy === 'read_only' && call.effect.write) {
    throw new FsgateError(
      'AUTONOMY',
      call.effect.readOnlyMessage ??
        `This session is read-only (autonomy: read_only), so ${call.calledAs} cannot change anything. Tell the user what you would change instead.`,
      { data: { autonomy: gate.autonomy } },
    )
  }
  const otp = gate.otp
  const action = otp?.gated([call.tool, call.calledAs, ...(call.effect.labels ?? [])]) ?? null
  if (!otp || action === null) return { spend: () => {} }
  const ask = 'Ask the user for the current code from their authenticator app, then repeat the call with otp set to it.'
  if (call.otp === undefined) {
    throw new FsgateError('OTP_REQUIRED', `${call.calledAs} (${action}) needs a one-time code. ${ask}`, { data: { action, given: false } })
  }
  const checked = otp.check(call.otp, now)
  if ('wrong' in checked) {
    const wait = checked.retryAfterMs
    const why = wait ? `Too many wrong one-time codes were given; no code is checked for about ${Math.ceil(wait / 60_000)} minutes.` : `The one-time code for ${call.calledAs} (${action}) is wrong, expired or already used.`
    throw new FsgateError('OTP_REQUIRED', `${why} ${ask}`, { ...(wait ? { retryAfterMs: wait } : {}), data: { action, given: true } })
  }
  return {
    spend: () => {
      if (!otp.spend(checked.key, now)) {
        throw new FsgateError('OTP_REQUIRED', `That one-time code was just used by another call. ${ask}`, { data: { action, given: true } })
      }
    },
  }
}

/** Charges the budget: throws RATE_LIMITED with retryAfterMs when it is spent. */
export function chargeBudget(gate: GateContext, call: CallFacts, now = Date.now()): void {
  if (!gate.budget || !(gate.countEveryCall || call.effect.sideEffect)) return
  const wait = gate.budget.take(now)
  if (wait > 0) {
    const minutes = Math.max(1, Math.ceil(wait / 60_000))
    const what = gate.countEveryCall ? 'tool calls' : 'actions that change things'
    throw new FsgateError(
      'RATE_LIMITED',
      `The hourly budget of ${gate.budget.limit} ${what} is spent; ${call.calledAs} was not run. Try again in about ${minutes} minute${minutes === 1 ? '' : 's'}, or tell the user.`,
      { retryAfterMs: wait, data: { limit: gate.budget.limit, retryAfterMs: wait } },
    )
  }
}
