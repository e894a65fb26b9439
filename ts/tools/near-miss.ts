/**
 * The lines an error shows for text that was not found (an edit's old_string, a patch's
 * lines): the closest lines of the file, each cut to a window around where it parts from
 * what was sought, as many as fit the error's size (MAX_MESSAGE_BYTES).
 */
import { MAX_MESSAGE_BYTES } from '../errors.js'

/**
 * `line` cut to a window of at most `width` characters around where it first differs
 * from the line of `old` it shares the longest start with (indentation aside), "…"
 * marking what was cut: what the model needs to see to copy old_string right.
 */
export function nearMiss(line: string, old: string, width = 60): string {
  const chars = [...line]
  if (chars.length <= width) return line
  const a = line.trimStart()
  const lead = chars.length - [...a].length
  let at = 0
  for (const o of old.split('\n')) {
    const b = [...o.trimStart()]
    let n = 0
    for (const ch of a) {
      if (ch !== b[n]) break
      n++
    }
    at = Math.max(at, lead + n)
  }
  const start = Math.max(0, Math.min(at - Math.floor(width / 3), chars.length - width))
  const end = start + width
  return `${start > 0 ? '…' : ''}${chars.slice(start, end).join('')}${end < chars.length ? '…' : ''}`
}

/**
 * " The closest lines are:\n4: …\n" with as many of `candidates` (best first) as fit
 * beside `rest` (the message's other words) in MAX_MESSAGE_BYTES, or " " when none fits.
 */
export function closestLines(candidates: ReadonlyArray<{ line: number; text: string }>, sought: string, rest: string, label = 'The closest lines are'): string {
  const lines = candidates.map((c) => `${c.line}: ${nearMiss(c.text, sought)}`)
  // Room for a preset's "[error] " before the message.
  const room = MAX_MESSAGE_BYTES - 8 - Buffer.byteLength(rest)
  while (lines.length > 0) {
    const list = ` ${label}:\n${lines.join('\n')}\n`
    if (Buffer.byteLength(list) <= room) return list
    lines.pop()
  }
  return ' '
}
