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
import { explainSearchError, givenPath, plural, searchBase, splitGlobs, walkFields, walkOptions, type WalkInput } from '../search/scope.js'
import { defineTool, type ToolContext } from '../tool.js'

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
  max_results?: number
  offset?: number
}

/** Characters of a matching line shown (Claude Code's --max-columns). */
const MAX_COLUMNS = 500
/** Context lines a call may ask for, before or after each match. */
const MAX_CONTEXT = 100

const pattern = z.string().min(1).describe('The regular expression to search for (Rust regex syntax, as ripgrep): e.g. "fn main", "log.*Error", "\\bparse\\w+". Escape ( [ { . * + ? | with a backslash to match them literally.')
const mode = z.enum(['content', 'files_with_matches', 'count'])
const lines = z.number().int().min(0).max(MAX_CONTEXT)
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
        max_results: z.number().int().min(1).optional().describe('The most results: matching lines in content mode (context lines are not counted), files or counts otherwise. Default 1000.'),
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
        '-B': lines.optional().describe('Number of lines to show before each match. Requires output_mode: "content".'),
        '-A': lines.optional().describe('Number of lines to show after each match. Requires output_mode: "content".'),
        '-C': lines.optional().describe('Number of lines to show before and after each match. Requires output_mode: "content".'),
        '-n': z.boolean().optional().describe('Show line numbers in output. Requires output_mode: "content". Defaults to true.'),
        '-i': z.boolean().optional().describe('Case insensitive search.'),
        type: type.optional(),
        head_limit: z.number().int().min(0).optional().describe('Limit output to the first N lines/entries (matching lines in content mode, not counting context). Defaults to 1000; 0 means the default.'),
        offset: z.number().int().min(0).optional().describe('Skip the first N lines/entries before applying head_limit. Defaults to 0.'),
        multiline: z.boolean().optional().describe('Enable multiline mode where . matches newlines and patterns can span lines. Default: false.'),
        ...walkFields,
      }),
      toCanonical: (i) => {
        const c = i['-C'] as number | undefined
        return {
          pattern: i.pattern,
          path: i.path,
          output_mode: (i.output_mode as OutputMode | undefined) ?? 'files_with_matches',
          include: i.glob,
          type: i.type,
          case_sensitive: !(i['-i'] as boolean | undefined),
          context_before: (i['-B'] as number | undefined) ?? c,
          context_after: (i['-A'] as number | undefined) ?? c,
          multiline: i.multiline,
          line_numbers: (i['-n'] as boolean | undefined) ?? true,
          max_results: (i.head_limit as number | undefined) || undefined,
          offset: i.offset,
          include_hidden: i.include_hidden,
          include_ignored: i.include_ignored,
        } as GrepInput
      },
    },
  },
  run: grep,
})

async function grep(input: GrepInput, ctx: ToolContext): Promise<ToolOutput> {
  const given = givenPath(input.path)
  const abs = searchBase(ctx, given)
  const limit = Math.min(input.max_results ?? ctx.limits.searchResults, ctx.limits.searchResults)
  const offset = input.offset ?? 0
  const r = await callNative<NativeGrepResult>(
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
        },
        cancel,
      ),
    ctx.signal,
    ctx.lanes.search,
  ).catch(async (err) => {
    if (err?.code === 'INVALID_INPUT' && input.type !== undefined) {
      throw new InvalidInputError('INVALID_INPUT', `Unknown file type '${input.type}'. Use a ripgrep type name such as js, ts, py, rust, go, java, c, cpp, md or json, or filter with a glob instead.`, {
        data: { field: 'type' },
      })
    }
    const failure = await explainSearchError(err, given, abs, ctx, { globField: ctx.dialect === 'claude' ? 'glob' : 'include' })
    throw multilineHint(failure, input)
  })
  const files = r.files === '' ? [] : r.files.split('\0')
  const data: Record<string, unknown> = {
    mode: input.output_mode,
    path: displayPath(ctx.workspace, abs),
    numFiles: r.matchedFiles,
    ...(input.output_mode === 'files_with_matches' ? {} : { numMatches: r.matches }),
    shown: r.shown,
    truncated: r.truncated,
    files,
  }
  if (input.output_mode === 'count') data.counts = r.counts
  if (r.cutLines) data.cutLines = r.cutLines
  if (r.binaryFiles) data.binaryFiles = r.binaryFiles
  if (r.errors.length) data.errors = r.errors.slice(0, 20)
  const unread = r.errors.length ? `${plural(r.errors.length, 'path')} could not be read: ${r.errors.slice(0, 3).join('; ')}` : undefined
  if (r.shown === 0) {
    const why = r.matchedFiles > 0 ? ` (${plural(r.matchedFiles, 'file')} matched, but offset ${offset} is past the last result)` : ''
    // With nothing to show, say what was not searched (binary files are only counted otherwise, as rg does).
    const skipped = [...(r.binaryFiles ? [`${plural(r.binaryFiles, 'binary file')} skipped`] : []), ...(unread ? [unread] : [])]
    const also = skipped.length ? ` (${skipped.join('; ')})` : ''
    return { content: [text(`No matches found for ${clip(input.pattern, 300)}${given ? ` in ${given}` : ''}${why}.${also}`)], data }
  }
  const notes: string[] = []
  if (input.output_mode === 'files_with_matches') notes.unshift(`Found ${plural(r.matchedFiles, 'file')}`)
  if (input.output_mode === 'count') notes.unshift(`Found ${plural(r.matches, 'match', 'matches')} in ${plural(r.matchedFiles, 'file')}`)
  const after: string[] = []
  if (r.truncated) {
    if (r.budgetReached) after.push(`(The output reached its ${Math.round(ctx.limits.searchOutputBytes / 1024)} KiB limit.)`)
    const unit = input.output_mode === 'content' ? 'matching lines' : input.output_mode === 'count' ? 'counts' : 'files'
    const next =
      ctx.dialect === 'claude'
        ? `Continue with offset=${offset + r.shown}, or narrow the pattern, path or glob.`
        : 'Narrow the pattern, path or include to see the rest.'
    after.push(`(Showing ${r.shown.toLocaleString('en-US')} ${unit}; there are more. ${next})`)
  }
  if (r.cutLines) after.push(`(${plural(r.cutLines, 'line')} longer than ${MAX_COLUMNS} characters ${r.cutLines === 1 ? 'was' : 'were'} cut around the match; Read the line for all of it.)`)
  if (unread) after.push(`(${unread}.)`)
  const body = r.text.slice(0, -1)
  const out = [...notes, body, ...after].join('\n')
  return { content: [text(out)], data }
}

/** A newline in a pattern is refused unless multiline is on: say so. */
function multilineHint(err: unknown, input: GrepInput): unknown {
  if (!(err instanceof FsgateError) || err.code !== 'INVALID_PATTERN' || input.multiline || !/\\n|\n/.test(input.pattern)) return err
  return new InvalidInputError('INVALID_PATTERN', `${err.message} To match across lines, set multiline: true.`, { data: err.data })
}
