#!/usr/bin/env node
// Lints the package as npm would publish it: publint (package.json against the files) and
// are-the-types-wrong (the types each resolution mode finds, ESM and CommonJS alike). Both read
// one tarball packed with --ignore-scripts: `attw --pack` and a plain `npm pack` run `prepare`,
// which rebuilds the addon with cargo. Run after `npm run build:ts` (and build:native).
//
// Usage: node scripts/lint-pack.mjs
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const windows = process.platform === 'win32'

/** A devDependency's bin script, run with this Node (no shell, no npx lookup). */
function bin(pkg, name) {
  const dir = path.join(root, 'node_modules', pkg)
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
  const rel = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[name]
  return path.join(dir, rel)
}

const out = mkdtempSync(path.join(tmpdir(), 'fsgate-lint-pack-'))
let failed = false
try {
  execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', out], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], shell: windows })
  const tarball = path.join(out, readdirSync(out).find((f) => f.endsWith('.tgz')))
  for (const [label, args] of [
    ['publint', [bin('publint', 'publint'), 'run', tarball, '--strict']],
    ['attw', [bin('@arethetypeswrong/cli', 'attw'), tarball, '--profile', 'strict', '--format', 'table-flipped']],
  ]) {
    console.log(`lint-pack: ${label}`)
    try {
      execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' })
    } catch {
      failed = true
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
if (failed) {
  console.error('lint-pack: problems above')
  process.exitCode = 1
}
