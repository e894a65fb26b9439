#!/usr/bin/env node
// The `node` devDependency (Node 22, for the MCP conformance suite only) links itself as
// node_modules/.bin/node, which npm scripts and npx put first on PATH: every script and
// test would then run on Node 22 instead of the Node the machine has (and users run, from
// Node 20 on). This removes that one link; the conformance test runs
// node_modules/node/bin/node by its path. `prepare` and `build` run it first.
import { lstatSync, readlinkSync, unlinkSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const link = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.bin', 'node')
try {
  if (lstatSync(link).isSymbolicLink() && /(^|[\\/])node[\\/]bin[\\/]node$/.test(readlinkSync(link))) unlinkSync(link)
} catch {
  // no such link: nothing to do
}
