import type {DB} from '../db.js'
import type {ImportsRepository, ImportWriteCounts, ImportWriter, ImportWriterOptions} from '../port/imports.js'
import {
  CHARGE_COLUMNS,
  compareEvents,
  type EventRef,
  type FieldEvents,
  type FieldWrites,
  judge,
  type Kind,
  laterEvent,
  type PendingFields,
  recordKey,
  type Resolve,
  type RevenueTable,
  SUBSCRIPTION_COLUMNS,
  writesNewerThan,
} from '../port/revenue.js'
import {parseFieldEvents, type SqliteRevenue, writesJson} from './revenue.js'

/** SQLite adapter of the imports repository: every statement prepared once per store. */
export class SqliteImports implements ImportsRepository {
  constructor(
    private readonly db: DB,
    private readonly revenue: SqliteRevenue,
  ) {}

  writer<T extends RevenueTable>(table: T, options: ImportWriterOptions<T> = {}): ImportWriter {
    return new SqliteImportWriter(this.db, this.revenue, table, Boolean(options.dryRun), options.resolve as Resolve<RevenueTable> | undefined)
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
  /** Deletes and pending partial updates of the kind (both rare), read again at each batch's start. */
  private tombstones: Map<string, EventRef>
  private pending: Map<string, PendingFields>
  private readonly columns: readonly string[]
  private readonly kind: Kind
  private readonly iProduct: number
  private readonly iTs: number
  private readonly iId: number

  constructor(
    private readonly db: DB,
    private readonly revenue: SqliteRevenue,
    private readonly table: RevenueTable,
    private readonly dryRun: boolean,
    private readonly resolve: Resolve<RevenueTable> | undefined,
  ) {
    const columns: readonly string[] = table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
    this.columns = columns
    this.kind = table === 'charges' ? 'charge' : 'subscription'
    // The key is the first three columns (user_id, origin, origin_id).
    this.iProduct = columns.indexOf('product_id')
    this.iTs = columns.indexOf('latest_event_timestamp')
    this.iId = columns.indexOf('latest_event_id')
    this.st = revenue.statements(table)
    this.tombstones = revenue.latestDeletes(this.kind)
    this.pending = revenue.pending(this.kind)
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
    const {counts, st, iId, iTs, iProduct} = this
    if (!this.open && !this.dryRun) {
      this.db.exec('BEGIN IMMEDIATE')
      this.open = true
      // Single writes may have deleted records or kept partial updates since the last batch.
      this.tombstones = this.revenue.latestDeletes(this.kind)
      this.pending = this.revenue.pending(this.kind)
    }
    const {tombstones, pending} = this
    const insertRow = st.insertRow
    const check = tombstones.size > 0 || pending.size > 0
    for (let i = from; i < to; i++) {
      const row = rows[i]
      // The common row is a new record: inserted, nothing else read or allocated for it.
      if (!check && !this.dryRun) {
        this.batchProducts.add(row[iProduct] as number)
        if (insertRow.run(...row).changes === 1) {
          counts.inserted++
          continue
        }
      }
      const event: EventRef = {id: row[iId] as string, timestamp: row[iTs] as number}
      if (check) {
        const key = recordKey(row[0] as string, row[1] as string, row[2] as string)
        const t = tombstones.get(key)
        if (t !== undefined && compareEvents(event, t) < 0) {
          counts.stale++
          continue
        }
        const p = pending.get(key)
        if (p !== undefined && this.insertPending(row, event, key, p)) continue
      }
      if (this.dryRun) {
        const latest = st.latest.get(row[0], row[1], row[2]) as (EventRef & {field_events: null | string}) | undefined
        if (!latest) counts.inserted++
        else if (latest.field_events === null) this.count(judge(event, latest))
        else this.count(judge(event, parseFieldEvents(latest.field_events)!.base))
        continue
      }
      if (check) {
        this.batchProducts.add(row[iProduct] as number)
        if (insertRow.run(...row).changes === 1) {
          counts.inserted++
          continue
        }
      }
      const latest = st.latest.get(row[0], row[1], row[2]) as EventRef & {field_events: null | string}
      if (latest.field_events !== null) {
        this.mergeRow(row, event, latest, parseFieldEvents(latest.field_events)!)
        continue
      }
      const verdict = judge(event, latest)
      if (verdict === 'apply') st.replaceRow.run(...row.slice(3), row[0], row[1], row[2])
      this.count(verdict)
    }
  }

  /** The row as a values object (column name -> cell). */
  private valuesOf(row: readonly unknown[]): Record<string, unknown> {
    const v: Record<string, unknown> = {}
    this.columns.forEach((c, i) => (v[c] = row[i]))
    return v
  }

  /** The row with newer partial writes merged in (the engine's resolve), at the later of the two latest events. */
  private merged(row: readonly unknown[], writes: FieldWrites, latest: EventRef): Record<string, unknown> {
    const values = this.valuesOf(row)
    if (Object.keys(writes).length > 0) {
      if (!this.resolve) throw new Error(`import into ${this.table}: a row meets newer partial updates and the writer was given no resolve`)
      Object.assign(values, this.resolve(values as never, writes))
    }
    return {...values, latest_event_id: latest.id, latest_event_timestamp: latest.timestamp}
  }

  private fieldOrder(base: EventRef, latest: EventRef, writes: FieldWrites): null | string {
    return Object.keys(writes).length === 0 && compareEvents(base, latest) === 0 ? null : writesJson({base, fields: writes} satisfies FieldEvents)
  }

  /**
   * A row for a key with pending partial updates: when it makes the record, it takes the
   * pending fields newer than it and the pending entry goes. False when the record exists
   * (pending entries only wait for records that do not): the usual path decides.
   */
  private insertPending(row: readonly unknown[], event: EventRef, key: string, p: PendingFields): boolean {
    if (this.st.latest.get(row[0], row[1], row[2]) !== undefined) return false
    this.counts.inserted++
    if (this.dryRun) return true
    const writes = writesNewerThan(p.fields, event)
    const latest = laterEvent(p.latest, event)
    this.batchProducts.add(row[this.iProduct] as number)
    this.st.insertNew.run({...this.merged(row, writes, latest), field_events: this.fieldOrder(event, latest, writes)})
    this.revenue.savePending(this.kind, [[key, null]])
    this.pending.delete(key)
    return true
  }

  /** A row for a record partial updates wrote to: it becomes the base, the writes newer than it stay. */
  private mergeRow(row: readonly unknown[], event: EventRef, stored: EventRef, fe: FieldEvents): void {
    const verdict = judge(event, fe.base)
    if (verdict === 'apply') {
      const writes = writesNewerThan(fe.fields, event)
      const latest = laterEvent({id: stored.id, timestamp: stored.timestamp}, event)
      this.st.replace.run({...this.merged(row, writes, latest), field_events: this.fieldOrder(event, latest, writes)})
    }
    this.count(verdict)
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
