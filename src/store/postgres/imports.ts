import type {ImportsRepository, ImportWriteCounts, ImportWriter} from '../port/imports.js'
import {CHARGE_COLUMNS, compareEvents, type EventRef, recordKey, type RevenueTable, SUBSCRIPTION_COLUMNS} from '../port/revenue.js'
import type {PgRevenue} from './revenue.js'
import {ID_ORDER} from './revenue.js'
import {int, type Sql} from './support.js'

/** PostgreSQL adapter of the imports repository: rows stream through COPY into a staging table and are merged from there. */
export class PgImports implements ImportsRepository {
  constructor(
    private readonly sql: Sql,
    private readonly revenue: PgRevenue,
  ) {}

  writer(table: RevenueTable, options: {dryRun?: boolean} = {}): ImportWriter {
    return new PgImportWriter(this.sql, this.revenue, table, Boolean(options.dryRun))
  }
}

/** A value in COPY's text format: \N for NULL; backslash, tab, newline and carriage return escaped. */
function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N'
  if (typeof v === 'number') return String(v)
  if (typeof v === 'boolean') return v ? 't' : 'f'
  const s = String(v)
  return /[\\\t\n\r]/.test(s) ? s.replaceAll('\\', '\\\\').replaceAll('\t', '\\t').replaceAll('\n', '\\n').replaceAll('\r', '\\r') : s
}

/**
 * Each chunk goes to the session's staging table (a TEMP table: no WAL, no index) through
 * COPY FROM STDIN, then one statement merges it into the target: an upsert whose ON
 * CONFLICT ... WHERE keeps the event order against the row as it is when the statement
 * gets to it (after any concurrent writer of that key committed), so a row older than the
 * stored record never overwrites it, whoever wrote it. The batch is one transaction, as on
 * SQLite: a run killed mid-COPY or mid-merge leaves whole batches only (the server rolls
 * back the open transaction when the connection drops), and running the same import again
 * inserts the rest.
 *
 * A batch is a write transaction of the store: it holds the store's write lock until it
 * commits, as SQLite's BEGIN IMMEDIATE, so two imports never deadlock on each other's keys
 * and a single write (which reads, judges, then writes under the same lock) commits before
 * or after a batch, never in between.
 */
class PgImportWriter implements ImportWriter {
  readonly counts: ImportWriteCounts = {inserted: 0, stale: 0, unchanged: 0, updated: 0}
  private open = false
  private closed = false
  /** A product the batch refers to was deleted: nothing of the batch may commit. */
  private lost = false
  /** Products the open batch refers to, checked and locked (KEY SHARE: they cannot be deleted before the batch commits). */
  private readonly batchProducts = new Set<number>()
  private readonly columns: readonly string[]
  private readonly stage: string
  private readonly merge: string
  private readonly dryCount: string
  private readonly tombstones: Map<string, EventRef>
  private readonly iProduct: number
  private readonly iTs: number
  private readonly iId: number

  constructor(
    private readonly sql: Sql,
    _revenue: PgRevenue,
    private readonly table: RevenueTable,
    private readonly dryRun: boolean,
  ) {
    const columns: readonly string[] = table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
    this.columns = columns
    this.iProduct = columns.indexOf('product_id')
    this.iTs = columns.indexOf('latest_event_timestamp')
    this.iId = columns.indexOf('latest_event_id')
    this.tombstones = _revenue.latestDeletes(table === 'charges' ? 'charge' : 'subscription')
    this.stage = `pricectl_import_${table}`
    const cols = columns.join(', ')
    const set = columns.filter((c) => !['origin', 'origin_id', 'user_id'].includes(c))
    const KEY = 't.user_id = s.user_id AND t.origin = s.origin AND t.origin_id = s.origin_id'
    const newer = (a: string, b: string) => `(${a}.latest_event_timestamp, ${a}.latest_event_id ${ID_ORDER}) > (${b}.latest_event_timestamp, ${b}.latest_event_id ${ID_ORDER})`
    // Staged rows by their state before the statement: stale (the record is newer) and
    // unchanged (the same event) are counted from it; inserted and updated from what the
    // upsert did. Keys are unique within a staged pass (writeChunk splits repeats).
    this.merge = `WITH pre AS (
        SELECT count(*) FILTER (WHERE ${newer('t', 's')})::int AS stale FROM ${this.stage} s JOIN ${table} t ON ${KEY}
      ), up AS (
        INSERT INTO ${table} AS t (${cols}) SELECT ${cols} FROM ${this.stage} ORDER BY user_id, origin, origin_id
        ON CONFLICT (user_id, origin, origin_id) DO UPDATE SET ${set.map((c) => `${c} = excluded.${c}`).join(', ')}
        WHERE ${newer('excluded', 't')}
        RETURNING (xmax = 0) AS inserted
      )
      SELECT (SELECT count(*) FILTER (WHERE inserted) FROM up)::int AS inserted, (SELECT count(*) FILTER (WHERE NOT inserted) FROM up)::int AS updated,
        (SELECT stale FROM pre) AS stale, (SELECT count(*) FROM ${this.stage})::int AS total`
    this.dryCount = `SELECT count(*) FILTER (WHERE t.id IS NULL)::int AS inserted, count(*) FILTER (WHERE ${newer('s', 't')})::int AS updated,
        count(*) FILTER (WHERE ${newer('t', 's')})::int AS stale, count(*)::int AS total
      FROM ${this.stage} s LEFT JOIN ${table} t ON ${KEY}`
    // The staging table: the import columns of the target, no constraints (the target checks them).
    sql.run(`CREATE TEMP TABLE IF NOT EXISTS ${this.stage} AS SELECT ${cols} FROM ${table} WITH NO DATA`)
  }

  writeChunk(rows: readonly (readonly unknown[])[], from = 0, to = rows.length): void {
    if (from >= to) return
    const {counts, tombstones, iId, iTs} = this
    if (!this.open && !this.dryRun) {
      // A write transaction: the store's write lock, held until the batch commits (SQLite's BEGIN IMMEDIATE).
      this.sql.begin()
      this.open = true
    }
    // Rows in passes with unique keys: a key's second row in the chunk goes to the second
    // pass, so it meets the first one's result, as row-by-row writing would.
    const passes: (readonly unknown[])[][] = []
    const seen = new Map<string, number>()
    for (let i = from; i < to; i++) {
      const row = rows[i]
      const key = recordKey(row[0] as string, row[1] as string, row[2] as string)
      if (tombstones.size > 0) {
        const t = tombstones.get(key)
        if (t !== undefined && compareEvents({id: row[iId] as string, timestamp: row[iTs] as number}, t) < 0) {
          counts.stale++
          continue
        }
      }
      if (this.dryRun) {
        // Nothing is written: every row meets the stored record.
        ;(passes[0] ??= []).push(row)
        continue
      }
      const n = seen.get(key) ?? 0
      seen.set(key, n + 1)
      ;(passes[n] ??= []).push(row)
    }
    for (const pass of passes) {
      if (this.lost) return
      if (!this.dryRun && !this.checkProducts(pass)) return
      this.sql.run(`TRUNCATE ${this.stage}`)
      this.sql.copyFrom(`COPY ${this.stage} (${this.columns.join(', ')}) FROM STDIN`, pass.map((r) => r.map((v) => copyValue(v)).join('\t')).join('\n') + '\n')
      const [r] = this.sql.rows<{inserted: number; stale: number; total: number; updated: number}>(this.dryRun ? this.dryCount : this.merge)
      const inserted = int(r.inserted)
      const updated = int(r.updated)
      const stale = int(r.stale)
      counts.inserted += inserted
      counts.updated += updated
      counts.stale += stale
      counts.unchanged += int(r.total) - inserted - updated - stale
    }
  }

  /** The products of rows not checked in this batch yet still exist; they are locked against deletion until the batch ends. */
  private checkProducts(rows: readonly (readonly unknown[])[]): boolean {
    const fresh = new Set<number>()
    for (const r of rows) {
      const p = r[this.iProduct] as null | number
      if (p !== null && !this.batchProducts.has(p)) fresh.add(p)
    }
    if (fresh.size === 0) return true
    const found = this.sql.rows<{id: number}>('SELECT id FROM products WHERE id = ANY($1::bigint[]) FOR KEY SHARE', [[...fresh]])
    for (const f of found) this.batchProducts.add(int(f.id))
    if (found.length !== fresh.size) this.lost = true
    return !this.lost
  }

  commit(): boolean {
    if (!this.open) return true
    if (this.lost) return false
    this.sql.commit()
    this.open = false
    this.batchProducts.clear()
    return true
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.open) this.sql.rollback()
    this.open = false
    this.sql.run(`DROP TABLE IF EXISTS ${this.stage}`)
  }
}
