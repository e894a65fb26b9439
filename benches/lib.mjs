// Shared helpers of the benchmarks: timing, statistics, tables, machine facts.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import os from 'node:os'

/** Milliseconds since an arbitrary origin, with sub-microsecond resolution. */
export function now() {
  return Number(process.hrtime.bigint()) / 1e6
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

/**
 * Runs `fn` `warmup` times untimed, then `reps` times timed (or until `budgetMs` of timed
 * runs have passed, with at least `minReps`). `fn` may return a promise. Returns the
 * times in ms and the last value returned.
 */
export async function measure(fn, { reps = 7, warmup = 1, budgetMs = Infinity, minReps = 3 } = {}) {
  let value
  for (let i = 0; i < warmup; i++) value = await fn(i)
  const times = []
  let spent = 0
  for (let i = 0; i < reps; i++) {
    if (times.length >= minReps && spent > budgetMs) break
    const t0 = now()
    value = await fn(i)
    const dt = now() - t0
    times.push(dt)
    spent += dt
  }
  return { times, median: median(times), min: Math.min(...times), max: Math.max(...times), value }
}

/**
 * Runs several candidates in rounds, each round running every candidate `perRound`
 * times, so that slow drifts of a shared machine touch all of them alike. Each candidate
 * first runs `warmup` times untimed. Returns { name: measure-like result }.
 */
export async function interleave(candidates, { rounds = 5, warmup = 1 } = {}) {
  const out = {}
  for (const [name, c] of Object.entries(candidates)) {
    for (let i = 0; i < (c.warmup ?? warmup); i++) out[name] = { value: await c.fn() }
    out[name].times = []
  }
  for (let r = 0; r < rounds; r++) {
    for (const [name, c] of Object.entries(candidates)) {
      for (let i = 0; i < (c.perRound ?? 1); i++) {
        const t0 = now()
        out[name].value = await c.fn()
        out[name].times.push(now() - t0)
      }
    }
  }
  for (const o of Object.values(out)) Object.assign(o, { median: median(o.times), min: Math.min(...o.times), max: Math.max(...o.times) })
  return out
}

export function fmtMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '—'
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`
  if (ms >= 100) return `${ms.toFixed(0)} ms`
  if (ms >= 10) return `${ms.toFixed(1)} ms`
  return `${ms.toFixed(2)} ms`
}

export function fmtNum(n) {
  return Math.round(n).toLocaleString('en-US')
}

export function fmtRatio(x) {
  if (!Number.isFinite(x)) return '—'
  return x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(1)}×`
}

/** A GitHub-flavoured markdown table; the same text is printed and written. */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c)))
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)))
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  return [line(all[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...all.slice(1).map(line)].join('\n')
}

export function machine() {
  let cpu = 'unknown'
  try {
    const m = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m)
    if (m) cpu = m[1].trim()
  } catch {
    cpu = os.cpus()[0]?.model ?? 'unknown'
  }
  let nproc = os.availableParallelism?.() ?? os.cpus().length
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || nproc
  } catch {
    // keep the os figure
  }
  let flags = []
  try {
    const f = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:\s*(.+)$/m)?.[1].split(/\s+/) ?? []
    flags = ['sha_ni', 'avx2', 'avx512f'].filter((x) => f.includes(x))
  } catch {
    // not Linux
  }
  return {
    nproc,
    cpu,
    flags,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    memGiB: (os.totalmem() / 2 ** 30).toFixed(1),
  }
}

/** A small, fast, seedable PRNG (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Reads every file of the tree once, so the page cache holds it before timing. */
export function warmTree(dir) {
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) readFileSync(path.join(e.parentPath ?? e.path, e.name))
  }
}

export function findRg() {
  // RG_PATH names the rg to compare with; by default /usr/bin/rg (ripgrep from apt), else rg on PATH.
  const candidates = process.env.RG_PATH ? [process.env.RG_PATH] : ['/usr/bin/rg', 'rg']
  for (const c of candidates) {
    const r = spawnSync(c, ['--version'], { encoding: 'utf8' })
    if (r.status === 0) return { path: c, version: r.stdout.split('\n')[0].trim() }
  }
  return { path: null, why: `${candidates.join(' and ')} did not run` }
}

/** Spawns rg and resolves its stdout split into lines (exit 1, no match, is an empty list). */
export function runRg(rg, args, cwd) {
  return new Promise((resolve, reject) => {
    const p = spawn(rg.path, ['--no-config', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    const out = []
    let err = ''
    p.stdout.on('data', (c) => out.push(c))
    p.stderr.on('data', (c) => {
      err += c
    })
    p.on('error', reject)
    p.on('close', (code) => {
      if (code !== 0 && code !== 1) return reject(new Error(`rg ${args.join(' ')} exited with ${code}: ${err.slice(0, 300)}`))
      const text = Buffer.concat(out).toString('utf8')
      resolve(text === '' ? [] : text.slice(0, -1).split('\n'))
    })
  })
}
