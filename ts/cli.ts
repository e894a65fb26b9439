#!/usr/bin/env node
/** The `fsgate` command for people: read, PDF text, glob, grep, ranked code search, git and the shell risk rating from a shell. */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

import { createToolkit } from './toolkit.js'
import { isPresetName } from './policy/presets.js'
import { classifyCommand } from './policy/risk.js'
import type { ToolResult } from './result.js'

const HELP = `fsgate — file and code tools for AI agents

Usage:
  fsgate read <path> [--offset N] [--limit N] [--pages P]
                                                Read a file as an agent sees it
  fsgate pdf <path> [--max-chars N]             Extract a PDF's text (every page)
  fsgate glob <pattern> [path]                  List files matching a glob (sorted)
  fsgate grep <regex> [path] [--include G] [-i] [--mode content|files_with_matches|count] [-C N]
                                                Search file contents (ripgrep's engine)
  fsgate search <query> [path] [--top N]        Ranked code search (built-in ranker)
  fsgate git status|diff|log|branch [--cached] [--limit N] [files...]
                                                A read-only git operation, as git_operations gives it
  fsgate risk <command>                         How shell would rate a command (nothing is run)
  fsgate definitions [--dialect D] [--format F] Print the tool definitions as JSON
  fsgate --version

Options:
  --workspace DIR   The workspace (default: the current folder)
  --preset P        guarded (default) | claude-code | revka | consent
  --hidden          glob/grep: include hidden files
  --no-ignore       glob/grep: include files that .gitignore/.ignore leave out
  --json            Print the whole tool result as JSON
  -h, --help        Show this help
`

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      offset: { type: 'string' },
      limit: { type: 'string' },
      pages: { type: 'string' },
      'max-chars': { type: 'string' },
      workspace: { type: 'string' },
      preset: { type: 'string' },
      dialect: { type: 'string' },
      format: { type: 'string' },
      json: { type: 'boolean' },
      include: { type: 'string' },
      'ignore-case': { type: 'boolean', short: 'i' },
      mode: { type: 'string' },
      context: { type: 'string', short: 'C' },
      top: { type: 'string' },
      cached: { type: 'boolean' },
      hidden: { type: 'boolean' },
      'no-ignore': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  })
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseOptions>
  try {
    parsed = parseOptions(argv)
  } catch (err) {
    process.stderr.write(`fsgate: ${(err as Error).message}\n\n${HELP}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.version) {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    process.stdout.write(`${pkg.version}\n`)
    return 0
  }
  const [command, ...rest] = positionals
  if (values.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (!command) return usage('no command given')
  if (command === 'risk') {
    if (rest.length !== 1) return usage('risk takes one command (quote it)')
    const c = classifyCommand(rest[0])
    if (values.json) process.stdout.write(`${JSON.stringify(c, null, 2)}\n`)
    else {
      process.stdout.write(`${c.risk}: ${c.reason}\n`)
      for (const cmd of c.commands) process.stdout.write(`  ${cmd.risk.padEnd(6)} ${[...cmd.wrappers, cmd.name || '(dynamic)'].join(' → ')}: ${cmd.reason}\n`)
    }
    return 0
  }
  if (values.preset !== undefined && !isPresetName(values.preset)) return usage(`unknown preset '${values.preset}'`)
  const toolkit = createToolkit({ workspace: values.workspace ?? process.cwd(), preset: values.preset as never })

  if (command === 'definitions') {
    const defs = toolkit.definitions({ dialect: values.dialect as never, format: values.format as never })
    process.stdout.write(`${JSON.stringify(defs, null, 2)}\n`)
    return 0
  }
  if (command === 'read') {
    if (rest.length !== 1) return usage('read takes one path')
    const input: Record<string, unknown> = { path: rest[0] }
    for (const key of ['offset', 'limit'] as const) {
      const v = values[key]
      if (v === undefined) continue
      if (!/^-?\d+$/.test(v)) return usage(`--${key} must be an integer, got '${v}'`)
      input[key] = Number(v)
    }
    if (values.pages !== undefined) input.pages = values.pages
    const result = await toolkit.createSession().call('file_read', input)
    return print(result, values.json ?? false)
  }
  if (command === 'pdf') {
    if (rest.length !== 1) return usage('pdf takes one path')
    const input: Record<string, unknown> = { path: rest[0] }
    const max = values['max-chars']
    if (max !== undefined) {
      if (!/^\d+$/.test(max)) return usage(`--max-chars must be a whole number, got '${max}'`)
      input.max_chars = Number(max)
    }
    const result = await toolkit.createSession().call('pdf_read', input)
    return print(result, values.json ?? false)
  }
  if (command === 'git') {
    const [operation, ...files] = rest
    if (!['status', 'diff', 'log', 'branch'].includes(operation)) return usage('git takes one of status, diff, log, branch')
    const input: Record<string, unknown> = { operation }
    if (files.length > 0) {
      if (operation !== 'diff') return usage('only git diff takes files')
      input.files = files
    }
    if (values.cached) input.cached = true
    if (values.limit !== undefined) {
      if (!/^\d+$/.test(values.limit)) return usage(`--limit must be a whole number, got '${values.limit}'`)
      input.limit = Number(values.limit)
    }
    const result = await toolkit.createSession().call('git_operations', input)
    return print(result, values.json ?? false)
  }
  if (command === 'glob' || command === 'grep' || command === 'search') {
    if (rest.length < 1 || rest.length > 2) return usage(`${command} takes a ${command === 'search' ? 'query' : 'pattern'} and an optional path`)
    const [first, where] = rest
    const walk = { include_hidden: values.hidden, include_ignored: values['no-ignore'] }
    const ints: Record<string, number> = {}
    for (const key of ['context', 'top'] as const) {
      const v = values[key]
      if (v === undefined) continue
      if (!/^\d+$/.test(v)) return usage(`--${key} must be a whole number, got '${v}'`)
      ints[key] = Number(v)
    }
    const session = toolkit.createSession()
    const result =
      command === 'glob'
        ? await session.call('glob_search', { pattern: first, path: where, ...walk })
        : command === 'grep'
          ? await session.call('content_search', {
              pattern: first,
              path: where,
              include: values.include,
              case_sensitive: values['ignore-case'] ? false : undefined,
              output_mode: values.mode,
              context_before: ints.context,
              context_after: ints.context,
              ...walk,
            })
          : await session.call('semantic_code_search', { query: first, path: where, top_k: ints.top, backend: 'literal' })
    return print(result, values.json ?? false)
  }
  return usage(`unknown command '${command}'`)
}

function print(result: ToolResult, json: boolean): number {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
    return result.isError ? 1 : 0
  }
  const out = result.isError ? process.stderr : process.stdout
  for (const block of result.content) {
    if (block.type === 'text') out.write(`${block.text}\n`)
    else out.write(`[${block.mimeType} image, ${Math.round((block.data.length * 3) / 4)} bytes; use --json to get its data]\n`)
  }
  if (result.isError && result.error) out.write(`(error code ${result.error.code})\n`)
  return result.isError ? 1 : 0
}

function usage(message: string): number {
  process.stderr.write(`fsgate: ${message}\n\n${HELP}`)
  return 2
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fsgate: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  },
)
