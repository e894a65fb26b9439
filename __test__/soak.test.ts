/**
 * The load suite in its short CI mode (benches/soak-lib.mjs; `npm run soak` runs the same
 * code for five minutes): 64 sessions of one toolkit and 8 of a second toolkit on the same
 * workspace run, for 20 s, a random mix of reads, searches, edits, writes, shell and git
 * calls (some cancelled) on a copy of a real tree. Then what must hold however short the
 * run: every change kept, no torn read, only the error codes each call may give,
 * descriptors, threads and children back to their quiet counts, memory and the event
 * loop within bounds meant for a loaded 2-core machine.
 *
 * `regressions found by the load suite` holds what the suite found, each as a small test
 * of its own that failed before its fix. `npm run soak` reports every check.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import * as fsgate from '../ts/index.js'
import { removeTempDirs, tempDir } from './helpers.js'

interface Check {
  group: string
  check: string
  bound: string
  measured: string
  ok: boolean
}
interface KindStats {
  calls: number
  ok: number
  codes: Record<string, number>
  withSignal: number
}
interface SoakResult {
  kinds: Record<string, KindStats>
  sessionsMade: number
  totalCalls: number
  problems: Record<string, number | string[]>
  counters: Record<string, { bumps: number; onDisk: number | string }>
  checkpoints: Record<string, { fds: number; threads: number } | null>
}
interface SoakLib {
  runSoak(module: typeof fsgate, options: Record<string, unknown>): Promise<SoakResult>
  checkSoak(result: SoakResult, bounds: Record<string, number>): Check[]
  SHORT_BOUNDS: Record<string, number>
}

// A plain JS module without a declaration file: typed here by what the test uses.
const lib = (await import('../benches/soak-lib.mjs' as string)) as SoakLib

const isLinux = process.platform === 'linux'

describe.skipIf(!isLinux)('load suite, short mode (64 + 8 sessions, 20 s)', () => {
  let result: SoakResult
  let checks: Check[]
  // A new mix every run; a failure names its seed (runSoak's `seed` option repeats the mix, not the timing).
  const seed = Date.now() % 1_000_000
  const failed = (group: string) => checks.filter((c) => c.group === group && !c.ok)

  beforeAll(async () => {
    result = await lib.runSoak(fsgate, { seconds: 20, warmupSeconds: 5, baselineSeconds: 3, sessions: 64, peerSessions: 8, tree: 'small', seed })
    checks = lib.checkSoak(result, lib.SHORT_BOUNDS)
  }, 120_000)

  it('ran what it says: 72 sessions at once, every kind of call, contention and cancellation', () => {
    for (const kind of ['Read', 'Read (soak files)', 'Edit', 'Write', 'Grep', 'Glob', 'semantic_code_search', 'Bash', 'git_operations status']) {
      expect(result.kinds[kind]?.calls ?? 0, kind).toBeGreaterThan(0)
    }
    expect(result.sessionsMade).toBeGreaterThanOrEqual(72)
    // Edits of shared files met other sessions' edits (STALE) and calls were cancelled.
    expect(result.kinds.Edit.codes.STALE ?? 0).toBeGreaterThan(0)
    expect(Object.values(result.kinds).reduce((a, k) => a + (k.codes.ABORTED ?? 0), 0)).toBeGreaterThan(0)
  })

  it("keeps every change of one toolkit's sessions: counters, shared lines, whole rewrites, own files", () => {
    expect(failed('changes'), `seed ${seed}`).toEqual([])
  })

  it('keeps every change when sessions of two toolkits bump the same counters', () => {
    expect(failed('two toolkits'), `seed ${seed}`).toEqual([])
  })

  it('returns well-formed results with only the codes each call may give, and no torn or wrong content', () => {
    expect(failed('results'), `seed ${seed}`).toEqual([])
  })

  it('comes back to the same descriptors, threads and child processes when quiet', () => {
    expect(failed('process'), `seed ${seed}`).toEqual([])
  })

  it('keeps memory, the event loop and throughput within the short-mode bounds', () => {
    expect(failed('bounds'), `seed ${seed}`).toEqual([])
  })
})

describe('regressions found by the load suite', () => {
  afterAll(removeTempDirs)

  /**
   * Runs `bumps` read → edit (+1) → on STALE read again loops on one counter in each of
   * `sessions` sessions of each of two toolkits on one workspace, for at most `budgetMs`
   * (and, with `stopOnOther`, until the first error code other than STALE). Returns the
   * successful edits, the value on disk, and every error code other than STALE.
   */
  async function bumpAcrossToolkits(sessions: number, bumps: number, { budgetMs = 20_000, stopOnOther = false } = {}) {
    const ws = tempDir('fsgate-soak-two-')
    fs.writeFileSync(path.join(ws, 'n.txt'), 'n = 0\n')
    const kits = [0, 1].map(() => fsgate.createToolkit({ workspace: ws, preset: 'claude-code' }))
    let ok = 0
    const other: string[] = []
    const end = Date.now() + budgetMs
    await Promise.all(
      kits.flatMap((toolkit) =>
        Array.from({ length: sessions }, async () => {
          const s = toolkit.createSession()
          const going = () => Date.now() < end && !(stopOnOther && other.length > 0)
          for (let i = 0; i < bumps && going(); i++) {
            while (going()) {
              s.forgetReads()
              const r = await s.call('Read', { file_path: 'n.txt' })
              const text = r.content[0]?.type === 'text' ? r.content[0].text : ''
              const v = Number(/n = (\d+)/.exec(text)?.[1])
              const e = await s.call('Edit', { file_path: 'n.txt', old_string: `n = ${v}`, new_string: `n = ${v + 1}` })
              if (!e.isError) {
                ok++
                break
              }
              if (e.error?.code !== 'STALE') other.push(e.error?.code ?? '?')
            }
          }
        }),
      ),
    )
    const onDisk = Number(/n = (\d+)/.exec(fs.readFileSync(path.join(ws, 'n.txt'), 'utf8'))?.[1])
    return { ok, onDisk, other }
  }

  // Fixed by e8670a3 (the folder's flock around the last look and the rename), found by
  // the suite on the build before it: the counters bumped by sessions of two toolkits on
  // one workspace ended below their successful bumps (693 on disk after 723 bumps in 5
  // minutes; 182 after 200 here), while those of one toolkit's sessions were always
  // exact. The per-path lock is the toolkit's, and the last look was not atomic with the
  // rename: two writers that read version n both passed it and both renamed. Two
  // toolkits on one workspace is what `fsgate mcp --http` runs (ts/mcp/server.ts: one
  // for clients with elicitation, one for those without).
  it('two toolkits on one workspace lose no edit: every successful edit is on disk', async () => {
    const { ok, onDisk } = await bumpAcrossToolkits(1, 100)
    expect(ok).toBe(200)
    expect(onDisk, `${ok} edits returned success, the file says ${onDisk}`).toBe(ok)
  }, 60_000)

  // Fixed by e8670a3 too (the file is read inside the held folder), found on the build
  // before it: an Edit racing another toolkit's edit of the same file failed with
  // PATH_OUTSIDE_WORKSPACE ("soak/counter-x0.txt is outside the workspace … so it cannot
  // be written") instead of STALE: the writer opened the file, then checked the handle's
  // path (/proc/self/fd), and when the other toolkit renamed a new version over the file
  // in between, that path was the old inode's "… (deleted)", taken for a link.
  it('an edit racing another toolkit\'s edit of the file fails with STALE, never PATH_OUTSIDE_WORKSPACE', async () => {
    // On the build before the fix: seen within 0.2–2.3 s in each of 4 runs of 8 sessions a toolkit.
    const { other } = await bumpAcrossToolkits(8, Infinity, { budgetMs: 5000, stopOnOther: true })
    expect([...new Set(other)]).toEqual([])
  }, 60_000)

  // In the soak, git_operations status failed now and then with PATH_OUTSIDE_WORKSPACE
  // "The git repository of . reaches outside the workspace ()": rev-parse had exited 0
  // and its output was empty. runProcess arms a 250 ms drain timer at the child's
  // 'exit'; when the JS thread is held past that before the poll phase reads the pipe
  // (under load every spawn holds it: Node's spawn waits for the child's exec), the timer
  // runs first (timers come before I/O in an event-loop turn), cuts the pipes, and the
  // call returns exit 0 with no output. Here the stall is made on purpose, in the same
  // turn that reaps the child: the command prints and exits while an fs callback holds
  // the thread, the reap comes from our own child's SIGCHLD in that batch, and a
  // setImmediate from our child's exit holds the thread past the 250 ms.
  it.skipIf(!isLinux)("a command's output survives an event-loop stall at its exit", async () => {
    const ws = tempDir('fsgate-soak-drain-')
    const toolkit = fsgate.createToolkit({ workspace: ws, preset: 'claude-code' })
    const busy = (ms: number) => {
      const t = performance.now()
      while (performance.now() - t < ms);
    }
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
    const shellChild = () =>
      fs
        .readdirSync('/proc')
        .filter((n) => /^\d+$/.test(n))
        .some((pid) => {
          try {
            const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
            return stat.includes('(sh)') && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid
          } catch {
            return false
          }
        })
    const outputs: string[] = []
    for (let i = 0; i < 3; i++) {
      const call = toolkit.createSession().call('Bash', { command: 'sleep 0.6; echo hello' })
      const t0 = Date.now()
      while (!shellChild() && Date.now() - t0 < 5000) await sleep(2)
      // Our own child exits at ~400 ms; its exit holds the thread 600 ms (check phase).
      const ours = spawn('sleep', ['0.4'], { stdio: 'ignore' })
      ours.on('exit', () => setImmediate(() => busy(600)))
      // At 380 ms an fs call whose completion is ready at once, and this timer holds the
      // thread to 480 ms, so the next poll batch has [the fs completion, our child's
      // SIGCHLD]; the fs callback then holds the thread while the command prints and exits.
      setTimeout(() => {
        fs.stat(ws, () => busy(400))
        busy(100)
      }, 380)
      const r = await call
      outputs.push(r.isError ? `error ${r.error?.code}` : String(r.data?.stdout))
      await new Promise((resolve) => (ours.exitCode === null ? ours.on('exit', resolve) : resolve(null)))
    }
    expect(outputs).toEqual(['hello\n', 'hello\n', 'hello\n'])
  }, 60_000)
})
