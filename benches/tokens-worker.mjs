// Runs one pure-JS token counter on one worst-case input in a worker thread, so the
// parent can stop it (terminate) when it runs past the time cap.
import { parentPort, workerData } from 'node:worker_threads'

import { unsplittable } from './data.mjs'
import { now } from './lib.mjs'
import { loadPeers } from './peers.mjs'

const { peer, size, seed } = workerData
const peers = await loadPeers()
const count = peers[peer].count
count('warm up the tables') // load lazily built tables outside the timing
const text = unsplittable(size, seed)
const t0 = now()
const n = count(text)
parentPort.postMessage({ ms: now() - t0, tokens: n })
