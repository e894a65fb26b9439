// The cold content search (no index): the native `Workspace.grep` against the rg CLI
// spawned, interleaved in one run, on a real tree and on one 20-file folder of it.
//
//   node benches/cold.mjs TREE [FOLDER] [--rounds N]
//
// With BEFORE=path/to/other.node, that build of the addon runs too, interleaved, as the
// `before` column (a same-run comparison of two builds).
// TREE is a folder whose files no ignore file above it leaves out (e.g. a copy of
// node_modules with an empty `.git` folder, as an agent's checkout); FOLDER is a folder
// of it (relative) holding about 20 files. Prints medians and rg time / fsgate time.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'

import { ROOT } from './data.mjs'
import { fmtMs, fmtRatio, interleave, median } from './lib.mjs'

const require = createRequire(import.meta.url)
const native = require(path.join(ROOT, 'native', 'index.cjs'))
const { callNative, completer, deliver } = await import(path.join(ROOT, 'dist', 'native.js'))
const before = process.env.BEFORE ? require(path.resolve(process.env.BEFORE)) : null

const args = process.argv.slice(2)
const roundsAt = args.indexOf('--rounds')
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 5
const [tree, folder = 'ai/src/error'] = args
if (!tree) throw new Error('usage: node benches/cold.mjs TREE [FOLDER] [--rounds N]')
const root = path.resolve(tree)
const ws = new native.Workspace([root])
const old = before && { ws: new before.Workspace([root]), completer: new before.Completer(deliver) }
const ALL = 10_000_000

function grep(dir, pattern, mode, addon = { ws, completer }) {
  return callNative((id) =>
    addon.ws.grep(addon.completer, id, { path: dir, displayRoot: root, pattern, walk: {}, mode, limit: ALL, maxColumns: 500, maxOutput: 2 ** 40 }),
  )
}

function rg(argv, cwd) {
  return new Promise((resolve, reject) => {
    const p = spawn('rg', ['--no-config', '--no-require-git', ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let lines = 0
    p.stdout.on('data', (c) => {
      for (const b of c) lines += b === 10
    })
    p.on('error', reject)
    p.on('close', (code) => (code === 0 || code === 1 ? resolve(lines) : reject(new Error(`rg exited with ${code}`))))
  })
}

const content = ['-n', '--max-columns', '500', '--max-columns-preview', '-e']
const cases = [
  { name: 'selective `\\w+Visitor\\b`, content', dir: root, pattern: '\\w+Visitor\\b', mode: 'content', rg: content, per: 2 },
  { name: 'broad `function`, content', dir: root, pattern: 'function', mode: 'content', rg: content, per: 2 },
  { name: 'broad `function`, files_with_matches', dir: root, pattern: 'function', mode: 'files_with_matches', rg: ['-l', '-e'], per: 2 },
  { name: `20-file folder ${folder}, \`function\`, content`, dir: path.join(root, folder), pattern: 'function', mode: 'content', rg: content, per: 40, rgPer: 10 },
]

console.log(`| case |${old ? ' before median | rg / before |' : ''} fsgate native median | rg median | rg / fsgate |`)
console.log(`|---|${old ? '---|---|' : ''}---|---|---|`)
for (const c of cases) {
  let n
  const check = (what, got) => {
    n ??= got
    if (got !== n) throw new Error(`${c.name}: ${what} gave ${got} results, expected ${n}`)
  }
  const found = async (addon) => {
    const r = await grep(c.dir, c.pattern, c.mode, addon)
    return c.mode === 'content' ? r.matches : r.matchedFiles
  }
  const res = await interleave(
    {
      ...(old && { before: { fn: async () => check('before', await found(old)), perRound: c.per, warmup: 3 } }),
      fsgate: { fn: async () => check('fsgate', await found()), perRound: c.per, warmup: 3 },
      rg: { fn: async () => check('rg', await rg([...c.rg, c.pattern, '.'], c.dir)), perRound: c.rgPer ?? c.per, warmup: 2 },
    },
    { rounds },
  )
  const [f, r] = [median(res.fsgate.times), median(res.rg.times)]
  const b = old && median(res.before.times)
  console.log(`| ${c.name} (${n}) |${old ? ` ${fmtMs(b)} | ${fmtRatio(r / b)} |` : ''} ${fmtMs(f)} | ${fmtMs(r)} | ${fmtRatio(r / f)} |`)
}
