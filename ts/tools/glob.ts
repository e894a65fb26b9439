/**
 * glob_search / Glob (SPEC §3.5): files whose path matches a glob, found by an
 * in-process parallel walk that honours .gitignore, .ignore and hidden-file rules as
 * ripgrep does (also outside git repositories). revka lists sorted paths; Glob lists the
 * most recently modified first, as Claude Code does.
 */
import path from 'node:path'

import { z } from 'zod'

import { clip, InvalidInputError } from '../errors.js'
import { callNative, completer, type NativeGlobResult } from '../native.js'
import { displayPath } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { explainSearchError, GEMINI_IGNORE, givenPath, plural, searchBase, splitAbsoluteGlob, walkErrors, walkFields, walkOptions, type WalkInput } from '../search/scope.js'
import { defineTool, type ToolContext } from '../tool.js'
import { DEFAULT_LIMITS } from '../limits.js'
import { loneWithin } from './budget.js'
import { MAX_OFFSET, num, pageTokens, recordsWithin } from './common.js'

export interface GlobInput extends WalkInput {
  pattern: string
  path?: string
  /** Paths to skip, to continue a long result (the offset a continuation names). */
  offset?: number
}

/** Claude Code's Glob shows 100 paths unless the host set its own limit. */
const CLAUDE_GLOB_RESULTS = 100

const pattern = z
  .string()
  .min(1)
  .describe('The glob to match, e.g. "**/*.rs", "src/**/mod.rs", "docs/*.md", "*.{ts,tsx}". A pattern without "/" matches file names at any depth.')

const offset = z.number().int().min(0).optional().describe('Paths to skip, to continue a long result: the output names the offset to go on at. Default 0.')

const guide = (grep: string, order: string) =>
  `Finds files by name or path pattern, fast, in any size of tree.
- Supports globs such as "**/*.js", "src/**/*.ts" or "*.{json,yaml}"; a pattern without "/" matches file names at any depth.
- Returns matching file paths relative to the workspace, ${order}.
- Skips files that .gitignore or .ignore rules leave out, and hidden files; set include_ignored or include_hidden to see them.
- To search file contents, use ${grep} instead.`

export const globTool = defineTool<GlobInput>({
  name: 'glob_search',
  dialects: {
    revka: {
      name: 'glob_search',
      description: guide('content_search', 'sorted by path'),
      schema: z.strictObject({
        pattern,
        path: z.string().optional().describe('The folder to search in, relative to the workspace or absolute. Default: the workspace root.'),
        offset,
        ...walkFields,
      }),
      toCanonical: (i) => i as unknown as GlobInput,
    },
    claude: {
      name: 'Glob',
      description: guide('Grep', 'the most recently modified first'),
      schema: z.strictObject({
        pattern,
        path: z
          .string()
          .optional()
          .describe('The directory to search in. If not specified, the current working directory will be used. Omit it for the default; do not enter "undefined" or "null".'),
        offset,
        ...walkFields,
      }),
      toCanonical: (i) => i as unknown as GlobInput,      // Claude Code's GlobOutput names the files `filenames`.
      present: (out) => ({ ...out, data: { ...out.data, filenames: out.data?.files } }),
    },
    gemini: {
      name: 'glob',
      description: `Finds files matching a glob pattern (e.g. "src/**/*.ts", "**/*.md"), returning absolute paths, the most recently modified first. Fast in any size of tree.
- A pattern without "/" matches file names at any depth. Matching ignores case unless case_sensitive is true.
- Files that .gitignore or .geminiignore rules leave out, and hidden files, are skipped; set respect_git_ignore to false to include ignored ones.
- To search file contents, use grep_search instead.`,
      schema: z.strictObject({
        pattern: z.string().min(1).describe("The glob pattern to match against (e.g. '**/*.py', 'docs/*.md')."),
        dir_path: z.string().describe('The directory to search within, relative to the workspace or absolute. Default: the workspace root.').optional(),
        case_sensitive: z.boolean().describe('Whether matching is case-sensitive. Defaults to false.').optional(),
        respect_git_ignore: z.boolean().describe('Whether to respect .gitignore patterns. Defaults to true.').optional(),
        respect_gemini_ignore: z.boolean().describe('Whether to respect .geminiignore patterns. Defaults to true (respect_git_ignore false sets aside every ignore file, .geminiignore too).').optional(),
      }),
      toCanonical: (i) => ({
        pattern: i.case_sensitive === true ? (i.pattern as string) : anyCase(i.pattern as string),
        path: i.dir_path as string | undefined,
        include_ignored: i.respect_git_ignore === false,
        ignore_files: i.respect_gemini_ignore === false ? undefined : GEMINI_IGNORE,
      }),
      present: geminiAnswer,
    },
  },
  run: glob,
})

async function glob(input: GlobInput, ctx: ToolContext): Promise<ToolOutput> {
  let pattern = input.pattern
  let given = givenPath(input.path)
  const split = splitAbsoluteGlob(pattern)
  if (split && given === undefined) {
    given = split.base
    pattern = split.pattern
  } else if (split) {
    // An absolute pattern with a path: it must lie inside that path.
    const rel = path.relative(searchBase(ctx, given), split.base)
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new InvalidInputError('INVALID_INPUT', `pattern ${clip(input.pattern, 300)} is outside path ${given}. Give a pattern relative to path, or leave path out.`, {
        data: { field: 'pattern' },
      })
    }
    pattern = `/${rel ? `${rel}/` : ''}${split.pattern.slice(1)}`
  }
  const abs = searchBase(ctx, given)
  const newest = ctx.dialect === 'claude' || ctx.dialect === 'gemini'
  const limit = newest && ctx.limits.globResults === DEFAULT_LIMITS.globResults ? CLAUDE_GLOB_RESULTS : ctx.limits.globResults
  const offset = Math.min(input.offset ?? 0, MAX_OFFSET)
  const r = await callNative<NativeGlobResult>(
    (id, cancel) =>
      ctx.fs.glob(completer, id, { path: abs, displayRoot: ctx.workspace, pattern, walk: walkOptions(input), newestFirst: newest, limit, offset }, cancel),
    ctx.signal,
    ctx.lanes.search,
  ).catch(async (err) => {
    throw await explainSearchError(err, given, abs, ctx, { globField: 'pattern', folderOnly: true })
  })
  const listed = r.paths === '' ? [] : r.paths.split('\0')
  // A page of long paths ends before the token budget, at a path (gemini-cli shows them absolute).
  const shownAs = ctx.dialect === 'gemini' ? listed.map((f) => path.resolve(ctx.workspace, f)) : listed
  const files = listed.slice(0, await recordsWithin(ctx, shownAs))
  const next = offset + files.length
  const truncated = r.total > next
  const data = { pattern, path: displayPath(ctx.workspace, abs), files, numFiles: r.total, offset, shown: files.length, truncated, fromIndex: r.fromIndex, ...(r.errors.length ? { errors: r.errors.slice(0, 20) } : {}) }
  const unread = r.errors.length ? `\n(${walkErrors(r.errors)})` : ''
  if (files.length === 0 && offset > 0 && r.total > 0) {
    return { content: [text(`offset ${num(offset)} is past the last of the ${plural(r.total, 'file')} matching ${clip(pattern, 300)}; continue with offset=0.${unread}`)], data }
  }
  if (files.length === 0) return { content: [text(`No files found matching ${clip(pattern, 300)}${given ? ` in ${given}` : ''}.${hiddenHint(input)}${unread}`)], data }
  let out = files.length === 1 ? await loneWithin(ctx, files[0], pageTokens(ctx.limits.resultTokens)) : files.join('\n')
  if (truncated) out += `\n(Showing files ${num(offset + 1)}-${num(next)} of ${num(r.total)}. Continue with offset=${next}, or use a more specific pattern or path.)`
  return { content: [text(out + unread)], data }
}

function hiddenHint(input: WalkInput): string {
  if (input.include_hidden && input.include_ignored) return ''
  return ' Files that ignore rules leave out and hidden files were not searched; set include_ignored or include_hidden to include them.'
}

/** A glob that matches letters in either case: `*.ts` → `*.[tT][sS]` (classes and escapes kept). */
export function anyCase(pattern: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]
    if (ch === '\\' && i + 1 < pattern.length) {
      out += ch + pattern[++i]
      continue
    }
    if (inClass) {
      if (ch === ']') inClass = false
      out += ch
      continue
    }
    if (ch === '[') inClass = true
    const lower = ch.toLowerCase()
    const upper = ch.toUpperCase()
    out += lower !== upper && /[a-z]/i.test(ch) ? `[${lower}${upper}]` : ch
  }
  return out
}

/** gemini-cli's glob answer: `Found N file(s) matching "p" within /abs, sorted by modification time (newest first):` and absolute paths. */
function geminiAnswer(out: ToolOutput, input: GlobInput, ctx: ToolContext): ToolOutput {
  const d = out.data as { files: string[]; numFiles: number; truncated: boolean; path: string }
  const dir = path.resolve(ctx.workspace, d.path)
  // The pattern as the model wrote it (before anyCase).
  const pattern = input.pattern.replace(/\[([a-z])([A-Z])\]/g, (all, lo: string, up: string) => (lo.toUpperCase() === up ? lo : all))
  if (d.files.length === 0) return { ...out, content: [text(`No files found matching pattern "${pattern}" within ${dir}`)] }
  const files = d.files.map((f) => path.resolve(ctx.workspace, f))
  // gemini-cli's glob has no offset: the rest is reached by a narrower pattern.
  const more = d.truncated ? `\n(Showing the first ${num(files.length)} of ${num(d.numFiles)}. Use a more specific pattern or dir_path to see the rest.)` : ''
  return { ...out, content: [text(`Found ${d.numFiles} file(s) matching "${pattern}" within ${dir}, sorted by modification time (newest first):\n${files.join('\n')}${more}`)] }
}
