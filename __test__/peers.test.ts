/**
 * The peers' own shipped tool definitions, read from the pinned devDependencies: Claude
 * Code's `sdk-tools.d.ts` (@anthropic-ai/claude-code) and gemini-cli's declarations in
 * its bundle (@google/gemini-cli). For each tool fsgate answers to, every field the peer
 * declares must be in fsgate's schema with a compatible type, a call with a valid value
 * of every field (each value of an enum, both of a boolean) must be accepted, and the
 * answer must have the peer's shape. When a new peer version adds, drops or retypes a
 * field, this is the test that fails.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

import ts from 'typescript'
import { afterAll, describe, expect, it } from 'vitest'

import type { JsonSchema, Session, ToolResult } from '../ts/index.js'
import { ok, put, removeTempDirs, textOf, workspace } from './helpers.js'
import { textPdf } from './pdf-make.js'

afterAll(removeTempDirs)

const require = createRequire(import.meta.url)

// ---------------------------------------------------------------------------------------
// Claude Code

/** A declared field: its name, whether it may be left out, and the values of its type to try. */
interface Field {
  name: string
  optional: boolean
  kind: 'string' | 'number' | 'boolean' | 'enum' | 'other'
  values: Array<string | number | boolean>
}

function claudeInterfaces(): Map<string, Field[]> {
  const file = require.resolve('@anthropic-ai/claude-code/sdk-tools.d.ts')
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const out = new Map<string, Field[]>()
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node)) return
    const fields: Field[] = []
    for (const m of node.members) {
      if (!ts.isPropertySignature(m) || !m.type) continue
      const name = ts.isStringLiteral(m.name) || ts.isIdentifier(m.name) ? m.name.text : m.name.getText(source)
      fields.push({ name, optional: m.questionToken !== undefined, ...typeOf(m.type) })
    }
    out.set(node.name.text, fields)
  })
  return out
}

function typeOf(t: ts.TypeNode): Pick<Field, 'kind' | 'values'> {
  switch (t.kind) {
    case ts.SyntaxKind.StringKeyword:
      return { kind: 'string', values: [] }
    case ts.SyntaxKind.NumberKeyword:
      return { kind: 'number', values: [] }
    case ts.SyntaxKind.BooleanKeyword:
      return { kind: 'boolean', values: [true, false] }
  }
  if (ts.isUnionTypeNode(t) && t.types.every((u) => ts.isLiteralTypeNode(u) && ts.isStringLiteral(u.literal))) {
    return { kind: 'enum', values: t.types.map((u) => ((u as ts.LiteralTypeNode).literal as ts.StringLiteral).text) }
  }
  if (ts.isLiteralTypeNode(t) && (t.literal.kind === ts.SyntaxKind.TrueKeyword || t.literal.kind === ts.SyntaxKind.FalseKeyword)) {
    return { kind: 'boolean', values: [t.literal.kind === ts.SyntaxKind.TrueKeyword] }
  }
  return { kind: 'other', values: [] }
}

/** Claude Code's tools that fsgate answers to, by their input interface. */
const CLAUDE_TOOLS: Record<string, string> = {
  Read: 'FileReadInput',
  Write: 'FileWriteInput',
  Edit: 'FileEditInput',
  Glob: 'GlobInput',
  Grep: 'GrepInput',
  Bash: 'BashInput',
  NotebookEdit: 'NotebookEditInput',
  TaskStop: 'TaskStopInput',
}

/**
 * The required fields of the peer's structured output that fsgate's `data` has, per tool,
 * and the ones it leaves out, each with the reason.
 */
const CLAUDE_OUTPUTS: Record<string, { type: string; omitted: Record<string, string> }> = {
  Grep: { type: 'GrepOutput', omitted: {} },
  Glob: { type: 'GlobOutput', omitted: { durationMs: 'no call is timed into its data; the host times calls' } },
  Bash: { type: 'BashOutput', omitted: {} },
  TaskStop: { type: 'TaskStopOutput', omitted: {} },
  NotebookEdit: {
    type: 'NotebookEditOutput',
    omitted: { original_file: 'a notebook may be 100 MB: history() and undo() keep what was replaced', updated_file: 'the file itself holds it' },
  },
}

/** A valid value for a field, by tool and name, where any value of the type would not do. */
function claudeValue(tool: string, f: Field, fixture: Fixture): string | number | boolean {
  const byName: Record<string, string | number | boolean> = {
    file_path: tool === 'Read' ? 'doc.pdf' : 'a.txt',
    notebook_path: fixture.notebook,
    pattern: tool === 'Glob' ? '*.txt' : 'hello',
    path: '.',
    glob: '*.txt',
    type: 'txt',
    content: 'hello world\n',
    old_string: 'hello world',
    new_string: 'hi world',
    command: 'echo hi',
    description: 'Say hi',
    timeout: 20_000,
    offset: tool === 'Read' ? 1 : 0,
    limit: 5,
    pages: '1',
    head_limit: 10,
    cell_id: 'c1',
    new_source: 'print(2)',
    task_id: fixture.task,
    shell_id: fixture.task,
  }
  if (f.name in byName) return byName[f.name]
  if (f.kind === 'number') return 1
  if (f.kind === 'boolean') return false
  if (f.kind === 'enum') return f.values[0] as string
  return 'x'
}

interface Fixture {
  dir: string
  session: Session
  notebook: string
  task: string
}

async function claudeFixture(): Promise<Fixture> {
  const { dir, session } = workspace({ preset: 'claude-code' })
  put(dir, 'a.txt', 'hello world\nhello again\n')
  fs.writeFileSync(path.join(dir, 'doc.pdf'), textPdf([['hello page one']]))
  const notebook = path.join(dir, 'n.ipynb')
  fs.writeFileSync(notebook, JSON.stringify({ cells: [{ cell_type: 'code', id: 'c1', metadata: {}, outputs: [], execution_count: null, source: ['print(1)'] }], metadata: {}, nbformat: 4, nbformat_minor: 5 }, null, 1))
  ok(await session.call('Read', { file_path: 'a.txt' }))
  ok(await session.call('Read', { file_path: notebook }))
  const bg = await session.call('Bash', { command: 'sleep 30', run_in_background: true })
  return { dir, session, notebook, task: (bg.data as { backgroundTaskId: string }).backgroundTaskId }
}

/** The JSON Schema type(s) a TypeScript field type may have in fsgate's schema. */
// A `number` of the d.ts admits fractions (Claude Code's schemas are z.number()): fsgate's
// field is a number too, not an integer that would refuse 1.5.
const COMPATIBLE: Record<Field['kind'], string[]> = { string: ['string'], number: ['number'], boolean: ['boolean'], enum: ['string'], other: [] }

/** fsgate's claude tools that Claude Code does not declare, each with the reason. */
const CLAUDE_FSGATE_ONLY: Record<string, string> = {
  TaskOutput: "Claude Code 2.1 reads a task's output with Read of its output file (served too); hosts on older versions send TaskOutput",
}

describe("Claude Code's sdk-tools.d.ts", () => {
  const interfaces = claudeInterfaces()
  const version = (require('@anthropic-ai/claude-code/package.json') as { version: string }).version

  it(`declares the tools fsgate answers to (claude-code ${version})`, () => {
    for (const iface of Object.values(CLAUDE_TOOLS)) expect(interfaces.has(iface), iface).toBe(true)
  })

  it('every claude tool of fsgate is checked against its declaration, or is fsgate\'s own with a reason', () => {
    const { toolkit } = workspace()
    const names = toolkit.definitions({ dialect: 'claude' }).map((d) => ('name' in d ? d.name : ''))
    for (const name of names) expect(name in CLAUDE_TOOLS || name in CLAUDE_FSGATE_ONLY, `${name} is not checked`).toBe(true)
    for (const name of Object.keys(CLAUDE_FSGATE_ONLY)) expect(interfaces.has(`${name}Input`), `${name} is declared now: check it`).toBe(false)
  })

  it("fsgate's claude schemas have every declared field, with a compatible type, required as declared", () => {
    const { toolkit } = workspace()
    const defs = new Map(toolkit.definitions({ dialect: 'claude' }).map((d) => ['name' in d ? d.name : '', 'input_schema' in d ? d.input_schema : ({} as JsonSchema)]))
    for (const [tool, iface] of Object.entries(CLAUDE_TOOLS)) {
      const schema = defs.get(tool) as { properties: Record<string, { type?: string; enum?: string[] }>; required?: string[] }
      expect(schema, tool).toBeDefined()
      for (const f of interfaces.get(iface) ?? []) {
        const ours = schema.properties[f.name]
        expect(ours, `${tool}.${f.name}`).toBeDefined()
        if (f.kind !== 'other') expect(COMPATIBLE[f.kind], `${tool}.${f.name}: ${ours.type}`).toContain(ours.type)
        if (f.kind === 'enum') expect(ours.enum, `${tool}.${f.name}`).toEqual(expect.arrayContaining(f.values))
        expect((schema.required ?? []).includes(f.name), `${tool}.${f.name} required`).toBe(!f.optional && !(tool === 'TaskStop'))
      }
    }
  })

  it('a call with every declared field, each value of its type, is accepted and answered in the peer\'s shape', async () => {
    for (const [tool, iface] of Object.entries(CLAUDE_TOOLS)) {
      const fields = interfaces.get(iface) ?? []
      // Each variant: every field with its base value, and one field at each of its other values.
      const variants: Array<Record<string, unknown>> = []
      const fx0 = await claudeFixture()
      const base = Object.fromEntries(fields.map((f) => [f.name, claudeValue(tool, f, fx0)]))
      variants.push(base)
      for (const f of fields) for (const v of f.values) if (v !== base[f.name]) variants.push({ ...base, [f.name]: v })
      // A number field at a fraction: the peer's type admits it, so fsgate must too.
      for (const f of fields) if (f.kind === 'number') variants.push({ ...base, [f.name]: (base[f.name] as number) + 0.5 })
      for (const input of variants) {
        const fx = await claudeFixture()
        const call = { ...input }
        for (const key of ['task_id', 'shell_id', 'notebook_path'] as const) if (key in call) call[key] = { task_id: fx.task, shell_id: fx.task, notebook_path: fx.notebook }[key]
        if (tool === 'NotebookEdit' && call.edit_mode === 'insert' && call.cell_type === undefined) call.cell_type = 'code'
        const r = await fx.session.call(tool, call)
        expect(r.error?.code, `${tool} ${JSON.stringify(call)}: ${textOf(r)}`).not.toBe('INVALID_INPUT')
        expect(r.isError, `${tool} ${JSON.stringify(call)}: ${textOf(r)}`).toBe(false)
        checkShape(tool, call, r, interfaces)
        await fx.session.close()
      }
      await fx0.session.close()
    }
  })
})

/** The answer in Claude Code's shape: its text, and the required fields of its output type. */
function checkShape(tool: string, input: Record<string, unknown>, r: ToolResult, interfaces: Map<string, Field[]>): void {
  const text = textOf(r)
  switch (tool) {
    case 'Read':
      if (input.file_path === 'a.txt') expect(text).toMatch(/^\d+\t/)
      break
    case 'Grep':
      if (input.output_mode === 'content') expect(text.split('\n')[0]).toMatch(/^a\.txt:(\d+:)?/)
      if (input.output_mode === 'files_with_matches') expect(text).toMatch(/^Found 1 file\na\.txt/)
      if (input.output_mode === 'count') expect(text).toMatch(/^Found \d+ matches in 1 file\na\.txt:\d+/)
      break
    case 'Bash':
      if (input.run_in_background === true) expect(text).toMatch(/^Command running in background with ID: b[0-9a-f]{8}\. Output is being written to: \S+/)
      else expect(text).toBe('hi')
      break
    case 'NotebookEdit': {
      const mode = (input.edit_mode as string | undefined) ?? 'replace'
      expect(text).toMatch(mode === 'replace' ? /^Updated cell c1 with print\(2\)$/ : mode === 'insert' ? /^Inserted cell [0-9a-f]{8} with print\(2\)$/ : /^Deleted cell c1$/)
      break
    }
    case 'TaskStop':
      expect(text).toMatch(/^Successfully stopped task: b[0-9a-f]{8} \(sleep 30\)$/)
      break
  }
  const out = CLAUDE_OUTPUTS[tool]
  if (!out) return
  for (const f of interfaces.get(out.type) ?? []) {
    if (f.optional || f.name in out.omitted) continue
    expect(r.data, `${tool} data.${f.name} (${out.type})`).toHaveProperty(f.name)
  }
}

// ---------------------------------------------------------------------------------------
// gemini-cli

interface GeminiDecl {
  name: string
  parametersJsonSchema: { properties: Record<string, JsonProp>; required?: string[] }
}
interface JsonProp {
  type?: string
  items?: JsonProp
  properties?: Record<string, JsonProp>
  minimum?: number
  maximum?: number
  enum?: unknown[]
}

/**
 * gemini-cli's tool declarations, evaluated from its bundle: the base declarations and
 * the two model families' sets (default-legacy and gemini-3), between their source markers.
 */
function geminiSets(): { version: string; sets: Record<string, Record<string, GeminiDecl>> } {
  const pkg = require.resolve('@google/gemini-cli/package.json')
  const version = (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { version: string }).version
  const bundle = path.join(path.dirname(pkg), 'bundle')
  const marker = '// packages/core/src/tools/definitions/model-family-sets/gemini-3.ts'
  const file = fs
    .readdirSync(bundle)
    .filter((f) => f.endsWith('.js'))
    .map((f) => path.join(bundle, f))
    .find((f) => fs.readFileSync(f, 'utf8').includes(marker))
  if (!file) throw new Error(`no file of ${bundle} holds gemini-cli's tool declarations`)
  const src = fs.readFileSync(file, 'utf8')
  const between = (from: string, to: string, last = false) => {
    const a = last ? src.lastIndexOf(from) : src.indexOf(from)
    const b = src.indexOf(to, a)
    if (a < 0 || b < 0) throw new Error(`gemini-cli's bundle has no ${from} … ${to}`)
    return src.slice(a, b)
  }
  const code = [
    between('// packages/core/src/tools/definitions/base-declarations.ts', '// packages/core/src/tools/definitions/dynamic-declaration-helpers.ts'),
    between('// packages/core/src/tools/definitions/dynamic-declaration-helpers.ts', '// packages/core/src/tools/definitions/coreTools.ts', true),
  ].join('\n')
  // Names the sections use but do not define (constants for descriptions, node:os) come from here.
  const backing: Record<string, unknown> = { os17: { platform: () => 'linux' } }
  const scope = new Proxy(backing, {
    has: (_t, key) => typeof key === 'string',
    get: (t, key) => (key === Symbol.unscopables ? undefined : key in t ? t[key as string] : key in globalThis ? (globalThis as Record<string | symbol, unknown>)[key] : '?'),
    set: (t, key, value) => {
      t[key as string] = value
      return true
    },
  })
  // The peer's own declarations, from the pinned package, evaluated in a closed scope.
  const sets = new Function('scope', `with (scope) {\n${code}\nreturn { 'default-legacy': DEFAULT_LEGACY_SET, 'gemini-3': GEMINI_3_SET } }`)(scope)
  const decls: Record<string, Record<string, GeminiDecl>> = {}
  for (const [family, set] of Object.entries(sets as Record<string, Record<string, unknown>>)) {
    decls[family] = {}
    for (const key of GEMINI_TOOLS) {
      const decl = set[key]
      // run_shell_command is made by a function of (interactive shell, efficiency, sandboxing): all on, so every field is declared.
      decls[family][key] = (typeof decl === 'function' ? decl(true, true, true) : decl) as GeminiDecl
    }
  }
  return { version, sets: decls }
}

/** gemini-cli's tools fsgate answers to, by their key in a set. */
const GEMINI_TOOLS = ['read_file', 'write_file', 'replace', 'glob', 'grep_search', 'grep_search_ripgrep', 'list_directory', 'run_shell_command']

/** fsgate's gemini tools that gemini-cli does not declare, each with the reason. */
const GEMINI_FSGATE_ONLY: Record<string, string> = {
  task_output: "gemini-cli shows a background command's output in its own UI; a model on fsgate reads it with this",
  task_stop: 'gemini-cli stops background commands from its UI; a model on fsgate stops them with this',
}

function geminiValue(tool: string, name: string, p: JsonProp): unknown {
  const byName: Record<string, unknown> = {
    file_path: tool === 'write_file' ? 'new.txt' : 'a.txt',
    dir_path: '.',
    pattern: tool === 'glob' ? '*.txt' : 'hello',
    include_pattern: '*.txt',
    exclude_pattern: 'never-there',
    content: 'hello\n',
    instruction: 'Greet more briefly',
    old_string: 'hello world',
    new_string: 'hi world',
    command: 'echo hi',
    description: 'Say hi',
    start_line: 1,
    end_line: 2,
    delay_ms: 0,
    ignore: ['*.log'],
  }
  if (name in byName) return byName[name]
  switch (p.type) {
    case 'boolean':
      return false
    case 'integer':
    case 'number':
      return Math.max(1, p.minimum ?? 1)
    case 'array':
      return [geminiValue(tool, `${name}[]`, p.items ?? { type: 'string' })]
    case 'object':
      return Object.fromEntries(Object.entries(p.properties ?? {}).map(([k, v]) => [k, geminiValue(tool, k, v)]))
    default:
      return 'x'
  }
}

/** The answer in gemini-cli's shape. */
const GEMINI_SHAPES: Record<string, RegExp> = {
  read_file: /^(IMPORTANT: The file content has been truncated\.\n[\s\S]*--- FILE CONTENT \(truncated\) ---\n)?hello world\n/,
  write_file: /^Successfully (created and wrote to new file|overwrote file): \S+new\.txt\.$/,
  replace: /^Successfully modified file: \S+a\.txt \(1 replacements\)\./,
  glob: /^Found 1 file\(s\) matching "\*\.txt" within \S+, sorted by modification time \(newest first\):\n\/\S+a\.txt$/,
  grep_search: /^(Found \d+ match(es)? for pattern "hello" in path "\.".*:\n---\nFile: a\.txt\nL1: hello world|Found 1 files with matches for pattern "hello" in path "\.".*:\na\.txt|No matches found)/,
  list_directory: /^Directory listing for \S+:\n/,
  run_shell_command: /^(Output: hi|Command moved to background \(PID: \d+\))/,
}

describe("gemini-cli's bundled declarations", () => {
  const { version, sets } = geminiSets()

  it(`are found for both model families (gemini-cli ${version})`, () => {
    for (const set of Object.values(sets)) for (const tool of GEMINI_TOOLS) expect(set[tool]?.parametersJsonSchema?.properties, tool).toBeTypeOf('object')
  })

  it("every gemini tool of fsgate is checked against a declaration, or is fsgate's own with a reason", () => {
    const { toolkit } = workspace({ preset: 'gemini-cli' })
    const declared = new Set(Object.values(sets).flatMap((set) => GEMINI_TOOLS.map((key) => set[key].name)))
    for (const d of toolkit.definitions({ format: 'mcp' })) {
      const name = 'name' in d ? d.name : ''
      expect(declared.has(name) || name in GEMINI_FSGATE_ONLY, `${name} is not checked`).toBe(true)
    }
    for (const name of Object.keys(GEMINI_FSGATE_ONLY)) expect(declared.has(name), `${name} is declared now: check it`).toBe(false)
  })

  it('number fields take what the declaration takes: integers where it says integer, fractions where it says number, its whole range', async () => {
    const { dir, session } = workspace({ preset: 'gemini-cli', dedup: false })
    put(dir, 'a.txt', 'hello world\nsecond\n')
    ok(await session.call('read_file', { file_path: 'a.txt' }))
    const defs = new Map(session.toolkit.definitions({ format: 'mcp' }).map((d) => ['name' in d ? d.name : '', 'inputSchema' in d ? d.inputSchema : ({} as JsonSchema)]))
    let checked = 0
    for (const [family, set] of Object.entries(sets)) {
      for (const key of GEMINI_TOOLS) {
        const decl = set[key]
        const ours = defs.get(decl.name) as { properties: Record<string, JsonProp> }
        const base = Object.fromEntries(Object.entries(decl.parametersJsonSchema.properties).map(([n, p]) => [n, geminiValue(decl.name, n, p)]))
        if (decl.name === 'run_shell_command') delete base.additional_permissions
        for (const [name, p] of Object.entries(decl.parametersJsonSchema.properties)) {
          if (p.type !== 'integer' && p.type !== 'number') continue
          checked++
          const what = `${family}: ${decl.name}.${name} (declared ${p.type}, min ${p.minimum}, max ${p.maximum})`
          expect(ours.properties[name].type, what).toBe(p.type)
          const call = async (value: number) => session.call(decl.name, { ...base, [name]: value })
          const at = base[name] as number
          if (p.type === 'integer') expect((await call(at + 0.5)).error?.code, `${what} at ${at + 0.5}`).toBe('INVALID_INPUT')
          else expect((await call(at + 0.5)).error?.code, `${what} at ${at + 0.5}`).not.toBe('INVALID_INPUT')
          // The ends of the declared range are valid; fsgate may cap a value, not refuse it.
          const ends = [p.minimum, p.maximum ?? (ours.properties[name].maximum !== undefined ? ours.properties[name].maximum + 1 : undefined)]
          for (const v of ends) if (v !== undefined) expect((await call(v)).error?.code, `${what} at ${v}`).not.toBe('INVALID_INPUT')
        }
      }
    }
    expect(checked).toBeGreaterThan(0)
    await session.close()
  })

  it("fsgate's gemini schemas have every declared field, typed alike, and call every one of them", async () => {
    const { toolkit } = workspace({ preset: 'gemini-cli' })
    const defs = new Map(toolkit.definitions({ format: 'mcp' }).map((d) => ['name' in d ? d.name : '', 'inputSchema' in d ? d.inputSchema : ({} as JsonSchema)]))
    for (const [family, set] of Object.entries(sets)) {
      for (const key of GEMINI_TOOLS) {
        const decl = set[key]
        const ours = defs.get(decl.name) as { properties: Record<string, JsonProp>; required?: string[] }
        expect(ours, `${family}: ${decl.name}`).toBeDefined()
        for (const [name, p] of Object.entries(decl.parametersJsonSchema.properties)) {
          const mine = ours.properties[name]
          expect(mine, `${family}: ${decl.name}.${name}`).toBeDefined()
          expect(mine.type, `${family}: ${decl.name}.${name} is ${mine.type}, declared ${p.type}`).toBe(p.type)
          if (p.enum) expect(mine.enum, `${family}: ${decl.name}.${name}`).toEqual(expect.arrayContaining(p.enum))
        }
        for (const name of decl.parametersJsonSchema.required ?? []) expect(ours.required ?? [], `${decl.name}.${name} required`).toContain(name)

        // Every field at once, each boolean at true as well, each value of an enum.
        const base = Object.fromEntries(Object.entries(decl.parametersJsonSchema.properties).map(([n, p]) => [n, geminiValue(decl.name, n, p)]))
        const variants = [
          base,
          ...Object.entries(decl.parametersJsonSchema.properties)
            .filter(([, p]) => p.type === 'boolean')
            .map(([n]) => ({ ...base, [n]: true })),
          // Each value of an enum.
          ...Object.entries(decl.parametersJsonSchema.properties).flatMap(([n, p]) => (p.enum ?? []).filter((v) => v !== base[n]).map((v) => ({ ...base, [n]: v }))),
        ]
        for (const input of variants) {
          const { dir, session } = workspace({ preset: 'gemini-cli', dedup: false })
          put(dir, 'a.txt', 'hello world\nsecond\n')
          ok(await session.call('read_file', { file_path: 'a.txt' }))
          // Asking for more than the sandbox gives needs the host's leave: this host gives none.
          const call = { ...input }
          if (decl.name === 'run_shell_command') delete call.additional_permissions
          const r = await session.call(decl.name, call)
          expect(r.isError, `${family}: ${decl.name} ${JSON.stringify(call)}: ${textOf(r)}`).toBe(false)
          expect(textOf(r), `${decl.name} ${JSON.stringify(call)}`).toMatch(GEMINI_SHAPES[decl.name])
          await session.close()
        }
      }
    }
  })

  it('additional_permissions asks for an unsandboxed run, which the host must allow', async () => {
    const { session } = workspace({ preset: 'gemini-cli', policy: { sandbox: 'auto', autonomy: 'supervised' } })
    const where = await session.toolkit.sandbox.backend()
    if (!where.backend || where.backend === 'none') return
    const r = await session.call('run_shell_command', { command: 'true', additional_permissions: { network: true } })
    expect(r.error?.code).toBe('COMMAND_DENIED')
  })
})
