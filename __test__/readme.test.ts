/**
 * The README's quick start is true: it is the two commands the project promises (install
 * and run the main job; run the tests), and the main job, run here as the README gives
 * it after the install .ci/run has done, reads the README as an agent sees it.
 */
import { execSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8')

/** The lines of the first sh block under "## Quick start". */
function quickStart(): string[] {
  const section = readme.slice(readme.indexOf('## Quick start'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)
  expect(block, 'a ```sh block under ## Quick start').not.toBeNull()
  return block![1].trim().split('\n')
}

describe('README quick start', () => {
  it('is two commands: install and run, then the tests', () => {
    const [install, test, ...more] = quickStart()
    expect(more).toEqual([])
    expect(install).toMatch(/^npm install && npx fsgate /)
    expect(test).toBe('npm test')
    // The test command is the one .ci/run calls.
    expect(fs.readFileSync(path.join(repo, '.ci/run'), 'utf8')).toMatch(/\nnpm test\n/)
  })

  it('runs its main job: the part after the install prints the README with line numbers', () => {
    const [install] = quickStart()
    const job = install.slice(install.indexOf('&&') + 2).trim()
    // The first `npx fsgate` in a checkout links it into npx's cache and runs its `prepare`
    // (the whole build) while other test files import dist/: the build is npm test's first
    // step, so scripts are off here.
    const env = { ...process.env, npm_config_ignore_scripts: 'true', npm_config_update_notifier: 'false' }
    const out = execSync(job, { cwd: repo, encoding: 'utf8', timeout: 60_000, env })
    const first = readme.split('\n')[0]
    expect(out.split('\n')[0]).toBe(`     1\t${first}`)
    expect(out).toContain('## Quick start')
  })
})
