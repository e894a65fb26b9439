/**
 * apply_patch, as a property (fast-check): for random files (any line content, repeated
 * lines, empty lines, LF, CRLF or mixed breaks, with or without a final one, in UTF-8,
 * UTF-8 with a BOM or UTF-16) and random edits of them, the V4A patch generated from
 * their line diff (hunks of three context lines, widened where an earlier copy of their
 * lines would be found first) applies through session.call and leaves exactly the target
 * bytes: each kept line with its own line break, added lines with the file's usual one,
 * the file ended by a break. Applying the same patch again fails cleanly (an error under
 * 600 bytes, every file as it was), and undo puts every file back.
 *
 * Runs and seed: FSGATE_PROPERTY_RUNS, FSGATE_PROPERTY_SEED (property-arbitraries.ts).
 */
import fs from 'node:fs'
import path from 'node:path'

import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'

import { createToolkit } from '../ts/index.js'
import { removeTempDirs, tempDir, textOf } from './helpers.js'
import { type Encoding, encode, lineArb, params, sniffsAsText, timeoutFor } from './property-arbitraries.js'

afterAll(removeTempDirs)

/** A line: arbitrary content (never ending in '\r', which would be part of its break), or one of a few that repeat. */
const line = fc.oneof({ weight: 3, arbitrary: lineArb.map((l) => l.replace(/\r+$/, '')) }, { weight: 2, arbitrary: fc.constantFrom('x', 'y', '', '  x', 'return 1') })

interface Source {
  lines: string[]
  /** Each line's break ('' only for a last line without one). */
  eols: string[]
  encoding: Encoding
}

const EOLS = { lf: ['\n'], crlf: ['\r\n'], mixed: ['\n', '\r\n', '\r\n'] }
const sourceArb: fc.Arbitrary<Source> = fc
  .record({
    lines: fc.array(line, { maxLength: 30 }),
    eol: fc.constantFrom<keyof typeof EOLS>('lf', 'crlf', 'mixed'),
    pick: fc.array(fc.nat(), { minLength: 30, maxLength: 30 }),
    final: fc.boolean(),
    encoding: fc.constantFrom<Encoding>('utf-8', 'utf-8-bom', 'utf-16le'),
  })
  .map(({ lines, eol, pick, final, encoding }) => ({
    lines,
    // A last line without a break is a line only if it has text ("" would be no line at all).
    eols: lines.map((l, i) => (i === lines.length - 1 && !final && l !== '' ? '' : EOLS[eol][pick[i] % EOLS[eol].length])),
    encoding,
  }))
  .filter((s) => !(s.encoding === 'utf-8' && s.lines[0]?.startsWith('\uFEFF')) && sniffsAsText(bytesOf(s)))

function bytesOf(s: Source): Buffer {
  return encode(s.lines.map((l, i) => l + s.eols[i]).join(''), s.encoding)
}

/** An edit: runs of the old lines kept, dropped or replaced, and lines inserted. */
const editArb = (old: string[]): fc.Arbitrary<string[]> =>
  fc.array(fc.record({ keep: fc.integer({ min: 0, max: 6 }), drop: fc.integer({ min: 0, max: 3 }), add: fc.array(line, { maxLength: 3 }) }), { maxLength: 6 }).map((steps) => {
    const out: string[] = []
    let at = 0
    for (const s of steps) {
      out.push(...old.slice(at, at + s.keep))
      at = Math.min(old.length, at + s.keep + s.drop)
      out.push(...s.add)
    }
    out.push(...old.slice(at))
    return out
  })

type Op = { kind: ' ' | '-' | '+'; text: string; old?: number }

/** The line diff of a and b (longest common subsequence). */
function diff(a: string[], b: string[]): Op[] {
  const n = a.length
  const m = b.length
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0))
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
  const ops: Op[] = []
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i], old: i++ })
      j++
    } else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) ops.push({ kind: '+', text: b[j++] })
    else ops.push({ kind: '-', text: a[i], old: i++ })
  }
  return ops
}

/** The first exact occurrence of `pattern` in `lines` at or after `from` (as the engine's first rung finds it). */
function seek(lines: string[], pattern: string[], from: number): number {
  for (let i = from; i + pattern.length <= lines.length; i++) if (pattern.every((p, k) => lines[i + k] === p)) return i
  return -1
}

/** The hunks ("@@" and its lines) that turn a into b: three lines of context, merged when close, started earlier where needed to be found at their place. */
function hunks(a: string[], ops: Op[]): string[] {
  const changes = ops.flatMap((o, k) => (o.kind === ' ' ? [] : [k]))
  const ranges: Array<[number, number]> = []
  for (const k of changes) {
    const s = Math.max(0, k - 3)
    const e = Math.min(ops.length, k + 4)
    const last = ranges.at(-1)
    if (last && s <= last[1]) last[1] = Math.max(last[1], e)
    else ranges.push([s, e])
  }
  const out: string[] = []
  let next = 0
  let prevEnd = 0
  for (let r = 0; r < ranges.length; r++) {
    let [s, e] = ranges[r]
    const oldAt = (k: number) => ops.slice(0, k).filter((o) => o.kind !== '+').length
    const olds = () => ops.slice(s, e).filter((o) => o.kind !== '+').map((o) => o.text)
    if (olds().length > 0 && seek(a, olds(), next) !== oldAt(s)) s = prevEnd
    out.push('@@', ...ops.slice(s, e).map((o) => `${o.kind}${o.text}`))
    next = oldAt(e)
    prevEnd = e
    ranges[r] = [s, e]
  }
  return out
}

/** The bytes the patch must leave: kept lines with their own break, added ones with the file's usual one, every line ended. */
function expected(src: Source, ops: Op[]): Buffer {
  const crlf = src.eols.filter((e) => e === '\r\n').length
  const lf = src.eols.filter((e) => e === '\n').length
  const usual = crlf > lf ? '\r\n' : '\n'
  const text = ops
    .filter((o) => o.kind !== '-')
    .map((o) => o.text + (o.kind === ' ' ? src.eols[o.old as number] || usual : usual))
    .join('')
  return encode(text, src.encoding)
}

const caseArb = fc
  .array(sourceArb, { minLength: 1, maxLength: 3 })
  .chain((sources) =>
    fc.record({
      sources: fc.constant(sources),
      targets: fc.tuple(...sources.map((s) => editArb(s.lines))),
      added: fc.option(fc.array(line, { maxLength: 5 }), { nil: undefined }),
    }),
  )

describe('apply_patch, as a property', () => {
  it(
    'a patch made from a diff gives the target bytes; applied again it fails cleanly; undo puts every file back',
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArb, async ({ sources, targets, added }) => {
          const dir = tempDir('fsgate-patch-prop-')
          const session = createToolkit({ workspace: dir, preset: 'claude-code' }).createSession()
          const body: string[] = []
          const want = new Map<string, Buffer | null>()
          for (const [f, src] of sources.entries()) {
            const name = `f${f}.txt`
            fs.writeFileSync(path.join(dir, name), bytesOf(src))
            const ops = diff(src.lines, targets[f])
            if (!ops.some((o) => o.kind !== ' ')) {
              want.set(name, bytesOf(src))
              continue
            }
            body.push(`*** Update File: ${name}`, ...hunks(src.lines, ops))
            want.set(name, expected(src, ops))
          }
          if (added) {
            body.push('*** Add File: new/added.txt', ...added.map((l) => `+${l}`))
            want.set('new/added.txt', Buffer.from(added.map((l) => `${l}\n`).join('')))
          }
          // The last section makes a second application fail: the file is gone by then.
          fs.writeFileSync(path.join(dir, 'sentinel.txt'), 'bye\n')
          body.push('*** Delete File: sentinel.txt')
          want.set('sentinel.txt', null)
          const patch = ['*** Begin Patch', ...body, '*** End Patch'].join('\n')
          const originals = new Map([...want.keys()].map((k) => [k, fs.existsSync(path.join(dir, k)) ? fs.readFileSync(path.join(dir, k)) : null]))
          const disk = () => new Map([...want.keys()].map((k) => [k, fs.existsSync(path.join(dir, k)) ? fs.readFileSync(path.join(dir, k)) : null]))

          const first = await session.call('apply_patch', { input: patch })
          expect(first.isError, `${textOf(first)}\n--- the patch:\n${patch}`).toBe(false)
          expect(disk()).toEqual(want)

          const again = await session.call('apply_patch', { input: patch })
          expect(again.isError).toBe(true)
          expect(Buffer.byteLength(textOf(again))).toBeLessThan(600)
          expect(disk()).toEqual(want)
          expect(fs.readdirSync(dir, { recursive: true }).filter((p) => String(p).endsWith('.fsgate-tmp'))).toEqual([])

          await session.undo('sentinel.txt')
          expect(disk()).toEqual(originals)
          fs.rmSync(dir, { recursive: true, force: true })
        }),
        params(1),
      )
    },
    timeoutFor(1, 60),
  )

  it('the generator’s hunks are found where they belong even among repeated lines (a check of the generator itself)', () => {
    const a = ['x', 'x', 'x', 'x', 'y', 'x', 'x', 'x', 'x', 'z']
    const b = ['x', 'x', 'x', 'x', 'y', 'x', 'x', 'x', 'x', 'Z']
    const lines = hunks(a, diff(a, b))
    // A first hunk of "x x x -z" would be found at line 1 (an earlier "x x x" is not followed by z, so no), but
    // its three lines of context alone ("x","x","x") occur before: the hunk starts at line 1.
    expect(lines[0]).toBe('@@')
    expect(lines).toContain('+Z')
    expect(seek(a, lines.slice(1).filter((l) => !l.startsWith('+')).map((l) => l.slice(1)), 0)).toBe(a.length - (lines.length - 2))
  })
})
