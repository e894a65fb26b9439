/**
 * Whether a known-safe command would read through a link to a place outside the
 * workspace and allowedPaths, looked up on the disk just before it runs without a
 * sandbox (SPEC §8.1): a cloned repository can carry `notes -> ~/.ssh/id_rsa`, and the
 * rating only sees the words. Each path word is resolved from every folder the command
 * may be in (after its `cd`s), a glob as the shell would expand it (`cat docs/*` where
 * `docs` is such a link, or holds one), an option's attached value (`--file=k`, `-fk`)
 * too, and the folders given to a program that reads through the links inside them
 * (`diff -r`) are walked. Bounded: past the bounds the answer is "outside".
 */
import { lstat, readdir, realpath } from 'node:fs/promises'
import path from 'node:path'

import { clip } from '../errors.js'
import { READS_THROUGH_LINKS_IN_FOLDERS } from '../policy/known-safe.js'
import { within } from '../policy/paths.js'

/** A command as the rating gives it: its program, and its words with the program first. */
export interface CommandWords {
  name: string
  argv: readonly string[]
}

/** At most this many paths a glob may name, and entries a folder walk may look at. */
const MAX_MATCHES = 1000
const MAX_WALKED = 5000
/** At most this many folders a command may be in (`cd a; cd b; …`). */
const MAX_BASES = 16

/**
 * Why `commands` would read through a link to outside `roots` (the first of them is the
 * workspace, where they start), or undefined when nothing they name does.
 */
export async function linkOutside(commands: readonly CommandWords[], roots: readonly string[]): Promise<string | undefined> {
  const inside = (real: string) => roots.some((root) => within(root, real))
  let bases = [roots[0]!]
  for (const cmd of commands) {
    const operands = cmd.argv.slice(1)
    const walks = walksFolders(cmd.name, operands)
    for (const word of operands) {
      for (const candidate of candidates(word)) {
        for (const base of bases) {
          const named = hasGlob(candidate) ? await expand(candidate, base) : [path.resolve(base, candidate)]
          if (named === null) return `${clip(candidate, 60)} matches too many files to check for links leading outside the workspace`
          if (hasGlob(candidate)) named.push(path.resolve(base, candidate))
          for (const p of named) {
            const real = await realpath(p).catch(() => null)
            if (real === null) continue
            if (!inside(real)) return `${clip(candidate, 60)} leads outside the workspace through a link`
            if (walks && (await lstat(real).catch(() => null))?.isDirectory()) {
              const why = await linkInFolder(real, inside)
              if (why !== undefined) return `${clip(candidate, 60)} ${why}`
            }
          }
        }
      }
    }
    if (cmd.name === 'cd' && operands.length > 0) {
      const to = operands.find((w) => !w.startsWith('-')) ?? ''
      const next = new Set([...bases, ...bases.map((b) => path.resolve(b, to))])
      if (next.size > MAX_BASES) return 'the command changes folder too often to check for links leading outside the workspace'
      bases = [...next]
    }
  }
  return undefined
}

/** The paths a word may name: itself, or an option's value (`--file=k`, and `-fk` as `k`). */
function candidates(word: string): string[] {
  if (word === '' || word === '-' || word === '--') return []
  if (word.startsWith('--')) {
    const eq = word.indexOf('=')
    return eq < 0 ? [] : [word.slice(eq + 1)].filter(Boolean)
  }
  if (word.startsWith('-')) {
    const eq = word.indexOf('=')
    return [eq < 0 ? word.slice(2) : word.slice(eq + 1)].filter(Boolean)
  }
  return [word]
}

/** Whether `program` is given an option with which it reads through links inside folders (`diff -r`). */
function walksFolders(program: string, words: readonly string[]): boolean {
  const options = Object.hasOwn(READS_THROUGH_LINKS_IN_FOLDERS, program) ? READS_THROUGH_LINKS_IN_FOLDERS[program]! : []
  return options.some((opt) =>
    opt.startsWith('--') ? words.includes(opt) : words.some((w) => w === opt || (/^-[A-Za-z0-9]+$/.test(w) && w.slice(1).includes(opt.slice(1)))),
  )
}

function hasGlob(word: string): boolean {
  return /[*?[]/.test(word)
}

/** What the shell would expand `pattern` to in `base` (no match: nothing); null past MAX_MATCHES. */
async function expand(pattern: string, base: string): Promise<string[] | null> {
  let paths = [path.isAbsolute(pattern) ? '/' : base]
  for (const seg of pattern.split('/')) {
    if (seg === '') continue
    if (!hasGlob(seg)) {
      paths = paths.map((p) => path.join(p, seg))
      continue
    }
    const re = segmentPattern(seg)
    const next: string[] = []
    for (const p of paths) {
      for (const name of await readdir(p).catch(() => [] as string[])) {
        if (name.startsWith('.') && !seg.startsWith('.')) continue
        if (!re.test(name)) continue
        next.push(path.join(p, name))
        if (next.length > MAX_MATCHES) return null
      }
    }
    paths = next
  }
  return paths
}

/** A glob's segment (`*`, `?`, `[…]`, `[!…]`, `\x`) as a regular expression. */
function segmentPattern(seg: string): RegExp {
  const literal = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
  let re = '^'
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!
    if (c === '*') re += '.*'
    else if (c === '?') re += '.'
    else if (c === '\\' && i + 1 < seg.length) re += literal(seg[++i]!)
    else if (c === '[') {
      let j = i + 1
      if (seg[j] === '!' || seg[j] === '^') j++
      if (seg[j] === ']') j++
      const end = seg.indexOf(']', j)
      if (end < 0) {
        re += '\\['
        continue
      }
      let body = seg.slice(i + 1, end)
      if (body.startsWith('!')) body = `^${body.slice(1)}`
      re += `[${body.replace(/\\/g, '\\\\').replace(/\[/g, '\\[')}]`
      i = end
    } else re += literal(c)
  }
  return new RegExp(`${re}$`, 's')
}

/** Why a link inside `folder` (walked without following links) leads outside, or undefined. */
async function linkInFolder(folder: string, inside: (real: string) => boolean): Promise<string | undefined> {
  let left = MAX_WALKED
  const walk = async (dir: string): Promise<string | undefined> => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (--left < 0) return 'holds too many files to check for links leading outside the workspace'
      const p = path.join(dir, name)
      const st = await lstat(p).catch(() => null)
      if (st?.isSymbolicLink()) {
        const real = await realpath(p).catch(() => null)
        if (real !== null && !inside(real)) return `holds ${clip(path.relative(folder, p), 60)}, a link leading outside the workspace`
      } else if (st?.isDirectory()) {
        const why = await walk(p)
        if (why !== undefined) return why
      }
    }
    return undefined
  }
  return walk(folder)
}
