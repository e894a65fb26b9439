/**
 * What the search tools share: where a search starts, which files its walk yields, and
 * how a native failure is explained to the model.
 */
import path from 'node:path'

import { z } from 'zod'

import { clip, clipMiddle, FsgateError, InvalidInputError } from '../errors.js'
import type { NativeWalkOptions } from '../native.js'
import { displayPath, resolvePath } from '../policy/paths.js'
import { didYouMean, similarNames } from '../similar.js'
import type { ToolContext } from '../tool.js'

/** The walk switches every search tool takes. */
export const walkFields = {
  include_hidden: z.boolean().optional().describe('Also search hidden files and folders (names starting with a dot). Default false; .git is never searched.'),
  include_ignored: z.boolean().optional().describe('Also search files that .gitignore / .ignore rules leave out (e.g. node_modules, build output). Default false.'),
}

export interface WalkInput {
  include_hidden?: boolean
  include_ignored?: boolean
  /** More ignore files read like .gitignore (the gemini dialect's .geminiignore); set by a dialect, not by the model. */
  ignore_files?: string[]
}

/** The ignore file gemini-cli reads beside .gitignore, for the gemini dialect's walks. */
export const GEMINI_IGNORE = ['.geminiignore']

export function walkOptions(input: WalkInput, globs?: string[], fileType?: string): NativeWalkOptions {
  return { includeHidden: input.include_hidden ?? false, includeIgnored: input.include_ignored ?? false, globs, fileType, ignoreFiles: input.ignore_files }
}

/** `path` as given, or undefined when absent — also for the "undefined" and "null" models sometimes send. */
export function givenPath(given: string | undefined): string | undefined {
  return given === undefined || given === '' || given === 'undefined' || given === 'null' ? undefined : given
}

/** The absolute folder (or file) a search starts from: `path` resolved, else the workspace. */
export function searchBase(ctx: ToolContext, given: string | undefined): string {
  return given === undefined || given === '.' ? ctx.workspace : resolvePath(ctx.workspace, given)
}

/**
 * Splits an absolute glob (`/repo/src/*.ts`) into the folder before its first wildcard
 * and the rest, anchored at that folder (`/*.ts`: files in src, not below it), so a model
 * that writes full paths still gets what it means.
 */
export function splitAbsoluteGlob(pattern: string): { base: string; pattern: string } | undefined {
  if (!path.isAbsolute(pattern)) return undefined
  const parts = pattern.split('/')
  const wild = parts.findIndex((p) => /[*?[\]{}]/.test(p))
  if (wild <= 0) return undefined
  return { base: parts.slice(0, wild).join('/') || '/', pattern: `/${parts.slice(wild).join('/')}` }
}

/** Include globs as the model writes them: several may be separated by spaces or commas outside braces. */
export function splitGlobs(spec: string | undefined): string[] | undefined {
  if (spec === undefined || spec.trim() === '') return undefined
  const out: string[] = []
  let depth = 0
  let current = ''
  for (const ch of spec) {
    if (ch === '{') depth++
    if (ch === '}') depth = Math.max(0, depth - 1)
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      if (current) out.push(current)
      current = ''
    } else current += ch
  }
  if (current) out.push(current)
  return out
}

export interface ExplainOptions {
  /** The input field that holds globs: a bad one is INVALID_PATTERN too, but the model must fix that field, not the regex. */
  globField?: string
  /** The tool searches folders only: a file as `path` (INVALID_INPUT from the engine) is explained as such. */
  folderOnly?: boolean
}

/** Turns a native failure of a search into a message that tells the model what to do next. */
export async function explainSearchError(err: unknown, given: string | undefined, abs: string, ctx: ToolContext, options: ExplainOptions = {}): Promise<unknown> {
  const globField = options.globField ?? 'pattern'
  if (!(err instanceof FsgateError)) return err
  const data = { path: given ?? '.' }
  // What the messages echo of the path (data keeps it whole).
  const where = clipMiddle(given ?? '.', 60)
  const again = (code: FsgateError['code'], message: string, extra: Record<string, unknown> = {}) =>
    new (err.constructor as typeof FsgateError)(code, message, { data: { ...data, ...extra } })
  switch (err.code) {
    case 'NOT_FOUND': {
      const near = (await similarNames(abs)).map((p) => displayPath(ctx.workspace, p))
      const hint = near.length > 0 ? didYouMean(near) : ` Check the path; relative paths start at the workspace (${clipMiddle(ctx.workspace, 60)}).`
      return again('NOT_FOUND', `Path does not exist: ${where}.${hint}`, { suggestions: near })
    }
    case 'PATH_OUTSIDE_WORKSPACE':
      return again('PATH_OUTSIDE_WORKSPACE', `${where} is outside the workspace (${ctx.workspace}) and the allowed paths, so it cannot be searched. Search a folder inside the workspace.`)
    case 'BLOCKED_DEVICE':
      return again('BLOCKED_DEVICE', `${where} is a device, FIFO or socket, which cannot be searched. Give a folder or a regular file.`)
    case 'PERMISSION_DENIED':
      return again('PERMISSION_DENIED', `Permission denied reading ${where}. Search another folder.`)
    case 'INVALID_INPUT':
      if (!options.folderOnly) return err
      return new InvalidInputError('INVALID_INPUT', `${where} is a file, not a folder. Give the folder to search in as path, or leave path out.`, { data: { field: 'path' } })
    case 'INVALID_PATTERN': {
      const native = err.data?.native as { field?: string | null } | undefined
      // The parser's message quotes the whole pattern: a long one is told as what is wrong and where.
      const said = parserSaid(err.message)
      const error = clipMiddle(err.message, 400)
      if (native?.field === 'glob') {
        return new InvalidInputError('INVALID_PATTERN', `Invalid glob in ${globField}: ${said}. Fix ${globField} and retry.`, { data: { field: globField, error } })
      }
      return new InvalidInputError('INVALID_PATTERN', `Invalid regular expression in pattern: ${said}. Fix the pattern and retry.`, {
        data: { field: 'pattern', error },
      })
    }
    default:
      return err
  }
}

/**
 * A regex or glob parser's message as an error tells it: as it is when short (rg's own
 * words, the caret under the pattern); else the regex crate's "regex parse error:\n
 * <pattern>\n<caret>\nerror: <what>" becomes "<what> at character N, near \"…\"" (a
 * window of the pattern), and any other message is cut in the middle.
 */
export function parserSaid(message: string): string {
  if (Buffer.byteLength(message) <= 140) return message
  const m = /^regex parse error:\n *(.*)\n( *)\^+\nerror: (.*)$/s.exec(message)
  if (!m) return clipMiddle(message, 120)
  const [, pattern, pad, what] = m as unknown as [string, string, string, string]
  const at = Math.max(0, pad.length - (/^ */.exec(message.split('\n')[1] ?? '')?.[0].length ?? 0))
  const chars = [...pattern]
  const start = Math.max(0, at - 15)
  const near = `${start > 0 ? '…' : ''}${chars.slice(start, start + 30).join('')}${start + 30 < chars.length ? '…' : ''}`
  return `${clip(what.trim(), 60)} at character ${at + 1}, near ${JSON.stringify(near)}`
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`
}

/** A walk's errors, for the model: that not everything was searched, and the first few in full. */
export function walkErrors(errors: readonly string[]): string {
  const more = errors.length > 3 ? `; and ${errors.length - 3} more (data.errors)` : ''
  return `Not everything could be searched: ${errors.slice(0, 3).map((e) => clipMiddle(e, 160)).join('; ')}${more}`
}
