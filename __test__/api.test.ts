/**
 * The public API of SPEC §2: createToolkit's option checks, session.call's never-throw
 * contract and input validation, the typed methods' error classes, tool definitions for
 * every dialect and SDK format (with pinned schemas), and cancellation by AbortSignal.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import {
  AbortedError,
  BlockedDeviceError,
  countTokens,
  createToolkit,
  DEFAULT_LIMITS,
  ERROR_CODES,
  FileTooLargeError,
  FsgateError,
  hashBuffer,
  hashFile,
  InvalidInputError,
  MaxFileReadTokenExceededError,
  NotFoundError,
  PathOutsideWorkspaceError,
  type ToolDefinition,
  type ToolkitOptions,
} from '../ts/index.js'
import {
  expectToolResult,
  fails,
  ok,
  put,
  putRepeated,
  removeTempDirs,
  rng,
  tempDir,
  textOf,
  thrown,
  word,
  workspace,
  type Fixture,
} from './helpers.js'

let ws: Fixture
/** 200 MB of short lines, for cancelling a read in the middle. */
let hugePath: string
const HUGE_LINE = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n' // 64 bytes
const HUGE_BYTES = 200 * 1024 * 1024

beforeAll(() => {
  ws = workspace()
  put(ws.dir, 'a.txt', 'alpha\nbeta\ngamma\n')
  put(ws.dir, 'doc.pdf', '%PDF-1.4\n%%EOF\n')
  const rand = rng(3)
  const lines: string[] = []
  for (let i = 0; i < 2000; i++) lines.push(Array.from({ length: 18 }, () => word(rand, 5)).join(' '))
  put(ws.dir, 'tokens.txt', lines.join('\n') + '\n')
  hugePath = path.join(ws.dir, 'huge.log')
  putRepeated(hugePath, HUGE_LINE, HUGE_BYTES)
})

afterAll(removeTempDirs)

describe('createToolkit', () => {
  it('needs a workspace', () => {
    expect(() => createToolkit(undefined as unknown as ToolkitOptions)).toThrow(TypeError)
    expect(() => createToolkit({} as ToolkitOptions)).toThrow(TypeError)
    expect(() => createToolkit({ workspace: '' })).toThrow(TypeError)
    expect(() => createToolkit({ workspace: 42 as unknown as string })).toThrow(TypeError)
  })

  it('refuses a workspace that does not exist or is a file', () => {
    const missing = path.join(os.tmpdir(), `fsgate-missing-${process.pid}-${Date.now()}`)
    expect(() => createToolkit({ workspace: missing })).toThrow(TypeError)
    expect(() => createToolkit({ workspace: path.join(ws.dir, 'a.txt') })).toThrow(TypeError)
  })

  it('refuses an unknown preset, naming it', () => {
    expect(() => createToolkit({ workspace: ws.dir, preset: 'yolo' as never })).toThrow(TypeError)
    expect(() => createToolkit({ workspace: ws.dir, preset: 'yolo' as never })).toThrow(/yolo/)
    expect(() => createToolkit({ workspace: ws.dir, preset: 'toString' as never })).toThrow(TypeError)
  })

  it.each([
    ['readLines', 0],
    ['readLines', -5],
    ['readLines', 1.5],
    ['readLines', Number.NaN],
    ['readLines', Number.POSITIVE_INFINITY],
    ['readTokens', '1000'],
    ['readLineChars', null],
    ['unknownLimit', 10],
  ])('refuses limits.%s = %s', (key, value) => {
    expect(() => createToolkit({ workspace: ws.dir, limits: { [key]: value } as never })).toThrow(TypeError)
  })

  it('refuses unknown policy options, a bad autonomy and a countTokens that is not a function', () => {
    expect(() => createToolkit({ workspace: ws.dir, policy: { yolo: true } as never })).toThrow(/yolo/)
    expect(() => createToolkit({ workspace: ws.dir, policy: { autonomy: 'yolo' as never } })).toThrow(/autonomy/)
    expect(() => createToolkit({ workspace: ws.dir, policy: { allowedPaths: 'x' as never } })).toThrow(/allowedPaths/)
    expect(() => createToolkit({ workspace: ws.dir, countTokens: 5 as never })).toThrow(/countTokens/)
    for (const autonomy of ['read_only', 'supervised', 'full'] as const) {
      expect(createToolkit({ workspace: ws.dir, policy: { autonomy } }).preset.autonomy).toBe(autonomy)
    }
  })

  it('knows every limit of SPEC §4', () => {
    const names = ['readLines', 'readLineChars', 'readTokens', 'unrangedReadBytes', 'pdfPagesPerRead', 'pdfMaxChars', 'pdfMaxBytes', 'searchResults', 'globResults', 'shellTimeoutSecs', 'shellOutputBytes', 'semanticTopK', 'imageMaxEdge', 'imageMaxBytes']
    for (const name of names) expect(createToolkit({ workspace: ws.dir, limits: { [name]: 3 } }).limits).toMatchObject({ [name]: 3 })
  })

  it('refuses an allowedPaths entry that does not exist', () => {
    expect(() => createToolkit({ workspace: ws.dir, policy: { allowedPaths: ['/definitely/not/here'] } })).toThrow(TypeError)
  })

  it('accepts every preset and exposes the resolved limits', () => {
    for (const preset of ['guarded', 'claude-code', 'revka', 'consent'] as const) {
      const tk = createToolkit({ workspace: ws.dir, preset })
      expect(tk.presetName).toBe(preset)
    }
    const tk = createToolkit({ workspace: ws.dir, limits: { readLines: 7 } })
    expect(tk.limits).toEqual({ ...DEFAULT_LIMITS, readLines: 7 })
    expect(DEFAULT_LIMITS).toMatchObject({ readLines: 2000, readLineChars: 2000, readTokens: 25_000, unrangedReadBytes: 10 * 1024 * 1024 })
  })
})

describe('session.call never throws', () => {
  const garbage: Array<[string, unknown]> = [
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
    ['a string', 'a.txt'],
    ['a boolean', true],
    ['an array', ['a.txt']],
    ['an empty object', {}],
    ['a numeric path', { path: 5 }],
    ['a null path', { path: null }],
    ['an object path', { path: { toString: () => 'a.txt' } }],
    ['an array path', { path: ['a.txt'] }],
    ['an unknown field', { path: 'a.txt', force: true }],
    ['a bigint offset', { path: 'a.txt', offset: 10n }],
    ['a NaN offset', { path: 'a.txt', offset: Number.NaN }],
    ['an infinite limit', { path: 'a.txt', limit: Number.POSITIVE_INFINITY }],
    ['a prototype-polluting key', JSON.parse('{"path":"a.txt","__proto__":{"x":1}}')],
    ['an object with a throwing getter', Object.defineProperty({}, 'path', { get: () => { throw new Error('boom') }, enumerable: true })],
    ['a function', () => 'a.txt'],
    ['a symbol', Symbol('a')],
  ]

  it.each(garbage)('file_read with %s returns an error result', async (_label, input) => {
    const r = await ws.session.call('file_read', input)
    expectToolResult(r)
    expect(r.isError).toBe(true)
  })

  it.each(garbage)('Read with %s returns an error result', async (_label, input) => {
    const r = await ws.session.call('Read', input)
    expectToolResult(r)
    expect(r.isError).toBe(true)
  })

  it('tolerates garbage names and options', async () => {
    for (const name of [undefined, null, 42, {}, '', '__proto__', 'constructor', 'toString']) {
      const r = await ws.session.call(name as unknown as string, { path: 'a.txt' })
      expectToolResult(r)
      expect(r.error?.code).toBe('INVALID_INPUT')
    }
    for (const options of [{ signal: 'nope' }, { signal: {} }, null]) {
      const r = await ws.session.call('file_read', { path: 'a.txt' }, options as never)
      expectToolResult(r)
    }
  })

  it('returns the ToolResult shape on success', async () => {
    const r = await ws.toolkit.createSession().call('file_read', { path: 'a.txt' })
    expectToolResult(r)
    expect(r).toEqual({
      isError: false,
      content: [{ type: 'text', text: '     1\talpha\n     2\tbeta\n     3\tgamma' }],
      data: expect.objectContaining({ path: 'a.txt', startLine: 1, endLine: 3, totalLines: 3 }),
    })
  })

  it('every error code it returns is a known one, and SPEC §6 codes are all defined', async () => {
    const s = createToolkit({ workspace: ws.dir, limits: { readTokens: 5 } }).createSession()
    const calls: Array<[string, unknown]> = [
      ['file_read', { path: 'missing.txt' }],
      ['file_read', { path: '.' }],
      ['file_read', { path: '../outside' }],
      ['file_read', { path: '/dev/zero' }],
      ['file_read', { path: 'a.txt', offset: -1 }],
      ['file_read', { path: 'a.txt', pages: '1' }],
      ['file_read', { path: 'huge.log', offset: 1 }],
      ['nope', {}],
    ]
    const codes = new Set<string>()
    for (const [name, input] of calls) {
      const r = await s.call(name, input)
      expect(r.isError).toBe(true)
      codes.add(r.error!.code)
      expect(ERROR_CODES as readonly string[]).toContain(r.error!.code)
    }
    expect(codes.size).toBeGreaterThanOrEqual(5)
    const spec = ['NO_CHANGE', 'NOT_READ', 'PARTIAL_READ', 'STALE', 'STRING_NOT_FOUND', 'AMBIGUOUS_MATCH', 'INVALID_INPUT', 'INVALID_PATTERN', 'NOT_FOUND', 'FILE_EXISTS', 'FILE_TOO_LARGE', 'ENCODING', 'TOKEN_LIMIT', 'BLOCKED_DEVICE', 'PATH_OUTSIDE_WORKSPACE', 'PROTECTED_PATH', 'PERMISSION_REQUIRED', 'AUTONOMY', 'APPROVAL_REQUIRED', 'COMMAND_DENIED', 'OTP_REQUIRED', 'RATE_LIMITED', 'TIMEOUT', 'BACKEND_UNAVAILABLE', 'EMERGENCY_STOP']
    expect(ERROR_CODES).toEqual(expect.arrayContaining(spec))
  })
})

describe('input validation', () => {
  it('an unknown tool is INVALID_INPUT naming it and the available tools', async () => {
    const r = await ws.session.call('file_delete', { path: 'a.txt' })
    const text = fails(r, 'INVALID_INPUT')
    expect(text).toContain('file_delete')
    expect(text).toContain('file_read')
    expect(r.data?.field).toBe('name')

    const claude = workspace({ preset: 'claude-code' }, ws.dir)
    const c = await claude.session.call('Delete', { file_path: 'a.txt' })
    expect(fails(c, 'INVALID_INPUT')).toContain('Delete')
    expect(textOf(c)).toContain('Read')
  })

  it.each([
    ['offset -1', { path: 'a.txt', offset: -1 }, 'offset'],
    ['offset 1.5', { path: 'a.txt', offset: 1.5 }, 'offset'],
    ['offset "10"', { path: 'a.txt', offset: '10' }, 'offset'],
    ['offset null', { path: 'a.txt', offset: null }, 'offset'],
    ['offset 1e300', { path: 'a.txt', offset: 1e300 }, 'offset'],
    ['limit 0', { path: 'a.txt', limit: 0 }, 'limit'],
    ['limit -3', { path: 'a.txt', limit: -3 }, 'limit'],
    ['limit 2.5', { path: 'a.txt', limit: 2.5 }, 'limit'],
    ['limit "50"', { path: 'a.txt', limit: '50' }, 'limit'],
    ['missing path', { offset: 1 }, 'path'],
    ['numeric path', { path: 7 }, 'path'],
    ['file_path instead of path', { file_path: 'a.txt' }, 'path'],
    ['an unknown field', { path: 'a.txt', encoding: 'latin1' }, 'encoding'],
  ])('file_read: %s is INVALID_INPUT naming the field', async (_label, input, field) => {
    const r = await ws.session.call('file_read', input)
    const text = fails(r, 'INVALID_INPUT')
    expect(r.data?.field).toBe(field)
    expect(text).toContain(field)
    expect(text).toContain('file_read')
  })

  it.each([
    ['path instead of file_path', { path: 'a.txt' }, 'file_path'],
    ['missing file_path', {}, 'file_path'],
    ['offset -1', { file_path: 'a.txt', offset: -1 }, 'offset'],
    ['limit 0', { file_path: 'a.txt', limit: 0 }, 'limit'],
  ])('Read: %s is INVALID_INPUT naming the field', async (_label, input, field) => {
    const r = await ws.session.call('Read', input)
    const text = fails(r, 'INVALID_INPUT')
    expect(r.data?.field).toBe(field)
    expect(text).toContain(field)
    expect(text).toContain('Read')
  })

  it.each([
    ['path: 5', { path: 5 }, 'path', /string/],
    ['path: null', { path: null }, 'path', /string/],
    ['offset: "10"', { path: 'a.txt', offset: '10' }, 'offset', /number|integer/],
    ['limit: true', { path: 'a.txt', limit: true }, 'limit', /number|integer/],
  ])('a present field of the wrong type (%s) is not reported as missing', async (_label, input, field, expected) => {
    const text = fails(await ws.session.call('file_read', input), 'INVALID_INPUT')
    expect(text).toContain(field)
    expect(text).not.toMatch(/is required/)
    expect(text).toMatch(expected)
  })

  it.each([
    ['null', null],
    ['a number', 42],
    ['a string', 'a.txt'],
    ['an array', ['a.txt']],
  ])('input that is not an object (%s) is reported as such', async (_label, input) => {
    const text = fails(await ws.session.call('file_read', input), 'INVALID_INPUT')
    expect(text).toMatch(/object/)
    expect(text).not.toMatch(/is required/)
  })

  it('accepts both dialects in any preset', async () => {
    for (const preset of ['guarded', 'claude-code', 'revka', 'consent'] as const) {
      const s = createToolkit({ workspace: ws.dir, preset }).createSession({ dedup: false })
      expect(ok(await s.call('file_read', { path: 'a.txt', limit: 1 }))).toMatch(/alpha/)
      expect(ok(await s.call('Read', { file_path: 'a.txt', limit: 1 }))).toMatch(/alpha/)
    }
  })

  it('prefixes error text with [error] in the consent preset only', async () => {
    const consent = workspace({ preset: 'consent' }, ws.dir)
    expect(fails(await consent.session.call('file_read', { path: 'missing.txt' }), 'NOT_FOUND')).toMatch(/^\[error\] /)
    expect(fails(await ws.session.call('file_read', { path: 'missing.txt' }), 'NOT_FOUND')).not.toMatch(/^\[error\]/)
  })
})

describe('typed session.read', () => {
  it('returns content and data on success', async () => {
    const out = await ws.toolkit.createSession().read({ path: 'a.txt', offset: 2, limit: 1 })
    expect(textOf(out)).toBe('     2\tbeta\n… 1 more line; continue with offset=3')
    expect(out.data).toMatchObject({ startLine: 2, endLine: 2, totalLines: 3 })
  })

  const cases: Array<[string, () => Promise<unknown>, new (...args: never[]) => FsgateError, string]> = [
    ['TOKEN_LIMIT', () => ws.toolkit.createSession().read({ path: 'tokens.txt' }), MaxFileReadTokenExceededError, 'TOKEN_LIMIT'],
    ['NOT_FOUND', () => ws.session.read({ path: 'missing.txt' }), NotFoundError, 'NOT_FOUND'],
    ['INVALID_INPUT', () => ws.session.read({ path: 'a.txt', offset: -1 }), InvalidInputError, 'INVALID_INPUT'],
    ['INVALID_INPUT (NUL)', () => ws.session.read({ path: 'a\0b' }), InvalidInputError, 'INVALID_INPUT'],
    ['PATH_OUTSIDE_WORKSPACE', () => ws.session.read({ path: '../outside.txt' }), PathOutsideWorkspaceError, 'PATH_OUTSIDE_WORKSPACE'],
    ['BLOCKED_DEVICE', () => ws.session.read({ path: '/dev/zero' }), BlockedDeviceError, 'BLOCKED_DEVICE'],
    ['FILE_TOO_LARGE', () => ws.session.read({ path: 'huge.log' }), FileTooLargeError, 'FILE_TOO_LARGE'],
    ['ABORTED', () => ws.session.read({ path: 'a.txt' }, { signal: AbortSignal.abort() }), AbortedError, 'ABORTED'],
    ['IS_DIRECTORY', () => ws.session.read({ path: '.' }), FsgateError, 'IS_DIRECTORY'],
    ['INVALID_PDF', () => ws.session.read({ path: 'doc.pdf' }), FsgateError, 'INVALID_PDF'],
  ]

  it.each(cases)('throws the %s class with its code', async (_label, run, Class, code) => {
    const err = await thrown(run)
    expect(err).toBeInstanceOf(Class)
    expect(err).toBeInstanceOf(FsgateError)
    expect(err).toBeInstanceOf(Error)
    expect((err as FsgateError).code).toBe(code)
    expect((err as FsgateError).name).toBe(Class.name)
    expect((err as FsgateError).message.length).toBeGreaterThan(10)
  })

  it('MaxFileReadTokenExceededError carries the suggested limit', async () => {
    const err = (await thrown(() => ws.toolkit.createSession().read({ path: 'tokens.txt' }))) as FsgateError
    expect(err.data?.suggestedLimit).toBeTypeOf('number')
    expect(err.errorCode).toBeUndefined()
  })
})

describe('definitions', () => {
  const formats = ['anthropic', 'openai', 'mcp'] as const
  type Flat = { name: string; description: string; schema: Record<string, unknown> }

  function flat(def: ToolDefinition, format: (typeof formats)[number]): Flat {
    if (format === 'anthropic') {
      expect(Object.keys(def).sort()).toEqual(['description', 'input_schema', 'name'])
      const d = def as { name: string; description: string; input_schema: Record<string, unknown> }
      return { name: d.name, description: d.description, schema: d.input_schema }
    }
    if (format === 'openai') {
      expect(Object.keys(def).sort()).toEqual(['function', 'type'])
      const d = def as { type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }
      expect(d.type).toBe('function')
      expect(Object.keys(d.function).sort()).toEqual(['description', 'name', 'parameters'])
      return { name: d.function.name, description: d.function.description, schema: d.function.parameters }
    }
    expect(Object.keys(def).sort()).toEqual(['description', 'inputSchema', 'name'])
    const d = def as { name: string; description: string; inputSchema: Record<string, unknown> }
    return { name: d.name, description: d.description, schema: d.inputSchema }
  }

  function checkSchema(schema: Record<string, unknown>) {
    expect(schema.type).toBe('object')
    expect(schema.$schema).toBeUndefined()
    expect(schema.additionalProperties).toBe(false)
    expect(typeof schema.properties).toBe('object')
    const props = schema.properties as Record<string, Record<string, unknown>>
    for (const key of (schema.required as string[] | undefined) ?? []) expect(props).toHaveProperty(key)
    for (const prop of Object.values(props)) expect(typeof prop.description).toBe('string')
    expect(() => JSON.parse(JSON.stringify(schema))).not.toThrow()
  }

  it.each(formats)('claude dialect (%s): Read with file_path, offset, limit, pages, allow_large', (format) => {
    const defs = ws.toolkit.definitions({ dialect: 'claude', format }).map((d) => flat(d, format))
    const read = defs.find((d) => d.name === 'Read')
    expect(read).toBeDefined()
    expect(defs.map((d) => d.name)).not.toContain('file_read')
    checkSchema(read!.schema)
    expect(read!.schema.required).toEqual(['file_path'])
    const props = read!.schema.properties as Record<string, Record<string, unknown>>
    expect(Object.keys(props).sort()).toEqual(['allow_large', 'file_path', 'limit', 'offset', 'pages'])
    expect(props.file_path.type).toBe('string')
    // Numbers, as Claude Code's sdk-tools.d.ts types them.
    expect(props.offset).toMatchObject({ type: 'number', minimum: 0 })
    expect(props.limit).toMatchObject({ type: 'number', minimum: 1 })
    expect(props.allow_large.type).toBe('boolean')
    expect(read!.description).toContain('Grep')
    expect(read!.description).not.toContain('content_search')
  })

  it.each(formats)('revka dialect (%s): file_read with path, offset, limit, pages', (format) => {
    const defs = ws.toolkit.definitions({ dialect: 'revka', format }).map((d) => flat(d, format))
    const read = defs.find((d) => d.name === 'file_read')
    expect(read).toBeDefined()
    expect(defs.map((d) => d.name)).not.toContain('Read')
    checkSchema(read!.schema)
    expect(read!.schema.required).toEqual(['path'])
    const props = read!.schema.properties as Record<string, Record<string, unknown>>
    expect(Object.keys(props).sort()).toEqual(['limit', 'offset', 'pages', 'path'])
    expect(props.offset).toMatchObject({ type: 'integer', minimum: 0 })
    expect(props.limit).toMatchObject({ type: 'integer', minimum: 1 })
    expect(read!.description).toContain('content_search')
    expect(read!.description).not.toContain('Grep')
  })

  it.each(formats)('consent dialect (%s) has no Read tool, only its own names', (format) => {
    const defs = ws.toolkit.definitions({ dialect: 'consent', format }).map((d) => flat(d, format))
    for (const d of defs) {
      expect(['write_file', 'edit']).toContain(d.name)
      checkSchema(d.schema)
    }
    expect(defs.map((d) => d.name)).not.toContain('Read')
    expect(defs.map((d) => d.name)).not.toContain('file_read')
  })

  it.each(formats)('all dialects (%s): every family, no duplicate names', (format) => {
    const defs = ws.toolkit.definitions({ dialect: 'all', format }).map((d) => flat(d, format))
    const names = defs.map((d) => d.name)
    expect(names).toContain('file_read')
    expect(names).toContain('Read')
    expect(new Set(names).size).toBe(names.length)
    for (const d of defs) {
      checkSchema(d.schema)
      expect(d.description.length).toBeGreaterThan(50)
    }
  })

  it('defaults to the preset dialect and the anthropic format', () => {
    const names = (tk: ReturnType<typeof createToolkit>) => tk.definitions().map((d) => flat(d, 'anthropic').name)
    expect(names(ws.toolkit)).toContain('file_read')
    expect(names(createToolkit({ workspace: ws.dir, preset: 'revka' }))).toContain('file_read')
    const claude = names(createToolkit({ workspace: ws.dir, preset: 'claude-code' }))
    expect(claude).toContain('Read')
    expect(claude).not.toContain('file_read')
    expect(names(createToolkit({ workspace: ws.dir, preset: 'consent' }))).not.toContain('file_read')
  })

  it('refuses an unknown dialect or format with TypeError', () => {
    expect(() => ws.toolkit.definitions({ dialect: 'gpt' as never })).toThrow(TypeError)
    expect(() => ws.toolkit.definitions({ format: 'gemini' as never })).toThrow(TypeError)
  })

  it('pins each tool input schema (snapshot)', () => {
    const defs = ws.toolkit.definitions({ dialect: 'all', format: 'anthropic' }).map((d) => flat(d, 'anthropic'))
    expect(defs.length).toBeGreaterThan(0)
    for (const d of defs) expect(d.schema).toMatchSnapshot(`${d.name} input schema`)
  })

  it('descriptions tell the model to search before reading a big tree', () => {
    const [claude] = ws.toolkit.definitions({ dialect: 'claude' }).map((d) => flat(d, 'anthropic')).filter((d) => d.name === 'Read')
    const [revka] = ws.toolkit.definitions({ dialect: 'revka' }).map((d) => flat(d, 'anthropic')).filter((d) => d.name === 'file_read')
    expect(claude.description).toMatch(/Grep[^.]*first|first[^.]*Grep/)
    expect(revka.description).toMatch(/content_search[^.]*first|first[^.]*content_search/)
    for (const d of [claude, revka]) expect(d.description).toMatch(/offset/)
  })
})

describe('AbortSignal', () => {
  it('an already-aborted signal gives ABORTED without reading', async () => {
    const r = await ws.session.call('file_read', { path: 'a.txt' }, { signal: AbortSignal.abort() })
    expectToolResult(r)
    fails(r, 'ABORTED')
    expect(textOf(r)).not.toContain('alpha')
  })

  it('aborting mid-read of a 200 MB file gives ABORTED quickly', async () => {
    // A new toolkit for each read: no line index yet, so each is a full pass over the file.
    const fresh = () => createToolkit({ workspace: ws.dir }).createSession({ dedup: false })
    const lastLines = HUGE_BYTES / HUGE_LINE.length
    // Warm the page cache and measure one full pass, so the cancelled run can be compared with it.
    let t = performance.now()
    const full = await fresh().call('file_read', { path: 'huge.log', offset: lastLines - 1 })
    const fullMs = performance.now() - t
    expect(ok(full)).toBe(`${lastLines - 1}\t${HUGE_LINE.trimEnd()}\n${lastLines}\t${HUGE_LINE.trimEnd()}`)

    const controller = new AbortController()
    t = performance.now()
    const pending = fresh().call('file_read', { path: 'huge.log', offset: lastLines - 1 }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 2)
    const r = await pending
    const cancelledMs = performance.now() - t
    expectToolResult(r)
    fails(r, 'ABORTED')
    expect(cancelledMs).toBeLessThan(Math.max(1000, fullMs))
  })

  it('a ranged read near the end of 200 MB keeps memory proportional to the page', async () => {
    const s = ws.toolkit.createSession({ dedup: false })
    const lastLines = HUGE_BYTES / HUGE_LINE.length
    // The peak resident size, from the kernel's high-water mark where there is one, else sampled.
    const hwm = () => {
      const m = /VmHWM:\s+(\d+) kB/.exec(fs.existsSync('/proc/self/status') ? fs.readFileSync('/proc/self/status', 'utf8') : '')
      return m ? Number(m[1]) * 1024 : 0
    }
    const before = process.memoryUsage().rss
    const hwmBefore = hwm()
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 1)
    const reads = await Promise.all([0, 1, 2, 3].map((k) => s.call('file_read', { path: 'huge.log', offset: lastLines - k, limit: 1 })))
    clearInterval(sampler)
    peak = Math.max(peak, process.memoryUsage().rss)
    for (const [k, r] of reads.entries()) expect(ok(r)).toMatch(new RegExp(`^${lastLines - k}\t`))
    const MiB = 1024 * 1024
    expect((peak - before) / MiB).toBeLessThan(64)
    if (hwmBefore > 0) expect((hwm() - Math.max(hwmBefore, before)) / MiB).toBeLessThan(64)
  })

  it('a signal that fires after the read finished changes nothing', async () => {
    const controller = new AbortController()
    const r = await ws.toolkit.createSession().call('file_read', { path: 'a.txt' }, { signal: controller.signal })
    controller.abort()
    expect(ok(r)).toContain('alpha')
  })
})

describe('engine helpers', () => {
  it('countTokens counts o200k tokens exactly, hashBuffer and hashFile agree', async () => {
    expect(await countTokens('Hello, world!')).toBe(4)
    expect(await countTokens('')).toBe(0)
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 7)
    const file = path.join(ws.dir, 'hash-me.bin')
    fs.writeFileSync(file, bytes)
    const h = await hashFile(file)
    expect(h).toMatch(/^[0-9a-f]{32}$/)
    expect(await hashBuffer(bytes)).toBe(h)
    expect(await hashBuffer(new Uint8Array(bytes))).toBe(h)
    expect(await hashBuffer(Buffer.from('other'))).not.toBe(h)
  })

  it('a native call that throws at once still lets the process exit', () => {
    const script = `import { countTokens } from ${JSON.stringify(path.resolve(import.meta.dirname, '../dist/index.js'))}
try { await countTokens(123) } catch (e) { console.log(e.code) }`
    const out = execFileSync('node', ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 })
    expect(out.trim()).toBe('INTERNAL')
  })

  it('hashFile refuses what it must not read, with codes', async () => {
    await expect(hashFile(path.join(ws.dir, 'nope.bin'))).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(hashFile('/dev/zero')).rejects.toMatchObject({ code: 'BLOCKED_DEVICE' })
    await expect(hashFile(ws.dir)).rejects.toMatchObject({ code: 'IS_DIRECTORY' })
    await expect(countTokens('x', { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('sessions have distinct ids and independent state', async () => {
    const a = ws.toolkit.createSession()
    const b = ws.toolkit.createSession()
    expect(a.id).not.toBe(b.id)
    ok(await a.call('file_read', { path: 'a.txt' }))
    expect((await b.call('file_read', { path: 'a.txt' })).data?.unchanged).toBeUndefined()
  })

  it('reads relative to the workspace, not the process cwd', async () => {
    const cwd = process.cwd()
    const other = tempDir('fsgate-cwd-')
    put(other, 'a.txt', 'wrong file\n')
    process.chdir(other)
    try {
      expect(ok(await ws.toolkit.createSession().call('file_read', { path: 'a.txt' }))).toContain('alpha')
    } finally {
      process.chdir(cwd)
    }
    expect(fs.existsSync(path.join(other, 'a.txt'))).toBe(true)
  })
})
