/**
 * Colour for the `fsgate` command: when to use it, and how each command's text is painted.
 *
 * Colour is on only for a terminal: a stream that is a TTY, with NO_COLOR unset and TERM
 * not `dumb`. FORCE_COLOR forces it on for any stream (FORCE_COLOR=0 or `false` forces it
 * off), as Node and most tools read it. Piped output is never coloured, so scripts and
 * the tests see the tool's text byte for byte.
 *
 * The painters only add escapes around what the tool printed; stripping the escapes gives
 * the uncoloured text back exactly. Colours follow ripgrep and git: paths magenta, line
 * numbers green, matches bold red; git status letters green (staged) and red (not staged).
 */

export type Env = Readonly<Record<string, string | undefined>>

/** Whether output to a stream should be coloured (see the file comment for the rules). */
export function colorEnabled(isTTY: boolean, env: Env): boolean {
  const force = env.FORCE_COLOR
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false'
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  return isTTY && env.TERM !== 'dumb'
}

type Paint = (text: string) => string

/** SGR pairs: each colour closes with its own reset, so painted text nests. */
function sgr(open: number, close: number): Paint {
  return (text) => (text === '' ? '' : `\x1b[${open}m${text}\x1b[${close}m`)
}

export interface Style {
  readonly on: boolean
  bold: Paint
  dim: Paint
  red: Paint
  green: Paint
  yellow: Paint
  blue: Paint
  magenta: Paint
  cyan: Paint
}

const plain: Paint = (text) => text

/** The painters: real escapes when `on`, the identity otherwise. */
export function makeStyle(on: boolean): Style {
  if (!on) return { on, bold: plain, dim: plain, red: plain, green: plain, yellow: plain, blue: plain, magenta: plain, cyan: plain }
  return {
    on,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  }
}

/** Paints each line of `text` with `line`, keeping the line breaks. */
function eachLine(text: string, line: (l: string) => string): string {
  return text
    .split('\n')
    .map((l) => line(l))
    .join('\n')
}

/** A JavaScript version of a grep pattern, to highlight matches; null when JS cannot read it (Rust regex syntax differs a little). */
export function highlighter(pattern: string, ignoreCase: boolean): RegExp | null {
  try {
    return new RegExp(pattern, ignoreCase ? 'gi' : 'g')
  } catch {
    return null
  }
}

/** Every non-empty match of `re` in `text` painted bold red. */
function paintMatches(text: string, re: RegExp | null, s: Style): string {
  if (!re) return text
  re.lastIndex = 0
  return text.replace(re, (m) => (m === '' ? m : s.bold(s.red(m))))
}

/**
 * grep output, ripgrep-style: `path:line:text` for a match, `path-line-text` for context,
 * `path:count` in count mode, bare paths in files mode. The path is found by looking up
 * the prefixes of a line in the result's file list, so a path holding `:` or `-` is safe.
 */
/**
 * Where the path ends in a line of grep's content or count output (`path:12:text`,
 * `path-12-context`, `path:3`): the index of the separator after a path in `known`, or
 * null when the line does not start with one (a note, or `--`).
 */
export function grepLinePath(line: string, known: ReadonlySet<string>): number | null {
  for (let i = 1; i < line.length; i++) {
    const sep = line[i]
    if ((sep === ':' || sep === '-') && known.has(line.slice(0, i)) && /^\d+(?:[:-]|$)/.test(line.slice(i + 1))) return i
  }
  return null
}

export function paintGrep(text: string, files: readonly string[], re: RegExp | null, s: Style): string {
  if (!s.on) return text
  const known = new Set(files)
  return eachLine(text, (line) => {
    if (known.has(line)) return s.magenta(line)
    if (line === '--') return s.dim(line)
    const i = grepLinePath(line, known)
    if (i === null) return line
    const sep = line[i]
    const [, num, sep2, body] = /^(\d+)(?:([:-])([\s\S]*))?$/.exec(line.slice(i + 1)) as RegExpExecArray
    const path = s.magenta(line.slice(0, i))
    if (sep2 === undefined) return `${path}${sep}${s.green(num)}` // count mode: path:N
    return `${path}${sep}${s.green(num)}${sep2}${sep2 === ':' ? paintMatches(body, re, s) : body}`
  })
}

/** Read output: the line-number prefix of each line (`cat -n` or `N: `) green. */
export function paintRead(text: string, s: Style): string {
  if (!s.on) return text
  return eachLine(text, (line) => line.replace(/^(\s*\d+)(\t|: )/, (_m, n: string, sep: string) => `${s.green(n)}${sep}`))
}

/** Ranked search output: `N. path:a-b  symbol  (score x)` headers, then numbered lines. */
export function paintSearch(text: string, s: Style): string {
  if (!s.on) return text
  return eachLine(text, (line) => {
    const head = /^(\d+\. )(.+?):(\d+-\d+)( {2}.*?)?( {2}\(score [^)]*\))?$/.exec(line)
    if (head) {
      const [, rank, file, range, symbol = '', score = ''] = head
      return `${s.bold(rank)}${s.magenta(file)}:${s.green(range)}${s.bold(symbol)}${s.dim(score)}`
    }
    return line.replace(/^(\s*\d+)\t/, (_m, n: string) => `${s.green(n)}\t`)
  })
}

/** A unified diff: headers bold, hunks cyan, additions green, deletions red. */
export function paintDiff(text: string, s: Style): string {
  if (!s.on) return text
  return eachLine(text, (line) => {
    if (/^(diff --git |index |--- |\+\+\+ |(new|deleted) file mode |similarity |rename (from|to) )/.test(line)) return s.bold(line)
    if (line.startsWith('@@')) return s.cyan(line)
    if (line.startsWith('+')) return s.green(line)
    if (line.startsWith('-')) return s.red(line)
    return line
  })
}

/** git status: the index letter green, the worktree letter red, untracked `??` red, as git colours them. */
export function paintStatus(text: string, s: Style): string {
  if (!s.on) return text
  return eachLine(text, (line) => {
    const m = /^([ MADRCTU?!.])([ MADRCTU?!.]) (.+)$/.exec(line)
    if (!m) return line
    const [, x, y, rest] = m
    if (x === '?' || x === '!') return `${s.red(x + y)} ${rest}`
    const index = x === ' ' || x === '.' ? x : s.green(x)
    const worktree = y === ' ' || y === '.' ? y : s.red(y)
    return `${index}${worktree} ${rest}`
  })
}

/** git log (`hash date author: subject`): the hash yellow. git branch: the current one green. */
export function paintLogOrBranch(text: string, s: Style): string {
  if (!s.on) return text
  return eachLine(text, (line) => {
    const current = /^\* (\S+)(.*)$/.exec(line)
    if (current) return `* ${s.green(current[1])}${current[2]}`
    return line.replace(/^([0-9a-f]{7,40})(?= )/, (h) => s.yellow(h))
  })
}

/** A risk level: high red, medium yellow, low green. */
export function paintRisk(level: string, s: Style): string {
  return level === 'high' ? s.red(level) : level === 'medium' ? s.yellow(level) : level === 'low' ? s.green(level) : level
}
