/**
 * `fsgate`'s command line: finds the command, parses its options (node:util parseArgs,
 * strict, from the command's table entry), answers --help/--version, runs it, and turns
 * every outcome into an exit code as ripgrep does: 0 done (something found), 1 nothing
 * found, 2 an error (a usage error or one the tool reported).
 *
 * `fsgate mcp …` hands the rest of the command line to the MCP server's own entry, loaded
 * only then, so the MCP SDK costs nothing to the other commands.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

import { isPresetName } from '../policy/presets.js'
import { createToolkit } from '../toolkit.js'
import { type Command, type CommandContext, COMMON_OPTIONS, type OptionSpec, upTo } from './args.js'
import { COMMANDS, commandHelp } from './commands.js'
import { EXIT_ERROR, EXIT_OK, Output, UsageError } from './output.js'
import { Place } from './where.js'

const HELP = `fsgate — file and code tools for AI agents, and for you

Usage:
${[...COMMANDS.map((c) => [`fsgate ${c.name} ${c.synopsis}`, c.summary] as const), ['fsgate mcp [--workspace DIR] [--preset P] [--http [host:]port] …', 'Serve every tool over MCP (stdio by default; see fsgate mcp --help)'] as const]
  .map(([usage, summary]) => (usage.length <= 44 ? `  ${usage.padEnd(44)} ${summary}` : `  ${usage}\n  ${' '.repeat(44)} ${summary}`))
  .join('\n')}
  fsgate help <command>                        The options of a command (also: fsgate <command> --help)
  fsgate --version

Common options:
  --workspace DIR   The workspace (default: the git repository around the current folder,
                    else the current folder); paths you type and paths shown start at the
                    current folder
  --preset P        guarded (default) | claude-code | revka | consent | gemini-cli
  --json            Print the whole result as JSON
  -h, --help        Show this help

Output: data on stdout; notes, counts and errors on stderr.
Exit codes: 0 done (found), 1 nothing found (grep, glob, search, ls), 2 an error.
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
      return unknownCommand(topic)
    }
    if (rest.includes('--version')) {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
      return print(pkg.version)
    }
    if (name === 'help' || rest.includes('--help') || rest.includes('-h')) return print(HELP)
    if (rest.length === 0) {
      process.stderr.write(HELP)
      return EXIT_ERROR
    }
    return usageError(`unknown option '${rest[0]}'`)
  }
  const cmd = COMMANDS.find((c) => c.name === name)
  if (!cmd) return unknownCommand(name)
  return run(cmd, rest)
}

async function run(cmd: Command, argv: string[]): Promise<number> {
  const config: Record<string, OptionSpec> = { ...cmd.options, ...COMMON_OPTIONS }
  let values: CommandContext['values']
  let args: string[]
  try {
    const parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: config })
    values = parsed.values as CommandContext['values']
    args = parsed.positionals
  } catch (err) {
    return usageError((err as Error).message, cmd)
  }
  if (values.help) return print(commandHelp(cmd))

  const out = new Output(values.json === true)
  const preset = values.preset as string | undefined
  try {
    if (preset !== undefined && !isPresetName(preset)) throw new UsageError(`unknown preset '${preset}' (guarded, claude-code, revka or consent)`)
    const place = Place.find(process.cwd(), values.workspace as string | undefined)
    const toolkit: CommandContext['toolkit'] = ({ policy, limits } = {}) => {
      try {
        // A person reads a terminal, not a model's context: the result token budget is
        // off, and the commands page by --max and --offset.
        const unbudgeted = { resultTokens: upTo(Number.POSITIVE_INFINITY), searchPageTokens: upTo(Number.POSITIVE_INFINITY) }
        return createToolkit({ workspace: place.workspace, preset, policy, limits: { ...unbudgeted, ...limits } })
      } catch (err) {
        // Bad options (a workspace that is not a folder, …) come from the command line here.
        if (err instanceof TypeError) throw new UsageError(err.message.replace(/^fsgate: /, ''))
        throw err
      }
    }
    return await cmd.run({ command: cmd.name, args, values, out, place, toolkit })
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message, cmd)
    out.err(out.errStyle.red(`fsgate ${cmd.name}: ${err instanceof Error ? err.message : String(err)}`))
    return EXIT_ERROR
  }
}

/** `fsgate mcp …`: the MCP server's own entry, with its own flags; it resolves once the server has stopped. */
async function mcp(argv: string[]): Promise<number> {
  let server: typeof import('../mcp/main.js')
  try {
    server = await import('../mcp/main.js')
  } catch (err) {
    process.stderr.write(`fsgate mcp: the MCP server could not be loaded: ${(err as Error).message}\n`)
    return EXIT_ERROR
  }
  return server.mcpMain(argv)
}

function print(text: string): number {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
  return EXIT_OK
}

/** A usage error: the message and where to find the usage, on stderr (as git and rg say it). */
function usageError(message: string, cmd?: Command): number {
  const help = cmd ? `fsgate ${cmd.name} --help` : 'fsgate --help'
  process.stderr.write(`fsgate${cmd ? ` ${cmd.name}` : ''}: ${message}\nRun '${help}' for the usage.\n`)
  return EXIT_ERROR
}

function unknownCommand(name: string): number {
  const names = [...COMMANDS.map((c) => c.name), 'mcp', 'help']
  const near = names.filter((n) => editDistance(n, name) <= Math.max(1, Math.ceil(n.length / 3)))
  const hint = near.length > 0 ? ` Did you mean ${near.map((n) => `'${n}'`).join(' or ')}?` : ''
  process.stderr.write(`fsgate: '${name}' is not a command.${hint}\nThe commands: ${names.join(', ')}. Run 'fsgate --help' for the usage.\n`)
  return EXIT_ERROR
}

/** Levenshtein distance, for "did you mean". */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]
}
