
import type {ExternalStages, ImportsRepository, ImportWriteCounts, ImportWriter, ImportWriterOptions, StagedBatch} from '../port/imports.js'
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
  SUBSCRIPTION_IMPORT_COLUMNS,
  type ValuesOf,
  writesNewerThan,
} from '../port/revenue.js'
import {ImportStages, makeStageFiles, removeStageFiles, stageColumns, StageReader} from '../import-stages.js'
import {ImportKeys, keyHash} from './import-keys.js'
import {ID_ORDER, parseFieldEvents, type PgRevenue} from './revenue.js'
import type {CopyIn} from './client.js'
import {int, type Sql} from './support.js'
import {eventOfImportRow} from '../rows.js'

/** PostgreSQL adapter of the imports repository: rows stream through COPY, straight into the target when their keys are new, else into a staging table merged from there. */
export class PgImports implements ImportsRepository {
  /**
   * Rows per transaction by default: the last batch is written after the file is read, with
   * the reading thread idle, so a smaller batch shortens that tail (1M payments: 10.8-11.4 s
   * against 11.9-12.4 s at 250,000). PostgreSQL's commit rewrites no index pages, unlike SQLite's.
   */
  readonly batchRows = 100_000

  /**
   * The end of a file goes in batches of 25,000: while a first load holds its batches (one
   * transaction, PgImportWriter.rebuild) a batch costs nothing of its own, and the last one,
   * written with the reading thread idle, is a quarter as long (1M payments: 6.88-6.97 s
   * against 7.07-7.12 s).
   */
  readonly tailBatchRows = 25_000

  /**
   * Two threads read a large file, each its own chunks: the reading thread was the critical
   * path, busy ~85% of a load while the server and the writer used about half a core
   * (docs/postgres.md, "Import performance").
   */
  readonly readersPerFile = 2


  constructor(
    private readonly sql: Sql,
    private readonly revenue: PgRevenue,
  ) {}

  writer<T extends RevenueTable>(table: T, options: ImportWriterOptions<T> = {}): ImportWriter {
    return new PgImportWriter(this.sql, this.revenue, table, Boolean(options.dryRun), options.resolve as Resolve<RevenueTable> | undefined, Boolean(options.hold) && !options.dryRun, options.holdRows ?? HOLD_ROWS)
  }

  /**
   * The stages are scratch SQLite files on PostgreSQL too (PgImportWriter reads them into
   * COPY); a charges stage holds the rows' COPY lines and key hashes, made here in the reading
   * thread and packed STAGE_PAGE_ROWS to a stage row (PACKED).
   */
  fillStages(paths: readonly string[], cacheKb?: number): ExternalStages {
    const packed = paths.length > 0 && stageColumns(paths[0]).join() === PACKED.join()
    return new ImportStages(paths, cacheKb, packed ? {key: (r) => keyHash(r[0] as string, r[1] as string, r[2] as string), line: copyLine, rows: STAGE_PAGE_ROWS} : undefined)
  }
}

/** A character COPY's text format escapes. */
const COPY_SPECIAL = /[\\\t\n\r]/

/** A value in COPY's text format: \N for NULL; backslash, tab, newline and carriage return escaped. */
function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N'
  if (typeof v === 'number') return String(v)
  if (typeof v === 'boolean') return v ? 't' : 'f'
  const s = String(v)
  return COPY_SPECIAL.test(s) ? s.replaceAll('\\', '\\\\').replaceAll('\t', '\\t').replaceAll('\n', '\\n').replaceAll('\r', '\\r') : s
}

/**
 * By default (ImportWriterOptions.holdRows) a first load holds its batches until the writer
 * has written this many rows, or another session waits for it (PgImportWriter.rebuild): a
 * kill loses what a hold held, and a session that comes to wait during its last batch waits
 * for that batch and the index builds too (1M rows: ~1 s on the bench machine of 11-30, ~3 s
 * on a 3x slower one).
 */
export const HOLD_ROWS = 1_000_000

/** Ids of the target's identity a hold's session takes at a time (PgImportWriter.beginHold); a session ending with some unused leaves a gap, as a rollback does. */
const HOLD_IDS = 2000

/** How many rows the staging table takes before it is emptied. */
const STAGE_ROWS = 10_000

/**
 * Rows of a stage file written at a time (commitStaged): each page is one writeChunk, its
 * passes one COPY each (larger passes overlapped less and gained nothing: docs/postgres.md).
 */
const STAGE_PAGE_ROWS = 2000

/**
 * A row in COPY's text format: cells joined by tabs (no newline). Numbers and plain strings,
 * nearly every cell of an import, are written inline (a third less time than copyValue for
 * each cell: the reading thread makes a line per imported charge).
 */
export function copyLine(row: readonly unknown[]): string {
  let line = ''
  for (let i = 0; i < row.length; i++) {
    const v = row[i]
    const cell = typeof v === 'number' ? String(v) : typeof v === 'string' && !COPY_SPECIAL.test(v) ? v : copyValue(v)
    line = i === 0 ? cell : line + '\t' + cell
  }
  return line
}

/**
 * A charges stage on PostgreSQL (not a dry run's) has two columns: each stage row holds
 * STAGE_PAGE_ROWS rows, as their COPY lines (each ended by a newline, UTF-8) and their keys'
 * hashes (keyHash, float64), made by the reading thread (ImportStages' pack). While a hold
 * lasts, a page whose keys are all new goes to the `COPY` as it is, never decoded
 * (copyPacked); any other is split into lines, and the writer reads the key, the product and
 * the event of each from its line (leanLine) and joins ready lines into the `COPY`. A path
 * that needs every value of a row (a merge with kept or pending partial updates) parses its
 * line (fullCharge). Binding two values per 2,000 rows instead of 7 per row, and passing pages
 * through undecoded, took ~1.9 s off the reading thread and ~2.5 s off the writer's per 1M
 * rows (docs/postgres.md, "Import performance").
 */
const PACKED = ['copy_lines', 'keys'] as const
const LEAN_CHARGE = ['user_id', 'origin', 'origin_id', 'product_id', 'latest_event_timestamp', 'latest_event_id'] as const
/** Where the cells of LEAN_CHARGE are in a charge row (ascending). */
const LEAN_AT = LEAN_CHARGE.map((c) => CHARGE_COLUMNS.indexOf(c))
/** Charge columns that hold text; every other one holds an integer (ChargeValues). */
const CHARGE_TEXT: ReadonlySet<string> = new Set(['user_id', 'origin', 'origin_id', 'country', 'status', 'currency', 'metadata_json', 'latest_event_id'])
const CHARGE_NUMERIC = CHARGE_COLUMNS.map((c) => !CHARGE_TEXT.has(c))

/** A cell of a COPY line as its value: \N is null, escapes undone, a number for a numeric column. */
function copyCell(cell: string, numeric: boolean): unknown {
  if (cell === '\\N') return null
  const s = cell.includes('\\') ? cell.replace(/\\(.)/g, (_, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c)) : cell
  return numeric ? Number(s) : s
}

/** A charge row's values from its COPY line (copyLine's inverse for charges). */
export function fullCharge(line: string): unknown[] {
  return line.split('\t').map((cell, i) => copyCell(cell, CHARGE_NUMERIC[i]))
}

/** The values of LEAN_CHARGE's columns from a charge's COPY line, in that order, without splitting the rest of it. */
export function leanLine(line: string): unknown[] {
  const out = new Array<unknown>(LEAN_AT.length)
  let start = 0
  for (let i = 0, k = 0; k < LEAN_AT.length; i++) {
    const end = line.indexOf('\t', start)
    if (i === LEAN_AT[k]) out[k++] = copyCell(end === -1 ? line.slice(start) : line.slice(start, end), CHARGE_NUMERIC[i])
    start = end + 1
  }
  return out
}

/** Rows by key (user_id, origin, origin_id), in code unit order (the columns' collation is C). */
function byKey(a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < 3; i++) {
    const x = a[i] as string
    const y = b[i] as string
    if (x !== y) return x < y ? -1 : 1
  }
  return 0
}

/**
 * The import's reading thread writes the rows into stage files (externalStages, scratch SQLite
 * files, as for a SQLite store); a batch is one stage, read back a page at a time (commitStaged)
 * and written as writeChunk writes rows: each page in passes with unique keys.
 *
 * A pass of rows none of whose keys has a record (a first import, the new part of a resumed
 * one) is copied straight into the target (copyNew). Any other goes to the session's staging
 * table (a TEMP table: no WAL, no index) through COPY FROM STDIN, then one statement merges
 * it into the target: staged rows whose key is new are inserted (a plain INSERT: the store's
 * write lock, below, keeps any other writer from adding their keys first), and the rest are
 * judged against their records; those newer than their record go through an upsert whose
 * ON CONFLICT ... WHERE keeps the event order against the row as it is when the statement
 * gets to it, so a row older than the stored record never overwrites it, whoever wrote it.
 * The batch is one transaction, as on SQLite: a run killed mid-COPY or mid-merge leaves
 * whole batches only (the server rolls back the open transaction when the connection
 * drops), and running the same import again inserts the rest.
 *
 * A batch is a write transaction of the store: it holds the store's write lock until it
 * commits, as SQLite's BEGIN IMMEDIATE, so two imports never deadlock on each other's keys
 * and a single write (which reads, judges, then writes under the same lock) commits before
 * or after a batch, never in between.
 */
class PgImportWriter implements ImportWriter {
  readonly counts: ImportWriteCounts = {inserted: 0, stale: 0, unchanged: 0, updated: 0}
  private open = false
  /**
   * A first load (the caller allows holding: ImportWriterOptions.hold): while the target holds
   * only this writer's records (clean), a batch's transaction drops the target's indexes but
   * its primary key, and these statements build them again, each in one sort, before the hold
   * commits. Inserting 1M random keys into the unique index cost about as much as the rest of
   * the load together (docs/postgres.md, "Import performance"). The first batch commits alone
   * (a kill after it keeps rows); the next hold lasts until the writer has written holdRows
   * rows, until another session waits for it at a batch's end (waitedOn: a hold keeps the
   * store's write lock and the table, and other writers fail busy after 10 s, `serve`'s
   * statements after 5 s), until finish(), or until a row must look its record up (unhold: a
   * key's second row, more keys than ImportKeys holds, a pending partial update). The writer
   * holds no more after that: the rest goes in plain batches, each sorted into the indexes.
   */
  private rebuild?: string[]
  /** Rows committed when the hold began (counts' sum). */
  private heldFrom = 0
  /** False once a row needed a lookup during a hold: no more holds. */
  private holds = true
  private closed = false
  /** A product the batch refers to was deleted: nothing of the batch may commit. */
  private lost = false
  /** Products the open batch refers to, checked and locked (KEY SHARE: they cannot be deleted before the batch commits). */
  private readonly batchProducts = new Set<number>()
  /** The columns of an import row (subscriptions: the record's, then the trial dates seen) and of the record. */
  private readonly columns: readonly string[]
  private readonly recordColumns: readonly string[]
  private readonly stage: string
  private readonly merge: string
  private readonly update: string
  private readonly dryCount: string
  private readonly probe: string
  /** Rows in the staging table (numbered 0 to staged - 1). */
  private staged = 0
  /**
   * Whether every record of the target is one this writer wrote (`keys` holds their keys): the
   * target was empty when the first batch began, and no other writer added a record between
   * batches (its largest id is still the one this writer's last batch left). Then a pass none
   * of whose keys is in `keys` needs no probe. Undefined until the first batch begins.
   */
  private clean: boolean | undefined
  private readonly keys = new ImportKeys()
  /** The stage files (externalStages), read through connections of their own, and their folder. */
  private external: undefined | {dir: string; stages: StageReader[]}
  /** The target's largest id when this writer's last batch committed. */
  private lastId: null | number = null
  private readonly copyDirect: string
  /** Deletes and pending partial updates of the kind (both rare), read again at each batch's start. */
  private tombstones = new Map<string, EventRef>()
  private pending = new Map<string, PendingFields>()
  private readonly kind: Kind
  private readonly iProduct: number
  private readonly iTs: number
  private readonly iId: number
  /** Cells of an import row; a lean row (leanRow) holds its COPY line after them. */
  private readonly width: number
  /** Whether the stages hold charges' COPY lines (LEAN_CHARGE). */
  private lean = false
  private ready?: Promise<void>
  /**
   * The COPY of new rows into the target, left open across passes (copyNew): the server
   * writes each pass while this thread reads and prepares the next. Ended before any other
   * statement of the batch (settle).
   */
  private copying?: Promise<CopyIn>

  constructor(
    private readonly sql: Sql,
    private readonly revenue: PgRevenue,
    private readonly table: RevenueTable,
    private readonly dryRun: boolean,
    private readonly resolve: Resolve<RevenueTable> | undefined,
    private readonly hold: boolean,
    /** Rows written before a hold commits (ImportWriterOptions.holdRows). */
    private readonly holdRows: number,
  ) {
    const columns: readonly string[] = table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
    this.recordColumns = columns
    this.columns = table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_IMPORT_COLUMNS
    this.iProduct = columns.indexOf('product_id')
    this.iTs = columns.indexOf('latest_event_timestamp')
    this.iId = columns.indexOf('latest_event_id')
    this.kind = table === 'charges' ? 'charge' : 'subscription'
    this.width = this.columns.length
    this.stage = `pricectl_import_${table}`
    const cols = columns.join(', ')
    const set = columns.filter((c) => !['origin', 'origin_id', 'user_id'].includes(c))
    const KEY = 't.user_id = s.user_id AND t.origin = s.origin AND t.origin_id = s.origin_id'
    const newer = (a: string, b: string) => `(${a}.latest_event_timestamp, ${a}.latest_event_id ${ID_ORDER}) > (${b}.latest_event_timestamp, ${b}.latest_event_id ${ID_ORDER})`
    // Staged rows by their state before the statement: those of the pass, numbered from $1
    // (earlier passes' rows stay in the table until it is emptied, see flushPasses). Keys are
    // unique within a staged pass (writeChunk splits repeats). Each staged row looks its key up through the unique index
    // (a LATERAL ... LIMIT 1: a per-row index probe whatever the planner guesses of the
    // unanalyzed staging table, never a scan of the whole target per chunk). Rows of new keys
    // (all of them in a first import) are inserted by a plain INSERT, with no ON CONFLICT:
    // under the store's write lock no other writer can add their keys before the batch
    // commits, and a speculative insert costs about twice a plain one (docs/postgres.md,
    // "Import performance"). Of the rows whose key exists, stale ones (the record is newer)
    // are counted; newer ones are returned by position (upd) for the upsert below; records
    // partial updates wrote to (field_events set: rare) are left alone and their rows
    // returned by position (slow), for the per-field rules (mergeRow).
    this.merge = `WITH hit AS MATERIALIZED (
        SELECT s.n, t.field_events IS NOT NULL AS partial, ${newer('t', 's')} AS stale, ${newer('s', 't')} AS newer
        FROM ${this.stage} s CROSS JOIN LATERAL (
          SELECT t.field_events, t.latest_event_timestamp, t.latest_event_id FROM ${table} t WHERE ${KEY} LIMIT 1) t
        WHERE s.n >= $1
      ), ins AS (
        INSERT INTO ${table} (${cols}) SELECT ${cols} FROM ${this.stage} s WHERE s.n >= $1 AND NOT EXISTS (SELECT FROM hit WHERE hit.n = s.n)
          ORDER BY user_id, origin, origin_id
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM ins)::int AS inserted, count(*) FILTER (WHERE NOT partial AND stale)::int AS stale,
        coalesce(array_agg(n ORDER BY n) FILTER (WHERE partial), '{}') AS slow, coalesce(array_agg(n ORDER BY n) FILTER (WHERE NOT partial AND newer), '{}') AS upd,
        (SELECT count(*) FROM ${this.stage} WHERE n >= $1)::int AS total
      FROM hit`
    // The staged rows newer than their records: an upsert whose ON CONFLICT ... WHERE keeps
    // the event order against the row as it is when the statement gets to it.
    this.update = `INSERT INTO ${table} AS t (${cols}) SELECT ${cols} FROM ${this.stage} WHERE n = ANY($1::int[]) ORDER BY user_id, origin, origin_id
        ON CONFLICT (user_id, origin, origin_id) DO UPDATE SET ${set.map((c) => `${c} = excluded.${c}`).join(', ')}
        WHERE t.field_events IS NULL AND ${newer('excluded', 't')}`
    const base = (a: string) => `(CASE WHEN ${a}.field_events IS NULL THEN ${a}.latest_event_timestamp ELSE (${a}.field_events::jsonb -> 'base' ->> 'timestamp')::bigint END,
      CASE WHEN ${a}.field_events IS NULL THEN ${a}.latest_event_id ELSE ${a}.field_events::jsonb -> 'base' ->> 'id' END ${ID_ORDER})`
    const stagedEvent = `(s.latest_event_timestamp, s.latest_event_id ${ID_ORDER})`
    // A dry run writes nothing: each row meets the record as stored (its base event when partial updates wrote to it).
    this.dryCount = `SELECT count(*) FILTER (WHERE t.id IS NULL)::int AS inserted, count(*) FILTER (WHERE ${stagedEvent} > ${base('t')})::int AS updated,
        count(*) FILTER (WHERE ${stagedEvent} < ${base('t')})::int AS stale, '{}'::int[] AS slow, count(*)::int AS total
      FROM ${this.stage} s LEFT JOIN LATERAL (
        SELECT t.id, t.field_events, t.latest_event_timestamp, t.latest_event_id FROM ${table} t WHERE ${KEY} LIMIT 1) t ON true
      WHERE s.n >= $1`
    // Whether any of the keys ($1, $2, $3: parallel arrays) has a record: one index probe per
    // key (LATERAL ... LIMIT 1, as above), stopping at the first found.
    this.probe = `SELECT EXISTS (SELECT FROM unnest($1::text[], $2::text[], $3::text[]) AS k(user_id, origin, origin_id) CROSS JOIN LATERAL (
        SELECT FROM ${table} t WHERE t.user_id = k.user_id AND t.origin = k.origin AND t.origin_id = k.origin_id LIMIT 1) t) AS found`
    this.copyDirect = `COPY ${table} (${cols}) FROM STDIN`
  }

  /** A dry run's deletes and pending partial updates, and the staging table; a batch's staging table. */
  private async stageTable(): Promise<void> {
    if (this.dryRun) {
      this.tombstones = await this.revenue.latestDeletesSync(this.kind)
      this.pending = await this.revenue.pendingSync(this.kind)
    }
    // The staging table: the import columns of the target, no constraints (the target checks them).
    await this.sql.run(`DROP TABLE IF EXISTS ${this.stage}`)
    const seen = this.table === 'subscriptions' ? ', NULL::bigint AS seen_trial_start, NULL::bigint AS seen_trial_end' : ''
    await this.sql.run(`CREATE TEMP TABLE ${this.stage} AS SELECT 0::int AS n, ${this.recordColumns.join(', ')}${seen} FROM ${this.table} WITH NO DATA`)
  }

  async writeChunk(rows: readonly (readonly unknown[])[], from = 0, to = rows.length): Promise<void> {
    if (from >= to) return
    const {counts, iId, iTs} = this
    if (this.dryRun) await (this.ready ??= this.stageTable())
    else if (!this.open) await this.openBatch()
    const {tombstones, pending} = this
    // Rows in passes with unique keys: a key's second row in the chunk goes to the second
    // pass, so it meets the first one's result, as row-by-row writing would.
    const passes: (readonly unknown[])[][] = []
    const seen = new Map<string, number>()
    const width = this.columns.length
    /** Subscription rows for the history (every row not stale against a delete). */
    const history: (readonly unknown[])[] = []
    for (let i = from; i < to; i++) {
      let row = rows[i]
      // A subscription row of the record's columns alone: no trial dates seen beyond the record's.
      if (row.length < width) row = [...row, ...Array.from({length: width - row.length}, () => null)]
      if (this.table === 'subscriptions' && !this.dryRun) history.push(row)
      const key = recordKey(row[0] as string, row[1] as string, row[2] as string)
      if (tombstones.size > 0 || pending.size > 0) {
        const event: EventRef = {id: row[iId] as string, timestamp: row[iTs] as number}
        const t = tombstones.get(key)
        if (t !== undefined && compareEvents(event, t) < 0) {
          counts.stale++
          if (history.at(-1) === row) history.pop()
          continue
        }
        const p = pending.get(key)
        if (p !== undefined) {
          // Rare: written on its own, after the rows before it (earlier passes flushed first).
          await this.flushPasses(passes)
          passes.length = 0
          seen.clear()
          if (await this.insertPending(row, event, key, p)) continue
          passes.push([row])
          await this.flushPasses(passes)
          passes.length = 0
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
    await this.flushPasses(passes)
    if (history.length > 0 && !this.lost) {
      await this.settle()
      await this.revenue.saveSubscriptionEvents(history.map((r) => eventOfImportRow(r)))
    }
  }

  /** Begin a batch: its transaction, its staging table, what single writes left since the last one, and whether a hold begins. */
  private async openBatch(): Promise<void> {
    // A write transaction: the store's write lock, held until the batch commits (SQLite's BEGIN IMMEDIATE).
    await this.sql.begin()
    this.open = true
    // The staging table on the batch's connection, made in its transaction (a batch rolled back takes it along).
    await this.stageTable()
    // Single writes may have deleted records or kept partial updates since the last batch.
    this.tombstones = await this.revenue.latestDeletes(this.kind)
    this.pending = await this.revenue.pending(this.kind)
    if (this.clean !== false) {
      const id = await this.maxId()
      this.clean = this.clean === undefined ? id === null : id === this.lastId
      if (this.clean && this.hold && this.holds && this.total() < this.holdRows) {
        this.heldFrom = this.total()
        this.rebuild = await this.beginHold()
        if (this.rebuild === undefined) this.holds = false
      }
    }
  }

  /**
   * A packed page written as the reading thread made it (PACKED), never decoded: only while a
   * hold lasts (the indexes are dropped: no key order to keep) and the kind has no deletes or
   * pending partial updates, when every key of the page is new (ImportKeys: the target holds
   * only this writer's records). False when it is not so (nothing written, but the keys up to
   * a repeat are remembered, so the caller's path line by line looks the page's keys up and
   * the hold ends, as at a key's second row).
   */
  private async copyPacked(text: Buffer, keys: Buffer, products: readonly number[]): Promise<boolean> {
    if (this.dryRun) return false
    if (!this.open) await this.openBatch()
    if (this.rebuild === undefined || !this.clean || this.keys.full || this.tombstones.size > 0 || this.pending.size > 0) return false
    if (!await this.checkProductIds(products)) return false
    // Copied out: a BLOB's bytes need not be aligned for a Float64Array.
    const hashes = new Float64Array(keys.length / 8)
    new Uint8Array(hashes.buffer).set(keys)
    for (const h of hashes) if (!this.keys.addHash(h)) return false
    this.copying ??= this.sql.copyIn(this.copyDirect)
    await (await this.copying).write(text)
    this.counts.inserted += hashes.length
    return true
  }

  /** Copy each pass to the staging table and merge it. */
  private async flushPasses(passes: (readonly unknown[])[][]): Promise<void> {
    const {counts} = this
    for (const pass of passes) {
      if (this.lost) return
      if (!this.dryRun && !await this.checkProducts(pass)) return
      if (!this.dryRun && await this.copyNew(pass, this.unseen(pass))) {
        counts.inserted += pass.length
        continue
      }
      // The pass is numbered on from the rows staged before it, and the statements take the
      // rows numbered from `first`: the table is emptied every STAGE_ROWS rows, not per pass
      // (a TRUNCATE per pass took about half as long as the pass's merge on a re-run:
      // docs/postgres.md, "Import performance").
      await this.unhold()
      if (this.staged + pass.length > STAGE_ROWS) {
        await this.sql.run(`TRUNCATE ${this.stage}`)
        this.staged = 0
      }
      const first = this.staged
      this.staged += pass.length
      await this.sql.copyFrom(
        `COPY ${this.stage} (n, ${this.columns.join(', ')}) FROM STDIN`,
        pass.map((r, n) => `${first + n}\t${this.lineOf(r) ?? copyLine(r)}`).join('\n') + '\n',
      )
      const [r] = await this.sql.rows<{inserted: number; slow: number[]; stale: number; total: number; upd: number[]; updated?: number}>(this.dryRun ? this.dryCount : this.merge, [first])
      const inserted = int(r.inserted)
      const updated = this.dryRun ? int(r.updated) : r.upd.length > 0 ? await this.sql.run(this.update, [r.upd]) : 0
      const stale = int(r.stale)
      counts.inserted += inserted
      counts.updated += updated
      counts.stale += stale
      counts.unchanged += int(r.total) - inserted - updated - stale - r.slow.length
      for (const n of r.slow) {
        const row = this.full(pass[n - first])
        await this.mergeRow(row, {id: row[this.iId] as string, timestamp: row[this.iTs] as number})
      }
    }
  }

  /**
   * A pass none of whose keys has a record (a first import, or the new part of a resumed one):
   * copied straight into the target, in key order, with no staging table and no merge. The
   * keys are probed first, under the batch's write lock: no other pricectl writer can add one
   * of them before the batch commits (one that bypassed the lock would make the COPY fail on
   * the unique key, never write a wrong row). Tombstones and pending partial updates were
   * dealt with by writeChunk, and keys are unique within a pass, so each row is an insert,
   * as the merge would have made it. False (nothing written) when a key has a record.
   */
  private async copyNew(pass: (readonly unknown[])[], unseen: boolean): Promise<boolean> {
    if (!unseen) {
      const users: unknown[] = []
      const origins: unknown[] = []
      const ids: unknown[] = []
      for (const r of pass) {
        users.push(r[0])
        origins.push(r[1])
        ids.push(r[2])
      }
      await this.unhold()
      const [found] = await this.sql.rows<{found: boolean}>(this.probe, [users, origins, ids])
      if (found.found) return false
    }
    // In key order: the unique index takes its new entries leaf by leaf (about half the server
    // time of file order). A hold dropped the index: no order helps then.
    const sorted = this.rebuild === undefined ? [...pass].sort(byKey) : pass
    const n = this.recordColumns.length
    let text = ''
    for (const r of sorted) text += (this.lineOf(r) ?? copyLine(r.length > n ? r.slice(0, n) : r)) + '\n'
    this.copying ??= this.sql.copyIn(this.copyDirect)
    await (await this.copying).write(text)
    return true
  }

  /** A lean row's COPY line (leanRow); undefined for a row of every value. */
  private lineOf(row: readonly unknown[]): string | undefined {
    return row.length > this.width ? (row[this.width] as string) : undefined
  }

  /** A row with every value: a lean row's parsed from its line. */
  private full(row: readonly unknown[]): readonly unknown[] {
    const line = this.lineOf(row)
    return line === undefined ? row : fullCharge(line)
  }

  /** A charge's COPY line as the writer's row: the cells it reads (LEAN_CHARGE) in their columns' places, the line after them. */
  private leanRow(line: string): unknown[] {
    const lean = leanLine(line)
    const row = new Array<unknown>(this.width + 1)
    for (let i = 0; i < LEAN_AT.length; i++) row[LEAN_AT[i]] = lean[i]
    row[this.width] = line
    return row
  }

  /** End the open COPY, if any (its error is thrown here). */
  private async settle(): Promise<void> {
    const copying = this.copying
    this.copying = undefined
    if (copying) await (await copying).end()
  }

  /**
   * Whether the target surely holds none of the pass's keys, known without asking the server:
   * it holds only records this writer wrote (clean) and none has one of these keys. The keys
   * are remembered either way (written, or about to be, by whichever path takes the pass).
   */
  private unseen(pass: readonly (readonly unknown[])[]): boolean {
    if (!this.clean || this.keys.full) return false
    let unseen = true
    for (const r of pass) if (!this.keys.add(r[0] as string, r[1] as string, r[2] as string)) unseen = false
    return unseen
  }

  /**
   * Begin a hold (see rebuild): drop the target's indexes but its primary key, and let this
   * session take HOLD_IDS ids of the table's identity at a time (one nextval per row took ~10%
   * of the server's COPY); the statements that undo both, as the catalog defines them.
   * Undefined, and nothing done, when the user does not own the table (a role that only
   * writes rows keeps to plain batches).
   */
  private async beginHold(): Promise<string[] | undefined> {
    const [{owner}] = await this.sql.rows<{owner: boolean}>(`SELECT pg_has_role(relowner, 'USAGE') AS owner FROM pg_class WHERE oid = $1::regclass`, [this.table])
    if (!owner) return undefined
    const found = await this.sql.rows<{begin: string; undo: string}>(
      `SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname) AS begin,
              format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) AS undo
         FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype = 'u'
       UNION ALL
       SELECT format('DROP INDEX %s', i.indexrelid::regclass), pg_get_indexdef(i.indexrelid)
         FROM pg_index i WHERE i.indrelid = $1::regclass AND NOT i.indisprimary
           AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid)
       UNION ALL
       SELECT format('ALTER SEQUENCE %s CACHE ${HOLD_IDS}', s.seqrelid::regclass), format('ALTER SEQUENCE %s CACHE %s', s.seqrelid::regclass, s.seqcache)
         FROM pg_sequence s WHERE s.seqrelid = pg_get_serial_sequence($1::regclass::text, 'id')::regclass`,
      [this.table],
    )
    for (const f of found) await this.sql.run(f.begin)
    return found.map((f) => f.undo)
  }

  /**
   * Before a lookup of the target: the open COPY ended, and the indexes a hold dropped built
   * again (see rebuild; the writer holds no more). The batch stays open.
   */
  private async unhold(): Promise<void> {
    await this.settle()
    if (this.rebuild === undefined) return
    this.holds = false
    await this.build()
  }

  /** Build the indexes the hold dropped; the hold ends with its batch's commit. */
  private async build(): Promise<void> {
    const rebuild = this.rebuild ?? []
    this.rebuild = undefined
    for (const make of rebuild) await this.sql.run(make)
  }

  private total(): number {
    const c = this.counts
    return c.inserted + c.updated + c.unchanged + c.stale
  }

  get held(): number {
    return this.rebuild === undefined ? 0 : this.total() - this.heldFrom
  }

  async finish(): Promise<boolean> {
    if (this.rebuild === undefined) return true
    await this.settle()
    await this.build()
    return await this.commit()
  }

  /**
   * Whether another session waits for a lock this one holds (the write lock, the table). From
   * pg_locks, read afresh by each statement (pg_stat_activity is a snapshot per transaction).
   */
  private async waitedOn(): Promise<boolean> {
    const [r] = await this.sql.rows<{waited: boolean}>(
      'SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY (pg_blocking_pids(pid))) AS waited',
    )
    return r.waited
  }

  /** The target's largest id (null: it is empty). */
  private async maxId(): Promise<null | number> {
    const [r] = await this.sql.rows<{id: null | number}>(`SELECT max(id) AS id FROM ${this.table}`)
    return r.id === null ? null : int(r.id)
  }

  /** The row as a values object (column name -> cell). */
  private valuesOf(row: readonly unknown[]): Record<string, unknown> {
    const v: Record<string, unknown> = {}
    this.recordColumns.forEach((c, i) => (v[c] = row[i]))
    return v
  }

  /** The row with newer partial writes merged in (the engine's resolve), at the later of the two latest events. */
  private async merged(row: readonly unknown[], writes: FieldWrites, latest: EventRef): Promise<ValuesOf<RevenueTable>> {
    const values = this.valuesOf(row)
    if (Object.keys(writes).length > 0) {
      if (!this.resolve) throw new Error(`import into ${this.table}: a row meets newer partial updates and the writer was given no resolve`)
      Object.assign(values, await this.resolve(values as never, writes))
    }
    return {...values, latest_event_id: latest.id, latest_event_timestamp: latest.timestamp} as ValuesOf<RevenueTable>
  }

  private fieldOrder(base: EventRef, latest: EventRef, writes: FieldWrites): FieldEvents | null {
    return Object.keys(writes).length === 0 && compareEvents(base, latest) === 0 ? null : {base, fields: writes}
  }

  /** The stored latest event and field order of a row's record; undefined when there is none. */
  private async stored(row: readonly unknown[]): Promise<(EventRef & {fe: FieldEvents | null}) | undefined> {
    await this.unhold()
    const [r] = await this.sql.rows<{field_events: null | string; id: string; timestamp: number}>(
      `SELECT latest_event_timestamp AS timestamp, latest_event_id AS id, field_events FROM ${this.table} WHERE user_id = $1 AND origin = $2 AND origin_id = $3`,
      [row[0], row[1], row[2]],
    )
    return r && {fe: parseFieldEvents(r.field_events), id: r.id, timestamp: int(r.timestamp)}
  }

  /**
   * A row for a key with pending partial updates: when it makes the record, it takes the
   * pending fields newer than it and the pending entry goes. False when the record exists
   * (pending entries only wait for records that do not): the usual path decides.
   */
  private async insertPending(staged: readonly unknown[], event: EventRef, key: string, p: PendingFields): Promise<boolean> {
    const row = this.full(staged)
    if (await this.stored(row) !== undefined) return false
    this.counts.inserted++
    if (this.dryRun) return true
    if (!await this.checkProducts([row])) return true
    const writes = writesNewerThan(p.fields, event)
    const latest = laterEvent(p.latest, event)
    await this.revenue.save(this.table, [await this.merged(row, writes, latest)], [this.fieldOrder(event, latest, writes)])
    if (this.clean) this.keys.add(row[0] as string, row[1] as string, row[2] as string)
    await this.revenue.savePending(this.kind, [[key, null]])
    this.pending.delete(key)
    return true
  }

  /** A row for a record partial updates wrote to: it becomes the base, the writes newer than it stay. */
  private async mergeRow(row: readonly unknown[], event: EventRef): Promise<void> {
    const stored = (await this.stored(row))!
    const verdict = judge(event, stored.fe!.base)
    if (verdict === 'apply') {
      const writes = writesNewerThan(stored.fe!.fields, event)
      const latest = laterEvent({id: stored.id, timestamp: stored.timestamp}, event)
      await this.revenue.save(this.table, [await this.merged(row, writes, latest)], [this.fieldOrder(event, latest, writes)])
    }
    if (verdict === 'apply') this.counts.updated++
    else if (verdict === 'duplicate') this.counts.unchanged++
    else this.counts.stale++
  }

  /** The products of rows not checked in this batch yet still exist; they are locked against deletion until the batch ends. */
  private async checkProducts(rows: readonly (readonly unknown[])[]): Promise<boolean> {
    return await this.checkProductIds(rows.map((r) => r[this.iProduct] as null | number))
  }

  private async checkProductIds(ids: readonly (null | number)[]): Promise<boolean> {
    const fresh = new Set<number>()
    for (const p of ids) if (p !== null && !this.batchProducts.has(p)) fresh.add(p)
    if (fresh.size === 0) return true
    await this.settle()
    const found = await this.sql.rows<{id: number}>('SELECT id FROM products WHERE id = ANY($1::bigint[]) FOR KEY SHARE', [[...fresh]])
    for (const f of found) this.batchProducts.add(int(f.id))
    if (found.length !== fresh.size) this.lost = true
    return !this.lost
  }

  /** Nothing to do: each writeChunk merges its rows before it returns, so `counts` is current. */
  async flush(): Promise<void> {}

  async commit(): Promise<boolean> {
    if (!this.open) return true
    await this.settle()
    if (this.lost) return false
    // After the first batch, one hold goes on until holdRows rows or a waiting session (see rebuild).
    if (this.rebuild !== undefined) {
      if (this.heldFrom > 0 && this.total() < this.holdRows && !await this.waitedOn()) return true
      await this.build()
      if (this.heldFrom > 0) this.holds = false
    }
    // What the next batch compares the target's largest id with (see clean).
    if (this.clean) this.lastId = await this.maxId()
    await this.sql.commit()
    this.open = false
    this.batchProducts.clear()
    return true
  }

  externalStages(readers = 1): readonly string[] {
    if (this.external) throw new Error('import writer: external stages were made already')
    this.lean = this.table === 'charges' && !this.dryRun
    const {dir, paths} = makeStageFiles(this.lean ? PACKED : this.columns, 2 * readers)
    this.external = {dir, stages: []}
    try {
      for (const path of paths) {
        this.external.stages.push(new StageReader(path))
      }
    } catch (error) {
      this.dropExternal()
      throw error
    }
    return paths
  }

  /** A stage's rows through writeChunk, STAGE_PAGE_ROWS at a time in file order (each page's COPY and merge), then COMMIT. A charges stage's page is one stage row (PACKED). */
  async commitStaged(batch: StagedBatch): Promise<boolean> {
    const stage = this.external?.stages[batch.stage]
    if (stage === undefined) throw new Error(`import writer: no external stage ${batch.stage}`)
    if (this.open && this.rebuild === undefined) throw new Error('import writer: commitStaged() while a batch is open')
    if (batch.rows === 0) return true
    if (this.lean) {
      for (const [[text, keys]] of stage.pages(PACKED, 1)) {
        if (await this.copyPacked(text as Buffer, keys as Buffer, batch.products)) continue
        const lines = (text as Buffer).toString('utf8').split('\n')
        lines.pop()
        await this.writeChunk(lines.map((line) => this.leanRow(line)))
      }
    }
    else for (const rows of stage.pages(this.columns, STAGE_PAGE_ROWS)) await this.writeChunk(rows)
    return await this.commit()
  }

  private dropExternal(): void {
    const e = this.external
    if (e === undefined) return
    this.external = undefined
    for (const stage of e.stages) {
      try {
        stage.close()
      } catch {}
    }
    removeStageFiles(e.dir)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    try {
      // A COPY in flight failed or not, the batch is rolled back.
      await this.settle().catch(() => {})
      if (this.open) await this.sql.rollback()
      this.open = false
      await this.sql.run(`DROP TABLE IF EXISTS ${this.stage}`)
    } finally {
      this.dropExternal()
    }
  }
}
