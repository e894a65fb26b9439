/**
 * bash (SPEC §8.2, the anthropic dialect): Anthropic's bash tool (bash_20250124), a
 * persistent session. The working folder and the exported variables carry over from one
 * command to the next within one fsgate session, and `restart: true` starts afresh.
 *
 * No shell process outlives a call: each command runs through shell (its risk rating,
 * approval, sandbox, timeout and output cap) as a fresh bash that first goes back to the
 * session's folder and variables, and that prints where it ended up when it exits (behind
 * a mark made for that call, taken out of what the model sees). What is rated and
 * approved is the command as it really runs: after a `cd -- <folder>` when the session
 * has left the workspace root, and with the variables that change which programs run
 * (PATH, LD_PRELOAD, …) set before it. A command runs in the state it was rated in, even
 * when another command of the session changed the state while it waited for approval;
 * what it changes is then carried into the session's state as it is by then (so commands
 * that run at the same time keep each other's changes).
 */
import { randomBytes } from 'node:crypto'

import { z } from 'zod'

import { FsgateError, InvalidInputError } from '../errors.js'
import { childEnv, isEnvName } from '../policy/env.js'
import { text, type ToolOutput } from '../result.js'
import { defineTool, type CallEffect, type ToolContext } from '../tool.js'
import { command, grantPhrase, shellTool, type ShellInput } from './shell.js'

export interface BashInput {
  command?: string
  restart?: boolean
  grant_phrase?: string
}

/** What a session's bash carries from one command to the next. */
interface BashState {
  /** The folder the next command starts in (the workspace root at first). */
  cwd: string
  /** Variables set or changed, exported to every later command. */
  env: Map<string, string>
  /** Variables of the base environment the session has unset. */
  unset: Set<string>
}

/**
 * Each session's state, keyed by its read ledger: the one object every call of a session
 * is given that goes away with the session.
 */
const STATES = new WeakMap<object, BashState>()

/** Variables that are the shell's or the sandbox's own, never carried over. */
const OWN = new Set(['PWD', 'OLDPWD', 'SHLVL', '_', 'TMPDIR', 'FSGATE_RUN', 'BASH_EXECUTION_STRING'])

/** Variables that change which program runs or what code it loads: set before the command that is rated. */
const CODE = /^(PATH|LD_[A-Z_]+|DYLD_[A-Z_]+|BASH_ENV|ENV|IFS|PS4|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|CDPATH|GLOBIGNORE|HOME|SHELL|NODE_OPTIONS|NODE_PATH|PYTHON[A-Z_]*|PERL5?[A-Z_]*|RUBY[A-Z_]*|GIT_[A-Z_]+|[A-Z_]*EDITOR|VISUAL|PAGER|MANPAGER|LESS[A-Z_]*|XDG_CONFIG_HOME|ZDOTDIR|RUSTC[A-Z_]*|CC|CXX|MAKEFLAGS|JAVA_TOOL_OPTIONS|NPM_CONFIG_[A-Z_]+)$/

/** Most bytes of variables carried over; past it, the session keeps the ones it had. */
const STATE_BYTES = 64 * 1024

export const bashTool = defineTool<BashInput>({
  name: 'bash',
  dialects: {
    anthropic: {
      name: 'bash',
      description: `Runs a command in a bash session. The working folder and exported variables persist between calls; restart: true starts a fresh session.
- Each command is killed, with everything it started, after its timeout (60 s by default); nothing keeps running in the background between calls.
- Commands run in a sandbox: the workspace is writable, the rest read-only, no network. Risky commands may need the user's approval.`,
      schema: z.strictObject({
        command: command.describe('The bash command to run.').optional(),
        restart: z.boolean().describe('Set to true to restart the bash session (a fresh working folder and environment).').optional(),
        grant_phrase: grantPhrase.optional(),
      }),
      toCanonical: (i) => i as unknown as BashInput,
    },
  },
  effect,
  admit,
  run,
})

function stateOf(ctx: ToolContext): BashState {
  let state = STATES.get(ctx.ledger)
  if (!state) {
    state = fresh(ctx)
    STATES.set(ctx.ledger, state)
  }
  return state
}

function fresh(ctx: ToolContext): BashState {
  return { cwd: ctx.workspace, env: new Map(), unset: new Set() }
}

/** Single-quoted for sh and bash. */
export function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

function copy(state: BashState): BashState {
  return { cwd: state.cwd, env: new Map(state.env), unset: new Set(state.unset) }
}

/** The command as it really runs, for the rating and the approval: shell's input for it, and the state it runs in. */
const asRun = new WeakMap<BashInput, { shell: ShellInput; state: BashState }>()
function rated(input: BashInput, ctx: ToolContext): { shell: ShellInput; state: BashState } {
  let known = asRun.get(input)
  if (!known) {
    // A restart runs the command in a fresh session: rate it there. The state is copied:
    // the command runs in it, whatever the session's other commands change meanwhile.
    const state = copy(input.restart === true ? fresh(ctx) : stateOf(ctx))
    const code = [...state.env].filter(([name]) => CODE.test(name))
    const set = code.length > 0 ? `${code.map(([n, v]) => `${n}=${quote(v)}`).join(' ')} true\n` : ''
    const cd = state.cwd !== ctx.workspace ? `cd -- ${quote(state.cwd)}\n` : ''
    known = { shell: { command: `${set}${cd}${input.command ?? ''}`, grant_phrase: input.grant_phrase }, state }
    asRun.set(input, known)
  }
  return known
}

function shellInput(input: BashInput, ctx: ToolContext): ShellInput {
  return rated(input, ctx).shell
}

function effect(input: BashInput, ctx: ToolContext): CallEffect {
  if (input.command === undefined) return { sideEffect: false, write: false }
  return shellTool.effect?.(shellInput(input, ctx), ctx) ?? { sideEffect: true, write: true }
}

async function admit(input: BashInput, ctx: ToolContext): Promise<void> {
  if (input.command === undefined) {
    if (input.restart === true) return
    throw new InvalidInputError('INVALID_INPUT', 'Give a command to run, or restart: true to restart the bash session.', { data: { field: 'command' } })
  }
  await shellTool.admit?.(shellInput(input, ctx), ctx)
}

async function run(input: BashInput, ctx: ToolContext): Promise<ToolOutput> {
  if (input.restart === true) {
    STATES.delete(ctx.ledger)
    if (input.command === undefined) return { content: [text('tool has been restarted.')], data: { restarted: true } }
  }
  const { state } = rated(input, ctx)
  const mark = `__fsgate_state_${randomBytes(12).toString('hex')}__`
  let out: ToolOutput
  try {
    out = await shellTool.run({ command: script(input.command as string, state, ctx, mark) }, ctx)
  } catch (err) {
    if (err instanceof FsgateError && err.code === 'TIMEOUT') {
      throw new FsgateError(err.code, err.message.replace(/Make it faster, run less at once, or pass a longer timeout\.$/, 'Make it faster or run less at once; the session keeps its folder and variables from before this command.'), {
        data: err.data,
      })
    }
    throw err
  }
  const data = out.data as Record<string, unknown> & { stdout: string }
  const found = takeState(data.stdout, mark)
  let shown = out.content[0]?.type === 'text' ? out.content[0].text : ''
  let note = ''
  if (found) {
    shown = removeBlock(shown, mark)
    note = keep(found, state, ctx)
  } else {
    note = '\n[the working folder and variables could not be read after this command (its output was redirected or cut); they stay as they were]'
  }
  if (shown === '' || shown.startsWith('[exit code') || shown.startsWith('[killed')) shown = shown === '' ? '(no output)' : `(no output)\n${shown}`
  return {
    content: [text(`${shown}${note}`)],
    data: { ...data, stdout: found ? found.stdout : data.stdout, cwd: stateOf(ctx).cwd },
  }
}

/** The bash script that runs the command in the session's state and prints the state it leaves. */
function script(command: string, state: BashState, ctx: ToolContext, mark: string): string {
  const lines = [
    `__fsgate_done() { __fsgate_s=$?; IFS=$' \\t\\n'; printf '\\n%s\\n%s\\0' ${quote(mark)} "$(pwd)"; for __fsgate_n in $(compgen -e); do printf '%s=%s\\0' "$__fsgate_n" "\${!__fsgate_n}"; done; printf '%s' ${quote(mark)}; exit $__fsgate_s; }`,
    'trap __fsgate_done EXIT',
    `cd -- ${quote(state.cwd)} 2>/dev/null || { printf '%s\\n' ${quote(`[the working folder ${state.cwd} is gone; starting in the workspace]`)} >&2; cd -- ${quote(ctx.workspace)}; }`,
    ...[...state.env].map(([name, value]) => `export ${name}=${quote(value)}`),
    ...[...state.unset].map((name) => `unset ${name}`),
    `eval ${quote(command)}`,
  ]
  return `exec /bin/bash --noprofile --norc -c ${quote(lines.join('\n'))}`
}

interface Found {
  cwd: string
  env: Map<string, string>
  /** The command's own stdout, without the state. */
  stdout: string
}

/** The state printed behind `mark` at the end of stdout, if it is there. */
function takeState(stdout: string, mark: string): Found | null {
  const start = stdout.lastIndexOf(`\n${mark}\n`)
  if (start < 0 || !stdout.endsWith(mark)) return null
  const block = stdout.slice(start + mark.length + 2, stdout.length - mark.length)
  const parts = block.split('\0')
  const cwd = parts.shift() ?? ''
  const env = new Map<string, string>()
  for (const entry of parts) {
    const eq = entry.indexOf('=')
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1))
  }
  if (!cwd.startsWith('/')) return null
  return { cwd, env, stdout: stdout.slice(0, start) }
}

/** The text the model reads, without the state block. */
function removeBlock(shown: string, mark: string): string {
  const start = shown.lastIndexOf(`\n${mark}\n`)
  const end = shown.indexOf(mark, start + mark.length + 2)
  if (start < 0 || end < 0) return shown
  let before = shown.slice(0, start)
  const after = shown.slice(end + mark.length)
  if (before.endsWith('\n') && (after === '' || after.startsWith('\n'))) before = before.slice(0, -1)
  return `${before}${after}`.replace(/^\n/, '')
}

/**
 * Keeps the folder and the variables the command left, for the next command: what it
 * changed from the state it ran in (`from`) is carried into the session's state as it is
 * now. A note when something was not kept.
 */
function keep(found: Found, from: BashState, ctx: ToolContext): string {
  const base = childEnv(process.env, ctx.envPassthrough)
  const to: BashState = { cwd: found.cwd, env: new Map(), unset: new Set() }
  let bytes = 0
  for (const [name, value] of found.env) {
    if (OWN.has(name) || !isEnvName(name) || base[name] === value) continue
    to.env.set(name, value)
    bytes += name.length + value.length
  }
  for (const name of Object.keys(base)) if (!OWN.has(name) && !found.env.has(name)) to.unset.add(name)
  const into = stateOf(ctx)
  if (to.cwd !== from.cwd) into.cwd = to.cwd
  if (bytes > STATE_BYTES) return `\n[the exported variables are over ${STATE_BYTES / 1024} KiB, so they were not kept; the next command starts with the ones from before]`
  for (const [name, value] of to.env) {
    if (from.env.get(name) === value) continue
    into.env.set(name, value)
    into.unset.delete(name)
  }
  for (const name of from.env.keys()) {
    if (to.env.has(name)) continue
    into.env.delete(name)
    if (to.unset.has(name)) into.unset.add(name)
  }
  for (const name of to.unset) {
    if (from.unset.has(name)) continue
    into.unset.add(name)
    into.env.delete(name)
  }
  for (const name of from.unset) if (!to.unset.has(name) && !to.env.has(name)) into.unset.delete(name)
  return ''
}
