/**
 * Jupyter notebooks (SPEC §8.2): Read shows a notebook's cells as Claude Code renders
 * them (`readNotebook`, called by read.ts), and NotebookEdit / notebook_edit replaces,
 * inserts or deletes one cell, under the read-before-write contract, atomically, keeping
 * every byte of the file outside the cell (the span edit is the engine's:
 * crates/core/src/notebook).
 */
import { randomUUID } from 'node:crypto'

import { z } from 'zod'

import { clip, clipMiddle, FsgateError, InvalidInputError, MaxFileReadTokenExceededError, NotFoundError } from '../errors.js'
import { callNative, completer, type NativeNotebookEditResult, type NativeNotebookResult } from '../native.js'
import { displayPath } from '../policy/paths.js'
import { text, type ContentBlock, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'
import { CHANGES_FILES, changeData, consentPending, dryRun, explainChange, planChange, recordChange, redirectNote, requireConsent, requireRead, underLock } from './change.js'
import { num, readToolName, tokensOf, unchanged } from './common.js'

export type CellEditMode = 'replace' | 'insert' | 'delete'

export interface NotebookEditInput {
  notebook_path: string
  cell_id?: string
  new_source: string
  cell_type?: 'code' | 'markdown'
  edit_mode?: CellEditMode
  grant_phrase?: string
}

const fields = {
  cell_id: z
    .string()
    .describe('The id of the cell, as Read shows it in <cell id="...">. Required for replace and delete; for insert, the new cell goes after it (or first when absent).')
    .optional(),
  new_source: z.string().describe('The new source of the cell (ignored by delete).'),
  cell_type: z.enum(['code', 'markdown']).describe('The type of the cell: required for insert; for replace, the new type (default: as it is).').optional(),
  edit_mode: z.enum(['replace', 'insert', 'delete']).describe('replace (default), insert or delete.').optional(),
  grant_phrase: z
    .string()
    .describe('Only when a previous call failed with permission_required: the exact grant phrase the user wrote in the conversation. Never invent it.')
    .optional(),
}

const guide = (read: string) =>
  `Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb). Use it, not a text edit, to change a notebook.
- Read the notebook with ${read} in this conversation first: it shows each cell as <cell id="...">; a notebook changed since you read it is refused.
- cell_id is that id (a cell without one is cell-N, its 0-based index). It is required for replace and delete.
- edit_mode defaults to replace, which also clears a code cell's outputs and execution count. insert adds a cell after cell_id (first when it is absent) and needs cell_type.
- Every byte of the notebook outside the cell stays as it was.`

export const notebookTool = defineTool<NotebookEditInput>({
  name: 'notebook_edit',
  dialects: {
    revka: {
      name: 'notebook_edit',
      description: guide('file_read'),
      schema: z.strictObject({ notebook_path: z.string().describe('Path of the notebook, relative to the workspace or absolute.'), ...fields }),
      toCanonical: (i) => i as unknown as NotebookEditInput,
    },
    claude: {
      name: 'NotebookEdit',
      description: guide('Read'),
      schema: z.strictObject({ notebook_path: z.string().describe('The path of the Jupyter notebook file to edit.'), ...fields }),
      toCanonical: (i) => i as unknown as NotebookEditInput,
    },
  },
  effect: () => CHANGES_FILES,
  run: editNotebook,
})

async function editNotebook(input: NotebookEditInput, ctx: ToolContext): Promise<ToolOutput> {
  const mode = input.edit_mode ?? 'replace'
  if (!/\.ipynb$/i.test(input.notebook_path.trim())) {
    throw new InvalidInputError('INVALID_INPUT', `${input.notebook_path} is not a Jupyter notebook (.ipynb). To change another file, use the edit tool.`, {
      data: { field: 'notebook_path' },
    })
  }
  if (mode === 'insert' && input.cell_type === undefined) {
    throw new InvalidInputError('INVALID_INPUT', 'cell_type is required to insert a cell: give "code" or "markdown".', { data: { field: 'cell_type' } })
  }
  const plan = await planChange(ctx, input.notebook_path, 'notebook_path')
  if (!plan.sourceExists) {
    throw new NotFoundError('NOT_FOUND', `Notebook does not exist: ${input.notebook_path}. Check the path; to make a new notebook, write it whole with the write tool.`, {
      data: { path: input.notebook_path },
    })
  }
  requireRead(ctx, plan)
  const newId = randomUUID().slice(0, 8)
  const attempt = (dry: boolean) =>
    underLock(ctx, plan, 'source', async (checks) => {
      const r = await callNative<NativeNotebookEditResult>(
        (id, cancel) =>
          ctx.fs.editNotebook(
            completer,
            id,
            {
              source: plan.source,
              path: plan.dest,
              cellId: input.cell_id,
              newSource: input.new_source,
              cellType: input.cell_type,
              editMode: mode,
              newId,
              maxBytes: ctx.limits.notebookMaxBytes,
              checks: dry ? dryRun(checks) : checks,
            },
            cancel,
          ),
        ctx.signal,
        ctx.lanes.io,
      )
      if (!dry) recordChange(ctx, plan, r.written)
      return r
    }).catch((err) => {
      throw explainEdit(err, input, ctx)
    })
  // The real error (no such cell, a stale read) before the consent question.
  if (consentPending(ctx, plan)) await attempt(true)
  await requireConsent(ctx, plan, input.grant_phrase)
  const r = await attempt(false)
  const id = r.cellId ?? undefined
  const said =
    mode === 'replace' ? `Updated cell ${id} with ${input.new_source}` : mode === 'insert' ? `Inserted ${id ? `cell ${id}` : 'a new cell'} with ${input.new_source}` : `Deleted cell ${id}`
  return {
    content: [text(`${said}${redirectNote(plan)}`)],
    data: {
      ...changeData(plan, r.written),
      // Claude Code's NotebookEditOutput (its whole-file copies are left out: a notebook may be 100 MB).
      notebook_path: plan.shown,
      new_source: mode === 'delete' ? '' : input.new_source,
      ...(r.oldSource != null ? { old_source: r.oldSource } : {}),
      ...(id !== undefined ? { cell_id: id } : {}),
      cell_type: r.cellType,
      language: r.language,
      edit_mode: mode,
      index: r.index,
      totalCells: r.totalCells,
    },
  }
}

function explainEdit(err: unknown, input: NotebookEditInput, ctx: ToolContext): unknown {
  if (!(err instanceof FsgateError)) return err
  const data = { path: input.notebook_path }
  const given = clipMiddle(input.notebook_path, 60)
  switch (err.code) {
    case 'INVALID_NOTEBOOK':
      return new FsgateError(
        'INVALID_NOTEBOOK',
        `${given} ${clip(err.message, 80)}, so it was not changed. Read it with ${readToolName(ctx)} to see its text, or repair it whole with the write tool.`,
        { data },
      )
    case 'NOT_FOUND':
      // The engine's NOT_FOUND here is a cell; the file was found at planning.
      return new NotFoundError('NOT_FOUND', `In ${given}, ${clipMiddle(err.message, 120)}. Use a cell id that ${readToolName(ctx)} shows.`, { data: { ...data, field: 'cell_id' } })
    case 'INVALID_INPUT':
      return new InvalidInputError('INVALID_INPUT', `${err.message[0].toUpperCase()}${clip(err.message.slice(1), 120)}; the notebook was not changed. Fix the call and retry.`, { data: { ...data, field: 'cell_id' } })
    case 'FILE_TOO_LARGE':
      return new FsgateError('FILE_TOO_LARGE', `${given} ${clip(err.message, 80)} (limits.notebookMaxBytes), so it was not changed. Change it with a shell command, or ask the user.`, { data })
    default:
      return explainChange(err, input.notebook_path, ctx)
  }
}

/** Tokens an image costs a model (Anthropic's estimate: width × height / 750). */
function imageTokens(width: number, height: number): number {
  return Math.ceil((width * height) / 750)
}

/**
 * Read of a notebook: its cells as Claude Code shows them (`<cell id="…">`, the type of a
 * cell that is not code, the language when it is not Python, the source, then each
 * output: text, or an image block), paged by cell with offset and limit and held to the
 * token limit. Returns null when the file is not a valid notebook (Read then shows its
 * text, saying so).
 */
export async function readNotebook(
  abs: string,
  input: { path: string; offset?: number; limit?: number },
  ctx: ToolContext,
): Promise<ToolOutput | { invalid: string }> {
  const L = ctx.limits
  const r = await callNative<NativeNotebookResult>(
    (id, cancel) =>
      ctx.fs.readNotebook(
        completer,
        id,
        {
          path: abs,
          offset: input.offset && input.offset > 0 ? input.offset : 1,
          limit: input.limit,
          maxOutputChars: L.notebookOutputChars,
          maxBytes: L.notebookMaxBytes,
          imageMaxEdge: L.imageMaxEdge,
          imageMaxBytes: L.imageMaxBytes,
          imageMaxPixels: L.imageMaxPixels,
        },
        cancel,
      ),
    ctx.signal,
    ctx.lanes.compute,
  ).catch((err) => {
    if (err instanceof FsgateError && err.code === 'INVALID_NOTEBOOK') return { invalid: err.message }
    throw err
  })
  if ('invalid' in r) return r
  const shown = displayPath(ctx.workspace, r.realPath)
  const total = r.totalCells
  const first = r.firstCell
  if (total > 0 && first === 0) {
    throw new InvalidInputError('INVALID_INPUT', `offset ${num(input.offset ?? 0)} is past the last cell of ${shown}, which has ${num(total)} cells. Use an offset from 1 to ${total}.`, {
      data: { field: 'offset', totalCells: total },
    })
  }
  const last = first === 0 ? 0 : first + r.cells.length - 1
  const facts = { realPath: r.realPath, mtimeMs: r.mtimeMs, size: r.size, contentHash: r.hash, totalLines: total }
  const data = {
    path: shown,
    realPath: r.realPath,
    size: r.size,
    mtimeMs: r.mtimeMs,
    contentHash: r.hash,
    kind: 'notebook',
    language: r.language,
    startCell: first,
    endCell: last,
    totalCells: total,
    cutOutputs: r.cutOutputs,
    cells: r.cells.map((c) => ({ id: c.id, cellType: c.cellType, executionCount: c.executionCount ?? null, outputs: c.outputs.length })),
  }
  // The blocks of each cell, then the token gate by whole cells.
  const perCell = r.cells.map((c) => cellBlocks(c, r.language))
  const costs = await Promise.all(r.cells.map((c, i) => cellTokens(c, perCell[i], ctx)))
  const max = ctx.limits.readTokens
  let fit = 0
  let sum = 0
  while (fit < costs.length && sum + costs[fit] <= max) sum += costs[fit++]
  if (fit < perCell.length) {
    const hint = fit > 0 ? `read ${fit} cell${fit === 1 ? '' : 's'} at a time, e.g. offset=${first} and limit=${fit}` : `cell ${first} alone is over the limit (large outputs); its source is in the file`
    throw new MaxFileReadTokenExceededError(
      'TOKEN_LIMIT',
      `These cells are more than ${num(max)} tokens. ${shown} has ${num(total)} cells; ${hint}.`,
      { data: { maxTokens: max, totalCells: total, suggestedLimit: fit > 0 ? fit : null } },
    )
  }
  const again = ctx.ledger.note(facts, total === 0 ? null : [first, last], `cells ${first}-${last}`)
  if (again && ctx.dedup) return unchanged(shown, data, total === 0 ? 'empty notebook' : `cells ${first}-${last} of ${total}`)
  if (total === 0) return { content: [text(`(${shown} is a notebook with no cells)`)], data }
  const blocks = merge(perCell.flat())
  const more = total - last
  if (more > 0) blocks.push(text(`… ${num(more)} more cell${more === 1 ? '' : 's'}; continue with offset=${last + 1}`))
  return { content: blocks, data }
}

type Cell = NativeNotebookResult['cells'][number]

/** One cell as Claude Code renders it: its text block, then its outputs. */
function cellBlocks(c: Cell, language: string): ContentBlock[] {
  const tags = [c.cellType !== 'code' ? `<cell_type>${c.cellType}</cell_type>` : '', c.cellType === 'code' && language !== 'python' ? `<language>${language}</language>` : ''].join('')
  const out: ContentBlock[] = [text(`<cell id="${c.id}">${tags}${c.source}</cell id="${c.id}">`)]
  for (const o of c.outputs) {
    if (o.text) out.push(text(`\n${o.text}`))
    if (o.imageBase64 && o.mime) out.push({ type: 'image', data: o.imageBase64, mimeType: o.mime })
  }
  if (c.hiddenOutputs > 0) out.push(text('\nOutputs of an unknown type are not shown.'))
  return out
}

async function cellTokens(c: Cell, blocks: ContentBlock[], ctx: ToolContext): Promise<number> {
  let n = 0
  for (const o of c.outputs) if (o.imageBase64) n += imageTokens(o.width ?? 2000, o.height ?? 2000)
  const joined = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
  // A token is at least one byte: short text needs no count beyond its length.
  return n + (Buffer.byteLength(joined) <= 64 ? Buffer.byteLength(joined) : await tokensOf(ctx, joined))
}

/** Adjacent text blocks joined by a newline, as Claude Code sends them. */
function merge(blocks: ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = []
  for (const b of blocks) {
    const last = out[out.length - 1]
    if (b.type === 'text' && last?.type === 'text') out[out.length - 1] = text(`${last.text}\n${b.text}`)
    else out.push(b)
  }
  return out
}
