/** Small pieces the file tools share: numbers for people, the unchanged-read stub, the host's token counter. */
import { FsgateError } from '../errors.js'
import { text, type ToolOutput } from '../result.js'
import type { ToolContext } from '../tool.js'

/** A count with thousands separators, as the messages print them. */
export function num(n: number): string {
  return n.toLocaleString('en-US')
}

/** The ~100-byte stub for a read of something this session already has, unchanged. */
export function unchanged(shown: string, data: Record<string, unknown>, what: string): ToolOutput {
  return {
    content: [text(`${shown} is unchanged since you read it (${what}); that earlier result is still current.`)],
    data: { ...data, unchanged: true },
  }
}

/** Calls the host's token counter, refusing anything that is not a count. */
export async function hostCount(ctx: ToolContext, t: string): Promise<number> {
  let n: unknown
  try {
    n = await (ctx.countTokens as (t: string) => Promise<number> | number)(t)
  } catch (err) {
    throw new FsgateError('INTERNAL', `The host's countTokens function failed (${err instanceof Error ? err.message : String(err)}), so the file was not read.`)
  }
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
    throw new FsgateError('INTERNAL', `The host's countTokens function returned ${String(n)}, not a token count, so the file was not read.`)
  }
  return n
}

/** The name of the path field in the dialect the model called (Claude's tools say file_path). */
export function pathField(ctx: ToolContext): 'file_path' | 'path' {
  return ctx.dialect === 'claude' ? 'file_path' : 'path'
}
