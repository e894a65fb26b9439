/**
 * Where the `fsgate` command writes: a tool's text to stdout (painted for a terminal), its
 * errors to stderr with the error code, `--json` as the whole ToolResult, and the exit
 * code each outcome gives (0 ok, 1 tool error, 2 usage error).
 */
import { isatty } from 'node:tty'

import type { ToolResult } from '../result.js'
import { progressEnabled, withProgress } from './progress.js'
import { colorEnabled, type Env, makeStyle, type Style } from './style.js'

export const EXIT_OK = 0
export const EXIT_TOOL_ERROR = 1
export const EXIT_USAGE = 2

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

  /** Runs a tool call under a progress line on stderr when stderr is a terminal. */
  progress<T>(label: string, work: Promise<T>): Promise<T> {
    // One short line: a line that wraps cannot be erased with \r.
    const flat = label.replace(/\p{Cc}/gu, ' ')
    const shown = flat.length > 60 ? `${flat.slice(0, 59)}…` : flat
    return withProgress(this.progressStream, shown, work)
  }

  /**
   * Prints a tool result: with --json the whole ToolResult on stdout; otherwise the text on
   * stdout (painted by `paint` on a terminal), or on error the text and `(error code X)` on
   * stderr, in red on a terminal. Returns the exit code.
   */
  result(result: ToolResult, paint?: Painter): number {
    if (this.json) {
      this.out(JSON.stringify(result, null, 2))
      return result.isError ? EXIT_TOOL_ERROR : EXIT_OK
    }
    if (result.isError) {
      const s = this.errStyle
      for (const text of this.texts(result)) this.err(s.red(text))
      if (result.error) this.err(s.bold(s.red(`(error code ${result.error.code})`)))
      return EXIT_TOOL_ERROR
    }
    for (const text of this.texts(result)) this.out(paint && this.style.on ? paint(text, result, this.style) : text)
    return EXIT_OK
  }

  /** Each content block as text; an image as a one-line note rather than base64. */
  private texts(result: ToolResult): string[] {
    return result.content.map((block) =>
      block.type === 'text' ? block.text : `[${block.mimeType} image, ${Math.round((block.data.length * 3) / 4)} bytes; use --json to get its data]`,
    )
  }
}
