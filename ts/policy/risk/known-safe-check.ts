/**
 * Whether a parsed command is known to be safe (issue 17): every simple command in it a
 * program of the table in ../known-safe.ts, used as its entry allows. Only such a command
 * is rated low; ../risk.ts rates everything else medium or high.
 *
 * Besides each entry's options and operands, every command must hold to these:
 * - every word is literal: an expansion (`$PPID`, `$(…)`, `$((…))`, `{a,b}`) is only
 *   known when it runs; an assignment (`GIT_TRACE=f git status`, `x=1`) changes what
 *   programs do; a glob reaches only programs whose options are all harmless, unless it
 *   starts with a literal (`src/*.ts` cannot become `--pre=sh`) and the operand count is
 *   free (`uniq *` could name the file it writes);
 * - every path (an operand or an option value marked `path`, a `<` file, a `cd` target)
 *   resolves inside the workspace or allowedPaths, and not into /proc, /sys, /dev (but
 *   /dev/null), a credential folder, or git's config and hooks; `~` is the home folder;
 * - redirections only discard or join output (`>/dev/null`, `2>&1`, `>&2`) or read a
 *   file inside (`<`), or a here-document or here-string with nothing to expand;
 * - relative paths resolve against the folder the command is in. A literal `cd` is
 *   followed exactly in a plain `a && b && c` list (where each command runs only after the
 *   last one succeeded). Anywhere else (`;`, `||`, pipes, subshells, loops) a `cd` may
 *   have run or not, so each path must be inside from every folder it may be in, and a
 *   `cd` may not climb (`..`);
 * - git runs only in the workspace folder itself: from a subfolder it may find another
 *   repository (a bare one in the tree), whose configuration names programs to run.
 */
import path from 'node:path'

import { KNOWN_SAFE, NEVER_SAFE, type SafeProgram, type Value } from '../known-safe.js'
import { type ParseResult, parseShell, type Redirect, type SimpleCommand } from '../shell-parse.js'

/** Where a command runs: relative paths resolve against `workspace`. */
export interface Where {
  workspace: string
  allowedPaths?: readonly string[]
  /** The home folder, to say so when a path is in it; `~` is never inside. */
  home?: string
}

export interface Unsafe {
  /** Why the command is not known to be safe, for the model. */
  reason: string
  /** The words of the simple command that is not, when there is one. */
  words?: string[]
}

/** Stands for the workspace when none is given: relative paths inside it count as inside, and no real path is in it (the parser refuses NUL). */
const NO_WORKSPACE = '/\0workspace'
/** Program folders a program may be named by (`/bin/cat` is cat). */
const PROGRAM_DIRS = new Set(['/bin', '/usr/bin', '/usr/local/bin'])
/** How many folders a command may be in before it is not followed (`cd a; cd b; …`). */
const MAX_BASES = 16
/** Reasons stay short: a word in one is cut to this many characters, the reason to 200 bytes. */
const WORD_CHARS = 60
const REASON_BYTES = 200

interface Arg {
  text: string
  dynamic: boolean
  glob: boolean
}

interface State {
  workspace: string
  roots: string[]
  /** The folders the command may be in (one, exactly, in a plain && list). */
  bases: string[]
  /** The command is a plain && list of simple commands, so a `cd` is followed exactly. */
  chain: boolean
  home?: string
}

/** Why `parsed` (the parse of `script`) is not known to be safe; undefined when it is. */
export function whyNotKnownSafe(script: string, parsed: ParseResult, where?: Where): Unsafe | undefined {
  if (parsed.error !== undefined) return { reason: 'the command could not be parsed' }
  const workspace = path.posix.resolve(where?.workspace ?? NO_WORKSPACE)
  const roots = [workspace, ...(where?.allowedPaths ?? []).map((p) => path.posix.resolve(p))]
  const hasCd = parsed.commands.some((c) => c.words[0] === 'cd')
  const home = where?.home === undefined ? undefined : path.posix.resolve(where.home)
  const state: State = { workspace, roots, bases: [workspace], chain: hasCd && plainAndList(script, parsed), home }
  for (const cmd of parsed.commands) {
    const reason = checkCommand(cmd, state)
    if (reason !== undefined) return { reason: cut(reason, REASON_BYTES), words: cmd.words }
  }
  return undefined
}

function checkCommand(cmd: SimpleCommand, state: State): string | undefined {
  const assignment = cmd.assignments[0]
  if (assignment !== undefined) {
    const name = assignment.split('=', 1)[0]
    return cmd.words.length > 0
      ? `setting ${name} for a command can change what it does (GIT_TRACE, LESSKEYIN, GOPROXY…); run it without`
      : `setting the variable ${name} can change what later commands do`
  }
  for (const r of cmd.redirects) {
    const why = checkRedirect(r, state)
    if (why !== undefined) return why
  }
  if (cmd.words.length === 0) return undefined
  const args = cmd.words.map((text, i) => ({ text, dynamic: cmd.dynamic[i]!, glob: cmd.glob[i]! }))
  const dynamic = args.find((a) => a.dynamic)
  if (dynamic) return `${expansionIn(dynamic.text)} is only known when it runs; write the value out`
  return checkArgv(args, state, 0)
}

/** Checks a program and its arguments (`depth` counts wrappers). */
function checkArgv(args: Arg[], state: State, depth: number): string | undefined {
  const head = args[0]!
  if (head.glob) return `the program name ${word(head.text)} is only known when it runs`
  const name = programName(head.text)
  if (name === undefined) return `${word(head.text)} runs a program by its path; only programs in /bin and /usr/bin are known`
  const entry = Object.hasOwn(KNOWN_SAFE, name) ? KNOWN_SAFE[name]! : undefined
  if (!entry) return Object.hasOwn(NEVER_SAFE, name) ? NEVER_SAFE[name]! : `${word(name)} is not on the list of known read-only programs`
  if (entry.wrapper && depth >= 4) return `${name} wraps too many commands to check`
  return checkEntry(entry, name, args.slice(1), state, depth)
}

/** `cat` for `cat` and `/bin/cat`; undefined for a program named by another path (`./cat`). */
function programName(text: string): string | undefined {
  if (!text.includes('/')) return text
  const dir = path.posix.dirname(text)
  return PROGRAM_DIRS.has(dir) && !text.includes('..') ? path.posix.basename(text) : undefined
}

/** Reads options and operands as `entry` says, then checks each. */
function checkEntry(entry: SafeProgram, label: string, args: Arg[], state: State, depth: number): string | undefined {
  if (entry.operands === 'find') return checkFind(entry, args, state)
  const parse = entry.options !== undefined || entry.risky !== undefined || entry.optionalValue !== undefined
  const seen: string[] = []
  const operands: Arg[] = []
  let ended = !parse
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const t = arg.text
    const first = operands.length === 0
    if (!ended && t === '--') {
      ended = true
      continue
    }
    if (!ended && t.length > 1 && t.startsWith('-') && !(entry.optionsFirst && !first)) {
      if (arg.glob && !entry.globs) return `the glob ${word(t)} may become options of ${label}; quote it`
      const read = readOption(entry, label, args, i, state)
      if (typeof read === 'string') return read
      seen.push(...read.names)
      i = read.next
      continue
    }
    if (first && entry.subcommands) {
      if (arg.glob) return `the ${label} command ${word(t)} is only known when it runs`
      const sub = Object.hasOwn(entry.subcommands, t) ? entry.subcommands[t]! : undefined
      if (!sub) return `${label} ${word(t)} is not on the list of read-only ${label} commands`
      const why = checkEntry(sub, `${label} ${t}`, args.slice(i + 1), state, depth)
      return why ?? (entry.root ? checkRoot(label, state) : undefined)
    }
    if (entry.wrapper) return checkWrapper(entry, label, args.slice(i), state, depth)
    operands.push(arg)
  }
  if (entry.subcommands) return `${label} with no command is not on the list of read-only ${label} commands`
  return checkOperands(entry, label, operands, seen, state)
}

function checkOperands(entry: SafeProgram, label: string, operands: Arg[], seen: string[], state: State): string | undefined {
  const n = operands.length
  if (entry.operands === 'none' && n > 0) return `${label} is known to be read-only only with no operand, not ${word(operands[0]!.text)}`
  if (entry.maxOperands !== undefined && n > entry.maxOperands) return `${label} is known to be read-only with at most ${entry.maxOperands} operand${entry.maxOperands === 1 ? '' : 's'}`
  if (entry.minOperands !== undefined && n < entry.minOperands) return `${label} with no operand goes to the home folder, outside the workspace`
  if (n > 0 && entry.operandsNeed && !seen.some((s) => entry.operandsNeed!.includes(s))) return `${label} with an operand changes the repository; add ${entry.operandsNeed.join(' or ')} to only list`
  const pattern = entry.operands === 'pattern-paths' && !seen.some((s) => entry.patternOptions?.includes(s)) ? operands[0] : undefined
  for (const a of operands) {
    if (a.glob && !entry.globs && (mayBeOption(a.text) || entry.maxOperands !== undefined)) return `the glob ${word(a.text)} may become options or extra operands of ${label}; quote it or name the files`
    if (entry.operandPattern && !entry.operandPattern.test(a.text)) return `${label} is known to be read-only only with operands like ${entry.operandPattern.source}, not ${word(a.text)}`
    const text = entry.operands === 'text' || a === pattern
    if (text && entry.refuseText?.pattern.test(a.text)) return `${label} ${entry.refuseText.reason}`
    if (!text && entry.operands !== 'none') {
      const why = checkPath(a, state)
      if (why !== undefined) return why
    }
  }
  if (entry.changesFolder) return operands[0]!.text === '-' ? 'cd - goes back to the last folder, which is only known when it runs' : changeFolder(operands[0]!, state)
  return undefined
}

/** A wrapper's leading operands, then the command it runs, checked on its own. */
function checkWrapper(entry: SafeProgram, label: string, rest: Arg[], state: State, depth: number): string | undefined {
  const { leading, leadingPattern } = entry.wrapper!
  for (const a of rest.slice(0, leading)) {
    if (a.glob || (leadingPattern && !leadingPattern.test(a.text))) return `${label} is known only with a plain duration, not ${word(a.text)}`
  }
  const command = rest.slice(leading)
  return command.length === 0 ? undefined : checkArgv(command, state, depth + 1)
}

interface Read {
  /** The options read (`-n`, `--lines`). */
  names: string[]
  /** The index of the last word read. */
  next: number
}

/** Reads the option at `args[i]` (a word, a cluster, `--name=value`). */
function readOption(entry: SafeProgram, label: string, args: Arg[], i: number, state: State): Read | string {
  const t = args[i]!.text
  const options = entry.options ?? {}
  const optional = entry.optionalValue ?? {}
  const risky = (name: string) => (entry.risky && Object.hasOwn(entry.risky, name) ? `the option ${name} of ${label} ${entry.risky[name]}` : undefined)
  const unknown = (name: string) => `the option ${word(name)} of ${label} is not on its list of read-only options`
  if (t.startsWith('--')) {
    const eq = t.indexOf('=')
    const name = eq < 0 ? t : t.slice(0, eq)
    const inline = eq < 0 ? undefined : { ...args[i]!, text: t.slice(eq + 1) }
    const why = risky(name)
    if (why) return why
    if (Object.hasOwn(options, name)) {
      const kind = options[name]!
      if (kind === null) return inline ? `the option ${name} of ${label} takes no value` : { names: [name], next: i }
      const value = inline ?? args[i + 1]
      if (!value) return `the option ${name} of ${label} needs a value`
      return checkValue(value, kind, entry, label, name, state) ?? { names: [name], next: inline ? i : i + 1 }
    }
    if (Object.hasOwn(optional, name)) {
      if (!inline) return { names: [name], next: i }
      return checkValue(inline, optional[name]!, entry, label, name, state) ?? { names: [name], next: i }
    }
    return unknown(name)
  }
  const whole = risky(t)
  if (whole) return whole
  if (Object.hasOwn(options, t) && options[t] === null) return { names: [t], next: i }
  if (entry.numericOption && /^-\d+$/.test(t)) return { names: [t], next: i }
  const names: string[] = []
  for (let j = 1; j < t.length; j++) {
    const name = `-${t[j]}`
    const why = risky(name)
    if (why) return why
    const attached = j + 1 < t.length ? { ...args[i]!, text: t.slice(j + 1) } : undefined
    if (Object.hasOwn(options, name)) {
      names.push(name)
      const kind = options[name]!
      if (kind === null) continue
      const value = attached ?? args[i + 1]
      if (!value) return `the option ${name} of ${label} needs a value`
      return checkValue(value, kind, entry, label, name, state) ?? { names, next: attached ? i : i + 1 }
    }
    if (Object.hasOwn(optional, name)) {
      names.push(name)
      if (!attached) return { names, next: i }
      return checkValue(attached, optional[name]!, entry, label, name, state) ?? { names, next: i }
    }
    return unknown(name)
  }
  return { names, next: i }
}

const NUMBER = /^[-+]?\d+(\.\d+)?[A-Za-z]{0,3}$/

function checkValue(value: Arg, kind: Value, entry: SafeProgram, label: string, option: string, state: State): string | undefined {
  if (value.glob && !entry.globs) return `the value ${word(value.text)} of ${option} is a glob, which may become more words; quote it`
  if (kind === 'text') return undefined
  if (kind === 'number') return NUMBER.test(value.text) ? undefined : `the option ${option} of ${label} is known only with a number, not ${word(value.text)}`
  if (kind === 'path') return checkPath(value, state)
  return kind.includes(value.text) ? undefined : `the option ${option} of ${label} is known only with ${kind.join(', ')}`
}

/** find: paths first, then an expression of the primaries listed for it. */
function checkFind(entry: SafeProgram, args: Arg[], state: State): string | undefined {
  const primaries = entry.options ?? {}
  const risky = entry.risky ?? {}
  let i = 0
  for (; i < args.length; i++) {
    const t = args[i]!.text
    if (t.startsWith('-') || t === '!' || t === '(') break
    if (args[i]!.glob) return `the glob ${word(t)} may become primaries of find; quote it or name the folders`
    const why = checkPath(args[i]!, state)
    if (why !== undefined) return why
  }
  for (; i < args.length; i++) {
    const arg = args[i]!
    const t = arg.text
    if (arg.glob) return `the glob ${word(t)} may become primaries of find; quote it`
    if (Object.hasOwn(risky, t)) return `the primary ${t} of find ${risky[t]}`
    if (!Object.hasOwn(primaries, t)) return `the primary ${word(t)} of find is not on its list of read-only primaries`
    const kind = primaries[t]!
    if (kind === null) continue
    const value = args[++i]
    if (!value) return `the primary ${t} of find needs a value`
    const why = checkValue(value, kind, entry, 'find', t, state)
    if (why !== undefined) return why
  }
  return undefined
}

// ---- folders and paths -----------------------------------------------------------

/** git finds its repository from the folder it runs in: only the workspace folder's own is trusted. */
function checkRoot(label: string, state: State): string | undefined {
  const atRoot = state.bases.length === 1 && state.bases[0] === state.workspace
  return atRoot ? undefined : `${label} runs here only in the workspace folder itself: after a cd it may find another repository, whose configuration can run programs`
}

/** After a checked `cd`: the folders later relative paths resolve against. */
function changeFolder(to: Arg, state: State): string | undefined {
  if (state.chain) {
    state.bases = [path.posix.resolve(state.bases[0]!, to.text)]
    return undefined
  }
  if (to.text.split('/').includes('..')) return `cd ${word(to.text)} climbs folders; it is only followed in a plain a && b list, so cd into the folder by its path`
  const next = new Set([...state.bases, ...state.bases.map((b) => path.posix.resolve(b, to.text))])
  if (next.size > MAX_BASES) return 'the command changes folder too often to follow'
  state.bases = [...next]
  return undefined
}

/** Whether the command is `a && b && …` of simple commands only, so each runs after the last succeeded. */
function plainAndList(script: string, parsed: ParseResult): boolean {
  const pieces = script.split('&&')
  if (pieces.length !== parsed.commands.length) return false
  return pieces.every((piece) => {
    if (/[;|&()`{}\n\r#!]|\$\(/.test(piece)) return false
    const one = parseShell(piece)
    return one.error === undefined && one.commands.length === 1
  })
}

/** Folders of credentials, as sequences of names (see ./../protected.ts). */
const CREDENTIALS = [['.ssh'], ['.gnupg'], ['.aws'], ['.azure'], ['.kube'], ['.docker'], ['.config', 'gcloud'], ['.config', 'gh'], ['.password-store'], ['.netrc'], ['.npmrc'], ['.pypirc'], ['.git-credentials'], ['.vault-token'], ['.terraform.d'], ['etc', 'shadow'], ['etc', 'sudoers']]
const KEY_FILE = /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\.pub)?$/
const SYSTEM_VIEWS = ['/proc', '/sys', '/dev']

/** Why the path `a` may not be read here; undefined when it is inside and not sensitive. */
function checkPath(a: Arg, state: State): string | undefined {
  const t = a.text
  if (t === '-' || t === '/dev/null') return undefined
  if (t.startsWith('~')) return `${word(t)} is in the home folder, outside the workspace`
  if (a.glob && t.split('/').some((part) => /[*?[]/.test(part) && /^[.[]/.test(part))) return `the glob ${word(t)} may match hidden or parent folders (.git, .ssh, ..)`
  for (const base of state.bases) {
    const abs = path.posix.resolve(base, t)
    const parts = abs.split('/').filter(Boolean)
    const lower = parts.map((p) => p.toLowerCase())
    const view = SYSTEM_VIEWS.find((v) => abs === v || abs.startsWith(`${v}/`))
    if (view) return `${word(t)} is in ${view}, which shows other processes, the system or devices`
    if (lower.some((p) => KEY_FILE.test(p)) || CREDENTIALS.some((seq) => lower.some((_, i) => seq.every((s, j) => lower[i + j] === s)))) return `${word(t)} holds credentials`
    const git = lower.indexOf('.git')
    if (git >= 0 && lower.slice(git + 1).some((p) => p === 'config' || p === 'hooks')) return `${word(t)} is git's configuration or hooks, which name programs to run`
    if (!state.roots.some((r) => within(abs, r))) return state.home !== undefined && within(abs, state.home) ? `${word(t)} is in the home folder, outside the workspace` : `${word(t)} is outside the workspace`
  }
  return undefined
}

/** Whether the absolute path `abs` is `folder` or in it. */
function within(abs: string, folder: string): boolean {
  return abs === folder || abs.startsWith(folder === '/' ? '/' : `${folder}/`)
}

// ---- redirections ------------------------------------------------------------------

function checkRedirect(r: Redirect, state: State): string | undefined {
  const shown = `${r.fd ?? ''}${r.op}${word(r.target)}`
  if (r.dynamic) return `the redirection ${shown} is only known when it runs`
  switch (r.op) {
    case '<':
      if (/[*?[]/.test(r.target)) return `the redirection ${shown} is a glob; name the file`
      return checkPath({ text: r.target, dynamic: false, glob: false }, state)
    case '<<':
    case '<<-':
      return r.body !== undefined && /[$`]/.test(r.body) ? 'the here-document may expand $ or ` when it runs; quote its delimiter and leave them out' : undefined
    case '<<<':
      return undefined
    case '>&':
      return r.target === '1' || r.target === '2' || r.target === '/dev/null' ? undefined : `the redirection ${shown} is not one that only discards or joins output`
    case '>':
    case '>>':
    case '>|':
    case '&>':
    case '&>>':
      return r.target === '/dev/null' ? undefined : `the redirection ${shown} writes a file; only >/dev/null, 2>&1 and >&2 are known to be harmless`
    default:
      return `the redirection ${shown} is not one that only discards or joins output`
  }
}

// ---- words -------------------------------------------------------------------------

/** A word that may become an option when a glob expands: it starts with a glob character or `-`. */
function mayBeOption(text: string): boolean {
  return /^[-*?[]/.test(text)
}

/** The expansion in `text` to name in a reason: `$PPID` in `/proc/$PPID/maps`. */
function expansionIn(text: string): string {
  const m = /\$\{?[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]|\$\(\(|\$\(|`|<\(|>\(/.exec(text)
  if (!m) return word(text)
  const found = m[0].startsWith('${') ? `${m[0]}}` : m[0] === '$(' || m[0] === '`' || m[0] === '$((' || m[0].endsWith('(') ? word(text) : m[0]
  return found
}

/** A word as a reason shows it: cut to WORD_CHARS characters. */
function word(text: string): string {
  const chars = [...text]
  return chars.length <= WORD_CHARS ? text : `${chars.slice(0, WORD_CHARS).join('')}…`
}

/** `s` cut to at most `max` bytes of UTF-8, on a character boundary. */
export function cut(s: string, max: number): string {
  if (Buffer.byteLength(s, 'utf8') <= max) return s
  let out = ''
  let bytes = 0
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8')
    if (bytes + n > max - 3) break
    out += ch
    bytes += n
  }
  return `${out}…`
}
