#!/usr/bin/env node
// Removes what the build left in dist/ for a source that is gone (ts/foo.ts deleted or moved leaves
// dist/foo.js behind, and `files: ["dist/"]` would ship it). Only files with no ts/ source are
// removed, never the whole folder, so a test run reading dist/ at the same moment is not disturbed.
// A file in dist/ belongs to ts/X.ts when it is dist/X.js, X.d.ts, X.cjs or X.d.cts.
//
// Usage: node scripts/prune-dist.mjs   (`npm run build:ts` runs it first)
import { existsSync, readdirSync, rmSync, rmdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const OUTPUT = /\.(d\.cts|d\.ts|cjs|js)$/

/** Prunes dir (a folder of dist/, rel from dist/); returns whether it is empty afterwards. */
function prune(rel) {
  const dir = path.join(root, 'dist', rel)
  let left = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const name = path.join(rel, entry.name)
    if (entry.isDirectory()) {
      if (prune(name)) rmdirSync(path.join(root, 'dist', name))
      else left++
      continue
    }
    const source = path.join(root, 'ts', name.replace(OUTPUT, '.ts'))
    if (OUTPUT.test(name) && existsSync(source)) left++
    else {
      rmSync(path.join(root, 'dist', name))
      console.log(`prune-dist: removed dist/${name.split(path.sep).join('/')} (no ts/ source)`)
    }
  }
  return left === 0
}

if (existsSync(path.join(root, 'dist'))) prune('')
