/**
 * shell (Bash in the claude dialect), SPEC §3.8 and §8.1, seed 002: `sh -c` in the
 * workspace, in its own process group, with a timeout that kills the whole group, the
 * cleared environment, output bounded while it streams, inside the sandbox
 * (../process/sandbox.ts), and the risk rating of a real parse deciding what needs
 * approval: inside a sandbox only what the sandbox cannot contain (a high rating, an
 * unsandboxed run), outside one everything not on the known-safe list.
 */
import { realpath } from 'node:fs/promises'
import path from 'node:path'

import { z } from 'zod'

import { AbortedError, clip, FsgateError } from '../errors.js'
import { childEnv } from '../policy/env.js'
import { within } from '../policy/paths.js'
import { classifyCommand, type Classification } from '../policy/risk.js'
import { listGitlinks } from '../git/run.js'
import { noteGitPaths, quarantineNestedRepos, restoreGitPaths } from '../process/git-guard.js'
import { runProcess, type RunResult } from '../process/run.js'
import type { SandboxBackend } from '../process/sandbox.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type CallEffect, type ToolContext } from '../tool.js'

export interface ShellInput {
  command: string
  /** revka: the model's approval of a medium or high command (enough only in the revka preset). */
  approved?: boolean
  timeout_secs?: number
  /** The phrase the user said to approve this exact command (guarded preset). */
  grant_phrase?: string
  /** Run outside the sandbox: only where the host allows it, and then with the user's approval. */
  unsandboxed?: boolean
}

const RISKS = ['low', 'medium', 'high'] as const

/** The longest timeout a call may ask for, in seconds, unless limits.shellTimeoutSecs is longer. */
const MAX_TIMEOUT_SECS = 600

const command = z.string().min(1, 'must not be empty').max(65_536, 'is longer than 64 KiB').describe('The shell command to run, with sh -c, in the workspace folder.')
const grantPhrase = z
  .string()
  .describe('Only when a previous call failed with APPROVAL_REQUIRED and the user gave you a phrase for this command: that exact phrase. Never invent it.')

const guide = `Runs a shell command with sh -c in the workspace folder and returns its stdout, stderr and exit code.
- Use it for builds, tests, git operations the other tools lack, and programs; use the file tools to read, search and change files.
- The environment is cleared: only PATH, HOME, LANG and a few others reach the command. Set anything else inline (FOO=1 cmd).
- Commands are killed, with everything they started, after their timeout (default 60 s); nothing keeps running after the call returns, so do not start servers in the background.
- Commands run in a sandbox: the workspace is writable, the rest of the file system read-only, there is no network, and .git/config and .git/hooks cannot be changed.
- Output over 1 MiB keeps its start and end. Risky commands (deleting, rewriting history) may need the user's approval.`
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
        timeout_secs: z.number().int().positive().describe('Seconds before the command is killed (default 60).').optional(),
        grant_phrase: grantPhrase.optional(),
        unsandboxed: z.boolean().describe(unsandboxedDoc).optional(),
      }),
      toCanonical: (i) => i as unknown as ShellInput,
    },
    claude: {
      name: 'Bash',
      description: guide,
      schema: z.strictObject({
        command,
        timeout: z.number().int().positive().describe('Milliseconds before the command is killed (default 60000, at most 600000).').optional(),
        description: z.string().describe('What the command does, in 5-10 words.').optional(),
        run_in_background: z
          .literal(false, { error: 'background commands are not supported here: every process a command starts ends with the call. Run it in the foreground with a timeout' })
          .describe('Not supported: must be false or absent.')
          .optional(),
        dangerouslyDisableSandbox: z.boolean().describe(unsandboxedDoc).optional(),
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: ({ timeout, description: _d, run_in_background: _b, dangerouslyDisableSandbox, ...rest }) =>
        ({
          ...rest,
          ...(timeout !== undefined ? { timeout_secs: Math.max(1, Math.ceil((timeout as number) / 1000)) } : {}),
          ...(dangerouslyDisableSandbox !== undefined ? { unsandboxed: dangerouslyDisableSandbox } : {}),
        }) as ShellInput,
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
 * A low rating, checked against the disk before a command runs unsandboxed: an argument
 * that names a link (or a path through one) leading outside the workspace and
 * allowedPaths makes it medium (a cloned repository can carry `notes -> ~/.ssh/id_rsa`).
 */
async function throughLinks(c: Classification, ctx: ToolContext): Promise<Classification> {
  if (c.risk !== 'low') return c
  const roots = [ctx.workspace, ...ctx.allowedPaths]
  for (const cmd of c.commands) {
    for (const word of cmd.argv.slice(1)) {
      const arg = word.includes('=') && word.startsWith('-') ? word.slice(word.indexOf('=') + 1) : word
      if (arg === '' || arg.startsWith('-')) continue
      const real = await realpath(path.resolve(ctx.workspace, arg)).catch(() => null)
      if (real === null || roots.some((root) => within(root, real))) continue
      const reason = `${clip(arg, 60)} leads outside the workspace through a link`
      return { ...c, risk: 'medium', reason }
    }
  }
  return c
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
      `The shell sandbox (${ctx.sandbox.options.kind}) cannot start here, so no command runs: ${clip(where.unavailable, 300)}. Tell the user; the host can install it or choose policy.sandbox 'auto'.`,
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
  const what = escaped ? 'This command asks to run outside the sandbox' : `This command is rated ${risk} risk (${reason})${unsandboxed ? ' and there is no sandbox here' : ''}`
  const data = { risk, reason, sandbox: backend }
  if (ctx.preset.approval === 'model') {
    if (input.approved === true) return
    throw new FsgateError('APPROVAL_REQUIRED', `${what}, so it needs approval. Ask the user; if they agree, repeat the call with approved set to true.`, { data })
  }
  if (ctx.onApproval) {
    let yes: boolean
    try {
      yes = (await ctx.onApproval({ sessionId: ctx.sessionId, tool: ctx.calledAs, command: input.command, risk, reason, sandboxed: !unsandboxed })) === true
    } catch (err) {
      throw new FsgateError('APPROVAL_REQUIRED', `Asking the user to approve this ${risk}-risk command failed (${clip(err instanceof Error ? err.message : String(err), 200)}), so it was not run.`, {
        data: { ...data, declined: false },
      })
    }
    if (yes) return
    throw new FsgateError('APPROVAL_REQUIRED', `The user declined this ${risk}-risk command (${reason}); it was not run. Do not retry it unless the user asks.`, {
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
    `${refused ? 'That grant_phrase was refused (wrong, already used, or not written by the user). ' : ''}${what}, so the user must approve it. Ask the user to approve this exact command; they have been shown a phrase to reply with. Then repeat the same call with grant_phrase set to the phrase they wrote.`,
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
  const timeoutSecs = Math.min(input.timeout_secs ?? ctx.limits.shellTimeoutSecs, Math.max(MAX_TIMEOUT_SECS, ctx.limits.shellTimeoutSecs))
  const backend = await place(input, ctx)
  const launch = await ctx.sandbox.launch(backend, input.command)
  const guarded = backend === 'none' ? null : await noteGitPaths(ctx.workspace)
  let r: RunResult
  let restored: string[] = []
  let quarantined: string[] = []
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
      sweep: true,
      confine: launch.confine,
    })
  } catch (err) {
    throw new FsgateError('BACKEND_UNAVAILABLE', `The command could not be started (${clip(err instanceof Error ? err.message : String(err), 300)}).`, { data: { sandbox: backend } })
  } finally {
    await launch.done().catch(() => {})
    if (guarded) {
      restored = await restoreGitPaths(guarded)
      quarantined = await quarantineNestedRepos(guarded, () => listGitlinks(ctx, ctx.workspace))
    }
  }
  const data = {
    exitCode: r.exitCode,
    signal: r.signal,
    stdout: r.stdout,
    stderr: r.stderr,
    stdoutBytes: r.stdoutBytes,
    stderrBytes: r.stderrBytes,
    truncated: r.truncated,
    durationMs: r.durationMs,
    timeoutSecs,
    sandbox: backend,
    ...(restored.length > 0 ? { restored } : {}),
    ...(quarantined.length > 0 ? { quarantined } : {}),
  }
  let shown = report(r)
  if (restored.length > 0) {
    shown += `\n[fsgate put back ${restored.join(', ')}: the command changed them, and they run code later, so commands may not change them]`
  }
  if (quarantined.length > 0) {
    shown += `\n[fsgate moved aside ${quarantined.join(', ')} (to .git.fsgate-quarantined-N): a nested repository the command set up, whose config and hooks the workspace's git would run]`
  }
  if (backend === 'none' && ctx.sandbox.options.kind !== 'none' && input.unsandboxed !== true) shown += '\n[ran without a sandbox: none can start on this machine]'
  if (r.killed === 'timeout') {
    throw new FsgateError('TIMEOUT', `The command was killed, with every process it started, after ${timeoutSecs} s. Output so far:\n${shown}\nMake it faster, run less at once, or pass a longer timeout.`, { data })
  }
  if (r.killed) ctx.stop.check()
  if (r.killed) throw new AbortedError('ABORTED', 'The call was cancelled; the command and every process it started were killed.', { data })
  return { content: [text(shown)], data }
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
