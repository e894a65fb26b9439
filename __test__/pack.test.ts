// What `npm pack` puts in the tarball, and how the package lints as published. Installing the
// tarball and using it from ES module, CommonJS and CLI consumers is consumers.test.ts.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

import { beforeAll, describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..')
const windows = process.platform === 'win32'
let files: string[]

/** The module a built file comes from: dist/tools/read.d.cts → tools/read. */
const moduleOf = (file: string) => file.replace(/^dist\//, '').replace(/\.(d\.cts|d\.ts|cjs|js)$/, '')

describe('npm pack', () => {
  beforeAll(() => {
    // --ignore-scripts: `prepare` would rebuild the addon with cargo.
    const report = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', shell: windows }),
    ) as Array<{ files: Array<{ path: string }> }>
    files = report[0].files.map((f) => f.path).sort()
  }, 120_000)

  it('ships the built facade, the loader, the addon, the README and the LICENSE, nothing else', () => {
    const allowed = (f: string) =>
      ['package.json', 'README.md', 'LICENSE', 'native/index.cjs', 'native/index.d.cts'].includes(f) ||
      /^native\/fsgate\.[a-z0-9-]+\.node$/.test(f) ||
      /^dist\/[\w/-]+\.(js|d\.ts|cjs|d\.cts)$/.test(f)
    expect(files.filter((f) => !allowed(f))).toEqual([])
    // No sources, tests, benchmarks, examples, scripts, crates, source maps or tarballs.
    expect(files.filter((f) => /^(ts|__test__|benches|examples|scripts|crates|docs|\.github|\.ci)\/|\.(map|ts\.map|tgz|rs|toml)$/.test(f))).toEqual([])
    expect(files.some((f) => f.endsWith('.node'))).toBe(true)
  })

  it('ships no built file whose source is gone', () => {
    const orphans = files.filter((f) => f.startsWith('dist/') && !existsSync(path.join(root, 'ts', `${moduleOf(f)}.ts`)))
    expect(orphans).toEqual([])
  })

  it('ships each library module in both formats with its types, and the CLI as an ES module', () => {
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/index.cjs', 'dist/index.d.cts', 'dist/cli.js', 'dist/native.cjs']) {
      expect(files).toContain(f)
    }
    const has = new Set(files)
    for (const f of files.filter((f) => f.endsWith('.cjs') && f.startsWith('dist/'))) {
      const m = moduleOf(f)
      expect([has.has(`dist/${m}.js`), has.has(`dist/${m}.d.cts`)], m).toEqual([true, true])
    }
    for (const f of files.filter((f) => /^dist\/.*\.js$/.test(f))) expect(has.has(`dist/${moduleOf(f)}.d.ts`), f).toBe(true)
    expect(files.filter((f) => /^dist\/cli(\/|\.)/.test(f) && f.endsWith('.cjs'))).toEqual([])
    const bin = readFileSync(path.join(root, 'dist/cli.js'), 'utf8')
    expect(bin.startsWith('#!/usr/bin/env node')).toBe(true)
  })

  it('points main, types, exports and bin at files in the tarball', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
    const targets: string[] = []
    const walk = (v: unknown): void => {
      if (typeof v === 'string') targets.push(v)
      else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x)
    }
    walk([pkg.main, pkg.types, pkg.exports, pkg.bin])
    expect(targets.length).toBeGreaterThan(6)
    for (const t of targets) expect(files, t).toContain(t.replace(/^\.\//, ''))
    expect(pkg.exports['.']).toEqual({
      import: { types: './dist/index.d.ts', default: './dist/index.js' },
      require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
    })
  })

  it('carries the MIT license the package declares', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
    expect(pkg.license).toBe('MIT')
    expect(readFileSync(path.join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /)
  })

  // publint (package.json against the files) and are-the-types-wrong (the types node10, node16
  // from CJS and ESM, and bundlers find) on one tarball; either reporting a problem fails it.
  it('passes publint and are-the-types-wrong (npm run lint:pack)', () => {
    let output = ''
    let status = 0
    try {
      output = execFileSync(process.execPath, [path.join(root, 'scripts/lint-pack.mjs')], {
        cwd: root,
        encoding: 'utf8',
        stdio: 'pipe',
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      })
    } catch (e) {
      const err = e as { status: number; stdout: string; stderr: string }
      status = err.status
      output = `${err.stdout}\n${err.stderr}`
    }
    expect(status, output).toBe(0)
    expect(output).toContain('All good!')
    expect(output).toContain('No problems found')
  }, 120_000)
})
