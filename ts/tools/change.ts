/**
 * What Write and Edit share, in the order a change passes through it (SPEC §3.2, §5):
 * (after autonomy, at dispatch) where the write lands (confinement, protected paths, working copies) →
 * the read-before-write contract → the consent gate → under the path's lock, the native
 * call that checks the version one last time and writes atomically → the record, the
 * history and the facts of the result.
 */
import { AbortedError, clip, clipMiddle, FsgateError, InvalidInputError, NotReadError } from '../errors.js'
import { callNative, completer, type NativeChecks, type NativeTarget, type NativeWriteResult } from '../native.js'
import { ConsentGate } from '../policy/consent.js'
import { displayPath, isWorkingCopy, originalOf, resolvePath, workingCopyPath } from '../policy/paths.js'
import { protectedReason } from '../policy/protected.js'
import type { CallEffect, ToolContext } from '../tool.js'
import { pathField, readToolName } from './common.js'

/** Where a change lands, resolved once per call. */
export interface ChangeTarget {
  /** The path as the model gave it. */
  given: string
  /** The real path the model named. */
  real: string
  /** The real path written: `real`, or its working copy. */
  dest: string
  /** The real path whose content an edit starts from. */
  source: string
  /** Whether `dest` exists now (a write replaces it). */
  exists: boolean
  /** Whether `source` exists now. */
  sourceExists: boolean
  /** Whether the real path is inside the workspace or allowedPaths. */
  inside: boolean
  /** Whether the write was redirected to a working copy (SPEC §5.2). */
  redirected: boolean
  /** How `dest` is shown to the model. */
  shown: string
}

/** What Write and Edit do, for the checks at dispatch: they change files. */
export const CHANGES_FILES: CallEffect = { sideEffect: true, write: true }

/** Resolves where a change to `given` lands, and refuses protected paths. */
export async function planChange(ctx: ToolContext, given: string, field: string): Promise<ChangeTarget> {
  const abs = resolvePath(ctx.workspace, given, field)
  const outside = ctx.preset.outsideWorkspace === 'working-copy'
  const t = await target(ctx, abs, outside, given)
  if (/[/\\]$/.test(given)) {
    throw new InvalidInputError('INVALID_INPUT', `${field} ends with a path separator, so it names a folder. Give the path of a file.`, { data: { field } })
  }
  refuseProtected(ctx, t.realPath, given, t.inside)
  const plan: ChangeTarget = {
    given,
    real: t.realPath,
    dest: t.realPath,
    source: t.realPath,
    exists: t.exists,
    sourceExists: t.exists,
    inside: t.inside,
    redirected: false,
    shown: displayPath(ctx.workspace, t.realPath),
  }
  if (!t.inside && t.exists && !(await isOwnWorkingCopy(ctx, t.realPath, given))) {
    // Outside the workspace an existing file is never replaced: the change goes to a
    // working copy beside it, and later changes continue from that copy.
    const copyPath = workingCopyPath(t.realPath)
    const copy = await target(ctx, copyPath, true, given)
    if (copy.realPath !== copyPath) {
      // A link in the copy's place would turn "never replace an original" into "replace anything".
      throw new FsgateError('PROTECTED_PATH', `${given} cannot be changed: its working copy ${copyPath} is a symlink. Remove the link or choose another path.`, {
        data: { path: given, realPath: copyPath },
      })
    }
    refuseProtected(ctx, copy.realPath, given, false)
    plan.dest = copy.realPath
    plan.exists = copy.exists
    plan.source = copy.exists ? copy.realPath : t.realPath
    plan.redirected = true
    plan.shown = copy.realPath
  }
  return plan
}

/**
 * Whether an outside file is a working copy that may be changed in place: one this
 * toolkit made, or one named so that sits beside its original. A user's own
 * `notes.edited.md` with no `notes.md` beside it is an original like any other.
 */
async function isOwnWorkingCopy(ctx: ToolContext, real: string, given: string): Promise<boolean> {
  if (!isWorkingCopy(real)) return false
  if (ctx.workingCopies.has(real)) return true
  // An "original" that is a folder or cannot be resolved is no original.
  return target(ctx, originalOf(real), true, given).then(
    (t) => t.exists,
    () => false,
  )
}

/** The read-before-write contract's first check (SPEC §3.2 step 2), when the preset has it. */
export function requireRead(ctx: ToolContext, plan: ChangeTarget): void {
  // Outside the roots nothing can be read, and nothing is replaced but working copies.
  if (!ctx.preset.readBeforeWrite || !plan.sourceExists || !plan.inside) return
  const record = ctx.ledger.get(plan.source)
  const readTool = readToolName(ctx)
  if (!record) {
    throw new NotReadError('NOT_READ', `${clipMiddle(plan.given, 60)} has not been read in this session. Read it first with ${readTool}, then retry ${ctx.calledAs}.`, {
      data: { path: plan.given },
    })
  }
  if (!ctx.ledger.isComplete(record)) {
    const seen = record.coverage.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ')
    throw new NotReadError(
      'PARTIAL_READ',
      `Only lines ${clip(seen, 40)} of ${clipMiddle(plan.given, 60)}'s ${record.totalLines} have been read. Read the rest of the file with ${readTool} (offset and limit), then retry ${ctx.calledAs}.`,
      { data: { path: plan.given, coverage: record.coverage, totalLines: record.totalLines } },
    )
  }
}

/** The consent gate (SPEC §5.3) for replacing an existing file, when the preset has it. */
export async function requireConsent(ctx: ToolContext, plan: ChangeTarget, grantPhrase: string | undefined): Promise<void> {
  if (!ctx.preset.consentGate || !plan.exists) return
  const { unit, label } = ConsentGate.unitOf(plan.dest, ctx.workspace, plan.inside)
  await ctx.consent.check(
    { sessionId: ctx.sessionId, tool: ctx.calledAs, path: plan.given, realPath: plan.dest, unit },
    label,
    grantPhrase,
    ctx.onPermissionRequest,
  )
}

/**
 * Whether a change of `plan` would stop at the consent gate (SPEC §5.3). Such a change is
 * first tried as a dry run, so that the user is asked only about a change that would
 * succeed and the model learns of a wrong match, a stale read or an encoding at once;
 * after the grant the change runs for real, with every check made again.
 */
export function consentPending(ctx: ToolContext, plan: ChangeTarget): boolean {
  if (!ctx.preset.consentGate || !plan.exists) return false
  return !ctx.consent.isGranted(ConsentGate.unitOf(plan.dest, ctx.workspace, plan.inside).unit)
}

/** `checks` for a dry run: every check, nothing written (see `consentPending`). */
export function dryRun(checks: NativeChecks): NativeChecks {
  return { ...checks, dryRun: true }
}

/**
 * Runs the native write under the path's lock, with the checks it must make at the last
 * moment. The version it must find is taken from the read record inside the lock, so a
 * session's own queued changes follow each other without a re-read, and anyone else's
 * change in between is STALE. `checked` says which file the version is of: the file
 * written (Write), or the file whose text is changed (Edit, which may write a new
 * working copy of it).
 */
export async function underLock<T>(
  ctx: ToolContext,
  plan: ChangeTarget,
  checked: 'dest' | 'source',
  write: (checks: NativeChecks) => Promise<T>,
): Promise<T> {
  return ctx.locks.run(plan.dest, async () => {
    if (ctx.signal?.aborted) throw new AbortedError('ABORTED', 'The call was cancelled by its AbortSignal; nothing was changed.')
    // Again under the lock: the record may have changed while the call waited (a
    // forgetReads, a partial read of a newer version), and it must never fail open.
    requireRead(ctx, plan)
    return write({ allowOutside: !plan.inside, keepPrevious: true, maxBytes: ctx.limits.editMaxBytes, ...expectation(ctx, plan, checked) })
  })
}

function expectation(ctx: ToolContext, plan: ChangeTarget, checked: 'dest' | 'source'): NativeChecks {
  // A new working copy: nothing may be in its place.
  if (!plan.sourceExists || (checked === 'dest' && plan.dest !== plan.source)) return { expectAbsent: true }
  const record = ctx.ledger.get(plan.source)
  if (ctx.preset.readBeforeWrite && record) return { expectSize: record.size, expectHash: record.contentHash }
  return {}
}

/** Records a finished change: the new version in the read record, the old one in the history. */
export function recordChange(ctx: ToolContext, plan: ChangeTarget, w: NativeWriteResult): void {
  if (plan.redirected) ctx.workingCopies.add(w.realPath)
  ctx.ledger.noteWritten({ realPath: w.realPath, mtimeMs: w.mtimeMs, size: w.size, contentHash: w.hash, totalLines: w.totalLines })
  ctx.history.add({
    realPath: w.realPath,
    path: plan.shown,
    tool: ctx.calledAs,
    action: w.created ? 'created' : 'replaced',
    at: Date.now(),
    previous: w.previous ?? null,
    after: { size: w.size, hash: w.hash },
  })
}

/** The facts every change result carries. */
export function changeData(plan: ChangeTarget, w: NativeWriteResult): Record<string, unknown> {
  return {
    path: plan.shown,
    realPath: w.realPath,
    requestedPath: plan.given,
    created: w.created,
    workingCopy: plan.redirected,
    size: w.size,
    totalLines: w.totalLines,
    encoding: w.encoding,
    mtimeMs: w.mtimeMs,
    contentHash: w.hash,
  }
}

/** A sentence telling the model its change went to a working copy, or ''. */
export function redirectNote(plan: ChangeTarget): string {
  return plan.redirected
    ? ` ${plan.given} is outside the workspace and is never replaced, so the change was written to the working copy ${plan.dest}; the original is unchanged.`
    : ''
}

async function target(ctx: ToolContext, abs: string, allowOutside: boolean, given: string) {
  return callNative<NativeTarget>(
    (id) => ctx.fs.target(completer, id, abs, allowOutside),
    ctx.signal,
  ).catch((err) => {
    throw explainChange(err, given, ctx)
  })
}

function refuseProtected(ctx: ToolContext, real: string, given: string, inside: boolean): void {
  const why = protectedReason(real, { inside, home: ctx.home })
  if (why) {
    throw new FsgateError('PROTECTED_PATH', `${clipMiddle(given, 60)} is protected and is never written: ${why}. Choose another path.`, {
      data: { path: given, realPath: real },
    })
  }
}

/** Turns a native error of a change into a message that tells the model what to do next. */
export function explainChange(err: unknown, path: string, ctx: ToolContext): unknown {
  if (!(err instanceof FsgateError)) return err
  const say = (message: string, data: Record<string, unknown> = {}) =>
    new (err.constructor as typeof FsgateError)(err.code, message, { data: { path, ...data } })
  // What the messages echo of the path (data keeps it whole).
  const given = clipMiddle(path, 60)
  const readTool = readToolName(ctx)
  switch (err.code) {
    case 'STALE':
      return say(`${given} has been modified since you read it (by another session or program), so it was not changed. Read it again with ${readTool}, then retry.`)
    case 'PATH_OUTSIDE_WORKSPACE':
      return say(`${given} is outside the workspace (${ctx.workspace}) and the allowed paths, so it cannot be written. Use a path inside the workspace.`)
    case 'IS_DIRECTORY':
      return say(`${given} is a directory. Give the path of a file.`)
    case 'BLOCKED_DEVICE':
      return say(`${given} is a device, FIFO, socket or other special file, which is never written. Write a regular file.`)
    case 'PERMISSION_DENIED':
      return say(`Permission denied writing ${given}: this process may not change it. Nothing was changed.`)
    case 'NO_SPACE':
      return say(`The disk holding ${given} is full, so it was not changed (the file is as it was). Free some space or ask the user, then retry.`)
    case 'IO_ERROR':
      return say(`${given} could not be changed (${clip(err.message, 80)}). Nothing was changed; retry, or tell the user.`)
    case 'FILE_TOO_LARGE':
      return say(`${given} ${clip(err.message, 80)}, so it was not changed. Make the change with a shell tool or ask the user; a file this large is too big to rewrite through this tool.`)
    case 'ENCODING':
      return say(`${given} ${clip(err.message, 80)}, so it cannot be edited without corrupting it. Nothing was changed; write it anew with the write tool only if replacing it whole is acceptable.`)
    case 'INVALID_INPUT': {
      const field = pathField(ctx)
      return new InvalidInputError('INVALID_INPUT', `${field} ${given} ${clip(err.message, 80)}. Give a valid file path.`, { data: { field, path } })
    }
    default:
      return err
  }
}
