/**
 * content_search / Grep (SPEC §3.5): ripgrep's own crates, in process — Rust regex
 * syntax, ignore rules as ripgrep applies them, binary files skipped, long lines cut,
 * results sorted by path then line, and a limit that counts matches, not context lines.
 */
import { z } from 'zod'

import { clip, FsgateError, InvalidInputError } from '../errors.js'
import { callNative, completer, type NativeGrepResult } from '../native.js'
import { displayPath } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { explainSearchError, GEMINI_IGNORE, givenPath, plural, searchBase, splitGlobs, walkFields, walkOptions, type WalkInput } from '../search/scope.js'
import { defineTool, type ToolContext } from '../tool.js'
import { MAX_OFFSET, num, pageTokens, recordsWithin } from './common.js'

export type OutputMode = 'content' | 'files_with_matches' | 'count'

/** content_search's input, as a program gives it (the typed `session.grep`). */
export interface ContentSearchInput extends WalkInput {
  pattern: string
  path?: string
  output_mode?: OutputMode
  include?: string
  type?: string
  case_sensitive?: boolean
  context_before?: number
  context_after?: number
  multiline?: boolean
  max_results?: number
  /** Results to skip, to continue a long result (the offset a continuation names). */
  offset?: number
}

/** The canonical input both dialects map to. */
export interface GrepInput extends WalkInput {
  pattern: string
  path?: string
  output_mode: OutputMode
  /** Include globs (space- or comma-separated). */
  include?: string
  type?: string
  case_sensitive: boolean
  context_before?: number
  context_after?: number
  multiline?: boolean
  line_numbers: boolean
  /** The most results the call asked for; without it the page is the dialect's default, in fewer tokens. */
  max_results?: number
  /** The dialect's own default count, when the call gave none (Claude Code 250, gemini-cli 100). */
  default_results?: number
  offset?: number
  /** Only the matched parts of each line, one per result (Claude Code's -o). */
  only_matching?: boolean
  /** Matching lines this regular expression also matches are left out (gemini-cli's exclude_pattern). */
  exclude_pattern?: string
  /** The most matching lines taken from one file (gemini-cli's max_matches_per_file). */
  max_per_file?: number
}

/** Characters of a matching line shown (Claude Code's --max-columns). */
const MAX_COLUMNS = 500
/** Context lines a call may ask for, before or after each match. */
const MAX_CONTEXT = 100

const pattern = z.string().min(1).describe('The regular expression to search for (Rust regex syntax, as ripgrep): e.g. "fn main", "log.*Error", "\\bparse\\w+". Escape ( [ { . * + ? | with a backslash to match them literally.')
const mode = z.enum(['content', 'files_with_matches', 'count'])
const lines = z.number().int().min(0).max(MAX_CONTEXT)
/** Claude Code types its counts as numbers: fractions are taken down, and context is capped at what a report can show. */
const count = z.number().min(0)
const CLAUDE_HEAD_LIMIT = 250
/** The most context lines a peer's dialect takes (neither Claude Code nor gemini-cli sets a maximum): more is capped. */
const MAX_CLAUDE_CONTEXT = 10_000
const whole = (n: unknown, max = Number.MAX_SAFE_INTEGER) => (typeof n === 'number' ? Math.min(Math.floor(n), max) : undefined)
const type = z.string().describe('A file type to search, e.g. "js", "py", "rust", "go", "java" (ripgrep\'s type names). More efficient than an include glob for standard types.')

const guide = (glob: string, read: string) =>
  `Searches file contents with regular expressions, fast, in any size of tree (ripgrep's engine, built in).
- Full Rust regex syntax (e.g. "log.*Error", "function\\s+\\w+"); literal braces need escaping ("interface\\{\\}").
- Filter files with ${glob} (e.g. "*.js", "**/*.tsx") or type (e.g. "py", "rust").
- Results are sorted by path, then line. Files that .gitignore or .ignore rules leave out, hidden files and binary files are skipped.
- Patterns match within single lines unless multiline is true.
- Use this instead of reading many files; then ${read} just the lines you need.`

export const grepTool = defineTool<GrepInput>({
  name: 'content_search',
  dialects: {
    revka: {
      name: 'content_search',
      description: guide('include', 'file_read'),
      schema: z.strictObject({
        pattern,
        path: z.string().optional().describe('The folder or file to search, relative to the workspace or absolute. Default: the workspace root.'),
        output_mode: mode.optional().describe('"content" (matching lines as path:line:text; default), "files_with_matches" (paths only) or "count" (matches per file).'),
        include: z.string().optional().describe('Only search files matching this glob, e.g. "*.rs" or "src/**/*.{ts,tsx}".'),
        type: type.optional(),
        case_sensitive: z.boolean().optional().describe('Default true; false matches letters regardless of case.'),
        context_before: lines.optional().describe('Lines to show before each match (content mode).'),
        context_after: lines.optional().describe('Lines to show after each match (content mode).'),
        multiline: z.boolean().optional().describe('Let a match span lines; "." also matches a newline. Default false.'),
        max_results: z.number().int().min(1).optional().describe('The most results: matching lines in content mode (context lines are not counted), files or counts otherwise. Default 1000, in a page of at most 10,000 tokens.'),
        offset: z.number().int().min(0).optional().describe('Results to skip, to continue a long result: the output names the offset to go on at. Default 0.'),
        ...walkFields,
      }),
      toCanonical: (i) => ({
        ...(i as Record<string, unknown>),
        output_mode: (i.output_mode as OutputMode | undefined) ?? 'content',
        case_sensitive: (i.case_sensitive as boolean | undefined) ?? true,
        line_numbers: true,
      }) as GrepInput,
    },
    claude: {
      name: 'Grep',
      description: guide('glob', 'Read'),
      schema: z.strictObject({
        pattern,
        path: z.string().optional().describe('File or directory to search in. Defaults to the current working directory.'),
        glob: z.string().optional().describe('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}").'),
        output_mode: mode
          .optional()
          .describe('"content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports head_limit). Defaults to "files_with_matches".'),
        '-B': count.optional().describe('Number of lines to show before each match (rg -B). Requires output_mode: "content".'),
        '-A': count.optional().describe('Number of lines to show after each match (rg -A). Requires output_mode: "content".'),
        '-C': count.optional().describe('Alias for context.'),
        context: count.optional().describe('Number of lines to show before and after each match (rg -C). Requires output_mode: "content".'),
        '-n': z.boolean().optional().describe('Show line numbers in output. Requires output_mode: "content". Defaults to true.'),
        '-i': z.boolean().optional().describe('Case insensitive search.'),
        '-o': z.boolean().optional().describe('Print only the matched (non-empty) parts of each matching line, one match per output line (rg -o). Requires output_mode: "content". Defaults to false.'),
        type: type.optional(),
        head_limit: count
          .optional()
          .describe('Limit output to the first N lines/entries (matching lines in content mode, not counting context). Defaults to 250. Pass 0 for every result up to the output and token limits (use sparingly: large results waste context); the output says where to continue.'),
        offset: count.optional().describe('Skip the first N lines/entries before applying head_limit. Defaults to 0.'),
        multiline: z.boolean().optional().describe('Enable multiline mode where . matches newlines and patterns can span lines. Default: false.'),
        ...walkFields,
      }),
      toCanonical: (i) => {
        const c = whole(i.context ?? i['-C'], MAX_CLAUDE_CONTEXT)
        const head = whole(i.head_limit)
        return {
          pattern: i.pattern,
          path: i.path,
          output_mode: (i.output_mode as OutputMode | undefined) ?? 'files_with_matches',
          include: i.glob,
          type: i.type,
          case_sensitive: !(i['-i'] as boolean | undefined),
          context_before: whole(i['-B'], MAX_CLAUDE_CONTEXT) ?? c,
          context_after: whole(i['-A'], MAX_CLAUDE_CONTEXT) ?? c,
          multiline: i.multiline,
          line_numbers: (i['-n'] as boolean | undefined) ?? true,
          only_matching: i['-o'] === true,
          // Claude Code's default is 250; 0 is every result the host's limits allow.
          max_results: head === undefined ? undefined : head === 0 ? Number.MAX_SAFE_INTEGER : head,
          default_results: CLAUDE_HEAD_LIMIT,
          offset: whole(i.offset),
          include_hidden: i.include_hidden,
          include_ignored: i.include_ignored,
        } as GrepInput
      },      // Claude Code's GrepOutput names the files `filenames`.
      present: (out) => ({ ...out, data: { ...out.data, filenames: out.data?.files } }),
    },
    gemini: {
      name: 'grep_search',
      description: `Searches for a regular expression within file contents, fast (ripgrep's engine, built in); preferred over grep in a shell. At most 100 matches unless total_max_matches says more.
- Rust regex syntax; use \\b for whole symbols (e.g. "\\bparseArgs\\b"), or fixed_strings for literal text.
- Filter files with include_pattern (e.g. "*.ts", "src/**"); files .gitignore or .geminiignore leave out are skipped unless no_ignore.
- Results are grouped by file, with line numbers; names_only lists just the files.`,
      schema: z.strictObject({
        pattern: z.string().min(1).describe("The pattern to search for: a Rust-flavored regular expression, or literal text with fixed_strings (e.g. 'function\\s+myFunction')."),
        dir_path: z.string().describe('Directory or file to search, relative to the workspace or absolute. Default: the workspace root.').optional(),
        include_pattern: z.string().describe("Glob pattern to filter files (e.g. '*.ts', 'src/**').").optional(),
        exclude_pattern: z.string().describe('A regular expression: a matching line it also matches is left out.').optional(),
        names_only: z.boolean().describe('If true, only the paths of files with matches are returned.').optional(),
        case_sensitive: z.boolean().describe('If true, the search is case-sensitive. Defaults to false.').optional(),
        fixed_strings: z.boolean().describe('If true, pattern is literal text, not a regular expression. Defaults to false.').optional(),
        context: z.number().int().min(0).describe('Lines of context around each match (grep -C). Defaults to 0.').optional(),
        after: z.number().int().min(0).describe('Lines after each match (grep -A). Defaults to 0.').optional(),
        before: z.number().int().min(0).describe('Lines before each match (grep -B). Defaults to 0.').optional(),
        no_ignore: z.boolean().describe('If true, also search files .gitignore and similar rules leave out. Defaults to false.').optional(),
        max_matches_per_file: z.number().int().min(1).describe('The most matches to return from one file.').optional(),
        total_max_matches: z.number().int().min(1).describe('The most matches to return in all. Defaults to 100.').optional(),
        offset: z.number().int().min(0).describe('Matches to skip, to continue a long result (default 0).').optional(),
      }),
      toCanonical: (i) => {
        // gemini-cli declares no maximum: a larger count is capped, as Claude's is, not refused.
        const c = whole(i.context, MAX_CLAUDE_CONTEXT)
        return {
          pattern: i.fixed_strings === true ? escapeRegex(i.pattern as string) : i.pattern,
          path: i.dir_path,
          output_mode: i.names_only === true ? 'files_with_matches' : 'content',
          include: i.include_pattern,
          case_sensitive: i.case_sensitive === true,
          context_before: whole(i.before, MAX_CLAUDE_CONTEXT) ?? c,
          context_after: whole(i.after, MAX_CLAUDE_CONTEXT) ?? c,
          line_numbers: true,
          exclude_pattern: i.exclude_pattern,
          max_per_file: i.max_matches_per_file,
          max_results: i.total_max_matches as number | undefined,
          default_results: 100,
          offset: i.offset,
          include_ignored: i.no_ignore === true,
          ignore_files: GEMINI_IGNORE,
        } as GrepInput
      },
      present: geminiAnswer,
    },
  },
  run: grep,
})

async function grep(input: GrepInput, ctx: ToolContext): Promise<ToolOutput> {
  const given = givenPath(input.path)
  const abs = searchBase(ctx, given)
  const limit = Math.min(input.max_results ?? input.default_results ?? ctx.limits.searchResults, ctx.limits.searchResults)
  const offset = Math.min(input.offset ?? 0, MAX_OFFSET)
  // A call that sets no count gets a page well below the result budget.
  const budget = input.max_results === undefined ? Math.min(ctx.limits.searchPageTokens, ctx.limits.resultTokens) : ctx.limits.resultTokens
  const found = await callNative<NativeGrepResult>(
    (id, cancel) =>
      ctx.fs.grep(
        completer,
        id,
        {
          path: abs,
          displayRoot: ctx.workspace,
          pattern: input.pattern,
          walk: walkOptions(input, splitGlobs(input.include), input.type),
          mode: input.output_mode,
          caseInsensitive: !input.case_sensitive,
          multiline: input.multiline ?? false,
          before: input.context_before ?? 0,
          after: input.context_after ?? 0,
          limit,
          offset,
          lineNumbers: input.line_numbers,
          maxColumns: MAX_COLUMNS,
          maxOutput: ctx.limits.searchOutputBytes,
          // Every report fits its token budget (with room for the notes) as well as its byte limit.
          maxTokens: pageTokens(budget),
          onlyMatching: input.only_matching,
          exclude: input.exclude_pattern,
          maxPerFile: input.max_per_file,
        },
        cancel,
      ),
    ctx.signal,
    ctx.lanes.search,
  ).catch(async (err) => {
    if (err?.code === 'INVALID_INPUT' && input.type !== undefined) {
      throw new InvalidInputError('INVALID_INPUT', `Unknown file type '${clip(input.type ?? '', 40)}'. Use a ripgrep type name such as js, ts, py, rust, go, java, c, cpp, md or json, or filter with a glob instead.`, {
        data: { field: 'type' },
      })
    }
    const failure = await explainSearchError(err, given, abs, ctx, { globField: ctx.dialect === 'claude' ? 'glob' : 'include' })
    throw multilineHint(failure, input)
  })
  const r = await hostCut(found, input.output_mode, ctx, budget)
  const files = r.files === '' ? [] : r.files.split('\0')
  // Exact totals: every file is searched to its end, whatever the page.
  const total = input.output_mode === 'content' ? r.matches : r.matchedFiles
  const data: Record<string, unknown> = {
    mode: input.output_mode,
    path: displayPath(ctx.workspace, abs),
    numFiles: r.matchedFiles,
    ...(input.output_mode === 'files_with_matches' ? {} : { numMatches: r.matches }),
    offset,
    shown: r.shown,
    truncated: r.truncated,
    files,
    fromIndex: r.fromIndex,
    filesRead: r.filesRead,
  }
  if (input.output_mode === 'count') data.counts = r.counts
  if (r.cutLines) data.cutLines = r.cutLines
  if (r.binaryFiles) data.binaryFiles = r.binaryFiles
  if (r.errors.length) data.errors = r.errors.slice(0, 20)
  const unread = r.errors.length ? `${plural(r.errors.length, 'path')} could not be read: ${r.errors.slice(0, 3).map((e) => clip(e, 160)).join('; ')}` : undefined
  if (r.shown === 0) {
    const unit = input.output_mode === 'content' ? 'result' : 'file'
    // The results before a deep offset are held while searching, up to a bound: past it a
    // page inside the total comes back empty, which is not the end.
    const why =
      r.matchedFiles === 0
        ? ''
        : offset < total
          ? ` (${plural(total, unit)} matched, but the ones before offset ${num(offset)} hold more text than a search keeps; narrow the pattern, glob or path to reach them)`
          : ` (${plural(total, unit)} matched, but offset ${num(offset)} is past the last; continue with offset=0)`
    // With nothing to show, say what was not searched (binary files are only counted otherwise, as rg does).
    const skipped = [...(r.binaryFiles ? [`${plural(r.binaryFiles, 'binary file')} skipped`] : []), ...(unread ? [unread] : [])]
    const also = skipped.length ? ` (${skipped.join('; ')})` : ''
    return { content: [text(`No matches found for ${clip(input.pattern, 300)}${given ? ` in ${given}` : ''}${why}.${also}`)], data }
  }
  const notes: string[] = []
  if (input.output_mode === 'files_with_matches') notes.unshift(`Found ${plural(r.matchedFiles, 'file')}`)
  if (input.output_mode === 'count') notes.unshift(`Found ${plural(r.matches, 'match', 'matches')} in ${plural(r.matchedFiles, 'file')}`)
  const after: string[] = []
  if (r.truncated) after.push(continuation(input.output_mode, offset, r, total, `${Math.round(ctx.limits.searchOutputBytes / 1024)} KiB or ${num(budget)} tokens`))
  if (r.contextCut) after.push('(The context of the first match was cut to fit the page; ask for fewer context lines to see whole records.)')
  if (r.cutLines) after.push(`(${plural(r.cutLines, 'line')} longer than ${MAX_COLUMNS} characters ${r.cutLines === 1 ? 'was' : 'were'} cut around the match; Read the line for all of it.)`)
  if (unread) after.push(`(${unread}.)`)
  const body = r.text.slice(0, -1)
  const out = [...notes, body, ...after].join('\n')
  return { content: [text(out)], data }
}

/** Where a page that left results out ends, and the offset that goes on from it. */
function continuation(mode: OutputMode, offset: number, r: NativeGrepResult, total: number, budget: string): string {
  const unit = mode === 'content' ? 'matching lines' : mode === 'count' ? 'counts' : 'files'
  const next = offset + r.shown
  const of = next < total ? `of ${num(total)}` : `of at least ${num(next + 1)}`
  const why = r.budgetReached ? ` (the page reached its limit of ${budget})` : ''
  return `(Showing ${unit} ${num(offset + 1)}-${num(next)} ${of}${why}. Continue with offset=${next}, or narrow the pattern, path or glob.)`
}

/**
 * The engine cuts a page by the o200k count; a host with its own token counter has the
 * page cut again by it, at a record boundary (a matching line with its context, a file).
 */
async function hostCut(r: NativeGrepResult, mode: OutputMode, ctx: ToolContext, budget: number): Promise<NativeGrepResult> {
  if (!ctx.countTokens || r.records.length === 0) return r
  const lines = r.text.slice(0, -1).split('\n')
  const records: string[] = []
  let at = 0
  for (const n of r.records) {
    records.push(lines.slice(at, at + n).join('\n'))
    at += n
  }
  const k = await recordsWithin(ctx, records, budget)
  if (k === records.length) return r
  const kept = r.recordFiles.slice(0, k)
  const fileCount = kept[k - 1] + 1
  const counts = mode === 'content' ? Array.from({ length: fileCount }, (_, f) => kept.filter((x) => x === f).length) : r.counts.slice(0, fileCount)
  const files = r.files.split('\0').slice(0, fileCount).join('\0')
  return { ...r, text: `${records.slice(0, k).join('\n')}\n`, shown: k, files, counts, truncated: true, budgetReached: true, records: r.records.slice(0, k), recordFiles: kept }
}

/** A newline in a pattern is refused unless multiline is on: say so. */
function multilineHint(err: unknown, input: GrepInput): unknown {
  if (!(err instanceof FsgateError) || err.code !== 'INVALID_PATTERN' || input.multiline || !/\\n|\n/.test(input.pattern)) return err
  return new InvalidInputError('INVALID_PATTERN', `${err.message} To match across lines, set multiline: true.`, { data: err.data })
}

/** A pattern that matches `text` literally (gemini-cli's fixed_strings). */
function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|#&~-]/g, '\\$&')
}

/**
 * gemini-cli's grep_search answer: `Found N matches for pattern "p" in path "d":`, then
 * each file's lines as `L12: text` (`L13- text` for context) between `---` rules.
 */
function geminiAnswer(out: ToolOutput, input: GrepInput): ToolOutput {
  const d = out.data as { files: string[]; numMatches?: number; numFiles: number; shown: number; truncated: boolean; mode: OutputMode }
  const where = `in path "${input.path ?? '.'}"${input.include ? ` (filter: "${input.include}")` : ''}`
  const body = (out.content[0] as { text: string }).text
  // fsgate's own notes (a cut line, unreadable paths, where to continue) are the lines in parentheses.
  const notes = body.split('\n').filter((l) => l.startsWith('(') && l.endsWith(')'))
  if (d.shown === 0) return { ...out, content: [text(`No matches found for pattern "${input.pattern}" ${where}.`)] }
  const limited = d.truncated ? ` (results limited to ${d.shown} ${d.mode === 'files_with_matches' ? 'files' : 'matches'}; more exist)` : ''
  if (d.mode === 'files_with_matches') {
    return { ...out, content: [text([`Found ${d.shown} files with matches for pattern "${input.pattern}" ${where}${limited}:`, ...d.files, ...notes].join('\n'))] }
  }
  // The canonical report is `path:N:text` and `path-N-text`, by file in order: regrouped.
  const groups: string[] = []
  let file = -1
  for (const line of body.split('\n')) {
    const next = d.files[file + 1]
    if (next !== undefined && (line.startsWith(`${next}:`) || line.startsWith(`${next}-`))) {
      file++
      groups.push(`${groups.length > 0 ? '---\n' : ''}File: ${next}`)
    }
    const name = d.files[file]
    if (name === undefined || !(line.startsWith(`${name}:`) || line.startsWith(`${name}-`))) continue
    const m = /^([:-])(\d+)[:-]/.exec(line.slice(name.length))
    if (m) groups.push(`L${m[2]}${m[1]} ${line.slice(name.length + m[0].length)}`)
  }
  const n = d.shown
  const head = `Found ${n} ${n === 1 ? 'match' : 'matches'} for pattern "${input.pattern}" ${where}${limited}:`
  return { ...out, content: [text([head, '---', ...groups, '---', ...notes].join('\n'))] }
}
