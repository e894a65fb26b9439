/**
 * The commands that find things: glob, grep, search, ls and tree. They print what they
 * found on stdout, one item a line, with paths from the current folder (as ripgrep does),
 * and every count, truncation note and "where to go on" on stderr, so their output can be
 * piped to `wc -l` or `xargs`. They exit 0 when something was found, 1 when nothing was,
 * 2 on an error, as rg does.
 */
import { DEFAULT_LIMITS } from '../limits.js'
import type { ToolResult } from '../result.js'
import {
  call,
  type Command,
  type CommandContext,
  choice,
  flag,
  int,
  type Page,
  PAGE_OPTIONS,
  page,
  positionals,
  str,
  upTo,
  WALK_OPTIONS,
} from './args.js'
import { listFiles, treeLines, type Listing, folderEntries } from './list.js'
import { EXIT_ERROR, EXIT_NONE, EXIT_OK, UsageError } from './output.js'
import { grepLinePath, highlighter, paintGrep, paintSearch } from './style.js'

function walk(ctx: CommandContext) {
  return { include_hidden: flag(ctx, 'hidden') || undefined, include_ignored: flag(ctx, 'no-ignore') || undefined }
}

/** "results 1–1,000 of 1,649": the range a page shows, for the notes. */
function range(p: Page, shown: number, unit: string, total?: number, atLeast = false): string {
  const of = total === undefined ? '' : ` of ${atLeast ? 'at least ' : ''}${total.toLocaleString('en-US')}`
  return `${unit} ${(p.offset + 1).toLocaleString('en-US')}–${(p.offset + shown).toLocaleString('en-US')}${of}`
}

/** The note after a page that is not the last: what was shown and the flags that show the rest. */
function moreNote(ctx: CommandContext, p: Page, shown: number, unit: string, total?: number, atLeast = false): void {
  ctx.out.note(`fsgate ${ctx.command}: showing ${range(p, shown, unit, total, atLeast)}; the next page: --offset ${p.offset + shown}; everything: --all`)
}

const glob: Command = {
  name: 'glob',
  synopsis: '<pattern> [path] [--hidden] [--no-ignore] [--max N] [--offset N] [--all]',
  summary: 'List files matching a glob (sorted)',
  details: `A pattern without '/' matches file names at any depth ('*.ts'); one with '/' is anchored
at the folder searched ('src/**/*.ts'). Without a path, the current folder is searched.`,
  options: { ...WALK_OPTIONS, ...PAGE_OPTIONS },
  async run(ctx) {
    const [pattern, where] = positionals(ctx, 1, 2, 'glob takes a pattern and an optional path')
    const p = page(ctx)
    const input = { pattern, path: where !== undefined ? ctx.place.toTool(where) : ctx.place.defaultFolder(), offset: p.offset || undefined, ...walk(ctx) }
    const result = await ctx.out.progress(`glob ${pattern}`, call(ctx, 'glob_search', input, { limits: { globResults: upTo(p.max) } }))
    if (result.isError) return ctx.out.json ? json(ctx, result) : ctx.out.failure(result)
    const files = (result.data?.files as string[] | undefined) ?? []
    const total = result.data?.numFiles as number
    if (ctx.out.json) return json(ctx, { ...result, data: { ...result.data, files, offset: p.offset } }, files.length)
    for (const f of files) ctx.out.out(paintPath(ctx, ctx.place.fromTool(f)))
    errorsNote(ctx, result)
    if (files.length === 0) {
      ctx.out.note(total > 0 ? `fsgate glob: --offset ${p.offset} is past the last of ${total} files` : result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'))
      return EXIT_NONE
    }
    if (p.offset + files.length < total) moreNote(ctx, p, files.length, 'files', total)
    return EXIT_OK
  },
}

const GREP_MODES = ['content', 'files_with_matches', 'count'] as const

/** Rust regex's escape of one literal string (regex::escape's set of characters). */
export function escapeRegex(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$#&\-~]/g, '\\$&')
}

const grep: Command = {
  name: 'grep',
  synopsis: '<regex> [path] [-i] [-F] [-w] [-t TYPE] [--include G] [-l|-c] [-C N] [--max N] [--offset N] [--all]',
  summary: "Search file contents (ripgrep's engine)",
  details: `The regex is Rust's (ripgrep's) syntax; -F takes it as plain text. Put -- before a
pattern that starts with '-'. Without a path, the current folder is searched. --max counts
matching lines (files with -l, counts with -c), never context lines.`,
  options: {
    'ignore-case': { type: 'boolean', short: 'i', help: 'Match letters regardless of case' },
    'fixed-strings': { type: 'boolean', short: 'F', help: 'Take the pattern as plain text, not a regex' },
    'word-regexp': { type: 'boolean', short: 'w', help: 'Match whole words only' },
    multiline: { type: 'boolean', short: 'U', help: "Let a match span lines ('.' matches a newline too)" },
    type: { type: 'string', short: 't', arg: 'TYPE', help: "Only files of a ripgrep type, e.g. ts, py, rust, md (as rg -t)" },
    include: { type: 'string', short: 'g', arg: 'GLOB', help: "Only files matching GLOB, e.g. '*.ts' or '*.{ts,tsx}'; '!dist' leaves out" },
    'files-with-matches': { type: 'boolean', short: 'l', help: 'Only the names of the matching files' },
    count: { type: 'boolean', short: 'c', help: 'Matching lines per file' },
    mode: { type: 'string', arg: 'M', help: 'content (default) | files_with_matches | count' },
    context: { type: 'string', short: 'C', arg: 'N', help: 'Show N lines around each match' },
    'after-context': { type: 'string', short: 'A', arg: 'N', help: 'Show N lines after each match' },
    'before-context': { type: 'string', short: 'B', arg: 'N', help: 'Show N lines before each match' },
    ...WALK_OPTIONS,
    ...PAGE_OPTIONS,
  },
  async run(ctx) {
    const [given, where] = positionals(ctx, 1, 2, 'grep takes a pattern and an optional path')
    const mode = flag(ctx, 'files-with-matches') ? 'files_with_matches' : flag(ctx, 'count') ? 'count' : (choice(ctx, 'mode', GREP_MODES) ?? 'content')
    const ignoreCase = flag(ctx, 'ignore-case')
    let pattern = flag(ctx, 'fixed-strings') ? escapeRegex(given) : given
    if (flag(ctx, 'word-regexp')) pattern = `\\b(?:${pattern})\\b`
    const p = page(ctx)
    const context = int(ctx, 'context')
    const unbounded = !Number.isFinite(p.max)
    // Grep (the claude dialect's form of content_search) is the one that takes offset.
    const input = {
      pattern,
      path: where !== undefined ? ctx.place.toTool(where) : ctx.place.defaultFolder(),
      glob: str(ctx, 'include'),
      type: str(ctx, 'type'),
      output_mode: mode,
      '-i': ignoreCase || undefined,
      '-A': int(ctx, 'after-context') ?? context,
      '-B': int(ctx, 'before-context') ?? context,
      multiline: flag(ctx, 'multiline') || undefined,
      head_limit: upTo(p.max),
      offset: p.offset || undefined,
      ...walk(ctx),
    }
    const limits = { searchResults: upTo(Math.max(p.max, DEFAULT_LIMITS.searchResults)), ...(unbounded ? { searchOutputBytes: upTo(Number.POSITIVE_INFINITY) } : {}) }
    const result = await ctx.out.progress(`grep ${given}`, call(ctx, 'Grep', input, { limits }))
    if (result.isError) return ctx.out.json ? json(ctx, result) : ctx.out.failure(result)
    const shown = result.data?.shown as number
    if (ctx.out.json) return json(ctx, result, shown)
    const files = (result.data?.files as string[]) ?? []
    const known = new Set(files)
    if (mode === 'files_with_matches') for (const f of files) ctx.out.out(paintPath(ctx, ctx.place.fromTool(f)))
    else if (mode === 'count') {
      const counts = (result.data?.counts as number[]) ?? []
      for (const [i, f] of files.entries()) ctx.out.out(`${paintPath(ctx, ctx.place.fromTool(f))}${ctx.out.style.dim(':')}${ctx.out.style.green(String(counts[i]))}`)
    } else {
      // The text: `path:line:text` and context lines, then the tool's notes, which go to
      // stderr. A line is data when it starts with a path the search found (or is `--`).
      const re = highlighter(pattern, ignoreCase)
      const lines: string[] = []
      for (const line of (result.content[0]?.type === 'text' ? result.content[0].text : '').split('\n')) {
        if (line === '--') lines.push(line)
        else {
          const at = grepLinePath(line, known)
          if (at !== null) lines.push(ctx.place.fromTool(line.slice(0, at)) + line.slice(at))
        }
      }
      if (lines.length > 0) {
        const shownFiles = files.map((f) => ctx.place.fromTool(f))
        const text = lines.join('\n')
        ctx.out.out(ctx.out.style.on ? paintGrep(text, shownFiles, re, ctx.out.style) : text)
      }
    }
    errorsNote(ctx, result)
    if (shown === 0) {
      ctx.out.note(
        (result.data?.numFiles as number) > 0 ? `fsgate grep: --offset ${p.offset} is past the last result` : result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'),
      )
      return EXIT_NONE
    }
    const cut = result.data?.cutLines as number | undefined
    if (cut) ctx.out.note(`fsgate grep: ${cut.toLocaleString('en-US')} long line${cut === 1 ? ' was' : 's were'} cut around the match; fsgate read shows the whole line`)
    if (result.data?.truncated) {
      moreNote(ctx, p, shown, mode === 'content' ? 'matching lines' : 'files')
    }
    return EXIT_OK
  },
}

const search: Command = {
  name: 'search',
  synopsis: '<query> [path] [--top N]',
  summary: 'Ranked code search (built-in ranker)',
  details: 'Words or a symbol name; the best-matching functions, classes and blocks come first.',
  options: {
    top: { type: 'string', arg: 'N', help: `How many results (default ${DEFAULT_LIMITS.semanticTopK}, at most 25)` },
    max: { type: 'string', arg: 'N', help: 'The same as --top' },
  },
  async run(ctx) {
    const [query, where] = positionals(ctx, 1, 2, 'search takes a query and an optional path')
    if (str(ctx, 'top') !== undefined && str(ctx, 'max') !== undefined) throw new UsageError('give --top or --max, not both')
    const input = { query, path: where !== undefined ? ctx.place.toTool(where) : ctx.place.defaultFolder(), top_k: int(ctx, 'top') ?? int(ctx, 'max'), backend: 'literal' }
    const result = await ctx.out.progress(`search ${query}`, call(ctx, 'semantic_code_search', input))
    const hits = (result.data?.hits as unknown[] | undefined)?.length ?? 0
    if (ctx.out.json) return json(ctx, result, hits)
    if (result.isError) return ctx.out.failure(result)
    if (hits === 0) {
      ctx.out.note(result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'))
      return EXIT_NONE
    }
    return ctx.out.result(result, (text, _r, s) => paintSearch(text, s))
  },
}

/** ls and tree share one listing of the folder (list.ts). */
async function listing(ctx: CommandContext, where: string | undefined): Promise<{ result: ToolResult; listing?: Listing; folder: string }> {
  const folder = where !== undefined ? ctx.place.toTool(where) : (ctx.place.defaultFolder() ?? '.')
  const got = await ctx.out.progress(`ls ${where ?? '.'}`, listFiles(ctx, folder, walk(ctx)))
  return { ...got, folder }
}

const ls: Command = {
  name: 'ls',
  synopsis: '[path] [--hidden] [--no-ignore] [--tree] [--depth N] [--max N] [--offset N] [--all]',
  summary: 'List a folder: its files, and its subfolders with a / (--tree: the tree below it)',
  details: `As the agent's tools see it: files that .gitignore leaves out and hidden files are not
listed unless --no-ignore / --hidden, and a folder that holds no listed file is not shown.`,
  options: {
    tree: { type: 'boolean', help: 'Show the tree below the folder (as fsgate tree)' },
    depth: { type: 'string', arg: 'N', help: 'With --tree: how many levels (default: all)' },
    ...WALK_OPTIONS,
    ...PAGE_OPTIONS,
  },
  async run(ctx) {
    if (flag(ctx, 'tree')) return tree.run(ctx)
    if (str(ctx, 'depth') !== undefined) throw new UsageError('--depth goes with --tree')
    const [where] = positionals(ctx, 0, 1, 'ls takes an optional path')
    const p = page(ctx)
    const { result, listing: l } = await listing(ctx, where)
    if (!l) return ctx.out.json ? json(ctx, result) : ctx.out.failure(result)
    const entries = folderEntries(l)
    const shown = entries.slice(p.offset, p.offset + p.max)
    if (ctx.out.json) {
      ctx.out.printJson({ path: where ?? '.', entries: shown, total: entries.length, offset: p.offset })
      return shown.length > 0 ? EXIT_OK : EXIT_NONE
    }
    for (const e of shown) ctx.out.out(e.kind === 'folder' ? ctx.out.style.blue(`${e.name}/`) : e.name)
    errorsNote(ctx, result)
    if (shown.length === 0) {
      ctx.out.note(entries.length > 0 ? `fsgate ls: --offset ${p.offset} is past the last of ${entries.length} entries` : `fsgate ls: no files in ${where ?? '.'} (add --hidden or --no-ignore to see more)`)
      return EXIT_NONE
    }
    if (p.offset + shown.length < entries.length) moreNote(ctx, p, shown.length, 'entries', entries.length)
    return EXIT_OK
  },
}

const tree: Command = {
  name: 'tree',
  synopsis: '[path] [--depth N] [--hidden] [--no-ignore] [--max N] [--offset N] [--all]',
  summary: 'Show the folders and files below a folder as a tree',
  details: 'The same listing as fsgate ls; --max counts lines of the tree.',
  options: {
    depth: { type: 'string', arg: 'N', help: 'How many levels to show (default: all)' },
    ...WALK_OPTIONS,
    ...PAGE_OPTIONS,
  },
  async run(ctx) {
    const [where] = positionals(ctx, 0, 1, `${ctx.command} takes an optional path`)
    const depth = int(ctx, 'depth')
    if (depth === 0) throw new UsageError('--depth must be at least 1')
    const p = page(ctx)
    const { result, listing: l } = await listing(ctx, where)
    if (!l) return ctx.out.json ? json(ctx, result) : ctx.out.failure(result)
    const lines = treeLines(l, depth ?? Number.POSITIVE_INFINITY)
    const shown = lines.slice(p.offset, p.offset + p.max)
    if (ctx.out.json) {
      ctx.out.printJson({ path: where ?? '.', files: l.files, total: l.total, lines: shown, offset: p.offset })
      return l.files.length > 0 ? EXIT_OK : EXIT_NONE
    }
    const root = where ?? '.'
    if (p.offset === 0) ctx.out.out(ctx.out.style.blue(root))
    for (const line of shown) ctx.out.out(line.folder ? `${line.prefix}${ctx.out.style.blue(`${line.name}/`)}` : `${line.prefix}${line.name}`)
    errorsNote(ctx, result)
    const folders = lines.filter((x) => x.folder).length
    ctx.out.note(`${folders.toLocaleString('en-US')} folder${folders === 1 ? '' : 's'}, ${l.files.length.toLocaleString('en-US')} file${l.files.length === 1 ? '' : 's'}`)
    if (p.offset + shown.length < lines.length) moreNote(ctx, p, shown.length, 'lines', lines.length)
    return l.files.length > 0 ? EXIT_OK : EXIT_NONE
  },
}

/** `--json`: the whole result; the exit code says whether anything was found. */
function json(ctx: CommandContext, result: ToolResult, found = 0): number {
  ctx.out.printJson(result)
  return result.isError ? EXIT_ERROR : found > 0 ? EXIT_OK : EXIT_NONE
}

function paintPath(ctx: CommandContext, p: string): string {
  return ctx.out.style.magenta(p)
}

/** Paths a walk could not read, on stderr. */
function errorsNote(ctx: CommandContext, result: ToolResult): void {
  const errors = result.data?.errors as string[] | undefined
  if (errors?.length) ctx.out.note(`fsgate ${ctx.command}: ${errors.length} path${errors.length === 1 ? '' : 's'} could not be read: ${errors.slice(0, 3).join('; ')}`)
}

export const FIND_COMMANDS: readonly Command[] = [glob, grep, search, ls, tree]
