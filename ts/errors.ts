/**
 * Errors: one stable `code` per failure, the numeric `errorCode` of the seeds where
 * one exists, and a class per code for programs that catch by type.
 */

/** Every code a tool result can carry. */
export const ERROR_CODES = [
  'NO_CHANGE',
  'NOT_READ',
  'PARTIAL_READ',
  'STALE',
  'STRING_NOT_FOUND',
  'AMBIGUOUS_MATCH',
  'INVALID_INPUT',
  'INVALID_PATTERN',
  'NOT_FOUND',
  'IS_DIRECTORY',
  'FILE_EXISTS',
  'FILE_TOO_LARGE',
  'ENCODING',
  'TOKEN_LIMIT',
  'BLOCKED_DEVICE',
  'PATH_OUTSIDE_WORKSPACE',
  'PROTECTED_PATH',
  'PERMISSION_REQUIRED',
  'PERMISSION_DENIED',
  'AUTONOMY',
  'APPROVAL_REQUIRED',
  'COMMAND_DENIED',
  'OTP_REQUIRED',
  'RATE_LIMITED',
  'TIMEOUT',
  'BACKEND_UNAVAILABLE',
  'EMERGENCY_STOP',
  'INVALID_PDF',
  'INVALID_IMAGE',
  'INVALID_NOTEBOOK',
  'ABORTED',
  'NO_SPACE',
  'IO_ERROR',
  'INTERNAL',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

/** The seeds' numeric error codes (Claude Code's `errorCode`). */
const NUMERIC: Partial<Record<ErrorCode, number>> = {
  NO_CHANGE: 1,
  NOT_READ: 2,
  PARTIAL_READ: 2,
  STALE: 3,
  STRING_NOT_FOUND: 8,
  AMBIGUOUS_MATCH: 9,
}

export interface ErrorDetails {
  /** Structured facts for the host (also sent as the result's `data`). */
  data?: Record<string, unknown>
  nonce?: string
  retryAfterMs?: number
}

/** The error every typed method throws; `message` is written for the model. */
export class FsgateError extends Error {
  readonly code: ErrorCode
  readonly errorCode?: number
  readonly data?: Record<string, unknown>
  readonly nonce?: string
  readonly retryAfterMs?: number

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message)
    this.name = new.target.name
    this.code = code
    this.errorCode = NUMERIC[code]
    this.data = details.data
    this.nonce = details.nonce
    this.retryAfterMs = details.retryAfterMs
  }
}

/** TOKEN_LIMIT: the page is over the read token limit (named as in seed 000). */
export class MaxFileReadTokenExceededError extends FsgateError {}
/** INVALID_INPUT: the input broke the tool's schema or a rule on a field. */
export class InvalidInputError extends FsgateError {}
/** NOT_FOUND: the path does not exist. */
export class NotFoundError extends FsgateError {}
/** PATH_OUTSIDE_WORKSPACE: the real path leaves the workspace and allowedPaths. */
export class PathOutsideWorkspaceError extends FsgateError {}
/** BLOCKED_DEVICE: a device, FIFO, socket or other special file. */
export class BlockedDeviceError extends FsgateError {}
/** FILE_TOO_LARGE: over a size limit. */
export class FileTooLargeError extends FsgateError {}
/** ABORTED: the caller's AbortSignal fired. */
export class AbortedError extends FsgateError {}
/** NOT_READ or PARTIAL_READ: the file was not (fully) read in this session before a write. */
export class NotReadError extends FsgateError {}
/** STALE: the file changed since it was read. */
export class StaleFileError extends FsgateError {}
/** PERMISSION_REQUIRED: the consent gate needs the user's grant; `nonce` names the request. */
export class PermissionRequiredError extends FsgateError {}
/** STRING_NOT_FOUND, AMBIGUOUS_MATCH or NO_CHANGE: an edit that could not be applied as given. */
export class EditMatchError extends FsgateError {}

const CLASSES: Partial<Record<ErrorCode, new (code: ErrorCode, message: string, details?: ErrorDetails) => FsgateError>> = {
  TOKEN_LIMIT: MaxFileReadTokenExceededError,
  INVALID_INPUT: InvalidInputError,
  NOT_FOUND: NotFoundError,
  PATH_OUTSIDE_WORKSPACE: PathOutsideWorkspaceError,
  BLOCKED_DEVICE: BlockedDeviceError,
  FILE_TOO_LARGE: FileTooLargeError,
  ABORTED: AbortedError,
  NOT_READ: NotReadError,
  PARTIAL_READ: NotReadError,
  STALE: StaleFileError,
  PERMISSION_REQUIRED: PermissionRequiredError,
  STRING_NOT_FOUND: EditMatchError,
  AMBIGUOUS_MATCH: EditMatchError,
  NO_CHANGE: EditMatchError,
}

/** Creates the error of the class that belongs to `code`. */
export function fsgateError(code: ErrorCode, message: string, details?: ErrorDetails): FsgateError {
  const Class = CLASSES[code] ?? FsgateError
  return new Class(code, message, details)
}

/** Whether `code` is one this package defines. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)
}

/** The most bytes of UTF-8 a model-facing error may have, in every dialect and adapter. */
export const MAX_ERROR_BYTES = 300

/**
 * The most a tool's own message may have: the rest of MAX_ERROR_BYTES is room for what
 * the layers around it add (a preset's "[error] ", an adapter's "Error: ", the MCP
 * server's "[error code: …]" line).
 */
export const MAX_MESSAGE_BYTES = 256

/** What `fitMessage` puts where it cut a message (a test looks for it: no message should need it). */
export const CUT_MARK = ' [...] '

/**
 * `message` within `maxBytes`: as it is when it fits, else its start and its end (where
 * the next step is said) around CUT_MARK. The last guard of the size of every error;
 * messages are written to fit without it, by cutting what they echo (`clip`).
 */
export function fitMessage(message: string, maxBytes = MAX_MESSAGE_BYTES): string {
  if (Buffer.byteLength(message) <= maxBytes) return message
  const room = maxBytes - Buffer.byteLength(CUT_MARK)
  const tailBytes = Math.min(Math.floor(room / 2), 120)
  const tail = [...head([...message].reverse().join(''), tailBytes)].reverse().join('')
  return `${head(message, room - Buffer.byteLength(tail))}${CUT_MARK}${tail}`
}

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8 (never inside a character), with "…"
 * when cut: what a message may echo of a model's regex, glob or command.
 */
export function clip(text: string, maxBytes = 200): string {
  if (Buffer.byteLength(text) <= maxBytes) return text
  return `${head(text, maxBytes - 3)}…`
}

/**
 * Like `clip`, keeping the start and the end (where a parser's message says what is
 * wrong): `head … tail`.
 */
export function clipMiddle(text: string, maxBytes = 400): string {
  if (Buffer.byteLength(text) <= maxBytes) return text
  const half = Math.floor((maxBytes - 5) / 2)
  const tail = [...text].reverse().join('')
  return `${head(text, half)} … ${[...head(tail, half)].reverse().join('')}`
}

/** The longest start of `text` that fits in `maxBytes` bytes of UTF-8. */
function head(text: string, maxBytes: number): string {
  let bytes = 0
  let end = 0
  for (const ch of text) {
    const n = Buffer.byteLength(ch)
    if (bytes + n > maxBytes) break
    bytes += n
    end += ch.length
  }
  return text.slice(0, end)
}
