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
import { explainSearchError, givenPath, plural, searchBase, splitAbsoluteGlob, walkErrors, walkFields, walkOptions, type WalkInput } from '../search/scope.js'
import { defineTool, type ToolContext } from '../tool.js'
import { DEFAULT_LIMITS } from '../limits.js'

export interface GlobInput extends WalkInput {
  pattern: string
  path?: string
}

/** Claude Code's Glob shows 100 paths unless the host set its own limit. */
const CLAUDE_GLOB_RESULTS = 100

const pattern = z
  .string()
  .min(1)
  .describe('The glob to match, e.g. "**/*.rs", "src/**/mod.rs", "docs/*.md", "*.{ts,tsx}". A pattern without "/" matches file names at any depth.')

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
        ...walkFields,
      }),
      toCanonical: (i) => i as unknown as GlobInput,
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
  const newest = ctx.dialect === 'claude'
  const limit = newest && ctx.limits.globResults === DEFAULT_LIMITS.globResults ? CLAUDE_GLOB_RESULTS : ctx.limits.globResults
  const r = await callNative<NativeGlobResult>(
    (id, cancel) =>
      ctx.fs.glob(completer, id, { path: abs, displayRoot: ctx.workspace, pattern, walk: walkOptions(input), newestFirst: newest, limit }, cancel),
    ctx.signal,
    ctx.lanes.search,
  ).catch(async (err) => {
    throw await explainSearchError(err, given, abs, ctx, { globField: 'pattern', folderOnly: true })
  })
  const files = r.paths === '' ? [] : r.paths.split('\0')
  const truncated = r.total > files.length
  const data = { pattern, path: displayPath(ctx.workspace, abs), files, numFiles: r.total, truncated, ...(r.errors.length ? { errors: r.errors.slice(0, 20) } : {}) }
  const unread = r.errors.length ? `\n(${walkErrors(r.errors)})` : ''
  if (files.length === 0) return { content: [text(`No files found matching ${clip(pattern, 300)}${given ? ` in ${given}` : ''}.${hiddenHint(input)}${unread}`)], data }
  let out = files.join('\n')
  if (truncated) out += `\n(Showing the first ${plural(files.length, 'file')} of ${r.total.toLocaleString('en-US')}. Use a more specific pattern or path to see the rest.)`
  return { content: [text(out + unread)], data }
}

function hiddenHint(input: WalkInput): string {
  if (input.include_hidden && input.include_ignored) return ''
  return ' Files that ignore rules leave out and hidden files were not searched; set include_ignored or include_hidden to include them.'
}
