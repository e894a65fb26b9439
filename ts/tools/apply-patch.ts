/**
 * apply_patch (SPEC §8.2, the codex dialect): a V4A patch (Codex's format) that adds,
 * updates, moves and deletes files, applied all together or not at all.
 *
 * The order a patch passes through: parse (in the engine) → each file's path resolved and
 * checked like every write (confinement, protected paths) → the contract (an Update or a
 * Delete needs no earlier read, its own lines are the evidence; an Add over an existing
 * file, or a move onto one, needs the session's read of that file's current version) → the
 * consent gate, unit by unit → under the write locks of every file, the engine computes
 * every new version, then changes every file or none → the read records, and one history
 * entry per file, grouped so that `session.undo` puts the whole patch back.
 */
import { randomUUID } from 'node:crypto'
import { lstat, readlink } from 'node:fs/promises'

import { z } from 'zod'

import { underLocks } from '../contract/undo-patch.js'
import { clip, clipMiddle, FsgateError, InvalidInputError, NotFoundError, NotReadError, StaleFileError } from '../errors.js'
import { callNative, completer, type NativePatchResult } from '../native.js'
import { ConsentGate } from '../policy/consent.js'
import { resolvePath } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'
import { CHANGES_FILES, consentPending, explainChange, planChange, type ChangeTarget } from './change.js'
import { num, readToolName } from './common.js'
import { closestLines } from './near-miss.js'

export interface ApplyPatchInput {
  /** The patch text, from `*** Begin Patch` to `*** End Patch`. */
  input: string
  grant_phrase?: string
}

/** The Lark grammar OpenAI's custom tools constrain the freeform apply_patch to (Codex's). */
export const APPLY_PATCH_GRAMMAR = `start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
`

/** The description of the freeform (custom tool) form, where the grammar says the rest. */
export const APPLY_PATCH_FREEFORM_DESCRIPTION =
  'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON. The patch is applied all at once or not at all.'

const DESCRIPTION = `Edits files with a patch: adds, updates, moves and deletes files in one call, applied all together or not at all.
The patch is the whole text, from "*** Begin Patch" to "*** End Patch":

*** Begin Patch
*** Add File: docs/hello.md
+# Hello
+Every line of a new file starts with +.
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-    print("Hi")
+    print("Hello, world!")
*** Delete File: obsolete.txt
*** End Patch

- An update gives hunks: an optional "@@ line" (a nearby line such as a function, to find the place), then lines starting with " " (context, unchanged), "-" (removed) or "+" (added). Give about 3 lines of context before and after each change, exactly as in the file. End a hunk that reaches the end of the file with "*** End of File".
- Paths are relative to the workspace. Updating or deleting a file needs no earlier read: its context and removed lines must match the file. Adding a file where one exists replaces it, and needs a full read of that file first.
- If a line is not found, nothing is changed: the error names it and the closest lines; fix the patch and try again.`

export const applyPatchTool = defineTool<ApplyPatchInput>({
  name: 'apply_patch',
  dialects: {
    codex: {
      name: 'apply_patch',
      description: DESCRIPTION,
      schema: z.strictObject({
        input: z.string().min(1, 'must not be empty').describe('The entire patch, from "*** Begin Patch" to "*** End Patch".'),
        grant_phrase: z
          .string()
          .describe('Only when a previous call failed with permission_required: the exact grant phrase the user wrote in the conversation. Never invent it.')
          .optional(),
      }),
      toCanonical: (i) => i as unknown as ApplyPatchInput,
    },
  },
  effect: () => CHANGES_FILES,
  run: applyPatch,
})

/** An operation of the patch as the engine parsed it. */
interface Op {
  kind: 'add' | 'delete' | 'update'
  path: string
  moveTo?: string | null
  line: number
}

/** An operation with its files resolved. */
interface Planned {
  op: Op
  plan: ChangeTarget
  /** Where an update moves the file. */
  to?: ChangeTarget
}

async function applyPatch(input: ApplyPatchInput, ctx: ToolContext): Promise<ToolOutput> {
  const parsed = await callNative<NativePatchResult>((id) => ctx.fs.parsePatch(completer, id, input.input), ctx.signal, ctx.lanes.compute)
  if (parsed.failure) throw malformed(parsed.failure)
  const ops = (parsed.parsed ?? []) as Op[]
  if (ops.length === 0) {
    throw new InvalidInputError('INVALID_INPUT', 'The patch has no file sections, so no files were modified. Add "*** Add File:", "*** Update File:" or "*** Delete File:" sections.', {
      data: { field: 'input' },
    })
  }
  const planned: Planned[] = []
  for (const op of ops) {
    const plan = await planFile(ctx, op, op.path)
    const to = op.kind === 'update' && op.moveTo ? await planFile(ctx, op, op.moveTo) : undefined
    if (op.kind === 'delete' || (to && to.real !== plan.real)) await refuseLink(ctx, op)
    planned.push({ op, plan, to })
  }
  // The file an Add writes, or a move goes to, may only be replaced when the session has read its current version.
  for (const { op, plan, to } of planned) {
    const dest = op.kind === 'add' ? plan : to && to.real !== plan.real ? to : undefined
    if (dest?.exists) requireFullRead(ctx, op, dest)
  }
  const paths = planned.flatMap(({ plan, to }) => (to ? [plan.real, to.real] : [plan.real]))
  const attempt = (dry: boolean) => underLocks(ctx.locks, paths, async () => {
    if (ctx.signal?.aborted) throw new FsgateError('ABORTED', 'The call was cancelled by its AbortSignal; nothing was changed.')
    const targets = planned.map(({ op, plan, to }) => ({
      path: plan.real,
      moveTo: to?.real,
      ...expectation(ctx, op.kind === 'add' ? plan : to),
      label: plan.shown,
      moveLabel: to?.shown,
    }))
    const r = await callNative<NativePatchResult>(
      (id, cancel) => ctx.fs.applyPatch(completer, id, { patch: input.input, targets, maxBytes: ctx.limits.editMaxBytes, dryRun: dry }, cancel),
      ctx.signal,
      ctx.lanes.io,
    )
    // Still under the locks: this session's next queued change must see these versions.
    if (!r.failure && !dry) record(ctx, planned, r)
    return r
  })
  // The real error (a hunk that does not apply, a stale read) before the consent question.
  if (planned.some((p) => consentPending(ctx, p.plan) || (p.to !== undefined && consentPending(ctx, p.to)))) {
    const tried = await attempt(true)
    if (tried.failure) throw failure(tried.failure, planned, ctx)
  }
  await requireConsents(ctx, planned, input.grant_phrase)
  const r = await attempt(false)
  if (r.failure) throw failure(r.failure, planned, ctx)
  return summary(r, planned)
}

/** Resolves one file of an operation and refuses what a patch may not change. */
async function planFile(ctx: ToolContext, op: Op, given: string): Promise<ChangeTarget> {
  const where = `line ${op.line} of the patch`
  const shown = short(given)
  if (given.trim() === '') throw new InvalidInputError('INVALID_INPUT', `The file header at ${where} has no path. Give the file's path after the colon.`, { data: { field: 'input', line: op.line } })
  let plan: ChangeTarget
  try {
    plan = await planChange(ctx, given, 'input')
  } catch (err) {
    if (err instanceof FsgateError) throw new (err.constructor as typeof FsgateError)(err.code, `${err.message.split(given).join(shown)} (${where})`, { data: { ...err.data, line: op.line } })
    throw err
  }
  if (!plan.inside || plan.redirected) {
    throw new FsgateError('PATH_OUTSIDE_WORKSPACE', `${shown} (${where}) is outside the workspace (${ctx.workspace}), and apply_patch changes files inside it only. Use a path inside the workspace.`, {
      data: { path: given, line: op.line },
    })
  }
  return plan
}

/**
 * A Delete, or the source of a move, that names a symbolic link: a write goes through a
 * link to its file, so the patch would delete or move the file it points to and leave the
 * link dangling (Codex, and rm, remove the link). Refused.
 */
async function refuseLink(ctx: ToolContext, op: Op): Promise<void> {
  const abs = resolvePath(ctx.workspace, op.path, 'input')
  const link = await lstat(abs).then(
    (s) => s.isSymbolicLink(),
    () => false,
  )
  if (!link) return
  const target = await readlink(abs).catch(() => '?')
  const what = op.kind === 'delete' ? '*** Delete File would delete the file it points to' : '*** Move to would move the file it points to'
  throw new InvalidInputError(
    'INVALID_INPUT',
    `${short(op.path)} is a symbolic link (to ${short(target)}): ${what} and leave the link broken. Nothing was changed. Name the file itself, or change the link with a shell command.`,
    { data: { field: 'input', path: op.path, line: op.line, linkTarget: target } },
  )
}

/** An Add over an existing file (or a move onto one): refused unless the session read its current version whole. */
function requireFullRead(ctx: ToolContext, op: Op, dest: ChangeTarget): void {
  const record = ctx.ledger.get(dest.real)
  if (record && ctx.ledger.isComplete(record)) return
  const how = op.kind === 'add' ? '*** Add File would replace it' : '*** Move to would replace it'
  throw new NotReadError(
    record ? 'PARTIAL_READ' : 'NOT_READ',
    `${short(dest.given)} already exists and ${how}, but it has not been ${record ? 'read whole' : 'read'} in this session. Change it with *** Update File instead, or read it first with ${readToolName(ctx)}. Nothing was changed.`,
    { data: { path: dest.given, line: op.line } },
  )
}

/**
 * The consent gate for every existing file the patch replaces or deletes, unit by unit:
 * the phrase answers the first unit not yet granted (the one the last refusal asked
 * about), and the next such unit asks anew.
 */
async function requireConsents(ctx: ToolContext, planned: Planned[], phrase: string | undefined): Promise<void> {
  if (!ctx.preset.consentGate) return
  const seen = new Set<string>()
  for (const plan of planned.flatMap((p) => (p.to ? [p.plan, p.to] : [p.plan]))) {
    if (!plan.exists) continue
    const { unit, label } = ConsentGate.unitOf(plan.dest, ctx.workspace, plan.inside)
    if (seen.has(unit) || ctx.consent.isGranted(unit)) continue
    seen.add(unit)
    await ctx.consent.check({ sessionId: ctx.sessionId, tool: ctx.calledAs, path: plan.given, realPath: plan.dest, unit }, label, phrase, ctx.onPermissionRequest)
    phrase = undefined
  }
}

/** What the engine must find at the file an Add writes or a move goes to: nothing, or the version this session read. */
function expectation(ctx: ToolContext, dest: ChangeTarget | undefined): Record<string, unknown> {
  if (!dest?.exists) return { expectAbsent: true }
  const record = ctx.ledger.get(dest.real)
  return record ? { expectSize: record.size, expectHash: record.contentHash } : { expectAbsent: true }
}

type Done = Required<Pick<NativePatchResult, 'ops' | 'files'>>

/** Records the new versions (so later changes need no re-read) and one history entry per file, grouped. */
function record(ctx: ToolContext, planned: Planned[], r: NativePatchResult): void {
  const files = r.files ?? []
  const shown = new Map(planned.flatMap(({ plan, to }) => (to ? [plan, to] : [plan])).map((p) => [p.real, p.shown]))
  const group = { id: randomUUID(), files: files.length }
  const at = Date.now()
  for (const f of files) {
    const w = f.written
    if (w) ctx.ledger.noteWritten({ realPath: w.realPath, mtimeMs: w.mtimeMs, size: w.size, contentHash: w.hash, totalLines: w.totalLines })
    else ctx.ledger.forgetPath(f.realPath)
    ctx.history.add({
      realPath: f.realPath,
      path: shown.get(f.realPath) ?? f.realPath,
      tool: ctx.calledAs,
      action: f.action as 'created' | 'replaced' | 'removed',
      at,
      previous: f.previous ?? null,
      ...(typeof f.previousMode === 'number' ? { previousMode: f.previousMode } : {}),
      after: w ? { size: w.size, hash: w.hash } : null,
      group,
      ...(f.madeFolders.length > 0 ? { madeFolders: f.madeFolders } : {}),
    })
  }
}

/** Codex's summary (A/M/D lines), with each file's lines added and removed. */
function summary(r: NativePatchResult, planned: Planned[]): ToolOutput {
  const { ops, files } = r as Done
  const lines = ['Success. Updated the following files:']
  ops.forEach((op, i) => {
    const { plan, to } = planned[i]
    const counts = [op.added > 0 ? `+${num(op.added)}` : '', op.removed > 0 ? `-${num(op.removed)}` : ''].filter(Boolean).join(' ')
    const fuzz = op.matchedBy === 'exact' ? '' : `; matched after ignoring ${FUZZ_WORDS[op.matchedBy] ?? op.matchedBy}`
    const note = (extra: string) => (extra || counts || fuzz ? ` (${[extra, counts].filter(Boolean).join('; ')}${fuzz})` : '')
    switch (op.action) {
      case 'added':
        lines.push(`A ${plan.shown}${note(plan.exists ? 'replaced the file' : '')}`)
        break
      case 'deleted':
        lines.push(`D ${plan.shown}${note('')}`)
        break
      case 'moved':
        lines.push(`M ${to?.shown}${note(`moved from ${plan.shown}`)}`)
        break
      default:
        lines.push(`M ${plan.shown}${note('')}`)
    }
  })
  const data = {
    files: files.map((f) => ({
      path: planned.flatMap((p) => (p.to ? [p.plan, p.to] : [p.plan])).find((p) => p.real === f.realPath)?.shown ?? f.realPath,
      realPath: f.realPath,
      action: f.action,
      size: f.written?.size ?? null,
      totalLines: f.written?.totalLines ?? null,
      encoding: f.written?.encoding ?? null,
      contentHash: f.written?.hash ?? null,
    })),
    operations: ops.map((op, i) => ({
      action: op.action,
      path: planned[i].plan.shown,
      to: planned[i].to?.shown ?? null,
      added: op.added,
      removed: op.removed,
      matchedBy: op.matchedBy,
    })),
    diff: ops.map((op) => op.diff).join(''),
  }
  return { content: [text(lines.join('\n'))], data }
}

const FUZZ_WORDS: Record<string, string> = {
  'trailing-whitespace': 'trailing whitespace',
  whitespace: 'leading and trailing whitespace',
  punctuation: 'whitespace and typographic punctuation',
}

type Failure = NonNullable<NativePatchResult['failure']>

/** A path as an error names it: whole, or its start and end when it is long (every error stays within MAX_MESSAGE_BYTES). */
function short(path: string): string {
  return clipMiddle(path, 60)
}

/** A line of the patch as an error quotes it. */
function quoted(line: string | null | undefined): string {
  return clip(JSON.stringify(line ?? ''), 40)
}

function malformed(f: Failure): FsgateError {
  const where = f.line ? ` at line ${f.line}${f.text ? ` (${quoted(f.text)})` : ''}` : ''
  return new InvalidInputError('INVALID_INPUT', `Invalid patch${where}: ${clip(f.message ?? 'not a patch', 140)}. Nothing changed; fix the patch and retry.`, {
    data: { field: 'input', line: f.line ?? null },
  })
}

/** The error a model can act on, for a patch the engine refused (under 600 bytes). */
function failure(f: Failure, planned: Planned[], ctx: ToolContext): FsgateError {
  const op = f.op === undefined || f.op === null ? undefined : planned[f.op]
  const file = op ? short(op.plan.shown) : 'the file'
  const hunk = f.hunk === undefined || f.hunk === null ? '' : `hunk ${f.hunk + 1}, `
  const data = { path: op ? op.plan.shown : null, line: f.line ?? null, hunk: f.hunk ?? null }
  // The closest lines, as many as fit the error's size.
  const near = (fixed: string): string => closestLines(f.candidates ?? [], f.text ?? '', fixed)
  switch (f.code) {
    case 'MALFORMED':
      return malformed(f)
    case 'EMPTY':
      return new InvalidInputError('INVALID_INPUT', 'The patch has no file sections, so no files were modified.', { data: { field: 'input' } })
    case 'CONTEXT_NOT_FOUND': {
      const head = `Failed to find the @@ line ${quoted(f.text)} in ${file} (${hunk}patch line ${f.line}).`
      const tail = 'Nothing was changed. Give a line that is in the file, or a bare @@.'
      return new FsgateError('STRING_NOT_FOUND', `${head}${near(head + tail)}${tail}`, { data: { ...data, candidates: f.candidates ?? [] } })
    }
    case 'LINES_NOT_FOUND': {
      if (f.notAtEnd) {
        return new FsgateError(
          'STRING_NOT_FOUND',
          `The lines of ${hunk}patch line ${f.line} are in ${file} but not at its end, where *** End of File puts them. Nothing was changed; remove *** End of File or give the file's last lines.`,
          { data },
        )
      }
      const after = f.after ? ` after line ${f.after}` : ''
      const head = `Failed to find the expected lines in ${file}: ${quoted(f.text)} (${hunk}patch line ${f.line}) is not in the file${after}.`
      const tail = 'Nothing was changed. Read the file and copy the context and - lines exactly.'
      return new FsgateError('STRING_NOT_FOUND', `${head}${near(head + tail)}${tail}`, { data: { ...data, candidates: f.candidates ?? [] } })
    }
    case 'OVERLAP':
      return new InvalidInputError('INVALID_INPUT', `Two hunks of ${file} change the same lines (${hunk}patch line ${f.line}). Nothing was changed; merge them into one hunk.`, { data })
    case 'FILE':
      return fileError(f, op, ctx)
    default:
      return commitError(f, planned, ctx)
  }
}

/** An operation's file could not be changed; nothing was written. */
function fileError(f: Failure, op: Planned | undefined, ctx: ToolContext): FsgateError {
  const e = f.error
  const which = (op && [op.plan, op.to].find((p) => p?.real === e?.path)) ?? op?.plan
  const given = short(which?.given ?? e?.path ?? 'a file')
  const kind = op?.op.kind
  switch (e?.code) {
    case 'NOT_FOUND':
      return new NotFoundError(
        'NOT_FOUND',
        `The file to ${kind === 'delete' ? 'delete' : 'update'} does not exist: ${given}. Nothing was changed. Check the path, or use *** Add File to create it.`,
        { data: { path: given } },
      )
    case 'FILE_EXISTS':
    case 'STALE':
      return new StaleFileError('STALE', `${given} was changed by another session or program since you read it, so nothing was changed. Read it again with ${readToolName(ctx)}, then retry the patch.`, {
        data: { path: given },
      })
    case 'ENCODING':
      return new FsgateError(
        'ENCODING',
        `${given} ${e.message}, so a patch cannot change it without corrupting it. Nothing was changed. Change it another way (a shell command), or leave it out of the patch.`,
        { data: { path: given } },
      )
    default: {
      const err = new FsgateError(toCode(e?.code), `${given}: ${clip(e?.message ?? 'failed', 100)}. Nothing was changed.`, { data: { path: given, native: e } })
      return explainChange(err, given, ctx) as FsgateError
    }
  }
}

/** Writing failed: every file was put back, or the message says which could not be. */
function commitError(f: Failure, planned: Planned[], ctx: ToolContext): FsgateError {
  const e = f.error
  const shown = new Map(planned.flatMap((p) => (p.to ? [p.plan, p.to] : [p.plan])).map((p) => [p.real, p.given]))
  const given = short(shown.get(e?.path ?? '') ?? e?.path ?? 'a file')
  const stuck = (f.onDisk ?? []).filter((d) => d.state !== 'old').map((d) => shown.get(d.realPath) ?? d.realPath)
  const state = stuck.length === 0 ? 'Every file of the patch is as it was.' : `These files could not be put back (changed by someone else meanwhile) and may be changed: ${clipMiddle(stuck.join(', '), 200)}.`
  const data = { path: given, onDisk: (f.onDisk ?? []).map((d) => ({ path: shown.get(d.realPath) ?? d.realPath, state: d.state })) }
  if (e?.code === 'STALE' || e?.code === 'FILE_EXISTS') {
    return new StaleFileError('STALE', `${given} was changed by another session or program while the patch was written. ${state} Read it again, then retry.`, { data })
  }
  const base = explainChange(new FsgateError(toCode(e?.code), e?.message ?? 'failed'), given, ctx) as FsgateError
  return new FsgateError(base.code, `${base.message.replace(/ \(the file is as it was\)| Nothing was changed\./, '')} ${state}`, { data })
}

function toCode(code: string | undefined): 'NO_SPACE' | 'PERMISSION_DENIED' | 'FILE_TOO_LARGE' | 'PATH_OUTSIDE_WORKSPACE' | 'BLOCKED_DEVICE' | 'INVALID_INPUT' | 'IS_DIRECTORY' | 'IO_ERROR' {
  const known = ['NO_SPACE', 'PERMISSION_DENIED', 'FILE_TOO_LARGE', 'PATH_OUTSIDE_WORKSPACE', 'BLOCKED_DEVICE', 'INVALID_INPUT', 'IS_DIRECTORY'] as const
  return (known as readonly string[]).includes(code ?? '') ? (code as (typeof known)[number]) : 'IO_ERROR'
}
