/**
 * A POSIX sh / bash parser for the shell tool's risk classifier (SPEC §3.8). It does not
 * build a full syntax tree: it finds every simple command the string can run (in lists,
 * pipelines, subshells, brace groups, compound commands, function bodies, `$(…)`,
 * backticks, `<(…)`, unquoted here-documents, `${…}` and arithmetic) and gives each one
 * its words after quote removal, its assignments and its redirections.
 *
 * Two readings: the shell tool runs `/bin/sh -c`, which is dash on Debian and bash (in
 * POSIX mode) on macOS, and the scripts of `bash -c` and `sh -c` are read the same way.
 * dash has none of bash's extensions and reads them as other text: `$'…'` is a `$` and a
 * plain single-quoted string, `$[` is literal, `[[`, `((`, `function`, `select` and
 * `coproc` are ordinary words or parentheses, `<<<`, `&>`, `|&`, `;&` and `<(…)` are other
 * operators or syntax errors. So the input is parsed once as bash reads it and once as
 * dash reads it, and a command found by either reading counts (those only dash runs are
 * marked `dashOnly`). A syntax error in the bash reading is reported; in the dash reading
 * it only ends what dash runs (dash runs nothing of the line that holds the error).
 *
 * Why a parser and not a regex: a classifier that splits on `;` or looks for `rm` is
 * fooled by `'r'm`, `$(echo rm)`, a here-document or a quoted `;`. This one follows the
 * shell's own tokenising rules and marks what it cannot know before the command runs:
 * a word with an unquoted expansion is `dynamic`, a word with unquoted glob characters is
 * `glob`. When the input is not valid (unterminated quote, unbalanced parentheses, a
 * here-document without its end) or uses what it does not support (`coproc`), it reports
 * an error instead of guessing, and the classifier rates that high.
 *
 * The work is bounded: input over 64 KiB or nesting deeper than 64 levels is an error,
 * every character is read a bounded number of times, and no regex can backtrack.
 */

/** One redirection of a command, e.g. `2>&1` is `{ op: '>&', fd: 2, target: '1' }`. */
export interface Redirect {
  op: string
  /** The file descriptor written before the operator (`2>`), when there is one. */
  fd?: number
  /** The word after the operator, after quote removal; a here-document's delimiter. */
  target: string
  /** The target holds an unquoted expansion, so the real file is only known when it runs. */
  dynamic: boolean
  /** The text a here-document (`<<`) or here-string (`<<<`) feeds to the command. */
  body?: string
}

/** A simple command: `FOO=1 cmd arg >file`, wherever it appears in the input. */
export interface SimpleCommand {
  /** The words after quote removal; an expansion is kept as written (`$HOME`, `$(date)`). */
  words: string[]
  /** Per word: it holds an unquoted expansion (`$VAR`, `${…}`, `$(…)`, backticks, `{a,b}`). */
  dynamic: boolean[]
  /** Per word: it holds unquoted glob characters (`*`, `?`, `[`), so it may become other words. */
  glob: boolean[]
  /**
   * `NAME=value` words before the command name, after quote removal. A variable set by
   * other syntax (`for NAME in`, `${NAME:=…}`, `$((NAME = …))`, bash's `{NAME}>file`) is
   * reported as a command of its own that has only the assignment `NAME=`.
   */
  assignments: string[]
  redirects: Redirect[]
  /** Only the dash reading finds it: dash reads some bash syntax as other commands (see above). */
  dashOnly?: boolean
}

export interface ParseResult {
  /** Every simple command found, including those inside substitutions and compound commands. */
  commands: SimpleCommand[]
  /** Why the input could not be parsed; `commands` then holds what was found before the error. */
  error?: string
}

export const MAX_INPUT_BYTES = 64 * 1024
export const MAX_DEPTH = 64

/** Parses `src` as bash and as dash read it; never throws. */
export function parseShell(src: string): ParseResult {
  if (Buffer.byteLength(src, 'utf8') > MAX_INPUT_BYTES) {
    return { commands: [], error: `the command is longer than ${MAX_INPUT_BYTES / 1024} KiB` }
  }
  if (src.includes('\0')) return { commands: [], error: 'the command contains a NUL byte' }
  const bash = readAs(src, false)
  // Until the bash reading meets bash-only syntax, dash reads everything the same way.
  if (!bash.bashOnly && bash.error === undefined) return { commands: bash.commands }
  const commands = merge(bash.commands, readAs(src, true).commands)
  return bash.error === undefined ? { commands } : { commands, error: bash.error }
}

function readAs(src: string, dash: boolean): ParseResult & { bashOnly: boolean } {
  const out: SimpleCommand[] = []
  const shared = { level: 0, bashOnly: false }
  const parser = new Parser(src, out, shared, dash)
  try {
    parser.parseProgram()
    return { commands: out, bashOnly: shared.bashOnly }
  } catch (err) {
    if (!(err instanceof ParseError)) throw err
    // dash stops at a syntax error and runs nothing of its line; bash's error is reported.
    if (dash) return { commands: out.slice(0, parser.committed), bashOnly: false }
    return { commands: out, error: err.message, bashOnly: shared.bashOnly }
  }
}

/**
 * The bash reading's commands, then those only the dash reading finds. A command both find
 * is listed once, with a word dynamic or glob when either reading says so (bash expands
 * `{a,b}` and `$[…]`, dash globs the `[` of a literal `$[`).
 */
function merge(bash: SimpleCommand[], dash: SimpleCommand[]): SimpleCommand[] {
  // Mostly the readings agree, command by command: pair those up without building keys.
  let same = 0
  while (same < bash.length && same < dash.length && sameCommand(bash[same]!, dash[same]!)) {
    orFlags(bash[same]!, dash[same]!)
    same++
  }
  if (same === dash.length) return bash
  const key = (c: SimpleCommand) => JSON.stringify([c.words, c.assignments, c.redirects.map((r) => [r.op, r.fd, r.target, r.body])])
  /** The rest of the bash reading's commands by key, and how many of each the dash reading has matched. */
  const unmatched = new Map<string, { list: SimpleCommand[]; used: number }>()
  for (const c of bash.slice(same)) {
    const k = key(c)
    const found = unmatched.get(k)
    if (found) found.list.push(c)
    else unmatched.set(k, { list: [c], used: 0 })
  }
  const all = [...bash]
  for (const d of dash.slice(same)) {
    const found = unmatched.get(key(d))
    const b = found?.list[found.used++]
    if (b) orFlags(b, d)
    else all.push({ ...d, dashOnly: true })
  }
  return all
}

function sameCommand(a: SimpleCommand, b: SimpleCommand): boolean {
  const sameList = <T,>(x: T[], y: T[], eq: (p: T, q: T) => boolean) => x.length === y.length && x.every((p, i) => eq(p, y[i]!))
  return (
    sameList(a.words, b.words, (p, q) => p === q) &&
    sameList(a.assignments, b.assignments, (p, q) => p === q) &&
    sameList(a.redirects, b.redirects, (p, q) => p.op === q.op && p.fd === q.fd && p.target === q.target && p.body === q.body)
  )
}

/** A word (or redirection target) is dynamic or glob when either reading says so. */
function orFlags(into: SimpleCommand, from: SimpleCommand): void {
  for (const [i, x] of from.dynamic.entries()) into.dynamic[i] ||= x
  for (const [i, x] of from.glob.entries()) into.glob[i] ||= x
  for (const [i, r] of from.redirects.entries()) into.redirects[i]!.dynamic ||= r.dynamic
}

class ParseError extends Error {}

interface Word {
  text: string
  dynamic: boolean
  glob: boolean
  /** Some part of it was quoted or escaped (so it is never a reserved word). */
  quoted: boolean
  /** It starts with an unquoted `NAME=` (an assignment when it comes before the command name). */
  assignment: boolean
}

type Token =
  | { kind: 'word'; word: Word }
  | { kind: 'op'; op: string; fd?: number }
  /** bash's `((…))` arithmetic command (its substitutions are already in the output). */
  | { kind: 'arith' }
  | { kind: 'newline' }
  | { kind: 'eof' }

/** Operators, longest first so that the first match is the longest. */
const BASH_OPERATORS = [
  '&>>', '<<<', '<<-', ';;&',
  '&&', '||', '|&', ';;', ';&', '>>', '<<', '<>', '<&', '>&', '>|', '&>',
  ';', '&', '|', '(', ')', '<', '>',
]
/** dash reads these as shorter operators: `&>` is `&` then `>`, `<<<` is `<<` then `<`. */
const BASH_ONLY_OPERATORS = new Set(['&>>', '<<<', ';;&', '|&', ';&', '&>'])
const DASH_OPERATORS = BASH_OPERATORS.filter((o) => !BASH_ONLY_OPERATORS.has(o))
const REDIRECTS = new Set(['<', '>', '>>', '>|', '<>', '<<', '<<-', '<<<', '<&', '>&', '&>', '&>>'])
/** Words that open or continue a compound command when they come where a command starts. */
const DASH_KEYWORDS = new Set(['if', 'then', 'elif', 'else', 'fi', 'while', 'until', 'do', 'done', 'for', 'case', 'esac', '{', '}'])
const BASH_ONLY_KEYWORDS = new Set(['select', 'function', '[[', 'coproc'])
const CASE_ENDS = new Set([';;', ';&', ';;&'])
const ENDS_COMMAND = new Set([';', '&', '&&', '||', '|', ')'])
/** The characters an operator can start with. */
const OPERATOR_START = new Set([';', '&', '|', '(', ')', '<', '>'])
const META = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>'])
const SPECIAL_PARAMS = new Set(['@', '*', '#', '?', '-', '$', '!'])
const NAME_START = /[A-Za-z_]/
const NAME_CHAR = /[A-Za-z0-9_]/
const ASSIGNMENT_PREFIX = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?$/
/** bash's `{NAME}>file` opens a file and stores its descriptor in NAME. */
const FD_VARIABLE = /\{([A-Za-z_][A-Za-z0-9_]*)\}(?=[<>])/y
/** `${NAME=…}` and `${NAME:=…}` set NAME when it is unset (or empty). */
const DEFAULT_ASSIGNMENT = /([A-Za-z_][A-Za-z0-9_]*):?=/y

interface PendingHeredoc {
  redirect: Redirect
  strip: boolean
  quoted: boolean
}

interface Shared {
  /** How deeply nested the parse is now. */
  level: number
  /** The bash reading met syntax that dash reads otherwise (see `bash()`). */
  bashOnly: boolean
}

/** What a pipeline's status is known to be: dash has no `[[`, so a `[[` command always fails there. */
type Status = 'fails' | 'unknown'

class Parser {
  private pos = 0
  private ahead: Token | null = null
  private heredocs: PendingHeredoc[] = []
  /** Start positions where `((` or `$((` turned out not to be arithmetic: never tried twice. */
  private notArith = new Set<number>()
  /** How many commands were found before the last complete line (dash runs those even if a later line has a syntax error). */
  committed = 0

  constructor(
    private readonly src: string,
    private readonly out: SimpleCommand[],
    /** Shared with the parsers of backticks and here-documents, so the bound is global. */
    private readonly shared: Shared,
    /** Read as dash does: none of bash's extensions (see the top of this file). */
    private readonly dash: boolean,
  ) {}

  parseProgram(): void {
    this.parseList(() => false)
    const t = this.peek()
    if (t.kind !== 'eof') throw unexpected(t)
    if (this.heredocs.length > 0) throw new ParseError('a here-document has no body (no line after it)')
  }

  // ---- grammar -------------------------------------------------------------------

  private parseList(stop: (t: Token) => boolean): void {
    for (;;) {
      this.skipNewlines()
      const t = this.peek()
      if (t.kind === 'eof' || stop(t)) return
      this.parseAndOr()
      const sep = this.peek()
      if (sep.kind !== 'newline' && !isOp(sep, ';') && !isOp(sep, '&')) return
      this.next()
      if (sep.kind === 'newline' && this.shared.level === 0) this.committed = this.out.length
    }
  }

  /**
   * `a && b || c`. In the dash reading, what follows `&&` after a `[[` command never runs
   * (dash has no `[[`, so it fails), which keeps `[[ -n $x && $y == z ]]` from reading as
   * a command named `$y`; what follows `||` runs.
   */
  private parseAndOr(): void {
    let status = this.parsePipeline()
    for (;;) {
      const and = isOp(this.peek(), '&&')
      if (!and && !isOp(this.peek(), '||')) return
      this.next()
      this.skipNewlines()
      const found = this.out.length
      const next = this.parsePipeline()
      if (and && status === 'fails') this.out.length = found
      else if (and) status = next
      else status = status === 'fails' && next === 'fails' ? 'fails' : 'unknown'
    }
  }

  private parsePipeline(): Status {
    let negated = false
    if (isWord(this.peek(), '!')) {
      this.next()
      negated = true
    }
    if (this.bash(isWord(this.peek(), 'time'))) {
      // bash's `time` keyword times a whole pipeline, `time ( … )` included.
      this.next()
      if (isWord(this.peek(), '-p')) this.next()
      if (endsCommand(this.peek())) return 'unknown'
    }
    const first = this.parseCommand()
    let single = true
    while (isOp(this.peek(), '|') || isOp(this.peek(), '|&')) {
      this.next()
      this.skipNewlines()
      this.parseCommand()
      single = false
    }
    const noSuchCommand = this.dash && first?.words[0] === '[[' && !first.dynamic[0]
    return noSuchCommand && single && !negated ? 'fails' : 'unknown'
  }

  /** Parses one command; returns it when it is a simple command. */
  private parseCommand(): SimpleCommand | undefined {
    const t = this.peek()
    if (t.kind === 'op' && REDIRECTS.has(t.op)) return this.parseSimple()
    if (isOp(t, '(')) {
      this.next()
      this.nested(() => this.parseList((u) => isOp(u, ')')))
      this.expectOp(')')
      this.parseTrailingRedirects()
    } else if (t.kind === 'arith') {
      this.next()
      this.parseTrailingRedirects()
    } else if (t.kind !== 'word') throw unexpected(t)
    else if (!this.isKeyword(t)) return this.parseSimple()
    else {
      this.nested(() => this.parseCompound(t.word.text))
      this.parseTrailingRedirects()
    }
    return undefined
  }

  private parseCompound(keyword: string): void {
    this.next()
    switch (keyword) {
      case '{':
        this.parseList((u) => isWord(u, '}'))
        this.expectWord('}')
        break
      case 'if':
        this.parseList((u) => isWord(u, 'then'))
        this.expectWord('then')
        this.parseList((u) => isWord(u, 'elif') || isWord(u, 'else') || isWord(u, 'fi'))
        while (isWord(this.peek(), 'elif')) {
          this.next()
          this.parseList((u) => isWord(u, 'then'))
          this.expectWord('then')
          this.parseList((u) => isWord(u, 'elif') || isWord(u, 'else') || isWord(u, 'fi'))
        }
        if (isWord(this.peek(), 'else')) {
          this.next()
          this.parseList((u) => isWord(u, 'fi'))
        }
        this.expectWord('fi')
        break
      case 'while':
      case 'until':
        this.parseList((u) => isWord(u, 'do'))
        this.parseDoGroup()
        break
      case 'for':
      case 'select':
        this.parseFor()
        break
      case 'case':
        this.parseCase()
        break
      case 'function':
        if (this.next().kind !== 'word') throw new ParseError('`function` must be followed by a name')
        if (isOp(this.peek(), '(')) {
          this.next()
          this.expectOp(')')
        }
        this.parseFunctionBody()
        break
      case '[[':
        this.parseCondition()
        break
      case 'coproc':
        throw new ParseError('`coproc` is not supported')
      default:
        throw new ParseError(`unexpected \`${keyword}\``)
    }
  }

  private parseDoGroup(): void {
    this.expectWord('do')
    this.parseList((u) => isWord(u, 'done'))
    this.expectWord('done')
  }

  private parseFor(): void {
    if (this.peek().kind === 'arith') {
      this.next()
    } else {
      const name = this.next()
      if (name.kind !== 'word') throw new ParseError('`for` must be followed by a name')
      // The loop sets its variable: `for PATH in .` is an assignment to PATH.
      this.assign(name.word.text)
      this.skipNewlines()
      if (isWord(this.peek(), 'in')) {
        this.next()
        while (this.peek().kind === 'word') this.next()
      }
    }
    if (isOp(this.peek(), ';')) this.next()
    this.skipNewlines()
    // bash also accepts a brace group as the body of a `for`.
    if (this.bash(isWord(this.peek(), '{'))) {
      this.parseCommand()
      return
    }
    this.parseDoGroup()
  }

  private parseCase(): void {
    if (this.next().kind !== 'word') throw new ParseError('`case` must be followed by a word')
    this.skipNewlines()
    this.expectWord('in')
    for (;;) {
      this.skipNewlines()
      if (isWord(this.peek(), 'esac')) {
        this.next()
        return
      }
      if (isOp(this.peek(), '(')) this.next()
      for (;;) {
        if (this.next().kind !== 'word') throw new ParseError('a `case` pattern is missing')
        const t = this.next()
        if (isOp(t, ')')) break
        if (!isOp(t, '|')) throw unexpected(t)
      }
      this.parseList((u) => isCaseEnd(u) || isWord(u, 'esac'))
      if (isCaseEnd(this.peek())) this.next()
      else if (!isWord(this.peek(), 'esac')) throw unexpected(this.peek())
    }
  }

  private parseFunctionBody(): void {
    this.skipNewlines()
    const t = this.peek()
    if (!isOp(t, '(') && t.kind !== 'arith' && !this.isKeyword(t)) {
      throw new ParseError('a function body must be a compound command such as `{ …; }`')
    }
    this.parseCommand()
  }

  /**
   * `[[ … ]]` as bash reads it: `<`, `>`, `&&`, `||`, `!` and parentheses are operands, and
   * the right side of `=~` is a regex in which `(`, `)`, `|`, `<` and `>` are plain
   * characters. dash has no `[[` and reads all of them as operators: that is the dash
   * reading's business (`[[ x =~ a|rm y ]]` pipes `[[ x =~ a` into `rm y ]]` there).
   */
  private parseCondition(): void {
    const cmd = emptyCommand()
    push(cmd, literal('[['))
    for (;;) {
      this.skipNewlines()
      const t = this.next()
      if (t.kind === 'word') {
        if (t.word.text === ']]' && !t.word.quoted) break
        push(cmd, t.word)
        if (t.word.text === '=~' && !t.word.quoted) {
          this.skipBlanks()
          push(cmd, this.readWord(true))
        }
      } else if (t.kind === 'op' && t.fd === undefined && ['<', '>', '(', ')', '&&', '||'].includes(t.op)) {
        push(cmd, literal(t.op))
      } else {
        throw t.kind === 'eof' ? new ParseError('`[[` is not closed by `]]`') : unexpected(t)
      }
    }
    this.out.push(cmd)
  }

  private parseSimple(): SimpleCommand | undefined {
    const cmd = emptyCommand()
    for (;;) {
      const t = this.peek()
      if (t.kind === 'op' && REDIRECTS.has(t.op)) {
        this.parseRedirect(cmd.redirects)
        continue
      }
      if (t.kind !== 'word') break
      this.next()
      if (cmd.words.length === 0 && t.word.assignment) cmd.assignments.push(t.word.text)
      else push(cmd, t.word)
    }
    const onlyName = cmd.words.length === 1 && cmd.assignments.length === 0 && cmd.redirects.length === 0
    if (onlyName && isOp(this.peek(), '(')) {
      // `name() body`: a function definition; its body's commands are what count.
      this.next()
      this.expectOp(')')
      this.parseFunctionBody()
      return undefined
    }
    if (cmd.words.length + cmd.assignments.length + cmd.redirects.length === 0) throw unexpected(this.peek())
    this.out.push(cmd)
    return cmd
  }

  /** Redirections after a compound command apply to all of it: kept as a command without words. */
  private parseTrailingRedirects(): void {
    const cmd = emptyCommand()
    for (let t = this.peek(); t.kind === 'op' && REDIRECTS.has(t.op); t = this.peek()) {
      this.parseRedirect(cmd.redirects)
    }
    if (cmd.redirects.length > 0) this.out.push(cmd)
  }

  private parseRedirect(into: Redirect[]): void {
    const t = this.next() as Extract<Token, { kind: 'op' }>
    const target = this.next()
    if (target.kind !== 'word') throw new ParseError(`\`${t.op}\` must be followed by a file name`)
    const redirect: Redirect = { op: t.op, target: target.word.text, dynamic: target.word.dynamic }
    if (t.fd !== undefined) redirect.fd = t.fd
    if (t.op === '<<<') redirect.body = target.word.text
    if (t.op === '<<' || t.op === '<<-') {
      this.heredocs.push({ redirect, strip: t.op === '<<-', quoted: target.word.quoted })
    }
    into.push(redirect)
  }

  private skipNewlines(): void {
    while (this.peek().kind === 'newline') this.next()
  }

  private expectOp(op: string): void {
    const t = this.next()
    if (!isOp(t, op)) throw t.kind === 'eof' ? new ParseError(`\`${op}\` is missing`) : unexpected(t)
  }

  private expectWord(word: string): void {
    const t = this.next()
    if (!isWord(t, word)) throw t.kind === 'eof' ? new ParseError(`\`${word}\` is missing`) : unexpected(t)
  }

  /** Reports a variable set by syntax other than `NAME=value`, as a command with only `NAME=`. */
  private assign(name: string): void {
    this.out.push({ ...emptyCommand(), assignments: [`${name}=`] })
  }

  /**
   * Whether bash reads syntax its own way here (`cond`), which dash does not: false in the
   * dash reading. Every place where the readings part goes through here, so that when the
   * bash reading never gets true from it, the dash reading would be the same and is skipped.
   */
  private bash(cond: boolean): boolean {
    if (!cond || this.dash) return false
    this.shared.bashOnly = true
    return true
  }

  /** A reserved word where a command starts; dash has fewer than bash. */
  private isKeyword(t: Token): t is Extract<Token, { kind: 'word' }> {
    return t.kind === 'word' && isWord(t, t.word.text) && (DASH_KEYWORDS.has(t.word.text) || this.bash(BASH_ONLY_KEYWORDS.has(t.word.text)))
  }

  private nested<T>(fn: () => T): T {
    if (++this.shared.level > MAX_DEPTH) throw new ParseError(`the command is nested more than ${MAX_DEPTH} levels deep`)
    const result = fn()
    this.shared.level--
    return result
  }

  // ---- tokens --------------------------------------------------------------------

  private peek(): Token {
    this.ahead ??= this.lex()
    return this.ahead
  }

  private next(): Token {
    const t = this.peek()
    this.ahead = null
    return t
  }

  private lex(): Token {
    this.skipBlanks()
    const { src } = this
    if (this.pos >= src.length) return { kind: 'eof' }
    const c = src[this.pos]!
    if (c === '\n') {
      this.pos++
      this.readHeredocBodies()
      return { kind: 'newline' }
    }
    // dash has no `((…))`: there `((rm x))` is two nested subshells, found by the dash reading.
    if (!this.dash && c === '(' && src[this.pos + 1] === '(') {
      const start = this.pos
      this.pos += 2
      if (this.bash(this.tryArithmetic(start, ')'))) return { kind: 'arith' }
      this.pos = start
    }
    if (!this.dash && c === '{') {
      FD_VARIABLE.lastIndex = this.pos
      const m = FD_VARIABLE.exec(src)
      if (this.bash(m !== null) && m) {
        this.assign(m[1]!)
        this.pos += m[0].length
      }
    }
    // An IO number is the digits right before `<` or `>`, as in `2>&1`; dash takes one digit only.
    let end = this.pos
    while (end < src.length && src[end]! >= '0' && src[end]! <= '9') end++
    const io = end > this.pos && (src[end] === '<' || src[end] === '>') && (end === this.pos + 1 || this.bash(true))
    const fd = io ? Number(src.slice(this.pos, end)) : undefined
    const at = fd === undefined ? this.pos : end
    const processSubstitution = this.bash((src[at] === '<' || src[at] === '>') && src[at + 1] === '(')
    let op = processSubstitution || !OPERATOR_START.has(src[at]!) ? undefined : BASH_OPERATORS.find((o) => src.startsWith(o, at))
    if (op && BASH_ONLY_OPERATORS.has(op) && !this.bash(true)) op = DASH_OPERATORS.find((o) => src.startsWith(o, at))
    if (op && (fd === undefined || REDIRECTS.has(op))) {
      this.pos = at + op.length
      return fd === undefined ? { kind: 'op', op } : { kind: 'op', op, fd }
    }
    return { kind: 'word', word: this.readWord(false) }
  }

  /** Spaces, tabs, line continuations and comments between tokens. */
  private skipBlanks(): void {
    const { src } = this
    while (this.pos < src.length) {
      const c = src[this.pos]
      if (c === ' ' || c === '\t') this.pos++
      else if (c === '\\' && src[this.pos + 1] === '\n') this.pos += 2
      else if (c === '#') {
        const nl = src.indexOf('\n', this.pos)
        this.pos = nl < 0 ? src.length : nl
      } else break
    }
  }

  /** One word, up to the first unquoted metacharacter; `regex` is the right side of `=~`. */
  private readWord(regex: boolean): Word {
    const w: Word = { text: '', dynamic: false, glob: false, quoted: false, assignment: false }
    const { src } = this
    let braces = 0
    let braceList = false
    let bracket = false
    let parens = 0
    let sawEquals = false
    while (this.pos < src.length) {
      const c = src[this.pos]!
      // In a `=~` regex, parentheses, `|`, `<`, `>` and (inside parentheses) blanks are text.
      if (regex && ('()|<>'.includes(c) || (parens > 0 && (c === ' ' || c === '\t')))) {
        if (c === '(') parens++
        else if (c === ')' && parens > 0) parens--
        w.text += c
        this.pos++
        continue
      }
      // bash's process substitution; in dash `<(` is a redirection and then a syntax error.
      if (this.bash((c === '<' || c === '>') && src[this.pos + 1] === '(')) {
        const start = this.pos
        this.pos += 2
        this.nested(() => this.parseList((u) => isOp(u, ')')))
        this.expectOp(')')
        w.text += src.slice(start, this.pos)
        w.dynamic = true
        continue
      }
      if (this.bash(c === '(' && w.assignment && w.text.endsWith('='))) {
        this.readArray(w)
        continue
      }
      if (META.has(c)) break
      if (c === '=' && !sawEquals) {
        // Only the first `=` can end an assignment's name; testing later ones would be quadratic.
        sawEquals = true
        w.assignment = !w.quoted && !w.dynamic && ASSIGNMENT_PREFIX.test(w.text)
      }
      switch (c) {
        case '\\':
          if (src[this.pos + 1] === '\n') {
            this.pos += 2
          } else {
            w.text += src[this.pos + 1] ?? '\\'
            w.quoted = true
            this.pos += 2
          }
          break
        case "'": {
          const end = src.indexOf("'", this.pos + 1)
          if (end < 0) throw new ParseError('a single quote is not closed')
          w.text += src.slice(this.pos + 1, end)
          w.quoted = true
          this.pos = end + 1
          break
        }
        case '"':
          this.readDouble(w)
          break
        case '$':
          // bash's `$'…'` and `$"…"`; dash reads a literal `$` and then a quoted string.
          if (this.bash(src[this.pos + 1] === "'")) this.readAnsiC(w)
          else if (this.bash(src[this.pos + 1] === '"')) {
            this.pos++
            this.readDouble(w)
          } else this.readDollar(w, false)
          break
        case '`':
          this.readBacktick(w, false)
          break
        default:
          // Brace expansion (`{rm,-rf,x}`) turns one word into several: as unknowable as `$x`.
          if (c === '{') braces++
          else if (braces > 0 && (c === ',' || (c === '.' && src[this.pos + 1] === '.'))) braceList = true
          else if (c === '}' && braces > 0) {
            braces--
            if (braceList) w.dynamic = true
          } else if (c === '*' || c === '?' || (c === ']' && bracket)) w.glob = true
          else if (c === '[') bracket = true
          w.text += c
          this.pos++
      }
    }
    return w
  }

  /** `name=( a b $(c) )`: the elements are words, and their substitutions count. */
  private readArray(w: Word): void {
    this.nested(() => {
      const start = this.pos
      this.pos++
      for (;;) {
        this.skipBlanks()
        const c = this.src[this.pos]
        if (c === undefined) throw new ParseError('an array `(` is not closed')
        if (c === ')') break
        if (c === '\n') {
          this.pos++
          continue
        }
        const before = this.pos
        const element = this.readWord(false)
        if (this.pos === before) throw new ParseError(`unexpected \`${c}\` in an array`)
        w.dynamic ||= element.dynamic
      }
      this.pos++
      w.text += this.src.slice(start, this.pos)
    })
  }

  private readDouble(w: Word): void {
    const { src } = this
    w.quoted = true
    this.pos++
    while (this.pos < src.length) {
      const c = src[this.pos]!
      if (c === '"') {
        this.pos++
        return
      }
      if (c === '\\') {
        const n = src[this.pos + 1]
        if (n === '\n') {
          /* a line continuation */
        } else if (n === '$' || n === '`' || n === '"' || n === '\\') w.text += n
        else w.text += '\\' + (n ?? '')
        this.pos += 2
      } else if (c === '$') this.readDollar(w, true)
      else if (c === '`') this.readBacktick(w, true)
      else {
        w.text += c
        this.pos++
      }
    }
    throw new ParseError('a double quote is not closed')
  }

  /** `$…` in a word or in double quotes; the expansion is kept as written. */
  private readDollar(w: Word, inDouble: boolean): void {
    const { src } = this
    const start = this.pos
    const n = src[this.pos + 1] ?? ''
    if (n === '(') {
      this.pos += 2
      if (src[this.pos] !== '(' || !this.tryArithmetic(start, ')', this.pos + 1)) {
        this.nested(() => this.parseList((u) => isOp(u, ')')))
        this.expectOp(')')
      }
    } else if (this.bash(n === '[')) {
      // bash's old arithmetic `$[…]`; dash reads a literal `$[` (and `;` in it ends the command).
      this.pos += 2
      if (!this.tryArithmetic(start, ']')) throw new ParseError('a `$[` is not closed')
    } else if (n === '{') {
      this.pos += 2
      this.nested(() => this.readParameter(inDouble))
    } else if (NAME_START.test(n)) {
      this.pos += 2
      while (this.pos < src.length && NAME_CHAR.test(src[this.pos]!)) this.pos++
    } else if ((n >= '0' && n <= '9') || SPECIAL_PARAMS.has(n)) {
      this.pos += 2
    } else {
      w.text += '$'
      this.pos++
      return
    }
    w.text += src.slice(start, this.pos)
    w.dynamic = true
  }

  /** The inside of `${…}`, up to its matching `}`; its substitutions run too (`${x:-$(cmd)}`). */
  private readParameter(inDouble: boolean): void {
    const { src } = this
    DEFAULT_ASSIGNMENT.lastIndex = this.pos
    const assigned = DEFAULT_ASSIGNMENT.exec(src)
    if (assigned) this.assign(assigned[1]!)
    const scratch = scratchWord()
    let open = 1
    // In double quotes bash (not dash, nor bash in POSIX mode) still pairs single quotes
    // here (they hide a `}`), but what is between them is expanded all the same.
    let single = false
    while (this.pos < src.length) {
      const c = src[this.pos]!
      if (c === '\\') this.pos += 2
      else if (c === "'" && !inDouble) {
        const end = src.indexOf("'", this.pos + 1)
        if (end < 0) throw new ParseError('a single quote is not closed')
        this.pos = end + 1
      } else if (this.bash(c === "'")) {
        single = !single
        this.pos++
      } else if (c === '"') this.readDouble(scratch)
      else if (this.bash(c === '$' && src[this.pos + 1] === "'" && !inDouble)) this.readAnsiC(scratch)
      else if (c === '$') this.readDollar(scratch, inDouble)
      else if (c === '`') this.readBacktick(scratch, inDouble)
      else {
        if (c === '{' && !single) open++
        if (c === '}' && !single && --open === 0) {
          this.pos++
          return
        }
        this.pos++
      }
    }
    throw new ParseError('a `${` is not closed')
  }

  /**
   * Tries `((…))`, `$((…))` or `$[…]` as arithmetic, from `this.pos` (or `from`). No
   * command runs in arithmetic itself, but `$(…)` and backticks inside it do. `((` can
   * also open two subshells (`((ls) )`); then this returns false, with the position and
   * everything found restored, and the caller reads it as commands.
   */
  private tryArithmetic(start: number, close: ')' | ']', from = this.pos): boolean {
    if (this.notArith.has(start)) return false
    const saved = { pos: this.pos, found: this.out.length, heredocs: this.heredocs.length, level: this.shared.level }
    this.pos = from
    try {
      if (this.nested(() => this.scanArithmetic(close))) {
        const text = this.src.slice(from, this.pos - (close === ')' ? 2 : 1))
        for (const name of arithmeticAssignments(text)) this.assign(name)
        return true
      }
    } catch (err) {
      if (!(err instanceof ParseError)) throw err
    }
    this.notArith.add(start)
    this.pos = saved.pos
    this.out.length = saved.found
    this.heredocs.length = saved.heredocs
    this.shared.level = saved.level
    return false
  }

  private scanArithmetic(close: ')' | ']'): boolean {
    const { src } = this
    const open = close === ')' ? '(' : '['
    const scratch = scratchWord()
    let depth = 0
    while (this.pos < src.length) {
      const c = src[this.pos]!
      if (c === '\\') this.pos += 2
      else if (c === '$') this.readDollar(scratch, true)
      else if (c === '`') this.readBacktick(scratch, true)
      else if (c === '"') this.readDouble(scratch)
      else if (c === "'") {
        // Quotes group (a `)` in them does not end the arithmetic), but bash and dash both
        // expand what is between them: `$(( '$(cmd)' ))` runs cmd.
        this.pos++
        while (this.pos < src.length && src[this.pos] !== "'") {
          if (src[this.pos] === '$') this.readDollar(scratch, true)
          else if (src[this.pos] === '`') this.readBacktick(scratch, true)
          else this.pos++
        }
        if (this.pos >= src.length) return false
        this.pos++
      } else if (c === open) {
        depth++
        this.pos++
      } else if (c === close && depth > 0) {
        depth--
        this.pos++
      } else if (c === close) {
        if (close === ']') {
          this.pos++
          return true
        }
        if (src[this.pos + 1] !== ')') return false
        this.pos += 2
        return true
      } else this.pos++
    }
    return false
  }

  /** `` `…` ``: the inside, with its backslashes undone, is parsed as its own program. */
  private readBacktick(w: Word, inDouble: boolean): void {
    const { src } = this
    const start = this.pos
    let inner = ''
    let i = this.pos + 1
    for (;;) {
      const c = src[i]
      if (c === undefined) throw new ParseError('a backtick is not closed')
      if (c === '`') break
      const n = src[i + 1]
      if (c === '\\' && (n === '$' || n === '`' || n === '\\' || (inDouble && n === '"'))) {
        inner += n
        i += 2
      } else {
        inner += c
        i++
      }
    }
    this.pos = i + 1
    this.nested(() => new Parser(inner, this.out, this.shared, this.dash).parseProgram())
    w.text += src.slice(start, this.pos)
    w.dynamic = true
  }

  /**
   * `$'…'`: bash's ANSI-C quoting, decoded, so `$'\x72m'` reads as `rm`. dash has none: its
   * reading is a `$` and a plain single-quoted string, which ends at the first `'` (so
   * `$'\'; rm x #'` runs rm in dash), and the dash reading finds that.
   */
  private readAnsiC(w: Word): void {
    const { src } = this
    w.quoted = true
    let i = this.pos + 2
    for (;;) {
      const c = src[i]
      if (c === undefined) throw new ParseError("a `$'` quote is not closed")
      if (c === "'") break
      if (c !== '\\') {
        w.text += c
        i++
        continue
      }
      const [text, length] = ansiEscape(src, i + 1)
      w.text += text
      i += 1 + length
    }
    this.pos = i + 1
  }

  /** After a newline: the bodies of the here-documents opened on the line before. */
  private readHeredocBodies(): void {
    const pending = this.heredocs
    this.heredocs = []
    const { src } = this
    for (const doc of pending) {
      const delimiter = doc.redirect.target
      let body = ''
      for (;;) {
        if (this.pos >= src.length) throw new ParseError(`the here-document is not ended by a \`${delimiter}\` line`)
        const nl = src.indexOf('\n', this.pos)
        const end = nl < 0 ? src.length : nl
        let line = src.slice(this.pos, end)
        this.pos = nl < 0 ? src.length : nl + 1
        if (doc.strip) line = line.replace(/^\t+/, '')
        if (line === delimiter) break
        body += line + '\n'
      }
      doc.redirect.body = body
      // An unquoted delimiter lets `$(…)` and backticks in the body run.
      if (!doc.quoted) this.nested(() => new Parser(body, this.out, this.shared, this.dash).scanExpansions())
    }
  }

  /** Finds the substitutions in a here-document body (like double quotes without the quote). */
  private scanExpansions(): void {
    const { src } = this
    const scratch = scratchWord()
    while (this.pos < src.length) {
      const c = src[this.pos]
      if (c === '\\') this.pos += 2
      else if (c === '$') this.readDollar(scratch, true)
      else if (c === '`') this.readBacktick(scratch, true)
      else this.pos++
    }
  }
}

const ANSI_SIMPLE: Record<string, string> = {
  a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v',
  '\\': '\\', "'": "'", '"': '"', '?': '?',
}

/** Decodes the escape after a backslash at `at`: the text and how many characters it used. */
function ansiEscape(src: string, at: number): [string, number] {
  const c = src[at] ?? ''
  if (c in ANSI_SIMPLE) return [ANSI_SIMPLE[c]!, 1]
  const digits = (re: RegExp, from: number, max: number) => {
    let end = from
    while (end < from + max && re.test(src[end] ?? '')) end++
    return src.slice(from, end)
  }
  if (c >= '0' && c <= '7') {
    const oct = digits(/[0-7]/, at, 3)
    return [String.fromCharCode(Number.parseInt(oct, 8) & 0xff), oct.length]
  }
  const hexMax: Record<string, number> = { x: 2, u: 4, U: 8 }
  if (c in hexMax) {
    const hex = digits(/[0-9A-Fa-f]/, at + 1, hexMax[c]!)
    if (hex === '') return ['\\' + c, 1]
    const code = Number.parseInt(hex, 16)
    return [code <= 0x10ffff ? String.fromCodePoint(code) : '', 1 + hex.length]
  }
  if (c === 'c' && at + 1 < src.length) return [String.fromCharCode(src.charCodeAt(at + 1) & 0x1f), 2]
  return ['\\' + c, c === '' ? 0 : 1]
}

/**
 * The variables an arithmetic expression assigns (`x = 1`, `x += 2`, `x++`, `--x`,
 * `a[i] = 1`), in one pass without regexes. A name right before an assignment operator
 * counts even where it is not really one: a few too many is harmless.
 */
export function arithmeticAssignments(text: string): string[] {
  const names: string[] = []
  /** The name whose operator may come next (after blanks or a `[…]` subscript). */
  let pending: string | undefined
  /** For each open `[`, the name before it. */
  const subscripts: (string | undefined)[] = []
  let before = ''
  for (let i = 0; i < text.length; ) {
    const c = text[i]!
    if (NAME_START.test(c) && !NAME_CHAR.test(text[i - 1] ?? '')) {
      let j = i + 1
      while (j < text.length && NAME_CHAR.test(text[j]!)) j++
      // `$x` and `${x}` are expanded first: the name they hold is not followed here.
      const expanded = text[i - 1] === '$' || (text[i - 1] === '{' && text[i - 2] === '$')
      pending = expanded ? undefined : text.slice(i, j)
      if (pending !== undefined && (before === '++' || before === '--')) names.push(pending)
      before = ''
      i = j
      continue
    }
    if (c === ' ' || c === '\t' || c === '\n') {
      i++
      continue
    }
    if (c === '[') subscripts.push(pending)
    const closed = c === ']' ? subscripts.pop() : undefined
    if (pending !== undefined && c !== '[' && c !== ']') {
      const op = ASSIGNMENT_OPERATORS.find((o) => text.startsWith(o, i))
      if (op !== undefined && text[i + op.length] !== '=') names.push(pending)
    }
    pending = closed
    before = (before + c).slice(-2)
    i++
  }
  return names
}

const ASSIGNMENT_OPERATORS = ['<<=', '>>=', '+=', '-=', '*=', '/=', '%=', '&=', '^=', '|=', '++', '--', '=']

function emptyCommand(): SimpleCommand {
  return { words: [], dynamic: [], glob: [], assignments: [], redirects: [] }
}

function literal(text: string): Word {
  return { text, dynamic: false, glob: false, quoted: false, assignment: false }
}

function scratchWord(): Word {
  return { text: '', dynamic: false, glob: false, quoted: false, assignment: false }
}

function push(cmd: SimpleCommand, w: Word): void {
  cmd.words.push(w.text)
  cmd.dynamic.push(w.dynamic)
  cmd.glob.push(w.glob)
}

function isOp(t: Token, op: string): boolean {
  return t.kind === 'op' && t.fd === undefined && t.op === op
}

function isCaseEnd(t: Token): boolean {
  return t.kind === 'op' && t.fd === undefined && CASE_ENDS.has(t.op)
}

/** The literal, unquoted word `word`: how reserved words are recognised. */
function isWord(t: Token, word: string): boolean {
  return t.kind === 'word' && !t.word.quoted && !t.word.dynamic && t.word.text === word
}

function endsCommand(t: Token): boolean {
  return t.kind === 'eof' || t.kind === 'newline' || (t.kind === 'op' && t.fd === undefined && ENDS_COMMAND.has(t.op))
}

function unexpected(t: Token): ParseError {
  if (t.kind === 'eof') return new ParseError('the command ends too early')
  if (t.kind === 'newline') return new ParseError('unexpected end of line')
  if (t.kind === 'arith') return new ParseError('unexpected `((`')
  return new ParseError(`unexpected \`${t.kind === 'op' ? t.op : t.word.text}\``)
}
