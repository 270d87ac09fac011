import {statSync} from 'node:fs'
import {resolve} from 'node:path'

import {productByApiId, type ProductRow} from '../catalog/lookup.js'
import {resolveZone} from '../dates.js'
import {InvalidInputError, OperationalError} from '../errors.js'
import {allDeletes, compareEvents, type EventRef, judge, recordKey} from '../revenue/events.js'
import {CHARGE_COLUMNS, statements, SUBSCRIPTION_COLUMNS} from '../revenue/store.js'
import type {Store} from '../store/db.js'
import {checkOutput} from '../store/output-file.js'
import {startPipeline} from './pipeline.js'
import {choosePreset, type ImportKind, loadMapping, type Preset} from './presets.js'
import {looksLikeRejects, RejectsFile} from './rejects.js'
import {RowMapper} from './rows.js'

/**
 * Bulk import of gateway exports. A worker thread (worker.ts) reads the file with
 * csv-parse and maps and validates every row; this side writes: batched upserts keyed by
 * (user_id, origin, origin_id), each batch one transaction. Every row is an event
 * (rows.ts), so a re-run is all "unchanged", and a run killed after some batches leaves
 * whole batches only: running it again inserts the rest and ends in the same state as an
 * uninterrupted run.
 */

export type ImportOptions = {
  /** Rows per transaction (default $PRICECTL_IMPORT_BATCH, else 250,000). */
  batchSize?: number
  dryRun?: boolean
  file: string
  kind: ImportKind
  mapping?: string
  preset?: string
  /** api_id of the product for rows that name none. */
  product?: string
  rejects?: string
  /** IANA zone of dates without an offset; overrides the mapping's time_zone. Default UTC. */
  tz?: string
  /** Overwrite an existing rejects path that is not a rejects CSV of an earlier run. */
  force?: boolean
}

export type ImportCounts = {inserted: number; read: number; rejected: number; stale: number; unchanged: number; updated: number}

export type ImportResult = ImportCounts & {
  dry_run: boolean
  file: string
  preset: string
  rejects_file: null | string
  rows_per_second: number
  seconds: number
}

export type ImportHooks = {
  /** After each batch: rows read so far and bytes of the file. */
  progress?: (rows: number, bytes: number) => void
}

/**
 * Rows per transaction. Export ids are random, so every transaction rewrites most of the
 * unique index's pages: fewer, larger transactions write far less. 250,000 rows commit
 * every 2-3 s, well inside the 10 s other writers (price calls) wait for the store.
 */
export const DEFAULT_BATCH = 250_000
/** Rejected rows kept until their batch commits; more commit the batch early (bounded memory). */
const MAX_PENDING_REJECTS = 20_000
/** Rows per message from the worker, and how many messages may wait unacknowledged. */
const WORKER_BATCH = 2000
const MAX_IN_FLIGHT = 8

export function batchSizeFrom(value: number | undefined): number {
  const n = value ?? (process.env.PRICECTL_IMPORT_BATCH ? Number(process.env.PRICECTL_IMPORT_BATCH) : DEFAULT_BATCH)
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new InvalidInputError(`batch size: expected a whole number from 1 to 1000000, got ${JSON.stringify(value ?? process.env.PRICECTL_IMPORT_BATCH)}`)
  return n
}

export function totalBytes(file: string): number {
  try {
    const s = statSync(file)
    if (!s.isFile()) throw new InvalidInputError(`${file} is not a file`)
    return s.size
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    throw new InvalidInputError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
  }
}

export async function importFile(store: Store, o: ImportOptions, hooks: ImportHooks = {}): Promise<ImportResult> {
  const started = performance.now()
  const {db} = store
  const batchSize = batchSizeFrom(o.batchSize)
  totalBytes(o.file)
  // Vetted before anything is written: never the store, the export or the mapping file.
  const rejectsPath = resolve(o.rejects ?? `${o.file}.rejects.csv`)
  const rejectsTarget = checkOutput(rejectsPath, {
    existsHint: 'it is not a rejects CSV of an earlier import; pass --force to overwrite it, or --rejects PATH',
    force: o.force,
    inputs: [
      {path: o.file, what: 'the file to import'},
      {path: o.mapping, what: 'the --mapping file'},
    ],
    label: '--rejects',
    replaceable: looksLikeRejects,
    store: store.path,
  }).path
  const mapping = o.mapping ? loadMapping(o.kind, o.mapping) : undefined
  resolveZone(o.tz, '--tz')
  if (mapping && o.preset) throw new InvalidInputError('pass either --preset or --mapping, not both')
  let fallback: ProductRow | undefined
  if (o.product !== undefined) {
    fallback = productByApiId(store, o.product)
    if (!fallback) throw new InvalidInputError(`--product: unknown product ${JSON.stringify(o.product)} (list them with "pricectl products list")`)
  }
  const columns: readonly string[] = o.kind === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
  const [iUser, iOrigin, iOriginId] = ['user_id', 'origin', 'origin_id'].map((c) => columns.indexOf(c))
  const iProduct = columns.indexOf('product_id')
  const iTs = columns.indexOf('latest_event_timestamp')
  const iId = columns.indexOf('latest_event_id')
  const st = statements(db, o.kind)
  const tombstones = allDeletes(db, o.kind === 'charges' ? 'charge' : 'subscription')
  const counts: ImportCounts = {inserted: 0, read: 0, rejected: 0, stale: 0, unchanged: 0, updated: 0}

  const count = (verdict: 'apply' | 'duplicate' | 'stale') => {
    if (verdict === 'apply') counts.updated++
    else if (verdict === 'duplicate') counts.unchanged++
    else counts.stale++
  }

  /** One row against the store: insert, or judge it against the record's latest event. */
  const apply = (row: unknown[]): void => {
    const event: EventRef = {id: row[iId] as string, timestamp: row[iTs] as number}
    if (tombstones.size > 0) {
      const t = tombstones.get(recordKey(row[iUser] as string, row[iOrigin] as string, row[iOriginId] as string))
      if (t !== undefined && compareEvents(event, t) < 0) {
        counts.stale++
        return
      }
    }
    if (o.dryRun) {
      const latest = st.latest.get(row[iUser], row[iOrigin], row[iOriginId]) as EventRef | undefined
      if (latest) count(judge(event, latest))
      else counts.inserted++
      return
    }
    batchProducts.add(row[iProduct] as number)
    if (st.insertRow.run(...row).changes === 1) {
      counts.inserted++
      return
    }
    const verdict = judge(event, st.latest.get(row[iUser], row[iOrigin], row[iOriginId]) as EventRef | undefined)
    if (verdict === 'apply') st.replaceRow.run(...row.slice(3), row[iUser], row[iOrigin], row[iOriginId])
    count(verdict)
  }

  // Rows are written as they arrive, inside a transaction committed every batchSize rows:
  // nothing waits in memory, and a killed run leaves whole batches only.
  let open = false
  let inBatch = 0
  /** Products the open transaction refers to (the foreign key check, done per batch). */
  const batchProducts = new Set<number>()
  let rejects: RejectsFile | undefined
  let pendingRejects: [number, string, string[]][] = []
  const commit = () => {
    if (open) {
      // The worker matched these products earlier through its own connection; one could
      // have been deleted since (no write can happen while this transaction is open).
      const ids = [...batchProducts]
      const found = (db.prepare(`SELECT count(*) AS n FROM products WHERE id IN (${ids.map(() => '?').join(',')})`).get(...ids) as {n: number}).n
      if (found !== ids.length) throw new OperationalError(`a product of ${o.file} was deleted while it was being imported; nothing of the last batch was written: run the import again`)
      db.exec('COMMIT')
      open = false
      batchProducts.clear()
    }
    // Rejects are written after their batch committed, so a resumed run never lists a row twice.
    rejects!.addMany(pendingRejects.sort((a, b) => a[0] - b[0]))
    counts.rejected += pendingRejects.length
    pendingRejects = []
    inBatch = 0
  }

  const pipeline = startPipeline({batchRows: WORKER_BATCH, db: store.path, file: o.file, kind: o.kind, maxInFlight: MAX_IN_FLIGHT})
  let layout: Preset | undefined
  const cacheSize = db.pragma('cache_size', {simple: true})
  const foreignKeys = db.pragma('foreign_keys', {simple: true})
  // Product references are checked once per batch (commit) instead of once per row.
  if (!o.dryRun) db.pragma('foreign_keys = OFF')
  // Export ids are random, so the unique index is written all over: a larger page cache
  // (40 MB, within the memory budget) while importing.
  db.pragma('cache_size = -40960')
  // Fewer WAL checkpoints while the import writes (each syncs the file, and a page rewritten
  // by several batches is copied once): the WAL may grow to about 256 MB plus a batch.
  db.pragma('wal_autocheckpoint = 65536')
  try {
    for await (const m of pipeline.messages) {
      if (m.type === 'error') throw new OperationalError(`cannot import ${o.file}: ${m.message}`)
      if (m.type === 'header') {
        layout = mapping ?? choosePreset(o.kind, m.header, o.preset)
        if (o.tz !== undefined) layout = {...layout, time_zone: o.tz}
        // Built here too so a layout the file cannot fill is refused before any row.
        const mapper = new RowMapper(db, o.kind, layout, m.header, fallback)
        rejects = new RejectsFile(rejectsTarget, mapper.header)
        pipeline.send({fallbackProductId: fallback?.id ?? null, layout, type: 'layout'})
        continue
      }
      if (m.type === 'end') break
      for (const row of m.rows) {
        if (!open && !o.dryRun) {
          db.exec('BEGIN IMMEDIATE')
          open = true
        }
        apply(row)
        if (++inBatch >= batchSize) commit()
      }
      for (const r of m.rejects) {
        pendingRejects.push(r)
        if (++inBatch >= batchSize || pendingRejects.length >= MAX_PENDING_REJECTS) commit()
      }
      counts.read = m.read
      pipeline.ack()
      hooks.progress?.(counts.read, m.bytes)
    }
    if (!layout) throw new InvalidInputError(`${o.file} is empty: expected a header row and data rows`)
    commit()
  } finally {
    if (open && db.inTransaction) db.exec('ROLLBACK')
    db.pragma(`cache_size = ${cacheSize}`)
    db.pragma('wal_autocheckpoint = 1000') // SQLite's default
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`)
    await pipeline.close()
    rejects?.close()
  }
  const seconds = (performance.now() - started) / 1000
  return {
    ...counts,
    dry_run: Boolean(o.dryRun),
    file: resolve(o.file),
    preset: layout.name,
    rejects_file: counts.rejected > 0 ? rejectsPath : null,
    rows_per_second: seconds > 0 ? Math.round(counts.read / seconds) : counts.read,
    seconds: Math.round(seconds * 1000) / 1000,
  }
}
