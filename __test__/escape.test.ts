/**
 * Path-escape battery, SPEC §5.1 and README "Paths": a generated list of hostile paths
 * (`..` in every position, absolute and `~` forms, symlink chains and loops, /proc
 * aliases, Unicode look-alikes, normalization forms, very long paths, control bytes,
 * backslashes, percent-encoding) crossed with every tool that takes a path, in the
 * guarded preset (outside: deny), through `session.call`. Expected for every case: no
 * result carries an outside marker, no outside file changes or appears, and a refusal is
 * a clear error from a small set of codes. Also: hard links, a symlinked parent of a new
 * file, and a folder swapped for a symlink to an outside folder while the session works.
 * paths.test.ts and outside.test.ts cover the single-case semantics; this is breadth.
 */
import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Worker } from 'node:worker_threads'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { Session, ToolkitOptions, ToolResult } from '../ts/index.js'
import { createToolkit } from '../ts/index.js'
import { ok, put, removeTempDirs, tempDir, textOf, until, workspace, type Fixture } from './helpers.js'

const MARKER = `ESCAPE-MARKER-${crypto.randomBytes(8).toString('hex')}`
/** Codes a refusal may carry (anything else is not a clear path refusal). */
/** The tools that walk a folder. */
const WALKERS = ['glob_search', 'Glob', 'content_search', 'semantic_code_search']
const REFUSALS = ['PATH_OUTSIDE_WORKSPACE', 'PROTECTED_PATH', 'INVALID_INPUT', 'NOT_FOUND', 'IS_DIRECTORY', 'PERMISSION_DENIED', 'BLOCKED_DEVICE']

/**
 * Layout:
 *   root/ws/            the workspace (a git repository), src/a.txt inside
 *   root/out/           outside: secret.txt, dir/secret.txt, café.txt, racedir/f.txt (all with MARKER)
 *   /tmp/fsgate-escape-out-XXXX/   a second outside folder with marker.txt
 */
let root: string
let wsDir: string
let out: string
let tmpOut: string
let fx: Fixture
let before: Map<string, string>

/** Every entry under the outside folders: path → kind and content hash (symlinks by target). */
function snapshot(): Map<string, string> {
  const snap = new Map<string, string>()
  for (const top of [out, tmpOut]) {
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name)
        if (e.isSymbolicLink()) snap.set(p, `link:${fs.readlinkSync(p)}`)
        else if (e.isDirectory()) {
          snap.set(p, 'dir')
          walk(p)
        } else snap.set(p, `file:${crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`)
      }
    }
    walk(top)
  }
  return snap
}

function expectOutsideUnchanged(): void {
  expect(Object.fromEntries(snapshot())).toEqual(Object.fromEntries(before))
}

/** Calls, and when the consent gate asks, repeats the call with the phrase it issued. */
async function granting(s: Session, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const r = await s.call(name, input)
  if (r.error?.code !== 'PERMISSION_REQUIRED') return r
  return s.call(name, { ...input, grant_phrase: r.data?.grantPhrase })
}

// ---------------------------------------------------------------------------------------
// The cases, as data

interface Case {
  name: string
  path: string
  /** Run once before the calls (wsDir, out, tmpOut). */
  setup?: () => void
}

const link = (target: string | (() => string), at: string) => () => {
  const p = path.join(wsDir, at)
  fs.mkdirSync(path.dirname(p), { recursive: true })
  if (!isLink(p) && !fs.existsSync(p)) fs.symlinkSync(typeof target === 'string' ? target : target(), p)
}
const isLink = (p: string) => {
  try {
    return fs.lstatSync(p).isSymbolicLink()
  } catch {
    return false
  }
}

function cases(): Case[] {
  const c: Case[] = []
  const add = (name: string, p: string | (() => string), setup?: () => void) =>
    c.push({ name, get path() { return typeof p === 'string' ? p : p() }, setup })

  // `..` in every position
  add('../x', '../out/secret.txt')
  add('../ (missing)', '../out/missing.txt')
  add('..', '..')
  add('../..', '../..')
  add('a/../../x', 'src/../../out/secret.txt')
  add('a/./../..//x', 'src/./../..//out/secret.txt')
  add('a/b/../../../x', 'src/deep/../../../out/secret.txt')
  add('trailing ..', 'src/../..')
  add('trailing ../', 'src/../../')
  add('./../x', './../out/secret.txt')
  add('.//..//x', './/..//out//secret.txt')
  add('../ws/../out/x', '../ws/../out/secret.txt')
  add('../ws (inside again) then out', '../ws/src/../../out/dir/secret.txt')
  add('dots in the middle: src/..././..', 'src/../../out/./dir/../secret.txt')
  add('many ..', '../'.repeat(40) + 'etc/passwd')
  // absolute paths outside
  add('/etc/passwd', '/etc/passwd')
  add('/etc/shadow', '/etc/shadow')
  add('/root', '/root')
  add('/root/.bashrc', '/root/.bashrc')
  add('/', '/')
  add('absolute out/secret', () => path.join(out, 'secret.txt'))
  add('absolute /tmp outside dir', () => tmpOut)
  add('absolute /tmp outside marker', () => path.join(tmpOut, 'marker.txt'))
  add('absolute /tmp outside new file', () => path.join(tmpOut, 'new.txt'))
  add('absolute ws/../out', () => `${wsDir}/../out/secret.txt`)
  add('absolute with //', () => `/${out}//secret.txt`)
  add('sibling ws-evil', () => `${wsDir}-evil/secret.txt`, () => put(root, 'ws-evil/secret.txt', `${MARKER}\n`))
  // ~ forms
  add('~', '~')
  add('~/', '~/')
  add('~/.ssh/x', '~/.ssh/x')
  add('~/.bashrc', '~/.bashrc')
  add('~root/x', '~root/x')
  add('~/../etc/passwd', '~/../etc/passwd')
  add('~ + tmp outside', () => `~/../${path.relative('/', tmpOut)}/marker.txt`)
  // symlinks
  add('link → outside file', 'l-file', link(path.join('..', 'out', 'secret.txt'), 'l-file'))
  add('link → link → outside', 'l-chain1', () => {
    link(() => path.join(out, 'secret.txt'), 'l-chain2')()
    link('l-chain2', 'l-chain1')()
  })
  add('link → outside dir, file in it', 'l-dir/secret.txt', link(() => out, 'l-dir'))
  add('link → outside dir, itself', 'l-dir', link(() => out, 'l-dir'))
  add('link → outside dir, new file in it', 'l-dir/new-by-tool.txt', link(() => out, 'l-dir'))
  add('link → outside dir, new nested file', 'l-dir/newdir/new.txt', link(() => out, 'l-dir'))
  add('link → /tmp outside dir, new file', 'l-tmp/new.txt', () => link(tmpOut, 'l-tmp')())
  add('link → / then etc/passwd', 'l-root/etc/passwd', link('/', 'l-root'))
  add('link → .. ', 'l-up/out/secret.txt', link('..', 'l-up'))
  add('loop a → b → a', 'l-loop-a', () => {
    link('l-loop-b', 'l-loop-a')()
    link('l-loop-a', 'l-loop-b')()
  })
  add('loop, file below', 'l-loop-a/x.txt', () => {
    link('l-loop-b', 'l-loop-a')()
    link('l-loop-a', 'l-loop-b')()
  })
  add('self loop', 'l-self', link('l-self', 'l-self'))
  add('dangling link → outside missing', 'l-dangle', link(() => path.join(out, 'nope.txt'), 'l-dangle'))
  add('link inside dir → ../../out', 'src/l-deep', link('../../out/secret.txt', 'src/l-deep'))
  add('link inside, then ..', 'l-src/../../out/secret.txt', link('src', 'l-src'))
  // /proc aliases
  add('/proc/self/root/<outside>', () => `/proc/self/root${path.join(out, 'secret.txt')}`)
  add('/proc/self/root/<workspace> (an alias)', () => `/proc/self/root${path.join(wsDir, 'src/a.txt')}`)
  add('/proc/self/cwd/..', '/proc/self/cwd/..')
  add('/proc/self/cwd/../..', '/proc/self/cwd/../../etc/passwd')
  add('/proc/self/fd/N (outside fd)', () => `/proc/self/fd/${outsideFd}`)
  add('/proc/self/environ', '/proc/self/environ')
  add('link → /proc/self/root/<outside>', 'l-proc', () => link(`/proc/self/root${path.join(out, 'secret.txt')}`, 'l-proc')())
  // Unicode look-alikes and normalization
  add('U+2024 one-dot leaders', '\u2024\u2024/out/secret.txt')
  add('fullwidth ．．／', '\uff0e\uff0e\uff0fout\uff0fsecret.txt')
  add('U+2025 two-dot leader', '\u2025/out/secret.txt')
  add('fraction slash', '..\u2215out\u2215secret.txt')
  add('NFD é (file exists NFC outside)', '../out/cafe\u0301.txt')
  add('NFC é outside', '../out/caf\u00e9.txt')
  add('NFD é inside (only NFC exists)', 'src/cafe\u0301.txt', () => put(wsDir, 'src/caf\u00e9.txt', 'nfc inside\n'))
  add('zero-width joiner in ..', '.\u200d./out/secret.txt')
  // long paths
  add('4096+ chars', 'a/'.repeat(2100) + 'x')
  add('4096+ chars of ../', '../'.repeat(1400) + 'etc/passwd')
  add('300 nested a/', 'a/'.repeat(300) + 'x')
  add('300 nested a/ then 301 ..', 'a/'.repeat(300) + '../'.repeat(301) + 'out/secret.txt')
  add('one 300-byte name', 'n'.repeat(300))
  // NUL and control bytes
  add('NUL after ..', '..\0/out/secret.txt')
  add('NUL truncation', 'src/a.txt\0../../out/secret.txt')
  add('newline in ..', '..\n/out/secret.txt')
  add('newline then ..', 'x\n/../../out/secret.txt')
  add('CR', '../out/secret.txt\r')
  add('ESC sequence', '\x1b[2J../out/secret.txt')
  add('tab', '\t../out/secret.txt')
  add('DEL', '..\x7f/out/secret.txt')
  // backslashes and encodings
  add('..\\x', '..\\out\\secret.txt')
  add('a\\..\\..\\x', 'src\\..\\..\\out\\secret.txt')
  add('mixed ..\\../', '..\\../out/secret.txt')
  add('%2e%2e/x (literal)', '%2e%2e/out/secret.txt')
  add('%2e%2e%2f (literal)', '%2e%2e%2fout%2fsecret.txt')
  add('double-encoded', '%252e%252e/out/secret.txt')
  add('file:// URL', () => `file://${path.join(out, 'secret.txt')}`)
  add('trailing dot segment ../.', '../.')
  add('... (literal name)', '.../out/secret.txt')
  return c
}

let outsideFd = -1
/** Built at collection for the count, and again in beforeAll once the folders exist. */
let CASES = cases()

// ---------------------------------------------------------------------------------------
// The tools, each turning a path into a call

type Call = [string, Record<string, unknown>]
const TOOLS: Record<string, (p: string) => Call> = {
  file_read: (p) => ['file_read', { path: p }],
  file_write: (p) => ['file_write', { path: p, content: 'written by the escape battery\n' }],
  file_edit: (p) => ['file_edit', { path: p, old_string: MARKER, new_string: 'EDITED' }],
  'file_edit (create)': (p) => ['file_edit', { path: p, old_string: '', new_string: 'created by the escape battery\n' }],
  glob_search: (p) => ['glob_search', { pattern: '**/*', path: p }],
  content_search: (p) => ['content_search', { pattern: 'ESCAPE', path: p }],
  semantic_code_search: (p) => ['semantic_code_search', { query: 'escape marker secret', path: p, backend: 'literal' }],
  pdf_read: (p) => ['pdf_read', { path: p }],
  'git_operations (path)': (p) => ['git_operations', { operation: 'status', path: p }],
  'git_operations (paths)': (p) => ['git_operations', { operation: 'add', paths: [p] }],
  'git_operations (files)': (p) => ['git_operations', { operation: 'diff', files: [p] }],
  // The other dialects' names and fields reach the same engine through their own mapping.
  'Read (claude)': (p) => ['Read', { file_path: p }],
  'Read pages (claude)': (p) => ['Read', { file_path: p, pages: '1' }],
  'Write (claude)': (p) => ['Write', { file_path: p, content: 'written by the escape battery\n' }],
  'Edit (claude)': (p) => ['Edit', { file_path: p, old_string: MARKER, new_string: 'EDITED', replace_all: true }],
  'Glob (claude)': (p) => ['Glob', { pattern: '**/*', path: p }],
  'Grep (claude)': (p) => ['Grep', { pattern: 'ESCAPE', path: p, output_mode: 'content' }],
  'write_file (consent)': (p) => ['write_file', { path: p, content: 'written by the escape battery\n', overwrite: true }],
  'edit (consent)': (p) => ['edit', { path: p, old_string: MARKER, new_string: 'EDITED' }],
}

/**
 * The presets the battery runs in: guarded (read-before-write and the consent gate in
 * front), revka (no read-before-write: a write goes straight to the confinement check),
 * and claude-code (full autonomy, no gate).
 */
const PRESETS = {
  guarded: { preset: 'guarded' },
  revka: { preset: 'revka', policy: { actionsPerHour: null } },
  'claude-code': { preset: 'claude-code' },
} as const satisfies Record<string, Partial<ToolkitOptions>>

beforeAll(() => {
  root = tempDir('fsgate-escape-')
  wsDir = path.join(root, 'ws')
  out = path.join(root, 'out')
  tmpOut = tempDir('fsgate-escape-out-')
  put(wsDir, 'src/a.txt', 'inside\n')
  put(out, 'secret.txt', `${MARKER} secret\n`)
  put(out, 'dir/secret.txt', `${MARKER} dir secret\n`)
  put(out, 'caf\u00e9.txt', `${MARKER} nfc\n`)
  put(out, 'racedir/f.txt', `${MARKER} race\n`)
  put(out, `racedir/${MARKER}.txt`, 'a name that must not be listed\n')
  put(out, 'hard-target.txt', 'hard link content\n')
  put(tmpOut, 'marker.txt', `${MARKER} tmp\n`)
  execFileSync('git', ['init', '-q', wsDir])
  outsideFd = fs.openSync(path.join(out, 'secret.txt'), 'r')
  CASES = cases()
  for (const c of CASES) c.setup?.()
  fx = workspace({ preset: 'guarded' }, wsDir)
  before = snapshot()
})

afterAll(() => {
  if (outsideFd >= 0) fs.closeSync(outsideFd)
  removeTempDirs()
})

// ---------------------------------------------------------------------------------------

/**
 * Codes that only a path resolving inside the workspace may give (a literal file named
 * `~root/x` or `%2e%2e` inside, a workspace alias through /proc/self/root): the
 * read-before-write contract, a non-PDF, a file an earlier write made under that literal
 * name (edit with old_string "" then finds it there).
 */
const INSIDE_CODES = ['NOT_READ', 'INVALID_PDF', 'STRING_NOT_FOUND', 'FILE_EXISTS']

/** What is wrong with one result, or null: a refusal from REFUSALS, or a success that stays inside. */
function violation(r: ToolResult): string | null {
  const json = JSON.stringify(r)
  if (json.includes(MARKER)) return 'leaked the outside marker'
  if (/root:x:0:0:/.test(json)) return 'leaked /etc/passwd'
  if (r.isError) {
    const code = r.error?.code ?? ''
    if (!textOf(r).trim()) return `${code} with an empty message`
    if (REFUSALS.includes(code)) return null
    if (INSIDE_CODES.includes(code) && outsideIntact()) return null
    return `unexpected ${code}: ${textOf(r).slice(0, 200)}`
  }
  const real = r.data?.realPath
  if (typeof real === 'string' && !(real.startsWith(wsDir + path.sep) || real === wsDir)) return `success outside: ${real}`
  return null
}

/** Whether the outside folders are exactly as in `before`. */
function outsideIntact(): boolean {
  const now = snapshot()
  return now.size === before.size && [...now].every(([k, v]) => before.get(k) === v)
}

describe.each(Object.entries(PRESETS))(`escape battery: ${CASES.length} paths × ${Object.keys(TOOLS).length} tool forms, preset %s`, (preset, options) => {
  it('has at least 200 cases', () => expect(CASES.length * Object.keys(TOOLS).length).toBeGreaterThanOrEqual(200))
  for (const [tool, make] of Object.entries(TOOLS)) {
    it(tool, async () => {
      const s = createToolkit({ workspace: wsDir, ...options }).createSession()
      const bad: string[] = []
      const tally = new Map<string, number>()
      for (const c of CASES) {
        const [name, input] = make(c.path)
        const r = await granting(s, name, input)
        const key = r.error?.code ?? 'ok'
        tally.set(key, (tally.get(key) ?? 0) + 1)
        const v = violation(r)
        if (v) bad.push(`${c.name} (${JSON.stringify(c.path).slice(0, 60)}): ${v}`)
      }
      expect(bad).toEqual([])
      expectOutsideUnchanged()
      console.log(`${preset} ${tool}:`, JSON.stringify(Object.fromEntries(tally)))
    })
  }

  it('the outside marker files are still there, byte for byte', () => {
    expect(fs.readFileSync(path.join(tmpOut, 'marker.txt'), 'utf8')).toBe(`${MARKER} tmp\n`)
    expect(fs.readFileSync(path.join(out, 'secret.txt'), 'utf8')).toBe(`${MARKER} secret\n`)
    expectOutsideUnchanged()
  })
})

describe('a symlinked parent of a new file', () => {
  it('write and edit(create) of linkdir/new.txt (linkdir → outside) create nothing outside', async () => {
    fs.symlinkSync(tmpOut, path.join(wsDir, 'linkdir'))
    const s = fx.toolkit.createSession()
    for (const [name, input] of [
      TOOLS.file_write('linkdir/new.txt'),
      TOOLS['file_edit (create)']('linkdir/new.txt'),
      TOOLS.file_write('linkdir/sub/new.txt'),
      TOOLS.file_write(`${wsDir}/linkdir/new.txt`),
    ]) {
      const r = await granting(s, name, input)
      expect(r.error?.code, textOf(r)).toBe('PATH_OUTSIDE_WORKSPACE')
    }
    expect(fs.existsSync(path.join(tmpOut, 'new.txt'))).toBe(false)
    expect(fs.existsSync(path.join(tmpOut, 'sub'))).toBe(false)
    expectOutsideUnchanged()
  })
})

describe('hard links', () => {
  // A hard link is one inode with two names; the name inside the workspace resolves to a
  // real path inside, so reading it is allowed (SPEC §5.1 checks the resolved real path,
  // and a hard link has no "target" to resolve). Writes are atomic (temp + rename), so
  // they replace the name inside and leave the outside inode untouched.
  it('reading a hard link inside to a file outside succeeds (same inode, inside name)', async () => {
    fs.linkSync(path.join(out, 'hard-target.txt'), path.join(wsDir, 'hard.txt'))
    before = snapshot()
    const s = fx.toolkit.createSession()
    const r = await s.call('file_read', { path: 'hard.txt' })
    expect(ok(r)).toBe('     1\thard link content')
    expect(r.data?.realPath).toBe(path.join(wsDir, 'hard.txt'))
  })

  it('writing and editing through it never change the outside file', async () => {
    const target = path.join(out, 'hard-target.txt')
    const s = fx.toolkit.createSession()
    ok(await s.call('file_read', { path: 'hard.txt' }))
    const w = await granting(s, 'file_write', { path: 'hard.txt', content: 'replaced inside\n' })
    if (!w.isError) expect(fs.readFileSync(path.join(wsDir, 'hard.txt'), 'utf8')).toBe('replaced inside\n')
    else expect(REFUSALS).toContain(w.error?.code)
    expect(fs.readFileSync(target, 'utf8')).toBe('hard link content\n')

    // A fresh hard link, edited.
    fs.linkSync(target, path.join(wsDir, 'hard2.txt'))
    ok(await s.call('file_read', { path: 'hard2.txt' }))
    const e = await granting(s, 'file_edit', { path: 'hard2.txt', old_string: 'hard link', new_string: 'edited' })
    if (!e.isError) expect(fs.readFileSync(path.join(wsDir, 'hard2.txt'), 'utf8')).toBe('edited content\n')
    else expect(REFUSALS).toContain(e.error?.code)
    expect(fs.readFileSync(target, 'utf8')).toBe('hard link content\n')
    expectOutsideUnchanged()
  })
})

describe('a folder swapped for a symlink to an outside folder while the session works', () => {
  it('for ~2 s: no write lands outside, no read returns outside content', async () => {
    const race = path.join(wsDir, 'race')
    put(wsDir, 'race/f.txt', 'race inside\n')
    // The swapper runs on its own thread, so it flips the folder while the native
    // calls are in flight (the JS thread is mostly idle awaiting them).
    const worker = new Worker(
      `const fs = require('node:fs')
const { workerData: { race, target, ms }, parentPort } = require('node:worker_threads')
const real = race + '.real'
const lnk = race + '.lnk'
fs.symlinkSync(target, lnk)
let swaps = 0
let strays = 0
// A tool may create race/ again in the gap (mkdir -p for a new file): move it aside.
const place = (from) => {
  try {
    fs.renameSync(from, race)
  } catch {
    fs.renameSync(race, race + '.stray-' + strays++)
    fs.renameSync(from, race)
  }
}
parentPort.postMessage('ready')
const stopAt = Date.now() + ms
while (Date.now() < stopAt) {
  fs.renameSync(race, real)
  place(lnk)
  fs.renameSync(race, lnk)
  place(real)
  swaps++
}
fs.unlinkSync(lnk)
parentPort.postMessage(swaps)`,
      { eval: true, workerData: { race, target: path.join(out, 'racedir'), ms: 2000 } },
    )
    const messages: unknown[] = []
    let done!: (n: number) => void
    const swapsP = new Promise<number>((resolve, reject) => {
      done = resolve
      worker.on('error', reject)
    })
    worker.on('message', (m) => (m === 'ready' ? messages.push(m) : done(m as number)))
    await until(() => messages.length > 0, 10_000)
    const s = fx.toolkit.createSession({ dedup: false })
    const codes = new Map<string, number>()
    let calls = 0
    let i = 0
    let finished = false
    const leaks: string[] = []
    const odd: string[] = []
    void swapsP.finally(() => (finished = true)).catch(() => {})
    try {
      while (!finished) {
        i++
        const batch: Call[] = [
          ['file_read', { path: 'race/f.txt' }],
          ['file_write', { path: `race/new-${i}.txt`, content: 'race write\n' }],
          // mkdir -p under the swap: every folder is made inside the one held before it.
          ['file_write', { path: `race/sub-${i}/deeper/new.txt`, content: 'race nested write\n' }],
          ['file_edit', { path: `race/edit-${i}.txt`, old_string: '', new_string: 'race edit\n' }],
          ['git_operations', { operation: 'add', paths: [`race/new-${i}.txt`] }],
          // The walks read folders by path: a name listed from the outside folder while
          // race/ was the link must not be shown, nor a file opened through it.
          ['glob_search', { pattern: '**/*', path: 'race' }],
          ['Glob', { pattern: '**/*.txt', path: 'race' }],
          ['content_search', { pattern: 'race|MARKER', path: 'race' }],
          ['content_search', { pattern: 'race', path: 'race', output_mode: 'content' }],
          ['semantic_code_search', { query: 'escape marker race secret', path: 'race', backend: 'literal' }],
        ]
        // Now and then the whole workspace (the battery above left many files in it).
        if (i % 5 === 0) {
          batch.push(
            ['glob_search', { pattern: '**/*' }],
            ['content_search', { pattern: 'MARKER|secret|race', output_mode: 'content' }],
            ['semantic_code_search', { query: 'escape marker race secret', backend: 'literal' }],
          )
        }
        const results = await Promise.all(batch.map(([n, input]) => granting(s, n, input)))
        for (const [k, r] of results.entries()) {
          calls++
          if (JSON.stringify(r).includes(MARKER)) leaks.push(`${batch[k][0]}: ${textOf(r).slice(0, 160)}`)
          const key = r.error?.code ?? 'ok'
          codes.set(key, (codes.get(key) ?? 0) + 1)
          // git looks at the path again itself, and fails in its own words (IO_ERROR) when
          // the swap lands after fsgate's check: "beyond a symbolic link", "unable to stat".
          const gitRefused = batch[k][0] === 'git_operations' && key === 'IO_ERROR' && /^git add failed: /.test(textOf(r))
          // ripgrep's walker panics when the folder it walks is a link at one look and gone at
          // the next; the core catches it and shows nothing of that walk (walk.rs `unwound`).
          const walkLost = WALKERS.includes(batch[k][0]) && key === 'IO_ERROR' && textOf(r).includes('the folder was replaced while it was being searched; search again')
          if (!['ok', ...REFUSALS].includes(key) && !gitRefused && !walkLost) odd.push(`${batch[k][0]}: ${key}: ${textOf(r).slice(0, 300)}`)
        }
      }
    } finally {
      await swapsP.catch(() => 0)
      await worker.terminate()
    }
    const swaps = await swapsP
    expect(leaks).toEqual([])
    expect(swaps).toBeGreaterThan(0)
    expect(calls).toBeGreaterThan(0)
    expect(odd).toEqual([])
    // Nothing appeared outside: no file, no folder, no temp file of the atomic writer (it is
    // made, renamed and removed inside the folder held open), and f.txt keeps its bytes.
    expect(fs.readdirSync(path.join(out, 'racedir')).sort()).toEqual([`${MARKER}.txt`, 'f.txt'].sort())
    expectOutsideUnchanged()
    // Every write that succeeded landed inside, whole.
    const inside = fs.readdirSync(wsDir).filter((n) => n === 'race' || n.startsWith('race.'))
    expect(inside.filter((n) => !/^race(\.real|\.stray-\d+)?$/.test(n))).toEqual([])
    // Keep the numbers visible when the test is run alone.
    console.log(`race: ${swaps} swaps, ${calls} calls`, Object.fromEntries(codes))
  })
})

// The home folder must not have gained a file from the `~` cases.
describe('home', () => {
  it('nothing written under ~', () => {
    expect(fs.existsSync(path.join(os.homedir(), '.ssh', 'x'))).toBe(false)
  })
})
