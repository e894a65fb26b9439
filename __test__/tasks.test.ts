/**
 * Background commands (Claude Code's run_in_background, gemini-cli's is_background): a
 * task id at once, output kept bounded and read a page at a time (Read of the output
 * path, TaskOutput, task_output), and a task that outlives its call but not TaskStop,
 * an emergency stop, its session, its toolkit or the cap; admitted as a foreground
 * command is.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { TaskLog } from '../ts/process/tasks.js'
import type { ToolResult } from '../ts/index.js'
import { alive, fails, ok, removeTempDirs, until, workspace } from './helpers.js'

afterAll(removeTempDirs)

/** A claude-code toolkit (full autonomy, no sandbox), so the tests do not depend on bwrap. */
const claude = (limits = {}) => workspace({ preset: 'claude-code', limits })

function started(r: ToolResult): { id: string; path: string; pid: number } {
  ok(r)
  const d = r.data as { backgroundTaskId: string; outputPath: string; pid: number }
  expect(d.backgroundTaskId).toMatch(/^b[0-9a-f]{8}$/)
  return { id: d.backgroundTaskId, path: d.outputPath, pid: d.pid }
}

/** The pid a command wrote to `file` in the workspace, once it is there. */
async function pidIn(dir: string, file: string): Promise<number> {
  const p = path.join(dir, file)
  expect(await until(() => fs.existsSync(p) && fs.readFileSync(p, 'utf8').trim() !== '', 5000)).toBe(true)
  return Number(fs.readFileSync(p, 'utf8').trim())
}

describe('TaskLog', () => {
  it('keeps the start and the latest lines within its bytes, numbered from the start', () => {
    const log = new TaskLog(4000, 50)
    for (let i = 1; i <= 10_000; i++) log.push(i % 3 === 0 ? 'stderr' : 'stdout', Buffer.from(`line ${i}\n`))
    log.end()
    expect(log.lines).toBe(10_000)
    expect(log.line(1)).toBe('line 1')
    expect(log.line(10_000)).toBe('line 10000')
    const gap = log.dropped as [number, number]
    expect(gap[0]).toBeGreaterThan(50)
    expect(log.line(gap[0])).toBeUndefined()
    expect(log.line(gap[1] + 1)).toBe(`line ${gap[1] + 1}`)
    // Held text stays within the budget.
    let held = 0
    for (let n = 1; n <= 10_000; n++) held += Buffer.byteLength(log.line(n) ?? '')
    expect(held).toBeLessThan(4000)
  })

  it('cuts long lines, joins a line split across chunks, and keeps UTF-8 whole', () => {
    const log = new TaskLog(10_000, 10)
    log.push('stdout', Buffer.from('héllo wo'))
    const bytes = Buffer.from('rld and more\nnext')
    log.push('stdout', bytes.subarray(0, 3))
    log.push('stdout', bytes.subarray(3))
    expect(log.line(1)).toBe('héllo worl … [line cut: 10 more characters]')
    expect(log.pending()).toEqual(['next'])
    log.end()
    expect(log.line(2)).toBe('next')
  })
})

describe('starting in the background', () => {
  it('answers at once with a task id and the output path, in each dialect', async () => {
    const { session } = claude()
    const t0 = Date.now()
    const r = await session.call('Bash', { command: 'sleep 5; echo done', run_in_background: true, description: 'Wait, then say done' })
    expect(Date.now() - t0).toBeLessThan(3000)
    const { id, path: out } = started(r)
    expect(r.content[0]).toMatchObject({ type: 'text' })
    expect(ok(r)).toMatch(new RegExp(`^Command running in background with ID: ${id}\\. Output is being written to: ${out.replaceAll('.', '\\.')}`))
    expect(r.data).toMatchObject({ stdout: '', stderr: '', interrupted: false, status: 'running' })
    ok(await session.call('TaskStop', { task_id: id }))

    const g = await session.call('run_shell_command', { command: 'echo early; sleep 5', is_background: true, delay_ms: 500 }, { dialect: 'gemini' })
    const text = ok(g)
    expect(text).toMatch(/^Command moved to background \(PID: \d+\)\. Task id: b[0-9a-f]{8}\./)
    expect(text).toMatch(/Output so far:\nearly/)
    ok(await session.call('task_stop', { task_id: (g.data as { taskId: string }).taskId }, { dialect: 'gemini' }))

    const v = await session.call('shell', { command: 'true', background: true })
    expect(ok(v)).toMatch(/^Started in the background as task b[0-9a-f]{8}/)
  })

  it('outlives its call: output read later by Read of the path, paged, and by TaskOutput', async () => {
    const { session } = claude()
    const { id, path: out } = started(await session.call('Bash', { command: 'for i in $(seq 1 30); do echo "row $i"; done; sleep 0.3; echo end', run_in_background: true }))
    const whole = await session.call('TaskOutput', { task_id: id, block: true, timeout: 10_000 })
    const text = ok(whole)
    expect(text).toMatch(/^<retrieval_status>success<\/retrieval_status>/)
    expect(text).toContain('<status>completed</status>')
    expect(text).toContain('<exit_code>0</exit_code>')
    expect(text).toContain('31\tend')
    const page = ok(await session.call('Read', { file_path: out, offset: 10, limit: 5 }))
    expect(page.split('\n').slice(0, 5)).toEqual(['10\trow 10', '11\trow 11', '12\trow 12', '13\trow 13', '14\trow 14'])
    expect(page).toContain('continue with offset=15')
    const tail = ok(await session.call('task_output', { task_id: id, limit: 2 }))
    expect(tail.split('\n').slice(0, 3)).toEqual(['    30\trow 30', '    31\tend', '(the last lines of 31; read from the start with offset=1)'])
  })

  it('keeps a flood bounded and says which lines were not kept', async () => {
    const { session, toolkit } = claude({ taskOutputBytes: 64 * 1024 })
    const { id, path: out } = started(await session.call('Bash', { command: 'seq 1 200000', run_in_background: true }))
    ok(await session.call('TaskOutput', { task_id: id, timeout: 20_000 }))
    const first = ok(await session.call('Read', { file_path: out, limit: 3 }))
    expect(first.split('\n').slice(0, 3)).toEqual(['1\t1', '2\t2', '3\t3'])
    const middle = await session.call('Read', { file_path: out, offset: 100_000, limit: 3 })
    expect(ok(middle)).toMatch(/were not kept: a task keeps the start and the latest 64 KiB/)
    const end = ok(await session.call('Read', { file_path: out, offset: 199_999 }))
    expect(end.split('\n').slice(0, 2)).toEqual(['199999\t199999', '200000\t200000'])
    const task = session.backgroundTasks().find((t) => t.id === id)
    expect(task?.outputBytes).toBeGreaterThan(1_000_000)
    await toolkit.close()
  })

  it('holds the page to the token limit, with a continuation', async () => {
    const { session } = claude({ resultTokens: 3000 })
    const { id, path: out } = started(await session.call('Bash', { command: 'for i in $(seq 1 400); do echo "word $i and some more words to count"; done', run_in_background: true }))
    await session.call('TaskOutput', { task_id: id })
    const page = ok(await session.call('Read', { file_path: out }))
    expect(page).toMatch(/continue with offset=\d+/)
    expect(page.split('\n').length).toBeLessThan(400)
  })

  it('refuses unknown tasks, stopping a finished one, and a page past the end', async () => {
    const { session } = claude()
    expect(fails(await session.call('TaskOutput', { task_id: 'b00000000' }), 'NOT_FOUND')).toMatch(/started none/)
    const { id } = started(await session.call('Bash', { command: 'echo hi', run_in_background: true }))
    await session.call('TaskOutput', { task_id: id })
    expect(fails(await session.call('TaskStop', { task_id: id }), 'INVALID_INPUT')).toMatch(/is not running: it completed/)
    fails(await session.call('task_output', { task_id: id, offset: 50 }), 'INVALID_INPUT')
    expect(fails(await session.call('TaskStop', {}), 'INVALID_INPUT')).toMatch(/task_id/)
    // Another session's task is not this one's.
    const other = session.toolkit.createSession()
    fails(await other.call('TaskOutput', { task_id: id }), 'NOT_FOUND')
    fails(await other.call('Read', { file_path: `/.fsgate/tasks/${id}.output` }), 'PATH_OUTSIDE_WORKSPACE')
  })
})

describe('how a task ends', () => {
  const sleeper = (dir: string, file: string) => `sh -c 'echo $$ > ${path.join(dir, file)}; exec sleep 60' & wait`

  it('TaskStop kills the command and what it started', async () => {
    const { dir, session } = claude()
    const { id } = started(await session.call('Bash', { command: sleeper(dir, 'a.pid'), run_in_background: true }))
    const child = await pidIn(dir, 'a.pid')
    expect(alive(child)).toBe(true)
    const r = await session.call('TaskStop', { task_id: id })
    expect(ok(r)).toBe(`Successfully stopped task: ${id} (${sleeper(dir, 'a.pid')})`)
    expect(r.data).toMatchObject({ task_id: id, task_type: 'local_bash', status: 'killed' })
    expect(await until(() => !alive(child), 3000)).toBe(true)
    expect(ok(await session.call('TaskOutput', { task_id: id, block: false }))).toContain('<status>killed</status>')
  })

  it('an emergency stop kills background tasks too', async () => {
    const { dir, session, toolkit } = claude()
    const { id } = started(await session.call('Bash', { command: sleeper(dir, 'b.pid'), run_in_background: true }))
    const child = await pidIn(dir, 'b.pid')
    toolkit.emergencyStop('test')
    expect(await until(() => !alive(child), 3000)).toBe(true)
    toolkit.resume()
    expect(ok(await session.call('task_output', { task_id: id, wait_secs: 10 }))).toMatch(/killed \(emergency stop\)/)
  })

  it('ending the session or the toolkit kills its tasks', async () => {
    const { dir, session, toolkit } = claude()
    started(await session.call('Bash', { command: sleeper(dir, 'c.pid'), run_in_background: true }))
    const c = await pidIn(dir, 'c.pid')
    const other = toolkit.createSession()
    started(await other.call('Bash', { command: sleeper(dir, 'd.pid'), run_in_background: true }))
    const d = await pidIn(dir, 'd.pid')
    await session.close()
    expect(alive(c)).toBe(false)
    expect(alive(d)).toBe(true)
    expect(fails(await session.call('Bash', { command: 'true', run_in_background: true }), 'ABORTED')).toMatch(/closed/)
    await toolkit.close()
    expect(alive(d)).toBe(false)
  })

  it('a timeout ends it', async () => {
    const { session } = claude()
    const { id } = started(await session.call('Bash', { command: 'sleep 30', run_in_background: true, timeout: 300 }))
    const r = ok(await session.call('TaskOutput', { task_id: id, timeout: 10_000 }))
    expect(r).toMatch(/killed \(timeout\)/)
  })

  it('the host caps running tasks per session and per toolkit', async () => {
    const { session, toolkit } = claude({ backgroundTasksPerSession: 2, backgroundTasks: 3 })
    for (let i = 0; i < 2; i++) started(await session.call('Bash', { command: 'sleep 30', run_in_background: true }))
    const over = await session.call('Bash', { command: 'sleep 30', run_in_background: true })
    expect(fails(over, 'RATE_LIMITED')).toMatch(/at most 2 in this session\)\. Running now: b[0-9a-f]{8} \(sleep 30\), b[0-9a-f]{8} \(sleep 30\)\./)
    const other = toolkit.createSession()
    started(await other.call('Bash', { command: 'sleep 30', run_in_background: true }))
    expect(fails(await other.call('Bash', { command: 'sleep 30', run_in_background: true }), 'RATE_LIMITED')).toMatch(/at most 3 in all/)
    // A stopped task frees its place.
    const [first] = session.backgroundTasks()
    ok(await session.call('TaskStop', { task_id: first.id }))
    started(await other.call('Bash', { command: 'true', run_in_background: true }))
    await toolkit.close()
  })
})

describe('admission is as in the foreground', () => {
  it('read_only autonomy refuses a medium background command; approval applies the same', async () => {
    const ro = workspace({ preset: 'claude-code', policy: { autonomy: 'read_only' } })
    expect(fails(await ro.session.call('Bash', { command: 'touch made', run_in_background: true }), 'AUTONOMY')).toMatch(/rated medium/)
    expect(fs.existsSync(path.join(ro.dir, 'made'))).toBe(false)
    const guarded = workspace({ policy: { sandbox: 'none' } })
    const r = await guarded.session.call('Bash', { command: 'touch made', run_in_background: true })
    fails(r, 'APPROVAL_REQUIRED')
    expect(fs.existsSync(path.join(guarded.dir, 'made'))).toBe(false)
    const asked: string[] = []
    const host = workspace({ policy: { sandbox: 'none' }, onApproval: (req) => {
      asked.push(req.command)
      return true
    } })
    const { id } = started(await host.session.call('Bash', { command: 'touch made', run_in_background: true }))
    expect(asked).toEqual(['touch made'])
    await host.session.call('TaskOutput', { task_id: id })
    expect(fs.existsSync(path.join(host.dir, 'made'))).toBe(true)
  })

  it('runs in the sandbox a foreground command would run in', async () => {
    const { session, toolkit } = workspace()
    const where = await toolkit.sandbox.backend()
    if (where.backend === null || where.backend === 'none') {
      console.warn(`skipped: no sandbox here (${where.unavailable ?? 'none'})`)
      if (process.env.CI === 'true') throw new Error('a sandbox is required in CI')
      return
    }
    const fg = ok(await session.call('Bash', { command: 'echo $TMPDIR; echo $$' }))
    const { id } = started(await session.call('Bash', { command: 'echo $TMPDIR; echo $$', run_in_background: true }))
    const r = await session.call('task_output', { task_id: id, wait_secs: 10, offset: 1 })
    expect(r.data).toMatchObject({ status: 'completed' })
    expect(session.backgroundTasks()[0].status).toBe('completed')
    // The same private temp folder kind and the same view of processes (its own PID namespace under bwrap).
    const lines = ok(r).split('\n').slice(0, 2).map((l) => l.replace(/^\s*\d+\t/, ''))
    expect(lines[0].startsWith('/tmp')).toBe(fg.split('\n')[0].startsWith('/tmp'))
    if (where.backend === 'bwrap') expect(Number(lines[1])).toBeLessThan(10)
  })
})
