import {spawn} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parse} from 'csv-parse/sync'
import {describe, expect, it} from 'vitest'

import {e2eSeeded, onPostgres, tableCount} from '../helpers/e2e.js'
import {dumpTable, PAYMENTS_HEADER, paymentsCsv, seedCatalog, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {ROOT, run, withEnv} from '../helpers/run.js'

/** The revenue fixtures' catalog in a new store, made once and copied (test/helpers/e2e.ts e2eSeeded: on PostgreSQL by `db copy`). */
const seeded = () => e2eSeeded('revenue catalog', async (file) => await withStore(file, seedCatalog))

const count = async (db: string) => await tableCount(db, 'charges')

/**
 * The import killed part way runs bin/run.js (a process killed); the rest runs in-process
 * (test/helpers/run.ts): what it tests is the store and the summary.
 */
describe('charges import of a folder end to end (bin/run.js)', () => {
  it('three monthly exports with a row repeated across files and a bad row: counts, the rejects file names the source file, a re-run imports nothing new', async () => {
    const db = await seeded()
    const dir = tempDir()
    const rows = paymentsCsv(1500).trimEnd().split('\n').slice(1)
    const head = PAYMENTS_HEADER.join(',')
    const jan = rows.slice(0, 500)
    const feb = [...rows.slice(500, 1000), jan[123]]
    const mar = rows.slice(1000, 1500)
    mar[10] = mar[10].replace(/^(ch_\w+),[^,]*,/, '$1,2026-13-45 10:00:00,')
    for (const [name, lines] of [['2026-01.csv', jan], ['2026-02.csv', feb], ['2026-03.csv', mar]] as const) writeFileSync(join(dir, name), [head, ...lines].join('\n') + '\n')

    const r = await withEnv({PRICECTL_PROGRESS_INTERVAL_MS: '0'}, () => run(db, ['charges', 'import', dir, '--json']))
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
    expect(await count(db)).toBe(1499)

    const again = await run(db, ['charges', 'import', dir, '--json'])
    expect(again.code).toBe(1)
    expect(again.json).toMatchObject({inserted: 0, read: 1501, rejected: 1, stale: 0, unchanged: 1500, updated: 0})
    expect(again.json.files.map((f: any) => f.inserted)).toEqual([0, 0, 0])
  })

  // On SQLite only (the stores' charges are compared with SQL); test/e2e/import-bin.test.ts kills an import on PostgreSQL.
  it.skipIf(onPostgres)('killed part way through a folder: whole batches only, a re-run inserts the rest and ends like an uninterrupted run', async () => {
    const BATCH = 500
    const dir = tempDir()
    const rows = paymentsCsv(45_000).trimEnd().split('\n').slice(1)
    const head = PAYMENTS_HEADER.join(',')
    for (const [k, name] of ['2026-01.csv', '2026-02.csv', '2026-03.csv'].entries()) writeFileSync(join(dir, name), [head, ...rows.slice(k * 15_000, (k + 1) * 15_000)].join('\n') + '\n')
    const killed = await seeded()
    const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'charges', 'import', dir], {
        cwd: ROOT,
        env: {...process.env, NODE_ENV: undefined, PRICECTL_DB: killed, PRICECTL_IMPORT_BATCH: String(BATCH), PRICECTL_PROGRESS_INTERVAL_MS: '0'} as NodeJS.ProcessEnv,
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      let stderr = ''
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString()
        // In the second file: a progress line after more than 15,000 rows (each file is several 1 MB reads).
        const read = [...stderr.matchAll(/(\d+) rows read/g)].map((m) => Number(m[1]))
        if (read.some((n) => n > 15_000) && child.exitCode === null && !child.killed) child.kill('SIGKILL')
      })
      child.on('error', reject)
      child.on('exit', (_code, sig) => resolve(sig))
    })
    expect(signal).toBe('SIGKILL')
    const committed = await count(killed)
    expect(committed).toBeGreaterThan(15_000)
    expect(committed).toBeLessThan(45_000)
    expect(committed % BATCH).toBe(0)
    const resumed = await withEnv({PRICECTL_IMPORT_BATCH: String(BATCH)}, () => run(killed, ['charges', 'import', dir, '--json']))
    expect(resumed.code).toBe(0)
    expect(resumed.json).toMatchObject({inserted: 45_000 - committed, read: 45_000, rejected: 0, unchanged: committed, updated: 0})
    const clean = await seeded()
    expect((await run(clean, ['charges', 'import', dir, '--json'])).json).toMatchObject({inserted: 45_000})
    expect(await withStore(killed, (d) => dumpTable(d, 'charges'))).toEqual(await withStore(clean, (d) => dumpTable(d, 'charges')))
  })
})
