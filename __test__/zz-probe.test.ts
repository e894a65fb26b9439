import { it } from 'vitest'
import { workspace, put, textOf } from './helpers.js'
it('probe', async () => {
  const { toolkit } = workspace()
  for (const d of toolkit.definitions({ dialect: 'claude' }) as any[]) for (const [k, v] of Object.entries(d.input_schema.properties) as any) if (v.type === 'number' || v.type === 'integer') console.log('claude', d.name, k, v.type, v.minimum, v.maximum)
  console.log('READOFF', JSON.stringify((toolkit.definitions({ dialect: 'claude' }) as any[]).find((d) => d.name === 'Read').input_schema.properties.offset))
  const g = workspace({ preset: 'gemini-cli' })
  for (const d of g.toolkit.definitions({ format: 'mcp' }) as any[]) for (const [k, v] of Object.entries(d.inputSchema.properties) as any) if (v.type === 'number' || v.type === 'integer') console.log('gemini', d.name, k, v.type, v.minimum, v.maximum)
  put(g.dir, 'a.txt', 'hello world\nhello again\n')
  await g.session.call('read_file', { file_path: 'a.txt' })
  for (const [tool, input] of [['read_file', { file_path: 'a.txt', start_line: 1.5 }], ['grep_search', { pattern: 'hello', context: 1.5 }], ['run_shell_command', { command: 'echo hi', delay_ms: 1.5 }]] as const) {
    const r = await g.session.call(tool, input as any)
    console.log(tool, r.isError, r.error?.code, textOf(r).slice(0, 150))
  }
})
