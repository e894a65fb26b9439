/**
 * A vitest reporter (after the default one, see vitest.config.ts) that ends a run with one
 * line per missing peer program: which tests it skipped, in which files. The suites write
 * their skips down through peers.ts into a folder this reporter makes for the run; test
 * files run in child processes, so the folder is handed to them in FSGATE_PEER_SKIPS.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type { Reporter, TestModule } from 'vitest/node'

import type { SkipRecord } from './peers.js'

export default class PeerSummary implements Reporter {
  private dir = ''

  onInit(): void {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-peer-skips-'))
    process.env.FSGATE_PEER_SKIPS = this.dir
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const records: SkipRecord[] = []
    for (const name of fs.readdirSync(this.dir)) {
      for (const line of fs.readFileSync(path.join(this.dir, name), 'utf8').split('\n')) if (line) records.push(JSON.parse(line) as SkipRecord)
    }
    fs.rmSync(this.dir, { recursive: true, force: true })
    const lines = summarize(records, modules)
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`)
  }
}

/** The summary lines: per missing program, the skipped tests it cost and the files they are in. */
export function summarize(records: readonly SkipRecord[], modules: ReadonlyArray<TestModule>): string[] {
  const byPeer = new Map<string, { tests: Set<string>; files: Set<string> }>()
  for (const r of records) {
    const module = modules.find((m) => m.moduleId.endsWith(r.file))
    const skipped = module ? [...module.children.allTests()].filter((t) => t.result().state === 'skipped' && t.fullName.includes(r.name)) : []
    for (const peer of r.missing) {
      const entry = byPeer.get(peer) ?? { tests: new Set(), files: new Set() }
      entry.files.add(path.basename(r.file))
      for (const t of skipped) entry.tests.add(`${r.file} ${t.fullName}`)
      byPeer.set(peer, entry)
    }
  }
  return [...byPeer].map(
    ([peer, { tests, files }]) =>
      `SKIPPED: ${peer} is not installed: ${tests.size} test${tests.size === 1 ? '' : 's'} skipped in ${[...files].join(', ')} (CI=true requires it; .ci/run installs it)`,
  )
}
