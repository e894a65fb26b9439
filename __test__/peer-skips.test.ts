/**
 * `npm test` on a fresh machine with only Node and Rust (issue 21): a suite that compares
 * with a peer program skips when the program is missing and says so in a summary line at
 * the end of the run, and with CI=true it fails instead. Proved by running vitest in a
 * child on a small suite (fixtures/peers/) and the ripgrep comparison, with a PATH from
 * which the peer programs are taken out.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, describe, expect, it } from 'vitest'

import { removeTempDirs, tempDir } from './helpers.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** The programs .ci/run installs for the comparisons; a fresh machine has none of them. */
const PEERS = new Set(['rg', 'pdftotext', 'qpdf', 'bwrap', 'strace'])

afterAll(removeTempDirs)

/** A folder of links to every program on PATH but the peers: PATH as a machine without them has it. */
function pathWithoutPeers(): string {
  const dir = tempDir('fsgate-no-peers-')
  for (const folder of (process.env.PATH ?? '').split(path.delimiter)) {
    let names: string[]
    try {
      names = fs.readdirSync(folder)
    } catch {
      continue
    }
    for (const name of names) {
      const target = path.join(folder, name)
      if (PEERS.has(name) || fs.existsSync(path.join(dir, name))) continue
      try {
        fs.accessSync(target, fs.constants.X_OK)
        if (fs.statSync(target).isFile()) fs.symlinkSync(target, path.join(dir, name))
      } catch {
        // not a program
      }
    }
  }
  return dir
}

function childVitest(env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [path.join(repo, 'node_modules/vitest/vitest.mjs'), 'run', '--config', '__test__/fixtures/peers/vitest.config.ts'], {
    cwd: repo,
    env,
    encoding: 'utf8',
    timeout: 240_000,
  })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

describe('a machine without the peer programs', () => {
  const bin = pathWithoutPeers()
  const base: NodeJS.ProcessEnv = { ...process.env, PATH: bin, FORCE_COLOR: '0', NO_COLOR: '1' }
  delete base.CI

  it('has none of them on its PATH', () => {
    for (const peer of PEERS) expect(spawnSync(peer, ['--version'], { env: base }).error, peer).toBeDefined()
  })

  it('passes, skipping the comparisons, and ends with a summary line per missing program', () => {
    const r = childVitest(base)
    expect(r.code, r.out).toBe(0)
    const summary = r.out.slice(r.out.lastIndexOf('Duration'))
    expect(summary).toMatch(/SKIPPED: fsgate-no-such-peer is not installed: 3 tests skipped in needs-peers\.test\.ts \(CI=true requires it; \.ci\/run installs it\)/)
    const rg = /SKIPPED: rg is not installed: (\d+) tests skipped in ([\w., -]+) \(/.exec(summary)
    expect(rg, summary).not.toBeNull()
    expect(Number(rg?.[1])).toBeGreaterThan(100)
    expect(rg?.[2].split(', ').sort()).toEqual(['needs-peers.test.ts', 'search-rg.test.ts'])
  })

  it('fails with CI=true, naming what to install', () => {
    const r = childVitest({ ...base, CI: 'true' })
    expect(r.code).toBe(1)
    expect(r.out).toContain('rg is not installed, and CI=true requires it: .ci/run installs every peer program')
    expect(r.out).toContain('fsgate-no-such-peer, rg are not installed, and CI=true requires them')
  })
})
