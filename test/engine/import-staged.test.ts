import {existsSync, readdirSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {importFiles} from '../../src/import/importer.js'
import {IN_THREAD_MAX_BYTES} from '../../src/import/pipeline.js'
import {deleteCharge} from '../../src/revenue/charges.js'
import {openSqliteStore as openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import type {ImportWriter} from '../../src/store/port/imports.js'
import {PAYMENTS_HEADER, paymentsCsv, seededStores, tempDir, withStore, writeTemp} from '../helpers/revenue-fixtures.js'

/**
 * The reading worker writes the rows into the writer's stages (two scratch SQLite files) and
 * posts counts, not rows; the writer sorts each stage into the table and commits it as one
 * batch (docs/performance.md, "Import"). Every import takes that road: one file or several,
 * a dry run, a kind with deletes.
 */

/** A seeded store of its own. */
const freshStore = seededStores()

/** Every charge, ids included, in id order. */
async function charges(path: string): Promise<Record<string, unknown>[]> {
  return await withStore(path, (db) => db.prepare('SELECT * FROM charges ORDER BY id').all() as Record<string, unknown>[])
}

/** The import's scratch folders left in the temp folder. */
function scratchLeft(): string[] {
  return readdirSync(tmpdir()).filter((n) => n.startsWith('pricectl-import-'))
}

/**
 * 300 rows and 40 of them again (the same events: unchanged, through the per-row rules
 * after the sorted insert), rows of one record twice within the file, and 3 rejects.
 */
function exportFile(withRejects: boolean): string {
  const lines = paymentsCsv(300).trimEnd().split('\n')
  const data = lines.slice(1)
  const bad = withRejects ? [...data.slice(5, 8)].map((l) => l.replace(/,(usd|eur),/, ',xyz,').replace(/^ch_/, 'ch_bad_')) : []
  const body = [...data.slice(0, 150), ...bad.slice(0, 1), ...data.slice(10, 30), ...data.slice(150), ...bad.slice(1, 2), ...data.slice(200, 220), ...bad.slice(2)]
  return writeTemp('payments.csv', [PAYMENTS_HEADER.join(','), ...body].join('\n') + '\n')
}

/** Count the writer's staged commits of an import into `store`. */
function spyStaged(store: StorePort): {externals: number; staged: number} {
  const seen = {externals: 0, staged: 0}
  const make = store.imports.writer.bind(store.imports)
  store.imports.writer = ((table: never, options: never) => {
    const w: ImportWriter = make(table, options)
    const externalStages = w.externalStages.bind(w)
    const commitStaged = w.commitStaged.bind(w)
    w.externalStages = () => {
      const paths = externalStages()
      if (paths) seen.externals++
      return paths
    }
    w.commitStaged = async (b) => {
      seen.staged++
      return await commitStaged(b)
    }
    return w
  }) as typeof store.imports.writer
  return seen
}

async function imported(path: string, paths: string[], batchSize: number, hooks = {}) {
  const store = openStore(path)
  const seen = spyStaged(store)
  try {
    const r = await importFiles(store, {batchSize, kind: 'charges', paths}, hooks)
    return {r, seen}
  } finally {
    await store.close()
  }
}

describe('import through the reading worker’s stages (SQLite)', () => {
  it('ends as the same rows and counts whatever the batch size, and as one file with an empty one after it (ids too); a re-run changes nothing', async () => {
    const empty = writeTemp('empty.csv', PAYMENTS_HEADER.join(',') + '\n')
    const strip = (rows: Record<string, unknown>[]) => rows.map(({id: _id, ...r}) => r).sort((x, y) => String(x.origin_id).localeCompare(String(y.origin_id)))
    const pick = (r: Awaited<ReturnType<typeof imported>>['r']) => ({inserted: r.inserted, read: r.read, rejected: r.rejected, rejected_by_reason: r.rejected_by_reason, settled_usd: r.settled_usd, stale: r.stale, unchanged: r.unchanged, updated: r.updated})
    for (const withRejects of [false, true]) {
      const file = exportFile(withRejects)
      const rejected = withRejects ? 3 : 0
      let whole: {counts: ReturnType<typeof pick>; rows: Record<string, unknown>[]} | undefined
      for (const batch of [7, 64, 250_000]) {
        const one = freshStore()
        const two = freshStore()
        const a = await imported(one, [file], batch)
        // Two files: the empty one adds no batch.
        const b = await imported(two, [file, empty], batch)
        expect(a.seen.externals).toBe(1)
        expect(a.seen.staged).toBeGreaterThanOrEqual(Math.ceil((340 + rejected) / batch))
        expect(b.seen.externals).toBe(1)
        expect(pick(a.r)).toEqual(pick(b.r))
        expect(a.r).toMatchObject({inserted: 300, read: 340 + rejected, rejected, unchanged: 40})
        expect(await charges(one)).toEqual(await charges(two))
        whole ??= {counts: pick(a.r), rows: strip(await charges(one))}
        expect(pick(a.r)).toEqual(whole.counts)
        expect(strip(await charges(one))).toEqual(whole.rows)
        const again = await imported(one, [file], batch)
        expect(again.r).toMatchObject({inserted: 0, stale: 0, unchanged: 340, updated: 0})
        expect(await charges(one)).toEqual(await charges(two))
      }
    }
    expect(scratchLeft()).toEqual([])
  }, 60_000)

  it('a batch of rejects only hands over no stage: a slow writer loses no row of the batches after it', async () => {
    // Ten rejects fill the first batch; four batches of good rows follow. The reading thread
    // fills the next stages while the writer is still on the one before.
    const data = paymentsCsv(40).trimEnd().split('\n').slice(1)
    const bad = data.map((l) => l.replace(/,(usd|eur),/, ',xyz,').replace(/^ch_/, 'ch_bad_')).slice(0, 10)
    const file = writeTemp('p.csv', [PAYMENTS_HEADER.join(','), ...bad, ...data].join('\n') + '\n')
    const path = freshStore()
    const store = openStore(path)
    const make = store.imports.writer.bind(store.imports)
    store.imports.writer = ((table: never, options: never) => {
      const w: ImportWriter = make(table, options)
      const commitStaged = w.commitStaged.bind(w)
      w.commitStaged = async (b) => {
        if (b.rows > 0) await new Promise((resolve) => setTimeout(resolve, 100))
        return await commitStaged(b)
      }
      return w
    }) as typeof store.imports.writer
    try {
      const r = await importFiles(store, {batchSize: 10, kind: 'charges', paths: [file]})
      expect(r).toMatchObject({inserted: 40, read: 50, rejected: 10})
    } finally {
      await store.close()
    }
    expect((await charges(path)).length).toBe(40)
  }, 60_000)

  it('a failure after some batches leaves whole batches and no scratch files; a re-run ends as an uninterrupted run', async () => {
    const file = writeTemp('p.csv', paymentsCsv(500))
    const path = freshStore()
    let calls = 0
    const failing = imported(path, [file], 50, {
      progress: () => {
        if (++calls === 3) throw new Error('stopped here')
      },
    })
    await expect(failing).rejects.toThrow('stopped here')
    const n = (await charges(path)).length
    expect(n).toBeGreaterThan(0)
    expect(n % 50).toBe(0)
    expect(n).toBeLessThan(500)
    expect(scratchLeft()).toEqual([])
    const resumed = await imported(path, [file], 50)
    expect(resumed.r).toMatchObject({inserted: 500 - n, unchanged: n})
    const clean = freshStore()
    await imported(clean, [file], 50)
    const strip = (rows: Record<string, unknown>[]) => rows.map(({id: _id, ...r}) => r).sort((x, y) => String(x.origin_id).localeCompare(String(y.origin_id)))
    expect(strip(await charges(path))).toEqual(strip(await charges(clean)))
  }, 60_000)

  it('a kind with deletes: staged rows take the per-row rules, rows older than a delete stale', async () => {
    const file = writeTemp('p.csv', paymentsCsv(120))
    const path = freshStore()
    await imported(path, [file], 1000)
    const first = (await charges(path))[0] as {origin: string; origin_id: string; user_id: string}
    await withStore(path, async (_db, store) => await deleteCharge(store, {origin: first.origin, origin_id: first.origin_id, user_id: first.user_id}, {id: 'del-1', timestamp: 4_000_000_000}))
    const again = await imported(path, [file], 1000)
    expect(again.seen).toEqual({externals: 1, staged: 1})
    expect(again.r).toMatchObject({inserted: 0, stale: 1, unchanged: 119})
  }, 60_000)

  it('several files read by workers at once: each file takes the stages in turn, the same rows as one file after another', async () => {
    const ROWS = 800
    // Files above the in-thread limit (worker threads), whose batch outgrows a stage's page
    // cache; the third file's worker starts (its slot freed by the first file) while the
    // second file is being staged. The limit and the cache are the import's options, set
    // below the files' size (the defaults, 1 MiB and 1,024 KB, take files of 8,000 rows).
    const inThreadMaxBytes = 64 * 1024
    const stageCacheKb = 32
    const dir = tempDir()
    const files = [0, 1, 2].map((k) => writeTemp(`p${k}.csv`, paymentsCsv(ROWS, k * ROWS), dir))
    for (const f of files) expect(statSync(f).size).toBeGreaterThan(Math.max(inThreadMaxBytes, 2 * stageCacheKb * 1024))
    const together = freshStore()
    const serial = freshStore()
    const store = openStore(together)
    let r: Awaited<ReturnType<typeof importFiles>>
    try {
      r = await importFiles(store, {inThreadMaxBytes, jobs: 2, kind: 'charges', paths: files, stageCacheKb})
    } finally {
      await store.close()
    }
    // One file after another, each read beside the writer (files below the default limit).
    for (const f of files) expect(statSync(f).size).toBeLessThan(IN_THREAD_MAX_BYTES)
    const one = openStore(serial)
    try {
      await importFiles(one, {jobs: 1, kind: 'charges', paths: files})
    } finally {
      await one.close()
    }
    expect(r).toMatchObject({inserted: 3 * ROWS, read: 3 * ROWS, rejected: 0})
    expect(r.files.map((f) => f.inserted)).toEqual([ROWS, ROWS, ROWS])
    expect(await charges(together)).toEqual(await charges(serial))
    expect(scratchLeft()).toEqual([])
  }, 60_000)

  it('a dry run reads through the stages, counts and writes nothing', async () => {
    const file = writeTemp('p.csv', paymentsCsv(120))
    const path = freshStore()
    await imported(path, [file], 1000)
    const before = await charges(path)
    const store = openStore(path)
    const seen = spyStaged(store)
    try {
      const more = writeTemp('more.csv', paymentsCsv(150))
      const r = await importFiles(store, {batchSize: 40, dryRun: true, kind: 'charges', paths: [more]})
      expect(seen.externals).toBe(1)
      expect(seen.staged).toBe(4)
      expect(r).toMatchObject({dry_run: true, inserted: 30, read: 150, unchanged: 120})
    } finally {
      await store.close()
    }
    expect(await charges(path)).toEqual(before)
    expect(scratchLeft()).toEqual([])
  }, 60_000)
})

describe('the writer’s external stages (SQLite)', () => {
  /** Charge rows in CHARGE_COLUMNS order. */
  const rowsOf = (n: number, product: number) =>
    Array.from({length: n}, (_, i) => [`u${i % 13}`, 'gateway_a', `ch_${i}`, product, 'US', 1_700_000_000 + i, 'succeeded', 'USD', 1000 + i, 0, 1000 + i, 0, 0, 0, 0, null, 1_700_000_000 + i, `evt_${i}`])
  const product = (store: ReturnType<typeof openStore>) => store.db.prepare("SELECT id FROM products WHERE api_id = 'pro_monthly'").pluck().get() as number

  it('are filled by another connection while the writer’s batch is open, commit as one batch each, and go at close', async () => {
    const path = freshStore()
    const store = openStore(path)
    try {
      const p = product(store)
      const w = store.imports.writer('charges')
      const paths = w.externalStages()
      expect(paths).toHaveLength(2)
      for (const f of paths) expect(existsSync(f)).toBe(true)
      const stages = store.imports.fillStages(paths)
      const rows = rowsOf(40, p)
      // Stage 0 filled and handed over, then committed while stage 1 is being filled: the
      // writer's transaction never holds the other stage's lock.
      stages.start(0)
      for (const r of rows.slice(0, 25)) stages.insert(0, r)
      stages.complete(0)
      stages.start(1)
      stages.insert(1, rows[25])
      expect(await w.commitStaged({products: [p], rows: 25, stage: 0})).toBe(true)
      for (const r of rows.slice(26)) stages.insert(1, r)
      stages.complete(1)
      // A delete written between batches: the staged rows take the per-row rules.
      await deleteCharge(store, {origin: 'gateway_a', origin_id: 'ch_30', user_id: 'u4'}, {id: 'del', timestamp: 1_800_000_000})
      expect(await w.commitStaged({products: [p], rows: 15, stage: 1})).toBe(true)
      // Stage 0 again, once committed: emptied first.
      stages.start(0)
      for (const r of rows.slice(0, 5)) stages.insert(0, r)
      stages.complete(0)
      expect(await w.commitStaged({products: [p], rows: 5, stage: 0})).toBe(true)
      expect(w.counts).toEqual({inserted: 39, stale: 1, unchanged: 5, updated: 0})
      stages.close()
      await w.close()
      for (const f of paths) expect(existsSync(f)).toBe(false)
    } finally {
      await store.close()
    }
    const ids = (await charges(path)).map((r) => r.origin_id as string)
    expect(ids.sort()).toEqual(rowsOf(40, 0).map((r) => r[2] as string).filter((id) => id !== 'ch_30').sort())
  })

  it('for two reading threads: four stages, each detached from the store’s connection at close', async () => {
    const store = openStore(freshStore())
    const stagesAttached = () => (store.db.pragma('database_list') as {name: string}[]).map((d) => d.name).filter((n) => n.startsWith('pricectl_import_stage'))
    try {
      const w = store.imports.writer('charges')
      const paths = w.externalStages(2)
      expect(paths).toHaveLength(4)
      expect(stagesAttached()).toHaveLength(4)
      await w.close()
      expect(stagesAttached()).toEqual([])
      for (const f of paths) expect(existsSync(f)).toBe(false)
    } finally {
      await store.close()
    }
  })

  it('a dry run counts a stage and writes nothing; a refused batch commits nothing; the files go at close', async () => {
    const path = freshStore()
    const store = openStore(path)
    try {
      const p = product(store)
      const dry = store.imports.writer('charges', {dryRun: true})
      const dryPaths = dry.externalStages()
      const dryStages = store.imports.fillStages(dryPaths)
      dryStages.start(0)
      for (const r of rowsOf(10, p)) dryStages.insert(0, r)
      dryStages.complete(0)
      expect(await dry.commitStaged({products: [p], rows: 10, stage: 0})).toBe(true)
      expect(dry.counts).toEqual({inserted: 10, stale: 0, unchanged: 0, updated: 0})
      dryStages.close()
      await dry.close()
      for (const f of dryPaths) expect(existsSync(f)).toBe(false)
      expect(await charges(path)).toEqual([])

      const w = store.imports.writer('subscriptions')
      const paths = w.externalStages()
      const stages = store.imports.fillStages(paths)
      // (SUBSCRIPTION_IMPORT_COLUMNS order.)
      const sub = (i: number, product: number) => [`u${i}`, 'gateway_a', `sub_${i}`, product, 'US', 1_700_000_000, 'month', 1, 'active', null, null, null, null, 'USD', 1000, 1000, 1000, 0, 1_700_000_000, `evt_${i}`, null, null]
      stages.start(0)
      stages.insert(0, sub(1, p))
      stages.insert(0, sub(2, 999))
      stages.complete(0)
      // No product 999: refused, nothing committed.
      expect(await w.commitStaged({products: [p, 999], rows: 2, stage: 0})).toBe(false)
      stages.close()
      await w.close()
      for (const f of paths) expect(existsSync(f)).toBe(false)
      expect(store.db.prepare('SELECT count(*) FROM subscriptions').pluck().get()).toBe(0)
    } finally {
      await store.close()
    }
  })
})

describe('stage folders a killed import left', () => {
  it('are swept before the next import makes its own: a dead process\'s and an old unnamed one, never a live one\'s', async () => {
    const {mkdirSync, utimesSync, writeFileSync} = await import('node:fs')
    const {spawnSync} = await import('node:child_process')
    const {sweepStaleStages} = await import('../../src/store/import-stages.js')
    const parent = tempDir()
    // A process id that is surely gone: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!
    const folder = (name: string) => {
      mkdirSync(join(parent, name))
      writeFileSync(join(parent, name, 'stage0.db'), 'rows')
      return join(parent, name)
    }
    const ofDead = folder(`pricectl-import-${dead}-AbC123`)
    const ofLive = folder(`pricectl-import-${process.ppid}-AbC123`)
    const ofThis = folder(`pricectl-import-${process.pid}-XyZ789`)
    const oldUnnamed = folder('pricectl-import-Old123')
    const day = Date.now() / 1000 - 25 * 3600
    utimesSync(oldUnnamed, day, day)
    const newUnnamed = folder('pricectl-import-New123')
    const other = folder('pricectl-importer-AbC123')
    expect(sweepStaleStages(parent).sort()).toEqual([ofDead, oldUnnamed].sort())
    for (const kept of [ofLive, ofThis, newUnnamed, other]) expect(existsSync(kept), kept).toBe(true)
    for (const gone of [ofDead, oldUnnamed]) expect(existsSync(gone), gone).toBe(false)
  })
})
