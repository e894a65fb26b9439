// The load suite from the command line: `npm run soak` (builds, then five minutes with 64
// sessions), or `node --expose-gc benches/soak.mjs [--seconds 300] [--sessions 64]
// [--peer-sessions 8] [--warmup S] [--baseline S] [--seed N] [--json FILE] [--keep-tree]
// [--tree full|small] [--only read,shell,...]` (the steps of the mix: read glob grep semantic shell git counter
// line gen mark own abortCounter)
// against the current build. Prints the tables and the checks, writes every figure and
// the per-second samples to .bench-data/soak.json (or --json), and exits 1 when a check
// fails. Runs of under two minutes are held to the short bounds (SHORT_BOUNDS).
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

import { machine } from './lib.mjs'
import { checkSoak, formatSoak, FULL_BOUNDS, ROOT, runSoak, SHORT_BOUNDS } from './soak-lib.mjs'

const argv = process.argv.slice(2)
function arg(name, fallback) {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`))
  if (i === -1) return fallback
  const a = argv[i]
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[i + 1]
}
const num = (name, fallback) => {
  const v = arg(name, undefined)
  if (v === undefined) return fallback
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number, got ${v}`)
  return n
}

const options = {
  seconds: num('seconds', 300),
  sessions: num('sessions', 64),
  peerSessions: num('peer-sessions', 8),
  warmupSeconds: num('warmup', undefined),
  baselineSeconds: num('baseline', undefined),
  seed: num('seed', 1),
  keepTree: argv.includes('--keep-tree'),
  only: arg('only', undefined)?.split(','),
  tree: arg('tree', 'full'),
  log: (line) => console.log(line),
}
const jsonFile = path.resolve(arg('json', path.join(ROOT, '.bench-data', 'soak.json')))
const bounds = options.seconds >= 120 ? FULL_BOUNDS : SHORT_BOUNDS

const fsgate = await import(path.join(ROOT, 'dist', 'index.js'))
const m = machine()
console.log(`fsgate load suite: ${options.sessions} sessions + ${options.peerSessions} of a second toolkit, ${options.seconds} s; ${m.nproc} CPUs (${m.cpu}), Node ${m.node}`)
const started = Date.now()
const result = await runSoak(fsgate, options)
const checks = checkSoak(result, bounds)
result.machine = m
result.bounds = { name: bounds === FULL_BOUNDS ? 'full' : 'short', ...bounds }
result.checks = checks
result.wallSeconds = (Date.now() - started) / 1000

console.log('')
console.log(formatSoak(result, checks))
console.log('')
const c = result.cpu
if (c) console.log(`CPU over the run: machine ${(c.machineBusy * 100).toFixed(0)}% busy of ${c.cores} cores; this process ${(c.thisProcess * 100).toFixed(0)}%, its shells and git ${(c.itsChildren * 100).toFixed(0)}%, everything else ${(c.others * 100).toFixed(0)}%`)
console.log(`load average before ${result.load.before.load.join(' / ')}, after ${result.load.after.load.join(' / ')}; busiest other processes before: ${result.load.before.top.join(', ') || 'none over 5%'}; after: ${result.load.after.top.join(', ') || 'none over 5%'}`)
console.log(`${result.totalCalls} calls in ${result.durations.soak.toFixed(0)} s, ${result.sessionsMade} conversations, ${result.stubsSeen} dedup stubs, ${result.verifiedReads} pages compared with the file; wall time ${result.wallSeconds.toFixed(0)} s`)
if (result.problems.examples.length) {
  console.log('\nproblems (the first five of each kind):')
  for (const e of result.problems.examples) console.log(`  ${e}`)
}

mkdirSync(path.dirname(jsonFile), { recursive: true })
writeFileSync(jsonFile, JSON.stringify(result, null, 1))
console.log(`\nwrote ${path.relative(process.cwd(), jsonFile)}`)
const failed = checks.filter((x) => !x.ok)
if (failed.length) {
  console.log(`FAILED: ${failed.map((x) => x.check).join('; ')}`)
  process.exitCode = 1
}
