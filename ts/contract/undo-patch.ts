/**
 * The undo of a change of several files (an apply_patch): every file the patch changed is
 * put back together, or none is — through the same all-or-nothing commit the patch used,
 * each file only if it is still the version the patch left.
 */
import { clip, clipMiddle, FsgateError, StaleFileError } from '../errors.js'
import { callNative, completer, type NativePatchResult } from '../native.js'
import type { Toolkit } from '../toolkit.js'
import type { EditHistory, HistoryEntry } from './history.js'
import type { ReadLedger } from './ledger.js'
import type { PathLocks } from './locks.js'

/** What an undo did. */
export interface UndoResult {
  /** The path as the change named it. */
  path: string
  realPath: string
  /** 'previous': the content the change replaced (or removed) is back; 'removed': the file it created is gone. */
  restored: 'previous' | 'removed'
  /** For a patch: every file it changed, each put back. */
  patch?: Array<{ path: string; realPath: string; restored: 'previous' | 'removed' }>
}

/** Runs `fn` holding the write lock of every path, taken in sorted order (so two callers never wait on each other). */
export async function underLocks<T>(locks: PathLocks, paths: readonly string[], fn: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(paths)].sort()
  const take = (i: number): Promise<T> => (i === sorted.length ? fn() : locks.run(sorted[i], () => take(i + 1)))
  return take(0)
}

/** Undoes the patch `entry` belongs to (see the module doc). */
export async function undoPatch(tk: Toolkit, history: EditHistory, ledger: ReadLedger, entry: HistoryEntry, file: string, signal?: AbortSignal): Promise<UndoResult> {
  const group = entry.group as NonNullable<HistoryEntry['group']>
  const entries = history.group(group.id)
  if (entries.length !== group.files || entries.some((e) => e.dropped)) {
    throw new FsgateError(
      'FILE_TOO_LARGE',
      `The patch that changed ${file} changed ${group.files} files, and what it replaced is no longer all in this session's history (limits.historyBytes), so it cannot be undone whole.`,
      { data: { path: file } },
    )
  }
  for (const e of entries) {
    const latest = history.latest(e.realPath)
    if (latest !== e) {
      throw new StaleFileError('STALE', `${e.path} was changed again by this session after the patch (by ${latest?.tool}); undo that change first, then the patch.`, {
        data: { path: e.path },
      })
    }
  }
  return underLocks(tk.locks, entries.map((e) => e.realPath), async () => {
    const files = entries.map((e) => ({
      path: e.realPath,
      checks: e.after ? { expectSize: e.after.size, expectHash: e.after.hash } : { expectAbsent: true },
      bytes: e.action === 'created' ? undefined : (e.previous ?? undefined),
      // A file the patch removed comes back with its mode (a moved-onto file gets its own back).
      ...(e.action !== 'created' && e.previousMode !== undefined ? { mode: e.previousMode } : {}),
    }))
    // The folders the patch made for its new files go too, where the undo leaves them empty (deepest first).
    const made = [...new Set(entries.flatMap((e) => e.madeFolders ?? []))].sort((a, b) => b.length - a.length)
    const r = await callNative<NativePatchResult>((id) => tk.fs.commitFiles(completer, id, files, false, made), signal)
    if (r.failure) {
      const failed = r.failure.error
      const shown = (real: string) => entries.find((e) => e.realPath === real)?.path ?? real
      const which = failed?.path ? shown(failed.path) : file
      const onDisk = (r.failure.onDisk ?? []).map((d) => ({ path: shown(d.realPath), state: d.state }))
      // What is on disk, as the engine reports it: every file as the patch left it, or the ones it could not put back.
      const stuck = onDisk.filter((d) => d.state !== 'old').map((d) => d.path)
      const state =
        stuck.length === 0
          ? 'no file of it was changed'
          : `the undo could not make ${clipMiddle(stuck.join(', '), 200)} the patch's version again (changed by someone else meanwhile); check ${stuck.length === 1 ? 'it' : 'them'}`
      if (failed?.code === 'STALE' || failed?.code === 'FILE_EXISTS') {
        throw new StaleFileError('STALE', `${which} changed after the patch, so the patch was not undone (${state}).`, { data: { path: which, onDisk } })
      }
      throw new FsgateError(failed?.code === 'NO_SPACE' ? 'NO_SPACE' : 'IO_ERROR', `Undoing the patch failed at ${which} (${clip(failed?.message ?? 'unknown error', 120)}); ${state}.`, {
        data: { path: which, onDisk },
      })
    }
    for (const e of entries) {
      history.remove(e)
      ledger.forgetPath(e.realPath)
    }

    const restored = (e: HistoryEntry) => (e.action === 'created' ? ('removed' as const) : ('previous' as const))
    return {
      path: entry.path,
      realPath: entry.realPath,
      restored: restored(entry),
      patch: entries.map((e) => ({ path: e.path, realPath: e.realPath, restored: restored(e) })),
    }
  })
}
