/**
 * str_replace_based_edit_tool (SPEC §8.2, the anthropic dialect): Anthropic's text editor
 * (text_editor_20250728), whose schema Claude models are trained on. Its commands are
 * fsgate's own tools under the same contract and policy: `view` is Read (with line numbers
 * as `N: line`, `view_range` and `max_characters`) or a listing of a folder two levels
 * deep, `create` is Write, `str_replace` is Edit (its matching ladder), and `insert` puts
 * lines after a line number with the checks and the atomic write of an edit. Results and
 * errors read as Anthropic's documentation shows them.
 */
import { readdir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'

import { z } from 'zod'

import { AbortedError, clipMiddle, EditMatchError, FsgateError, InvalidInputError, NotFoundError } from '../errors.js'
import { callNative, completer, type NativeEditResult } from '../native.js'
import { displayPath, resolvePath, within } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'
import { CHANGES_FILES, consentPending, dryRun, explainChange, planChange, recordChange, requireConsent, requireRead, underLock } from './change.js'
import { blocksWithin, num, tokensOf } from './common.js'
import { closestLines } from './near-miss.js'
import { editTool, type EditInput } from './edit.js'
import { readTool, type ReadInput } from './read.js'
import { writeTool, type WriteInput } from './write.js'

export interface TextEditorInput {
  command: 'view' | 'create' | 'str_replace' | 'insert' | 'undo_edit'
  path: string
  view_range?: number[]
  file_text?: string
  old_str?: string
  new_str?: string
  insert_line?: number
  insert_text?: string
  /** The tool declaration's max_characters, passed on by the adapter: view output is cut there. */
  max_characters?: number
  grant_phrase?: string
}

/** The name Anthropic gives the tool; text_editor_20250728 only accepts this one. */
export const TEXT_EDITOR_NAME = 'str_replace_based_edit_tool'

/** Entries a folder listing shows before it says how many more there are. */
const LISTING_ENTRIES = 1000

export const textEditorTool = defineTool<TextEditorInput>({
  name: TEXT_EDITOR_NAME,
  dialects: {
    anthropic: {
      name: TEXT_EDITOR_NAME,
      description: `Views, creates and edits text files. Commands:
- view: a file with line numbers ("N: line"), or view_range [start, end] (end -1: to the end of the file); a folder: its files and folders two levels deep.
- create: writes file_text to path, creating folders; an existing file must have been viewed first.
- str_replace: replaces old_str, which must occur exactly once, with new_str.
- insert: inserts insert_text after line insert_line (0: at the start).`,
      schema: z.strictObject({
        command: z.enum(['view', 'create', 'str_replace', 'insert', 'undo_edit']).describe('The command to run.'),
        path: z.string().describe('Path of the file or folder, relative to the workspace or absolute.'),
        view_range: z.array(z.number().int()).length(2).describe('view: [start, end] lines, 1-based; end -1 reads to the end.').optional(),
        file_text: z.string().describe('create: the content of the file.').optional(),
        old_str: z.string().describe('str_replace: the exact text to replace.').optional(),
        new_str: z.string().describe('str_replace: the text to put in its place; insert: the text to insert (as insert_text).').optional(),
        insert_line: z.number().int().min(0).describe('insert: the line after which to insert (0: at the start).').optional(),
        insert_text: z.string().describe('insert: the text to insert.').optional(),
        max_characters: z.number().int().positive().describe('view: cut the output at this many characters.').optional(),
        grant_phrase: z
          .string()
          .describe('Only when a previous call failed with permission_required: the exact grant phrase the user wrote in the conversation. Never invent it.')
          .optional(),
      }),
      toCanonical: (i) => i as unknown as TextEditorInput,
    },
  },
  effect: (input) => (input.command === 'view' ? { sideEffect: false, write: false } : CHANGES_FILES),
  run: textEditor,
})

async function textEditor(input: TextEditorInput, ctx: ToolContext): Promise<ToolOutput> {
  switch (input.command) {
    case 'view':
      return view(input, ctx)
    case 'create':
      return create(input, ctx)
    case 'str_replace':
      return strReplace(input, ctx)
    case 'insert':
      return insert(input, ctx)
    default:
      throw new InvalidInputError(
        'INVALID_INPUT',
        'undo_edit is not a command of text_editor_20250728. To revert a change, make the reverse edit with str_replace.',
        { data: { field: 'command' } },
      )
  }
}

function required<T>(value: T | undefined, field: string, command: string): T {
  if (value === undefined) {
    throw new InvalidInputError('INVALID_INPUT', `Parameter \`${field}\` is required for command: ${command}. Call ${TEXT_EDITOR_NAME} again with it.`, { data: { field } })
  }
  return value
}

// ---------------------------------------------------------------------------------------
// view

async function view(input: TextEditorInput, ctx: ToolContext): Promise<ToolOutput> {
  const abs = resolvePath(ctx.workspace, input.path)
  if (await isFolder(abs)) {
    if (input.view_range) {
      throw new InvalidInputError('INVALID_INPUT', `The \`view_range\` parameter is not allowed when \`path\` points to a directory (${input.path}). View a file with it, or drop it.`, {
        data: { field: 'view_range' },
      })
    }
    return cut(await listFolder(input.path, abs, ctx), input.max_characters)
  }
  const read: ReadInput = { path: input.path }
  if (input.view_range) {
    const [start, end] = input.view_range
    if (start < 1 || (end !== -1 && end < start)) {
      throw new InvalidInputError(
        'INVALID_INPUT',
        `Invalid \`view_range\` [${start}, ${end}]: the first line is 1 or more, and the last is -1 (the end of the file) or not before the first.`,
        { data: { field: 'view_range' } },
      )
    }
    read.offset = start
    read.limit = end === -1 ? ctx.limits.readLines : Math.min(end - start + 1, ctx.limits.readLines)
  }
  let out: ToolOutput
  try {
    // The text editor shows lines as `N: line` and shows them again on every view.
    out = await readTool.run({ ...read, raw: true }, { ...ctx, dedup: false, lineStyle: 'colon', preset: { ...ctx.preset, lineStyle: 'colon' } })
  } catch (err) {
    throw viewError(err, input, ctx)
  }
  const content = out.content.map((block) =>
    block.type === 'text' ? text(block.text.replace(/continue with offset=(\d+)$/, (_m, n) => `continue with view_range [${n}, -1]`)) : block,
  )
  return cut({ content, data: out.data }, input.max_characters)
}

async function isFolder(abs: string): Promise<boolean> {
  return stat(abs).then(
    (s) => s.isDirectory(),
    () => false,
  )
}

/** The errors of a view, in the text editor's words. */
function viewError(err: unknown, input: TextEditorInput, ctx: ToolContext): unknown {
  if (!(err instanceof FsgateError)) return err
  if (err.code === 'NOT_FOUND') return new NotFoundError('NOT_FOUND', `File not found: ${input.path}. ${hintOf(err.message, input.path)}`.trim(), { data: err.data })
  if (err.code === 'TOKEN_LIMIT') {
    const fit = err.data?.suggestedLimit
    const start = input.view_range?.[0] ?? 1
    const hint = typeof fit === 'number' ? `view a part of it with view_range [${start}, ${start + fit - 1}]` : 'view a smaller view_range'
    return new (err.constructor as typeof FsgateError)(err.code, `${err.message.replace(/; read part of it.*$|; search for.*$/, '')}; ${hint}.`, { data: err.data })
  }
  if (err.code === 'INVALID_INPUT' && err.data?.field === 'offset') {
    const total = err.data?.totalLines
    return new InvalidInputError('INVALID_INPUT', `Invalid \`view_range\`: ${input.path} has ${num(Number(total))} lines; the first line of the range must be 1 to ${total}.`, {
      data: { field: 'view_range', totalLines: total },
    })
  }
  void ctx
  return err
}

/** A folder's files and folders two levels deep, hidden ones and node_modules left out. */
async function listFolder(given: string, abs: string, ctx: ToolContext): Promise<ToolOutput> {
  const real = await realpath(abs)
  if (![ctx.workspace, ...ctx.allowedPaths].some((root) => within(root, real))) {
    throw new FsgateError('PATH_OUTSIDE_WORKSPACE', `${given} is outside the workspace (${ctx.workspace}) and the allowed paths, so it cannot be listed. Use a path inside the workspace.`, {
      data: { path: given },
    })
  }
  const entries: string[] = []
  let total = 0
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (ctx.signal?.aborted) throw new AbortedError('ABORTED', 'The call was cancelled by its AbortSignal. Call again if it is still needed.')
    let names: import('node:fs').Dirent[]
    try {
      names = await readdir(dir, { withFileTypes: true })
    } catch {
      return
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const d of names) {
      if (d.name.startsWith('.') || d.name === 'node_modules') continue
      total++
      const full = path.join(dir, d.name)
      if (entries.length < LISTING_ENTRIES) entries.push(`${displayPath(ctx.workspace, full)}${d.isDirectory() ? '/' : ''}`)
      if (d.isDirectory() && depth < 2) await walk(full, depth + 1)
    }
  }
  await walk(real, 1)
  const shown = displayPath(ctx.workspace, real)
  const head = `Here are the files and directories up to 2 levels deep in ${shown}, excluding hidden items:`
  // Like every result, the listing fits the token limit: long names leave entries out, visibly.
  const reserve = await tokensOf(ctx, `${head}\n… ${num(total)} more entries not shown; view a folder inside it`)
  const kept = entries.slice(0, await blocksWithin(ctx, entries, Math.max(0, ctx.limits.resultTokens - reserve)))
  const more = total > kept.length ? `\n… ${num(total - kept.length)} more entries not shown; view a folder inside it` : ''
  const body = kept.length > 0 ? kept.join('\n') : total > 0 ? '' : '(empty)'
  return {
    content: [text(`${head}\n${body}${more}`.replace(':\n\n…', ':\n…'))],
    data: { path: shown, realPath: real, kind: 'directory', entries: kept.length, total },
  }
}

/** The output cut at the declaration's max_characters, saying so. */
function cut(out: ToolOutput, max: number | undefined): ToolOutput {
  if (max === undefined) return out
  let left = max
  let cutAt: number | null = null
  const content = out.content.map((block) => {
    if (block.type !== 'text') return block
    if (block.text.length <= left) {
      left -= block.text.length
      return block
    }
    cutAt ??= max
    const kept = block.text.slice(0, left)
    left = 0
    return text(`${kept}${kept.endsWith('\n') ? '' : '\n'}… [output cut at ${num(max)} characters (max_characters); view a smaller view_range]`)
  })
  return cutAt === null ? out : { content, data: { ...out.data, truncated: true, maxCharacters: max } }
}

// ---------------------------------------------------------------------------------------
// create

async function create(input: TextEditorInput, ctx: ToolContext): Promise<ToolOutput> {
  const content = required(input.file_text, 'file_text', 'create')
  const out = await writeTool.run({ path: input.path, content, grant_phrase: input.grant_phrase } satisfies WriteInput, ctx)
  const data = out.data as { created?: boolean; path?: string; totalLines?: number; workingCopy?: boolean }
  const said = data.created ? `File created successfully at: ${data.path}` : `File ${data.path} overwritten with the new content (${num(data.totalLines ?? 0)} lines).`
  const note = data.workingCopy ? ` (${input.path} is outside the workspace and is never replaced: this is a working copy beside it.)` : ''
  return { content: [text(`${said}${note}`)], data: out.data }
}

// ---------------------------------------------------------------------------------------
// str_replace

async function strReplace(input: TextEditorInput, ctx: ToolContext): Promise<ToolOutput> {
  const oldStr = required(input.old_str, 'old_str', 'str_replace')
  if (oldStr === '') {
    throw new InvalidInputError('INVALID_INPUT', 'old_str is empty. Give the exact text to replace; to write a new file use the create command.', { data: { field: 'old_str' } })
  }
  const edit: EditInput = { path: input.path, old_string: oldStr, new_string: input.new_str ?? '', grant_phrase: input.grant_phrase }
  let out: ToolOutput
  try {
    out = await editTool.run(edit, ctx)
  } catch (err) {
    throw replaceError(err, input)
  }
  const snippet = out.content[0]?.type === 'text' ? out.content[0].text.split('\nThe edited lines:\n')[1] : undefined
  const body = snippet ? `\nThe edited lines:\n${colonLines(snippet)}` : ''
  return { content: [text(`Successfully replaced text at exactly one location.${body}`)], data: out.data }
}

/** The errors of a replacement, in the words Anthropic's documentation gives them. */
function replaceError(err: unknown, input: TextEditorInput): unknown {
  if (!(err instanceof FsgateError)) return err
  const data = err.data
  switch (err.code) {
    case 'STRING_NOT_FOUND': {
      const candidates = (data?.candidates ?? []) as Array<{ line: number; text: string }>
      const head = 'No match found for replacement. Please check your text and try again.'
      const tail = 'View the file again and copy old_str exactly, including indentation.'
      return new EditMatchError('STRING_NOT_FOUND', `${head}${closestLines(candidates, input.old_str ?? '', head + tail)}${tail}`, { data })
    }
    case 'AMBIGUOUS_MATCH':
      return new EditMatchError(
        'AMBIGUOUS_MATCH',
        `Found ${data?.matches} matches for replacement text. Please provide more context to make a unique match: include lines around old_str so it occurs once.`,
        { data },
      )
    case 'NO_CHANGE':
      return new EditMatchError('NO_CHANGE', err.message.replace(/old_string/g, 'old_str').replace(/new_string/g, 'new_str'), { data })
    case 'NOT_FOUND':
      return new NotFoundError('NOT_FOUND', `File not found: ${input.path}. ${hintOf(err.message, input.path).replace(/^To create it, use old_string "".$/, 'To create it, use the create command.')}`.trim(), { data })
    case 'PERMISSION_DENIED':
      // The consent gate's refusal (the user declined) says so itself.
      if (data?.unit !== undefined) return err
      return new FsgateError('PERMISSION_DENIED', `Permission denied. Cannot write to file ${input.path}; this process may not change it.`, { data })
    default:
      return err
  }
}

/** What Read's and Edit's "File does not exist: <path>." says after the path (the path has dots of its own). */
function hintOf(message: string, given: string): string {
  const said = `File does not exist: ${given}.`
  return (message.startsWith(said) ? message.slice(said.length) : message).trim()
}

/** The written facts of an insert, or the error of one that did not apply. */
function insertFailure(r: NativeEditResult, input: TextEditorInput, after: number): NonNullable<NativeEditResult['written']> {
  const f = r.failure
  if (f?.code === 'LINE_OUT_OF_RANGE') {
    throw new InvalidInputError('INVALID_INPUT', `Invalid \`insert_line\` ${after}: ${clipMiddle(input.path, 60)} has ${num(f.count ?? 0)} lines, so insert_line must be 0 to ${f.count}. Give one in that range.`, {
      data: { field: 'insert_line', totalLines: f.count },
    })
  }
  if (f?.code === 'NO_CHANGE' || !r.written) {
    throw new EditMatchError('NO_CHANGE', 'insert_text is empty, so nothing was inserted. Give the text to insert.', { data: { path: input.path } })
  }
  return r.written
}

/** `cat -n` lines ("     5\tline") as the text editor shows them ("5: line"). */
function colonLines(snippet: string): string {
  return snippet.replace(/^ *(\d+)\t/gm, '$1: ')
}

// ---------------------------------------------------------------------------------------
// insert

async function insert(input: TextEditorInput, ctx: ToolContext): Promise<ToolOutput> {
  const after = required(input.insert_line, 'insert_line', 'insert')
  const inserted = required(input.insert_text ?? input.new_str, 'insert_text', 'insert')
  const plan = await planChange(ctx, input.path, 'path')
  if (!plan.sourceExists) throw new NotFoundError('NOT_FOUND', `File not found: ${input.path}. Create it with the create command first.`, { data: { path: input.path } })
  if (plan.redirected) {
    throw new FsgateError('PATH_OUTSIDE_WORKSPACE', `${input.path} is outside the workspace, where insert changes no file. Use str_replace, which writes a working copy beside it.`, {
      data: { path: input.path },
    })
  }
  requireRead(ctx, plan)
  const attempt = (dry: boolean) =>
    underLock(ctx, plan, 'source', async (checks) => {
      const r = await callNative<NativeEditResult>(
        (id, cancel) => ctx.fs.insert(completer, id, { path: plan.dest, after, text: inserted, checks: dry ? dryRun(checks) : checks, label: plan.shown }, cancel),
        ctx.signal,
        ctx.lanes.io,
      )
      if (r.written && !dry) recordChange(ctx, plan, r.written)
      return r
    }).catch((err) => {
      throw explainChange(err, input.path, ctx)
    })
  // The real error (a line out of range, a stale read) before the consent question.
  if (consentPending(ctx, plan)) insertFailure(await attempt(true), input, after)
  await requireConsent(ctx, plan, input.grant_phrase)
  const r = await attempt(false)
  const w = insertFailure(r, input, after)
  const body = r.snippet ? `\nThe edited lines:\n${colonLines(r.snippet.replace(/\n$/, ''))}` : ''
  return {
    content: [text(`The text was inserted after line ${after} of ${plan.shown}.${body}`)],
    data: { path: plan.shown, realPath: w.realPath, size: w.size, totalLines: w.totalLines, encoding: w.encoding, contentHash: w.hash, firstLine: r.firstLine, diff: r.diff },
  }
}
