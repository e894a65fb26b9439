/**
 * A progress line for long walks (glob, grep, search): the native calls report no
 * progress, so this is a spinner with the elapsed time, on stderr, shown only when the
 * call takes longer than a moment and only on a terminal. It is erased when the call
 * ends, so what is left on the screen is the result alone.
 */
import type { Env } from './style.js'

/** Whether to show a progress line on a stream: only on a TTY, never with TERM=dumb. */
export function progressEnabled(isTTY: boolean, env: Env): boolean {
  return isTTY && env.TERM !== 'dumb'
}

/** The part of a stream a progress line needs. */
export interface ProgressStream {
  write(text: string): unknown
}

export interface ProgressOptions {
  /** Nothing is shown for calls faster than this. Default 300 ms. */
  delayMs?: number
  /** Time between frames. Default 80 ms. */
  intervalMs?: number
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
/** Back to the start of the line and erase it. */
const CLEAR = '\r\x1b[2K'

/**
 * Runs `work` with a spinner and `label` on `stream` while it takes longer than the delay;
 * with `stream` null (not a terminal) it just runs `work`. The line is erased before the
 * promise settles, whether the work succeeds or fails.
 */
export async function withProgress<T>(stream: ProgressStream | null, label: string, work: Promise<T>, options: ProgressOptions = {}): Promise<T> {
  if (!stream) return work
  const started = Date.now()
  let frame = 0
  let shown = false
  let ticker: NodeJS.Timeout | undefined
  const draw = () => {
    shown = true
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    stream.write(`${CLEAR}${FRAMES[frame++ % FRAMES.length]} ${label} ${seconds}s`)
  }
  const delay = setTimeout(() => {
    draw()
    ticker = setInterval(draw, options.intervalMs ?? 80)
    ticker.unref()
  }, options.delayMs ?? 300)
  delay.unref()
  try {
    return await work
  } finally {
    clearTimeout(delay)
    clearInterval(ticker)
    if (shown) stream.write(CLEAR)
  }
}
