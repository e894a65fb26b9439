/**
 * Codex's own apply_patch scenarios (fixtures/codex-apply-patch, see its README): each
 * patch applied through session.call('apply_patch', { input }) to a copy of the scenario's
 * input, the resulting tree compared with its expected tree byte for byte. The two
 * deliberate differences (all or nothing; no Add or move over a file the session has not
 * read) are tested as such.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterAll, describe, expect, it } from 'vitest'

import { fails, ok, removeTempDirs, tempDir, workspace } from './helpers.js'

afterAll(removeTempDirs)

const SCENARIOS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'codex-apply-patch', 'scenarios')

/** Every file (its bytes) and folder (a trailing "/") under `root`, sorted. */
function snapshot(root: string): Map<string, Buffer | 'dir'> {
  const out = new Map<string, Buffer | 'dir'>()
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name)
      const rel = path.relative(root, full)
      if (e.isDirectory()) {
        out.set(`${rel}/`, 'dir')
        walk(full)
      } else out.set(rel, fs.readFileSync(full))
    }
  }
  walk(root)
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** A scenario's input copied into a new workspace. */
function setUp(name: string): { dir: string; patch: string; expected: Map<string, Buffer | 'dir'> } {
  const dir = tempDir(`fsgate-codex-${name.slice(0, 3)}-`)
  const input = path.join(SCENARIOS, name, 'input')
  if (fs.existsSync(input)) fs.cpSync(input, dir, { recursive: true })
  return { dir, patch: fs.readFileSync(path.join(SCENARIOS, name, 'patch.txt'), 'utf8'), expected: snapshot(path.join(SCENARIOS, name, 'expected')) }
}

/** The scenarios whose patch Codex applies (or refuses) as fsgate does, with the code fsgate gives a refusal. */
const SAME: Record<string, string | null> = {
  '001_add_file': null,
  '002_multiple_operations': null,
  '003_multiple_chunks': null,
  '004_move_to_new_directory': null,
  '005_rejects_empty_patch': 'INVALID_INPUT',
  '006_rejects_missing_context': 'STRING_NOT_FOUND',
  '007_rejects_missing_file_delete': 'NOT_FOUND',
  '008_rejects_empty_update_hunk': 'INVALID_INPUT',
  '009_requires_existing_file_for_update': 'NOT_FOUND',
  '012_delete_directory_fails': 'IS_DIRECTORY',
  '013_rejects_invalid_hunk_header': 'INVALID_INPUT',
  '014_update_file_appends_trailing_newline': null,
  '016_pure_addition_update_chunk': null,
  '017_whitespace_padded_hunk_header': null,
  '018_whitespace_padded_patch_markers': null,
  '019_unicode_simple': null,
  '020_delete_file_success': null,
  '020_whitespace_padded_patch_marker_lines': null,
  '021_update_file_deletion_only': null,
  '022_update_file_end_of_file_marker': null,
}
/** The scenarios whose patch overwrites a file the model has not seen, and that file. */
const OVERWRITES: Record<string, string> = {
  '010_move_overwrites_existing_destination': 'renamed/dir/name.txt',
  '011_add_overwrites_existing_file': 'duplicate.txt',
}
const ALL_OR_NOTHING = '015_failure_after_partial_success_leaves_changes'

describe("Codex's apply_patch scenarios", () => {
  it('covers every scenario in the fixtures', () => {
    const names = fs.readdirSync(SCENARIOS).filter((n) => fs.statSync(path.join(SCENARIOS, n)).isDirectory())
    expect(names.sort()).toEqual([...Object.keys(SAME), ...Object.keys(OVERWRITES), ALL_OR_NOTHING].sort())
    expect(names.length).toBe(23)
  })

  it.each(Object.entries(SAME))('%s: the tree is Codex’s expected tree, byte for byte', async (name, code) => {
    const { dir, patch, expected } = setUp(name)
    const { session } = workspace({ preset: 'claude-code' }, dir)
    const r = await session.call('apply_patch', { input: patch })
    if (code === null) expect(ok(r)).toMatch(/^Success\. Updated the following files:\n/)
    else fails(r, code)
    expect(snapshot(dir)).toEqual(expected)
  })

  it.each(Object.entries(OVERWRITES))('%s: with %s read first, the tree is Codex’s; unread, the patch is refused and nothing changes', async (name, target) => {
    const unread = setUp(name)
    const before = snapshot(unread.dir)
    const first = workspace({ preset: 'claude-code' }, unread.dir).session
    const text = fails(await first.call('apply_patch', { input: unread.patch }), 'NOT_READ')
    expect(text).toContain(target)
    expect(text).toMatch(/read it first/i)
    expect(snapshot(unread.dir)).toEqual(before)

    const { dir, patch, expected } = setUp(name)
    const { session } = workspace({ preset: 'claude-code' }, dir)
    ok(await session.call('Read', { file_path: target }))
    ok(await session.call('apply_patch', { input: patch }))
    expect(snapshot(dir)).toEqual(expected)
  })

  it(`${ALL_OR_NOTHING}: Codex leaves created.txt behind; fsgate writes nothing`, async () => {
    const { dir, patch, expected } = setUp(ALL_OR_NOTHING)
    expect([...expected.keys()]).toEqual(['created.txt'])
    const { session } = workspace({ preset: 'claude-code' }, dir)
    const text = fails(await session.call('apply_patch', { input: patch }), 'NOT_FOUND')
    expect(text).toContain('missing.txt')
    expect(text).toContain('Nothing was changed')
    expect(snapshot(dir)).toEqual(new Map())
  })
})
