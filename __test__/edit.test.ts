/**
 * Edit (file_edit / Edit / edit), SPEC §3.2 and §3.4: the matching ladder (exact, line
 * endings, curly quotes, de-sanitized tags, trailing whitespace), ambiguity and near
 * misses, the quote style of new_string, trailing-whitespace stripping, creation with
 * old_string "", encodings and line endings kept byte for byte outside the edited span,
 * links, the read-before-write contract across edits, concurrency, size and cancellation.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { EditMatchError, hashBuffer, type Session, type ToolkitOptions, type ToolResult } from '../ts/index.js'
import { applyUnifiedDiff, fails, ok, put, putLines, removeTempDirs, rng, tempDir, textOf, word, workspace, type Fixture } from './helpers.js'

afterAll(removeTempDirs)

// ---------------------------------------------------------------------------------------
// Local helpers

/** A fresh workspace with the claude-code preset (read-before-write on, no consent gate). */
const cc = (): Fixture => workspace({ preset: 'claude-code' })

/** Reads a whole file with Read (claude dialect), asserting success. */
async function readAll(s: Session, rel: string): Promise<string> {
  return ok(await s.call('Read', { file_path: rel }))
}

/** Calls Edit (claude dialect). */
function Edit(s: Session, rel: string, old_string: string, new_string: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) {
  return s.call('Edit', { file_path: rel, old_string, new_string, ...extra }, signal ? { signal } : {})
}

/** Writes `data` into the workspace, reads it fully with Read, and returns its absolute path. */
async function putAndRead(f: Fixture, rel: string, data: string | Uint8Array): Promise<string> {
  const abs = put(f.dir, rel, data)
  await readAll(f.session, rel)
  return abs
}

const disk = (abs: string): Buffer => fs.readFileSync(abs)

/** Asserts `after` has the same first `prefix` bytes and last `suffix` bytes as `before`. */
function sameOutside(before: Buffer, after: Buffer, prefix: number, suffix: number): void {
  expect(after.length).toBeGreaterThanOrEqual(prefix + suffix)
  expect(after.subarray(0, prefix).equals(before.subarray(0, prefix)), 'bytes before the edited span changed').toBe(true)
  expect(after.subarray(after.length - suffix).equals(before.subarray(before.length - suffix)), 'bytes after the edited span changed').toBe(true)
}

/** UTF-16 with its BOM. */
function utf16(text: string, le: boolean): Buffer {
  const body = Buffer.from(text, 'utf16le')
  if (!le) body.swap16()
  return Buffer.concat([Buffer.from(le ? [0xff, 0xfe] : [0xfe, 0xff]), body])
}

/** Leftover temp files of the atomic write in `dir` (there must never be any). */
function temps(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true }).map(String).filter((n) => n.includes('fsgate-tmp'))
}

/** The data of a successful edit, typed loosely. */
interface EditData {
  path: string
  realPath: string
  matchedBy: string
  replacements: number
  firstLine: number
  diff: string
  contentHash: string
  totalLines: number
  encoding: string
  created: boolean
}
const dataOf = (r: ToolResult) => r.data as unknown as EditData


/** Ten numbered lines of a small TypeScript file. */
const APP = Array.from({ length: 10 }, (_, i) => `const v${i + 1} = ${i + 1}`).join('\n') + '\n'

// ---------------------------------------------------------------------------------------

describe('exact replacement', () => {
  it('replaces one occurrence, shows the edited lines numbered like cat -n, and returns a unified diff', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'src/app.ts', APP)
    const r = await Edit(f.session, 'src/app.ts', 'const v5 = 5', 'const v5 = 50')
    const text = ok(r)
    const after = APP.replace('const v5 = 5\n', 'const v5 = 50\n')
    expect(disk(abs).equals(Buffer.from(after))).toBe(true)

    expect(text).toContain('src/app.ts')
    expect(text).toContain('     5\tconst v5 = 50')
    expect(text).not.toContain('const v5 = 5\n')
    const d = dataOf(r)
    expect(d).toMatchObject({ path: 'src/app.ts', realPath: abs, matchedBy: 'exact', replacements: 1, firstLine: 5, totalLines: 10, encoding: 'utf-8', created: false })
    expect(d.contentHash).toBe(await hashBuffer(disk(abs)))

    expect(d.diff.startsWith('--- a/src/app.ts\n+++ b/src/app.ts\n')).toBe(true)
    expect(d.diff).toMatch(/^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m)
    expect(d.diff).toContain('\n-const v5 = 5\n')
    expect(d.diff).toContain('\n+const v5 = 50\n')
    expect(applyUnifiedDiff(APP, d.diff)).toBe(after)
    expect(temps(f.dir)).toEqual([])
  })

  it('numbers the snippet and the diff hunk from the first edited line of a multi-line edit', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'a.ts', APP)
    const r = await Edit(f.session, 'a.ts', 'const v7 = 7\nconst v8 = 8', 'const seven = 7\nconst eight = 8\nconst extra = 0')
    const text = ok(r)
    const after = APP.replace('const v7 = 7\nconst v8 = 8\n', 'const seven = 7\nconst eight = 8\nconst extra = 0\n')
    expect(disk(abs).toString()).toBe(after)
    expect(text).toContain('     7\tconst seven = 7\n     8\tconst eight = 8\n     9\tconst extra = 0')
    expect(dataOf(r)).toMatchObject({ firstLine: 7, totalLines: 11, replacements: 1 })
    expect(applyUnifiedDiff(APP, dataOf(r).diff)).toBe(after)
  })

  it('treats old_string and new_string literally: regex characters and $-patterns are not special', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'p.js', 'const re = /a.*b(c)?$/\nlet x = 1\n')
    ok(await Edit(f.session, 'p.js', 'let x = 1', "let x = '$& $1 $$ $` $\\''"))
    ok(await Edit(f.session, 'p.js', '/a.*b(c)?$/', '/[x]+/'))
    expect(disk(abs).toString()).toBe("const re = /[x]+/\nlet x = '$& $1 $$ $` $\\''\n")
  })

  it('is reachable through the typed session.edit, which throws EditMatchError on a failed match', async () => {
    const f = workspace({ preset: 'claude-code' })
    const abs = await putAndRead(f, 'typed.txt', 'one\ntwo\n')
    const out = await f.session.edit({ path: 'typed.txt', old_string: 'two', new_string: 'deux' })
    expect(out.data).toMatchObject({ replacements: 1, matchedBy: 'exact' })
    expect(disk(abs).toString()).toBe('one\ndeux\n')
    const err = await f.session.edit({ path: 'typed.txt', old_string: 'three', new_string: 'trois' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EditMatchError)
    expect((err as EditMatchError).code).toBe('STRING_NOT_FOUND')
    expect((err as EditMatchError).errorCode).toBe(8)
  })
})

describe('ambiguity and replace_all', () => {
  const THRICE = 'call()\nx = 1\ncall()\ny = 2\ncall()\n'

  it('refuses an old_string that matches 3 times (AMBIGUOUS_MATCH, errorCode 9) and leaves the file alone', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'a.py', THRICE)
    const r = await Edit(f.session, 'a.py', 'call()', 'run()')
    const text = fails(r, 'AMBIGUOUS_MATCH')
    expect(r.error?.errorCode).toBe(9)
    expect(text).toContain('old_string matches 3 times; must match exactly once')
    expect(text).toMatch(/replace_all/)
    expect(disk(abs).toString()).toBe(THRICE)
    expect(temps(f.dir)).toEqual([])
  })

  it('replaces all 3 with replace_all and reports the count', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'a.py', THRICE)
    const r = await Edit(f.session, 'a.py', 'call()', 'run()', { replace_all: true })
    const text = ok(r)
    const after = 'run()\nx = 1\nrun()\ny = 2\nrun()\n'
    expect(disk(abs).toString()).toBe(after)
    expect(dataOf(r)).toMatchObject({ replacements: 3, firstLine: 1, matchedBy: 'exact' })
    expect(text).toContain('3 replacements')
    expect(applyUnifiedDiff(THRICE, dataOf(r).diff)).toBe(after)
  })

  it('replace_all with a single occurrence replaces it and reports 1', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'one.txt', 'alpha\nbeta\n')
    const r = await Edit(f.session, 'one.txt', 'beta', 'gamma', { replace_all: true })
    ok(r)
    expect(dataOf(r).replacements).toBe(1)
    expect(disk(abs).toString()).toBe('alpha\ngamma\n')
  })

  it('an exact unique match wins over a lower rung that would match more (the ladder stops at the first rung that matches)', async () => {
    const f = cc()
    const src = 'a = "x"\nb = \u201cx\u201d\n'
    const abs = await putAndRead(f, 'q.txt', src)
    const r = await Edit(f.session, 'q.txt', '"x"', '"y"')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('exact')
    expect(disk(abs).toString()).toBe('a = "y"\nb = \u201cx\u201d\n')
  })

  it('a normalized rung must also find exactly one match: two CRLF occurrences are AMBIGUOUS_MATCH', async () => {
    const f = cc()
    const src = 'a\r\nb\r\nc\r\na\r\nb\r\n'
    const abs = await putAndRead(f, 'crlf2.txt', src)
    const r = await Edit(f.session, 'crlf2.txt', 'a\nb', 'z')
    const text = fails(r, 'AMBIGUOUS_MATCH')
    expect(text).toContain('old_string matches 2 times; must match exactly once')
    expect(disk(abs).toString()).toBe(src)
  })
})

describe('not found, no change', () => {
  const SRC = 'import x from "y"\n\nfunction total(items) {\n  const total = computeTotal(items)\n  return total\n}\n'

  it('reports a near-miss typo as STRING_NOT_FOUND (errorCode 8) with the closest line and its number, and never applies it', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'calc.js', SRC)
    const r = await Edit(f.session, 'calc.js', '  const totl = computeTotal(items)', '  const sum = computeTotal(items)')
    const text = fails(r, 'STRING_NOT_FOUND')
    expect(r.error?.errorCode).toBe(8)
    const candidates = (r.data as { candidates: Array<{ line: number; text: string }> }).candidates
    expect(Array.isArray(candidates)).toBe(true)
    expect(candidates[0]).toEqual({ line: 4, text: '  const total = computeTotal(items)' })
    expect(text).toContain('4: ')
    expect(text).toContain('const total = computeTotal(items)')
    expect(text).toContain('Read')
    expect(disk(abs).toString()).toBe(SRC)
    expect(temps(f.dir)).toEqual([])
  })

  it('does not apply a match that differs only in inner whitespace or case (no fuzzy rung)', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'calc.js', SRC)
    fails(await Edit(f.session, 'calc.js', 'const total =  computeTotal(items)', 'X'), 'STRING_NOT_FOUND')
    fails(await Edit(f.session, 'calc.js', 'const Total = computeTotal(items)', 'X'), 'STRING_NOT_FOUND')
    fails(await Edit(f.session, 'calc.js', 'const total = computeTotal(item)', 'X'), 'STRING_NOT_FOUND')
    fails(await Edit(f.session, 'calc.js', 'function total(items) {\nconst total = computeTotal(items)', 'X'), 'STRING_NOT_FOUND')
    expect(disk(abs).toString()).toBe(SRC)
  })

  it('NO_CHANGE (errorCode 1) when old_string equals new_string, even before the file is read or when it is missing', async () => {
    const f = cc()
    const abs = put(f.dir, 'unread.txt', 'same\n')
    const before = fs.statSync(abs)
    const r = await Edit(f.session, 'unread.txt', 'same', 'same')
    fails(r, 'NO_CHANGE')
    expect(r.error?.errorCode).toBe(1)
    const r2 = await Edit(f.session, 'missing.txt', 'x', 'x')
    fails(r2, 'NO_CHANGE')
    expect(r2.error?.errorCode).toBe(1)
    expect(fs.existsSync(path.join(f.dir, 'missing.txt'))).toBe(false)
    await readAll(f.session, 'unread.txt')
    fails(await Edit(f.session, 'unread.txt', 'same', 'same', { replace_all: true }), 'NO_CHANGE')
    expect(disk(abs).toString()).toBe('same\n')
    expect(fs.statSync(abs).mtimeMs).toBe(before.mtimeMs)
    expect(fs.statSync(abs).ino).toBe(before.ino)
  })

  it('NO_CHANGE when new_string only differs by trailing whitespace that is stripped (.ts), and nothing is written', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'n.ts', 'let a = 1\n')
    const ino = fs.statSync(abs).ino
    const r = await Edit(f.session, 'n.ts', 'let a = 1', 'let a = 1   ')
    fails(r, 'NO_CHANGE')
    expect(r.error?.errorCode).toBe(1)
    expect(disk(abs).toString()).toBe('let a = 1\n')
    expect(fs.statSync(abs).ino).toBe(ino)
  })
})

describe('the read-before-write contract', () => {
  it('refuses an unread file (NOT_READ, errorCode 2) and a partly read one (PARTIAL_READ, errorCode 2)', async () => {
    const f = cc()
    const abs = put(f.dir, 'c.txt', 'a\nb\nc\nd\n')
    const r = await Edit(f.session, 'c.txt', 'b', 'B')
    fails(r, 'NOT_READ')
    expect(r.error?.errorCode).toBe(2)
    ok(await f.session.call('Read', { file_path: 'c.txt', offset: 1, limit: 2 }))
    const r2 = await Edit(f.session, 'c.txt', 'b', 'B')
    fails(r2, 'PARTIAL_READ')
    expect(r2.error?.errorCode).toBe(2)
    expect(disk(abs).toString()).toBe('a\nb\nc\nd\n')
    ok(await f.session.call('Read', { file_path: 'c.txt', offset: 3, limit: 2 }))
    ok(await Edit(f.session, 'c.txt', 'b', 'B'))
    expect(disk(abs).toString()).toBe('a\nB\nc\nd\n')
  })

  it('consecutive edits need no re-read; an external change in between is STALE (errorCode 3) and is not overwritten', async () => {
    const f = cc()
    const abs = await putAndRead(f, 's.txt', 'one\ntwo\nthree\n')
    ok(await Edit(f.session, 's.txt', 'one', 'ONE'))
    ok(await Edit(f.session, 's.txt', 'two', 'TWO'))
    ok(await Edit(f.session, 's.txt', 'ONE\nTWO', 'uno\ndos'))
    expect(disk(abs).toString()).toBe('uno\ndos\nthree\n')

    fs.writeFileSync(abs, 'uno\ndos\nthree\nfour\n')
    const r = await Edit(f.session, 's.txt', 'three', 'tres')
    const text = fails(r, 'STALE')
    expect(r.error?.errorCode).toBe(3)
    expect(text).toMatch(/Read/)
    expect(disk(abs).toString()).toBe('uno\ndos\nthree\nfour\n')

    await readAll(f.session, 's.txt')
    ok(await Edit(f.session, 's.txt', 'three', 'tres'))
    expect(disk(abs).toString()).toBe('uno\ndos\ntres\nfour\n')
  })

  it('a same-size rewrite with the mtime put back is STALE; a touch without a change is not', async () => {
    const f = cc()
    const abs = await putAndRead(f, 't.txt', 'aaaa\nbbbb\n')
    const { atime, mtime } = fs.statSync(abs)
    fs.writeFileSync(abs, 'aaaa\ncccc\n')
    fs.utimesSync(abs, atime, mtime)
    fails(await Edit(f.session, 't.txt', 'aaaa', 'AAAA'), 'STALE')
    expect(disk(abs).toString()).toBe('aaaa\ncccc\n')

    await readAll(f.session, 't.txt')
    const later = new Date(Date.now() + 5000)
    fs.utimesSync(abs, later, later)
    ok(await Edit(f.session, 't.txt', 'aaaa', 'AAAA'))
    expect(disk(abs).toString()).toBe('AAAA\ncccc\n')
  })

  it('a file deleted since it was read is STALE, not recreated', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'gone.txt', 'x\n')
    fs.unlinkSync(abs)
    const r = await Edit(f.session, 'gone.txt', 'x', 'y')
    expect(r.isError).toBe(true)
    expect(['STALE', 'NOT_FOUND']).toContain(r.error?.code)
    expect(fs.existsSync(abs)).toBe(false)
  })

  it('session.undo puts back the exact bytes an edit replaced', async () => {
    const f = cc()
    const original = utf16('first\r\nsecond\r\n', true)
    const abs = await putAndRead(f, 'u.txt', original)
    ok(await Edit(f.session, 'u.txt', 'second', 'zweite'))
    expect(disk(abs).equals(original)).toBe(false)
    const done = await f.session.undo('u.txt')
    expect(done.restored).toBe('previous')
    expect(disk(abs).equals(original)).toBe(true)
  })
})

describe('line endings', () => {
  it('matches an LF old_string in a CRLF file (matchedBy line-endings), writes new text with CRLF, and keeps every other byte', async () => {
    const f = cc()
    const src = 'one\r\ntwo\r\nthree\r\nfour\r\n'
    const abs = await putAndRead(f, 'w.txt', src)
    const before = disk(abs)
    const r = await Edit(f.session, 'w.txt', 'two\nthree', 'TWO\nTHREE\nextra')
    ok(r)
    expect(dataOf(r)).toMatchObject({ matchedBy: 'line-endings', replacements: 1, firstLine: 2, totalLines: 5 })
    const after = disk(abs)
    expect(after.toString()).toBe('one\r\nTWO\r\nTHREE\r\nextra\r\nfour\r\n')
    sameOutside(before, after, 'one\r\n'.length, '\r\nfour\r\n'.length)
  })

  it('gives a multi-line new_string CRLF endings in a CRLF file even when old_string matched exactly', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'w.txt', 'one\r\ntwo\r\n')
    const r = await Edit(f.session, 'w.txt', 'two', 'two\nmore')
    ok(r)
    expect(disk(abs).toString()).toBe('one\r\ntwo\r\nmore\r\n')
  })

  it('keeps a mixed-ending file byte for byte outside the edited span', async () => {
    const f = cc()
    const src = 'a\r\nb\nc\r\nd\n'
    const abs = await putAndRead(f, 'mixed.txt', src)
    ok(await Edit(f.session, 'mixed.txt', 'b', 'B'))
    expect(disk(abs).toString()).toBe('a\r\nB\nc\r\nd\n')
  })

  // Product bug: the exact rung matches an old_string that starts with "\n" at the "\n" of a
  // CRLF pair, so the "\r" before it stays behind: joining two lines leaves a stray CR inside
  // the line, and a multi-line new_string (given CRLF endings) yields "\r\r\n".
  it('an old_string starting with a line break does not split a CRLF pair (joining lines)', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'join.txt', 'foo\r\nbar\r\n')
    ok(await Edit(f.session, 'join.txt', '\nbar', ' bar'))
    expect(JSON.stringify(disk(abs).toString())).toBe(JSON.stringify('foo bar\r\n'))
  })

  it('an old_string starting with a line break does not split a CRLF pair (multi-line new_string)', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'split.txt', 'foo\r\nbar\r\n')
    ok(await Edit(f.session, 'split.txt', '\nbar', '\nbaz\nqux'))
    expect(JSON.stringify(disk(abs).toString())).toBe(JSON.stringify('foo\r\nbaz\r\nqux\r\n'))
  })

  it('replace_all of "\\n" in a CRLF file never writes "\\r\\r\\n"', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'blank.txt', 'a\r\nb\r\n')
    ok(await Edit(f.session, 'blank.txt', '\n', '\n\n', { replace_all: true }))
    expect(JSON.stringify(disk(abs).toString())).toBe(JSON.stringify('a\r\n\r\nb\r\n\r\n'))
  })

  it('gives a CRLF new_string LF endings in an LF file', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'lf.txt', 'x\ny\n')
    ok(await Edit(f.session, 'lf.txt', 'y', 'y1\r\ny2'))
    expect(disk(abs).toString()).toBe('x\ny1\ny2\n')
  })
})

describe('encodings', () => {
  for (const le of [true, false]) {
    const name = le ? 'utf-16le' : 'utf-16be'
    it(`edits a ${name} file with BOM, byte for byte outside the span`, async () => {
      const f = cc()
      const head = 'héllo\n'
      const tail = ' 한국어\nlast line\n'
      const original = utf16(`${head}wörld${tail}`, le)
      const abs = await putAndRead(f, `${name}.txt`, original)
      const r = await Edit(f.session, `${name}.txt`, 'wörld', 'WÖRLD 🌍')
      ok(r)
      expect(dataOf(r)).toMatchObject({ encoding: name, matchedBy: 'exact', firstLine: 2, totalLines: 3 })
      const after = disk(abs)
      expect(after.equals(utf16(`${head}WÖRLD 🌍${tail}`, le))).toBe(true)
      expect(after.subarray(0, 2).equals(Buffer.from(le ? [0xff, 0xfe] : [0xfe, 0xff]))).toBe(true)
      sameOutside(original, after, 2 + head.length * 2, tail.length * 2)
      expect(dataOf(r).contentHash).toBe(await hashBuffer(after))
    })
  }

  it('keeps CRLF in a UTF-16LE file and matches an LF old_string there', async () => {
    const f = cc()
    const original = utf16('a\r\nb\r\nc\r\n', true)
    const abs = await putAndRead(f, 'w16.txt', original)
    const r = await Edit(f.session, 'w16.txt', 'a\nb', 'A\nB')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('line-endings')
    expect(disk(abs).equals(utf16('A\r\nB\r\nc\r\n', true))).toBe(true)
  })

  it('keeps the UTF-8 BOM, also when the first line is edited', async () => {
    const f = cc()
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    const abs = await putAndRead(f, 'bom.txt', Buffer.concat([bom, Buffer.from('alpha\nbeta\n')]))
    const r = await Edit(f.session, 'bom.txt', 'alpha', 'ALPHA')
    ok(r)
    expect(dataOf(r)).toMatchObject({ encoding: 'utf-8-bom', firstLine: 1 })
    ok(await Edit(f.session, 'bom.txt', 'beta', 'gamma'))
    expect(disk(abs).equals(Buffer.concat([bom, Buffer.from('ALPHA\ngamma\n')]))).toBe(true)
  })

  it('refuses a Latin-1 file (invalid UTF-8) with ENCODING and leaves it byte for byte', async () => {
    const f = cc()
    const original = Buffer.from([...Buffer.from('caf'), 0xe9, ...Buffer.from('\nline2\n')])
    const abs = await putAndRead(f, 'latin1.txt', original)
    const r = await Edit(f.session, 'latin1.txt', 'line2', 'LINE2')
    fails(r, 'ENCODING')
    expect(disk(abs).equals(original)).toBe(true)
    expect(temps(f.dir)).toEqual([])
  })

  it('refuses a binary file (NUL bytes) with ENCODING and leaves it byte for byte', async () => {
    const f = cc()
    const original = Buffer.from('abc\0def\nline2\n')
    const abs = await putAndRead(f, 'blob.bin', original)
    const r = await Edit(f.session, 'blob.bin', 'line2', 'LINE2')
    fails(r, 'ENCODING')
    expect(disk(abs).equals(original)).toBe(true)
  })

  it('edits among multibyte text (Korean, Thai, emoji) with the right bytes and line numbers', async () => {
    const f = cc()
    const src = '한국어 줄입니다\nภาษาไทย สวัสดี\n😀 emoji 👍🏽 here\n끝\n'
    const abs = await putAndRead(f, 'intl.txt', src)
    const r = await Edit(f.session, 'intl.txt', 'ภาษาไทย', 'ภาษา 🎉 ไทย')
    const text = ok(r)
    expect(dataOf(r).firstLine).toBe(2)
    expect(text).toContain('     2\tภาษา 🎉 ไทย สวัสดี')
    ok(await Edit(f.session, 'intl.txt', '😀 emoji 👍🏽', '🚀 로켓'))
    const r3 = await Edit(f.session, 'intl.txt', '줄입니다\nภาษา', '줄\nภ')
    ok(r3)
    expect(dataOf(r3).firstLine).toBe(1)
    const after = '한국어 줄\nภ 🎉 ไทย สวัสดี\n🚀 로켓 here\n끝\n'
    expect(disk(abs).equals(Buffer.from(after))).toBe(true)
  })
})

describe('curly quotes (rung 3)', () => {
  it('matches straight quotes against curly ones and writes new_string in the file’s curly style, only inside the span', async () => {
    const f = cc()
    const src = 'x = "a"\nHe said \u201chello\u201d and it\u2019s fine\ny = \'b\'\n'
    const abs = await putAndRead(f, 'q.txt', src)
    const r = await Edit(f.session, 'q.txt', 'He said "hello" and it\'s fine', 'He said "bye" and it\'s great, isn\'t it')
    const text = ok(r)
    expect(dataOf(r).matchedBy).toBe('quotes')
    expect(text).toMatch(/quote/i)
    const after = 'x = "a"\nHe said \u201cbye\u201d and it\u2019s great, isn\u2019t it\ny = \'b\'\n'
    expect(disk(abs).toString()).toBe(after)
  })

  it('keeps straight quotes in new_string when the match was exact', async () => {
    const f = cc()
    const src = 'x = "a"\nHe said \u201chello\u201d\n'
    const abs = await putAndRead(f, 'q.txt', src)
    const r = await Edit(f.session, 'q.txt', 'x = "a"', 'x = "b" // it\'s')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('exact')
    expect(disk(abs).toString()).toBe('x = "b" // it\'s\nHe said \u201chello\u201d\n')
  })

  it('replace_all on the quotes rung replaces every curly occurrence', async () => {
    const f = cc()
    const src = '\u201ca\u201d then \u201ca\u201d and "c"\n'
    const abs = await putAndRead(f, 'q2.txt', src)
    const r = await Edit(f.session, 'q2.txt', '"a"', '"b"', { replace_all: true })
    ok(r)
    expect(dataOf(r)).toMatchObject({ matchedBy: 'quotes', replacements: 2 })
    expect(disk(abs).toString()).toBe('\u201cb\u201d then \u201cb\u201d and "c"\n')
  })
})

describe('de-sanitized tags (rung 4)', () => {
  it('matches <fnr> against <function_results> and writes <fnr> in new_string as <function_results>', async () => {
    const f = cc()
    const src = 'intro\n<function_results>ok</function_results>\nend\n'
    const abs = await putAndRead(f, 'log.txt', src)
    const r = await Edit(f.session, 'log.txt', '<fnr>ok', '<fnr>done')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('desanitized')
    expect(disk(abs).toString()).toBe('intro\n<function_results>done</function_results>\nend\n')
  })
})

describe('trailing whitespace', () => {
  it('rung 5 ignores trailing whitespace of the file’s lines', async () => {
    const f = cc()
    const src = 'foo   \nbar\nbaz\n'
    const abs = await putAndRead(f, 'tw.txt', src)
    const r = await Edit(f.session, 'tw.txt', 'foo\nbar', 'FOO\nBAR')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('trailing-whitespace')
    expect(disk(abs).toString()).toBe('FOO\nBAR\nbaz\n')
  })

  it('strips trailing whitespace from new_string in a .ts file, but not from the file’s other lines', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'x.ts', 'keep   \nb\n')
    ok(await Edit(f.session, 'x.ts', 'b', 'c  \nd\t'))
    expect(disk(abs).toString()).toBe('keep   \nc\nd\n')
  })

  for (const ext of ['md', 'mdx', 'MD']) {
    it(`keeps new_string's trailing whitespace in a .${ext} file (two spaces = a hard line break)`, async () => {
      const f = cc()
      const abs = await putAndRead(f, `doc.${ext}`, 'title\nb\n')
      ok(await Edit(f.session, `doc.${ext}`, 'b', 'line one  \nline two'))
      expect(disk(abs).toString()).toBe('title\nline one  \nline two\n')
    })
  }
})

describe('old_string "" (creation)', () => {
  it('creates a missing file with its folders, without a prior read', async () => {
    const f = cc()
    const r = await Edit(f.session, 'new/deep/dir/file.ts', '', 'export const x = 1\n')
    ok(r)
    const abs = path.join(f.dir, 'new/deep/dir/file.ts')
    expect(disk(abs).toString()).toBe('export const x = 1\n')
    expect(dataOf(r)).toMatchObject({ created: true, realPath: abs, encoding: 'utf-8', totalLines: 1 })
    expect(applyUnifiedDiff('', dataOf(r).diff)).toBe('export const x = 1\n')
    ok(await Edit(f.session, 'new/deep/dir/file.ts', 'x = 1', 'x = 2'))
    expect(disk(abs).toString()).toBe('export const x = 2\n')
  })

  it('two sessions creating the same file at once: one wins, the other is STALE', async () => {
    const f = cc()
    const other = f.toolkit.createSession()
    const [r1, r2] = await Promise.all([Edit(f.session, 'race/new.txt', '', 'one\n'), Edit(other, 'race/new.txt', '', 'two\n')])
    const winners = [r1, r2].filter((r) => !r.isError)
    const losers = [r1, r2].filter((r) => r.isError)
    expect(winners).toHaveLength(1)
    expect(losers[0].error?.code).toBe('STALE')
    expect(disk(path.join(f.dir, 'race/new.txt')).toString()).toBe(winners[0] === r1 ? 'one\n' : 'two\n')
  })

  it('fills an existing empty file', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'empty.txt', '')
    const r = await Edit(f.session, 'empty.txt', '', 'hello\n')
    ok(r)
    expect(dataOf(r).created).toBe(false)
    expect(disk(abs).toString()).toBe('hello\n')
  })

  it('refuses a non-empty file with FILE_EXISTS', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'full.txt', 'content\n')
    fails(await Edit(f.session, 'full.txt', '', 'other\n'), 'FILE_EXISTS')
    expect(disk(abs).toString()).toBe('content\n')
  })

  it('an edit of a missing file with a non-empty old_string is NOT_FOUND and creates nothing', async () => {
    const f = cc()
    const text = fails(await Edit(f.session, 'nope/missing.txt', 'a', 'b'), 'NOT_FOUND')
    expect(text).toContain('old_string ""')
    put(f.dir, 'src/config.ts', 'x\n')
    expect(fails(await Edit(f.session, 'src/confg.ts', 'x', 'y'), 'NOT_FOUND')).toContain('src/config.ts')
    expect(fs.existsSync(path.join(f.dir, 'nope'))).toBe(false)
  })
})

describe('final newline', () => {
  it('a file without a final newline still lacks it after an edit of its last line', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'nonl.txt', 'a\nb')
    ok(await Edit(f.session, 'nonl.txt', 'b', 'c'))
    expect(disk(abs).toString()).toBe('a\nc')
    ok(await Edit(f.session, 'nonl.txt', 'c', 'c\nd'))
    expect(disk(abs).toString()).toBe('a\nc\nd')
  })

  it('a file with a final newline keeps it even when new_string drops it', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'nl.txt', 'a\nb\n')
    ok(await Edit(f.session, 'nl.txt', 'b\n', 'c'))
    expect(disk(abs).toString()).toBe('a\nc\n')
  })
})

describe('links', () => {
  it('edits the target of a symlink inside the workspace and keeps the link', async () => {
    const f = cc()
    const real = put(f.dir, 'real.txt', 'one\ntwo\n')
    const link = path.join(f.dir, 'link.txt')
    fs.symlinkSync('real.txt', link)
    await readAll(f.session, 'link.txt')
    const r = await Edit(f.session, 'link.txt', 'two', 'TWO')
    ok(r)
    expect(dataOf(r).realPath).toBe(real)
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
    expect(fs.readlinkSync(link)).toBe('real.txt')
    expect(disk(real).toString()).toBe('one\nTWO\n')
  })

  it('refuses a symlink that leads out of the workspace and leaves its target alone', async () => {
    const f = cc()
    const outside = tempDir('fsgate-outside-')
    const secret = put(outside, 'secret.txt', 'secret\n')
    fs.symlinkSync(secret, path.join(f.dir, 'out.txt'))
    const r = await Edit(f.session, 'out.txt', 'secret', 'leaked')
    expect(r.isError).toBe(true)
    expect(r.error?.code).toBe('PATH_OUTSIDE_WORKSPACE')
    expect(disk(secret).toString()).toBe('secret\n')
  })

  it('creates through a dangling symlink inside the workspace, and refuses one (or a folder link) that leads out', async () => {
    const f = cc()
    const outside = tempDir('fsgate-outside-')
    fs.symlinkSync('sub/target.txt', path.join(f.dir, 'dangling.txt'))
    ok(await Edit(f.session, 'dangling.txt', '', 'made\n'))
    expect(disk(path.join(f.dir, 'sub/target.txt')).toString()).toBe('made\n')
    expect(fs.lstatSync(path.join(f.dir, 'dangling.txt')).isSymbolicLink()).toBe(true)
    fs.symlinkSync(path.join(outside, 'evil.txt'), path.join(f.dir, 'out.txt'))
    fails(await Edit(f.session, 'out.txt', '', 'evil\n'), 'PATH_OUTSIDE_WORKSPACE')
    fs.symlinkSync(outside, path.join(f.dir, 'outdir'))
    fails(await Edit(f.session, 'outdir/x/y.txt', '', 'evil\n'), 'PATH_OUTSIDE_WORKSPACE')
    fails(await Edit(f.session, '../escape.txt', '', 'evil\n'), 'PATH_OUTSIDE_WORKSPACE')
    expect(fs.readdirSync(outside)).toEqual([])
  })

  it('replaces a hard-linked name atomically: the other name keeps the old content', async () => {
    const f = cc()
    const a = put(f.dir, 'a.txt', 'shared\n')
    const b = path.join(f.dir, 'b.txt')
    fs.linkSync(a, b)
    await readAll(f.session, 'a.txt')
    ok(await Edit(f.session, 'a.txt', 'shared', 'mine'))
    expect(disk(a).toString()).toBe('mine\n')
    expect(disk(b).toString()).toBe('shared\n')
    expect(fs.statSync(a).ino).not.toBe(fs.statSync(b).ino)
  })

  it('keeps the file mode', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'run.sh', '#!/bin/sh\necho hi\n')
    fs.chmodSync(abs, 0o754)
    await readAll(f.session, 'run.sh')
    ok(await Edit(f.session, 'run.sh', 'echo hi', 'echo bye'))
    expect(fs.statSync(abs).mode & 0o777).toBe(0o754)
  })
})

describe('concurrency', () => {
  it('32 concurrent edits from one session to 32 files all succeed', async () => {
    const f = cc()
    const files = Array.from({ length: 32 }, (_, i) => `many/f${i}.txt`)
    for (const [i, rel] of files.entries()) put(f.dir, rel, `file ${i}\nvalue = old\n`)
    await Promise.all(files.map((rel) => readAll(f.session, rel)))
    const results = await Promise.all(files.map((rel, i) => Edit(f.session, rel, 'value = old', `value = new ${i}`)))
    for (const r of results) ok(r)
    for (const [i, rel] of files.entries()) expect(disk(path.join(f.dir, rel)).toString()).toBe(`file ${i}\nvalue = new ${i}\n`)
    expect(temps(f.dir)).toEqual([])
  })

  it('two sessions editing the same file at once: one wins, the other is STALE', async () => {
    const f = cc()
    const other = f.toolkit.createSession()
    const abs = put(f.dir, 'race.txt', 'left\nright\n')
    await readAll(f.session, 'race.txt')
    await readAll(other, 'race.txt')
    const [r1, r2] = await Promise.all([Edit(f.session, 'race.txt', 'left', 'LEFT'), Edit(other, 'race.txt', 'right', 'RIGHT')])
    const winners = [r1, r2].filter((r) => !r.isError)
    const losers = [r1, r2].filter((r) => r.isError)
    expect(winners).toHaveLength(1)
    expect(losers).toHaveLength(1)
    expect(losers[0].error?.code).toBe('STALE')
    expect(losers[0].error?.errorCode).toBe(3)
    expect(disk(abs).toString()).toBe(winners[0] === r1 ? 'LEFT\nright\n' : 'left\nRIGHT\n')
  })

  it('many edits of one file queued in one session all land, in order', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'queue.txt', Array.from({ length: 20 }, (_, i) => `k${i}=0`).join('\n') + '\n')
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => Edit(f.session, 'queue.txt', `k${i}=0`, `k${i}=1`)))
    for (const r of results) ok(r)
    expect(disk(abs).toString()).toBe(Array.from({ length: 20 }, (_, i) => `k${i}=1`).join('\n') + '\n')
  })
})

describe('size and cancellation', () => {
  it('edits one line in the middle of a 10 MiB file, byte-exact outside the span', async () => {
    const f = workspace({ preset: 'revka' })
    const lines = 163_840 // × 64 bytes = 10 MiB
    const line = (i: number) => `row ${String(i).padStart(6, '0')} `.padEnd(63, '.')
    const abs = path.join(f.dir, 'big.txt')
    putLines(abs, lines, line)
    const before = disk(abs)
    expect(before.length).toBe(10 * 1024 * 1024)
    const mid = 81_920
    const r = await f.session.call('file_edit', { path: 'big.txt', old_string: line(mid), new_string: 'CHANGED 81920' })
    ok(r)
    expect(dataOf(r)).toMatchObject({ firstLine: mid, totalLines: lines, replacements: 1 })
    const after = disk(abs)
    expect(after.length).toBe(before.length - 63 + 'CHANGED 81920'.length)
    sameOutside(before, after, (mid - 1) * 64, (lines - mid) * 64 + 1)
    expect(after.subarray((mid - 1) * 64, (mid - 1) * 64 + 13).toString()).toBe('CHANGED 81920')

    // A near miss in the big file is reported promptly, with its line, and not applied.
    const t0 = performance.now()
    const miss = await f.session.call('file_edit', { path: 'big.txt', old_string: line(1234).replace('row', 'rwo'), new_string: 'x' })
    fails(miss, 'STRING_NOT_FOUND')
    expect(performance.now() - t0).toBeLessThan(10_000)
    expect((miss.data as { candidates: Array<{ line: number }> }).candidates[0].line).toBe(1234)
    expect(disk(abs).equals(after)).toBe(true)
  })

  it('an already aborted AbortSignal is ABORTED and writes nothing', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'ab.txt', 'keep\n')
    const ac = new AbortController()
    ac.abort()
    fails(await Edit(f.session, 'ab.txt', 'keep', 'lose', {}, ac.signal), 'ABORTED')
    expect(disk(abs).toString()).toBe('keep\n')
    fails(await Edit(f.session, 'created/later.txt', '', 'x\n', {}, ac.signal), 'ABORTED')
    expect(fs.existsSync(path.join(f.dir, 'created'))).toBe(false)
    expect(temps(f.dir)).toEqual([])
    // The session is still usable, without a re-read.
    ok(await Edit(f.session, 'ab.txt', 'keep', 'kept'))
    expect(disk(abs).toString()).toBe('kept\n')
  })
})

describe('more ladder and shaping cases', () => {
  it('matches a CRLF old_string in an LF file on the line-endings rung, and writes LF', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'lf.txt', 'a\nb\nc\n')
    const r = await Edit(f.session, 'lf.txt', 'a\r\nb', 'A\r\nB')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('line-endings')
    expect(disk(abs).toString()).toBe('A\nB\nc\n')
  })

  it('drops a BOM at the start of old_string and keeps the file’s BOM', async () => {
    const f = cc()
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    const abs = await putAndRead(f, 'bom.txt', Buffer.concat([bom, Buffer.from('alpha\nbeta\n')]))
    const r = await Edit(f.session, 'bom.txt', '\uFEFFalpha', 'omega')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('line-endings')
    expect(disk(abs).equals(Buffer.concat([bom, Buffer.from('omega\nbeta\n')]))).toBe(true)
  })

  it('curls single quotes too: opening, closing and apostrophes', async () => {
    const f = cc()
    const abs = await putAndRead(f, 's.txt', 'code: \'x\'\nIt\u2019s \u2018quoted\u2019 here\n')
    const r = await Edit(f.session, 's.txt', "It's 'quoted' here", "It's 'cited' here (and 'ok')")
    ok(r)
    expect(dataOf(r).matchedBy).toBe('quotes')
    expect(disk(abs).toString()).toBe("code: 'x'\nIt\u2019s \u2018cited\u2019 here (and \u2018ok\u2019)\n")
  })

  it('a sanitized form present literally in the file matches exactly and is written literally', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'page.html', '<p><s>old price</s> new price</p>\n')
    const r = await Edit(f.session, 'page.html', '<s>old price</s>', '<s>was 10</s>')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('exact')
    expect(disk(abs).toString()).toBe('<p><s>was 10</s> new price</p>\n')
  })

  it('maps closing sanitized tags back too (</fnr>)', async () => {
    const f = cc()
    const abs = await putAndRead(f, 't.txt', 'a <function_results>x</function_results> b\n')
    const r = await Edit(f.session, 't.txt', '<fnr>x</fnr>', '<fnr>y</fnr>')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('desanitized')
    expect(disk(abs).toString()).toBe('a <function_results>y</function_results> b\n')
  })

  it('does not strip the last line of new_string when the replaced span ends mid-line', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'mid.ts', 'one two\n')
    ok(await Edit(f.session, 'mid.ts', 'one', 'uno '))
    expect(disk(abs).toString()).toBe('uno  two\n')
  })

  it('replace_all does not re-match inside its own replacements', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'r.txt', 'a b a\n')
    const r = await Edit(f.session, 'r.txt', 'a', 'aa', { replace_all: true })
    ok(r)
    expect(dataOf(r).replacements).toBe(2)
    expect(disk(abs).toString()).toBe('aa b aa\n')
  })

  it('fills an empty UTF-16LE file (only its BOM) in UTF-16LE', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'e16.txt', Buffer.from([0xff, 0xfe]))
    const r = await Edit(f.session, 'e16.txt', '', 'hi\n')
    ok(r)
    expect(dataOf(r).encoding).toBe('utf-16le')
    expect(disk(abs).equals(utf16('hi\n', true))).toBe(true)
  })

  it('deletes text with an empty new_string', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'del.txt', 'keep\ndrop me\nkeep too\n')
    const r = await Edit(f.session, 'del.txt', 'drop me\n', '')
    ok(r)
    expect(disk(abs).toString()).toBe('keep\nkeep too\n')
    expect(applyUnifiedDiff('keep\ndrop me\nkeep too\n', dataOf(r).diff)).toBe('keep\nkeep too\n')
  })
})

describe('special paths', () => {
  it('refuses a directory (IS_DIRECTORY), a FIFO (BLOCKED_DEVICE) and .git internals (PROTECTED_PATH)', async () => {
    const f = cc()
    fs.mkdirSync(path.join(f.dir, 'folder'))
    fails(await Edit(f.session, 'folder', 'a', 'b'), 'IS_DIRECTORY')
    execFileSync('mkfifo', [path.join(f.dir, 'pipe')])
    fails(await Edit(f.session, 'pipe', 'a', 'b'), 'BLOCKED_DEVICE')
    const cfg = put(f.dir, '.git/config', '[core]\n')
    fails(await Edit(f.session, '.git/config', '[core]', '[core]\n\thooksPath = /tmp'), 'PROTECTED_PATH')
    expect(disk(cfg).toString()).toBe('[core]\n')
  })
})

describe('diffs and snippets agree with the file', () => {
  it('final-newline changes are marked in the diff', async () => {
    const f = cc()
    const abs = await putAndRead(f, 'nonl.txt', 'a\nb')
    const r = await Edit(f.session, 'nonl.txt', 'b', 'c')
    ok(r)
    expect(dataOf(r).diff).toContain('\\ No newline at end of file')
    expect(applyUnifiedDiff('a\nb', dataOf(r).diff)).toBe('a\nc')
    expect(disk(abs).toString()).toBe('a\nc')
  })

  it('replace_all far apart makes separate hunks, close together one hunk; both apply', async () => {
    const f = cc()
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`)
    for (const at of [2, 6, 20, 39]) lines[at - 1] = 'TARGET'
    const src = lines.join('\n') + '\n'
    const abs = await putAndRead(f, 'h.txt', src)
    const r = await Edit(f.session, 'h.txt', 'TARGET', 'HIT', { replace_all: true })
    ok(r)
    const after = src.replaceAll('TARGET', 'HIT')
    expect(disk(abs).toString()).toBe(after)
    const d = dataOf(r)
    expect(d.replacements).toBe(4)
    expect(d.diff.match(/^@@ /gm)).toHaveLength(3)
    expect(applyUnifiedDiff(src, d.diff)).toBe(after)
  })

  it('random edits: every diff applies to the old file and gives the new one; every snippet line is the file’s line', async () => {
    const f = cc()
    const rand = rng(2024)
    const pick = (n: number) => Math.floor(rand() * n)
    const alphabet = ['', 'é', '한', '😀', 'ไ']
    let counter = 0
    const fresh = () => `${word(rand, 1 + pick(6))}${alphabet[pick(alphabet.length)]}#${++counter}`
    const mkLine = () => Array.from({ length: 1 + pick(4) }, fresh).join(' ')
    for (let round = 0; round < 8; round++) {
      const rel = `rand/r${round}.txt`
      const finalNewline = round % 2 === 0
      const src = Array.from({ length: 5 + pick(40) }, mkLine).join('\n') + (finalNewline ? '\n' : '')
      const abs = await putAndRead(f, rel, src)
      for (let step = 0; step < 12; step++) {
        const before = disk(abs).toString()
        // A unique old_string: from a token to a later token (tokens are unique by their #n).
        const tokens = [...before.matchAll(/\S+#\d+/g)]
        const i = pick(tokens.length)
        const j = Math.min(tokens.length - 1, i + pick(12))
        const from = tokens[i].index as number
        const to = (tokens[j].index as number) + tokens[j][0].length
        const withBreak = to < before.length && before[to] === '\n' && rand() < 0.3
        const old = before.slice(from, withBreak ? to + 1 : to)
        const parts = Array.from({ length: pick(4) }, mkLine)
        let neu = parts.join(rand() < 0.5 ? '\n' : ' ')
        if (rand() < 0.3) neu += '\n'
        if (neu === old) continue
        const r = await Edit(f.session, rel, old, neu)
        const text = ok(r)
        const after = disk(abs).toString()
        const d = dataOf(r)
        const ctx = `round ${round} step ${step}: ${JSON.stringify({ before, old, neu, after, diff: d.diff })}`
        expect(d.matchedBy, ctx).toBe('exact')
        expect(after.endsWith('\n'), ctx).toBe(finalNewline || after === '')
        if (d.diff !== '') expect(applyUnifiedDiff(before, d.diff), ctx).toBe(after)
        else expect(after, ctx).toBe(before)
        expect(d.firstLine, ctx).toBe(before.slice(0, from).split('\n').length)
        const fileLines = after.split('\n')
        const numbered = [...text.matchAll(/^ *(\d+)\t(.*)$/gm)]
        if (after !== '') expect(numbered.length, ctx).toBeGreaterThan(0)
        for (const m of numbered) {
          expect(m[2], `${ctx} snippet line ${m[1]}`).toBe(fileLines[Number(m[1]) - 1])
        }
        if (after === '') break
      }
    }
  })
})

describe('the same edits in every encoding and line ending', () => {
  type Variant = { name: string; eol: '\n' | '\r\n'; encode: (text: string) => Buffer }
  const bom8 = Buffer.from([0xef, 0xbb, 0xbf])
  const VARIANTS: Variant[] = [
    { name: 'utf-8 lf', eol: '\n', encode: (t) => Buffer.from(t) },
    { name: 'utf-8 crlf', eol: '\r\n', encode: (t) => Buffer.from(t) },
    { name: 'utf-8-bom crlf', eol: '\r\n', encode: (t) => Buffer.concat([bom8, Buffer.from(t)]) },
    { name: 'utf-16le lf', eol: '\n', encode: (t) => utf16(t, true) },
    { name: 'utf-16be crlf', eol: '\r\n', encode: (t) => utf16(t, false) },
  ]

  it('random edits given with LF give the LF result in the file’s own encoding and line endings', async () => {
    const f = cc()
    const rand = rng(77)
    const pick = (n: number) => Math.floor(rand() * n)
    const alphabet = ['', 'é', '한', '😀', 'ไ', '"q"']
    let counter = 0
    const fresh = () => `${word(rand, 1 + pick(5))}${alphabet[pick(alphabet.length)]}#${++counter}`
    const mkLine = () => Array.from({ length: 1 + pick(4) }, fresh).join(' ')
    for (let round = 0; round < 6; round++) {
      const finalNewline = round % 2 === 0
      let model = Array.from({ length: 5 + pick(30) }, mkLine).join('\n') + (finalNewline ? '\n' : '')
      const files = VARIANTS.map((v, k) => ({ v, rel: `eq/r${round}-${k}.txt` }))
      for (const { v, rel } of files) await putAndRead(f, rel, v.encode(model.replaceAll('\n', v.eol)))
      for (let step = 0; step < 10; step++) {
        const tokens = [...model.matchAll(/\S+#\d+/g)]
        if (tokens.length === 0) break
        const i = pick(tokens.length)
        const j = Math.min(tokens.length - 1, i + pick(10))
        const from = tokens[i].index as number
        let to = (tokens[j].index as number) + tokens[j][0].length
        if (model[to] === '\n' && rand() < 0.3) to++
        const old = model.slice(from, to)
        let neu = Array.from({ length: pick(4) }, mkLine).join(rand() < 0.5 ? '\n' : ' ')
        if (rand() < 0.3) neu += '\n'
        if (neu === old) continue
        let expected: string | undefined
        for (const { v, rel } of files) {
          const r = await Edit(f.session, rel, old, neu)
          const ctx = `${v.name} round ${round} step ${step}: ${JSON.stringify({ model, old, neu })}`
          ok(r)
          const got = disk(path.join(f.dir, rel))
          if (expected === undefined) {
            expected = got.toString()
            expect(v.eol).toBe('\n')
          }
          expect(got.equals(v.encode(expected.replaceAll('\n', v.eol))), `${ctx}\n got ${JSON.stringify(got.toString(v.name.startsWith('utf-16') ? 'latin1' : 'utf8'))}`).toBe(true)
          expect(dataOf(r).firstLine, ctx).toBe(model.slice(0, from).split('\n').length)
        }
        model = expected as string
        if (model === '') break
      }
    }
  })
})

// ---------------------------------------------------------------------------------------
// The key cases in every dialect

interface DialectCase {
  label: string
  options: Partial<ToolkitOptions>
  read: string
  edit: string
  key: 'path' | 'file_path'
  prefix: string
}

const DIALECTS: DialectCase[] = [
  { label: 'file_edit (guarded, gate off)', options: { preset: 'guarded', policy: { consentGate: false } }, read: 'file_read', edit: 'file_edit', key: 'path', prefix: '' },
  { label: 'file_edit (revka)', options: { preset: 'revka' }, read: 'file_read', edit: 'file_edit', key: 'path', prefix: '' },
  { label: 'Edit (claude-code)', options: { preset: 'claude-code' }, read: 'Read', edit: 'Edit', key: 'file_path', prefix: '' },
  { label: 'edit (consent, gate off)', options: { preset: 'consent', policy: { consentGate: false } }, read: 'file_read', edit: 'edit', key: 'path', prefix: '[error] ' },
]

describe.each(DIALECTS)('$label', (d) => {
  const call = (f: Fixture, rel: string, old_string: string, new_string: string, extra: Record<string, unknown> = {}) =>
    f.session.call(d.edit, { [d.key]: rel, old_string, new_string, ...extra })
  const setup = async (rel: string, data: string | Uint8Array) => {
    const f = workspace(d.options)
    const abs = put(f.dir, rel, data)
    ok(await f.session.call(d.read, { [d.read === 'Read' ? 'file_path' : 'path']: rel }))
    return { f, abs }
  }

  it('exact replacement with a numbered snippet and a unified diff', async () => {
    const { f, abs } = await setup('src/app.ts', APP)
    const r = await call(f, 'src/app.ts', 'const v3 = 3', 'const v3 = 33')
    const text = ok(r)
    const after = APP.replace('const v3 = 3\n', 'const v3 = 33\n')
    expect(disk(abs).toString()).toBe(after)
    expect(text).toContain('     3\tconst v3 = 33')
    expect(dataOf(r)).toMatchObject({ matchedBy: 'exact', replacements: 1, firstLine: 3 })
    expect(dataOf(r).diff).toContain('--- a/src/app.ts\n+++ b/src/app.ts\n')
    expect(applyUnifiedDiff(APP, dataOf(r).diff)).toBe(after)
  })

  it('AMBIGUOUS_MATCH, then replace_all', async () => {
    const { f, abs } = await setup('dup.txt', 'x\nx\nx\n')
    const r = await call(f, 'dup.txt', 'x', 'y')
    const text = fails(r, 'AMBIGUOUS_MATCH')
    expect(text.startsWith(d.prefix)).toBe(true)
    expect(r.error?.errorCode).toBe(9)
    expect(text).toContain('old_string matches 3 times; must match exactly once')
    expect(disk(abs).toString()).toBe('x\nx\nx\n')
    const r2 = await call(f, 'dup.txt', 'x', 'y', { replace_all: true })
    ok(r2)
    expect(dataOf(r2).replacements).toBe(3)
    expect(disk(abs).toString()).toBe('y\ny\ny\n')
  })

  it('STRING_NOT_FOUND with candidates, NO_CHANGE', async () => {
    const { f, abs } = await setup('nf.txt', 'alpha\nbravo\ncharlie\n')
    const r = await call(f, 'nf.txt', 'brovo', 'delta')
    fails(r, 'STRING_NOT_FOUND')
    expect(r.error?.errorCode).toBe(8)
    expect((r.data as { candidates: Array<{ line: number; text: string }> }).candidates[0]).toEqual({ line: 2, text: 'bravo' })
    const r2 = await call(f, 'nf.txt', 'bravo', 'bravo')
    fails(r2, 'NO_CHANGE')
    expect(r2.error?.errorCode).toBe(1)
    expect(disk(abs).toString()).toBe('alpha\nbravo\ncharlie\n')
  })

  it('CRLF, curly quotes and creation', async () => {
    const { f, abs } = await setup('w.txt', 'a\r\nHe said \u201chi\u201d\r\nc\r\n')
    const r = await call(f, 'w.txt', 'a\nHe', 'A\nShe')
    ok(r)
    expect(dataOf(r).matchedBy).toBe('line-endings')
    const r2 = await call(f, 'w.txt', 'said "hi"', 'said "yo"')
    ok(r2)
    expect(dataOf(r2).matchedBy).toBe('quotes')
    expect(disk(abs).toString()).toBe('A\r\nShe said \u201cyo\u201d\r\nc\r\n')
    const r3 = await call(f, 'made/new.txt', '', 'fresh\n')
    ok(r3)
    expect(dataOf(r3).created).toBe(true)
    expect(disk(path.join(f.dir, 'made/new.txt')).toString()).toBe('fresh\n')
  })
})

// ---------------------------------------------------------------------------------------

describe('result shape', () => {
  it('every result text is non-empty and JSON-safe', async () => {
    const f = cc()
    await putAndRead(f, 'shape.txt', 'a\n')
    for (const r of [await Edit(f.session, 'shape.txt', 'a', 'b'), await Edit(f.session, 'shape.txt', 'zzz', 'y')]) {
      expect(textOf(r).length).toBeGreaterThan(0)
      expect(() => JSON.stringify(r)).not.toThrow()
    }
  })
})
