import {copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {parse} from 'csv-parse/sync'
import {beforeEach, describe, expect, it} from 'vitest'

import {importCharges, importSubscriptions, openStore} from '../../src/index.js'
import {PAYMENTS_HEADER, paymentsCsv, runArgs, seedCatalog, tempDir, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {ROOT, tempStore} from '../helpers/run.js'

/** Several files at once (issue 16 point 4): one writer, one summary with `files`, one rejects file naming each row's source file. */

const FIXTURES = join(ROOT, 'fixtures', 'imports')

function rejects(path: string): Record<string, string>[] {
  return parse(readFileSync(path, 'utf8'), {columns: true, relax_column_count: true}) as Record<string, string>[]
}

function header(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n')[0].split(',')
}

async function charges(db: string): Promise<Record<string, any>[]> {
  return await withStore(db, (d) => d.prepare('SELECT * FROM charges ORDER BY origin_id').all() as Record<string, any>[])
}

/** Data lines of paymentsCsv: row i is line i + 1 of paymentsCsv(n) for i < n. */
function paymentLines(from: number, to: number): string[] {
  return paymentsCsv(to - from, from).trimEnd().split('\n').slice(1)
}

/**
 * A folder of three monthly payments exports: 5 rows each, the first row of February is
 * January's last row again, and March's third row has a currency no one knows. Plus what a
 * folder import leaves out: a text file, a hidden CSV and a subfolder.
 */
function monthlyFolder(): string {
  const dir = tempDir()
  const head = PAYMENTS_HEADER.join(',')
  const jan = paymentLines(0, 5)
  const feb = [jan[4], ...paymentLines(5, 9)]
  const mar = paymentLines(9, 14)
  mar[2] = mar[2].replace(/,(usd|eur),/, ',xyz,')
  // Written out of name order: the folder is read by name.
  writeFileSync(join(dir, '2026-03.csv'), [head, ...mar].join('\n') + '\n')
  writeFileSync(join(dir, '2026-01.csv'), [head, ...jan].join('\n') + '\n')
  writeFileSync(join(dir, '2026-02.csv'), [head, ...feb].join('\n') + '\n')
  writeFileSync(join(dir, 'notes.txt'), 'not an export\n')
  writeFileSync(join(dir, '.hidden.csv'), 'a,b\n1,2\n')
  mkdirSync(join(dir, 'old.csv'))
  return dir
}

describe('charges import of several files', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1772323200'
  })

  it('a folder of monthly exports: files by name, a row repeated across files is unchanged the second time, one rejects file naming the source file; a re-run imports nothing new', async () => {
    const dir = monthlyFolder()
    const r = await runArgs(db, ['charges', 'import', dir, '--json'])
    expect(r.code).toBe(1)
    const rejectsFile = join(dir, 'charges.rejects.csv')
    expect(r.json).toMatchObject({dry_run: false, file: resolve(dir), inserted: 13, preset: 'gateway_a_payments', read: 15, rejected: 1, rejects_file: rejectsFile, stale: 0, success: false, unchanged: 1, updated: 0})
    expect(r.json.message).toBe(`1 of 15 rows rejected; see ${rejectsFile} (source file, line and reason per row), fix them and run the import again (rows already imported are unchanged by a re-run)`)
    expect(r.json.files).toEqual([
      {file: join(dir, '2026-01.csv'), inserted: 5, preset: 'gateway_a_payments', read: 5, rejected: 0, stale: 0, unchanged: 0, updated: 0},
      {file: join(dir, '2026-02.csv'), inserted: 4, preset: 'gateway_a_payments', read: 5, rejected: 0, stale: 0, unchanged: 1, updated: 0},
      {file: join(dir, '2026-03.csv'), inserted: 4, preset: 'gateway_a_payments', read: 5, rejected: 1, stale: 0, unchanged: 0, updated: 0},
    ])
    // The columns of a one-file rejects CSV keep their places; source_file comes after them.
    expect(header(rejectsFile)).toEqual(['line', 'reason', ...PAYMENTS_HEADER, 'source_file'])
    const bad = rejects(rejectsFile)
    expect(bad).toHaveLength(1)
    expect(bad[0]).toMatchObject({Currency: 'xyz', id: 'ch_00000b', line: '4', source_file: join(dir, '2026-03.csv')})
    expect(bad[0].reason).toMatch(/^currency: unknown currency "xyz"/)
    const stored = await charges(db)
    expect(stored).toHaveLength(13)
    expect(stored.map((c) => c.origin_id)).not.toContain('ch_00000b')

    // The rejects file lands in the folder and is skipped by the next run, which imports nothing new.
    const again = await runArgs(db, ['charges', 'import', dir, '--json'])
    expect(again.json).toMatchObject({inserted: 0, read: 15, rejected: 1, stale: 0, unchanged: 14, updated: 0})
    expect(again.json.files.map((f: any) => f.file)).toEqual(['2026-01.csv', '2026-02.csv', '2026-03.csv'].map((n) => join(dir, n)))
    expect(await charges(db)).toEqual(stored)

    // Fixed at the source: the rejects file is removed, as for one file.
    const mar = readFileSync(join(dir, '2026-03.csv'), 'utf8').replace(',xyz,', ',usd,')
    writeFileSync(join(dir, '2026-03.csv'), mar)
    const fixed = await runArgs(db, ['charges', 'import', dir, '--json'])
    expect(fixed.code).toBe(0)
    expect(fixed.json).toMatchObject({inserted: 1, rejected: 0, rejects_file: null, success: true, unchanged: 14})
    expect(fixed.json.message).toBe(`charges imported from 3 files: 15 read, 1 inserted, 0 updated, 14 unchanged, 0 stale, 0 rejected (gateway_a_payments, ${fixed.json.rows_per_second} rows/s)`)
    expect(existsSync(rejectsFile)).toBe(false)
  })

  it('files named one by one are written in the order given; the same end state with --jobs 1 as with several readers', async () => {
    const dir = monthlyFolder()
    const files = ['2026-03.csv', '2026-01.csv', '2026-02.csv'].map((n) => join(dir, n))
    const r = await runArgs(db, ['charges', 'import', ...files, '--json'])
    expect(r.json).toMatchObject({file: files.join(', '), inserted: 13, read: 15, rejected: 1, rejects_file: join(dir, 'charges.rejects.csv'), unchanged: 1})
    expect(r.json.files.map((f: any) => [f.file, f.inserted, f.unchanged])).toEqual([
      [files[0], 4, 0],
      [files[1], 5, 0],
      [files[2], 4, 1],
    ])
    const other = tempStore()
    await withStore(other, seedCatalog)
    const serial = await runArgs(other, ['charges', 'import', ...files, '--jobs', '1', '--rejects', join(tempDir(), 'r.csv'), '--json'])
    expect(serial.json).toMatchObject({inserted: 13, read: 15, rejected: 1, unchanged: 1})
    expect(serial.json.files).toEqual(r.json.files)
    const strip = (rows: Record<string, any>[]) => rows.map(({id: _id, ...rest}) => rest)
    expect(strip(await charges(other))).toEqual(strip(await charges(db)))
    // The same file twice is read once; a rejects CSV named by a glob is left out.
    const twice = await runArgs(db, ['charges', 'import', files[1], files[1], join(dir, 'charges.rejects.csv'), '--json'])
    expect(twice.json).toMatchObject({inserted: 0, read: 5, unchanged: 5})
    expect(twice.json.files).toHaveLength(1)
  })

  it('exports of different layouts: each file detected on its own, one rejects header with every column, cells under their own', async () => {
    const dir = tempDir()
    copyFileSync(join(FIXTURES, 'payments-new.csv'), join(dir, 'a-new.csv'))
    copyFileSync(join(FIXTURES, 'payments-old.csv'), join(dir, 'b-old.csv'))
    const r = await runArgs(db, ['charges', 'import', dir, '--product', 'lifetime', '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 8, preset: 'gateway_a_payments', read: 20, rejected: 12})
    expect(r.json.files.map((f: any) => [f.read, f.inserted, f.rejected])).toEqual([
      [11, 5, 6],
      [9, 3, 6],
    ])
    const newHeader = header(join(dir, 'a-new.csv'))
    const oldHeader = header(join(dir, 'b-old.csv'))
    const all = header(r.json.rejects_file)
    expect(all.at(-1)).toBe('source_file')
    const cols = all.slice(2, -1)
    // The first file's columns, then the second's that are new.
    expect(cols.slice(0, newHeader.length)).toEqual(newHeader)
    expect(new Set(cols)).toEqual(new Set([...newHeader, ...oldHeader]))
    const bad = rejects(r.json.rejects_file)
    expect(bad.map((b) => [b.source_file.endsWith('a-new.csv') ? 'new' : 'old', b.line])).toEqual([
      ...['5', '6', '7', '8', '9', '10'].map((l) => ['new', l]),
      ...['5', '6', '7', '8', '9', '10'].map((l) => ['old', l]),
    ])
    // A row of the second layout: every cell under the column it was read from.
    const oldRows = parse(readFileSync(join(dir, 'b-old.csv'), 'utf8'), {columns: true, relax_column_count: true}) as Record<string, string>[]
    const row = bad.find((b) => b.source_file.endsWith('b-old.csv'))!
    const source = oldRows[Number(row.line) - 2]
    for (const [k, v] of Object.entries(source)) expect(row[k], k).toBe(v.startsWith('=') ? `'${v}` : v)
  })

  it('refuses the whole import, naming the file, when one file cannot be read or mapped: nothing written', async () => {
    const dir = monthlyFolder()
    const good = join(dir, '2026-01.csv')
    const unknown = writeTemp('z-unknown.csv', 'a,b,c\n1,2,3\n', dir)
    const r = await runArgs(db, ['charges', 'import', dir, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toMatch(new RegExp(`^${unknown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: unrecognised header \\("a", "b", "c"\\)`))
    const subs = await runArgs(db, ['charges', 'import', good, join(FIXTURES, 'subscriptions-gateway-a.csv'), '--rejects', join(tempDir(), 'r.csv'), '--json'])
    expect(subs.code).toBe(2)
    expect(subs.json.message).toContain(`${join(FIXTURES, 'subscriptions-gateway-a.csv')}: this file looks like a gateway_a subscriptions export`)
    const missing = await runArgs(db, ['charges', 'import', good, join(dir, 'nope.csv'), '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.message).toBe(`cannot read ${join(dir, 'nope.csv')}: no such file`)
    const empty = await runArgs(db, ['charges', 'import', good, writeTemp('e.csv', '', dir), '--json'])
    expect(empty.code).toBe(2)
    expect(empty.json.message).toContain(`${join(dir, 'e.csv')} is empty`)
    const noCsv = tempDir()
    writeFileSync(join(noCsv, 'readme.txt'), 'x')
    const none = await runArgs(db, ['charges', 'import', noCsv, '--json'])
    expect(none.code).toBe(2)
    expect(none.json.message).toContain('is a folder without any *.csv file')
    const jobs = await runArgs(db, ['charges', 'import', good, '--jobs', '0', '--json'])
    expect(jobs.code).toBe(2)
    expect(await charges(db)).toHaveLength(0)
    expect(existsSync(join(dir, 'charges.rejects.csv'))).toBe(false)
  })

  it('one progress line stream for all files, a totals table and a per-file table', async () => {
    const dir = monthlyFolder()
    writeFileSync(join(dir, '2026-03.csv'), readFileSync(join(dir, '2026-03.csv'), 'utf8').replace(',xyz,', ',usd,'))
    process.env.PRICECTL_PROGRESS_INTERVAL_MS = '0'
    try {
      const plain = await runArgs(db, ['charges', 'import', dir])
      expect(plain.code).toBe(0)
      const lines = plain.stderr.trim().split('\n')
      expect(lines.every((l) => /^charges import: \d+ rows read \(\d+%, \d+ rows\/s\)$/.test(l))).toBe(true)
      expect(lines.at(-1)).toMatch(/^charges import: 15 rows read \(100%/)
      expect(plain.stdout).toMatch(/│ files\s+│ 3\s+│/)
      expect(plain.stdout).toMatch(/│ inserted\s+│ 14\s+│/)
      expect(plain.stdout).toMatch(/file[\s│]+preset[\s│]+read[\s│]+inserted[\s│]+updated[\s│]+unchanged[\s│]+stale[\s│]+rejected/)
      expect(plain.stdout).toMatch(/2026-02\.csv[\s│]+gateway_a_payments[\s│]+5[\s│]+4[\s│]+0[\s│]+1[\s│]+0[\s│]+0 /)
      expect(plain.stdout).toContain('charges imported from 3 files: 15 read, 14 inserted, 0 updated, 1 unchanged, 0 stale, 0 rejected')
    } finally {
      delete process.env.PRICECTL_PROGRESS_INTERVAL_MS
    }
  })

  it('one file keeps its output: the same fields plus files with its one entry; the rejects file gains source_file', async () => {
    const lines = paymentsCsv(3).split('\n')
    lines[2] = lines[2].replace(',usd,', ',xyz,')
    const file = writeTemp('p.csv', lines.join('\n'))
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    // rejected_by_reason and settled_usd: the summary's reason counts and settled USD (issue 16, points 2 and 3).
    expect(Object.keys(r.json).sort()).toEqual(['dry_run', 'file', 'files', 'inserted', 'message', 'preset', 'read', 'rejected', 'rejected_by_reason', 'rejects_file', 'rows_per_second', 'seconds', 'settled_usd', 'stale', 'success', 'unchanged', 'updated'])
    expect(r.json.rejected_by_reason).toEqual({'unknown currency': 1})
    expect(r.json).toMatchObject({file: resolve(file), inserted: 2, read: 3, rejected: 1, rejects_file: `${file}.rejects.csv`})
    expect(r.json.message).toMatch(/^1 of 3 rows rejected; see .*p\.csv\.rejects\.csv \(line and reason per row\)/)
    expect(r.json.files).toEqual([{file: resolve(file), inserted: 2, preset: 'gateway_a_payments', read: 3, rejected: 1, stale: 0, unchanged: 0, updated: 0}])
    expect(rejects(`${file}.rejects.csv`)[0]).toMatchObject({line: '3', source_file: resolve(file)})
  })
})

describe('rejects file columns', () => {
  it('source_file stays in its column for a row with too few or too many cells: short rows are padded, extra cells come after it', async () => {
    const db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1772323200'
    const dir = tempDir()
    const lines = paymentsCsv(3).trimEnd().split('\n')
    writeFileSync(join(dir, 'a.csv'), [...lines, 'ch_short,2026-01-01'].join('\n') + '\n')
    writeFileSync(join(dir, 'b.csv'), [lines[0], `${lines[2]},extra1,extra2`].join('\n') + '\n')
    const r = await runArgs(db, ['charges', 'import', dir, '--json'])
    expect(r.json).toMatchObject({inserted: 3, rejected: 2, unchanged: 0})
    const table = parse(readFileSync(r.json.rejects_file, 'utf8'), {relax_column_count: true}) as string[][]
    const at = PAYMENTS_HEADER.length + 2
    expect(table[0][at]).toBe('source_file')
    expect(table[1].slice(0, 4)).toEqual(['5', `expected ${PAYMENTS_HEADER.length} columns, got 2`, 'ch_short', '2026-01-01'])
    expect(table[1].slice(4, at)).toEqual(Array.from({length: at - 4}, () => ''))
    expect(table[1].slice(at)).toEqual([join(dir, 'a.csv')])
    expect(table[2][2]).toBe('ch_000001')
    expect(table[2].slice(at)).toEqual([join(dir, 'b.csv'), 'extra1', 'extra2'])
  })
})

describe('library: importCharges / importSubscriptions with several paths', () => {
  it('take an array of files and folders, or a folder', async () => {
    const db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1772323200'
    const dir = monthlyFolder()
    writeFileSync(join(dir, '2026-03.csv'), readFileSync(join(dir, '2026-03.csv'), 'utf8').replace(',xyz,', ',usd,'))
    const store = openStore(db)
    try {
      const r = await importCharges(store, [join(dir, '2026-01.csv'), join(dir, '2026-02.csv')], {jobs: 2})
      expect(r).toMatchObject({inserted: 9, read: 10, success: true, unchanged: 1})
      expect(r.message).toMatch(/^charges imported from 2 files: /)
      expect(r.files).toHaveLength(2)
      const folder = await importCharges(store, dir)
      expect(folder).toMatchObject({file: resolve(dir), inserted: 5, read: 15, unchanged: 10})
      const subsDir = tempDir()
      copyFileSync(join(FIXTURES, 'subscriptions-gateway-a.csv'), join(subsDir, '1.csv'))
      copyFileSync(join(FIXTURES, 'subscriptions-gateway-c.csv'), join(subsDir, '2.csv'))
      const subs = await importSubscriptions(store, subsDir)
      expect(subs).toMatchObject({inserted: 9, preset: 'gateway_a_subscriptions, gateway_c_subscriptions', read: 21, rejected: 12, success: false})
      expect(subs.files.map((f) => f.preset)).toEqual(['gateway_a_subscriptions', 'gateway_c_subscriptions'])
    } finally {
      await store.close()
    }
  })
})
