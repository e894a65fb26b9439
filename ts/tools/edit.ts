/**
 * Edit (file_edit / Edit / edit), SPEC §3.4: exact string replacement through the
 * matching ladder, in the file's own encoding and line endings, atomically, under the
 * read-before-write contract and the consent gate.
 */
import path from 'node:path'

import { z } from 'zod'

import { clipMiddle, EditMatchError, FsgateError, NotFoundError, StaleFileError } from '../errors.js'
import { callNative, completer, type NativeEditResult } from '../native.js'
import { text, type ToolOutput } from '../result.js'
import { didYouMean, similarNames } from '../similar.js'
import { defineTool, type ToolContext } from '../tool.js'
import { CHANGES_FILES, changeData, consentPending, dryRun, explainChange, planChange, recordChange, redirectNote, requireConsent, requireRead, underLock } from './change.js'
import { pathField, readToolName } from './common.js'
import { closestLines } from './near-miss.js'

export interface EditInput {
  path: string
  old_string: string
  new_string: string
  replace_all?: boolean
  grant_phrase?: string
}

const fields = {
  old_string: z.string().describe('The exact text to replace, copied from the file (without line numbers). Use "" to create a new file.'),
  new_string: z.string().describe('The text to put in its place (must differ from old_string).'),
  replace_all: z.boolean().describe('Replace every occurrence of old_string (default false: it must occur exactly once).').optional(),
  grant_phrase: z
    .string()
    .describe('Only when a previous call failed with permission_required: the exact grant phrase the user wrote in the conversation. Never invent it.')
    .optional(),
}

const guide = (read: string) =>
  `Replaces exact text in a file. Relative paths start at the workspace root.
- Read the whole file with ${read} in this conversation first; a file changed since you read it is refused, so read it again.
- old_string must match the file exactly once, including indentation; copy it from the file without the line-number prefix. If it occurs more than once, add surrounding lines to make it unique, or set replace_all to change every occurrence.
- Line endings, curly quotes and trailing spaces that differ from the file are tolerated, and the file's own style is kept.
- old_string "" creates a new file (with missing folders) or fills an empty one.
- The result shows the edited lines with their numbers.`

export const editTool = defineTool<EditInput>({
  name: 'file_edit',
  dialects: {
    revka: {
      name: 'file_edit',
      description: guide('file_read'),
      schema: z.strictObject({ path: z.string().describe('Path of the file, relative to the workspace or absolute.'), ...fields }),
      toCanonical: (i) => i as unknown as EditInput,
    },
    claude: {
      name: 'Edit',
      description: guide('Read'),
      schema: z.strictObject({ file_path: z.string().describe('The path of the file to modify.'), ...fields }),
      toCanonical: ({ file_path, ...rest }) => ({ path: file_path as string, ...rest }) as EditInput,
    },
    consent: {
      name: 'edit',
      description: `${guide('read')}
- Changing an existing file needs the user's permission for its folder once per conversation: the call fails with permission_required and a phrase; ask the user, and repeat the call with grant_phrase set to what they wrote.
- Outside the workspace the original is never changed: the edit goes to a working copy beside it (report.md → report.edited.md), and the result names the path written.`,
      schema: z.strictObject({ path: z.string().describe('Path of the file, relative to the workspace or absolute.'), ...fields }),
      toCanonical: (i) => i as unknown as EditInput,
    },
    gemini: {
      name: 'replace',
      description: `Replaces text within a file. By default old_string must occur exactly once; set allow_multiple to true to replace every occurrence. Preferred for targeted edits of existing files.
- Read the whole file with read_file in this conversation first; a file changed since you read it is refused, so read it again.
- old_string must be the exact literal text, including whitespace and indentation; include enough surrounding lines to make it unique.
- Line endings, curly quotes and trailing spaces that differ from the file are tolerated, and the file's own style is kept.
- old_string "" creates a new file (with missing folders) or fills an empty one.`,
      schema: z.strictObject({
        file_path: z.string().describe('The path to the file to modify, relative to the workspace or absolute.'),
        instruction: z.string().describe('A clear, self-contained description of the change and its goal.'),
        old_string: z.string().describe('The exact literal text to replace, unescaped. Use "" to create a new file.'),
        new_string: z.string().describe('The exact literal text to replace old_string with, unescaped.'),
        allow_multiple: z.boolean().describe('If true, replace every occurrence of old_string; if false (default), it must occur exactly once.').optional(),
        grant_phrase: fields.grant_phrase,
      }),
      toCanonical: ({ file_path, instruction: _why, allow_multiple, ...rest }) =>
        ({ path: file_path as string, ...rest, ...(allow_multiple !== undefined ? { replace_all: allow_multiple } : {}) }) as EditInput,
      // gemini-cli's words, then the edited lines.
      present: (out) => {
        const d = out.data as { realPath: string; created: boolean; replacements: number }
        const said = d.created ? `Created new file: ${d.realPath} with provided content.` : `Successfully modified file: ${d.realPath} (${d.replacements} replacements).`
        const body = (out.content[0] as { text: string }).text.split('\nThe edited lines:\n')[1]
        return { ...out, content: [text(body ? `${said} Here is the updated code:\n${body}` : said)] }
      },
    },
  },
  effect: () => CHANGES_FILES,
  run: edit,
})

async function edit(input: EditInput, ctx: ToolContext): Promise<ToolOutput> {
  if (input.old_string === input.new_string) {
    throw new EditMatchError('NO_CHANGE', 'old_string and new_string are identical, so there is nothing to change. Give the new text in new_string.', {
      data: { path: input.path },
    })
  }
  const plan = await planChange(ctx, input.path, pathField(ctx))
  if (!plan.sourceExists && input.old_string !== '') {
    // Names near a missing file are only suggested where the model may look.
    const near = plan.inside ? (await similarNames(plan.real)).map((p) => path.relative(ctx.workspace, p) || p) : []
    const hint = near.length > 0 ? didYouMean(near) : ' To create it, use old_string "".'
    throw new NotFoundError('NOT_FOUND', `File does not exist: ${clipMiddle(input.path, 60)}.${hint}`, { data: { path: input.path, suggestions: near } })
  }
  requireRead(ctx, plan)
  const markdown = /\.mdx?$/i.test(plan.dest)
  const attempt = (dry: boolean) =>
    underLock(ctx, plan, 'source', async (checks) => {
      const r = await callNative<NativeEditResult>(
        (id, cancel) =>
          ctx.fs.edit(
            completer,
            id,
            {
              source: plan.source,
              path: plan.dest,
              oldString: input.old_string,
              newString: input.new_string,
              replaceAll: input.replace_all ?? false,
              stripTrailingWhitespace: !markdown,
              label: plan.shown,
              checks: dry ? dryRun(checks) : checks,
            },
            cancel,
          ),
        ctx.signal,
        ctx.lanes.io,
      )
      // Still under the lock: this session's next queued change must see this version.
      if (r.written && !dry) recordChange(ctx, plan, r.written)
      return r
    }).catch((err) => {
      if (err instanceof FsgateError && err.code === 'FILE_EXISTS') {
        throw new StaleFileError('STALE', `${input.path} was created by another session or program while this call ran, so it was not changed. Read it, then retry.`, {
          data: { path: input.path },
        })
      }
      throw explainChange(err, input.path, ctx)
    })
  // A source outside the roots cannot be read, so its text is not shown either.
  const hidden = !plan.inside
  // The real error before the consent question: the user is asked only about an edit that would apply.
  if (plan.sourceExists && consentPending(ctx, plan)) {
    const tried = await attempt(true)
    if (tried.failure || !tried.written) throw failure(tried, input, ctx, hidden)
  }
  if (plan.sourceExists) await requireConsent(ctx, plan, input.grant_phrase)
  const r = await attempt(false)
  if (r.failure || !r.written) throw failure(r, input, ctx, hidden)
  const w = r.written
  const count = r.count ?? 1
  const how = r.matchedBy && r.matchedBy !== 'exact' ? `, old_string matched after normalizing ${RUNG_WORDS[r.matchedBy] ?? r.matchedBy}` : ''
  const made = w.created ? `Created ${plan.shown}` : `Edited ${plan.shown} (${count} replacement${count === 1 ? '' : 's'}${how})`
  const body = r.snippet && !hidden ? `\nThe edited lines:\n${r.snippet.replace(/\n$/, '')}` : ''
  return {
    content: [text(`${made}.${redirectNote(plan)}${body}`)],
    data: { ...changeData(plan, w), matchedBy: r.matchedBy, replacements: count, firstLine: r.firstLine, diff: hidden ? null : r.diff },
  }
}

const RUNG_WORDS: Record<string, string> = {
  'line-endings': 'line endings',
  quotes: 'curly quotes',
  desanitized: 'sanitized tags',
  'trailing-whitespace': 'trailing whitespace',
}

function failure(r: NativeEditResult, input: EditInput, ctx: ToolContext, hidden: boolean): FsgateError {
  const f = r.failure
  const readTool = readToolName(ctx)
  switch (f?.code) {
    case 'AMBIGUOUS_MATCH':
      return new EditMatchError(
        'AMBIGUOUS_MATCH',
        `old_string matches ${f.count} times; must match exactly once. Add surrounding lines to old_string to pick one, or set replace_all to true to change all ${f.count}.`,
        { data: { path: input.path, matches: f.count, matchedBy: f.matchedBy } },
      )
    case 'STRING_NOT_FOUND': {
      const candidates = hidden ? [] : (f.candidates ?? [])
      const head = `old_string was not found in ${clipMiddle(input.path, 60)}.`
      const tail = `Read the file again with ${readTool} and copy old_string exactly, including indentation.`
      return new EditMatchError('STRING_NOT_FOUND', `${head}${closestLines(candidates, input.old_string, head + tail)}${tail}`, {
        data: { path: input.path, candidates },
      })
    }
    case 'NO_CHANGE':
      return new EditMatchError('NO_CHANGE', `The edit would leave ${input.path} unchanged, so nothing was written. Check new_string.`, {
        data: { path: input.path },
      })
    case 'FILE_EXISTS':
      return new FsgateError(
        'FILE_EXISTS',
        `${input.path} already exists and is not empty; old_string "" only creates a file or fills an empty one. Give the exact text to replace, or use the write tool to replace the whole file.`,
        { data: { path: input.path } },
      )
    default:
      return new FsgateError('INTERNAL', `The edit of ${input.path} failed without a reason. This is a bug in fsgate; try another approach.`)
  }
}
