/**
 * task_output / TaskOutput: a background command's output, read while it runs or after
 * it ended, a page at a time (../process/tasks.ts keeps it). Claude Code 2.1 reads a
 * task's output file with Read, which fsgate serves too (read.ts); TaskOutput is the tool
 * its earlier releases had, with `block` and `timeout` to wait for the end.
 */
import { z } from 'zod'

import { readTaskOutput, taskById } from '../process/tasks.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'

export interface TaskOutputInput {
  task_id: string
  /** 1-based first line; absent: the last `limit` lines. */
  offset?: number
  limit?: number
  /** Wait up to this long, in ms, for the command to end first. */
  wait_ms?: number
}

/** The longest wait a call may ask for (Claude Code's TaskOutput: 600,000 ms). */
const MAX_WAIT_MS = 600_000

const taskId = z.string().min(1).describe('The id of the background task, as the call that started it said.')

/** The canonical form's fields (revka and gemini): a page, and a wait in seconds. */
const pageSchema = z.strictObject({
  task_id: taskId,
  offset: z.number().int().min(1).describe('The 1-based first line to show; absent: the latest lines.').optional(),
  limit: z.number().int().min(1).describe('How many lines to show (default 2000).').optional(),
  wait_secs: z.number().min(0).max(600).describe('Wait up to this many seconds for the command to end before answering (default 0).').optional(),
})
const pageInput = ({ wait_secs, ...rest }: Record<string, unknown>) =>
  ({ ...rest, ...(wait_secs !== undefined ? { wait_ms: (wait_secs as number) * 1000 } : {}) }) as TaskOutputInput

const guide = (started: string, stop: string) =>
  `Shows the output of a background command ${started}, while it runs or after it ended, with its status and exit code.
- Without offset it shows the latest lines; with offset and limit, that range (lines are numbered from the start of the output).
- Set a wait to block until the command ends (or the wait is over), e.g. for a build or test run you started in the background.
- Stop a command you no longer need with ${stop}.`

export const taskOutputTool = defineTool<TaskOutputInput>({
  name: 'task_output',
  dialects: {
    revka: {
      name: 'task_output',
      description: guide('started with shell (background: true)', 'task_stop'),
      schema: pageSchema,
      toCanonical: pageInput,
    },
    claude: {
      name: 'TaskOutput',
      description: guide('started with Bash (run_in_background: true)', 'TaskStop'),
      schema: z.strictObject({
        task_id: taskId,
        block: z.boolean().describe('Whether to wait for the task to finish (default true).').optional(),
        timeout: z.number().min(0).describe('How long to wait, in milliseconds (default 30000, at most 600000).').optional(),
      }),
      toCanonical: ({ task_id, block, timeout }) => ({ task_id, wait_ms: block === false ? 0 : Math.min((timeout as number | undefined) ?? 30_000, MAX_WAIT_MS) }) as TaskOutputInput,
      present: claudeAnswer,
    },
    gemini: {
      name: 'task_output',
      description: guide('started with run_shell_command (is_background: true)', 'task_stop'),
      schema: pageSchema,
      toCanonical: pageInput,
    },
  },
  run: async (input: TaskOutputInput, ctx: ToolContext): Promise<ToolOutput> => {
    const task = taskById(ctx, input.task_id, 'task_id')
    return readTaskOutput(task, { offset: input.offset, limit: input.limit, waitMs: Math.min(input.wait_ms ?? 0, MAX_WAIT_MS) }, ctx)
  },
})

/** Claude Code's TaskOutput answer: the retrieval status, the task and its output in tags. */
function claudeAnswer(out: ToolOutput): ToolOutput {
  const d = out.data as { taskId: string; status: string; exitCode: number | null; retrieval: string }
  const body = (out.content[0] as { text: string }).text
  const parts = [
    `<retrieval_status>${d.retrieval}</retrieval_status>`,
    `<task_id>${d.taskId}</task_id>`,
    '<task_type>local_bash</task_type>',
    `<status>${d.status}</status>`,
    ...(d.exitCode !== null ? [`<exit_code>${d.exitCode}</exit_code>`] : []),
    `<output>\n${body}\n</output>`,
  ]
  return { ...out, content: [text(parts.join('\n\n'))] }
}
