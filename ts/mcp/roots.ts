/**
 * MCP Roots (the client's `roots/list`): the folders the user opened in the client, which
 * `fsgate mcp --roots` takes as the session's allowed folders. Only `file://` roots that
 * are folders on this machine count; the file system root is never taken (it would allow
 * everything), and a root the client names but that does not exist is skipped. Each one
 * skipped is logged, so the person running the server sees why.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import type { Server } from '@modelcontextprotocol/sdk/server/index.js'

/** How long the client has to answer roots/list. */
const ROOTS_TIMEOUT_MS = 10_000

/** The client's roots as real folder paths, in its order, without duplicates; [] when it has none or fails to answer. */
export async function rootFolders(server: Server, log: (line: string) => void): Promise<string[]> {
  let roots: Array<{ uri: string; name?: string }>
  try {
    roots = (await server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS })).roots
  } catch (err) {
    log(`roots/list failed (${(err as Error).message}): the session keeps the configured folders`)
    return []
  }
  const out: string[] = []
  for (const root of roots) {
    const folder = rootFolder(root.uri)
    if (typeof folder !== 'string') log(`root ${JSON.stringify(root.uri).slice(0, 200)} skipped: ${folder.why}`)
    else if (!out.includes(folder)) out.push(folder)
  }
  return out
}

/** One root's folder, real, or why it is not taken. */
export function rootFolder(uri: string): string | { why: string } {
  let p: string
  try {
    if (!uri.startsWith('file:')) return { why: 'not a file:// URI' }
    p = fileURLToPath(uri)
  } catch {
    return { why: 'not a local file URI' }
  }
  let real: string
  try {
    real = fs.realpathSync(p)
    if (!fs.statSync(real).isDirectory()) return { why: 'not a folder' }
  } catch {
    return { why: 'no such folder' }
  }
  if (path.dirname(real) === real) return { why: 'the file system root is never an allowed folder' }
  return real
}
