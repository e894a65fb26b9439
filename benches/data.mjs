// Generated inputs of the benchmarks, kept in .bench-data/ (gitignored) between runs and
// rebuilt when missing or of the wrong size. Every byte is a pure function of its
// position, so a run can check any answer without keeping the data in memory.
import { randomFillSync } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { rng } from './lib.mjs'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const DATA = path.join(ROOT, '.bench-data')

const WORDS = (
  'the of and to in is that for it as with was on be by at this from are or an which not have but ' +
  'function return const let value result error path file line offset limit token hash read write ' +
  'session workspace buffer stream async await promise export import default string number boolean'
).split(' ')

/** Line `n` (1-based) of the big text file: ~130 bytes, its number first, then words. */
export function bigLine(n) {
  const r = rng(n * 2654435761)
  let s = `${String(n).padStart(7, '0')} `
  while (s.length < 120) s += WORDS[Math.floor(r() * WORDS.length)] + ' '
  return s.padEnd(129, '.')
}

export const BIG_LINES = 1_050_000

/** ~130 MiB of text: BIG_LINES lines of 130 bytes with their newline. */
export function bigTextFile() {
  return numberedLinesFile(path.join('read', 'big.txt'), BIG_LINES)
}

/**
 * A file of `lines` numbered lines of 130 bytes (`bigLine`), at `rel` under the data
 * folder, generated once and reused while its size is right.
 */
export function numberedLinesFile(rel, lines) {
  const file = path.join(DATA, rel)
  const size = lines * 130
  if (existsSync(file) && statSync(file).size === size) return { file, size, generated: false }
  mkdirSync(path.dirname(file), { recursive: true })
  const fd = openSync(file, 'w')
  let chunk = []
  for (let n = 1; n <= lines; n++) {
    chunk.push(bigLine(n))
    if (chunk.length === 20_000 || n === lines) {
      writeSync(fd, chunk.join('\n') + '\n')
      chunk = []
    }
  }
  closeSync(fd)
  if (statSync(file).size !== size) throw new Error(`generated ${file} has the wrong size`)
  return { file, size, generated: true }
}

/** 256 MiB of random bytes. */
export function hashInputFile() {
  const file = path.join(DATA, 'hash', 'random-256MiB.bin')
  const size = 256 * 2 ** 20
  if (existsSync(file) && statSync(file).size === size) return { file, size, generated: false }
  mkdirSync(path.dirname(file), { recursive: true })
  const fd = openSync(file, 'w')
  const buf = Buffer.allocUnsafe(16 * 2 ** 20)
  for (let done = 0; done < size; done += buf.length) writeSync(fd, randomFillSync(buf))
  closeSync(fd)
  return { file, size, generated: true }
}

/**
 * About 1 MB of real English-ish and code text: TypeScript's lib .d.ts files (prose doc
 * comments and declarations), concatenated in name order and cut at the last newline
 * before `bytes`.
 */
export function tokenCorpus(bytes = 1_000_000) {
  const dir = path.join(ROOT, 'node_modules', 'typescript', 'lib')
  const names = readdirSync(dir)
    .filter((n) => /^lib\..*\.d\.ts$/.test(n))
    .sort()
  const parts = []
  let total = 0
  const used = []
  for (const name of names) {
    const b = readFileSync(path.join(dir, name))
    parts.push(b)
    used.push(name)
    total += b.length
    if (total >= bytes) break
  }
  let all = Buffer.concat(parts)
  if (all.length > bytes) all = all.subarray(0, all.lastIndexOf(0x0a, bytes - 1) + 1)
  return { text: all.toString('utf8'), bytes: all.length, files: used.length, source: 'node_modules/typescript/lib/lib.*.d.ts' }
}

/** A string of `n` random lowercase letters: one piece no pre-tokenizer can split. */
export function unsplittable(n, seed) {
  const r = rng(seed)
  const codes = new Uint8Array(n)
  for (let i = 0; i < n; i++) codes[i] = 97 + Math.floor(r() * 26)
  return Buffer.from(codes.buffer).toString('latin1')
}

export const SMALL_FILES = 1000

/** SMALL_FILES source-like files of ~2 KB in their own workspace folder. */
export function smallFiles() {
  const dir = path.join(DATA, 'small')
  const names = Array.from({ length: SMALL_FILES }, (_, i) => `src/mod${String(i).padStart(4, '0')}.ts`)
  const marker = path.join(dir, '.complete')
  if (!existsSync(marker)) {
    mkdirSync(path.join(dir, 'src'), { recursive: true })
    names.forEach((name, i) => {
      const r = rng(i + 1)
      const lines = [`// module ${i}`]
      let size = lines[0].length + 1
      while (size < 2000) {
        const w = Array.from({ length: 6 }, () => WORDS[Math.floor(r() * WORDS.length)])
        const line = `export const ${w[0]}_${i}_${lines.length} = (${w[1]}: string) => '${w.slice(2).join(' ')}'`
        lines.push(line)
        size += line.length + 1
      }
      writeFileSync(path.join(dir, name), lines.join('\n') + '\n')
    })
    writeFileSync(marker, 'ok\n')
  }
  return { dir, names }
}
