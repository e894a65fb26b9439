/**
 * shell (Bash in the claude dialect), SPEC §3.8 and §8.1, seed 002: `sh -c` in the
 * workspace, in its own process group, with a timeout that kills the whole group, the
 * cleared environment, output bounded while it streams, inside the sandbox
 * (../process/sandbox.ts), and the risk rating of a real parse deciding what needs
 * approval: inside a sandbox only what the sandbox cannot contain (a high rating, an
 * unsandboxed run), outside one everything not on the known-safe list.
 */
import { z } from 'zod'

import { AbortedError, clip, FsgateError } from '../errors.js'
import { childEnv } from '../policy/env.js'
import { displayPath } from '../policy/paths.js'
import { classifyCommand, type Classification } from '../policy/risk.js'
import { listGitlinks } from '../git/run.js'
import { emptyReport, enterGitGuard, leaveGitGuard, type GuardReport } from '../process/git-guard.js'
import { linkOutside } from '../process/links-out.js'
import { runProcess, type RunResult } from '../process/run.js'
import { shellTimeoutSecs, startBackground } from '../process/tasks.js'
import type { SandboxBackend } from '../process/sandbox.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type CallEffect, type ToolContext } from '../tool.js'
import { fits, headTailWithin, textTokens } from './budget.js'
import { num, tokensOf } from './common.js'

export interface ShellInput {
  command: string
  /** revka: the model's approval of a medium or high command (enough only in the revka preset). */
  approved?: boolean
  timeout_secs?: number
  /** The phrase the user said to approve this exact command (guarded preset). */
  grant_phrase?: string
  /** Run outside the sandbox: only where the host allows it, and then with the user's approval. */
  unsandboxed?: boolean
  /** Run in the background: the call answers at once with a task id (../process/tasks.ts). */
  background?: boolean
  /** Background only: wait this long, in ms, before answering, to show the first output. */
  delay_ms?: number
  /** What the command does, for the user (Claude Code's and gemini-cli's `description`). */
  description?: string
}

const RISKS = ['low', 'medium', 'high'] as const

export const command = z.string().min(1, 'must not be empty').max(65_536, 'is longer than 64 KiB').describe('The shell command to run, with sh -c, in the workspace folder.')
export const grantPhrase = z
  .string()
  .describe('Only when a previous call failed with APPROVAL_REQUIRED and the user gave you a phrase for this command: that exact phrase. Never invent it.')

const guide = `Runs a shell command with sh -c in the workspace folder and returns its stdout, stderr and exit code.
- Use it for builds, tests, git operations the other tools lack, and programs; use the file tools to read, search and change files.
- The environment is cleared: only PATH, HOME, LANG and a few others reach the command. Set anything else inline (FOO=1 cmd).
- Commands are killed, with everything they started, after their timeout; nothing a command leaves behind keeps running after the call returns. To keep a server or watcher running, start it as a background command instead (not with & or nohup).
- Commands run in a sandbox: the workspace is writable, the rest of the file system read-only, there is no network, and .git/config and .git/hooks cannot be changed.
- Output over 1 MiB keeps its start and end. Risky commands (deleting, rewriting history) may need the user's approval.`
const backgroundDoc = (read: string, stop: string) =>
  `Run in the background, for servers, watchers and long jobs you do not need to wait for: the call answers at once with a task id. Read its output later with ${read}; stop it with ${stop}. It runs in the same sandbox and is killed at its timeout or when this conversation ends.`
const unsandboxedDoc = 'Run outside the sandbox, e.g. for network access. Only when the user asked for it: it needs the host\'s permission and the user\'s approval.'

export const shellTool = defineTool<ShellInput>({
  name: 'shell',
  dialects: {
    revka: {
      name: 'shell',
      description: guide,
      schema: z.strictObject({
        command,
        approved: z.boolean().describe('Set to true to approve a medium- or high-risk command explicitly, when the user has agreed to it.').optional(),
        timeout_secs: z.number().int().positive().describe('Seconds before the command is killed (default 60; in the background 1800).').optional(),
        grant_phrase: grantPhrase.optional(),
        unsandboxed: z.boolean().describe(unsandboxedDoc).optional(),
        background: z.boolean().describe(backgroundDoc('task_output', 'task_stop')).optional(),
      }),
      toCanonical: (i) => i as unknown as ShellInput,
    },
    claude: {
      name: 'Bash',
      description: guide,
      schema: z.strictObject({
        command,
        timeout: z
          .number()
          .positive()
          .describe('Milliseconds before the command is killed: default 120000, at most 600000 in the foreground; with run_in_background, how long it may run (default 1800000, at most 7200000).')
          .optional(),
        description: z.string().describe('What the command does, in 5-10 words, for the user.').optional(),
        run_in_background: z.boolean().describe(backgroundDoc('TaskOutput (or Read of the output path it names)', 'TaskStop')).optional(),
        dangerouslyDisableSandbox: z.boolean().describe(unsandboxedDoc).optional(),
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: ({ timeout, run_in_background, dangerouslyDisableSandbox, ...rest }) =>
        ({
          ...rest,
          ...(timeout !== undefined ? { timeout_secs: Math.max(1, Math.ceil((timeout as number) / 1000)) } : {}),
          ...(run_in_background === true ? { background: true } : {}),
          ...(dangerouslyDisableSandbox !== undefined ? { unsandboxed: dangerouslyDisableSandbox } : {}),
        }) as ShellInput,      // Claude Code's BashOutput: a command that answers was not interrupted (a killed one is an error).
      present: (out) => ({ ...out, data: { interrupted: false, ...out.data } }),
    },
    gemini: {
      name: 'run_shell_command',
      description: `${guide}
- To run a server or watcher in the background, set is_background to true (do not use &): the call answers with a task id; read its output with task_output and stop it with task_stop.`,
      schema: z.strictObject({
        command: command.describe('Exact command to execute as `sh -c <command>`.'),
        description: z.string().describe('Brief description of the command for the user, one sentence.').optional(),
        dir_path: z.string().describe('The folder to run the command in, relative to the workspace; default the workspace root.').optional(),
        is_background: z.boolean().describe(backgroundDoc('task_output', 'task_stop')).optional(),
        delay_ms: z.number().int().min(0).describe('With is_background: milliseconds to wait before answering, to show the first output (at most 30000).').optional(),
        additional_permissions: z
          .object({
            network: z.boolean().optional(),
            fileSystem: z.object({ read: z.array(z.string()).optional(), write: z.array(z.string()).optional() }).optional(),
          })
          .describe('Asks to run the command outside the sandbox (network, or paths beyond the workspace): only when a sandboxed run failed for that reason; it needs the host\'s permission and the user\'s approval.')
          .optional(),
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: ({ command, dir_path, is_background, additional_permissions, ...rest }) => {
        const extra = additional_permissions as { network?: boolean; fileSystem?: { read?: string[]; write?: string[] } } | undefined
        const wider = extra?.network === true || (extra?.fileSystem?.read?.length ?? 0) > 0 || (extra?.fileSystem?.write?.length ?? 0) > 0
        const dir = typeof dir_path === 'string' && dir_path !== '' && dir_path !== '.' ? dir_path : undefined
        return {
          ...rest,
          // A folder to run in is a `cd` the command could have written itself: it is rated and sandboxed with it.
          command: dir ? `cd -- '${dir.replaceAll("'", "'\\''")}' && ${command as string}` : command,
          ...(is_background === true ? { background: true } : {}),
          ...(wider ? { unsandboxed: true } : {}),
        } as ShellInput
      },
      present: geminiShellAnswer,
    },
  },
  effect,
  admit,
  run,
})

/** Every simple command's rating, memoised per call input (effect, admit and run each need it). */
const ratings = new WeakMap<ShellInput, Classification>()
function rate(input: ShellInput, ctx: ToolContext): Classification {
  let c = ratings.get(input)
  if (!c) {
    c = classifyCommand(input.command, { workspace: ctx.workspace, allowedPaths: ctx.allowedPaths, home: ctx.home })
    ratings.set(input, c)
  }
  return c
}

/**
 * A low rating, checked against the disk before a command runs unsandboxed: a path it
 * names that leads outside the workspace and allowedPaths through a link (a cloned
 * repository can carry `notes -> ~/.ssh/id_rsa`), as a glob expands, after a `cd`, or
 * inside a folder `diff -r` reads, makes it medium (../process/links-out.ts).
 */
async function throughLinks(c: Classification, ctx: ToolContext): Promise<Classification> {
  if (c.risk !== 'low') return c
  const reason = await linkOutside(c.commands, [ctx.workspace, ...ctx.allowedPaths])
  return reason === undefined ? c : { ...c, risk: 'medium', reason }
}

function effect(input: ShellInput, ctx: ToolContext): CallEffect {
  const c = rate(input, ctx)
  return {
    sideEffect: true,
    // read_only runs low-risk commands only.
    write: c.risk !== 'low',
    // 'shell:medium' gates medium and high commands; 'shell:low' gates every command.
    labels: RISKS.slice(0, RISKS.indexOf(c.risk) + 1).map((r) => `shell:${r}`),
    readOnlyMessage: `This session is read-only, so only low-risk commands run; this one is rated ${c.risk} (${c.reason}). Use a read-only command, or tell the user what you would run.`,
  }
}

/** Where each admitted call runs, decided at admission. */
const placed = new WeakMap<ShellInput, SandboxBackend>()

/**
 * Where the command runs: the toolkit's sandbox, or none when the model asks for an
 * unsandboxed run that the host allows. BACKEND_UNAVAILABLE when the sandbox asked for
 * cannot start; COMMAND_DENIED when the host does not allow unsandboxed runs.
 */
async function place(input: ShellInput, ctx: ToolContext): Promise<SandboxBackend> {
  const known = placed.get(input)
  if (known) return known
  const where = await ctx.sandbox.backend()
  if (where.backend === null) {
    throw new FsgateError(
      'BACKEND_UNAVAILABLE',
      `The shell sandbox (${ctx.sandbox.options.kind}) cannot start here, so no command runs: ${clip(where.unavailable, 100)}. Tell the user; the host can install it or choose policy.sandbox 'auto'.`,
      { data: { sandbox: ctx.sandbox.options.kind } },
    )
  }
  let backend = where.backend
  if (input.unsandboxed === true && backend !== 'none') {
    if (!ctx.allowUnsandboxed) {
      throw new FsgateError(
        'COMMAND_DENIED',
        'This toolkit runs every command in its sandbox and does not allow unsandboxed runs. Run the command without dangerouslyDisableSandbox (unsandboxed), or tell the user what it needs (network, a path outside the workspace).',
        { data: { sandbox: backend } },
      )
    }
    backend = 'none'
  }
  placed.set(input, backend)
  return backend
}

/**
 * The allow and deny lists, then approval in supervised autonomy: in a sandbox only a
 * high rating needs it (the sandbox contains the rest, but not the loss of the
 * workspace's work); outside one, anything not known to be read-only, and every run
 * the model asked to take out of the sandbox.
 */
async function admit(input: ShellInput, ctx: ToolContext): Promise<void> {
  refuseListed(rate(input, ctx), ctx)
  const backend = await place(input, ctx)
  const c = backend === 'none' ? await throughLinks(rate(input, ctx), ctx) : rate(input, ctx)
  if (ctx.preset.autonomy !== 'supervised') return
  const unsandboxed = backend === 'none'
  const escaped = unsandboxed && input.unsandboxed === true
  if (!escaped && (unsandboxed ? c.risk === 'low' : c.risk !== 'high')) return
  const risk = c.risk === 'low' ? 'medium' : c.risk
  const reason = escaped ? `it asks to run outside the sandbox${c.risk === 'low' ? '' : `, and ${c.reason}`}` : c.reason
  const what = escaped ? 'This command asks to run outside the sandbox' : `This command is rated ${risk} risk (${clip(reason, 60)})${unsandboxed ? ' and there is no sandbox here' : ''}`
  const described = input.description?.trim() ? { description: clip(input.description.trim(), 500) } : {}
  const data = { risk, reason, sandbox: backend, ...described }
  // The model's own flag (revka, seed 002) approves what the sandbox holds, never a way out of it.
  if (ctx.preset.approval === 'model' && !escaped) {
    if (input.approved === true) return
    throw new FsgateError('APPROVAL_REQUIRED', `${what}, so it needs approval. Ask the user; if they agree, repeat the call with approved set to true.`, { data })
  }
  if (ctx.onApproval) {
    let yes: boolean
    try {
      yes = (await ctx.onApproval({ sessionId: ctx.sessionId, tool: ctx.calledAs, command: input.command, risk, reason, sandboxed: !unsandboxed, ...described })) === true
    } catch (err) {
      throw new FsgateError('APPROVAL_REQUIRED', `Asking the user to approve this ${risk}-risk command failed (${clip(err instanceof Error ? err.message : String(err), 80)}), so it was not run. Tell the user, or retry later.`, {
        data: { ...data, declined: false },
      })
    }
    if (yes) return
    throw new FsgateError('APPROVAL_REQUIRED', `The user declined this ${risk}-risk command (${clip(reason, 60)}); it was not run. Do not retry it unless the user asks.`, {
      data: { ...data, declined: true },
    })
  }
  const grants = ctx.approvals
  // Bound to the command and to where it runs: a phrase for a sandboxed run opens no unsandboxed one.
  const key = `${unsandboxed ? 'unsandboxed' : 'sandboxed'}\0${input.command}`
  if (input.grant_phrase !== undefined && grants.redeem(key, input.grant_phrase, (p, after) => ctx.consent.userSaid(p, after))) return
  const { nonce, phrase } = grants.issue(key, ctx.consent.messageCount)
  const refused = input.grant_phrase !== undefined
  // The phrase goes to the host (data), not into the text the model reads: the user
  // sees it in the host's UI and says it, so the model cannot approve itself.
  throw new FsgateError(
    'APPROVAL_REQUIRED',
    `${refused ? 'That grant_phrase was refused. ' : ''}${what}, so the user must approve it. Ask them to; they were shown a phrase to reply with. Then repeat the call with grant_phrase set to what they wrote.`,
    { nonce, data: { ...data, nonce, grantPhrase: phrase, command: input.command, refused } },
  )
}

/** COMMAND_DENIED for a program on the deny list, or off the allow list (wrappers included). */
function refuseListed(c: Classification, ctx: ToolContext): void {
  const denied = ctx.deniedCommands
  const allowed = ctx.preset.allowedCommands
  for (const cmd of c.commands) {
    for (const name of [...cmd.wrappers, cmd.name]) {
      if (name === '') {
        // Neither list can judge a program named by a variable, a substitution or a glob.
        if (allowed || denied.length > 0) {
          throw new FsgateError(
            'COMMAND_DENIED',
            'The command runs a program whose name is only known when it runs (a variable, substitution or glob), which the command lists cannot judge. Name the program directly.',
            { data: { command: null } },
          )
        }
        continue
      }
      if (denied.includes(name)) {
        throw new FsgateError('COMMAND_DENIED', `${clip(name, 60)} is on this toolkit's list of denied commands. Do it another way, or tell the user.`, { data: { command: clip(name, 200) } })
      }
      if (allowed && !allowed.includes(name)) {
        throw new FsgateError('COMMAND_DENIED', `${clip(name, 60)} is not on this toolkit's list of allowed commands (${clip(allowed.join(', '), 300)}). Use one of those, or tell the user.`, {
          data: { command: clip(name, 200), allowed: [...allowed] },
        })
      }
    }
  }
}

async function run(input: ShellInput, ctx: ToolContext): Promise<ToolOutput> {
  const timeoutSecs = shellTimeoutSecs(input.timeout_secs, false, ctx)
  const backend = await place(input, ctx)
  const launch = await ctx.sandbox.launch(backend, input.command)
  if (input.background) return startBackground(ctx, { command: input.command, timeoutSecs: input.timeout_secs, delayMs: input.delay_ms, backend, launch })
  const listLinks = (root: string) => listGitlinks(ctx, root)
  // bwrap mounts the git paths read-only; the other backends have them checked after.
  // Commands that overlap in a root share its note and the last one checks it.
  let guarded: Awaited<ReturnType<typeof enterGitGuard>> | null = null
  try {
    guarded = backend === 'none' ? null : await enterGitGuard([ctx.workspace, ...ctx.allowedPaths], listLinks, backend === 'bwrap' ? 'mounted' : 'checked')
  } catch (err) {
    await launch.done().catch(() => {})
    throw err
  }
  let r: RunResult
  let guard: GuardReport & { waiting?: boolean } = emptyReport()
  try {
    r = await runProcess({
      file: launch.file,
      args: launch.args,
      cwd: ctx.workspace,
      env: { ...childEnv(process.env, ctx.envPassthrough), ...launch.env },
      timeoutMs: timeoutSecs * 1000,
      maxOutputBytes: ctx.limits.shellOutputBytes,
      signal: ctx.signal,
      registry: ctx.processes,
      // What leaves the process group is found by its mark and killed. bwrap needs none of
      // it (its PID namespace dies with the command), nor Landlock (its filter keeps every
      // process in the group).
      sweep: backend === 'none' || backend === 'seatbelt',
      confine: launch.confine,
    })
  } catch (err) {
    throw new FsgateError('BACKEND_UNAVAILABLE', `The command could not be started (${clip(err instanceof Error ? err.message : String(err), 100)}). Check the command, or tell the user.`, { data: { sandbox: backend } })
  } finally {
    // Before the private TMPDIR goes: a `.git` moved there is found and moved back.
    if (guarded) {
      const lookIn = launch.env.TMPDIR && launch.backend !== 'bwrap' ? [launch.env.TMPDIR] : []
      guard = await leaveGitGuard(guarded, listLinks, { shown: (abs) => displayPath(ctx.workspace, abs), lookIn, done: launch.done })
    } else await launch.done().catch(() => {})
  }
  const fitted = await fitOutput(ctx, r)
  const data = {
    exitCode: r.exitCode,
    signal: r.signal,
    stdout: fitted.stdout,
    stderr: fitted.stderr,
    stdoutBytes: r.stdoutBytes,
    stderrBytes: r.stderrBytes,
    truncated: r.truncated,
    durationMs: r.durationMs,
    timeoutSecs,
    sandbox: backend,
    ...(guard.restored.length > 0 ? { restored: guard.restored } : {}),
    ...(guard.quarantined.length > 0 ? { quarantined: guard.quarantined } : {}),
    ...(guard.missing.length > 0 ? { missing: guard.missing } : {}),
    ...(guard.failed.length > 0 ? { unrestored: guard.failed } : {}),
    ...(guard.waiting ? { gitCheckWaits: true } : {}),
  }
  let shown = report({ ...r, ...fitted })
  if (guard.restored.length > 0) {
    shown += `\n[fsgate put back ${clip(guard.restored.join(', '), 300)}: the command changed them, and they run code later, so commands may not change them]`
  }
  if (guard.quarantined.length > 0) {
    shown += `\n[fsgate moved aside ${clip(guard.quarantined.join(', '), 300)}: a repository the command set up or changed, whose config or hooks would run code]`
  }
  if (guard.missing.length > 0) {
    shown += `\n[the command moved ${clip(guard.missing.join(', '), 200)} away and fsgate did not find it again: tell the user]`
  }
  if (guard.failed.length > 0) {
    shown += `\n[fsgate could not put back ${clip(guard.failed.join(', '), 300)}, which run code later: tell the user to look before running git here]`
  }
  if (backend === 'none' && ctx.sandbox.options.kind !== 'none' && input.unsandboxed !== true) shown += '\n[ran without a sandbox: none can start on this machine]'
  if (r.killed === 'timeout') {
    throw new FsgateError('TIMEOUT', `The command was killed, with every process it started, after ${timeoutSecs} s. Output so far:\n${shown}\nMake it faster, run less at once, or pass a longer timeout.`, { data })
  }
  if (r.killed) ctx.stop.check()
  if (r.killed) throw new AbortedError('ABORTED', 'The call was cancelled; the command and every process it started were killed.', { data })
  return { content: [text(shown)], data }
}

/** gemini-cli's answer: `Output: …`, then `Exit Code:` and `Signal:` when it did not end well. */
function geminiShellAnswer(out: ToolOutput): ToolOutput {
  const d = out.data as { backgroundTaskId?: string; stdout: string; stderr: string; exitCode: number | null; signal: string | null }
  if (d.backgroundTaskId) return out
  const output = [d.stdout, d.stderr].filter((s) => s !== '').map((s) => s.replace(/\n$/, '')).join('\n')
  const parts = [`Output: ${output || '(empty)'}`]
  if (d.exitCode !== null && d.exitCode !== 0) parts.push(`Exit Code: ${d.exitCode}`)
  if (d.signal) parts.push(`Signal: ${d.signal}`)
  // fsgate's own notes (git paths put back, a missing sandbox) stay.
  const notes = (out.content[0] as { text: string }).text.split('\n').filter((l) => l.startsWith('[fsgate') || l.startsWith('[ran without'))
  return { ...out, content: [text([...parts, ...notes].join('\n'))] }
}

/**
 * stdout and stderr within the result budget: each keeps its first and last lines, the
 * middle cut at a line and named, so the model can see it with sed -n or a file Read.
 * stderr has at least a quarter of the budget, stdout the rest.
 */
async function fitOutput(ctx: ToolContext, r: RunResult): Promise<{ stdout: string; stderr: string }> {
  const budget = textTokens(ctx)
  if (await fits(ctx, r.stdout + r.stderr, budget)) return { stdout: r.stdout, stderr: r.stderr }
  const errTokens = r.stderr === '' ? 0 : await tokensOf(ctx, r.stderr)
  const outTokens = r.stdout === '' ? 0 : await tokensOf(ctx, r.stdout)
  const errBudget = Math.min(errTokens, Math.max(Math.floor(budget / 4), budget - outTokens))
  const marker = (stream: string, bytesCut: boolean) => (left: { from: number; to: number; of: number }) =>
    bytesCut
      ? `[… ${stream} from line ${num(left.from)} on, to the last ${num(left.of - left.to)} lines, cut to fit the limit of ${num(budget)} tokens (the middle was also past limits.shellOutputBytes); to see it, send the output to a file and read it with offset=${left.from} …]`
      : `[… ${stream} lines ${num(left.from)}-${num(left.to)} of ${num(left.of)} cut to fit the limit of ${num(budget)} tokens; to see them, send the output to a file and read it with offset=${left.from}, or run it again with | sed -n '${left.from},${left.to}p' …]`
  const cutBytes = r.truncated
  const stderr = (await headTailWithin(ctx, r.stderr, errBudget, marker('stderr', cutBytes))).text
  const stdout = (await headTailWithin(ctx, r.stdout, budget - errBudget, marker('stdout', cutBytes))).text
  return { stdout, stderr }
}

/** What the model reads: stdout, then stderr, then how it ended when it did not end well. */
function report(r: RunResult): string {
  const parts: string[] = []
  if (r.stdout) parts.push(r.stdout.replace(/\n$/, ''))
  if (r.stderr) parts.push(`[stderr]\n${r.stderr.replace(/\n$/, '')}`)
  if (r.exitCode !== 0 && r.killed === null) parts.push(r.signal ? `[killed by ${r.signal}]` : `[exit code ${r.exitCode}]`)
  if (parts.length === 0) parts.push('(no output)')
  return parts.join('\n')
}
