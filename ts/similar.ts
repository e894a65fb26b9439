/**
 * "Did you mean": names in the same folder close to a missing one, so a model that
 * guessed `src/utils.ts` learns that `src/util.ts` exists. Only asked for a path whose
 * folder the native layer has already confirmed lies inside the allowed roots.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'

import { clipMiddle } from './errors.js'

/** Up to `max` entries of the missing path's folder that look like what was meant. */
export async function similarNames(missing: string, max = 3): Promise<string[]> {
  const dir = path.dirname(missing)
  const want = path.basename(missing)
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  if (names.length > 5000) return []
  const stem = (n: string) => n.replace(/\.[^.]*$/, '').toLowerCase()
  const scored: Array<[number, string]> = []
  for (const name of names) {
    let score: number
    if (name.toLowerCase() === want.toLowerCase()) score = 0
    else if (stem(name) === stem(want)) score = 1
    else {
      const d = distance(name.toLowerCase(), want.toLowerCase(), 2)
      if (d > 2) continue
      score = 1 + d
    }
    scored.push([score, name])
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
  return scored.slice(0, max).map(([, name]) => path.join(dir, name))
}

/** Levenshtein distance, giving up (returning cap + 1) once it must exceed `cap`. */
function distance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap || a.length > 128 || b.length > 128) return cap + 1
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
      best = Math.min(best, cur[j])
    }
    if (best > cap) return cap + 1
    prev = cur
  }
  return prev[b.length]
}

/**
 * The hint of a NOT_FOUND error: " Did you mean a or b?" with the suggestions as given
 * (paths of the missing one's folder); where long paths would not fit an error, their
 * names alone, said to be in that folder. Empty without suggestions.
 */
export function didYouMean(near: readonly string[]): string {
  if (near.length === 0) return ''
  const whole = near.join(' or ')
  if (Buffer.byteLength(whole) <= 110) return ` Did you mean ${whole}?`
  const names = near.slice(0, 2).map((p) => clipMiddle(path.basename(p), 40))
  return ` Did you mean ${names.join(' or ')}, in the same folder?`
}
