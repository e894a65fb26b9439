/**
 * The listing behind `fsgate ls` and `fsgate tree`: every file below a folder, found by
 * one glob_search walk (the same confinement and ignore rules as the agent's tools), and
 * the folder's entries or its tree derived from that list.
 *
 * The seam: `listFiles` is the one place that asks a tool. When the `list_directory` tool
 * lands, `ls` of one level should ask it instead (it also sees folders that hold no
 * listed file, which a list of files cannot show); the shapes below stay.
 */
import path from 'node:path'

import type { ToolResult } from '../result.js'
import { call, type CommandContext, upTo } from './args.js'

/** Every file below a folder, relative to it, in the walk's order (sorted by path, component by component). */
export interface Listing {
  files: string[]
  total: number
}

/** The files below `folder` (a path as tools take it); `listing` is absent when the tool failed. */
export async function listFiles(
  ctx: CommandContext,
  folder: string,
  walk: { include_hidden?: boolean; include_ignored?: boolean },
): Promise<{ result: ToolResult; listing?: Listing }> {
  const result = await call(ctx, 'glob_search', { pattern: '*', path: folder === '.' ? undefined : folder, ...walk }, { limits: { globResults: upTo(Number.POSITIVE_INFINITY) } })
  if (result.isError) return { result }
  const base = path.resolve(ctx.place.workspace, String(result.data?.path ?? '.'))
  const files = ((result.data?.files as string[] | undefined) ?? []).map((f) => path.relative(base, path.resolve(ctx.place.workspace, f)).split(path.sep).join('/'))
  return { result, listing: { files, total: result.data?.numFiles as number } }
}

export interface Entry {
  name: string
  kind: 'file' | 'folder'
}

/** The folder's own entries: its files, and its subfolders that hold a listed file. */
export function folderEntries(listing: Listing): Entry[] {
  const seen = new Set<string>()
  const entries: Entry[] = []
  for (const f of listing.files) {
    const slash = f.indexOf('/')
    const name = slash < 0 ? f : f.slice(0, slash)
    if (seen.has(name)) continue
    seen.add(name)
    entries.push({ name, kind: slash < 0 ? 'file' : 'folder' })
  }
  return entries
}

/** One line of a tree: the drawing before the name, the name, whether it is a folder. */
export interface TreeLine {
  prefix: string
  name: string
  folder: boolean
}

interface Node {
  children: Map<string, Node>
  file: boolean
}

/** The tree of a listing, as `tree` draws it, folders expanded down to `depth` levels. */
export function treeLines(listing: Listing, depth: number): TreeLine[] {
  const root: Node = { children: new Map(), file: false }
  for (const f of listing.files) {
    let node = root
    const parts = f.split('/')
    parts.forEach((part, i) => {
      let child = node.children.get(part)
      if (!child) {
        child = { children: new Map(), file: i === parts.length - 1 }
        node.children.set(part, child)
      }
      node = child
    })
  }
  const lines: TreeLine[] = []
  const draw = (node: Node, indent: string, level: number) => {
    const kids = [...node.children]
    kids.forEach(([name, child], i) => {
      const last = i === kids.length - 1
      lines.push({ prefix: `${indent}${last ? '└── ' : '├── '}`, name, folder: !child.file })
      if (!child.file && level < depth) draw(child, `${indent}${last ? '    ' : '│   '}`, level + 1)
    })
  }
  draw(root, '', 1)
  return lines
}
