#!/usr/bin/env node
// `prepare`: what npm runs after `npm install` in a checkout, and again when `npx fsgate`
// links the checkout into npx's cache. It builds (`npm run build`: the addon and the
// facade) unless the build is up to date: every output newer than every input. So the
// first `npx fsgate` after `npm install` starts at once instead of building again.
//
// Usage: node scripts/prepare.mjs [--check]   (--check: print whether a build is needed, build nothing)
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import './keep-system-node.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** What the build reads. */
const INPUTS = ['Cargo.toml', 'Cargo.lock', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'crates/core', 'crates/node', 'ts', 'scripts/build-cjs.mjs', 'scripts/prune-dist.mjs']

/** The newest modification time under `rel` (a file or a folder; target/ folders left out), 0 if missing. */
function newest(rel) {
  const abs = path.join(root, rel)
  if (!existsSync(abs)) return 0
  const st = statSync(abs)
  if (!st.isDirectory()) return st.mtimeMs
  let t = st.mtimeMs
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    if (entry.name === 'target' || entry.name === 'node_modules') continue
    t = Math.max(t, newest(path.join(rel, entry.name)))
  }
  return t
}

/** Why a build is needed, or null when the outputs are newer than the inputs. */
export function staleness() {
  const addon = existsSync(path.join(root, 'native')) ? readdirSync(path.join(root, 'native')).filter((n) => n.endsWith('.node')) : []
  if (addon.length === 0) return 'the addon is not built'
  const outputs = [...addon.map((n) => `native/${n}`), 'native/index.cjs', 'dist/cli.js', 'dist/index.js', 'dist/index.cjs']
  const missing = outputs.find((o) => !existsSync(path.join(root, o)))
  if (missing) return `${missing} is missing`
  const built = Math.min(...outputs.map((o) => statSync(path.join(root, o)).mtimeMs))
  const changed = INPUTS.find((i) => newest(i) > built)
  return changed ? `${changed} changed since the last build` : null
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const why = staleness()
  if (process.argv.includes('--check')) {
    console.log(why ?? 'up to date')
  } else if (why === null) {
    console.log('fsgate: the build is up to date (npm run build rebuilds anyway)')
  } else {
    console.log(`fsgate: building (${why})`)
    const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' })
    process.exit(r.status ?? 1)
  }
}
