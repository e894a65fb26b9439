#!/usr/bin/env node
// Builds the CommonJS twin of the library (dist/**/*.cjs with dist/**/*.d.cts) next to the
// ES modules that `tsc -p tsconfig.build.json` writes, so `require('fsgate')` works on Node 20,
// which cannot require() an ES module.
//
// tsc picks a file's module format from its extension, so the sources are copied to a scratch
// folder as .cts files and compiled there with the same compiler options (module nodenext), into
// the same dist/ folder: every .cjs lands at the depth of its .js twin, and paths taken relative
// to a module (../native/index.cjs, ../package.json) hold in both formats. The copy changes two
// things and nothing else:
//   - relative import specifiers that name a source file ('./toolkit.js') get .cjs; TypeScript's
//     own pre-processor finds them, so strings that merely look like paths are left alone;
//   - `import.meta.url`, which CommonJS has no syntax for, becomes the same URL built from
//     __filename (pathToFileURL). Any other `import.meta` stops the build rather than guess.
// A .cts file cannot hold everything a .ts file can: a top-level binding named `require`,
// or an arrow function's type parameter without a comma (`<T,>(x: T) => …`). tsc says so.
// Only what ts/index.ts reaches is compiled: the CLI (dist/cli.js) stays an ES module. The copy
// is type-checked like the original, so a construct CommonJS cannot express (top-level await, a
// dependency with no require() entry) fails here, not in a user's require().
//
// Usage: node scripts/build-cjs.mjs   (after `tsc -p tsconfig.build.json`; `npm run build:ts` runs both)
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const ts = require('typescript')

/** The name the rewrite of import.meta.url imports pathToFileURL as. */
const FILE_URL = '__cjsFileUrl'

/** Every .ts file under dir, as paths relative to dir. */
function sources(dir, rel = '') {
  const out = []
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const name = path.join(rel, entry.name)
    if (entry.isDirectory()) out.push(...sources(dir, name))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(name)
  }
  return out
}

/** The source as a .cts module: .cjs specifiers for sibling sources, import.meta.url rewritten. */
function toCts(text, file, known) {
  const edits = []
  for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
    const spec = ref.fileName
    if (!/^\.\.?\//.test(spec) || !spec.endsWith('.js')) continue
    const target = path.normalize(path.join(path.dirname(file), spec.slice(0, -3) + '.ts'))
    if (!known.has(target)) continue
    // `pos` is the opening quote (or the specifier itself, depending on the TypeScript version).
    const pos = text.startsWith(spec, ref.pos) ? ref.pos : ref.pos + 1
    if (!text.startsWith(spec, pos)) throw new Error(`${file}: could not locate the specifier ${spec}`)
    edits.push({ pos, end: pos + spec.length, text: spec.slice(0, -3) + '.cjs' })
  }
  let out = text
  for (const e of edits.sort((a, b) => b.pos - a.pos)) out = out.slice(0, e.pos) + e.text + out.slice(e.end)
  if (out.includes('import.meta.url')) {
    // Prepended on line 1 (after a #! line), so the compiler's line numbers still match ts/.
    const at = out.startsWith('#!') ? out.indexOf('\n') + 1 : 0
    out = out.slice(0, at) + `import { pathToFileURL as ${FILE_URL} } from 'node:url'; ` + out.slice(at).replaceAll('import.meta.url', `${FILE_URL}(__filename).href`)
  }
  const rest = out.indexOf('import.meta')
  if (rest >= 0) {
    const line = out.slice(0, rest).split('\n').length
    throw new Error(`${file}:${line}: import.meta other than import.meta.url has no CommonJS rewrite here; use import.meta.url`)
  }
  return out
}

function main() {
  const src = path.join(root, 'ts')
  const files = sources(src)
  const known = new Set(files)
  const scratch = mkdtempSync(path.join(root, '.cjs-build-'))
  try {
    for (const file of files) {
      const to = path.join(scratch, 'ts', file.replace(/\.ts$/, '.cts'))
      mkdirSync(path.dirname(to), { recursive: true })
      writeFileSync(to, toCts(readFileSync(path.join(src, file), 'utf8'), file, known))
    }
    // The addon's committed declarations, for `import type … from '../native/index.cjs'`.
    mkdirSync(path.join(scratch, 'native'))
    copyFileSync(path.join(root, 'native', 'index.d.cts'), path.join(scratch, 'native', 'index.d.cts'))
    writeFileSync(
      path.join(scratch, 'tsconfig.json'),
      JSON.stringify({
        extends: path.join(root, 'tsconfig.json'),
        compilerOptions: { noEmit: false, rootDir: 'ts', outDir: path.join(root, 'dist') },
        include: [],
        files: ['ts/index.cts'],
      }),
    )
    const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', scratch], { stdio: 'inherit' })
    if (tsc.status !== 0) {
      console.error('build-cjs: the errors above are in the .cts copies of ts/ (same line numbers); no CommonJS build.')
      process.exitCode = tsc.status ?? 1
      return
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

main()
