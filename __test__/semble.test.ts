/**
 * The Semble sidecar of semantic_code_search (ts/search/semble.ts): finding the binary on
 * PATH, the exact argv it runs, both output formats Semble has printed, and every way a
 * run fails. A fake `semble` (a Node script first on PATH) stands in for the Python CLI.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { findSemble, parseSembleOutput, runSemble, SembleError } from '../ts/search/semble.js'
import { alive, until } from './helpers.js'

const made: string[] = []
const fakes: Fake[] = []
afterAll(() => {
  // A run that failed to kill its tree must not leave processes behind.
  for (const fake of fakes.splice(0)) {
    const pidFile = path.join(fake.dir, 'grandchild.pid')
    const pids = fake.calls().map((c) => c.pid)
    if (fs.existsSync(pidFile)) pids.push(Number(fs.readFileSync(pidFile, 'utf8')))
    for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL')
  }
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A fresh real folder under os.tmpdir(), removed after the suite. */
function tempDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fsgate-semble-')))
  made.push(dir)
  return dir
}

interface Call {
  argv: string[]
  cwd: string
  pid: number
}

interface Fake {
  bin: string
  dir: string
  /** process.env with the fake's folder first on PATH. */
  env: NodeJS.ProcessEnv
  /** Every run of the fake so far. */
  calls(): Call[]
}

/** Writes an executable `semble` that logs its argv, cwd and pid, then runs `body` (CommonJS). */
function fakeSemble(body: string): Fake {
  const dir = tempDir()
  const bin = path.join(dir, 'semble')
  const log = path.join(dir, 'calls.jsonl')
  const script = [
    '#!/usr/bin/env node',
    "const fs = require('node:fs')",
    `fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), pid: process.pid }) + '\\n')`,
    body,
    '',
  ].join('\n')
  fs.writeFileSync(bin, script)
  fs.chmodSync(bin, 0o755)
  const fake: Fake = {
    bin,
    dir,
    env: { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` },
    calls: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as Call)
        : [],
  }
  fakes.push(fake)
  return fake
}

/** A fake that prints `stdout` and exits 0. */
function printing(stdout: string): Fake {
  return fakeSemble(`process.stdout.write(${JSON.stringify(stdout)})`)
}

/** The SembleError a promise rejects with (fails the test when it resolves or throws something else). */
async function failure(p: Promise<unknown>): Promise<SembleError> {
  try {
    await p
  } catch (err) {
    expect(err).toBeInstanceOf(SembleError)
    return err as SembleError
  }
  throw new Error('expected the promise to reject')
}

// Real output, in the shape each Semble release prints it.

/** semble >= 0.4: `print(json.dumps(format_results(query, results)))`. */
const JSON_OUTPUT =
  '{"query": "where are sessions validated", "results": [' +
  '{"file_path": "src/auth/session.py", "start_line": 12, "end_line": 19, "score": 0.8123, "semantic_score": 0.7712, ' +
  '"content": "def validate_session(token: str) -> Session:\\n    \\"\\"\\"Check the token and load its session.\\"\\"\\"\\n    claims = decode(token)\\n    if claims.expired:\\n        raise SessionExpired(claims.sub)\\n    return Session.load(claims.sid)\\n"}, ' +
  '{"file_path": "src/auth/middleware.py", "start_line": 5, "end_line": 9, "score": 0.6402, "semantic_score": 0.5931, ' +
  '"content": "class AuthMiddleware:\\n    def __call__(self, request):\\n        request.session = validate_session(request.cookies[\\"sid\\"])\\n        return self.app(request)\\n"}]}\n'

/** semble >= 0.4.1 with --max-snippet-lines 0: no `content`. */
const JSON_NO_CONTENT =
  '{"query": "auth", "results": [{"file_path": "lib/auth.ts", "start_line": 1, "end_line": 30, "score": 0.5, "semantic_score": 0.4}]}\n'

/** semble < 0.4: `print(_format_results(f"Search results for: {args.query!r} (mode={args.mode})", results))`. */
const MARKDOWN_OUTPUT = [
  "Search results for: 'where are sessions validated' (mode=hybrid)",
  '',
  '## 1. src/auth/session.py:12-19  [score=0.812]',
  '```',
  'def validate_session(token: str) -> Session:',
  '    claims = decode(token)',
  '    return Session.load(claims.sid)',
  '```',
  '',
  '## 2. docs/guide.md:40-52  [score=0.640]',
  '````',
  'Call it like this:',
  '```python',
  'validate_session(token)',
  '```',
  '````',
  '',
  '## 3. C:\\work\\app\\auth.py:3-3  [score=0.101]',
  '```',
  'import jwt',
  '```',
  '',
].join('\n')

describe('parseSembleOutput', () => {
  it('reads the JSON format of semble 0.4 and later', () => {
    expect(parseSembleOutput(JSON_OUTPUT)).toEqual([
      {
        path: 'src/auth/session.py',
        startLine: 12,
        endLine: 19,
        score: 0.8123,
        snippet:
          'def validate_session(token: str) -> Session:\n    """Check the token and load its session."""\n    claims = decode(token)\n    if claims.expired:\n        raise SessionExpired(claims.sub)\n    return Session.load(claims.sid)',
      },
      {
        path: 'src/auth/middleware.py',
        startLine: 5,
        endLine: 9,
        score: 0.6402,
        snippet: 'class AuthMiddleware:\n    def __call__(self, request):\n        request.session = validate_session(request.cookies["sid"])\n        return self.app(request)',
      },
    ])
  })

  it('reads JSON results without content as hits with an empty snippet', () => {
    expect(parseSembleOutput(JSON_NO_CONTENT)).toEqual([{ path: 'lib/auth.ts', startLine: 1, endLine: 30, score: 0.5, snippet: '' }])
  })

  it('reads results nested under chunk', () => {
    const out = JSON.stringify({ query: 'q', results: [{ chunk: { file_path: 'a.py', start_line: 2, end_line: 4, content: 'x = 1' }, score: 0.3 }] })
    expect(parseSembleOutput(out)).toEqual([{ path: 'a.py', startLine: 2, endLine: 4, score: 0.3, snippet: 'x = 1' }])
  })

  it('finds the JSON line after log lines on stdout', () => {
    const hits = parseSembleOutput(`Loading model minishlab/potion-code-16M-v2...\n${JSON_OUTPUT}`)
    expect(hits.map((h) => h.path)).toEqual(['src/auth/session.py', 'src/auth/middleware.py'])
  })

  it('reads the Markdown format of semble before 0.4, longer fences and Windows paths included', () => {
    expect(parseSembleOutput(MARKDOWN_OUTPUT)).toEqual([
      {
        path: 'src/auth/session.py',
        startLine: 12,
        endLine: 19,
        score: 0.812,
        snippet: 'def validate_session(token: str) -> Session:\n    claims = decode(token)\n    return Session.load(claims.sid)',
      },
      { path: 'docs/guide.md', startLine: 40, endLine: 52, score: 0.64, snippet: 'Call it like this:\n```python\nvalidate_session(token)\n```' },
      { path: 'C:\\work\\app\\auth.py', startLine: 3, endLine: 3, score: 0.101, snippet: 'import jwt' },
    ])
  })

  it('reads Markdown with CRLF line ends and a symbol name after the range', () => {
    const out = "Search results for: 'q'\r\n\r\n## 1. pkg/mod.py:7-9 (load_config)  [score=0.5]\r\n```\r\ndef load_config():\r\n    pass\r\n```\r\n"
    expect(parseSembleOutput(out)).toEqual([{ path: 'pkg/mod.py', startLine: 7, endLine: 9, score: 0.5, snippet: 'def load_config():\n    pass' }])
  })

  it('reads "no results" in both formats as no hits', () => {
    expect(parseSembleOutput('{"error": "No results found."}\n')).toEqual([])
    expect(parseSembleOutput('No results found.\n')).toEqual([])
    expect(parseSembleOutput('{"query": "q", "results": []}')).toEqual([])
  })

  it.each([
    ['empty output', ''],
    ['plain text', 'Indexed 42 files\nSomething went sideways'],
    ['a JSON error other than no results', '{"error": "Path does not exist: /nope"}'],
    ['JSON without results', '{"query": "q"}'],
    ['a result without file_path', '{"results": [{"start_line": 1, "end_line": 2, "content": "x"}]}'],
    ['a result with line 0', '{"results": [{"file_path": "a", "start_line": 0, "end_line": 2}]}'],
    ['a result whose range runs backwards', '{"results": [{"file_path": "a", "start_line": 9, "end_line": 2}]}'],
    ['a result whose content is not text', '{"results": [{"file_path": "a", "start_line": 1, "end_line": 2, "content": 5}]}'],
    ['broken JSON', '{"query": "q", "results": [{"file_path": '],
  ])('rejects %s with reason parse', (_name, out) => {
    let err: unknown
    try {
      parseSembleOutput(out)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(SembleError)
    expect((err as SembleError).reason).toBe('parse')
    expect((err as SembleError).message).toContain("backend='literal'")
  })
})

describe.skipIf(process.platform === 'win32')('findSemble', () => {
  it('finds a semble first on PATH', () => {
    const fake = printing('')
    expect(findSemble(fake.env)).toBe(fake.bin)
  })

  it('returns undefined when no semble is on PATH', () => {
    expect(findSemble({ PATH: tempDir() })).toBeUndefined()
    expect(findSemble({})).toBeUndefined()
  })

  it('skips a semble that is not executable, a folder named semble, and relative PATH entries', () => {
    const notExecutable = tempDir()
    fs.writeFileSync(path.join(notExecutable, 'semble'), '#!/bin/sh\n')
    fs.chmodSync(path.join(notExecutable, 'semble'), 0o644)
    const folder = tempDir()
    fs.mkdirSync(path.join(folder, 'semble'))
    const fake = printing('')
    const relative = path.relative(process.cwd(), fake.dir)
    expect(path.isAbsolute(relative)).toBe(false)
    expect(findSemble({ PATH: [notExecutable, folder, relative].join(path.delimiter) })).toBeUndefined()
    expect(findSemble({ PATH: [notExecutable, folder, fake.dir].join(path.delimiter) })).toBe(fake.bin)
  })

  it('remembers a hit while it is there, and looks again after a miss (Semble installed meanwhile)', () => {
    const fake = printing('')
    const env = { PATH: fake.dir }
    expect(findSemble(env)).toBe(fake.bin)
    const body = fs.readFileSync(fake.bin)
    fs.rmSync(fake.bin)
    expect(findSemble(env)).toBeUndefined()
    fs.writeFileSync(fake.bin, body, { mode: 0o755 })
    expect(findSemble(env)).toBe(fake.bin)
  })
})

describe.skipIf(process.platform === 'win32')('runSemble', () => {
  it('runs `semble search -k N -- QUERY .` in the searched folder and parses the JSON answer', async () => {
    const fake = printing(JSON_OUTPUT)
    const ws = tempDir()
    const bin = findSemble(fake.env)!
    const hits = await runSemble(bin, 'where are sessions validated', ws, 7, { env: fake.env })
    expect(hits.map((h) => [h.path, h.startLine, h.endLine])).toEqual([
      ['src/auth/session.py', 12, 19],
      ['src/auth/middleware.py', 5, 9],
    ])
    const [call] = fake.calls()
    expect(call.argv).toEqual(['search', '-k', '7', '--', 'where are sessions validated', '.'])
    expect(fs.realpathSync(call.cwd)).toBe(ws)
  })

  it('parses the Markdown answer of older releases', async () => {
    const fake = printing(MARKDOWN_OUTPUT)
    const hits = await runSemble(fake.bin, 'q', tempDir(), 5, { env: fake.env })
    expect(hits.map((h) => h.path)).toEqual(['src/auth/session.py', 'docs/guide.md', 'C:\\work\\app\\auth.py'])
  })

  it('passes the query verbatim as one argument, with no shell in between', async () => {
    const fake = printing('No results found.\n')
    const ws = tempDir()
    const queries = [
      `say "hi" and 'bye' $(rm -rf /) \`touch pwned\` ; ls | cat & echo > out $HOME *`,
      'first line\nsecond line\r\nthird\ttabbed',
      '--help',
      '-k 99 --top-k=1',
      '',
    ]
    for (const query of queries) expect(await runSemble(fake.bin, query, ws, 3, { env: fake.env })).toEqual([])
    expect(fake.calls().map((c) => c.argv)).toEqual(queries.map((q) => ['search', '-k', '3', '--', q, '.']))
    expect(fs.readdirSync(ws)).toEqual([])
  })

  it('returns at most topK hits', async () => {
    const results = Array.from({ length: 6 }, (_, i) => ({ file_path: `f${i}.py`, start_line: 1, end_line: 2, score: 1 - i / 10, content: `x${i}` }))
    const fake = printing(JSON.stringify({ query: 'q', results }))
    const hits = await runSemble(fake.bin, 'q', tempDir(), 2, { env: fake.env })
    expect(hits.map((h) => h.path)).toEqual(['f0.py', 'f1.py'])
    expect(fake.calls()[0].argv.slice(1, 3)).toEqual(['-k', '2'])
  })

  it('rejects a non-zero exit with reason exit and stderr in the message', async () => {
    const fake = fakeSemble("process.stderr.write('Path does not exist: /gone\\n'); process.exit(2)")
    const err = await failure(runSemble(fake.bin, 'q', tempDir(), 5, { env: fake.env }))
    expect(err.reason).toBe('exit')
    expect(err.exitCode).toBe(2)
    expect(err.message).toContain('exited with code 2')
    expect(err.message).toContain('Path does not exist: /gone')
  })

  it('puts only the first 500 characters of a long stderr in the message, plus the exception line of a traceback', async () => {
    const long = 'E'.repeat(2000)
    const plain = fakeSemble(`process.stderr.write(${JSON.stringify(long)}); process.exit(1)`)
    const err = await failure(runSemble(plain.bin, 'q', tempDir(), 5, { env: plain.env }))
    expect(err.message).toContain('E'.repeat(500))
    expect(err.message).not.toContain('E'.repeat(501))
    expect(err.stderr).toBe(long)

    const traceback = `Traceback (most recent call last):\n${'  File "/usr/lib/python3.12/site-packages/semble/cli.py", line 120, in main\n    _cli_main()\n'.repeat(20)}ValueError: No supported files found under /work/empty.\n`
    const py = fakeSemble(`process.stderr.write(${JSON.stringify(traceback)}); process.exit(1)`)
    const tb = await failure(runSemble(py.bin, 'q', tempDir(), 5, { env: py.env }))
    expect(tb.message).toContain(traceback.slice(0, 500))
    expect(tb.message).toContain('ValueError: No supported files found under /work/empty.')
  })

  it('rejects a hang with reason timeout within timeoutMs and kills the process tree', async () => {
    const fake = fakeSemble(
      [
        "const { spawn } = require('node:child_process')",
        "const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })",
        "fs.writeFileSync(__dirname + '/grandchild.pid', String(g.pid))",
        'setInterval(() => {}, 1000)',
      ].join('\n'),
    )
    const pidFile = path.join(fake.dir, 'grandchild.pid')
    const started = Date.now()
    const err = await failure(runSemble(fake.bin, 'q', tempDir(), 5, { env: fake.env, timeoutMs: 1500 }))
    const elapsed = Date.now() - started
    expect(err.reason).toBe('timeout')
    expect(err.message).toContain('1.5 s')
    expect(elapsed).toBeGreaterThanOrEqual(1400)
    expect(elapsed).toBeLessThan(3000)

    expect(fs.existsSync(pidFile)).toBe(true)
    const pids = [fake.calls()[0].pid, Number(fs.readFileSync(pidFile, 'utf8'))]
    expect(await until(() => pids.every((pid) => !alive(pid)), 3000)).toBe(true)
  })

  it('rejects output it cannot read with reason parse', async () => {
    const fake = printing('Indexed 12 files\nhello, world\n')
    const err = await failure(runSemble(fake.bin, 'q', tempDir(), 5, { env: fake.env }))
    expect(err.reason).toBe('parse')
    expect(err.message).toContain('hello, world')
  })

  it('stops reading at 4 MiB and rejects with reason parse', async () => {
    const fake = fakeSemble("process.stdout.write('x'.repeat(5 * 1024 * 1024)); setInterval(() => {}, 1000)")
    const err = await failure(runSemble(fake.bin, 'q', tempDir(), 5, { env: fake.env, timeoutMs: 10_000 }))
    expect(err.reason).toBe('parse')
    expect(err.message).toContain('4 MiB')
    expect(await until(() => !alive(fake.calls()[0].pid), 3000)).toBe(true)
  })

  it('rejects with reason aborted when the signal fires, and does not start when it already has', async () => {
    const fake = fakeSemble('setInterval(() => {}, 1000)')
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    const started = Date.now()
    const err = await failure(runSemble(fake.bin, 'q', tempDir(), 5, { env: fake.env, signal: controller.signal }))
    expect(err.reason).toBe('aborted')
    expect(Date.now() - started).toBeLessThan(2000)
    expect(await until(() => !alive(fake.calls()[0].pid), 3000)).toBe(true)

    const before = fake.calls().length
    const again = await failure(runSemble(fake.bin, 'q', tempDir(), 5, { env: fake.env, signal: AbortSignal.abort() }))
    expect(again.reason).toBe('aborted')
    expect(fake.calls().length).toBe(before)
  })

  it('rejects a binary that cannot start with reason spawn', async () => {
    const err = await failure(runSemble(path.join(tempDir(), 'semble'), 'q', tempDir(), 5))
    expect(err.reason).toBe('spawn')
    expect(err.message).toContain('pip install semble')
  })
})
