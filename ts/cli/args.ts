/**
 * What every command of `fsgate` is made of: its table entry (arguments, options with
 * their help, the function it runs), the context that function gets, and the helpers
 * that read positionals and option values. `--help` text and parseArgs' configuration
 * both come from the table, so they cannot drift apart.
 */
import type { Limits } from '../limits.js'
import type { ToolResult } from '../result.js'
import type { PolicyOptions, Toolkit } from '../toolkit.js'
import { type Output, UsageError } from './output.js'
import type { Place } from './where.js'

/** One option: parseArgs' type and short letter, plus what `--help` says about it. */
export interface OptionSpec {
  type: 'string' | 'boolean'
  short?: string
  /** The value's placeholder in the help, for string options. */
  arg?: string
  help: string
}

/** What a command's `run` gets: its positionals, its option values, the output, a toolkit. */
export interface CommandContext {
  /** The command's name, for its notes ("fsgate grep: …"). */
  command: string
  args: string[]
  values: Readonly<Record<string, string | boolean | undefined>>
  out: Output
  /** Where the user stands: the workspace, the current folder, and how paths map between them. */
  place: Place
  /** A toolkit for --workspace and --preset; `policy` overrides the preset's policy, `limits` its limits. */
  toolkit(options?: { policy?: PolicyOptions; limits?: Partial<Limits> }): Toolkit
}

export interface Command {
  name: string
  /** The arguments after the command name, as the usage line shows them. */
  synopsis: string
  /** One line for the command list of `fsgate --help`. */
  summary: string
  /** More for the command's own `--help`, if any. */
  details?: string
  options: Record<string, OptionSpec>
  run(ctx: CommandContext): Promise<number>
}

export const COMMON_OPTIONS: Record<'workspace' | 'preset' | 'json' | 'help', OptionSpec> = {
  workspace: {
    type: 'string',
    arg: 'DIR',
    help: 'The workspace (default: the git repository around the current folder, else the current folder)',
  },
  preset: { type: 'string', arg: 'P', help: 'guarded (default) | claude-code | revka | consent | gemini-cli' },
  json: { type: 'boolean', help: 'Print the whole result as JSON' },
  help: { type: 'boolean', short: 'h', help: 'Show this help' },
}

/** The walk switches of the search commands. */
export const WALK_OPTIONS: Record<string, OptionSpec> = {
  hidden: { type: 'boolean', help: 'Include hidden files and folders' },
  'no-ignore': { type: 'boolean', help: 'Include files that .gitignore/.ignore leave out' },
}

/** --max, --offset and --all: how much of a long list to print. */
export const PAGE_OPTIONS: Record<string, OptionSpec> = {
  max: { type: 'string', arg: 'N', help: 'Print at most N results (default 1000)' },
  offset: { type: 'string', arg: 'N', help: 'Skip the first N results (to see the next page)' },
  all: { type: 'boolean', help: 'Print every result' },
}

/** The positionals, checked to be between `min` and `max` of them. */
export function positionals(ctx: CommandContext, min: number, max: number, message: string): string[] {
  if (ctx.args.length < min || ctx.args.length > max) throw new UsageError(message)
  return ctx.args
}

export function str(ctx: CommandContext, key: string): string | undefined {
  const v = ctx.values[key]
  return typeof v === 'string' ? v : undefined
}

export function flag(ctx: CommandContext, key: string): boolean {
  return ctx.values[key] === true
}

/** An integer option: whole numbers only, or any integer with `signed` (the tool judges the range). */
export function int(ctx: CommandContext, key: string, signed = false): number | undefined {
  const v = str(ctx, key)
  if (v === undefined) return undefined
  if (signed ? !/^-?\d+$/.test(v) : !/^\d+$/.test(v)) throw new UsageError(`--${key} must be ${signed ? 'an integer' : 'a whole number'}, got '${v}'`)
  return Number(v)
}

/** One of a fixed set of values. */
export function choice<T extends string>(ctx: CommandContext, key: string, allowed: readonly T[]): T | undefined {
  const v = str(ctx, key)
  if (v !== undefined && !allowed.includes(v as T)) throw new UsageError(`--${key} must be one of ${allowed.join(', ')}, got '${v}'`)
  return v as T | undefined
}

/** The page a list command prints: skip `offset`, then at most `max` (Infinity with --all). */
export interface Page {
  offset: number
  max: number
}

export const DEFAULT_MAX = 1000

export function page(ctx: CommandContext, defaultMax = DEFAULT_MAX): Page {
  const max = int(ctx, 'max')
  const offset = int(ctx, 'offset') ?? 0
  if (flag(ctx, 'all') && max !== undefined) throw new UsageError('give --max or --all, not both')
  if (max === 0) throw new UsageError('--max must be at least 1')
  return { offset, max: flag(ctx, 'all') ? Number.POSITIVE_INFINITY : (max ?? defaultMax) }
}

/** Limits large enough for a page that ends at `end` (a finite stand-in for Infinity). */
export function upTo(end: number): number {
  return Number.isFinite(end) ? end : 2 ** 31 - 1
}

/** Calls a tool in a fresh session of the command's toolkit. */
export function call(ctx: CommandContext, tool: string, input: Record<string, unknown>, options?: Parameters<CommandContext['toolkit']>[0]): Promise<ToolResult> {
  return ctx.toolkit(options).createSession().call(tool, input)
}
