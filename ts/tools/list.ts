/**
 * list_directory (SPEC §8.2): a folder's entries, or a tree of them to a depth, with the
 * ignore and hidden-file rules of the searches and their switches, sorted, paged with a
 * visible continuation, confined like every path. It meets what the MCP filesystem
 * server's list_directory, list_directory_with_sizes and directory_tree give (file_info
 * is its sibling for get_file_info), and gemini-cli's list_directory.
 *
 * The listing itself is one engine call (`listing()` below) over plain options, so that
 * a snapshot of the tree can answer it later instead of a walk.
 */
import { z } from 'zod'

import { clip, InvalidInputError } from '../errors.js'
import { callNative, completer, type NativeListResult } from '../native.js'
import { displayPath } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { explainSearchError, GEMINI_IGNORE, givenPath, plural, searchBase, walkErrors, walkFields, type WalkInput } from '../search/scope.js'
import { defineTool, type ToolContext } from '../tool.js'
import { loneWithin } from './budget.js'
import { MAX_OFFSET, num, pageTokens, recordsWithin } from './common.js'

export interface ListInput extends WalkInput {
  /** The folder (or file), relative to the workspace or absolute; default the workspace. */
  path?: string
  /** 1: the folder's own entries; more: a tree that deep. */
  depth?: number
  /** Show each file's size. */
  sizes?: boolean
  /** Globs of entries to leave out (a glob without `/` matches a name at any depth). */
  ignore?: string[]
  /** Entries skipped before the page. */
  offset?: number
  limit?: number
  /** Folders before files among siblings (gemini-cli's order). */
  dirs_first?: boolean
}

/** One entry of a page. */
export interface ListedEntry {
  /** Relative to the folder listed, `/`-separated. */
  path: string
  type: 'file' | 'dir' | 'symlink' | 'other'
  depth: number
  size: number
  mtimeMs: number
  linkTarget?: string
}

/** A page of a listing: what any source of listings (a walk, an index) answers. */
export interface Listing {
  realPath: string
  /** The path itself (for a file, all there is). */
  root: { type: ListedEntry['type']; size: number; mtimeMs: number; atimeMs: number; birthtimeMs: number; mode: number; linkTarget?: string }
  entries: ListedEntry[]
  total: number
  dirs: number
  files: number
  complete: boolean
  errors: string[]
  /** Whether the live index's snapshot answered (else a walk). */
  fromIndex: boolean
}

/** The deepest tree a call may ask for. */
const MAX_DEPTH = 64

const KINDS: Record<string, ListedEntry['type']> = { f: 'file', d: 'dir', l: 'symlink', o: 'other' }

const guide = `Lists a folder: its files and subfolders (folders end with "/"), sorted by name. Relative paths start at the workspace root.
- depth 2 or more shows a tree: each folder followed by what it holds, indented.
- Like the searches, it leaves out hidden entries and what .gitignore or .ignore rules leave out; set include_hidden or include_ignored to see them. ignore takes globs of names to leave out.
- sizes adds each file's size. Long listings are paged: the output says the offset to continue at.
- To find files by name anywhere below, glob_search is faster; to see one path's details, file_info.`

export const listTool = defineTool<ListInput>({
  name: 'list_directory',
  dialects: {
    revka: {
      name: 'list_directory',
      description: guide,
      schema: z.strictObject({
        path: z.string().describe('The folder to list, relative to the workspace or absolute. Default: the workspace root.').optional(),
        depth: z.number().int().min(1).max(MAX_DEPTH).describe('1 (default): the folder\'s own entries; 2 or more: a tree that many levels deep.').optional(),
        sizes: z.boolean().describe('Show the size of each file (default false).').optional(),
        ignore: z.array(z.string()).describe('Globs of entries to leave out, e.g. ["*.log", "dist"]; a glob without "/" matches a name at any depth.').optional(),
        offset: z.number().int().min(0).describe('Entries to skip, to continue a long listing (default 0).').optional(),
        limit: z.number().int().min(1).describe('The most entries to show (default 1000).').optional(),
        ...walkFields,
      }),
      toCanonical: (i) => i as unknown as ListInput,
    },
    gemini: {
      name: 'list_directory',
      description: `Lists the names of files and subdirectories directly within a specified directory path, folders first. Can optionally ignore entries matching provided glob patterns, and respects .gitignore unless told not to.
- Long listings are paged: the output says the offset to continue at.`,
      schema: z.strictObject({
        dir_path: z.string().describe('The path to the directory to list.'),
        ignore: z.array(z.string()).describe('List of glob patterns to ignore.').optional(),
        file_filtering_options: z
          .object({
            respect_git_ignore: z.boolean().describe('Whether to respect .gitignore patterns (default true).').optional(),
            respect_gemini_ignore: z.boolean().describe('Whether to respect .geminiignore patterns (default true; respect_git_ignore false sets aside every ignore file, .geminiignore too).').optional(),
          })
          .describe('Whether to respect ignore patterns from .gitignore or .geminiignore.')
          .optional(),
        offset: z.number().int().min(0).describe('Entries to skip, to continue a long listing (default 0).').optional(),
      }),
      toCanonical: ({ dir_path, ignore, file_filtering_options, offset }) => {
        const filtering = file_filtering_options as { respect_git_ignore?: boolean; respect_gemini_ignore?: boolean } | undefined
        // gemini-cli shows hidden entries and leaves out only what ignore files do, .geminiignore among them.
        const ignore_files = filtering?.respect_gemini_ignore === false ? undefined : GEMINI_IGNORE
        return { path: dir_path as string, ignore: ignore as string[] | undefined, offset: offset as number | undefined, include_hidden: true, include_ignored: filtering?.respect_git_ignore === false, ignore_files, dirs_first: true, sizes: true }
      },
      present: geminiAnswer,
    },
  },
  run: list,
})

/** A page of the listing of `abs`, from the engine's walk. */
export async function listing(ctx: ToolContext, abs: string, input: ListInput, depth: number, limit: number): Promise<Listing> {
  const r = await callNative<NativeListResult>(
    (id, cancel) =>
      ctx.fs.list(
        completer,
        id,
        {
          path: abs,
          walk: {
            includeHidden: input.include_hidden ?? false,
            includeIgnored: input.include_ignored ?? false,
            globs: input.ignore?.filter((g) => g.trim() !== '').map((g) => `!${g.trim()}`),
            ignoreFiles: input.ignore_files,
          },
          depth,
          offset: Math.min(input.offset ?? 0, MAX_OFFSET),
          limit,
          dirsFirst: input.dirs_first ?? false,
        },
        cancel,
      ),
    ctx.signal,
    ctx.lanes.search,
  )
  const paths = r.paths === '' ? [] : r.paths.split('\0')
  const links = r.linkTargets.split('\0')
  const entries = paths.map((p, i): ListedEntry => {
    const e: ListedEntry = { path: p, type: KINDS[r.kinds[i]] ?? 'other', depth: r.depths[i], size: r.sizes[i], mtimeMs: r.mtimes[i] }
    if (links[i]) e.linkTarget = links[i]
    return e
  })
  const root = r.root
  return {
    realPath: r.realPath,
    root: { type: root.kind as ListedEntry['type'], size: root.size, mtimeMs: root.mtimeMs, atimeMs: root.atimeMs, birthtimeMs: root.birthtimeMs, mode: root.mode, ...(root.linkTarget ? { linkTarget: root.linkTarget } : {}) },
    entries, total: r.total, dirs: r.dirs, files: r.files, complete: r.complete, errors: r.errors, fromIndex: r.fromIndex }
}

async function list(input: ListInput, ctx: ToolContext): Promise<ToolOutput> {
  const given = givenPath(input.path)
  const abs = searchBase(ctx, given)
  const depth = Math.min(input.depth ?? 1, MAX_DEPTH)
  const limit = Math.min(input.limit ?? ctx.limits.listEntries, ctx.limits.listEntries)
  const offset = input.offset ?? 0
  const l = await listing(ctx, abs, input, depth, limit).catch(async (err) => {
    throw await explainSearchError(err, given, abs, ctx, { globField: 'ignore', folderOnly: true })
  })
  const shownPath = displayPath(ctx.workspace, l.realPath)
  if (l.root.type !== 'dir') {
    throw new InvalidInputError('INVALID_INPUT', `${given ?? shownPath} is a file (${humanSize(l.root.size)}), not a folder. List its folder, or read the file.`, {
      data: { field: 'path', type: l.root.type, size: l.root.size },
    })
  }
  const rows = l.entries.map((e) => row(e, input.sizes === true, depth > 1))
  // Every page fits the result budget: a page of long names is cut short, visibly.
  const fit = await recordsWithin(ctx, rows)
  if (fit === 1) rows[0] = await loneWithin(ctx, rows[0], pageTokens(ctx.limits.resultTokens))
  const entries = l.entries.slice(0, fit)
  const next = offset + fit
  const data = {
    path: shownPath,
    realPath: l.realPath,
    depth,
    entries,
    total: l.total,
    dirs: l.dirs,
    files: l.files,
    offset,
    shown: fit,
    truncated: next < l.total || !l.complete,
    complete: l.complete,
    fromIndex: l.fromIndex,
    ...(l.errors.length ? { errors: l.errors.slice(0, 20) } : {}),
  }
  const notes: string[] = []
  if (l.total === 0) notes.push(`(${shownPath === '.' ? 'the workspace' : shownPath} has no entries to show${input.include_hidden && input.include_ignored ? '' : '; hidden and ignored entries are left out, set include_hidden or include_ignored to see them'})`)
  else if (next < l.total) notes.push(`(Showing entries ${num(offset + 1)}-${num(next)} of ${num(l.total)}; continue with offset=${next}.)`)
  else if (fit === 0 && offset > 0) notes.push(`(offset ${num(offset)} is past the last of the ${num(l.total)} entries)`)
  if (!l.complete) notes.push(`(The listing stopped after ${num(l.total)} entries: list a smaller folder or a smaller depth.)`)
  if (l.errors.length) notes.push(`(${walkErrors(l.errors)})`)
  return { content: [text([...rows.slice(0, fit), ...notes].join('\n'))], data }
}

/** One line of the listing: indented by depth in a tree, folders with "/", links with their target. */
function row(e: ListedEntry, sizes: boolean, tree: boolean): string {
  const name = tree ? e.path.slice(e.path.lastIndexOf('/') + 1) : e.path
  const indent = tree ? '  '.repeat(e.depth - 1) : ''
  switch (e.type) {
    case 'dir':
      return `${indent}${name}/`
    case 'symlink':
      return `${indent}${name} -> ${clip(e.linkTarget ?? '?', 200)}`
    case 'other':
      return `${indent}${name} (special file)`
    default:
      return sizes ? `${indent}${name} (${humanSize(e.size)})` : `${indent}${name}`
  }
}

/** 532 B, 1.2 KB, 3.4 MB. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let n = bytes / 1024
  let u = 0
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024
    u++
  }
  return `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[u]}`
}

/** gemini-cli's answer: `Directory listing for /abs:`, `[DIR] name`, `name (N bytes)`. */
function geminiAnswer(out: ToolOutput): ToolOutput {
  const d = out.data as { realPath: string; entries: ListedEntry[]; total: number; offset: number; shown: number }
  if (d.total === 0) return { ...out, content: [text(`Directory ${d.realPath} is empty.`)] }
  const lines = d.entries.map((e) => (e.type === 'dir' ? `[DIR] ${e.path}` : e.type === 'file' ? `${e.path} (${e.size} bytes)` : `${e.path} (${e.type})`))
  const next = d.offset + d.shown
  const more = next < d.total ? `\n\n(Showing ${plural(d.shown, 'entry', 'entries')} of ${num(d.total)}; continue with offset=${next}.)` : ''
  return { ...out, content: [text(`Directory listing for ${d.realPath}:\n${lines.join('\n')}${more}`)] }
}
