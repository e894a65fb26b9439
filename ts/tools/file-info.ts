/**
 * file_info: what one path is (type, size, times, permissions, a link's target), without
 * reading it: the MCP filesystem server's get_file_info, confined like every path.
 */
import { z } from 'zod'

import { displayPath } from '../policy/paths.js'
import { text, type ToolOutput } from '../result.js'
import { explainSearchError, searchBase } from '../search/scope.js'
import { defineTool, type ToolContext } from '../tool.js'
import { num } from './common.js'
import { humanSize, listing } from './list.js'

export interface FileInfoInput {
  path: string
}

export const fileInfoTool = defineTool<FileInfoInput>({
  name: 'file_info',
  dialects: {
    revka: {
      name: 'file_info',
      description: `Tells what one path is without reading it: file or folder (or link, with its target), size, modification, access and creation times, and permissions. Relative paths start at the workspace root.
- Use it to check that a path exists or how large a file is before reading it; list_directory shows a folder's entries.`,
      schema: z.strictObject({ path: z.string().min(1).describe('The file or folder, relative to the workspace or absolute.') }),
      toCanonical: (i) => i as unknown as FileInfoInput,
    },
  },
  run: info,
})

async function info(input: FileInfoInput, ctx: ToolContext): Promise<ToolOutput> {
  const abs = searchBase(ctx, input.path)
  const l = await listing(ctx, abs, {}, 0, 1).catch(async (err) => {
    throw await explainSearchError(err, input.path, abs, ctx)
  })
  const r = l.root
  const when = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null)
  const mode = r.mode.toString(8).padStart(3, '0')
  const data = {
    path: displayPath(ctx.workspace, l.realPath),
    realPath: l.realPath,
    type: r.type,
    size: r.size,
    modified: when(r.mtimeMs),
    accessed: when(r.atimeMs),
    created: when(r.birthtimeMs),
    isDirectory: r.type === 'dir',
    isFile: r.type === 'file',
    isSymlink: r.linkTarget !== undefined,
    permissions: mode,
    ...(r.linkTarget !== undefined ? { linkTarget: r.linkTarget } : {}),
  }
  const lines = [
    `path: ${data.path}${data.realPath !== abs ? ` (real path ${data.realPath})` : ''}`,
    `type: ${r.type === 'dir' ? 'folder' : r.type === 'other' ? 'special file' : r.type}`,
    ...(r.type === 'dir' ? [] : [`size: ${num(r.size)} bytes (${humanSize(r.size)})`]),
    `modified: ${data.modified ?? 'unknown'}`,
    `accessed: ${data.accessed ?? 'unknown'}`,
    `created: ${data.created ?? 'not recorded by this file system'}`,
    `permissions: ${rwx(r.mode)} (${mode})`,
    ...(r.linkTarget !== undefined ? [`link to: ${r.linkTarget}`] : []),
  ]
  return { content: [text(lines.join('\n'))], data }
}

/** `rw-r--r--` for 0o644. */
function rwx(mode: number): string {
  let out = ''
  for (const shift of [6, 3, 0]) {
    const bits = (mode >> shift) & 7
    out += `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${bits & 1 ? 'x' : '-'}`
  }
  return out
}
