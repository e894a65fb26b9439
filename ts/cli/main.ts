/**
 * `fsgate`'s command line: finds the command, parses its options (node:util parseArgs,
 * strict, from the command's table entry), answers --help/--version, runs it, and turns
 * every outcome into an exit code: 0 ok, 1 a tool error, 2 a usage error.
 *
 * `fsgate mcp …` hands the rest of the command line to the MCP server's own entry, loaded
 * only then, so the MCP SDK costs nothing to the other commands.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

import { isPresetName } from '../policy/presets.js'
import { createToolkit, type PolicyOptions } from '../toolkit.js'
import { COMMANDS, COMMON_OPTIONS, type Command, commandHelp, type OptionSpec } from './commands.js'
import { EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, Output, UsageError } from './output.js'

const HELP = `fsgate — file and code tools for AI agents, and for you

Usage:
${[...COMMANDS.map((c) => [`fsgate ${c.name} ${c.synopsis}`, c.summary] as const), ['fsgate mcp [--workspace DIR] [--preset P] [--http [host:]port] …', 'Serve every tool over MCP (stdio by default; see fsgate mcp --help)'] as const]
  .map(([usage, summary]) => (usage.length <= 44 ? `  ${usage.padEnd(44)} ${summary}` : `  ${usage}\n  ${' '.repeat(44)} ${summary}`))
  .join('\n')}
  fsgate help <command>                        The options of a command (also: fsgate <command> --help)
  fsgate --version

Common options:
  --workspace DIR   The workspace (default: the current folder)
  --preset P        guarded (default) | claude-code | revka | consent
  --json            Print the whole tool result as JSON
  -h, --help        Show this help

Exit codes: 0 ok, 1 the tool reported an error (its code on stderr), 2 a usage error.
`

/** Options that take a value and may come before the command (`fsgate --workspace DIR read …`). */
const VALUE_OPTIONS_BEFORE_COMMAND = new Set(['--workspace', '--preset'])

/** Where the command name is in argv: the first word that is not an option or an option's value; -1 if none. */
function commandIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') return i + 1 < argv.length ? i + 1 : -1
    if (VALUE_OPTIONS_BEFORE_COMMAND.has(a)) i++
    else if (!a.startsWith('-') || a === '-') return i
  }
  return -1
}

/** Runs the command line `argv` (without `node fsgate`) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const at = commandIndex(argv)
  const name = at >= 0 ? argv[at] : undefined
  const rest = at >= 0 ? [...argv.slice(0, at), ...argv.slice(at + 1)] : [...argv]

  if (name === 'mcp') return mcp(rest)
  if (name === undefined || name === 'help') {
    const topic = name === 'help' ? rest.find((a) => !a.startsWith('-')) : undefined
    if (topic !== undefined) {
      const cmd = COMMANDS.find((c) => c.name === topic)
      if (cmd) return print(commandHelp(cmd))
      if (topic === 'mcp') return mcp(['--help'])
      return usageError(`unknown command '${topic}'`)
    }
    if (rest.includes('--version')) {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
      return print(pkg.version)
    }
    if (name === 'help' || rest.includes('--help') || rest.includes('-h')) return print(HELP)
    return usageError(rest.length > 0 ? `unknown option '${rest[0]}'` : 'no command given')
  }
  const cmd = COMMANDS.find((c) => c.name === name)
  if (!cmd) return usageError(`unknown command '${name}'`)
  return run(cmd, rest)
}

async function run(cmd: Command, argv: string[]): Promise<number> {
  const common = cmd.common ?? (['workspace', 'preset', 'json'] as const)
  const config: Record<string, OptionSpec> = { ...cmd.options, help: COMMON_OPTIONS.help }
  for (const key of common) config[key] = COMMON_OPTIONS[key]
  let values: Record<string, string | boolean | undefined>
  let args: string[]
  try {
    const parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: config })
    values = parsed.values as Record<string, string | boolean | undefined>
    args = parsed.positionals
  } catch (err) {
    return usageError((err as Error).message, cmd)
  }
  if (values.help) return print(commandHelp(cmd))

  const out = new Output(values.json === true)
  const preset = values.preset as string | undefined
  const workspace = (values.workspace as string | undefined) ?? process.cwd()
  const toolkit = (policy?: PolicyOptions) => {
    if (preset !== undefined && !isPresetName(preset)) throw new UsageError(`unknown preset '${preset}'`)
    try {
      return createToolkit({ workspace, preset, policy })
    } catch (err) {
      // Bad options (a workspace that is not a folder, …) come from the command line here.
      if (err instanceof TypeError) throw new UsageError(err.message)
      throw err
    }
  }
  try {
    return await cmd.run({ args, values, out, toolkit })
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message, cmd)
    out.err(out.errStyle.red(`fsgate ${cmd.name}: ${err instanceof Error ? err.message : String(err)}`))
    return EXIT_TOOL_ERROR
  }
}

/** `fsgate mcp …`: the MCP server's own entry, with its own flags; it resolves once the server has stopped. */
async function mcp(argv: string[]): Promise<number> {
  let server: typeof import('../mcp/main.js')
  try {
    server = await import('../mcp/main.js')
  } catch (err) {
    process.stderr.write(`fsgate mcp: the MCP server could not be loaded: ${(err as Error).message}\n`)
    return EXIT_TOOL_ERROR
  }
  return server.mcpMain(argv)
}

function print(text: string): number {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
  return EXIT_OK
}

/** A usage error: the message, then the usage of the command (or of fsgate), on stderr. */
function usageError(message: string, cmd?: Command): number {
  process.stderr.write(`fsgate${cmd ? ` ${cmd.name}` : ''}: ${message}\n\n${cmd ? commandHelp(cmd) : HELP}`)
  return EXIT_USAGE
}
