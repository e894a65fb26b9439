#!/usr/bin/env node
/**
 * The `fsgate` command for people (SPEC §7): read, write, edit, grep, glob, search, pdf,
 * git, risk and definitions from a shell, and `fsgate mcp` to serve the tools over MCP.
 * This is the bin entry (dist/cli.js); the command line itself lives in cli/main.ts, the
 * commands in cli/commands.ts, the printing and colours in cli/output.ts and cli/style.ts.
 */
import { main } from './cli/main.js'

// A reader that closed the pipe early (`fsgate grep x | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})

main(process.argv.slice(2)).then(
  // End now, once stdout has flushed: nothing else (the native pool, a stopped server) is waited for.
  (code) => process.stdout.write('', () => process.exit(code)),
  (err: unknown) => {
    process.stderr.write(`fsgate: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  },
)
