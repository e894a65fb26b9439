/**
 * task_stop / TaskStop: kills a background command and everything it started, and waits
 * (briefly) until it is gone.
 */
import { z } from 'zod'

import { clip, InvalidInputError } from '../errors.js'
import { taskById } from '../process/tasks.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type ToolContext } from '../tool.js'

export interface TaskStopInput {
  task_id: string
}

/** How long a stop waits for the command's end before answering. */
const STOP_WAIT_MS = 5000

const taskId = z.string().min(1).describe('The id of the background task to stop.')

const guide = (started: string) =>
  `Stops a background command ${started}, with every process it started. Use it for a server or watcher you no longer need, or a job that hangs.`

export const taskStopTool = defineTool<TaskStopInput>({
  name: 'task_stop',
  dialects: {
    revka: {
      name: 'task_stop',
      description: guide('started with shell (background: true)'),
      schema: z.strictObject({ task_id: taskId }),
      toCanonical: (i) => i as unknown as TaskStopInput,
    },
    claude: {
      name: 'TaskStop',
      description: guide('started with Bash (run_in_background: true)'),
      schema: z
        .strictObject({ task_id: taskId.optional(), shell_id: z.string().min(1).describe('Deprecated: use task_id.').optional() })
        .refine((i) => i.task_id !== undefined || i.shell_id !== undefined, { message: 'give task_id', path: ['task_id'] }),
      toCanonical: ({ task_id, shell_id }) => ({ task_id: (task_id ?? shell_id) as string }),
    },
    gemini: {
      name: 'task_stop',
      description: guide('started with run_shell_command (is_background: true)'),
      schema: z.strictObject({ task_id: taskId }),
      toCanonical: (i) => i as unknown as TaskStopInput,
    },
  },
  run: async (input: TaskStopInput, ctx: ToolContext): Promise<ToolOutput> => {
    const task = taskById(ctx, input.task_id, 'task_id')
    if (task.status !== 'running') {
      throw new InvalidInputError('INVALID_INPUT', `Task ${task.id} is not running: it ${task.describe()}. There is nothing to stop.`, {
        data: { field: 'task_id', status: task.status },
      })
    }
    task.stop('TaskStop')
    await Promise.race([task.done, new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())])
    const message = `Successfully stopped task: ${task.id} (${clip(task.command, 200)})`
    return {
      content: [text(task.status === 'running' ? `${message}; it is still shutting down.` : message)],
      data: { message, task_id: task.id, task_type: 'local_bash', command: task.command, status: task.status },
    }
  },
})
