import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parse} from 'csv-parse/sync'
import {describe, expect, it} from 'vitest'

import {PAYMENTS_HEADER, paymentsCsv, seedCatalog, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {runBin} from '../helpers/run.js'

describe('charges import of a folder end to end (bin/run.js)', () => {
  it('three monthly exports with a row repeated across files and a bad row: counts, the rejects file names the source file, a re-run imports nothing new', () => {
    const db = join(tempDir(), 'store.db')
    withStore(db, seedCatalog)
    const dir = tempDir()
    const rows = paymentsCsv(1500).trimEnd().split('\n').slice(1)
    const head = PAYMENTS_HEADER.join(',')
    const jan = rows.slice(0, 500)
    const feb = [...rows.slice(500, 1000), jan[123]]
    const mar = rows.slice(1000, 1500)
    mar[10] = mar[10].replace(/^(ch_\w+),[^,]*,/, '$1,2026-13-45 10:00:00,')
    for (const [name, lines] of [['2026-01.csv', jan], ['2026-02.csv', feb], ['2026-03.csv', mar]] as const) writeFileSync(join(dir, name), [head, ...lines].join('\n') + '\n')

    const r = runBin(db, ['charges', 'import', dir, '--json'], {env: {PRICECTL_PROGRESS_INTERVAL_MS: '0'}})
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('')
    expect(r.json).toMatchObject({inserted: 1499, read: 1501, rejected: 1, stale: 0, success: false, unchanged: 1, updated: 0})
    expect(r.json.files.map((f: any) => [f.file, f.read, f.inserted, f.unchanged, f.rejected])).toEqual([
      [join(dir, '2026-01.csv'), 500, 500, 0, 0],
      [join(dir, '2026-02.csv'), 501, 500, 1, 0],
      [join(dir, '2026-03.csv'), 500, 499, 0, 1],
    ])
    expect(r.json.rejects_file).toBe(join(dir, 'charges.rejects.csv'))
    const bad = parse(readFileSync(r.json.rejects_file, 'utf8'), {columns: true}) as Record<string, string>[]
    expect(bad).toEqual([expect.objectContaining({line: '12', source_file: join(dir, '2026-03.csv')})])
    expect(bad[0].reason).toMatch(/^bad date "2026-13-45 10:00:00"/)
    expect(withStore(db, (d) => (d.prepare('SELECT count(*) AS n FROM charges').get() as {n: number}).n)).toBe(1499)

    const again = runBin(db, ['charges', 'import', dir, '--json'])
    expect(again.code).toBe(1)
    expect(again.json).toMatchObject({inserted: 0, read: 1501, rejected: 1, stale: 0, unchanged: 1500, updated: 0})
    expect(again.json.files.map((f: any) => f.inserted)).toEqual([0, 0, 0])
  })
})
