/**
 * The live index of the workspace (issue 20): searches it answers see every change another
 * process made before they started (no sleep), with nothing shown through a link out of the
 * workspace; a killed or overflowed watcher, and edited ignore files, still give the
 * answers of a walk; its memory is capped on a 200,000-file tree and given back at close.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createToolkit, type Session, type Toolkit, type ToolkitOptions, type ToolResult } from '../ts/index.js'
import { ok, put, removeTempDirs, rng, tempDir, word } from './helpers.js'

afterAll(removeTempDirs)

/** The length of every line a file is written with. */
const LINE = 20
const POLICY = { actionsPerHour: null }
const LIMITS = { globResults: 10_000, searchResults: 10_000 }

function toolkit(dir: string, index: ToolkitOptions['index'], limits: ToolkitOptions['limits'] = LIMITS): Toolkit {
  return createToolkit({ workspace: dir, preset: 'claude-code', policy: POLICY, index, limits })
}

/** A toolkit whose index is built ('auto', waited for). */
function indexed(dir: string): Toolkit {
  const tk = toolkit(dir, 'auto')
  expect(tk.fs.waitIndex(30_000)).toBe(true)
  expect(tk.indexStatus()?.state).toBe('ready')
  return tk
}

// ---------------------------------------------------------------------------------------
// Changes made by another process

/** One change, as the child process makes it. */
type Op =
  | { op: 'write'; p: string; data: string }
  | { op: 'overwrite'; p: string; data: string }
  | { op: 'truncate'; p: string }
  | { op: 'rename'; p: string; to: string }
  | { op: 'rm'; p: string }
  | { op: 'mkdir'; p: string }
  | { op: 'link'; p: string; target: string }

const CHILD = `
const fs = require('fs'), path = require('path')
const { root, ops } = JSON.parse(fs.readFileSync(0, 'utf8'))
for (const o of ops) {
  const p = path.join(root, o.p)
  if (o.op === 'write') { fs.mkdirSync(path.dirname(p), { recursive: true }); fs.writeFileSync(p, o.data) }
  else if (o.op === 'overwrite') { const fd = fs.openSync(p, 'r+'); fs.writeSync(fd, o.data, 0); fs.closeSync(fd) }
  else if (o.op === 'truncate') fs.truncateSync(p, 0)
  else if (o.op === 'rename') { fs.mkdirSync(path.dirname(path.join(root, o.to)), { recursive: true }); fs.renameSync(p, path.join(root, o.to)) }
  else if (o.op === 'rm') fs.rmSync(p, { recursive: true })
  else if (o.op === 'mkdir') fs.mkdirSync(p, { recursive: true })
  else if (o.op === 'link') { fs.rmSync(p, { recursive: true, force: true }); fs.symlinkSync(o.target, p) }
}
`

/** Makes the changes in another process, and returns once it has exited. */
function inChild(root: string, ops: Op[]): void {
  const r = spawnSync(process.execPath, ['-e', CHILD], { input: JSON.stringify({ root, ops }), encoding: 'utf8' })
  expect(r.status, r.stderr).toBe(0)
}

/** What the workspace holds (files by path, their text; folders; links out of it), kept in step with the ops. */
class Model {
  files = new Map<string, string>()
  dirs = new Set<string>()
  links = new Set<string>()
  private serial = 0

  constructor(readonly rand: () => number) {}

  pick<T>(items: Iterable<T>): T | undefined {
    const all = [...items]
    return all.length ? all[Math.floor(this.rand() * all.length)] : undefined
  }

  /** A line of text no other file has, LINE bytes long. */
  line(): string {
    this.serial++
    return `needle${String(this.serial).padStart(6, '0')} ${word(this.rand, 6)}\n`
  }

  private addDirs(rel: string): void {
    for (let d = path.posix.dirname(rel); d !== '.'; d = path.posix.dirname(d)) this.dirs.add(d)
  }

  write(rel: string, data: string): Op {
    this.files.set(rel, data)
    this.addDirs(rel)
    return { op: 'write', p: rel, data }
  }

  overwrite(rel: string): Op {
    const data = this.line()
    expect(data.length).toBe(this.files.get(rel)?.length)
    this.files.set(rel, data)
    return { op: 'overwrite', p: rel, data }
  }

  truncate(rel: string): Op {
    this.files.set(rel, '')
    return { op: 'truncate', p: rel }
  }

  renameFile(from: string, to: string): Op {
    const data = this.files.get(from) as string
    this.files.delete(from)
    this.files.set(to, data)
    this.addDirs(to)
    return { op: 'rename', p: from, to }
  }

  private under(dir: string): string[] {
    return [...this.files.keys()].filter((f) => f.startsWith(`${dir}/`))
  }

  private dropDir(dir: string): void {
    for (const f of this.under(dir)) this.files.delete(f)
    for (const d of [...this.dirs]) if (d === dir || d.startsWith(`${dir}/`)) this.dirs.delete(d)
    for (const l of [...this.links]) if (l.startsWith(`${dir}/`)) this.links.delete(l)
  }

  renameDir(from: string, to: string): Op {
    for (const f of this.under(from)) {
      this.files.set(to + f.slice(from.length), this.files.get(f) as string)
      this.files.delete(f)
    }
    for (const d of [...this.dirs]) {
      if (d === from || d.startsWith(`${from}/`)) {
        this.dirs.delete(d)
        this.dirs.add(to + d.slice(from.length))
      }
    }
    for (const l of [...this.links]) {
      if (l.startsWith(`${from}/`)) {
        this.links.delete(l)
        this.links.add(to + l.slice(from.length))
      }
    }
    this.addDirs(`${to}/x`)
    return { op: 'rename', p: from, to }
  }

  rm(rel: string): Op {
    if (this.files.has(rel)) this.files.delete(rel)
    else this.dropDir(rel)
    return { op: 'rm', p: rel }
  }

  /** A folder made outside (`staged`, relative to the workspace) and moved in at `to`. */
  moveIn(staged: string, to: string): Op[] {
    const ops: Op[] = [{ op: 'write', p: `${staged}/in.txt`, data: this.line() }, { op: 'write', p: `${staged}/sub/deep.txt`, data: this.line() }]
    this.files.set(`${to}/in.txt`, (ops[0] as { data: string }).data)
    this.files.set(`${to}/sub/deep.txt`, (ops[1] as { data: string }).data)
    this.addDirs(`${to}/sub/deep.txt`)
    ops.push({ op: 'rename', p: staged, to })
    return ops
  }

  /** A folder moved out of the workspace (to `away`, relative to it). */
  moveOut(dir: string, away: string): Op {
    this.dropDir(dir)
    return { op: 'rename', p: dir, to: away }
  }

  /** A file replaced by a folder of the same name holding a file. */
  fileToDir(rel: string): Op[] {
    this.files.delete(rel)
    return [{ op: 'rm', p: rel }, this.write(`${rel}/inside.txt`, this.line())]
  }

  /** A folder replaced by a file of the same name. */
  dirToFile(dir: string): Op[] {
    this.dropDir(dir)
    return [{ op: 'rm', p: dir }, this.write(dir, this.line())]
  }

  link(dir: string, target: string): Op {
    this.dropDir(dir)
    this.links.add(dir)
    return { op: 'link', p: dir, target }
  }

  /** Files whose text matches /needle\d{6}/, sorted. */
  matching(): string[] {
    return [...this.files].filter(([, t]) => /needle\d{6}/.test(t)).map(([f]) => f).sort()
  }

  /** The lines that match, as `path:line:text`. */
  lines(): string[] {
    return [...this.files].flatMap(([f, t]) => t.split('\n').flatMap((l, i) => (l ? [`${f}:${i + 1}:${l}`] : [])))
  }
}

/** One round of changes: every kind at least once, in a random order, on random targets. */
function round(m: Model, n: number, outside: string, staging: string, withDirToFile = false): Op[] {
  const ops: Op[] = []
  const file = () => m.pick(m.files.keys())
  const dir = () => m.pick(m.dirs)
  const kinds: Array<() => void> = [
    () => ops.push(m.write(`${dir() ?? 'top'}/new${n}_${ops.length}.txt`, m.line())),
    () => ops.push(m.write(`new${n}_${ops.length}.txt`, m.line())),
    () => {
      // Same size: only the bytes differ (written in place, not truncated first).
      const f = m.pick([...m.files].filter(([, t]) => t.length === LINE).map(([f]) => f))
      if (f) ops.push(m.overwrite(f))
    },
    () => {
      const f = file()
      if (f) ops.push(m.write(f, `${m.line()}${m.line()}`)) // changed, and larger
    },
    () => {
      const f = file()
      if (f) ops.push(m.truncate(f))
    },
    () => {
      const f = file()
      if (f) ops.push(m.renameFile(f, `${dir() ?? 'top'}/moved${n}_${ops.length}.txt`))
    },
    () => {
      // Renamed over another file, which it replaces.
      const [a, b] = [file(), file()]
      if (a && b && a !== b) ops.push(m.renameFile(a, b))
    },
    () => {
      const f = file()
      if (f) ops.push(m.rm(f))
    },
    () => {
      const d = dir()
      if (d) ops.push(m.renameDir(d, `dir${n}_${ops.length}`))
    },
    () => {
      const d = dir()
      if (d) ops.push(m.rm(d))
    },
    () => {
      const top = `nest${n}_${ops.length}`
      ops.push(m.write(`${top}/a/b/one.txt`, m.line()), m.write(`${top}/a/b/c/two.txt`, m.line()), m.write(`${top}/three.txt`, m.line()))
    },
    () => {
      const d = dir()
      if (d) ops.push(m.link(d, outside))
    },
    () => ops.push(...m.moveIn(`${staging}/s${n}_${ops.length}`, `${dir() ?? 'top'}/in${n}_${ops.length}`)),
    () => {
      const d = dir()
      if (d) ops.push(m.moveOut(d, `${staging}/out${n}_${ops.length}`))
    },
    () => {
      const f = file()
      if (f) ops.push(...m.fileToDir(f))
    },
    () => {
      // A link to a file outside, with a new name: never searched.
      const at = `${dir() ?? 'top'}/secret-link${n}_${ops.length}.txt`
      ops.push({ op: 'mkdir', p: path.posix.dirname(at) }, { op: 'link', p: at, target: path.join(outside, 'secret-token.txt') })
    },
  ]
  // A folder replaced by a file of its name is left out here: the index loses the file
  // (see 'a folder replaced by a file of the same name' below).
  if (withDirToFile) {
    kinds.push(() => {
      const d = dir()
      if (d) ops.push(...m.dirToFile(d))
    })
  }
  const order = [...kinds, ...Array.from({ length: 4 }, () => m.pick(kinds) as () => void)]
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(m.rand() * (i + 1))
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  for (const kind of order) kind()
  // Keep the tree from running dry.
  while (m.files.size < 25) ops.push(m.write(`fill${n}/f${m.files.size}.txt`, m.line()))
  return ops
}

interface Answers {
  content: ToolResult
  files: ToolResult
  glob: ToolResult
  ranked: ToolResult
  listed: ToolResult
}

async function ask(s: Session): Promise<Answers> {
  return {
    content: await s.call('Grep', { pattern: 'needle\\d{6}', output_mode: 'content' }),
    files: await s.call('Grep', { pattern: 'needle\\d{6}', output_mode: 'files_with_matches' }),
    glob: await s.call('Glob', { pattern: '**/*' }),
    ranked: await s.call('semantic_code_search', { query: 'needle', backend: 'literal', top_k: 25 }, { dialect: 'revka' }),
    listed: await s.call('list_directory', { depth: 64, limit: 10_000 }, { dialect: 'revka' }),
  }
}

const filesOf = (r: ToolResult): string[] => (Array.isArray(r.data?.files) ? [...(r.data.files as string[])].sort() : [])

/**
 * Searches with the index and without, and checks both against the model: every file and
 * line it holds, nothing through a link; the index's answers are the walk's, and came from
 * the index when `fromIndex`.
 */
async function check(s: Session, off: Session, m: Model, fromIndex: boolean, label: string): Promise<void> {
  const got = await ask(s)
  const want = await ask(off)
  for (const key of ['content', 'files', 'glob', 'ranked', 'listed'] as const) {
    ok(got[key])
    expect(got[key].data?.fromIndex, `${label}: ${key} fromIndex`).toBe(fromIndex)
    expect(want[key].data?.fromIndex).toBe(false)
    expect(got[key].content, `${label}: ${key} equals index 'off'`).toEqual(want[key].content)
    for (const f of filesOf(got[key])) expect([...m.links].some((l) => f.startsWith(`${l}/`)), `${label}: ${f} is behind a link`).toBe(false)
    // A listing names links (never what they lead to); the rest never shows what lies behind one.
    if (key !== 'listed') expect(JSON.stringify(got[key].content)).not.toContain('secret')
  }
  expect(filesOf(got.glob), `${label}: Glob`).toEqual([...m.files.keys()].sort())
  // The ranker is offered every file of the model (from the snapshot), and finds some.
  expect(got.ranked.data?.filesConsidered, `${label}: semantic_code_search files`).toBe(m.files.size)
  expect(got.ranked.data?.total, `${label}: semantic_code_search hits`).toBe(m.matching().length)
  const listed = got.listed.data?.entries as { path: string; type: string }[]
  expect(listed.filter((e) => e.type === 'file').map((e) => e.path).sort(), `${label}: list_directory`).toEqual([...m.files.keys()].sort())
  expect(listed.some((e) => [...m.links].some((l) => e.path.startsWith(`${l}/`))), `${label}: list_directory behind a link`).toBe(false)
  expect(filesOf(got.files), `${label}: Grep files_with_matches`).toEqual(m.matching())
  const lines = m.lines()
  expect(got.content.data?.numMatches, `${label}: Grep content`).toBe(lines.length)
  expect(ok(got.content).split('\n').sort(), `${label}: Grep content`).toEqual(lines.sort())
}

/** The files under `dir` (not through links), sorted: to check the model itself. */
function onDisk(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith('.fsgate-cookie-'))
    .sort()
}

/** A workspace of 5 folders of 5 files, and a folder outside it holding a secret-named file. */
function seeded(seed: number): { dir: string; outside: string; staging: string; m: Model } {
  const dir = tempDir('fsgate-index-')
  const outside = tempDir('fsgate-index-outside-')
  // Where folders are made before they move in, and go when they move out (relative to dir).
  const staging = path.relative(dir, tempDir('fsgate-index-staging-'))
  put(outside, 'secret-token.txt', 'needle999999 secret\n')
  put(outside, 'deeper/secret-key.txt', 'needle999998 secret\n')
  const m = new Model(rng(seed))
  for (let d = 0; d < 5; d++) for (let f = 0; f < 5; f++) m.write(`d${d}/f${f}.txt`, m.line())
  for (const [rel, data] of m.files) put(dir, rel, data)
  return { dir, outside, staging, m }
}

describe('freshness', () => {
  it('sees every change another process made just before the search, 20 rounds, no sleep', async () => {
    const { dir, outside, staging, m } = seeded(2026)
    const tk = indexed(dir)
    const s = tk.createSession()
    const off = toolkit(dir, 'off').createSession()
    await check(s, off, m, true, 'built')
    for (let n = 0; n < 20; n++) {
      const ops = round(m, n, outside, staging)
      inChild(dir, ops)
      expect(onDisk(dir), `round ${n}: the model is the disk after ${JSON.stringify(ops)}`).toEqual([...m.files.keys()].sort())
      await check(s, off, m, true, `round ${n}`)
    }
    expect(m.links.size).toBeGreaterThan(0)
    expect(tk.indexStatus()).toMatchObject({ state: 'ready', files: m.files.size })
    expect(tk.indexStatus()?.events).toBeGreaterThan(0)
    await tk.close()
  }, 60_000)

  // Fails: the new file is indexed when its folder is listed, then dropped when the old
  // folder's events are applied (Tree::forget -> Tree::under takes the path itself as
  // "under" it, since Path::starts_with(a, a) holds). Every later search misses it.
  it('a folder replaced by a file of the same name', async () => {
    const dir = tempDir('fsgate-index-swap-')
    put(dir, 'a/f.txt', 'needle000001 old\n')
    const tk = indexed(dir)
    inChild(dir, [
      { op: 'rm', p: 'a' },
      { op: 'write', p: 'a', data: 'needle000002 new\n' },
    ])
    const walked = await toolkit(dir, 'off').createSession().call('Grep', { pattern: 'needle', output_mode: 'files_with_matches' })
    expect(walked.data?.files).toEqual(['a'])
    const r = await tk.createSession().call('Grep', { pattern: 'needle', output_mode: 'files_with_matches' })
    expect(r.data?.fromIndex).toBe(true)
    expect(r.data?.files).toEqual(['a'])
    await tk.close()
  })

  it('20 rounds with folders also replaced by files', async () => {
    const { dir, outside, staging, m } = seeded(2026)
    const tk = indexed(dir)
    const s = tk.createSession()
    const off = toolkit(dir, 'off').createSession()
    for (let n = 0; n < 20; n++) {
      inChild(dir, round(m, n, outside, staging, true))
      await check(s, off, m, true, `round ${n}`)
    }
    await tk.close()
  }, 60_000)

  it("'lazy' builds on the first search, which walks meanwhile", async () => {
    const { dir, m } = seeded(7)
    const tk = toolkit(dir, 'lazy')
    expect(tk.indexStatus()?.state).toBe('idle')
    const s = tk.createSession()
    const off = toolkit(dir, 'off').createSession()
    const first = await s.call('Grep', { pattern: 'needle\\d{6}', output_mode: 'files_with_matches' })
    expect(first.data?.fromIndex).toBe(false)
    expect(filesOf(first)).toEqual(m.matching())
    expect(tk.indexStatus()?.state).toMatch(/^(building|ready)$/)
    expect(tk.fs.waitIndex(30_000)).toBe(true)
    expect(tk.indexStatus()).toMatchObject({ state: 'ready', files: 25 })
    await check(s, off, m, true, 'lazy, built')
    await tk.close()
  })

  it('a selective search reads only the files that may match', async () => {
    const { dir, m } = seeded(11)
    const tk = indexed(dir)
    const target = m.matching()[7]
    const token = (m.files.get(target) as string).slice(0, 12)
    const r = await tk.createSession().call('Grep', { pattern: token, output_mode: 'files_with_matches' })
    expect(r.data).toMatchObject({ fromIndex: true, files: [target] })
    expect(r.data?.filesRead).toBeLessThan(3)
    const walked = await toolkit(dir, 'off').createSession().call('Grep', { pattern: token, output_mode: 'files_with_matches' })
    expect(walked.data).toMatchObject({ fromIndex: false, filesRead: 25, files: [target] })
    await tk.close()
  })
})

describe('a broken watcher', () => {
  it('killed: the next search walks and is right, the index rebuilds and answers again', async () => {
    const { dir, outside, staging, m } = seeded(99)
    const tk = indexed(dir)
    const s = tk.createSession()
    const off = toolkit(dir, 'off').createSession()
    tk.fs.breakIndexWatcher('kill')
    inChild(dir, round(m, 0, outside, staging))
    const r = await s.call('Grep', { pattern: 'needle\\d{6}', output_mode: 'files_with_matches' })
    expect(r.data?.fromIndex).toBe(false)
    expect(filesOf(r)).toEqual(m.matching())
    expect(tk.fs.waitIndex(30_000)).toBe(true)
    expect(tk.indexStatus()?.state).toBe('ready')
    await check(s, off, m, true, 'rebuilt')
    inChild(dir, round(m, 1, outside, staging))
    await check(s, off, m, true, 'rebuilt, then changed')
    await tk.close()
  })

  it('overflowed: the changes it lost are found by a rescan, and the index answers', async () => {
    const { dir, outside, staging, m } = seeded(5)
    const tk = indexed(dir)
    const s = tk.createSession()
    const off = toolkit(dir, 'off').createSession()
    for (let n = 0; n < 3; n++) {
      tk.fs.breakIndexWatcher('overflow')
      inChild(dir, round(m, n, outside, staging))
      await check(s, off, m, true, `overflow ${n}`)
    }
    expect(tk.indexStatus()?.state).toBe('ready')
    await tk.close()
  })
})

describe('ignore files edited', () => {
  it('a rule added, removed, a nested .gitignore, .git/info/exclude: the answers of a walk', async () => {
    const dir = tempDir('fsgate-index-ignore-')
    // A repository (ripgrep reads .gitignore only in one; a bare .git folder when git is
    // missing), so the cookies go into .git/.
    spawnSync('git', ['init', '-q', dir])
    fs.mkdirSync(path.join(dir, '.git/info'), { recursive: true })
    for (const rel of ['a.log', 'b.txt', 'sub/c.tmp', 'sub/d.txt', 'sub/deep/e.log', 'build/x.txt', 'keep.md']) put(dir, rel, `needle000001 ${rel}\n`)
    const tk = indexed(dir)
    const s = tk.createSession()
    const off = toolkit(dir, 'off').createSession()
    const step = async (label: string, want: string[]): Promise<void> => {
      const got = [await s.call('Glob', { pattern: '**/*' }), await s.call('Grep', { pattern: 'needle', output_mode: 'files_with_matches' })]
      const walked = [await off.call('Glob', { pattern: '**/*' }), await off.call('Grep', { pattern: 'needle', output_mode: 'files_with_matches' })]
      for (const [i, r] of got.entries()) {
        ok(r)
        expect(r.data?.fromIndex, `${label}: fromIndex`).toBe(true)
        expect(r.content, `${label}: equals index 'off'`).toEqual(walked[i].content)
      }
      expect(filesOf(got[1]), label).toEqual(want)
    }
    const all = ['a.log', 'b.txt', 'build/x.txt', 'keep.md', 'sub/c.tmp', 'sub/d.txt', 'sub/deep/e.log']
    await step('none', all)
    fs.writeFileSync(path.join(dir, '.gitignore'), '*.log\n')
    await step('*.log', ['b.txt', 'build/x.txt', 'keep.md', 'sub/c.tmp', 'sub/d.txt'])
    fs.appendFileSync(path.join(dir, '.gitignore'), 'build/\n')
    await step('*.log build/', ['b.txt', 'keep.md', 'sub/c.tmp', 'sub/d.txt'])
    // Saved as editors do: a new file renamed over the old one.
    fs.writeFileSync(path.join(dir, '.gitignore.tmp'), 'build/\n')
    fs.renameSync(path.join(dir, '.gitignore.tmp'), path.join(dir, '.gitignore'))
    await step('build/', ['a.log', 'b.txt', 'keep.md', 'sub/c.tmp', 'sub/d.txt', 'sub/deep/e.log'])
    fs.writeFileSync(path.join(dir, 'sub/.gitignore'), '*.tmp\ndeep/\n')
    await step('nested', ['a.log', 'b.txt', 'keep.md', 'sub/d.txt'])
    fs.writeFileSync(path.join(dir, 'sub/.gitignore'), '!*.log\n')
    await step('nested, edited', ['a.log', 'b.txt', 'keep.md', 'sub/c.tmp', 'sub/d.txt', 'sub/deep/e.log'])
    fs.rmSync(path.join(dir, 'sub/.gitignore'))
    await step('nested, removed', ['a.log', 'b.txt', 'keep.md', 'sub/c.tmp', 'sub/d.txt', 'sub/deep/e.log'])
    fs.writeFileSync(path.join(dir, '.git/info/exclude'), '*.txt\n')
    await step('exclude', ['a.log', 'keep.md', 'sub/c.tmp', 'sub/deep/e.log'])
    fs.writeFileSync(path.join(dir, '.git/info/exclude'), '')
    await step('exclude emptied', ['a.log', 'b.txt', 'keep.md', 'sub/c.tmp', 'sub/d.txt', 'sub/deep/e.log'])
    fs.rmSync(path.join(dir, '.gitignore'))
    await step('.gitignore removed', all)
    await tk.close()
  })
})

describe('memory: a generated tree of 200,000 files', () => {
  const FILES = 200_000
  const FOLDERS = 2_000
  // tmpfs when there is one: the same tree on a busy disk took 21 s to 112 s to write here.
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()
  const query = { pattern: 'word123457\\b', output_mode: 'files_with_matches' }
  const want = ['d1234/f57.txt']
  const rss = () => process.memoryUsage.rss()
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`
  let tree = ''

  beforeAll(() => {
    tree = fs.realpathSync(fs.mkdtempSync(path.join(base, 'fsgate-index-mem-')))
    const t0 = performance.now()
    // In another process, so that its garbage is not in this one's RSS.
    const script = `const fs = require('fs'), root = process.argv[1]
      for (let d = 0; d < ${FOLDERS}; d++) {
        fs.mkdirSync(root + '/d' + d)
        for (let f = 0; f < ${FILES / FOLDERS}; f++) fs.writeFileSync(root + '/d' + d + '/f' + f + '.txt', 'file ' + d + '/' + f + ' word' + (d * ${FILES / FOLDERS} + f) + '\\n')
      }`
    const gen = spawnSync(process.execPath, ['-e', script, tree], { encoding: 'utf8' })
    expect(gen.status, gen.stderr).toBe(0)
    console.log(`generated ${FILES} files in ${FOLDERS} folders in ${((performance.now() - t0) / 1000).toFixed(1)} s (${base})`)
  }, 90_000)

  afterAll(() => {
    if (tree) fs.rmSync(tree, { recursive: true, force: true })
  })

  it('with the default budget the index holds it, within the budget, and answers', async () => {
    // This process's RSS, for the record only (see 'RSS returns after close()').
    const before = rss()
    const t0 = performance.now()
    const tk = toolkit(tree, 'auto', {})
    expect(tk.fs.waitIndex(80_000)).toBe(true)
    const st = tk.indexStatus()
    expect(st).toMatchObject({ state: 'ready', files: FILES, budget: 512 * 2 ** 20 })
    const bytes = st?.bytes ?? 0
    expect(bytes).toBeGreaterThan(FILES * 16)
    expect(bytes).toBeLessThanOrEqual(st?.budget ?? 0)
    const hit = await tk.createSession().call('Grep', query)
    expect(hit.data).toMatchObject({ fromIndex: true, files: want })
    expect(hit.data?.filesRead).toBeLessThan(10)
    const built = rss()
    await tk.close()
    expect(tk.indexStatus()).toMatchObject({ state: 'off', reason: 'closed', files: 0, bytes: 0 })
    await new Promise((r) => setTimeout(r, 500))
    const closed = rss()
    console.log(
      `index of ${FILES} files: ready in ${((performance.now() - t0) / 1000).toFixed(1)} s (buildMs ${st?.buildMs.toFixed(0)}); ` +
        `bytes ${mib(bytes)} = ${mib((bytes * 100_000) / FILES)} per 100,000 files; RSS before ${mib(before)}, ` +
        `built ${mib(built)} (+${mib(built - before)}), closed ${mib(closed)} (+${mib(closed - before)})`,
    )
  }, 90_000)

  // Fails: close() drops the index, but glibc's malloc keeps the pages it freed (the
  // build thread's arena): RssAnon 6.8 MiB -> 64.8 MiB built -> 46.1 MiB closed, and a
  // malloc_trim(0) called from gdb then brings it to 7.7 MiB. Measured in a fresh process
  // (what this one ran before changes what its allocator keeps), through the native
  // workspace that toolkit.close() closes.
  it('RSS returns after close()', () => {
    const native = path.resolve(import.meta.dirname, '../native/index.cjs')
    const script = `const { Workspace } = require(${JSON.stringify(native)})
      const anon = () => Number(/RssAnon:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
      const before = anon()
      const ws = new Workspace([process.argv[1]])
      ws.useIndex(${512 * 2 ** 20}, true)
      if (!ws.waitIndex(80000)) throw new Error('not built')
      const { state, bytes } = ws.indexStatus()
      const built = anon()
      ws.closeIndex()
      setTimeout(() => console.log(JSON.stringify({ state, bytes, before, built, closed: anon() })), 500)`
    const r = spawnSync(process.execPath, ['-e', script, tree], { encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    const m = JSON.parse(r.stdout) as { state: string; bytes: number; before: number; built: number; closed: number }
    const grew = m.built - m.before
    console.log(`a fresh process: RssAnon before ${mib(m.before)}, built ${mib(m.built)} (+${mib(grew)}, the index says ${mib(m.bytes)}), closed ${mib(m.closed)} (+${mib(m.closed - m.before)})`)
    expect(m.state).toBe('ready')
    // It grew by about what the index says it holds ...
    expect(grew).toBeGreaterThan(m.bytes / 2)
    // ... and gives back all but a quarter of it.
    expect(m.closed - m.before).toBeLessThan(grew / 4)
  }, 90_000)

  it('over limits.indexBytes the index is off for good, and searches walk, right', async () => {
    const small = toolkit(tree, 'auto', { indexBytes: 8 * 2 ** 20 })
    expect(small.fs.waitIndex(60_000)).toBe(true)
    const st = small.indexStatus()
    expect(st).toMatchObject({ state: 'off', files: 0, bytes: 0, budget: 8 * 2 ** 20 })
    expect(st?.reason).toMatch(/over its memory budget .*limits\.indexBytes/)
    const walked = await small.createSession().call('Grep', query)
    expect(walked.data).toMatchObject({ fromIndex: false, files: want, filesRead: FILES })
    // No search builds it again.
    expect(small.indexStatus()?.state).toBe('off')
    await small.close()
  }, 60_000)
})

describe('options', () => {
  it('a bad index mode or budget is a TypeError; index off has no status', () => {
    const dir = tempDir('fsgate-index-opt-')
    expect(() => createToolkit({ workspace: dir, index: 'bogus' as never })).toThrow(TypeError)
    expect(() => createToolkit({ workspace: dir, index: 'bogus' as never })).toThrow(/index must be 'lazy', 'auto' or 'off'/)
    expect(() => createToolkit({ workspace: dir, limits: { indexBytes: 0 } })).toThrow(TypeError)
    expect(() => createToolkit({ workspace: dir, limits: { indexBytes: 0 } })).toThrow(/limits\.indexBytes must be a positive integer/)
    expect(createToolkit({ workspace: dir, index: 'off' }).indexStatus()).toBeNull()
    expect(createToolkit({ workspace: dir }).indexStatus()).toMatchObject({ state: 'idle', files: 0, budget: 512 * 2 ** 20 })
  })
})
