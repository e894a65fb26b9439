/**
 * The commands of `fsgate` for people, one entry each: its arguments, its options with
 * their help (the `--help` text and the parser's configuration both come from here, so
 * they cannot drift apart), and what it runs. Every tool command goes through a session's
 * `call`, the same dispatch an agent's calls pass, and prints the ToolResult via Output.
 * `mcp` is not here: it parses its own flags (see main.ts).
 */
import { readFile } from 'node:fs/promises'
import { isatty } from 'node:tty'

import { DEFAULT_LIMITS } from '../limits.js'
import { classifyCommand } from '../policy/risk.js'
import type { ToolResult } from '../result.js'
import type { PolicyOptions, Toolkit } from '../toolkit.js'
import { EXIT_OK, type Output, UsageError } from './output.js'
import { highlighter, paintDiff, paintGrep, paintLogOrBranch, paintRead, paintRisk, paintSearch, paintStatus } from './style.js'

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
  args: string[]
  values: Readonly<Record<string, string | boolean | undefined>>
  out: Output
  /** A toolkit for --workspace and --preset; `policy` overrides the preset's policy. */
  toolkit(policy?: PolicyOptions): Toolkit
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
  /** The common options this command takes (all of them unless listed). */
  common?: readonly CommonOption[]
  run(ctx: CommandContext): Promise<number>
}

export type CommonOption = 'workspace' | 'preset' | 'json'

export const COMMON_OPTIONS: Record<CommonOption | 'help', OptionSpec> = {
  workspace: { type: 'string', arg: 'DIR', help: 'The workspace; relative paths start here (default: the current folder)' },
  preset: { type: 'string', arg: 'P', help: 'guarded (default) | claude-code | revka | consent' },
  json: { type: 'boolean', help: 'Print the whole tool result as JSON' },
  help: { type: 'boolean', short: 'h', help: 'Show this help' },
}

const WALK_OPTIONS: Record<string, OptionSpec> = {
  hidden: { type: 'boolean', help: 'Include hidden files and folders' },
  'no-ignore': { type: 'boolean', help: 'Include files that .gitignore/.ignore leave out' },
}

/**
 * The policy of write and edit from the command line. The read-before-write contract and
 * the consent gate exist to keep a model from replacing what it has not seen or what the
 * user has not allowed; here the person at the terminal is the user, and typing the
 * command is the consent, so both are off. Everything else of the preset stays: paths
 * confined to the workspace, protected paths, atomic writes, working copies outside it.
 */
export const PERSON_POLICY: PolicyOptions = { readBeforeWrite: false, consentGate: false }

// ---------------------------------------------------------------------------------------
// Argument helpers

/** The positionals, checked to be between `min` and `max` of them. */
function positionals(ctx: CommandContext, min: number, max: number, message: string): string[] {
  if (ctx.args.length < min || ctx.args.length > max) throw new UsageError(message)
  return ctx.args
}

function str(ctx: CommandContext, key: string): string | undefined {
  const v = ctx.values[key]
  return typeof v === 'string' ? v : undefined
}

function flag(ctx: CommandContext, key: string): boolean {
  return ctx.values[key] === true
}

/** An integer option: whole numbers only, or any integer with `signed` (the tool judges the range). */
function int(ctx: CommandContext, key: string, signed = false): number | undefined {
  const v = str(ctx, key)
  if (v === undefined) return undefined
  if (signed ? !/^-?\d+$/.test(v) : !/^\d+$/.test(v)) throw new UsageError(`--${key} must be ${signed ? 'an integer' : 'a whole number'}, got '${v}'`)
  return Number(v)
}

/** One of a fixed set of values. */
function choice<T extends string>(ctx: CommandContext, key: string, allowed: readonly T[]): T | undefined {
  const v = str(ctx, key)
  if (v !== undefined && !allowed.includes(v as T)) throw new UsageError(`--${key} must be one of ${allowed.join(', ')}, got '${v}'`)
  return v as T | undefined
}

/** Calls a tool in a fresh session of the command's toolkit. */
function call(ctx: CommandContext, tool: string, input: Record<string, unknown>, policy?: PolicyOptions): Promise<ToolResult> {
  return ctx.toolkit(policy).createSession().call(tool, input)
}

/** Reads all of stdin. */
async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The content for `write`: from --from FILE (relative to the current folder; '-' is stdin) or stdin, as UTF-8 text. */
async function content(ctx: CommandContext): Promise<string> {
  const from = str(ctx, 'from')
  let bytes: Buffer
  if (from !== undefined && from !== '-') {
    bytes = await readFile(from).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read --from ${from}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`)
    })
  } else {
    if (isatty(0)) ctx.out.err('fsgate write: reading the content from the terminal; end it with Ctrl-D (Ctrl-Z Enter on Windows).')
    bytes = await readStdin()
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new UsageError(`the content (${from && from !== '-' ? from : 'stdin'}) is not UTF-8 text; write only writes text`)
  }
}

/** `+A -D` for a unified diff: the lines added and removed, headers left out. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0
  let removed = 0
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ') || line.startsWith('--- ')) continue
    if (line.startsWith('+')) added++
    else if (line.startsWith('-')) removed++
  }
  return { added, removed }
}

// ---------------------------------------------------------------------------------------
// The commands

const read: Command = {
  name: 'read',
  synopsis: '<path> [--offset N] [--limit N] [--pages P]',
  summary: 'Read a file as an agent sees it (numbered lines, images, PDF pages)',
  options: {
    offset: { type: 'string', arg: 'N', help: 'The first line to show (1-based)' },
    limit: { type: 'string', arg: 'N', help: 'How many lines to show' },
    pages: { type: 'string', arg: 'P', help: "PDF pages to show, e.g. '3' or '1-5'" },
  },
  async run(ctx) {
    const [file] = positionals(ctx, 1, 1, 'read takes one path')
    const input: Record<string, unknown> = { path: file, offset: int(ctx, 'offset', true), limit: int(ctx, 'limit', true), pages: str(ctx, 'pages') }
    return ctx.out.result(await call(ctx, 'file_read', input), (text, _r, s) => paintRead(text, s))
  },
}

const write: Command = {
  name: 'write',
  synopsis: '<path> [--from FILE]',
  summary: 'Write a whole file, atomically (content from --from FILE or stdin)',
  details: `Creates the file (and missing folders) or replaces it. You are the user here, so the
read-before-write check and the consent gate an agent meets are off; the path must still
be inside the workspace and not protected.`,
  options: {
    from: { type: 'string', arg: 'FILE', help: "Take the content from FILE (relative to the current folder); '-' or no --from reads stdin" },
  },
  async run(ctx) {
    const [file] = positionals(ctx, 1, 1, 'write takes one path')
    const text = await content(ctx)
    return ctx.out.result(await call(ctx, 'file_write', { path: file, content: text }, PERSON_POLICY))
  },
}

const edit: Command = {
  name: 'edit',
  synopsis: '<path> --old S --new S [--all] [--diff]',
  summary: 'Replace exact text in a file (must match once, or every match with --all)',
  details: `Matching tolerates line endings, curly quotes and trailing spaces, and keeps the
file's own encoding and style. --old '' creates a missing file or fills an empty one.
As with write, the read-before-write check and the consent gate are off.`,
  options: {
    old: { type: 'string', arg: 'S', help: 'The exact text to replace' },
    new: { type: 'string', arg: 'S', help: 'The text to put in its place' },
    all: { type: 'boolean', help: 'Replace every occurrence (default: it must occur exactly once)' },
    diff: { type: 'boolean', help: 'Also print the unified diff of the change' },
  },
  async run(ctx) {
    const [file] = positionals(ctx, 1, 1, 'edit takes one path')
    const oldString = str(ctx, 'old')
    const newString = str(ctx, 'new')
    if (oldString === undefined || newString === undefined) throw new UsageError('edit needs --old and --new')
    const input = { path: file, old_string: oldString, new_string: newString, replace_all: flag(ctx, 'all') || undefined }
    const result = await call(ctx, 'file_edit', input, PERSON_POLICY)
    const code = ctx.out.result(result)
    const diff = result.data?.diff
    if (code === EXIT_OK && !ctx.out.json && typeof diff === 'string') {
      const s = ctx.out.style
      const { added, removed } = diffStat(diff)
      ctx.out.out(`${String(result.data?.path ?? file)}: ${s.green(`+${added}`)} ${s.red(`-${removed}`)}`)
      if (flag(ctx, 'diff')) ctx.out.out(paintDiff(diff.replace(/\n$/, ''), s))
    }
    return code
  },
}

const pdf: Command = {
  name: 'pdf',
  synopsis: '<path> [--max-chars N]',
  summary: "Extract a PDF's text (every page)",
  options: { 'max-chars': { type: 'string', arg: 'N', help: 'Cut the text after N characters' } },
  async run(ctx) {
    const [file] = positionals(ctx, 1, 1, 'pdf takes one path')
    return ctx.out.result(await call(ctx, 'pdf_read', { path: file, max_chars: int(ctx, 'max-chars') }))
  },
}

const glob: Command = {
  name: 'glob',
  synopsis: '<pattern> [path] [--hidden] [--no-ignore]',
  summary: 'List files matching a glob (sorted)',
  options: { ...WALK_OPTIONS },
  async run(ctx) {
    const [pattern, where] = positionals(ctx, 1, 2, 'glob takes a pattern and an optional path')
    const input = { pattern, path: where, include_hidden: flag(ctx, 'hidden') || undefined, include_ignored: flag(ctx, 'no-ignore') || undefined }
    return ctx.out.result(await ctx.out.progress(`glob ${pattern}`, call(ctx, 'glob_search', input)))
  },
}

const GREP_MODES = ['content', 'files_with_matches', 'count'] as const

const grep: Command = {
  name: 'grep',
  synopsis: '<regex> [path] [--include G] [-i] [--mode M] [-C N]',
  summary: "Search file contents (ripgrep's engine)",
  details: "The regex is Rust's (ripgrep's) syntax. Put -- before a regex that starts with '-'.",
  options: {
    include: { type: 'string', arg: 'GLOB', help: "Only files matching GLOB, e.g. '*.ts' or '*.{ts,tsx}'" },
    'ignore-case': { type: 'boolean', short: 'i', help: 'Match letters regardless of case' },
    mode: { type: 'string', arg: 'M', help: 'content (default) | files_with_matches | count' },
    'files-with-matches': { type: 'boolean', short: 'l', help: 'Only the names of the matching files (--mode files_with_matches)' },
    count: { type: 'boolean', short: 'c', help: 'Matches per file (--mode count)' },
    context: { type: 'string', short: 'C', arg: 'N', help: 'Show N lines around each match' },
    ...WALK_OPTIONS,
  },
  async run(ctx) {
    const [pattern, where] = positionals(ctx, 1, 2, 'grep takes a pattern and an optional path')
    const mode = flag(ctx, 'files-with-matches') ? 'files_with_matches' : flag(ctx, 'count') ? 'count' : choice(ctx, 'mode', GREP_MODES)
    const context = int(ctx, 'context')
    const ignoreCase = flag(ctx, 'ignore-case')
    const input = {
      pattern,
      path: where,
      include: str(ctx, 'include'),
      case_sensitive: ignoreCase ? false : undefined,
      output_mode: mode,
      context_before: context,
      context_after: context,
      include_hidden: flag(ctx, 'hidden') || undefined,
      include_ignored: flag(ctx, 'no-ignore') || undefined,
    }
    const result = await ctx.out.progress(`grep ${pattern}`, call(ctx, 'content_search', input))
    const re = highlighter(pattern, ignoreCase)
    return ctx.out.result(result, (text, r, s) => paintGrep(text, (r.data?.files as string[] | undefined) ?? [], re, s))
  },
}

const search: Command = {
  name: 'search',
  synopsis: '<query> [path] [--top N]',
  summary: 'Ranked code search (built-in ranker)',
  details: 'Words or a symbol name; the best-matching functions, classes and blocks come first.',
  options: { top: { type: 'string', arg: 'N', help: `How many results (default ${DEFAULT_LIMITS.semanticTopK}, at most 25)` } },
  async run(ctx) {
    const [query, where] = positionals(ctx, 1, 2, 'search takes a query and an optional path')
    const input = { query, path: where, top_k: int(ctx, 'top'), backend: 'literal' }
    const result = await ctx.out.progress(`search ${query}`, call(ctx, 'semantic_code_search', input))
    return ctx.out.result(result, (text, _r, s) => paintSearch(text, s))
  },
}

const GIT_OPERATIONS = ['status', 'diff', 'log', 'branch'] as const

const git: Command = {
  name: 'git',
  synopsis: 'status|diff|log|branch [--cached] [--limit N] [files...]',
  summary: 'A read-only git operation, as git_operations gives it',
  details: 'Only git diff takes files.',
  options: {
    cached: { type: 'boolean', help: 'diff: the staged changes instead of the unstaged ones' },
    limit: { type: 'string', arg: 'N', help: 'log: how many commits (default 10, at most 100)' },
  },
  async run(ctx) {
    const [operation, ...files] = ctx.args
    if (!GIT_OPERATIONS.includes(operation as never)) throw new UsageError(`git takes one of ${GIT_OPERATIONS.join(', ')}`)
    if (files.length > 0 && operation !== 'diff') throw new UsageError('only git diff takes files')
    const input = { operation, files: files.length > 0 ? files : undefined, cached: flag(ctx, 'cached') || undefined, limit: int(ctx, 'limit') }
    const paint = operation === 'status' ? paintStatus : operation === 'diff' ? paintDiff : paintLogOrBranch
    return ctx.out.result(await call(ctx, 'git_operations', input), (text, _r, s) => paint(text, s))
  },
}

const risk: Command = {
  name: 'risk',
  synopsis: '<command>',
  summary: 'How shell would rate a command (nothing is run)',
  details: 'Quote the command: fsgate risk "rm -rf build && make"',
  // Every common option is taken, as `fsgate --help` says; --workspace and --preset do
  // not change a rating.
  options: {},
  async run(ctx) {
    const [command] = positionals(ctx, 1, 1, 'risk takes one command (quote it)')
    const c = classifyCommand(command)
    if (ctx.out.json) {
      ctx.out.out(JSON.stringify(c, null, 2))
      return EXIT_OK
    }
    const s = ctx.out.style
    ctx.out.out(`${paintRisk(c.risk, s)}: ${c.reason}`)
    for (const cmd of c.commands) {
      const level = paintRisk(cmd.risk, s) + ' '.repeat(Math.max(0, 6 - cmd.risk.length))
      ctx.out.out(`  ${level} ${[...cmd.wrappers, cmd.name || '(dynamic)'].join(' → ')}: ${cmd.reason}`)
    }
    return EXIT_OK
  },
}

const definitions: Command = {
  name: 'definitions',
  synopsis: '[--dialect D] [--format F]',
  summary: 'Print the tool definitions as JSON',
  options: {
    dialect: { type: 'string', arg: 'D', help: "claude | revka | consent | all (default: the preset's)" },
    format: { type: 'string', arg: 'F', help: 'The SDK shape, e.g. anthropic (default) or openai' },
  },
  // --json is taken too (the output is JSON either way).
  async run(ctx) {
    let defs: unknown
    try {
      defs = ctx.toolkit().definitions({ dialect: str(ctx, 'dialect') as never, format: str(ctx, 'format') as never })
    } catch (err) {
      if (err instanceof TypeError) throw new UsageError(err.message)
      throw err
    }
    ctx.out.out(JSON.stringify(defs, null, 2))
    return EXIT_OK
  },
}

/** Every command but `mcp`, in the order `fsgate --help` lists them. */
export const COMMANDS: readonly Command[] = [read, write, edit, pdf, glob, grep, search, git, risk, definitions]

/** The command's own `--help`. */
export function commandHelp(cmd: Command): string {
  const rows = (options: Record<string, OptionSpec>) =>
    Object.entries(options).map(([name, o]) => {
      const left = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.arg ? ` ${o.arg}` : ''}`
      return `  ${left.padEnd(30)} ${o.help}`
    })
  const common = Object.fromEntries(
    Object.entries(COMMON_OPTIONS).filter(([name]) => name === 'help' || (cmd.common ?? ['workspace', 'preset', 'json']).includes(name as CommonOption)),
  )
  const own = rows(cmd.options)
  return [
    `Usage: fsgate ${cmd.name} ${cmd.synopsis}`,
    '',
    `${cmd.summary}.`,
    ...(cmd.details ? ['', cmd.details] : []),
    '',
    ...(own.length > 0 ? ['Options:', ...own, ''] : []),
    'Common options:',
    ...rows(common),
    '',
  ].join('\n')
}
