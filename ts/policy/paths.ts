/**
 * The one path resolver every tool uses (SPEC §5.1). This part is lexical: it refuses
 * malformed paths and turns a model's path into an absolute one. The native layer then
 * checks the *real* path (symlinks resolved, and on Linux the opened file itself) against
 * the workspace and `allowedPaths` at the moment of use.
 */
import { homedir } from 'node:os'
import path from 'node:path'

import { InvalidInputError } from '../errors.js'

/** Resolves a model-supplied path against the workspace. Throws INVALID_INPUT for malformed paths. */
export function resolvePath(workspace: string, input: string, field = 'path'): string {
  if (input.length === 0) throw invalid(field, 'is empty; give a file path')
  if (input.includes('\0')) throw invalid(field, 'contains a NUL byte; remove it and retry')
  if (input.length > 4096) throw invalid(field, 'is longer than 4096 characters; give a shorter path')
  let p = input
  if (p === '~' || p.startsWith('~/')) p = path.join(homedir(), p.slice(1))
  return path.resolve(workspace, p)
}

/** How a path is shown to the model: relative to the workspace when inside it. */
export function displayPath(workspace: string, abs: string): string {
  const rel = path.relative(workspace, abs)
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs
}

function invalid(field: string, what: string): InvalidInputError {
  return new InvalidInputError('INVALID_INPUT', `${field} ${what}.`, { data: { field } })
}

/**
 * The working copy beside an existing file outside the workspace (SPEC §5.2):
 * `report.md` → `report.edited.md`, `archive.tar.gz` → `archive.tar.edited.gz`,
 * `Makefile` → `Makefile.edited`, `.env` → `.env.edited`.
 */
export function workingCopyPath(file: string): string {
  const dir = path.dirname(file)
  const base = path.basename(file)
  const dot = base.lastIndexOf('.')
  if (dot <= 0) return path.join(dir, `${base}.edited`)
  return path.join(dir, `${base.slice(0, dot)}.edited${base.slice(dot)}`)
}

/** Whether a path is itself a working copy (which may be edited in place). */
export function isWorkingCopy(file: string): boolean {
  const base = path.basename(file)
  return base.endsWith('.edited') || /\.edited\.[^.]+$/.test(base)
}

/** The original a working copy was made from: the inverse of `workingCopyPath`. */
export function originalOf(copy: string): string {
  const dir = path.dirname(copy)
  const base = path.basename(copy)
  if (base.endsWith('.edited')) return path.join(dir, base.slice(0, -'.edited'.length))
  return path.join(dir, base.replace(/\.edited(\.[^.]+)$/, '$1'))
}

/** Whether `p` is `root` or inside it (both absolute and real). */
export function within(root: string, p: string): boolean {
  const rel = path.relative(root, p)
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel))
}
