/**
 * Suites that compare fsgate with a peer program (rg, pdftotext, qpdf, bwrap, strace, the
 * sandbox escape suite's programs, Node 22 for the MCP conformance suite) go through
 * `needs`: where a peer is missing they skip, and the skip is written down so that the
 * summary at the end of the run (peer-summary.ts, a vitest reporter) names the missing
 * programs and how many tests they cost. With CI=true a missing peer is required instead:
 * the suite runs, and a first test fails naming what to install (.ci/run installs them all).
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { describe, it } from 'vitest'

/** CI=true: every peer is required. */
export const CI = process.env.CI === 'true'

/** The folder where skips are written down for the summary (set by the reporter); null outside a vitest run with it. */
export const SKIPS_DIR = process.env.FSGATE_PEER_SKIPS ?? null

/** Whether `cmd args` runs and exits 0 (the usual probe: `--version`). */
export function runs(cmd: string, args: string[] = ['--version']): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 20_000 })
  return r.status === 0
}

/** One skip as the summary reads it. */
export interface SkipRecord {
  /** The test file, relative to the repository. */
  file: string
  /** The suite or test name that was skipped (the summary counts the skipped tests under it). */
  name: string
  missing: string[]
}

/** Writes down a skip for the summary (suites with their own gating call it directly). */
export function recordSkip(file: string, name: string, missing: string[]): void {
  const line = `${JSON.stringify({ file, name, missing } satisfies SkipRecord)}\n`
  if (SKIPS_DIR) fs.appendFileSync(path.join(SKIPS_DIR, `${process.pid}.jsonl`), line)
  else console.warn(`${file}: ${name}: skipped, ${missing.join(', ')} not installed`)
}

export interface PeerGate {
  /** The peers that are not there. */
  missing: string[]
  /** Whether every peer is there. */
  available: boolean
  /** Whether the gated tests run: the peers are there, or CI=true requires them. */
  runs: boolean
  /** A describe that skips (and is written down) when a peer is missing, and under CI=true runs with a first test that fails naming it. */
  describe(name: string, fn: () => void): void
  /** The same for one test. */
  it(name: string, fn: () => unknown, timeout?: number): void
}

/**
 * A gate for tests that need the peers named in `peers` (name → whether it is there).
 * `file` is the test file's `import.meta.url`.
 */
export function needs(peers: Record<string, boolean>, file: string): PeerGate {
  const missing = Object.entries(peers)
    .filter(([, ok]) => !ok)
    .map(([name]) => name)
  const rel = path.relative(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), fileURLToPath(file))
  const required = CI && missing.length > 0
  const fail = () => {
    throw new Error(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not installed, and CI=true requires ${missing.length > 1 ? 'them' : 'it'}: .ci/run installs every peer program`)
  }
  return {
    missing,
    available: missing.length === 0,
    runs: missing.length === 0 || CI,
    describe(name, fn) {
      if (missing.length > 0 && !CI) {
        recordSkip(rel, name, missing)
        describe.skip(name, fn)
        return
      }
      describe(name, () => {
        if (required) it(`needs ${missing.join(', ')}`, fail)
        fn()
      })
    },
    it(name, fn, timeout) {
      if (missing.length > 0 && !CI) {
        recordSkip(rel, name, missing)
        it.skip(name, fn)
        return
      }
      it(name, required ? fail : fn, timeout)
    },
  }
}
