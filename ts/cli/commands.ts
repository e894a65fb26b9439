/**
 * The commands of `fsgate` for people that work on one file or say something about the
 * tools: read, write, edit, pdf, git, risk, definitions; the search commands (glob, grep,
 * search, ls, tree) are in find.ts. Every tool command goes through a session's `call`,
 * the same dispatch an agent's calls pass. `mcp` is not here: it parses its own flags.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { isatty } from 'node:tty'

import { classifyCommand } from '../policy/risk.js'
import type { ToolResult } from '../result.js'
import type { PolicyOptions } from '../toolkit.js'
import { call, type Command, type CommandContext, COMMON_OPTIONS, flag, int, type OptionSpec, positionals, str, upTo } from './args.js'
import { FIND_COMMANDS } from './find.js'
import { EXIT_ERROR, EXIT_OK, UsageError } from './output.js'
import { paintDiff, paintLogOrBranch, paintRead, paintRisk, paintStatus } from './style.js'

/**
 * The policy of write and edit from the command line. The read-before-write contract and
 * the consent gate exist to keep a model from replacing what it has not seen or what the
 * user has not allowed; here the person at the terminal is the user, and typing the
 * command is the consent, so both are off. Everything else of the preset stays: paths
 * confined to the workspace, protected paths, atomic writes, working copies outside it.
 */
export const PERSON_POLICY: PolicyOptions = { readBeforeWrite: false, consentGate: false }

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
    bytes = await readFile(path.resolve(ctx.place.cwd, from)).catch((err: NodeJS.ErrnoException) => {
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

/** The notes Read puts after a page: where to continue, and a word on undecodable bytes. */
const isReadNote = (line: string) => /^… [\d,]+ more lines?; continue /.test(line) || /^\(bytes that are not valid /.test(line)

const read: Command = {
  name: 'read',
  synopsis: '<path>... [--offset N] [--limit N] [--all] [--pages P]',
  summary: 'Read files as an agent sees them (numbered lines, images, PDF pages)',
  details: `Several files are printed one after another, each under a ==> path <== line, as head
does. Where lines remain after the page, a note on stderr says the --offset to go on with.`,
  options: {
    offset: { type: 'string', arg: 'N', help: 'The first line to show (1-based)' },
    limit: { type: 'string', arg: 'N', help: 'How many lines to show (default 2000)' },
    all: { type: 'boolean', help: 'Show every line (no page, no token limit)' },
    pages: { type: 'string', arg: 'P', help: "PDF pages to show, e.g. '3' or '1-5'" },
  },
  async run(ctx) {
    const files = positionals(ctx, 1, Number.POSITIVE_INFINITY, 'read takes one or more paths')
    const all = flag(ctx, 'all')
    const limit = int(ctx, 'limit', true)
    if (all && limit !== undefined) throw new UsageError('give --limit or --all, not both')
    const toolkit = ctx.toolkit(all ? { limits: { readTokens: upTo(Number.POSITIVE_INFINITY) } } : undefined)
    const session = toolkit.createSession()
    const results: ToolResult[] = []
    let code = EXIT_OK
    for (const [i, file] of files.entries()) {
      const input = { path: ctx.place.toTool(file), offset: int(ctx, 'offset', true), limit: all ? upTo(Number.POSITIVE_INFINITY) : limit, pages: str(ctx, 'pages') }
      const result = await session.call('file_read', input)
      results.push(result)
      if (ctx.out.json) {
        if (result.isError) code = EXIT_ERROR
        continue
      }
      if (files.length > 1) ctx.out.out(`${i > 0 ? '\n' : ''}==> ${file} <==`)
      if (ctx.out.result(result, (text, _r, s) => paintRead(text, s), isReadNote) !== EXIT_OK) code = EXIT_ERROR
    }
    if (ctx.out.json) ctx.out.printJson(files.length === 1 ? results[0] : results)
    return code
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
    return ctx.out.result(await call(ctx, 'file_write', { path: ctx.place.toTool(file), content: text }, { policy: PERSON_POLICY }))
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
    const input = { path: ctx.place.toTool(file), old_string: oldString, new_string: newString, replace_all: flag(ctx, 'all') || undefined }
    const result = await call(ctx, 'file_edit', input, { policy: PERSON_POLICY })
    const code = ctx.out.result(result)
    const diff = result.data?.diff
    if (code !== EXIT_OK || ctx.out.json || typeof diff !== 'string') return code
    const s = ctx.out.style
    const shown = typeof result.data?.path === 'string' ? ctx.place.fromTool(result.data.path) : file
    const { added, removed } = diffStat(diff)
    ctx.out.out(`${shown}: ${s.green(`+${added}`)} ${s.red(`-${removed}`)}`)
    if (flag(ctx, 'diff')) ctx.out.out(paintDiff(diff.replace(/\n$/, ''), s))
    return EXIT_OK
  },
}

const pdf: Command = {
  name: 'pdf',
  synopsis: '<path> [--max-chars N] [--offset N]',
  summary: "Extract a PDF's text (every page)",
  options: {
    'max-chars': { type: 'string', arg: 'N', help: 'Cut the text after N characters' },
    offset: { type: 'string', arg: 'N', help: 'Skip the first N characters (page markers included)' },
  },
  async run(ctx) {
    const [file] = positionals(ctx, 1, 1, 'pdf takes one path')
    return ctx.out.result(await call(ctx, 'pdf_read', { path: ctx.place.toTool(file), max_chars: int(ctx, 'max-chars'), offset: int(ctx, 'offset') }))
  },
}

const GIT_OPERATIONS = ['status', 'diff', 'log', 'branch'] as const

const git: Command = {
  name: 'git',
  synopsis: 'status|diff|log|branch [--cached] [--limit N] [files...]',
  summary: 'A read-only git operation, as git_operations gives it',
  details: 'Works from any folder of the repository. Only git diff takes files (from the current folder).',
  options: {
    cached: { type: 'boolean', help: 'diff: the staged changes instead of the unstaged ones' },
    limit: { type: 'string', arg: 'N', help: 'log: how many commits (default 10, at most 100)' },
  },
  async run(ctx) {
    const [operation, ...files] = ctx.args
    if (!GIT_OPERATIONS.includes(operation as never)) throw new UsageError(`git takes one of ${GIT_OPERATIONS.join(', ')}`)
    if (files.length > 0 && operation !== 'diff') throw new UsageError('only git diff takes files')
    const input = {
      operation,
      files: files.length > 0 ? files.map((f) => ctx.place.toTool(f)) : undefined,
      cached: flag(ctx, 'cached') || undefined,
      limit: int(ctx, 'limit'),
    }
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
      ctx.out.printJson(c)
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
    dialect: { type: 'string', arg: 'D', help: "claude | revka | consent | anthropic | codex | gemini | all (default: the preset's)" },
    format: { type: 'string', arg: 'F', help: 'The SDK shape, e.g. anthropic (default) or openai' },
  },
  // --json is taken too (the output is JSON either way).
  async run(ctx) {
    let defs: unknown
    try {
      defs = ctx.toolkit().definitions({ dialect: str(ctx, 'dialect') as never, format: str(ctx, 'format') as never })
    } catch (err) {
      if (err instanceof TypeError) throw new UsageError(err.message.replace(/^fsgate: /, ''))
      throw err
    }
    ctx.out.printJson(defs)
    return EXIT_OK
  },
}

/** Every command but `mcp`, in the order `fsgate --help` lists them. */
export const COMMANDS: readonly Command[] = [read, write, edit, pdf, ...FIND_COMMANDS, git, risk, definitions]

/** The command's own `--help`. */
export function commandHelp(cmd: Command): string {
  const rows = (options: Record<string, OptionSpec>) =>
    Object.entries(options).map(([name, o]) => {
      const left = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.arg ? ` ${o.arg}` : ''}`
      return `  ${left.padEnd(30)} ${o.help}`
    })
  const own = rows(cmd.options)
  return [
    `Usage: fsgate ${cmd.name} ${cmd.synopsis}`,
    '',
    `${cmd.summary}.`,
    ...(cmd.details ? ['', cmd.details] : []),
    '',
    ...(own.length > 0 ? ['Options:', ...own, ''] : []),
    'Common options:',
    ...rows(COMMON_OPTIONS),
    '',
  ].join('\n')
}
