import Database, {type Statement} from 'better-sqlite3'

import type {DB} from '../db.js'
import type {ExternalStages, ImportsRepository, ImportWriteCounts, ImportWriter, ImportWriterOptions, StagedBatch, WalCheckpoints} from '../port/imports.js'
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
  SUBSCRIPTION_EVENT_COLUMNS,
  SUBSCRIPTION_IMPORT_COLUMNS,
  writesNewerThan,
} from '../port/revenue.js'
import {eventOfImportRow} from '../rows.js'
import {ImportStages, makeStageFiles, removeStageFiles, STAGE_CACHE_KB, STAGE_TABLE, stagePages, stagePageSql} from '../import-stages.js'
import {parseFieldEvents, type SqliteRevenue, writesJson} from './revenue.js'

/**
 * SQL of the event columns (SUBSCRIPTION_EVENT_COLUMNS order) read from a table of import rows
 * aliased `s` (a stage with SUBSCRIPTION_IMPORT_COLUMNS).
 */
const EVENT_FROM_IMPORT_SQL = SUBSCRIPTION_EVENT_COLUMNS.map((c) =>
  c === 'event_id' ? 's.latest_event_id' : c === 'event_timestamp' ? 's.latest_event_timestamp' : c === 'trial_start' || c === 'trial_end' ? `COALESCE(s.seen_${c}, s.${c})` : `s.${c}`,
).join(', ')

/** The import's page cache (KB): rows reach the unique index sorted, so a small one does. */
const IMPORT_CACHE_KB = 4096
/** A dry run's page cache (KB): it looks every row's key up, at random. */
const DRY_RUN_CACHE_KB = 40_960
/** The TEMP stage's page cache (KB). */
const TEMP_STAGE_CACHE_KB = 2048
/** Staged rows the flush did not insert, read this many at a time. */
const REST_CHUNK = 1000
/** The schema names the stage files are attached as. */
const externalSchema = (i: number) => `pricectl_import_stage${i}`

/**
 * A stage: a table of rows waiting to be sorted into the table (a stage file, or the TEMP
 * table of rows written through writeChunk), with its statements. `staged` rows are in it,
 * referring to `products`.
 */
type Stage = {
  clear: Statement
  /** In a file another thread fills (externalStages): that thread empties it, and the writer only reads it (and indexes it for a rest). */
  external: boolean
  drop: string
  /** All of it sorted into the table at once. */
  flush: Statement
  /** Subscriptions: every row into the history (subscription_events), the ones it has already left alone. */
  history: Statement | undefined
  insert: Statement
  dropKeyIndex: string
  keyIndex: string
  /** Its rows in file order, a page at a time (a restage). */
  page: Statement
  products: Set<number>
  rest: Statement
  staged: number
}

/**
 * WAL checkpoints of an import, run by its reading thread (src/import/worker.ts) through a
 * connection of its own when the writer has committed a batch: the frames committed so far
 * are copied into the file while the main thread writes the next batch, so the checkpoint
 * in the last batch's COMMIT copies only that batch's pages instead of the whole store's.
 * PASSIVE: it never waits for, nor blocks, the writer (whose own checkpoint, if due while
 * this one runs, is skipped). The reading thread is otherwise idle then, waiting for a
 * stage, and has no heap of its own to add (docs/performance.md, "Import").
 */
export class ImportCheckpoints {
  private constructor(private readonly db: DB) {}

  /** A connection to the store at `path` when it is a file in WAL mode that may be written; undefined otherwise. */
  static open(path: string): ImportCheckpoints | undefined {
    let db: DB | undefined
    try {
      db = new Database(path, {fileMustExist: true})
      db.pragma('busy_timeout = 0')
      if (String(db.pragma('journal_mode', {simple: true})).toLowerCase() === 'wal') return new ImportCheckpoints(db)
    } catch {}
    try {
      db?.close()
    } catch {}
    return undefined
  }

  /** Copy what is committed into the file (nothing when another checkpoint runs). */
  run(): void {
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)')
    } catch {}
  }

  close(): void {
    try {
      this.db.close()
    } catch {}
  }
}

/**
 * Every row of a stage `t` of subscription rows into the history, in key order; the events a
 * subscription has already are left as they are (the same row imported again).
 */
function historyStatement(db: DB, t: string, key: string): Statement {
  const cols = SUBSCRIPTION_EVENT_COLUMNS.join(', ')
  const select = EVENT_FROM_IMPORT_SQL
  return db.prepare(`INSERT INTO main.subscription_events (${cols}) SELECT ${select} FROM ${t} AS s WHERE true ORDER BY ${key} ON CONFLICT DO NOTHING`)
}

/** SQLite adapter of the imports repository: every statement prepared once per store. */
export class SqliteImports implements ImportsRepository {
  constructor(
    private readonly db: DB,
    /** The store's revenue repository, made when a writer needs it (the reading thread's store only fills stages). */
    private readonly revenue: () => SqliteRevenue,
    /** The store's file (StorePort.location): the checkpoints' connection opens it. */
    private readonly location: string,
  ) {}

  writer<T extends RevenueTable>(table: T, options: ImportWriterOptions<T> = {}): ImportWriter {
    return new SqliteImportWriter(this.db, this.revenue(), table, Boolean(options.dryRun), options.resolve as Resolve<RevenueTable> | undefined)
  }

  fillStages(paths: readonly string[], cacheKb?: number): ExternalStages {
    return new ImportStages(paths, cacheKb)
  }

  checkpoints(): undefined | WalCheckpoints {
    return ImportCheckpoints.open(this.location)
  }
}

/** Rows staged at most before they are sorted into the table (a batch is usually smaller). */
const MAX_STAGED = 250_000

/**
 * A batch is one stage the reading thread filled (externalStages: two scratch files this
 * connection attaches, filled in turn) and is one commitStaged(): one transaction in which one
 * INSERT ... SELECT ... ORDER BY key sorts the stage's rows into the table, so the unique index
 * is written leaf after leaf instead of at random (export ids are random) and a small page
 * cache does; rows whose key was there already, or came earlier in the stage, then go through
 * the per-row rules in file order, as if they had been written one by one. Foreign keys are
 * off while the writer is open; the products a batch refers to are checked once, at its
 * commit. A killed run leaves whole batches only. The transaction begins deferred and writes
 * the store at once (begin): IMMEDIATE would lock the stage being filled too.
 *
 * Rows written through writeChunk (and a stage's rows when the kind has deletes or pending
 * partial updates, read back and written so) are staged in a TEMP table and sorted in the same
 * way at flush() or commit; rows older than their record's tombstone (stale, skipped) and
 * rows of keys with pending partial updates (written at once) are not staged. A dry run
 * writes nothing and looks every row up instead (docs/performance.md, "Import").
 */
class SqliteImportWriter implements ImportWriter {
  private readonly tally: ImportWriteCounts = {inserted: 0, stale: 0, unchanged: 0, updated: 0}
  /** The TEMP stage of rows written through writeChunk (made on first use). */
  private stage: Stage | undefined
  /** The temp database's cache size before the stage was made (restored by close). */
  private tempCacheSize: unknown
  private open = false
  private closed = false
  /** Products of rows written at once in the open transaction (the staged rows' are their stage's). */
  private readonly batchProducts = new Set<number>()
  private readonly restore: {cacheSize: unknown; foreignKeys: unknown}
  private readonly st
  /** Deletes and pending partial updates of the kind (both rare), read again at each batch's start. */
  private tombstones: Map<string, EventRef>
  private pending: Map<string, PendingFields>
  /** The external stages (externalStages) and their folder, once made. */
  private external: undefined | {dir: string; files: number; stages: Stage[]}
  /** The columns of an import row (subscriptions: the record's, then the trial dates seen) and of the record. */
  private readonly columns: readonly string[]
  private readonly recordColumns: readonly string[]
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
    const columns: readonly string[] = table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_IMPORT_COLUMNS
    this.columns = columns
    this.recordColumns = table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
    this.kind = table === 'charges' ? 'charge' : 'subscription'
    // The key is the first three columns (user_id, origin, origin_id).
    this.iProduct = columns.indexOf('product_id')
    this.iTs = columns.indexOf('latest_event_timestamp')
    this.iId = columns.indexOf('latest_event_id')
    this.st = revenue.statements(table)
    this.tombstones = revenue.latestDeletesSync(this.kind)
    this.pending = revenue.pendingSync(this.kind)
    this.restore = {cacheSize: db.pragma('cache_size', {simple: true}), foreignKeys: db.pragma('foreign_keys', {simple: true})}
    // Product references are checked once per batch (commit) instead of once per row.
    if (!dryRun) db.pragma('foreign_keys = OFF')
    // New rows reach the unique index sorted (staged), so it is written leaf after leaf and a
    // larger page cache gains nothing (measured: 4 MB as fast as 40 MB); the sort's in-memory
    // runs are bounded by this size too. A dry run reads every key at random: the 40 MB it had.
    const cacheSize = dryRun ? DRY_RUN_CACHE_KB : IMPORT_CACHE_KB
    db.pragma(`cache_size = -${cacheSize}`)
    // Fewer WAL checkpoints while the import writes (each syncs the file, and a page rewritten
    // by several batches is copied once): the WAL may grow to about 256 MB plus a batch.
    db.pragma('wal_autocheckpoint = 65536')
  }

  /** What the rows written so far did, as of the last flush or commit. */
  get counts(): ImportWriteCounts {
    return this.tally
  }

  private count(verdict: 'apply' | 'duplicate' | 'stale'): void {
    if (verdict === 'apply') this.tally.updated++
    else if (verdict === 'duplicate') this.tally.unchanged++
    else this.tally.stale++
  }

  /** Begin a batch's transaction: single writes may have deleted records or kept partial updates since the last one. */
  private async begin(): Promise<void> {
    // BEGIN IMMEDIATE would take the write lock of every attached database, the external
    // stages' too (which the reading thread fills meanwhile): a deferred BEGIN and a write to
    // the store alone take the store's lock first thing, waiting for it as IMMEDIATE would.
    const {table} = this
    if (this.external) this.db.exec(`BEGIN; DELETE FROM main.${table} WHERE 0`)
    else this.db.exec('BEGIN IMMEDIATE')
    this.open = true
    this.tombstones = await this.revenue.latestDeletes(this.kind)
    this.pending = await this.revenue.pending(this.kind)
  }

  async writeChunk(rows: readonly (readonly unknown[])[], from = 0, to = rows.length): Promise<void> {
    if (from >= to) return
    const {tally: counts, st, iId, iTs, iProduct} = this
    if (!this.open && !this.dryRun) await this.begin()
    const {tombstones, pending} = this
    const check = tombstones.size > 0 || pending.size > 0
    const stage = this.dryRun ? undefined : (this.stage ??= this.makeStage())
    const width = this.columns.length
    for (let i = from; i < to; i++) {
      let row = rows[i]
      // A subscription row of the record's columns alone: no trial dates seen beyond the record's.
      if (row.length < width) row = [...row, ...Array.from({length: width - row.length}, () => null)]
      if (check) {
        const event: EventRef = {id: row[iId] as string, timestamp: row[iTs] as number}
        const key = recordKey(row[0] as string, row[1] as string, row[2] as string)
        const t = tombstones.get(key)
        if (t !== undefined && compareEvents(event, t) < 0) {
          counts.stale++
          continue
        }
        const p = pending.get(key)
        if (p !== undefined) {
          if (await this.insertPending(row, event, key, p)) continue
          // The record exists. No row of a pending key is ever staged (each goes here until
          // one makes the record and the entry goes), so none waits in the stage.
          if (stage) {
            this.batchProducts.add(row[iProduct] as number)
            await this.writeExisting(row, event)
            await this.remember(row)
            continue
          }
        }
      }
      if (stage === undefined) {
        const latest = st.latest.get(row[0], row[1], row[2]) as (EventRef & {field_events: null | string}) | undefined
        const event: EventRef = {id: row[iId] as string, timestamp: row[iTs] as number}
        if (!latest) counts.inserted++
        else if (latest.field_events === null) this.count(judge(event, latest))
        else this.count(judge(event, parseFieldEvents(latest.field_events)!.base))
        continue
      }
      // Any other row is staged: nothing else read or allocated for it; the flush inserts it
      // or, when its key is there, applies the per-row rules.
      stage.products.add(row[iProduct] as number)
      stage.insert.run(...row)
      stage.staged++
    }
    if (stage && stage.staged > MAX_STAGED) await this.flushStage(stage)
  }

  async flush(): Promise<void> {
    if (this.stage) await this.flushStage(this.stage)
  }

  /** Run an external stage's rows through writeChunk (the per-row rules of deletes and pending updates, or a dry run's look-ups). */
  private async restage(from: Stage): Promise<void> {
    for (const rows of stagePages(from.page, REST_CHUNK)) await this.writeChunk(rows)
    this.clearStage(from)
  }

  private clearStage(stage: Stage): void {
    stage.staged = 0
    stage.products.clear()
    // An external stage is emptied by the thread that fills it (ImportStages.start).
    if (stage.external) return
    this.db.exec(stage.dropKeyIndex)
    stage.clear.run()
  }

  private maxId(): number {
    const {table} = this
    return this.db.prepare(`SELECT coalesce(max(id), 0) FROM main.${table}`).pluck().get() as number
  }

  private productsFound(ids: number[]): boolean {
    const unique = [...new Set(ids)]
    const found = (this.db.prepare(`SELECT count(*) AS n FROM products WHERE id IN (${unique.map(() => '?').join(',')})`).get(...unique) as {n: number}).n
    return found === unique.length
  }

  /** A row whose key is in the table: the per-row rules (merge, apply, unchanged or stale). */
  private async writeExisting(row: readonly unknown[], event: EventRef): Promise<void> {
    const {st} = this
    const latest = st.latest.get(row[0], row[1], row[2]) as EventRef & {field_events: null | string}
    if (latest.field_events !== null) {
      await this.mergeRow(row, event, latest, parseFieldEvents(latest.field_events)!)
      return
    }
    const verdict = judge(event, latest)
    if (verdict === 'apply') st.replaceRow.run(...row.slice(3, this.recordColumns.length), row[0], row[1], row[2])
    this.count(verdict)
  }

  /** A subscription row written at once (not staged) into the history. */
  private async remember(row: readonly unknown[]): Promise<void> {
    if (this.table === 'subscriptions') await this.revenue.saveSubscriptionEvents([eventOfImportRow(row)])
  }

  /**
   * A stage: a TEMP table (a file SQLite discards, not the store; part of the transaction,
   * so a rollback empties it) with the table's columns and no types, so values reach the
   * table as they were bound.
   */
  private makeStage(externalIndex?: number): Stage {
    const {db, table} = this
    const cols = this.columns
    const key = 'user_id, origin, origin_id'
    const external = externalIndex !== undefined
    // t: the stage, in its schema (temp, or an external stage's attached file); name: unqualified.
    const name = external ? STAGE_TABLE : `pricectl_import_${table}`
    const schema = external ? externalSchema(externalIndex) : 'temp'
    const t = `${schema}.${name}`
    // Fixed conditions: the stored record (t), and an earlier staged row (e), of a staged row's (s) key.
    const where = 't.user_id = s.user_id AND t.origin = s.origin AND t.origin_id = s.origin_id'
    const w = 'e.user_id = s.user_id AND e.origin = s.origin AND e.origin_id = s.origin_id'
    const limit = REST_CHUNK
    if (!external) {
      db.exec(`DROP TABLE IF EXISTS ${t}; CREATE TABLE ${t} (${cols.join(', ')})`)
      // Written once in order and read once by the sort: its pages need no cache to speak of
      // (SQLite's default for the temp database here is 16 MB, which the peak RSS would count).
      this.tempCacheSize ??= db.pragma('temp.cache_size', {simple: true})
      const cacheSize = TEMP_STAGE_CACHE_KB
      db.pragma(`temp.cache_size = -${cacheSize}`)
    }
    // In key order, and in file order within a key: the first row of a new key makes it.
    // (WHERE true: an upsert after a SELECT needs one to parse.)
    const rec = this.recordColumns.join(', ')
    const select = `INSERT INTO main.${table} (${rec}) SELECT ${rec} FROM ${t}`
    const order = `ORDER BY ${key}, rowid ON CONFLICT (${key}) DO NOTHING`
    return {
      clear: db.prepare(`DELETE FROM ${t}`),
      external,
      dropKeyIndex: `DROP INDEX IF EXISTS ${t}_key`,
      drop: `DROP TABLE IF EXISTS ${t}`,
      flush: db.prepare(`${select} WHERE true ${order}`),
      history: table === 'subscriptions' ? historyStatement(db, t, key) : undefined,
      insert: db.prepare(`INSERT INTO ${t} VALUES (${cols.map(() => '?').join(', ')})`),
      keyIndex: `CREATE INDEX IF NOT EXISTS ${t}_key ON ${name} (${key})`,
      page: db.prepare(stagePageSql(t, cols, limit)).raw(),
      products: new Set(),
      // Staged rows the flush did not insert, in file order: their key was in the table
      // before (no row of it newer than :max), or an earlier staged row has it.
      rest: db
        .prepare(
          `SELECT rowid, ${cols.join(', ')} FROM ${t} AS s WHERE rowid > @after AND (` +
            `NOT EXISTS (SELECT 1 FROM main.${table} AS t WHERE ${where} AND t.id > @max) OR ` +
            `EXISTS (SELECT 1 FROM ${t} AS e WHERE ${w} AND e.rowid < s.rowid)) ORDER BY rowid LIMIT ${limit}`,
        )
        .raw(),
      staged: 0,
    }
  }

  /**
   * Sort a stage's rows into the table at once, then write those it did not insert one by
   * one, in file order; then empty it.
   */
  private async flushStage(stage: Stage): Promise<void> {
    const {staged} = stage
    if (staged === 0) return
    const max = this.maxId()
    stage.history?.run()
    const inserted = stage.flush.run().changes
    this.tally.inserted += inserted
    if (inserted < staged) {
      // Rare (a re-run, or a record's events in one batch): an index finds earlier stage rows.
      this.db.exec(stage.keyIndex)
      await this.writeRest(stage, max)
    }
    // Its products stay with the open batch (checked at its commit).
    for (const p of stage.products) this.batchProducts.add(p)
    this.clearStage(stage)
  }

  /** The staged rows a flush did not insert, through the per-row rules in file order (the stage's key index exists). */
  private async writeRest(stage: Stage, max: number): Promise<void> {
    const {iId, iTs} = this
    for (let after = 0; ; ) {
      const rest = stage.rest.all({after, max}) as unknown[][]
      for (const r of rest) {
        const row = r.slice(1)
        await this.writeExisting(row, {id: row[iId] as string, timestamp: row[iTs] as number})
      }
      if (rest.length < REST_CHUNK) break
      after = rest.at(-1)![0] as number
    }
  }

  /** The row as a values object (column name -> cell). */
  private valuesOf(row: readonly unknown[]): Record<string, unknown> {
    const v: Record<string, unknown> = {}
    this.columns.forEach((c, i) => (v[c] = row[i]))
    return v
  }

  /** The row with newer partial writes merged in (the engine's resolve), at the later of the two latest events. */
  private async merged(row: readonly unknown[], writes: FieldWrites, latest: EventRef): Promise<Record<string, unknown>> {
    const values = this.valuesOf(row)
    if (Object.keys(writes).length > 0) {
      if (!this.resolve) throw new Error(`import into ${this.table}: a row meets newer partial updates and the writer was given no resolve`)
      Object.assign(values, await this.resolve(values as never, writes))
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
  private async insertPending(row: readonly unknown[], event: EventRef, key: string, p: PendingFields): Promise<boolean> {
    if (this.st.latest.get(row[0], row[1], row[2]) !== undefined) return false
    this.tally.inserted++
    if (this.dryRun) return true
    const writes = writesNewerThan(p.fields, event)
    const latest = laterEvent(p.latest, event)
    this.batchProducts.add(row[this.iProduct] as number)
    this.st.insertNew.run({...(await this.merged(row, writes, latest)), field_events: this.fieldOrder(event, latest, writes)})
    await this.remember(row)
    await this.revenue.savePending(this.kind, [[key, null]])
    this.pending.delete(key)
    return true
  }

  /** A row for a record partial updates wrote to: it becomes the base, the writes newer than it stay. */
  private async mergeRow(row: readonly unknown[], event: EventRef, stored: EventRef, fe: FieldEvents): Promise<void> {
    const verdict = judge(event, fe.base)
    if (verdict === 'apply') {
      const writes = writesNewerThan(fe.fields, event)
      const latest = laterEvent({id: stored.id, timestamp: stored.timestamp}, event)
      this.st.replace.run({...(await this.merged(row, writes, latest)), field_events: this.fieldOrder(event, latest, writes)})
    }
    this.count(verdict)
  }

  async commit(): Promise<boolean> {
    if (!this.open) return true
    await this.flush()
    // The rows' products were matched earlier, through another connection; one could have
    // been deleted since (no write can happen while this transaction is open).
    if (!this.productsFound([...this.batchProducts])) return false
    this.db.exec('COMMIT')
    this.open = false
    this.batchProducts.clear()
    return true
  }

  externalStages(readers = 1): readonly string[] {
    if (this.external) throw new Error('import writer: external stages were made already')
    // Attached before any batch (ATTACH cannot run inside a transaction).
    if (this.open) throw new Error('import writer: externalStages() while a batch is open')
    const {dir, paths} = makeStageFiles(this.columns, 2 * readers)
    const external = {dir, files: paths.length, stages: [] as Stage[]}
    this.external = external
    try {
      for (const [i, path] of paths.entries()) {
        // t: the stage's schema here (a fixed name).
        const t = externalSchema(i)
        this.db.prepare(`ATTACH ? AS ${t}`).run(path)
        const cacheSize = STAGE_CACHE_KB
        this.db.pragma(`${t}.cache_size = -${cacheSize}`)
        // A dry run only reads the stages (and its store may be read-only, so may they).
        if (!this.dryRun) {
          this.db.pragma(`${t}.journal_mode = OFF`)
          this.db.pragma(`${t}.synchronous = OFF`)
        }
        external.stages.push(this.makeStage(i))
      }
    } catch (error) {
      this.dropExternal()
      throw error
    }
    return paths
  }

  /** Nothing is held back: every batch commits. */
  readonly held = 0

  async finish(): Promise<boolean> {
    return true
  }

  async commitStaged(batch: StagedBatch): Promise<boolean> {
    const stage = this.external?.stages[batch.stage]
    if (stage === undefined) throw new Error(`import writer: no external stage ${batch.stage}`)
    if (this.open) throw new Error('import writer: commitStaged() while a batch is open')
    if (batch.rows === 0) return true
    stage.staged = batch.rows
    for (const p of batch.products) stage.products.add(p)
    // A dry run looks each row up, in file order.
    if (this.dryRun) {
      await this.restage(stage)
      return true
    }
    await this.begin()
    // Deletes or pending partial updates of the kind (rare): the rows take the per-row road
    // (writeChunk), into the TEMP stage.
    if (this.tombstones.size > 0 || this.pending.size > 0) await this.restage(stage)
    else await this.flushStage(stage)
    return await this.commit()
  }

  /** Detach the external stages and remove their files (the reading thread's connections to them may outlive this: unlinked files). */
  private dropExternal(): void {
    const e = this.external
    if (e === undefined) return
    this.external = undefined
    const attached = new Set((this.db.pragma('database_list') as {name: string}[]).map((d) => d.name))
    // Every file's schema: one whose stage was not made yet (a failed attach) may be attached.
    for (let i = 0; i < e.files; i++) {
      const t = externalSchema(i)
      if (!attached.has(t)) continue
      try {
        this.db.exec(`DETACH ${t}`)
      } catch {}
    }
    removeStageFiles(e.dir)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    try {
      try {
        // The counts cover the rows written, committed or not: staged rows are counted, then rolled back.
        if (this.open && this.db.inTransaction) await this.flush()
      } finally {
        if (this.open && this.db.inTransaction) this.db.exec('ROLLBACK')
      }
      this.open = false
      if (this.stage) this.db.exec(this.stage.drop)
      this.stage = undefined

      if (this.tempCacheSize !== undefined) {
        const cacheSize = Number(this.tempCacheSize)
        this.db.pragma(`temp.cache_size = ${cacheSize}`)
      }
      const {cacheSize} = this.restore
      this.db.pragma(`cache_size = ${cacheSize}`)
      this.db.pragma('wal_autocheckpoint = 1000') // SQLite's default
      this.db.pragma(`foreign_keys = ${this.restore.foreignKeys ? 'ON' : 'OFF'}`)
    } finally {
      // The external stages' files go on failure too.
      this.dropExternal()
    }
  }
}
