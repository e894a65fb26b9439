#!/usr/bin/env node
// Runs the cargo-fuzz targets of fuzz/ for a bounded time each, one at a time, and keeps
// every crash, timeout or out-of-memory input libFuzzer finds as a regression.
//
//   npm run fuzz                      every target, 60 s each
//   npm run fuzz -- page edit         these targets
//   npm run fuzz -- --seconds 300     (or FUZZ_SECONDS=300) longer runs
//   npm run fuzz -- --merge           afterwards, add the fewest inputs that reach new
//                                     code to fuzz/corpus/<target> (not for pdf when
//                                     real PDFs seeded it)
//
// Each target starts from its committed corpus, copied into fuzz/work/corpus/<target>
// (not committed), where libFuzzer also keeps what it finds; the pdf target also reads
// the real PDFs of FUZZ_PDF_SEEDS (by default ../shared/corpus/pdf when it exists) as
// seeds, without writing there. A new artifact in fuzz/work/artifacts/<target> is copied
// to fuzz/regressions/<target>/, which `cargo test` replays forever after, and the
// script exits non-zero naming it. The per-target figures (executions, executions per
// second, coverage, peak memory) are printed at the end and written to
// fuzz/work/summary.json.
//
// cargo-fuzz needs a nightly compiler. `cargo +nightly` is used when rustup has one;
// otherwise the stable compiler is run with RUSTC_BOOTSTRAP=1 (set FUZZ_STABLE=1 to
// force that), which is how CI machines with only stable run it. FUZZ_DEBUG_ASSERTIONS=1
// builds the targets with debug assertions and overflow checks; FUZZ_BUILD_ARGS replaces
// the build flags altogether.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const fuzzDir = path.join(root, 'fuzz')
const targets = fs
  .readdirSync(path.join(fuzzDir, 'fuzz_targets'))
  .filter((f) => f.endsWith('.rs'))
  .map((f) => f.slice(0, -3))
  .sort()

/** Per-target libFuzzer limits: the longest input, and seconds one input may take. */
const LIMITS = {
  pdf: { maxLen: 65536, timeout: 20 },
  default: { maxLen: 4096, timeout: 10 },
}
const RSS_LIMIT_MB = 2048

function usage(message) {
  if (message) console.error(`fuzz: ${message}`)
  console.error(`usage: npm run fuzz -- [--seconds N] [--merge] [target ...]\ntargets: ${targets.join(', ')}`)
  process.exit(2)
}

const args = process.argv.slice(2)
let seconds = Number(process.env.FUZZ_SECONDS ?? 60)
let merge = false
const chosen = []
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  if (a === '--seconds' || a === '-t') seconds = Number(args[++i])
  else if (a === '--merge') merge = true
  else if (a === '--help' || a === '-h') usage()
  else if (targets.includes(a)) chosen.push(a)
  else usage(`no target ${JSON.stringify(a)}`)
}
if (!Number.isFinite(seconds) || seconds <= 0) usage('the seconds must be a positive number')
const run = chosen.length > 0 ? chosen : targets

function ok(cmd, argv, env = process.env) {
  return spawnSync(cmd, argv, { cwd: root, env, stdio: 'ignore' }).status === 0
}

// cargo-fuzz itself.
if (!ok('cargo', ['fuzz', '--version'])) {
  console.log('fuzz: installing cargo-fuzz')
  if (!ok('cargo', ['install', 'cargo-fuzz', '--locked'])) {
    console.error('fuzz: could not install cargo-fuzz (cargo install cargo-fuzz --locked)')
    process.exit(1)
  }
}

// A nightly compiler, or stable that accepts nightly flags.
const useNightly = process.env.FUZZ_STABLE !== '1' && ok('cargo', ['+nightly', '--version'])
const cargoArgs = useNightly ? ['+nightly', 'fuzz'] : ['fuzz']
const env = useNightly ? { ...process.env } : { ...process.env, RUSTC_BOOTSTRAP: '1' }
// An optimized build (-O). Overflow checks and debug assertions (cargo-fuzz's default
// without -O) cost a second instrumented build; the corpus gets them anyway in
// `cargo test` (a debug build).
// FUZZ_BUILD_ARGS replaces the build flags (e.g. "--dev -s none" for a quick build).
const buildFlags = process.env.FUZZ_BUILD_ARGS
  ? process.env.FUZZ_BUILD_ARGS.split(/\s+/).filter(Boolean)
  : process.env.FUZZ_DEBUG_ASSERTIONS === '1'
    ? ['--debug-assertions']
    : ['-O']
console.log(`fuzz: ${run.join(', ')} for ${seconds} s each, ${useNightly ? 'nightly' : 'stable with RUSTC_BOOTSTRAP=1'}`)

function files(dir) {
  try {
    return fs.readdirSync(dir).filter((f) => !f.startsWith('.'))
  } catch {
    return []
  }
}

/** The figures of libFuzzer's last status line and its final stats. */
function figures(log) {
  const status = [...log.matchAll(/^#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)\s+cov: (\d+) ft: (\d+) corp: (\d+)\/(\S+).*?exec\/s: (\d+) rss: (\d+)Mb/gm)].at(-1)
  const stat = (name) => Number(log.match(new RegExp(`stat::${name}:\\s+(\\d+)`))?.[1] ?? Number.NaN)
  return {
    runs: stat('number_of_executed_units'),
    execPerSec: stat('average_exec_per_sec'),
    cov: status ? Number(status[2]) : null,
    ft: status ? Number(status[3]) : null,
    corpus: status ? `${status[4]}/${status[5]}` : null,
    peakRssMb: stat('peak_rss_mb'),
    lastLine: status?.[0] ?? null,
  }
}

// One build of every target first, so the timed runs only fuzz.
// (`cargo fuzz build` takes one target, or none for all of them.)
for (const one of chosen.length > 0 ? run : [null]) {
  const argv = [...cargoArgs, 'build', ...buildFlags, ...(one ? [one] : [])]
  if (spawnSync('cargo', argv, { cwd: root, env, stdio: 'inherit' }).status !== 0) {
    console.error('fuzz: the build failed')
    process.exit(1)
  }
}

const summary = {}
const found = []
for (const target of run) {
  const { maxLen, timeout } = LIMITS[target] ?? LIMITS.default
  const committed = path.join(fuzzDir, 'corpus', target)
  const work = path.join(fuzzDir, 'work', 'corpus', target)
  const artifacts = path.join(fuzzDir, 'work', 'artifacts', target)
  fs.mkdirSync(work, { recursive: true })
  fs.mkdirSync(artifacts, { recursive: true })
  for (const f of files(committed)) fs.copyFileSync(path.join(committed, f), path.join(work, f))
  const seeds = []
  if (target === 'pdf') {
    const real = process.env.FUZZ_PDF_SEEDS ?? path.join(root, '..', 'shared', 'corpus', 'pdf')
    if (fs.existsSync(real)) {
      for (const d of fs.readdirSync(real, { withFileTypes: true })) {
        if (d.isDirectory()) seeds.push(path.join(real, d.name))
      }
      if (seeds.length === 0) seeds.push(real)
    }
  }
  const before = new Set(files(artifacts))
  const argv = [
    ...cargoArgs,
    'run',
    ...buildFlags,
    target,
    work,
    ...seeds,
    '--',
    `-max_total_time=${seconds}`,
    `-rss_limit_mb=${RSS_LIMIT_MB}`,
    `-timeout=${timeout}`,
    `-max_len=${maxLen}`,
    `-artifact_prefix=${artifacts}/`,
    '-print_final_stats=1',
  ]
  console.log(`\nfuzz: ${target}`)
  const res = spawnSync('cargo', argv, { cwd: root, env, encoding: 'utf8', maxBuffer: 1 << 30 })
  const log = `${res.stdout ?? ''}${res.stderr ?? ''}`
  fs.writeFileSync(path.join(fuzzDir, 'work', `${target}.log`), log)
  // Crashes (panics, failed checks, sanitizer reports), timeouts, out-of-memory, leaks;
  // libFuzzer's slow-unit-* files are only reports.
  const fresh = files(artifacts).filter((f) => !before.has(f) && /^(crash|timeout|oom|leak)-/.test(f))
  const regressions = path.join(fuzzDir, 'regressions', target)
  for (const f of fresh) {
    fs.mkdirSync(regressions, { recursive: true })
    fs.copyFileSync(path.join(artifacts, f), path.join(regressions, f))
    found.push(`fuzz/regressions/${target}/${f}`)
  }
  summary[target] = { seconds, ...figures(log), exit: res.status, found: fresh }
  const s = summary[target]
  console.log(
    `fuzz: ${target}: ${s.runs} runs, ${s.execPerSec} exec/s, cov ${s.cov} ft ${s.ft}, corpus ${s.corpus}, peak ${s.peakRssMb} MB${fresh.length ? `, FOUND ${fresh.join(' ')}` : ''}`,
  )
  if (res.status !== 0 && fresh.length === 0) {
    // libFuzzer stopped for another reason (a build problem, a bad flag): show its end.
    console.error(log.split('\n').slice(-30).join('\n'))
    found.push(`${target}: libFuzzer exited with ${res.status} (log in fuzz/work/${target}.log)`)
  }
  if (merge && fresh.length === 0 && seeds.length > 0) {
    // What grew from files that are not the project's stays out of the repository.
    console.log(`fuzz: ${target}: not merged (the run was seeded from ${seeds.join(', ')})`)
  } else if (merge && fresh.length === 0) {
    const m = spawnSync('cargo', [...cargoArgs, 'run', ...buildFlags, target, committed, work, '--', '-set_cover_merge=1', `-max_len=${maxLen}`, `-timeout=${timeout}`], {
      cwd: root,
      env,
      encoding: 'utf8',
    })
    console.log(`fuzz: ${target}: merged into fuzz/corpus/${target}: ${files(committed).length} files${m.status === 0 ? '' : ' (merge failed)'}`)
  }
}

fs.writeFileSync(path.join(fuzzDir, 'work', 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`)
console.log('\ntarget      runs        exec/s   cov    ft     peak MB')
for (const [t, s] of Object.entries(summary)) {
  console.log(`${t.padEnd(11)} ${String(s.runs).padEnd(11)} ${String(s.execPerSec).padEnd(8)} ${String(s.cov).padEnd(6)} ${String(s.ft).padEnd(6)} ${s.peakRssMb}`)
}
if (found.length > 0) {
  console.error(`\nfuzz: found ${found.length}:\n  ${found.join('\n  ')}\nreplay them with cargo test -p fsgate-core fuzz::`)
  process.exit(1)
}
console.log('\nfuzz: nothing found')
