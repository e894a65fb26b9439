/**
 * shell_command (SPEC §8.2, the codex dialect): Codex's shell tool, a command string run
 * in an optional working folder with a timeout in milliseconds. It is shell under
 * another schema: the same risk rating, approval, sandbox, timeout and output cap. A
 * `workdir` runs the command after `cd -- <workdir>`, and that is what is rated.
 * `with_escalated_permissions` asks for a run outside the sandbox, as Bash's
 * `dangerouslyDisableSandbox` does. The Responses API's built-in `shell` tool is answered
 * with it (adapters/openai.ts).
 */
import { stat } from 'node:fs/promises'

import { z } from 'zod'

import { clipMiddle, InvalidInputError } from '../errors.js'
import { resolvePath } from '../policy/paths.js'
import type { ToolOutput } from '../result.js'
import { defineTool, type CallEffect, type ToolContext } from '../tool.js'
import { quote } from './bash-session.js'
import { command, grantPhrase, shellTool, type ShellInput } from './shell.js'

export interface ShellCommandInput {
  command: string
  workdir?: string
  timeout_ms?: number
  with_escalated_permissions?: boolean
  justification?: string
  grant_phrase?: string
}

export const shellCommandTool = defineTool<ShellCommandInput>({
  name: 'shell_command',
  dialects: {
    codex: {
      name: 'shell_command',
      description: `Runs a shell command (sh -c) and returns its output: stdout, stderr and the exit code.
- Set workdir to run it in a folder of the workspace; prefer it to cd.
- The command is killed, with everything it started, after timeout_ms (default 60000).
- Commands run in a sandbox: the workspace is writable, the rest read-only, no network. Use apply_patch to edit files, not the shell.`,
      schema: z.strictObject({
        command: command.describe('The shell script to run.'),
        workdir: z.string().describe('The folder to run it in, relative to the workspace or absolute. Default: the workspace.').optional(),
        timeout_ms: z.number().int().positive().describe('Milliseconds before the command is killed (default 60000).').optional(),
        with_escalated_permissions: z.boolean().describe('Run outside the sandbox (needs the host\'s permission and the user\'s approval). Only when the user asked for it.').optional(),
        justification: z.string().describe('Why the command needs escalated permissions, for the user.').optional(),
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: (i) => i as unknown as ShellCommandInput,
    },
  },
  effect: (input, ctx) => shellTool.effect?.(asShell(input, ctx), ctx) ?? ({ sideEffect: true, write: true } satisfies CallEffect),
  admit: async (input, ctx) => {
    if (input.workdir !== undefined) {
      const dir = resolvePath(ctx.workspace, input.workdir, 'workdir')
      if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) {
        throw new InvalidInputError('INVALID_INPUT', `workdir ${clipMiddle(String(input.workdir), 60)} is not a folder. Give an existing folder, or leave workdir out to run in the workspace.`, {
          data: { field: 'workdir' },
        })
      }
    }
    await shellTool.admit?.(asShell(input, ctx), ctx)
  },
  run: (input, ctx): Promise<ToolOutput> => shellTool.run(asShell(input, ctx), ctx),
})

/** Shell's input for the command, as it runs; one object per call (shell keeps its rating by it). */
const asRun = new WeakMap<ShellCommandInput, ShellInput>()
function asShell(input: ShellCommandInput, ctx: ToolContext): ShellInput {
  let shell = asRun.get(input)
  if (!shell) {
    const cd = input.workdir === undefined ? '' : `cd -- ${quote(resolvePath(ctx.workspace, input.workdir, 'workdir'))} || exit 1\n`
    shell = {
      command: `${cd}${input.command}`,
      ...(input.timeout_ms !== undefined ? { timeout_secs: Math.max(1, Math.ceil(input.timeout_ms / 1000)) } : {}),
      ...(input.with_escalated_permissions !== undefined ? { unsandboxed: input.with_escalated_permissions } : {}),
      ...(input.grant_phrase !== undefined ? { grant_phrase: input.grant_phrase } : {}),
    }
    asRun.set(input, shell)
  }
  return shell
}
