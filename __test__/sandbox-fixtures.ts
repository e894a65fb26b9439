/**
 * Fixtures for sandbox-escapes.test.ts:
 * - `Host`: the agent host as a separate process (a node that loads ts/ through Vite's
 *   module runner, as vitest does). Its startup environment holds the secret and its
 *   memory holds the approval phrases, as a real host's do: a variable set in the test
 *   process at run time never reaches its /proc/<pid>/environ, so only a process started
 *   with it can show whether a command reads the host's environment. Its cwd is the
 *   outside folder, so that writes through /proc/<host>/cwd land where they are seen.
 * - `serveHost`: what runs in that process (JSON lines on stdin and stdout; every reply
 *   carries a key given on stdin, so a line a command forges into the host's stdout is
 *   told apart and counted).
 * - `Listeners`: TCP (IPv4 and IPv6), UDP, a unix socket in /run and an abstract unix
 *   socket, on loopback, counting what reaches them.
 * - `snapshot` / `changes`: a tree's every entry (kind, mode, size, mtime, content hash).
 * - `SCAN_PY`: the memory scanner a command uses to look for the phrase and the secret.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import crypto from 'node:crypto'
import dgram from 'node:dgram'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

// Static: the module runner that loads this file in the host is closed once it has.
import { createToolkit, type ToolResult } from '../ts/index.js'

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const THIS_FILE = fileURLToPath(import.meta.url)

// ---------------------------------------------------------------------------------------
// The host process

/** Loads this file in a fresh node through Vite's module runner and serves toolkits from it. */
const BOOT = `
const { runnerImport } = await import('vite')
const { module } = await runnerImport(process.argv[1], { configFile: false, root: process.cwd(), logLevel: 'error' })
await module.serveHost()
`

type Reply = { id?: number; key?: string; ready?: boolean; pid?: number; result?: ToolResult; ok?: boolean; failed?: string }

/** The test's end of a host process. */
export class Host {
  readonly child: ChildProcess
  readonly key = crypto.randomBytes(16).toString('hex')
  pid = 0
  stderr = ''
  /** stdout lines that did not carry the key (or were not JSON): written by someone else. */
  readonly forged: string[] = []
  exited: string | null = null
  private next = 0
  private readonly waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>()

  private constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, ['--input-type=module', '-e', BOOT, THIS_FILE], { cwd: REPO, env, stdio: ['pipe', 'pipe', 'pipe'] })
    this.child.stderr?.on('data', (d) => {
      this.stderr = (this.stderr + d).slice(-20_000)
    })
    this.child.on('exit', (code, signal) => {
      this.exited = `the host exited (code ${code}, signal ${signal}); stderr: ${this.stderr.slice(-2000)}`
      for (const w of this.waiting.values()) w.reject(new Error(this.exited))
      this.waiting.clear()
    })
    readline.createInterface({ input: this.child.stdout! }).on('line', (line) => {
      let reply: Reply
      try {
        reply = JSON.parse(line) as Reply
      } catch {
        this.forged.push(line)
        return
      }
      if (reply.key !== this.key) {
        this.forged.push(line)
        return
      }
      const id = reply.ready ? 0 : (reply.id ?? -1)
      const w = this.waiting.get(id)
      this.waiting.delete(id)
      w?.resolve(reply)
    })
  }

  /** Starts a host with exactly `env` as its environment and `cwd` as its folder. */
  static async start(env: Record<string, string>, cwd: string): Promise<Host> {
    const host = new Host(env)
    const ready = host.wait(0, 60_000)
    host.child.stdin?.write(`${JSON.stringify({ key: host.key, cwd })}\n`)
    const r = await ready
    host.pid = r.pid ?? 0
    return host
  }

  /** Whether the host process is still running. */
  alive(): boolean {
    return this.exited === null
  }

  /** Makes toolkit `name` (the host adds `onApproval: () => true` when `approve`). */
  async toolkit(name: string, options: Record<string, unknown>, approve: boolean): Promise<void> {
    const r = await this.send({ op: 'toolkit', name, options, approve })
    if (!r.ok) throw new Error(`the host could not make toolkit ${name}: ${r.failed}`)
  }

  /** session.call in the host, on toolkit `toolkit`'s one session. */
  async call(toolkit: string, name: string, input: Record<string, unknown>, ms = 180_000): Promise<ToolResult> {
    const r = await this.send({ op: 'call', toolkit, name, input }, ms)
    if (!r.result) throw new Error(`the host failed the call: ${r.failed}`)
    return r.result
  }

  async drop(name: string): Promise<void> {
    if (this.alive()) await this.send({ op: 'drop', name }).catch(() => {})
  }

  close(): void {
    this.child.kill('SIGKILL')
  }

  private send(message: Record<string, unknown>, ms = 60_000): Promise<Reply> {
    if (this.exited) return Promise.reject(new Error(this.exited))
    const id = ++this.next
    const reply = this.wait(id, ms)
    this.child.stdin?.write(`${JSON.stringify({ ...message, id })}\n`)
    return reply
  }

  private wait(id: number, ms: number): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        reject(new Error(`the host did not answer within ${ms} ms; stderr: ${this.stderr.slice(-2000)}`))
      }, ms)
      this.waiting.set(id, {
        resolve: (r) => {
          clearTimeout(timer)
          resolve(r)
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        },
      })
    })
  }
}

/** The host's side (runs in the child that `Host.start` makes). */
export async function serveHost(): Promise<void> {
  type Kit = { session: ReturnType<ReturnType<typeof createToolkit>['createSession']> }
  const kits = new Map<string, Kit>()
  // A host keeps the results it shows the user (the phrase among them): so does this one,
  // as flat strings (a phrase built by concatenation may otherwise lie in pieces).
  const shown: string[] = []
  let key = ''
  const send = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ ...m, key })}\n`)
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const msg = JSON.parse(line) as Record<string, unknown> & { id: number }
    if (!key) {
      key = msg.key as string
      process.chdir(msg.cwd as string)
      send({ ready: true, pid: process.pid })
      continue
    }
    try {
      if (msg.op === 'toolkit') {
        const options = msg.options as Parameters<typeof createToolkit>[0]
        const toolkit = createToolkit({ ...options, ...(msg.approve ? { onApproval: () => true } : {}) })
        kits.set(msg.name as string, { session: toolkit.createSession() })
        send({ id: msg.id, ok: true })
      } else if (msg.op === 'call') {
        const kit = kits.get(msg.toolkit as string)
        if (!kit) throw new Error(`no toolkit ${String(msg.toolkit)}`)
        const result = await kit.session.call(msg.name as string, msg.input)
        shown.push(JSON.stringify(result))
        if (shown.length > 16) shown.shift()
        send({ id: msg.id, result })
      } else if (msg.op === 'drop') {
        kits.delete(msg.name as string)
        send({ id: msg.id, ok: true })
      }
    } catch (err) {
      send({ id: msg.id, failed: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    }
  }
}

// ---------------------------------------------------------------------------------------
// Loopback listeners

export interface Seen {
  tcp: number
  tcp6: number
  udp: number
  unix: number
  abstract: number
  /** What arrived, for the failure message. */
  samples: string[]
}

/** Listeners on loopback that count every connection and datagram. */
export class Listeners {
  port = 0
  port6: number | null = null
  udpPort = 0
  /** A unix socket in /run (where docker's and dbus's are), or in `fallbackDir` when /run is not writable. */
  sockPath = ''
  /** An abstract unix socket's name (without the leading NUL). */
  abstractName = `fsgate-sbx-${crypto.randomBytes(6).toString('hex')}`
  sockDir = ''
  readonly seen: Seen = { tcp: 0, tcp6: 0, udp: 0, unix: 0, abstract: 0, samples: [] }
  private readonly servers: net.Server[] = []
  private udp: dgram.Socket | null = null

  async start(fallbackDir: string): Promise<void> {
    const record = (kind: keyof Omit<Seen, 'samples'>) => (sock: net.Socket) => {
      this.seen[kind]++
      sock.on('data', (d) => this.sample(`${kind}: ${d.toString('latin1').slice(0, 200)}`))
      sock.on('error', () => {})
      // An HTTP client gets an answer, so it does not wait for one.
      sock.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
    }
    this.port = await this.listen(record('tcp'), (s) => s.listen(0, '127.0.0.1'))
    this.port6 = await this.listen(record('tcp6'), (s) => s.listen(0, '::1')).catch(() => null)
    try {
      this.sockDir = fs.mkdtempSync('/run/fsgate-sbx-')
    } catch {
      this.sockDir = fs.mkdtempSync(path.join(fallbackDir, 'run-'))
    }
    this.sockPath = path.join(this.sockDir, 'agent.sock')
    await this.listen(record('unix'), (s) => s.listen(this.sockPath))
    await this.listen(record('abstract'), (s) => s.listen(`\0${this.abstractName}`))
    const udp = dgram.createSocket('udp4')
    udp.on('message', (m) => {
      this.seen.udp++
      this.sample(`udp: ${m.toString('latin1').slice(0, 200)}`)
    })
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve))
    this.udpPort = udp.address().port
    this.udp = udp
  }

  /** The counts now (a copy). */
  counts(): Omit<Seen, 'samples'> {
    const { samples: _s, ...counts } = this.seen
    return { ...counts }
  }

  async close(): Promise<void> {
    this.udp?.close()
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(r))))
    if (this.sockDir) fs.rmSync(this.sockDir, { recursive: true, force: true })
  }

  private sample(s: string): void {
    this.seen.samples.push(s)
    if (this.seen.samples.length > 20) this.seen.samples.shift()
  }

  private listen(onConnection: (s: net.Socket) => void, start: (s: net.Server) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = net.createServer(onConnection)
      server.once('error', reject)
      server.once('listening', () => {
        this.servers.push(server)
        const a = server.address()
        resolve(typeof a === 'object' && a ? a.port : 0)
      })
      start(server)
    })
  }
}

// ---------------------------------------------------------------------------------------
// Trees

/**
 * Every entry under `roots`: path → kind, mode, size, mtime and content hash (links by
 * target). With `times: false`, no mtimes: bytes and modes only.
 */
export function snapshot(roots: string[], { times = true } = {}): Map<string, string> {
  const snap = new Map<string, string>()
  const visit = (p: string) => {
    let st: fs.Stats
    try {
      st = fs.lstatSync(p)
    } catch {
      snap.set(p, 'missing')
      return
    }
    const meta = `${(st.mode & 0o7777).toString(8)}:${st.uid}:${st.gid}:${times ? st.mtimeMs : ''}`
    if (st.isSymbolicLink()) snap.set(p, `link:${fs.readlinkSync(p)}`)
    else if (st.isDirectory()) {
      snap.set(p, `dir:${meta}`)
      for (const name of fs.readdirSync(p).sort()) visit(path.join(p, name))
    } else if (st.isFile()) snap.set(p, `file:${meta}:${st.size}:${crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`)
    else snap.set(p, `other:${st.mode.toString(8)}:${st.rdev}`)
  }
  for (const root of roots) visit(root)
  return snap
}

/** What differs between two snapshots, one line per path. */
export function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = []
  for (const [p, v] of after) {
    const was = before.get(p)
    if (was === undefined) out.push(`created ${p} (${v.split(':')[0]})`)
    else if (was !== v) out.push(`changed ${p}: ${was.slice(0, 60)} → ${v.slice(0, 60)}`)
  }
  for (const p of before.keys()) if (!after.has(p)) out.push(`deleted ${p}`)
  return out
}

/** Files under `roots` (at most 8 MiB each) holding any of `needles`: "path: needle". */
export function filesHolding(roots: string[], needles: string[]): string[] {
  const found: string[] = []
  const visit = (p: string) => {
    let st: fs.Stats
    try {
      st = fs.lstatSync(p)
    } catch {
      return
    }
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name))
    else if (st.isFile() && st.size <= 8 << 20) {
      const bytes = fs.readFileSync(p)
      for (const n of needles) if (bytes.includes(n)) found.push(`${p}: ${n.slice(0, 24)}…`)
    }
  }
  for (const root of roots) visit(root)
  return found
}

/** Empties `dir` and copies `template`'s entries into it (the folder itself stays: a host may have it as its cwd). */
export function resetTree(dir: string, template: string): void {
  for (const name of fs.readdirSync(dir)) fs.rmSync(path.join(dir, name), { recursive: true, force: true })
  for (const name of fs.readdirSync(template)) fs.cpSync(path.join(template, name), path.join(dir, name), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true })
}

// ---------------------------------------------------------------------------------------
// The memory scanner

/** Pattern of what the scanner looks for: an approval phrase, or the host's secret. */
export const SCAN_PATTERN = 'approve command [0-9a-z-]{4,}|sk-live-[0-9a-f]{8,}'

/**
 * python3 scan.py [--pids P…] [--stop PID]: reads environ, cmdline and every writable
 * mapping (heap, stack, anonymous) of /proc/<pid>/mem of the given processes (by default its parent and the
 * parent's ancestors up to --stop) and prints each distinct match of SCAN_PATTERN, or
 * "nothing found"; what it could not open goes to stderr.
 */
export const SCAN_PY = `import os, re, sys
pat = re.compile(rb'${SCAN_PATTERN}')
args = sys.argv[1:]
stop = int(args[args.index('--stop') + 1]) if '--stop' in args else 0
if '--pids' in args:
    pids = [int(a) for a in args[args.index('--pids') + 1:] if a.isdigit()]
else:
    pids, p = [], os.getppid()
    while p > 1 and len(pids) < 8:
        pids.append(p)
        if p == stop:
            break
        try:
            p = int(open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1])
        except Exception:
            break
found = set()
for pid in pids:
    for name in ('environ', 'cmdline'):
        try:
            found.update(m.decode() for m in pat.findall(open(f'/proc/{pid}/{name}', 'rb').read()))
        except Exception as e:
            print(f'{pid}/{name}: {type(e).__name__}', file=sys.stderr)
    try:
        maps = open(f'/proc/{pid}/maps').read().splitlines()
        mem = open(f'/proc/{pid}/mem', 'rb', 0)
    except Exception as e:
        print(f'{pid}/mem: {type(e).__name__}', file=sys.stderr)
        continue
    for line in maps:
        parts = line.split()
        if not parts[1].startswith('rw'):
            continue
        a, b = (int(x, 16) for x in parts[0].split('-'))
        if b - a > 512 << 20:
            continue
        try:
            mem.seek(a)
            data = mem.read(b - a)
        except Exception:
            continue
        found.update(m.decode() for m in pat.findall(data))
print('\\n'.join(sorted(found)) or 'nothing found')
`
