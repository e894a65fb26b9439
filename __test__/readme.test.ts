/**
 * The README and docs/ are true: every code block in them is checked by what it is.
 *
 * - The quick start is the two commands the project promises; its first command's `npx`
 *   part is run as a fresh machine runs it (an empty npx cache, so npx links the checkout
 *   and runs `prepare`), and it must not rebuild.
 * - `js` blocks are whole programs: each runs with node (importing 'fsgate' resolves to
 *   this package), in an empty folder; one that calls Anthropic's API talks to a local
 *   stand-in model (ANTHROPIC_BASE_URL) that asks for a Read and then answers.
 * - `ts` blocks are type-checked with tsc, `json` blocks parsed.
 * - `sh` blocks: every `fsgate` command line names a real command and only its options,
 *   every `npm run X` a real script; a block under `<!-- runs … -->` is run line by line in
 *   a small repository and each line must exit 0.
 * - `text` blocks are layouts, not code; a block with no language is an error.
 * - Relative links point at files that exist (or at the docs other branches add).
 */
import { execFile, execFileSync, execSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { COMMON_OPTIONS } from '../ts/cli/args.js'
import { COMMANDS } from '../ts/cli/commands.js'
import { put, removeTempDirs, tempDir } from './helpers.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8')
const DOCS = ['README.md', ...fs.readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
/** Docs that other branches write; links to them are allowed before they land. */
const COMING = new Set(['docs/pdf.md', 'docs/search.md', 'docs/vendor-tools.md', 'docs/dialects.md'])
/** Where the blocks are written to run: inside the package (not under node_modules), so `import 'fsgate'` is the package itself. */
const blocksDir = path.join(repo, 'target', 'doc-blocks')

interface Block {
  file: string
  line: number
  lang: string
  code: string
  /** The comment line just before the fence, if any. */
  marker: string
}

function blocks(file: string): Block[] {
  const text = fs.readFileSync(path.join(repo, file), 'utf8')
  const out: Block[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)/.exec(lines[i])
    if (!open) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !lines[i].startsWith('```'); i++) body.push(lines[i])
    out.push({ file, line: start + 1, lang: open[1], code: body.join('\n'), marker: /^<!--.*-->$/.test(lines[start - 1] ?? '') ? lines[start - 1] : '' })
  }
  return out
}

const ALL = DOCS.flatMap(blocks)
const name = (b: Block) => `${b.file}:${b.line} (${b.lang || 'no language'})`

beforeAll(() => {
  // The package as users get it: the addon and dist/ built (a no-op when they are current).
  execFileSync(process.execPath, ['scripts/prepare.mjs'], { cwd: repo, stdio: 'pipe' })
  fs.mkdirSync(blocksDir, { recursive: true })
})

afterAll(() => {
  removeTempDirs()
  fs.rmSync(blocksDir, { recursive: true, force: true })
})

describe('README', () => {
  /** The lines of the first sh block under "## Quick start". */
  function quickStart(): string[] {
    const section = readme.slice(readme.indexOf('## Quick start'))
    const block = /```sh\n([\s\S]*?)```/.exec(section)
    expect(block, 'a ```sh block under ## Quick start').not.toBeNull()
    return block![1].trim().split('\n')
  }

  it('fits a screen or two, and says npm install fsgate to users', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(150)
    expect(readme).toContain('npm install fsgate\n')
  })

  it('quick start: two commands, install and run, then the tests .ci/run calls', () => {
    const [install, test, ...more] = quickStart()
    expect(more).toEqual([])
    expect(install).toMatch(/^npm install && npx fsgate /)
    expect(test).toBe('npm test')
    expect(fs.readFileSync(path.join(repo, '.ci/run'), 'utf8')).toMatch(/\nnpm test\n/)
  })

  it('quick start: the npx step on a fresh npx cache reads the README as an agent sees it, without a rebuild', () => {
    const [install] = quickStart()
    const job = install.slice(install.indexOf('&&') + 2).trim()
    const outputs = ['native/index.cjs', 'dist/cli.js', ...fs.readdirSync(path.join(repo, 'native')).filter((f) => f.endsWith('.node')).map((f) => `native/${f}`)]
    const before = outputs.map((o) => fs.statSync(path.join(repo, o)).mtimeMs)
    const env = { ...process.env, npm_config_cache: tempDir('fsgate-npx-cache-'), npm_config_update_notifier: 'false', npm_config_yes: 'true' }
    const started = Date.now()
    const out = execSync(job, { cwd: repo, encoding: 'utf8', timeout: 120_000, env })
    const seconds = (Date.now() - started) / 1000
    expect(out.split('\n')[0]).toBe(`     1\t${readme.split('\n')[0]}`)
    expect(out).toContain('## Quick start')
    expect(outputs.map((o) => fs.statSync(path.join(repo, o)).mtimeMs), 'npx rebuilt the package').toEqual(before)
    expect(seconds).toBeLessThan(60)
  })
})

describe('every code block in the README and docs', () => {
  it('has a language this test knows', () => {
    for (const b of ALL) expect(['js', 'ts', 'json', 'sh', 'text'], name(b)).toContain(b.lang)
  })

  it('json blocks parse', () => {
    for (const b of ALL.filter((x) => x.lang === 'json')) expect(() => JSON.parse(b.code), name(b)).not.toThrow()
  })

  it('ts blocks type-check', () => {
    const ts = ALL.filter((b) => b.lang === 'ts')
    const dir = path.join(blocksDir, 'ts')
    fs.mkdirSync(dir, { recursive: true })
    const files = ts.map((b, i) => {
      const file = path.join(dir, `block${i}.ts`)
      // Each block is a module of its own, so their names do not collide.
      fs.writeFileSync(file, `${b.code}\nexport {}\n`)
      return file
    })
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true, types: ['node'], typeRoots: [path.join(repo, 'node_modules/@types')] },
        files,
      }),
    )
    const r = spawnSync(process.execPath, [path.join(repo, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' })
    const where = (out: string) => out.replace(/block(\d+)\.ts/g, (_m, i) => name(ts[Number(i)]))
    expect(r.status, where(r.stdout + r.stderr)).toBe(0)
  })

  it('js blocks run', async () => {
    const model = await standInModel()
    try {
      for (const [i, b] of ALL.filter((x) => x.lang === 'js').entries()) {
        const file = path.join(blocksDir, `block${i}.mjs`)
        fs.writeFileSync(file, b.code)
        const cwd = tempDir('fsgate-doc-js-')
        put(cwd, 'README.md', '# A project\n\nIt counts words.\n')
        const env = { ...process.env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test-key' }
        // Not spawnSync: the stand-in model answers from this process's event loop.
        const r = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
          execFile(process.execPath, [file], { cwd, env, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
            resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })
          })
        })
        expect(r.status, `${name(b)}\n${r.stdout}${r.stderr}`).toBe(0)
        expect(r.stderr, name(b)).not.toMatch(/deprecated/)
        if (b.code.includes('@anthropic-ai/sdk')) {
          // The loop ran: the model asked for a Read, got the file, and its answer is printed.
          expect(model.toolResults.join('\n')).toContain('It counts words.')
          expect(r.stdout).toContain('It is a project that counts words.')
        }
        if (b.code.includes('MaxFileReadTokenExceededError')) expect(r.stdout).toMatch(/^TOKEN_LIMIT \d+/)
      }
    } finally {
      model.close()
    }
  })

  it('sh blocks name real commands, options and scripts', () => {
    const scripts = Object.keys(JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')).scripts)
    const mcpFlags = new Set(execFileSync(process.execPath, [path.join(repo, 'dist/cli.js'), 'mcp', '--help'], { encoding: 'utf8' }).match(/--[a-z-]+|-h\b/g))
    for (const b of ALL.filter((x) => x.lang === 'sh')) {
      for (const raw of b.code.split('\n')) {
        // Quoted arguments (a command for risk, a pattern) hold no options or commands of their own.
        const line = raw.replace(/'[^']*'|"[^"]*"/g, "''").replace(/\s+#.*$/, '').trim()
        for (const part of line.split(/\s*(?:\||&&|;)\s*/)) {
          const npm = /^npm run (\S+)/.exec(part)
          if (npm) expect(scripts, `${name(b)}: ${line}`).toContain(npm[1])
          const m = /^(?:npx (?:-y |--no-install )?)?fsgate(?:@[\w.-]+)? (\S+)(.*)$/.exec(part)
          if (!m) continue
          const [, command, rest] = m
          const flags = rest.match(/(?<=^|[\s[|])--?[A-Za-z][\w-]*/g) ?? []
          if (command === 'mcp') {
            for (const f of flags) expect(mcpFlags.has(f), `${name(b)}: fsgate mcp has no ${f}`).toBe(true)
            continue
          }
          if (command === 'help' || command.startsWith('-')) continue
          const cmd = COMMANDS.find((c) => c.name === command)
          expect(cmd, `${name(b)}: no command fsgate ${command}`).toBeDefined()
          const known = new Set<string>()
          for (const [n, o] of Object.entries({ ...cmd!.options, ...COMMON_OPTIONS })) {
            known.add(`--${n}`)
            if (o.short) known.add(`-${o.short}`)
          }
          for (const f of flags) expect(known.has(f), `${name(b)}: fsgate ${command} has no ${f}`).toBe(true)
        }
      }
    }
  })

  it('sh blocks marked to run, run: each line exits 0 in a small repository', () => {
    const runs = ALL.filter((b) => b.lang === 'sh' && b.marker.includes('runs'))
    expect(runs.length).toBeGreaterThan(0)
    const bin = tempDir('fsgate-doc-bin-')
    fs.writeFileSync(path.join(bin, 'fsgate'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repo, 'dist/cli.js'))} "$@"\n`, { mode: 0o755 })
    for (const b of runs) {
      const dir = tempDir('fsgate-doc-sh-')
      execFileSync('git', ['init', '-q'], { cwd: dir })
      put(dir, 'README.md', '# Demo\n\nTODO: more words\n')
      put(dir, 'src/app.ts', 'export function parse(a: string) {\n  return a.b // TODO\n}\n')
      put(dir, 'src/lib/util.ts', 'export const parseAll = 1\n')
      for (const line of b.code.split('\n').filter((l) => l.trim() && !l.startsWith('#'))) {
        const r = spawnSync('bash', ['-o', 'pipefail', '-c', line], { cwd: dir, env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` }, encoding: 'utf8', timeout: 30_000 })
        expect(r.status, `${name(b)}: ${line}\n${r.stdout}${r.stderr}`).toBe(0)
      }
    }
  })
})

describe('links', () => {
  it('every relative link in the README and docs points at a file that exists', () => {
    for (const file of DOCS) {
      const text = fs.readFileSync(path.join(repo, file), 'utf8')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target)) continue
        const resolved = path.normalize(path.join(path.dirname(file), target.split('#')[0]))
        if (COMING.has(resolved) || resolved.startsWith('docs/api')) continue
        expect(fs.existsSync(path.join(repo, resolved)), `${file}: ${target}`).toBe(true)
      }
    }
  })
})

/**
 * A stand-in for the Messages API: the first request gets a tool_use of Read on README.md,
 * the next (which carries the tool_result) an answer. Records the tool results it saw.
 */
async function standInModel(): Promise<{ url: string; toolResults: string[]; close: () => void }> {
  const toolResults: string[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (d: Buffer) => {
      body += d.toString('utf8')
    })
    req.on('end', () => {
      const request = JSON.parse(body) as { messages: Array<{ role: string; content: unknown }>; tools: Array<{ name: string }> }
      const last = request.messages.at(-1)
      const results = Array.isArray(last?.content) ? (last.content as Array<{ type: string; content?: unknown }>).filter((c) => c.type === 'tool_result') : []
      for (const r of results) toolResults.push(JSON.stringify(r.content))
      const content =
        results.length === 0
          ? [{ type: 'tool_use', id: 'toolu_1', name: request.tools.some((t) => t.name === 'Read') ? 'Read' : 'file_read', input: { file_path: 'README.md' } }]
          : [{ type: 'text', text: 'It is a project that counts words.' }]
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          id: `msg_${toolResults.length}`,
          type: 'message',
          role: 'assistant',
          model: 'stand-in',
          content,
          stop_reason: results.length === 0 ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as { port: number }
  return { url: `http://127.0.0.1:${address.port}`, toolResults, close: () => server.close() }
}
