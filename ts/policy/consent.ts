/**
 * The consent gate (SPEC §5.3, seed 003): one registry per session, shared by every
 * tool that replaces existing files. The unit of a grant is the workspace's top-level
 * entry (outside the workspace, the file's folder). A grant comes from the host's own
 * UI (`onPermissionRequest`) or from a one-time phrase the user says in the conversation.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'

import { clip, clipMiddle, FsgateError, PermissionRequiredError } from '../errors.js'

export interface PermissionRequest {
  /** The session asking. */
  sessionId: string
  /** The tool name the model called. */
  tool: string
  /** The file to be replaced, as the model named it. */
  path: string
  /** Its real path. */
  realPath: string
  /** What a grant covers: a top-level entry of the workspace, or a folder outside it. */
  unit: string
}

export type PermissionHandler = (request: PermissionRequest) => Promise<boolean> | boolean

interface Pending {
  nonce: string
  phrase: string
  /** The count of user messages noted when the phrase was issued. */
  issuedAt: number
}

/** How many user messages are kept for phrase checks. */
const KEPT_MESSAGES = 64

export class ConsentGate {
  private readonly granted = new Set<string>()
  private readonly pending = new Map<string, Pending>()
  /** Host UI questions in flight, so that concurrent changes of one unit ask once. */
  private readonly asking = new Map<string, Promise<boolean>>()
  /** Null until the host notes a user message; then only phrases the user wrote grant. */
  private messages: Array<{ seq: number; lines: string[] }> | null = null
  private seq = 0

  /** The unit a real path belongs to, and how the model is told about it. */
  static unitOf(real: string, workspace: string, inside: boolean): { unit: string; label: string } {
    const rel = path.relative(workspace, real)
    if (inside && rel && !rel.startsWith('..') && !path.isAbsolute(rel)) {
      const parts = rel.split(path.sep)
      const top = parts[0]
      return parts.length > 1 ? { unit: path.join(workspace, top), label: `${top}/` } : { unit: real, label: top }
    }
    const dir = path.dirname(real)
    return { unit: dir, label: `${dir}${path.sep}` }
  }

  isGranted(unit: string): boolean {
    return this.granted.has(unit)
  }

  /** Records what the user wrote, so that only phrases the user really said grant. */
  noteUserMessage(text: string): void {
    if (typeof text !== 'string') throw new TypeError('fsgate: noteUserMessage takes the text of a user message')
    this.messages ??= []
    // A phrase counts as the whole message or a line of its own, never buried in pasted
    // text (a file, a log, a command's output can carry a phrase the model put there).
    this.messages.push({ seq: ++this.seq, lines: text.split(/\r\n|\r|\n/).map(normalize) })
    if (this.messages.length > KEPT_MESSAGES) this.messages.shift()
  }

  /**
   * Lets the change through when its unit is granted (or gets granted now); otherwise
   * throws PERMISSION_REQUIRED with a fresh one-time phrase, or PERMISSION_DENIED when
   * the host's UI said no.
   */
  async check(request: PermissionRequest, label: string, grantPhrase: string | undefined, handler?: PermissionHandler): Promise<void> {
    const { unit } = request
    if (this.granted.has(unit)) return
    if (handler) {
      let yes: boolean
      try {
        let question = this.asking.get(unit)
        if (!question) {
          question = Promise.resolve(handler(request)).then((answer) => answer === true)
          this.asking.set(unit, question)
          question.then(
            () => this.asking.delete(unit),
            () => this.asking.delete(unit),
          )
        }
        yes = await question
      } catch (err) {
        throw new FsgateError('PERMISSION_DENIED', `Asking the user about ${clipMiddle(label, 40)} failed (${clip(err instanceof Error ? err.message : String(err), 80)}), so nothing was changed. Tell the user, or retry later.`, {
          data: { unit: label },
        })
      }
      if (!yes) {
        throw new FsgateError('PERMISSION_DENIED', `The user declined changes to existing files in ${clipMiddle(label, 40)}. Nothing was changed; do not retry this change unless the user asks for it.`, {
          data: { unit: label },
        })
      }
      this.granted.add(unit)
      return
    }
    const waiting = this.pending.get(unit)
    let refused = false
    if (grantPhrase !== undefined) {
      const said = normalize(grantPhrase)
      if (waiting && said === normalize(waiting.phrase) && this.userSaid(said, waiting.issuedAt)) {
        this.pending.delete(unit)
        this.granted.add(unit)
        return
      }
      // A wrong, reused or self-made phrase voids the request it tried to answer.
      refused = true
    }
    const next = this.issue(unit, label)
    const why = refused ? 'That grant_phrase was refused; its request is void.' : `Editing existing files in ${clipMiddle(label, 28)} needs the user's OK.`
    const ask = `Ask the user; if they agree they reply: ${next.phrase}. Then repeat the call with it as grant_phrase.`
    throw new PermissionRequiredError('PERMISSION_REQUIRED', `${why} ${ask}`, {
      nonce: next.nonce,
      data: { unit: label, grantPhrase: next.phrase, nonce: next.nonce, refused },
    })
  }

  private issue(unit: string, label: string): Pending {
    const nonce = newNonce()
    const pending = { nonce, phrase: `allow edits in ${phraseLabel(label)} ${nonce}`, issuedAt: this.seq }
    // One open request per unit: a new one voids the one before.
    this.pending.set(unit, pending)
    return pending
  }

  /** How many user messages have been noted so far: a phrase issued now must be written after it. */
  get messageCount(): number {
    return this.seq
  }

  /**
   * Whether the user wrote `phrase`, as a message or a line of one, after message number
   * `after` (always true when no messages are noted).
   */
  userSaid(phrase: string, after: number): boolean {
    if (this.messages === null) return true
    return this.messages.some((m) => m.seq > after && m.lines.includes(phrase))
  }
}

/**
 * A unit's name as a grant phrase says it: the label, or for a long one (a folder outside
 * the workspace) its last part, so that the phrase stays short enough to say and to fit
 * in the error that asks for it.
 */
function phraseLabel(label: string): string {
  if (label.length <= 24) return label
  const last = path.basename(label.replace(/[/\\]+$/, ''))
  return `${[...last].slice(0, 24).join('')}${label.endsWith(path.sep) ? path.sep : ''}`
}

/** Unambiguous lowercase letters and digits (Crockford's base32): easy to read aloud and retype. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

/** 80 random bits as 16 characters in four groups, e.g. `7k2m-9xq4-d1fh-3zpw`. */
export function newNonce(): string {
  const bytes = randomBytes(16)
  let out = ''
  for (let i = 0; i < 16; i++) {
    if (i > 0 && i % 4 === 0) out += '-'
    out += ALPHABET[bytes[i] & 31]
  }
  return out
}

/** Case, spacing and surrounding quotes do not matter when a phrase is compared. */
export function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\s\u00a0]+/g, ' ')
    .replace(/^[\s"'“”‘’`]+|[\s"'“”‘’`.!]+$/g, '')
}
