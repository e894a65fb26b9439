/**
 * Jupyter notebooks: Read renders the cells as Claude Code does (ids, types, sources,
 * text outputs, images as image blocks, all through the token gate), paged by cell; and
 * NotebookEdit / notebook_edit changes one cell under the read-before-write contract,
 * atomically, keeping every byte outside the cell — also in a 50 MB notebook — and
 * refuses an invalid notebook without touching it.
 */
import fs from 'node:fs'
import path from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import type { ToolResult } from '../ts/index.js'
import { fails, imageInfo, ok, png, removeTempDirs, textOf, workspace } from './helpers.js'

afterAll(removeTempDirs)

type Cell = Record<string, unknown>

/** A notebook as Jupyter writes it: indent 1, sorted keys, a final newline. */
function notebook(cells: Cell[], language = 'python', minor = 5): string {
  const sorted = (o: unknown): unknown =>
    Array.isArray(o) ? o.map(sorted) : o && typeof o === 'object' ? Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, sorted(v)])) : o
  const nb = { cells, metadata: { kernelspec: { name: language }, language_info: { name: language } }, nbformat: 4, nbformat_minor: minor }
  return `${JSON.stringify(sorted(nb), null, 1)}\n`
}

const lines = (s: string) => s.split(/(?<=\n)/)
const md = (id: string, source: string): Cell => ({ cell_type: 'markdown', id, metadata: {}, source: lines(source) })
const code = (id: string, source: string, outputs: Cell[] = [], count: number | null = 1): Cell => ({
  cell_type: 'code',
  execution_count: count,
  id,
  metadata: {},
  outputs,
  source: lines(source),
})

const PNG = png(40, 20).toString('base64')

const everyOutput = [
  code('calc', 'print("hi")\n1 + 1', [
    { name: 'stdout', output_type: 'stream', text: ['hi\n', 'there\n'] },
    { data: { 'text/plain': ['2'] }, execution_count: 1, metadata: {}, output_type: 'execute_result' },
    { data: { 'image/png': `${PNG}\n`, 'text/plain': ['<Figure size 40x20>'] }, metadata: {}, output_type: 'display_data' },
    { ename: 'ZeroDivisionError', evalue: 'division by zero', output_type: 'error', traceback: ['\u001b[0;31mZeroDivisionError\u001b[0m: division by zero'] },
    { output_type: 'update_display_data_of_a_widget' },
  ]),
]

function put(dir: string, name: string, text: string): string {
  const p = path.join(dir, name)
  fs.writeFileSync(p, text)
  return p
}

/** The byte spans of the cells of a notebook written by `notebook()`. */
function cellSpans(doc: string): Array<[number, number]> {
  const out: Array<[number, number]> = []
  let at = doc.indexOf('\n  {\n')
  while (at >= 0) {
    const end = doc.indexOf('\n  }', at + 1)
    out.push([at + 3, end + 4])
    at = doc.indexOf('\n  {\n', end)
  }
  return out
}

describe('Read of a notebook', () => {
  it('renders cells as Claude Code does: ids, types, sources, text outputs and image blocks', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'n.ipynb', notebook([md('intro', '# Title\nText'), ...everyOutput, { cell_type: 'raw', metadata: {}, source: 'raw!' }]))
    const r = await session.call('Read', { file_path: 'n.ipynb' })
    ok(r)
    expect(r.content.map((b) => b.type)).toEqual(['text', 'image', 'text'])
    const [first, image, last] = r.content as unknown as [{ text: string }, { data: string; mimeType: string }, { text: string }]
    expect(first.text).toBe(
      [
        '<cell id="intro"><cell_type>markdown</cell_type># Title\nText</cell id="intro">',
        '<cell id="calc">print("hi")\n1 + 1</cell id="calc">',
        '\nhi\nthere\n',
        '\n2',
        '\n<Figure size 40x20>',
      ].join('\n'),
    )
    expect(image.mimeType).toBe('image/png')
    expect(Buffer.from(image.data, 'base64').subarray(1, 4).toString()).toBe('PNG')
    expect(last.text).toBe(
      '\nZeroDivisionError: division by zero\nZeroDivisionError: division by zero\n\nOutputs of an unknown type are not shown.\n<cell id="cell-2"><cell_type>raw</cell_type>raw!</cell id="cell-2">',
    )
    expect(r.data).toMatchObject({ kind: 'notebook', totalCells: 3, startCell: 1, endCell: 3, language: 'python' })
  })

  it('names the language of a kernel that is not Python, downscales big images, and cuts long outputs', async () => {
    const { dir, session } = workspace({ preset: 'claude-code', limits: { imageMaxEdge: 100, notebookOutputChars: 500 } })
    const big = png(1000, 50).toString('base64')
    const long = `${'x'.repeat(3000)}THE END`
    put(dir, 'r.ipynb', notebook([code('a', 'summary(x)', [{ data: { 'image/png': big }, metadata: {}, output_type: 'display_data' }, { name: 'stdout', output_type: 'stream', text: long }])], 'R'))
    const r = await session.call('Read', { file_path: 'r.ipynb' })
    expect(textOf(r)).toContain('<cell id="a"><language>R</language>summary(x)</cell id="a">')
    const image = r.content.find((b) => b.type === 'image') as { data: string }
    expect(imageInfo(Buffer.from(image.data, 'base64')).width).toBe(100)
    expect(textOf(r)).toMatch(/x{300}\n\[… 2,\d{3} characters of output cut …\]\nx+THE END/)
    expect(r.data).toMatchObject({ cutOutputs: 1 })
  })

  it('pages by cell, says where to continue, and holds each page to the token limit', async () => {
    const { dir, session } = workspace({ preset: 'claude-code', limits: { readTokens: 800 } })
    const cells = Array.from({ length: 30 }, (_, i) => code(`c${i}`, `value_${i} = ${'word '.repeat(40)}`))
    put(dir, 'p.ipynb', notebook(cells))
    const over = await session.call('Read', { file_path: 'p.ipynb' })
    const said = fails(over, 'TOKEN_LIMIT')
    const fit = over.data?.suggestedLimit as number
    expect(fit).toBeGreaterThan(0)
    expect(said).toMatch(new RegExp(`p\\.ipynb has 30 cells; read ${fit} cells at a time, e\\.g\\. offset=1 and limit=${fit}`))
    const page = ok(await session.call('Read', { file_path: 'p.ipynb', offset: 3, limit: 2 }))
    expect(page).toMatch(/^<cell id="c2">value_2 = /)
    expect(page).toContain('<cell id="c3">')
    expect(page.endsWith('… 26 more cells; continue with offset=5')).toBe(true)
    expect(fails(await session.call('Read', { file_path: 'p.ipynb', offset: 31 }), 'INVALID_INPUT')).toMatch(/has 30 cells/)
    // The same page again is a short notice.
    expect(ok(await session.call('Read', { file_path: 'p.ipynb', offset: 3, limit: 2 }))).toMatch(/unchanged since you read it \(cells 3-4 of 30\)/)
  })

  it('shows an invalid notebook as text, saying why', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'bad.ipynb', '{"cells": [\n  {"cell_type": "code", "source": "x"\n')
    const t = ok(await session.call('Read', { file_path: 'bad.ipynb' }))
    expect(t).toMatch(/^\(bad\.ipynb is not a valid notebook: it is not valid JSON: expected ',' or '}' at line 3, column 1\. Its text follows\.\)\n1\t\{"cells": \[/)
  })
})

describe('NotebookEdit', () => {
  const doc = notebook([md('intro', '# Title\n'), ...everyOutput, code('tail', 'x = 3', [], null)])

  async function editAfterRead(input: Record<string, unknown>, text = doc): Promise<{ before: string; after: string; r: ToolResult; dir: string }> {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const file = put(dir, 'n.ipynb', text)
    ok(await session.call('Read', { file_path: 'n.ipynb' }))
    const r = await session.call('NotebookEdit', { notebook_path: file, ...input })
    return { before: text, after: fs.readFileSync(file, 'utf8'), r, dir }
  }

  it('replace keeps every byte outside the cell, and clears a code cell\'s outputs', async () => {
    const spans = cellSpans(doc)
    for (const [i, id] of ['intro', 'calc', 'tail'].entries()) {
      const { before, after, r } = await editAfterRead({ cell_id: id, new_source: 'new = "source"\nline 2' })
      expect(ok(r)).toBe(`Updated cell ${id} with new = "source"\nline 2`)
      const [s, e] = spans[i]
      expect(after.slice(0, s)).toBe(before.slice(0, s))
      expect(after.slice(after.length - (before.length - e))).toBe(before.slice(e))
      const cell = JSON.parse(after).cells[i]
      expect(cell.source).toEqual(['new = "source"\n', 'line 2'])
      if (cell.cell_type === 'code') expect([cell.outputs, cell.execution_count]).toEqual([[], null])
      expect(r.data).toMatchObject({ cell_id: id, edit_mode: 'replace', language: 'python', notebook_path: 'n.ipynb', new_source: 'new = "source"\nline 2' })
    }
    const { after } = await editAfterRead({ cell_id: 'calc', new_source: '# prose', cell_type: 'markdown' })
    const cell = JSON.parse(after).cells[1]
    expect(cell).toEqual({ cell_type: 'markdown', id: 'calc', metadata: {}, source: ['# prose'] })
  })

  it('insert adds a cell in the notebook\'s style, after the cell named or first', async () => {
    const spans = cellSpans(doc)
    const { before, after, r } = await editAfterRead({ cell_id: 'calc', new_source: 'y = 2\n', cell_type: 'code', edit_mode: 'insert' })
    const id = r.data?.cell_id as string
    expect(id).toMatch(/^[0-9a-f]{8}$/)
    expect(ok(r)).toBe(`Inserted cell ${id} with y = 2\n`)
    // Everything up to the end of cell 2 and from the start of cell 3 is as it was.
    expect(after.slice(0, spans[1][1])).toBe(before.slice(0, spans[1][1]))
    expect(after.endsWith(before.slice(spans[2][0] - 4))).toBe(true)
    const inserted = `,\n  {\n   "cell_type": "code",\n   "execution_count": null,\n   "id": "${id}",\n   "metadata": {},\n   "outputs": [],\n   "source": [\n    "y = 2\\n"\n   ]\n  }`
    expect(after).toBe(before.slice(0, spans[1][1]) + inserted + before.slice(spans[1][1]))
    const first = await editAfterRead({ new_source: 'top', cell_type: 'markdown', edit_mode: 'insert' })
    expect(JSON.parse(first.after).cells[0]).toMatchObject({ cell_type: 'markdown', source: ['top'] })
    expect(fails((await editAfterRead({ cell_id: 'calc', new_source: 'x', edit_mode: 'insert' })).r, 'INVALID_INPUT')).toMatch(/cell_type is required/)
  })

  it('delete removes the cell and one separator, nothing else', async () => {
    const spans = cellSpans(doc)
    for (const [i, id] of ['intro', 'calc', 'tail'].entries()) {
      const { before, after, r } = await editAfterRead({ cell_id: id, new_source: '', edit_mode: 'delete' })
      expect(ok(r)).toBe(`Deleted cell ${id}`)
      const [s, e] = spans[i]
      const expected = i < 2 ? before.slice(0, s) + before.slice(spans[i + 1][0]) : before.slice(0, spans[i - 1][1]) + before.slice(e)
      expect(after).toBe(expected)
    }
  })

  it('is held to the read-before-write contract and to the version read', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const file = put(dir, 'n.ipynb', doc)
    expect(fails(await session.call('NotebookEdit', { notebook_path: file, cell_id: 'calc', new_source: 'x' }), 'NOT_READ')).toMatch(/Read it first/)
    ok(await session.call('Read', { file_path: file, limit: 1 }))
    fails(await session.call('NotebookEdit', { notebook_path: file, cell_id: 'calc', new_source: 'x' }), 'PARTIAL_READ')
    ok(await session.call('Read', { file_path: file, offset: 2 }))
    fs.writeFileSync(file, doc.replace('# Title', '# Changed'))
    fails(await session.call('NotebookEdit', { notebook_path: file, cell_id: 'calc', new_source: 'x' }), 'STALE')
    ok(await session.call('Read', { file_path: file }))
    ok(await session.call('NotebookEdit', { notebook_path: file, cell_id: 'calc', new_source: 'x' }))
    // Consecutive edits need no new read, and an edit can be undone.
    ok(await session.call('NotebookEdit', { notebook_path: file, cell_id: 'tail', new_source: 'z', edit_mode: 'delete' }))
    await session.undo(file)
    await session.undo(file)
    expect(fs.readFileSync(file, 'utf8')).toBe(doc.replace('# Title', '# Changed'))
  })

  it('refuses clearly: unknown cells, other files, invalid notebooks (left as they were)', async () => {
    const nf = await editAfterRead({ cell_id: 'nope', new_source: 'x' })
    expect(fails(nf.r, 'NOT_FOUND')).toMatch(/no cell has the id "nope"; the cells are intro, calc, tail\. Use a cell id that Read shows/)
    expect(nf.after).toBe(nf.before)
    const { dir, session } = workspace({ preset: 'claude-code' })
    put(dir, 'a.txt', 'text')
    ok(await session.call('Read', { file_path: 'a.txt' }))
    expect(fails(await session.call('NotebookEdit', { notebook_path: 'a.txt', new_source: 'x', cell_id: 'a' }), 'INVALID_INPUT')).toMatch(/not a Jupyter notebook/)
    const bad = '{"cells": "not a list", "nbformat": 4}\n'
    const file = put(dir, 'bad.ipynb', bad)
    ok(await session.call('Read', { file_path: 'bad.ipynb' }))
    const r = await session.call('NotebookEdit', { notebook_path: file, cell_id: 'x', new_source: 'y' })
    expect(fails(r, 'INVALID_NOTEBOOK')).toMatch(/is not a Jupyter notebook: its "cells" is not a list, so it was not changed/)
    expect(fs.readFileSync(file, 'utf8')).toBe(bad)
    fails(await session.call('NotebookEdit', { notebook_path: 'missing.ipynb', cell_id: 'x', new_source: 'y' }), 'NOT_FOUND')
  })

  it('revka\'s notebook_edit and the typed method edit the same way', async () => {
    const { dir, session } = workspace({ policy: { consentGate: false } })
    put(dir, 'n.ipynb', doc)
    ok(await session.call('file_read', { path: 'n.ipynb' }))
    ok(await session.call('notebook_edit', { notebook_path: 'n.ipynb', cell_id: 'intro', new_source: '# New' }))
    const out = await session.editNotebook({ notebook_path: 'n.ipynb', cell_id: 'calc', new_source: 'print(2)' })
    expect(textOf(out)).toBe('Updated cell calc with print(2)')
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'n.ipynb'), 'utf8')).cells.map((c: { source: string[] }) => c.source.join(''))).toEqual(['# New', 'print(2)', 'x = 3'])
  })
})

describe('a 50 MB notebook', () => {
  it('reads a page of cells, edits one, and keeps the other 50 MB byte for byte', async () => {
    const { dir, session } = workspace({ preset: 'claude-code' })
    const blob = 'A'.repeat(10 * 1024 * 1024)
    const cells = [md('head', '# Big'), ...Array.from({ length: 5 }, (_, i) => code(`big${i}`, `data_${i}`, [{ name: 'stdout', output_type: 'stream', text: blob }])), code('last', 'done')]
    const doc = notebook(cells)
    expect(doc.length).toBeGreaterThan(50 * 1024 * 1024)
    const file = put(dir, 'big.ipynb', doc)
    const t0 = performance.now()
    const r = await session.call('Read', { file_path: 'big.ipynb' })
    const readMs = performance.now() - t0
    const text = ok(r)
    expect(text).toContain('<cell id="big4">data_4</cell id="big4">')
    expect(text).toMatch(/characters of output cut/)
    expect(r.data).toMatchObject({ totalCells: 7, cutOutputs: 5 })
    const t1 = performance.now()
    const e = await session.call('NotebookEdit', { notebook_path: file, cell_id: 'last', new_source: 'print("edited")' })
    const editMs = performance.now() - t1
    ok(e)
    const after = fs.readFileSync(file, 'utf8')
    const [s] = cellSpans(doc)[6]
    expect(after.slice(0, s)).toBe(doc.slice(0, s))
    expect(JSON.parse(after).cells[6].source).toEqual(['print("edited")'])
    console.log(`50 MB notebook: read ${readMs.toFixed(0)} ms, edit ${editMs.toFixed(0)} ms`)
  })
})
