/**
 * Write (file_write / Write / write_file), SPEC §3.3: a whole file, atomically, with LF
 * line endings, under the read-before-write contract and the consent gate.
 */
import { z } from 'zod'

import { clipMiddle, FsgateError, StaleFileError } from '../errors.js'
import { callNative, completer, type NativeWriteResult } from '../native.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'
import { CHANGES_FILES, changeData, consentPending, dryRun, explainChange, planChange, recordChange, redirectNote, requireConsent, requireRead, underLock } from './change.js'
import { pathField } from './common.js'

export interface WriteInput {
  path: string
  content: string
  /** write_file only: replacing an existing file must be asked for. */
  overwrite?: boolean
  grant_phrase?: string
}

const content = z.string().describe('The complete new content of the file.')
const grantPhrase = z
  .string()
  .describe('Only when a previous call failed with permission_required: the exact grant phrase the user wrote in the conversation. Never invent it.')

const guide = (read: string, edit: string) =>
  `Writes a whole file, creating it (and any missing folders) or replacing it. Relative paths start at the workspace root.
- To replace an existing file you must first read all of it with ${read} in this conversation; a file changed since you read it is refused, so read it again.
- To change part of a file, use ${edit}: it sends only the change.
- The file is written atomically with LF line endings, keeping its encoding and permissions.`

export const writeTool = defineTool<WriteInput>({
  name: 'file_write',
  dialects: {
    revka: {
      name: 'file_write',
      description: guide('file_read', 'file_edit'),
      schema: z.strictObject({
        path: z.string().describe('Path of the file, relative to the workspace or absolute.'),
        content,
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: (i) => i as unknown as WriteInput,
    },
    claude: {
      name: 'Write',
      description: guide('Read', 'Edit'),
      schema: z.strictObject({
        file_path: z.string().describe('The path of the file to write.'),
        content,
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: ({ file_path, ...rest }) => ({ path: file_path as string, ...rest }) as WriteInput,
    },
    consent: {
      name: 'write_file',
      description: `Writes a whole file: to create a new file from scratch, or to save generated output under a name. Not for changing part of a file; use edit for that.
- A new path is created at once, with any missing folders.
- An existing file is only replaced with overwrite set to true, and that needs the user's permission for its folder once per conversation: the call fails with permission_required and a phrase; ask the user, and repeat the call with grant_phrase set to what they wrote.
- Outside the workspace an existing file is never replaced: the content goes to a working copy beside it (report.md → report.edited.md), and the result names the path written.`,
      schema: z.strictObject({
        path: z.string().describe('Path of the file, relative to the workspace or absolute.'),
        content,
        overwrite: z.boolean().describe('Set to true to replace a file that already exists.').optional(),
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: (i) => i as unknown as WriteInput,
    },
    gemini: {
      name: 'write_file',
      description: `Writes the complete content to a file, creating missing parent folders, or replacing the file. Best for new or small files; use replace for targeted edits of large files.
- To replace an existing file, read all of it with read_file first in this conversation; a file changed since you read it is refused, so read it again.
- The file is written atomically with LF line endings, keeping its encoding and permissions.`,
      schema: z.strictObject({
        file_path: z.string().describe('Path to the file, relative to the workspace or absolute.'),
        content: z.string().describe("The complete content to write. Provide the full file; do not use placeholders like '// ... rest of code'."),
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: ({ file_path, ...rest }) => ({ path: file_path as string, ...rest }) as WriteInput,
      // gemini-cli's words: "Successfully created and wrote to new file: …" / "Successfully overwrote file: …".
      present: (out) => {
        const d = out.data as { realPath: string; created: boolean; workingCopy: boolean }
        const said = d.created && !d.workingCopy ? `Successfully created and wrote to new file: ${d.realPath}.` : `Successfully overwrote file: ${d.realPath}.`
        return { ...out, content: [text(d.workingCopy ? `${said} (a working copy; the original outside the workspace is unchanged)` : said)] }
      },
    },
  },
  effect: () => CHANGES_FILES,
  run: write,
})

async function write(input: WriteInput, ctx: ToolContext): Promise<ToolOutput> {
  const plan = await planChange(ctx, input.path, pathField(ctx))
  if (ctx.dialect === 'consent' && plan.sourceExists && input.overwrite !== true) {
    throw new FsgateError('FILE_EXISTS', `${clipMiddle(input.path, 60)} already exists and was not replaced. Call write_file again with overwrite set to true to replace it, or use edit to change part of it.`, {
      data: { path: input.path },
    })
  }
  requireRead(ctx, plan)
  const attempt = (dry: boolean) =>
    underLock(ctx, plan, 'dest', async (checks) => {
      const w = await callNative<NativeWriteResult>(
        (id) => ctx.fs.write(completer, id, { path: plan.dest, text: input.content, checks: dry ? dryRun(checks) : checks }),
        ctx.signal,
        ctx.lanes.io,
      )
      // Still under the lock: this session's next queued change must see this version.
      if (!dry) recordChange(ctx, plan, w)
      return w
    }).catch((err) => {
      if (err instanceof FsgateError && err.code === 'FILE_EXISTS') {
        // It did not exist when this call began: someone created it meanwhile.
        throw new StaleFileError('STALE', `${input.path} was created by another session or program while this call ran, so it was not replaced. Read it, then retry.`, {
          data: { path: input.path },
        })
      }
      throw explainChange(err, input.path, ctx)
    })
  // The real error (a stale read, a size limit, an encoding) before the consent question.
  if (consentPending(ctx, plan)) await attempt(true)
  await requireConsent(ctx, plan, input.grant_phrase)
  const w = await attempt(false)
  const what = w.created ? 'Created' : 'Replaced'
  const lines = `${w.totalLines.toLocaleString('en-US')} line${w.totalLines === 1 ? '' : 's'}`
  return { content: [text(`${what} ${plan.shown} (${lines}).${redirectNote(plan)}`)], data: changeData(plan, w) }
}
