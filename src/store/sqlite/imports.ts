import type {DB} from '../db.js'
import type {ImportsRepository, ImportWriteCounts, ImportWriter} from '../port/imports.js'
import {CHARGE_COLUMNS, compareEvents, type EventRef, judge, recordKey, type RevenueTable, SUBSCRIPTION_COLUMNS} from '../port/revenue.js'
import type {SqliteRevenue} from './revenue.js'

/** SQLite adapter of the imports repository: every statement prepared once per store. */
export class SqliteImports implements ImportsRepository {
  constructor(
    private readonly db: DB,
    private readonly revenue: SqliteRevenue,
  ) {}

  writer(table: RevenueTable, options: {dryRun?: boolean} = {}): ImportWriter {
    return new SqliteImportWriter(this.db, this.revenue, table, Boolean(options.dryRun))
  }
}

/**
 * Rows are written as they arrive inside one IMMEDIATE transaction per batch: nothing waits
 * in memory, and a killed run leaves whole batches only. Foreign keys are off while the
 * writer is open; the products a batch refers to are checked once, at its commit.
 */
class SqliteImportWriter implements ImportWriter {
  readonly counts: ImportWriteCounts = {inserted: 0, stale: 0, unchanged: 0, updated: 0}
  private open = false
  private closed = false
  /** Products the open transaction refers to (the foreign key check, done per batch). */
  private readonly batchProducts = new Set<number>()
  private readonly restore: {cacheSize: unknown; foreignKeys: unknown}
  private readonly st
  private readonly tombstones: Map<string, EventRef>
  private readonly iProduct: number
  private readonly iTs: number
  private readonly iId: number

  constructor(
    private readonly db: DB,
    revenue: SqliteRevenue,
    table: RevenueTable,
    private readonly dryRun: boolean,
  ) {
    const columns: readonly string[] = table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
    // The key is the first three columns (user_id, origin, origin_id).
    this.iProduct = columns.indexOf('product_id')
    this.iTs = columns.indexOf('latest_event_timestamp')
    this.iId = columns.indexOf('latest_event_id')
    this.st = revenue.statements(table)
    this.tombstones = revenue.latestDeletes(table === 'charges' ? 'charge' : 'subscription')
    this.restore = {cacheSize: db.pragma('cache_size', {simple: true}), foreignKeys: db.pragma('foreign_keys', {simple: true})}
    // Product references are checked once per batch (commit) instead of once per row.
    if (!dryRun) db.pragma('foreign_keys = OFF')
    // Export ids are random, so the unique index is written all over: a larger page cache
    // (40 MB, within the memory budget) while importing.
    db.pragma('cache_size = -40960')
    // Fewer WAL checkpoints while the import writes (each syncs the file, and a page rewritten
    // by several batches is copied once): the WAL may grow to about 256 MB plus a batch.
    db.pragma('wal_autocheckpoint = 65536')
  }

  private count(verdict: 'apply' | 'duplicate' | 'stale'): void {
    if (verdict === 'apply') this.counts.updated++
    else if (verdict === 'duplicate') this.counts.unchanged++
    else this.counts.stale++
  }

  writeChunk(rows: readonly (readonly unknown[])[], from = 0, to = rows.length): void {
    if (from >= to) return
    const {counts, st, tombstones, iId, iTs, iProduct} = this
    if (!this.open && !this.dryRun) {
      this.db.exec('BEGIN IMMEDIATE')
      this.open = true
    }
    for (let i = from; i < to; i++) {
      const row = rows[i]
      const event: EventRef = {id: row[iId] as string, timestamp: row[iTs] as number}
      if (tombstones.size > 0) {
        const t = tombstones.get(recordKey(row[0] as string, row[1] as string, row[2] as string))
        if (t !== undefined && compareEvents(event, t) < 0) {
          counts.stale++
          continue
        }
      }
      if (this.dryRun) {
        const latest = st.latest.get(row[0], row[1], row[2]) as EventRef | undefined
        if (latest) this.count(judge(event, latest))
        else counts.inserted++
        continue
      }
      this.batchProducts.add(row[iProduct] as number)
      if (st.insertRow.run(...row).changes === 1) {
        counts.inserted++
        continue
      }
      const verdict = judge(event, st.latest.get(row[0], row[1], row[2]) as EventRef | undefined)
      if (verdict === 'apply') st.replaceRow.run(...row.slice(3), row[0], row[1], row[2])
      this.count(verdict)
    }
  }

  commit(): boolean {
    if (!this.open) return true
    // The rows' products were matched earlier, through another connection; one could have
    // been deleted since (no write can happen while this transaction is open).
    const ids = [...this.batchProducts]
    const found = (this.db.prepare(`SELECT count(*) AS n FROM products WHERE id IN (${ids.map(() => '?').join(',')})`).get(...ids) as {n: number}).n
    if (found !== ids.length) return false
    this.db.exec('COMMIT')
    this.open = false
    this.batchProducts.clear()
    return true
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.open && this.db.inTransaction) this.db.exec('ROLLBACK')
    this.open = false
    const {cacheSize} = this.restore
    this.db.pragma(`cache_size = ${cacheSize}`)
    this.db.pragma('wal_autocheckpoint = 1000') // SQLite's default
    this.db.pragma(`foreign_keys = ${this.restore.foreignKeys ? 'ON' : 'OFF'}`)
  }
}
