import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import pg from 'pg'
import {afterEach, describe, expect, it} from 'vitest'

import type {InterruptedError} from '../../src/errors.js'
import {importFiles, type ImportOptions} from '../../src/import/importer.js'
import {openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {addProduct, charge, chargeRow, withoutId} from '../helpers/contract-fixtures.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'
import {awkwardPaymentsCsv, paymentsCsv, seedCatalog, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {run} from '../helpers/run.js'

/**
 * A first load on PostgreSQL (ImportWriterOptions.hold) drops the target's indexes but its
 * primary key after the first batch and holds its batches in one transaction, building the
 * indexes once (imports.ts, PgImportWriter.rebuild). What an operator relies on: the first
 * batch is durable at once, nothing held is visible or kept before finish(), the table comes
 * out with every index and its sequence as they were, a repeated key ends the hold with the
 * same result as SQLite's, and a role that does not own the table imports without holding.
 */
describe('PostgreSQL import: a first load holds its batches', () => {
  let db: PgDatabase | undefined
  let store: StorePort | undefined
  let dir: string | undefined
  afterEach(async () => {
    await store?.close()
    await db?.drop()
    if (dir) rmSync(dir, {force: true, recursive: true})
    store = db = dir = undefined
  })

  const rows = (product: number, from: number, to: number, event = 'evt_1', ts = 100) =>
    Array.from({length: to - from}, (_, i) =>
      chargeRow(charge({latest_event_id: event, latest_event_timestamp: ts, origin_id: `ch_${from + i}`, product_id: product, user_id: `u${from + i}`})),
    )

  /** What another client sees: the charges it can count, the table's indexes and its identity's cache. */
  async function seen(url: string): Promise<{cache: number; count: number; indexes: string[]}> {
    const other = new pg.Client({connectionString: url})
    await other.connect()
    try {
      const count = (await other.query<{n: string}>('SELECT count(*) AS n FROM charges')).rows[0].n
      const indexes = (await other.query<{def: string}>(`SELECT indexdef AS def FROM pg_indexes WHERE tablename = 'charges' ORDER BY indexname`)).rows.map((r) => r.def)
      const cache = (await other.query<{c: string}>(`SELECT seqcache AS c FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('charges', 'id')::regclass`)).rows[0].c
      return {cache: Number(cache), count: Number(count), indexes}
    } finally {
      await other.end()
    }
  }

  /** Count the charges, giving up on a lock after `ms`. */
  async function readWithin(url: string, ms: number): Promise<number> {
    const other = new pg.Client({connectionString: url})
    await other.connect()
    try {
      await other.query(`SET lock_timeout = ${ms}`)
      return Number((await other.query<{n: string}>('SELECT count(*) AS n FROM charges')).rows[0].n)
    } finally {
      await other.end()
    }
  }

  /** A fresh store with one product, its table as another client sees it, and a holding writer that wrote and committed `batches` batches of 2,000 rows. */
  async function holding(batches: number) {
    const made = await freshPgDatabase()
    const opened = openStore(made.url)
    db = made
    store = opened
    const product = await addProduct(opened, 'pro_monthly')
    const before = await seen(made.url)
    const w = opened.imports.writer('charges', {hold: true})
    for (let b = 0; b < batches; b++) {
      await w.writeChunk(rows(product, 2000 * b, 2000 * (b + 1)))
      expect(await w.commit()).toBe(true)
    }
    return {before, opened, product, url: made.url, w}
  }

  it('commits the first batch alone, holds the next ones with the table locked, and ends with every index and the sequence as they were', async () => {
    db = await freshPgDatabase()
    store = openStore(db.url)
    const product = await addProduct(store, 'pro_monthly')
    const before = await seen(db.url)
    expect(before.indexes.length).toBeGreaterThan(1)

    const w = store.imports.writer('charges', {hold: true})
    await w.writeChunk(rows(product, 0, 3000))
    expect(await w.commit()).toBe(true)
    expect(w.held).toBe(0)
    expect((await seen(db.url)).count).toBe(3000)

    await w.writeChunk(rows(product, 3000, 6000))
    expect(await w.commit()).toBe(true)
    await w.writeChunk(rows(product, 6000, 9000))
    expect(await w.commit()).toBe(true)
    expect(w.held).toBe(6000)
    // The hold has the table: a reader waits for its commit (docs/postgres.md, "Import performance").
    await expect(readWithin(db.url, 200)).rejects.toThrow(/lock timeout/)

    expect(await w.finish()).toBe(true)
    expect(w.held).toBe(0)
    await w.close()
    expect(w.counts.inserted).toBe(9000)
    expect(await seen(db.url)).toEqual({...before, count: 9000})
  })

  it('a hold commits at the batch that brings the rows written to holdRows: everyone sees them, the indexes and the sequence as they were; the rest goes in plain batches', async () => {
    db = await freshPgDatabase()
    store = openStore(db.url)
    const product = await addProduct(store, 'pro_monthly')
    const before = await seen(db.url)
    const w = store.imports.writer('charges', {hold: true, holdRows: 6000})
    const batch = async (b: number) => {
      await w.writeChunk(rows(product, 2000 * b, 2000 * (b + 1)))
      expect(await w.commit()).toBe(true)
    }
    await batch(0)
    expect(w.held).toBe(0)
    await batch(1)
    expect(w.held).toBe(2000)
    // 6,000 rows written: the hold commits with this batch, not one later.
    await batch(2)
    expect(w.held).toBe(0)
    expect(await seen(db.url)).toEqual({...before, count: 6000})
    // No hold begins again: the next batch is committed as it ends.
    await batch(3)
    expect(w.held).toBe(0)
    expect((await seen(db.url)).count).toBe(8000)
    expect(await w.finish()).toBe(true)
    await w.close()
    expect(w.counts.inserted).toBe(8000)
  })

  it('another session waiting for the hold ends it at the next batch: the waiter gets its answer, and the load goes on in plain batches', async () => {
    const {before, product, url, w} = await holding(3)
    expect(w.held).toBe(4000)
    // A reader of the table (a report, say) comes to wait for the hold.
    const waiter = readWithin(url, 30_000)
    const other = new pg.Client({connectionString: url})
    await other.connect()
    try {
      for (let waiting = false; !waiting; ) {
        const r = await other.query<{n: number}>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)
        waiting = r.rows[0].n > 0
      }
    } finally {
      await other.end()
    }
    await w.writeChunk(rows(product, 6000, 8000))
    expect(await w.commit()).toBe(true)
    expect(w.held).toBe(0)
    // It saw the whole hold, committed.
    expect(await waiter).toBe(8000)
    expect(await seen(url)).toEqual({...before, count: 8000})
    // No hold begins again: the next batch is durable at its commit.
    await w.writeChunk(rows(product, 8000, 10_000))
    await w.commit()
    expect(w.held).toBe(0)
    expect((await seen(url)).count).toBe(10_000)
    await w.close()
  })

  it('a batch closed while held leaves nothing of the hold and the table with its indexes; the first batch stays', async () => {
    const {before, opened, product, url, w} = await holding(2)
    expect(w.held).toBe(2000)
    // A run that fails or is interrupted closes its writer without finish().
    await w.close()
    expect(await seen(url)).toEqual({...before, count: 2000})
    // Running the same import again writes the rest.
    const again = opened.imports.writer('charges', {hold: true})
    await again.writeChunk(rows(product, 0, 4000))
    expect(await again.commit()).toBe(true)
    expect(await again.finish()).toBe(true)
    await again.close()
    expect(again.counts).toMatchObject({inserted: 2000, unchanged: 2000})
    expect(await seen(url)).toEqual({...before, count: 4000})
  })

  it("a key repeated in a held batch ends the hold, and the records and counts are SQLite's", async () => {
    db = await freshPgDatabase()
    dir = mkdtempSync(join(tmpdir(), 'pricectl-hold-'))
    const before = await seen(db.url)
    const results = []
    for (const location of [db.url, join(dir, 'store.db')]) {
      const s = openStore(location)
      try {
        const product = await addProduct(s, 'pro_monthly')
        const w = s.imports.writer('charges', {hold: true})
        await w.writeChunk(rows(product, 0, 2000))
        await w.commit()
        await w.writeChunk(rows(product, 2000, 4000))
        await w.commit()
        // Newer events for keys of both the committed and the held batch, an older one, and new keys.
        await w.writeChunk([...rows(product, 1000, 1500, 'evt_2', 200), ...rows(product, 3000, 3500, 'evt_2', 200), ...rows(product, 3500, 3600, 'evt_0', 50), ...rows(product, 4000, 5000)])
        await w.commit()
        expect(await w.finish()).toBe(true)
        expect(w.held).toBe(0)
        await w.close()
        const listed = await s.revenue.list('charges', {limit: 10_000})
        results.push({
          counts: {...w.counts},
          rows: listed.rows.map((r) => withoutId(r)).sort((a, b) => (a!.origin_id < b!.origin_id ? -1 : 1)),
        })
      } finally {
        await s.close()
      }
    }
    expect(results[0].counts).toEqual({inserted: 5000, stale: 100, unchanged: 0, updated: 1000})
    expect(results[0]).toEqual(results[1])
    expect(await seen(db.url)).toEqual({...before, count: 5000})
  })

  it('a role that does not own the table imports in plain batches: each commit is durable', async () => {
    db = await freshPgDatabase()
    store = openStore(db.url)
    const product = await addProduct(store, 'pro_monthly')
    const role = `pricectl_writer_${db.name.slice(-6)}`
    const admin = new pg.Client({connectionString: db.url})
    await admin.connect()
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'writer'`)
      await admin.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`)
      await admin.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`)
      await admin.query(`GRANT ALL ON SCHEMA public TO ${role}`)
    } finally {
      await admin.end()
    }
    const url = new URL(db.url)
    url.username = role
    url.password = 'writer'
    const writerStore = openStore(url.toString())
    try {
      const before = await seen(db.url)
      const w = writerStore.imports.writer('charges', {hold: true})
      await w.writeChunk(rows(product, 0, 2000))
      await w.commit()
      await w.writeChunk(rows(product, 2000, 4000))
      expect(await w.commit()).toBe(true)
      expect(w.held).toBe(0)
      expect(await seen(db.url)).toEqual({...before, count: 4000})
      await w.close()
    } finally {
      await writerStore.close()
      const cleanup = new pg.Client({connectionString: db.url})
      await cleanup.connect()
      await cleanup.query(`DROP OWNED BY ${role}`).finally(() => cleanup.query(`DROP ROLE ${role}`)).finally(() => cleanup.end())
    }
  })

  /** A database with the revenue fixtures' catalog (copied from a SQLite seed), the store open on it, and a temp folder. */
  async function seededCatalog(): Promise<{db: PgDatabase; dir: string; store: StorePort}> {
    const made = await freshPgDatabase()
    const folder = mkdtempSync(join(tmpdir(), 'pricectl-hold-'))
    db = made
    dir = folder
    const seed = join(folder, 'seed.db')
    await withStore(seed, seedCatalog)
    const copied = await run(undefined, ['db', 'copy', seed, made.url, '--yes', '--json'])
    expect(copied.code, copied.stderr).toBe(0)
    const opened = openStore(made.url)
    store = opened
    return {db: made, dir: folder, store: opened}
  }

  /** Import, Ctrl-C after the first batch that brings the rows read to `after`: the error, and the rows read then. */
  async function interrupted(s: StorePort, options: ImportOptions, after: number): Promise<{error?: InterruptedError; read: number}> {
    const abort = new AbortController()
    let read = 0
    const error = await importFiles(s, options, {
      progress(rows) {
        if (rows >= after && !abort.signal.aborted) {
          read = rows
          abort.abort('SIGINT')
        }
      },
      signal: abort.signal,
    }).then(
      () => undefined,
      (e: InterruptedError) => e,
    )
    return {error, read}
  }

  it("an import interrupted during a hold keeps the first batch, and its rejects file lists the committed batches' rejects only; the same command again completes", async () => {
    const {db, dir, store} = await seededCatalog()
    // 120,000 rows in the adapter's batches (100,000, then 25,000 near the end: the first is cut
    // at 25,000); a bad amount in the first batch and one in the third.
    const ROWS = 120_000
    const lines = paymentsCsv(ROWS).trimEnd().split('\n')
    for (const i of [10, 60_000]) lines[i] = lines[i].replace(/,\d+\.\d\d,/, ',not-a-number,')
    const file = writeTemp('payments.csv', lines.join('\n') + '\n', dir)
    const rejects = join(dir, 'rejects.csv')
    const {error: failed, read: readAtAbort} = await interrupted(store, {kind: 'charges', paths: [file], rejects}, 70_000)
    expect(failed?.message).toMatch(/^interrupted: \d+ rows committed/)
    const committed = failed!.body.committed as number
    // The held batches (read, not committed) are gone; the first batch and its reject stay.
    expect(committed).toBeGreaterThan(0)
    expect(committed).toBeLessThan(readAtAbort - 1)
    expect((await seen(db.url)).count).toBe(committed)
    expect(readFileSync(rejects, 'utf8').trimEnd().split('\n').map((l) => l.split(',')[0])).toEqual(['line', '11'])

    const again = await importFiles(store, {kind: 'charges', paths: [file], rejects})
    expect(again).toMatchObject({inserted: ROWS - 2 - committed, rejected: 2, unchanged: committed})
    expect(readFileSync(rejects, 'utf8').trimEnd().split('\n').map((l) => l.split(',')[0])).toEqual(['line', '11', '60001'])
    expect((await seen(db.url)).count).toBe(ROWS - 2)
  }, 120_000)

  it('a batch size the operator gave turns holds off: every batch is committed when the import is interrupted', async () => {
    const {db, dir, store} = await seededCatalog()
    const file = writeTemp('payments.csv', paymentsCsv(30_000), dir)
    const {error: failed, read: readAtAbort} = await interrupted(store, {batchSize: 5000, kind: 'charges', paths: [file]}, 15_000)
    expect(failed?.body?.committed).toBe(readAtAbort)
    expect((await seen(db.url)).count).toBe(readAtAbort)
  }, 60_000)

  it("a file read by two threads, each its own chunks, ends as SQLite's import by one thread: rows, counts and rejects, while repeats end the hold", async () => {
    const {dir, store} = await seededCatalog()
    expect(store.imports.readersPerFile).toBe(2)
    const file = writeTemp('payments.csv', awkwardPaymentsCsv('\n', false), dir)
    const outcome = async (s: StorePort, options: Partial<ImportOptions>, rejects: string) => {
      const {file: _f, files: _l, rejects_file: _j, rows_per_second: _r, seconds: _s, ...result} = await importFiles(s, {...options, inThreadMaxBytes: 0, kind: 'charges', paths: [file], rejects})
      const {rows} = await s.revenue.list('charges', {limit: 1000})
      return {rejects: readFileSync(rejects, 'utf8'), result, rows: rows.map((r) => withoutId(r)).sort((a, b) => a!.origin_id.localeCompare(b!.origin_id))}
    }
    const seed = join(dir, 'one.db')
    await withStore(seed, seedCatalog)
    const one = await withStore(seed, async (_db, s) => await outcome(s, {}, join(dir, 'one.csv')))
    // Chunks of a few lines, each a batch; the second begins inside a quoted field.
    const text = readFileSync(file)
    const two = await outcome(store, {chunkBytes: text.indexOf('Pro plan\n') + 'Pro plan\n'.length}, join(dir, 'two.csv'))
    expect(two).toEqual(one)
    expect(one.result).toMatchObject({inserted: 400, rejected: 4, unchanged: 13, updated: 1})
  })
})
