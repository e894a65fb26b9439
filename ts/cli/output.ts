/**
 * Where the `fsgate` command writes: data (a tool's text, the paths, the lines found) to
 * stdout, painted for a terminal; notes, counts and errors (with the error code) to
 * stderr, so `fsgate grep … | wc -l` counts lines and `| xargs` gets paths only;
 * `--json` as the whole result. Every message is put in the CLI's words (words.ts).
 * Exit codes as ripgrep's: 0 found or done, 1 nothing found, 2 an error.
 */
import { isatty } from 'node:tty'

import type { ToolResult } from '../result.js'
import { progressEnabled, withProgress } from './progress.js'
import { colorEnabled, type Env, makeStyle, type Style } from './style.js'
import { forPerson } from './words.js'

export const EXIT_OK = 0
/** A search, listing or glob that found nothing (as rg and grep exit 1). */
export const EXIT_NONE = 1
/** A usage error or an error the tool reported. */
export const EXIT_ERROR = 2

/** A mistake in the command line: printed with the command's usage, exit 2. */
export class UsageError extends Error {}

/** How a successful result's text is painted for a terminal. */
export type Painter = (text: string, result: ToolResult, style: Style) => string

export class Output {
  /** Painters for stdout and stderr, each decided on its own stream. */
  readonly style: Style
  readonly errStyle: Style
  private readonly progressStream: NodeJS.WriteStream | null

  constructor(
    readonly json: boolean,
    env: Env = process.env,
  ) {
    this.style = makeStyle(colorEnabled(isatty(1), env))
    this.errStyle = makeStyle(colorEnabled(isatty(2), env))
    this.progressStream = progressEnabled(isatty(2), env) ? process.stderr : null
  }

  /** Writes one line (or lines) of text to stdout. */
  out(text: string): void {
    process.stdout.write(`${text}\n`)
  }

  /** Writes one line (or lines) of text to stderr. */
  err(text: string): void {
    process.stderr.write(`${text}\n`)
  }

  /** A note for the person (a count, a truncation, where to go on), in the CLI's words, on stderr. */
  note(text: string): void {
    this.err(this.errStyle.dim(forPerson(text)))
  }

  /** Prints `value` as JSON on stdout. */
  printJson(value: unknown): void {
    this.out(JSON.stringify(value, null, 2))
  }

  /** Prints a failed result: its text in the CLI's words and its code, on stderr. Returns EXIT_ERROR. */
  failure(result: ToolResult): number {
    const s = this.errStyle
    for (const text of this.texts(result)) this.err(s.red(forPerson(text)))
    if (result.error) this.err(s.bold(s.red(`(error code ${result.error.code})`)))
    return EXIT_ERROR
  }

  /** Runs a tool call under a progress line on stderr when stderr is a terminal. */
  progress<T>(label: string, work: Promise<T>): Promise<T> {
    // One short line: a line that wraps cannot be erased with \r.
    const flat = label.replace(/\p{Cc}/gu, ' ')
    const shown = flat.length > 60 ? `${flat.slice(0, 59)}…` : flat
    return withProgress(this.progressStream, shown, work)
  }

  /**
   * Prints a tool result: with --json the whole ToolResult on stdout; otherwise the text on
   * stdout (painted by `paint` on a terminal) with its trailing notes (`isNote`) on stderr,
   * or on error the text and `(error code X)` on stderr, in red on a terminal. Returns the
   * exit code.
   */
  result(result: ToolResult, paint?: Painter, isNote: (line: string) => boolean = () => false): number {
    if (this.json) {
      this.printJson(result)
      return result.isError ? EXIT_ERROR : EXIT_OK
    }
    if (result.isError) return this.failure(result)
    for (const text of this.texts(result)) {
      const lines = text.split('\n')
      let end = lines.length
      while (end > 0 && isNote(lines[end - 1])) end--
      if (end > 0 || lines.length === 0) {
        const body = lines.slice(0, end).join('\n')
        this.out(paint && this.style.on ? paint(body, result, this.style) : body)
      }
      for (const note of lines.slice(end)) this.note(note)
    }
    return EXIT_OK
  }

  /** Each content block as text; an image as a one-line note rather than base64. */
  texts(result: ToolResult): string[] {
    return result.content.map((block) =>
      block.type === 'text' ? block.text : `[${block.mimeType} image, ${Math.round((block.data.length * 3) / 4)} bytes; use --json to get its data]`,
    )
  }
}
