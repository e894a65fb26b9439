/**
 * Approval of risky commands by the user, not the model (SPEC §3.8, guarded preset): a
 * medium or high command without the host's `onApproval` gets a one-time phrase, sent to
 * the host in `data.grantPhrase` and never in the text the model reads. The user says it;
 * the call is repeated with `grant_phrase`; the phrase approves that exact command once.
 * When the host notes the user's messages (`session.noteUserMessage`), the phrase must
 * also appear in one written after it was issued, as for the consent gate.
 */
import { newNonce, normalize } from './consent.js'

interface Pending {
  nonce: string
  phrase: string
  issuedAt: number
}

/** At most this many commands wait for approval in a session; the oldest is voided first. */
const MAX_PENDING = 32

export class ApprovalGrants {
  /** By exact command text. */
  private readonly pending = new Map<string, Pending>()

  /** A fresh request for `command`; it voids any earlier one for the same command. */
  issue(command: string, messageCount: number): { nonce: string; phrase: string } {
    const nonce = newNonce()
    // The phrase carries its own random part: knowing the nonce does not give it.
    const phrase = `approve command ${newNonce().slice(0, 9)}`
    this.pending.delete(command)
    this.pending.set(command, { nonce, phrase, issuedAt: messageCount })
    if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string)
    return { nonce, phrase }
  }

  /**
   * Spends the phrase for `command`: true when it matches the request issued for that
   * exact command and the user said it. Any attempt, right or wrong, ends the request.
   */
  redeem(command: string, phrase: string, userSaid: (phrase: string, after: number) => boolean): boolean {
    const waiting = this.pending.get(command)
    if (!waiting) return false
    this.pending.delete(command)
    const said = normalize(phrase)
    return said === normalize(waiting.phrase) && userSaid(said, waiting.issuedAt)
  }
}
