import type {StorePort} from '../port.js'
import type {CatalogRepository} from '../port/catalog.js'
import type {ConfigRepository} from '../port/config.js'
import type {ExperimentsRepository} from '../port/experiments.js'
import type {HistoryRepository} from '../port/history.js'
import type {ImportsRepository} from '../port/imports.js'
import type {KeysRepository} from '../port/keys.js'
import type {PricingRepository} from '../port/pricing.js'
import type {RevenueRepository} from '../port/revenue.js'
import type {SegmentsRepository} from '../port/segments.js'
import {isBusyCode} from '../busy.js'
import {TxGate} from '../tx-gate.js'
import {RECORDED_TABLES} from '../schema/history.js'
import {type PgClient, type PgConn, PgError, type Row, redactUrl, type Statement, type StatementKind} from './client.js'
import {PgCatalog} from './catalog.js'
import {PgConfig} from './config.js'
import {PgExperiments} from './experiments.js'
import {PgHistory} from './history.js'
import {PgImports} from './imports.js'
import {PgKeys} from './keys.js'
import {PgPricing} from './pricing.js'
import {PgRevenue} from './revenue.js'
import {PgSegments} from './segments.js'
import {type Sql, sqlOf} from './support.js'
import {PgTables} from './tables.js'
import {NOTIFY_VERSION, VersionWatch} from './version-watch.js'

/**
 * The commit of a write transaction: pricectl_data_version moves only when the transaction
 * changed the catalog or the configuration (a table the history records, ../schema/history.ts),
 * changed or deleted a lock (servers remember the lock rows they read, PgPricing.remembered),
 * or emptied tables (db restore, db copy: TRUNCATE counts no rows), so new locks, revenue and
 * import writes do not make the other instances rebuild their pricing context. One round
 * trip: the rows the catalog tables' counters (pg_stat_xact_user_tables) gained since the
 * transaction began. Their value alone is not the transaction's: they also hold what earlier
 * transactions of the session counted and the server has not flushed yet (a store's opening
 * that migrated and seeded it, a moment before).
 */
const CATALOG_TABLES = `ARRAY[${RECORDED_TABLES.map((t) => `'${t.table}'`).join(', ')}, 'locks']::name[]`
// Of the locks, rows changed or deleted: a new lock changes nothing another instance remembers (PgPricing.remembered).
const CATALOG_ROWS = `SELECT coalesce(sum(CASE relname WHEN 'locks' THEN n_tup_upd + n_tup_del ELSE n_tup_ins + n_tup_upd + n_tup_del END), 0)::bigint AS n
  FROM pg_stat_xact_user_tables WHERE schemaname = current_schema() AND relname = ANY(${CATALOG_TABLES})`
const commitSql = (truncated: boolean, base: number) =>
  `UPDATE pricectl_data_version SET version = version + 1 WHERE id = 1 AND pg_current_xact_id_if_assigned() IS NOT NULL AND (${truncated} OR (${CATALOG_ROWS}) > ${base})
   RETURNING version, ${NOTIFY_VERSION('version::text')}; COMMIT`

/**
 * BEGIN and the store's write lock, a transaction-scoped advisory lock of class 0x70637772
 * ("pcwr") and the schema's hash, so stores in different schemas do not block each other;
 * then the catalog rows counted so far (commitSql).
 */
const BEGIN_WRITE = `BEGIN; SELECT pg_advisory_xact_lock(1885566834, hashtext(current_schema())); ${CATALOG_ROWS}`
/** The same, only tried: `got` is false when another transaction holds it. */
const BEGIN_TRY_WRITE = `BEGIN; SELECT pg_try_advisory_xact_lock(1885566834, hashtext(current_schema())) AS got; ${CATALOG_ROWS}`

/**
 * Thrown inside a lock-writing transaction that needs more than new locks (a lock that
 * changes, an exposure, any other write): the store rolls it back and runs it again as a
 * write transaction.
 */
class NeedsWriteLock extends Error {
  /** Busy's code (serialization failure): a caller that retries busy work per item passes it on whole. */
  readonly code = '40001'
  constructor(why: string) {
    super(`a lock-writing transaction needs the store's write lock: ${why}`)
  }
}

/**
 * Thrown when a claim of new locks lost to another writer's lock, committed before the claim
 * (after this transaction's read of the key, or before a claim made without one): the
 * transaction rolls back, and one that may run again (locksOnly) does, re-reading the lock
 * that won; a plain write transaction fails busy, as on a serialization failure.
 */
export class LostClaim extends Error {
  readonly code = '40001'
  constructor(readonly keys: readonly string[]) {
    super(`another writer made the lock of ${keys.slice(0, 3).join(', ')}${keys.length > 3 ? ', ...' : ''} first: try again`)
  }
}

/**
 * Thrown in a lock-writing run that claims keys it did not read (PgStore.claimBlind) when its
 * claims cannot be its lone statement: it runs again reading first. `pause`: what made it so
 * (another write, a statement after the claims) may come again, and the next BLIND_PAUSE runs
 * read first.
 */
class ReadFirst extends Error {
  constructor(readonly pause: boolean) {
    super('a lock-writing run that claimed keys it did not read must send its claims alone: it runs again reading first')
  }
}

/** Lock-writing runs that read first after one that claimed blind could not send its claims alone (a store with running experiments). */
const BLIND_PAUSE = 1000

/**
 * A lock-writing transaction's claims (PgPricing) in two forms: `text` as sent with its other
 * statements, a plain INSERT that fails on a key made meanwhile (lostClaimOf) and takes the
 * transaction with it; `alone` as its lone statement, the commit itself, ON CONFLICT DO NOTHING
 * RETURNING the keys of the locks it made, which are committed whatever the others did: the keys
 * it did not make lost (LostClaim), and PostgreSQL logs no error for them. `won` gets the rows
 * of the keys made (`[lock_key]` each).
 */
export type ClaimStatement = Statement & {alone: Statement; keys: readonly string[]; won(rows: unknown[][]): void}

/**
 * A lock-writing transaction's claims sent with other statements go as a plain INSERT
 * (ClaimStatement.text): one whose key was made meanwhile fails on the primary key, which rolls
 * the transaction back, and it runs again as after a lost claim (LostClaim; the error names the
 * first such key).
 */
function lostClaimOf(error: unknown): LostClaim | undefined {
  const e = error as {code?: string; constraint?: string; detail?: string}
  if (e?.code !== '23505' || e.constraint !== 'locks_pkey') return undefined
  const m = /^Key \(lock_key\)=\(([\s\S]*)\) already exists\.?$/.exec(e.detail ?? '')
  return new LostClaim(m ? [m[1]] : [])
}

/**
 * How many runs in a row a lock-writing transaction may lose claims of keys it already lost
 * before it fails busy. A run that loses a key not lost before made progress and always runs
 * again: it finds the winners' locks stored and reuses them, and a lock, once made, stays, so
 * a transaction runs at most once per key it claims. A batch group of thousands of new users
 * that servers are pricing at the same time may lose dozens of runs that way, each to new keys.
 */
const LOST_CLAIM_RUNS = 20

/**
 * Whether a statement only reads (what a lock-writing transaction may run besides its
 * claims): a SELECT, or a WITH that names no writing command (one that only seems to, a
 * word in a literal, costs a rerun, never a write).
 */
const READS = /^\s*(?:SELECT\b|WITH\b(?![\s\S]*\b(?:INSERT|UPDATE|DELETE|MERGE)\b))/i
/**
 * One savepoint name at every depth: PostgreSQL keeps nested savepoints of the same name,
 * and ROLLBACK TO / RELEASE take the innermost, which is the one a nested call made.
 */
const SAVEPOINT = 'SAVEPOINT pricectl_nested'

/**
 * A slot of the pool: its two connections (made by their first statements) and the state of
 * the transaction open on them. A transaction finds its slot by its async context (TxGate).
 */
class Lane {
  /** The kind of the open top-level transaction. */
  mode: 'locks' | 'read' | 'write' = 'read'
  /**
   * In a writing transaction: lock keys read as absent (a lock saved for one is a claim,
   * INSERT ... ON CONFLICT DO NOTHING: another writer may make it meanwhile), and those claimed.
   */
  readonly absent = new Set<string>()
  readonly claimed = new Set<string>()
  /** The open write transaction emptied tables (TRUNCATE): its commit moves the catalog version. */
  truncated = false
  /**
   * What the open transaction owes the server (a read or lock-writing transaction begins
   * lazily): its BEGIN (`tried`: with a tried lock whose answer decides busy), and writes
   * deferred to its commit; send() sends them with the next statement, in one round trip.
   */
  owed?: {base: boolean; count: number; sql: string; tried: boolean}
  /** The catalog rows counted when the open write transaction began (commitSql). */
  catalogBase = 0
  deferred: Statement[] = []
  /** The claims of new locks it deferred last (PgPricing), which its users' countries and later claims may join. */
  claim?: ClaimStatement
  /** This run may claim keys without reading them (the server's first run of a lock-writing transaction). */
  mayBeBlind = false
  /** This run claimed keys it did not read: its claims must be its lone statement (ReadFirst). */
  blind = false
  /** The client of the open transaction: `locks` for a lock-writing one, else `raw`. */
  conn: PgClient
  depth = 0

  constructor(
    /** The client of read and write transactions. */
    readonly raw: PgClient,
    /**
     * The client of lock-writing transactions, pipelined: their reads alone until they have
     * writes, a lone write as the commit itself (no BEGIN), each statement with its parameters.
     */
    readonly locks: PgClient,
  ) {
    this.conn = raw
  }
}

/**
 * The PostgreSQL adapter: the port over a pool of connections (client.ts; docs/postgres.md,
 * "The connection"), opened by their first statements. It loads no
 * migrations (./open.ts does), so a reader store stays light. Its transactions mean what
 * SQLite's do (docs/postgres.md, "Transactions and locks"): writers take an advisory write
 * lock before reading; `locksOnly` takes none (new locks are claimed by their unique key) and
 * throws NeedsWriteLock to be rerun with it when it must write more than new locks.
 */
export class PgStore implements StorePort {
  readonly kind = 'postgres'
  /** The URL for messages (password left out). */
  readonly path: string
  /**
   * The connection as the repositories use it: the client itself, except that inside a
   * lock-writing transaction a statement that is not a read stops the attempt (NeedsWriteLock).
   */
  readonly pg: PgConn
  /** The pool's slots, one transaction each at a time (the gate's slots). */
  private readonly lanes: Lane[]
  private readonly gate: TxGate
  private ownCommits = 0
  private lockWait = true
  private repos = new Map<string, unknown>()
  /** Lock-writing transactions run again as write transactions (for tests and the curious). */
  lockWriteRetries = 0
  /** Transactions run again because a claim of a new lock lost (for tests and the curious). */
  lostClaimRetries = 0
  /** Lock-writing runs that claimed blind and ran again reading first (ReadFirst; for tests and the curious). */
  readFirstRetries = 0
  /** Lock-writing runs left that read first (BLIND_PAUSE). */
  private blindPause = 0

  constructor(
    /** The pool: per slot, the client of read and write transactions and the pipelined one of lock-writing transactions. */
    pool: readonly {locks: PgClient; raw: PgClient}[],
    /** The client of statements outside any transaction (they never run inside another request's). */
    readonly bare: PgClient,
    /** The client of the server's per-request reads outside a transaction (lookup()), pipelined. */
    private readonly reads: PgClient,
    /** The URL as given (password included): what opens this store again. */
    readonly location: string,
    readonly readOnly?: string,
  ) {
    this.path = redactUrl(location)
    this.lanes = pool.map((p) => new Lane(p.raw, p.locks))
    this.gate = new TxGate(this.lanes.length)
    this.pg = this.guarded(bare)
  }

  /** How many transactions may be open at once (`serve --pool-size`). */
  get poolSize(): number {
    return this.lanes.length
  }

  /**
   * The slot of the caller's transaction: the one whose body it runs inside, else the first
   * (where the import's batch is left open outside any body).
   */
  private get lane(): Lane {
    return this.lanes[this.gate.slot() ?? 0]
  }

  /** The client of the caller's read or write transaction (the first slot's outside any). */
  get raw(): PgClient {
    return this.lane.raw
  }

  private get clients(): PgClient[] {
    return [this.bare, this.reads, ...this.lanes.flatMap((l) => [l.raw, l.locks])]
  }

  /** In a writing transaction: lock keys read as absent (see Lane.absent). */
  get absent(): Set<string> {
    return this.lane.absent
  }

  /** In a writing transaction: lock keys it claimed. */
  get claimed(): Set<string> {
    return this.lane.claimed
  }

  /** In a lock-writing transaction: the claims of new locks it deferred last (PgPricing), which its users' countries and later claims may join. */
  get claim(): ClaimStatement | undefined {
    return this.lane.claim
  }

  set claim(statement: ClaimStatement | undefined) {
    this.lane.claim = statement
  }

  /**
   * Whether this lock-writing run may claim the keys it does not remember without reading them
   * (claimBlind): the first run of a lock-writing transaction, unless a recent one could not
   * send its claims alone (BLIND_PAUSE). Whether it pays is the repository's call (PgPricing).
   */
  get mayClaimBlind(): boolean {
    const t = this.lane
    return this.writingLocks && t.mayBeBlind
  }

  /**
   * This run claims keys it did not read: its claims go as its lone statement (ON CONFLICT DO
   * NOTHING, ClaimStatement.alone), or it runs again reading first. One round trip for a group
   * of new users; a key whose lock exists costs a rerun.
   */
  claimBlind(): void {
    this.lane.blind = true
  }

  /** Stop a run that claimed blind: it runs again reading first (a key it claimed itself was asked for again). */
  readFirst(): never {
    throw new ReadFirst(false)
  }

  /** Inside a lock-writing transaction, where claimed locks may be written without the exclusive write lock. */
  get writingLocks(): boolean {
    const t = this.lane
    return t.depth > 0 && t.mode === 'locks'
  }

  /** Inside a transaction that writes (lock-writing or write): saving a lock read as absent is a claim. */
  get claiming(): boolean {
    const t = this.lane
    return t.depth > 0 && t.mode !== 'read'
  }

  /** A claim lost to another writer's lock: the transaction rolls back (and runs again when it may). */
  lostClaim(keys: readonly string[]): never {
    throw new LostClaim(keys)
  }

  /** Stop a lock-writing attempt: the transaction runs again as a write transaction. */
  needsWriteLock(why: string): never {
    throw new NeedsWriteLock(why)
  }

  /** Whether the caller runs inside the open transaction (its body's, or the import's batch left open outside any body). */
  get inside(): boolean {
    return this.open !== undefined
  }

  /** The slot of the transaction the caller runs inside (inside), if any. */
  private get open(): Lane | undefined {
    const slot = this.gate.slot()
    const t = this.lanes[slot ?? 0]
    return t.depth > 0 && (slot !== undefined || !this.gate.busy(0)) ? t : undefined
  }

  private guarded(bare: PgClient): PgConn {
    // A statement of the open transaction (its body's, or the import's batch left open outside
    // any body) goes to its connection; any other to the second one, so that it never runs
    // inside another request's transaction, nor waits for it.
    const inTx = () => this.open
    const check = async (t: Lane, sql: string) => {
      if (t.mode === 'locks' && !READS.test(sql)) this.needsWriteLock(sql.trim().slice(0, 60))
      if (this.owesBeforeRead) await this.send()
    }
    return {
      copyFrom: async (sql: string, data: Buffer | string) => {
        const t = inTx()
        if (!t) return await bare.copyFrom(sql, data)
        await check(t, 'COPY')
        return await t.conn.copyFrom(sql, data)
      },
      copyIn: async (sql: string) => {
        const t = inTx()
        if (!t) return await bare.copyIn(sql)
        await check(t, 'COPY')
        return await t.conn.copyIn(sql)
      },
      exec: async (sql: string, kind?: StatementKind): Promise<Row[][]> => {
        const t = inTx()
        if (!t) return await bare.exec(sql, kind)
        if (t.mode === 'locks' && !READS.test(sql)) this.needsWriteLock(sql.trim().slice(0, 60))
        if (/\bTRUNCATE\b/i.test(sql)) t.truncated = true
        return (await this.send(sql, kind)) as Row[][]
      },
      query: async <R = Row>(sql: string, params?: readonly unknown[]): Promise<R[]> => {
        const t = inTx()
        if (!t) return await bare.query<R>(sql, params)
        await check(t, sql)
        return await t.conn.query<R>(sql, params)
      },
      queryArrays: async <R extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): Promise<R[]> => {
        const t = inTx()
        if (!t) return await bare.queryArrays<R>(sql, params)
        await check(t, sql)
        return await t.conn.queryArrays<R>(sql, params)
      },
      run: async (sql: string, params?: readonly unknown[]): Promise<number> => {
        const t = inTx()
        if (!t) return await bare.run(sql, params)
        await check(t, sql)
        return await t.conn.run(sql, params)
      },
    }
  }

  /**
   * A read by key (rows as arrays): inside the caller's transaction when it has one, else on
   * the pipelined connection, where the requests of a server send their reads without waiting
   * for each other's answers (each its own statement and snapshot). For the per-request reads
   * of `serve` (a lock, an API key, the version); it holds no session state, so statements
   * that need one (a temporary table, COPY) go through `pg`. `outside`: a read the open
   * transaction leaves out (the first of one not begun yet, unbegunRead).
   */
  async lookup<R extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[], outside = false): Promise<R[]> {
    return this.inside && !outside ? await this.pg.queryArrays<R>(sql, params) : await this.reads.queryArrays<R>(sql, params)
  }

  /** A session setting, kept across reconnects (client.ts set()). */
  async set(name: string, value: null | string): Promise<void> {
    if (this.owes) await this.send()
    for (const c of this.clients) await c.set(name, value)
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.map(async (c) => await c.close()), this.watch?.close()])
  }

  async transaction<T>(fn: (tx: StorePort) => Promise<T> | T, options?: {locksOnly?: boolean; write?: boolean}): Promise<T> {
    // Inside a body (or the import's open batch): a savepoint of its transaction.
    if (this.inside) return this.savepoint(fn)
    return this.gate.run(async () => {
      if (options?.write === true && options.locksOnly === true && !this.readOnly) {
        // Without the write lock; a lost claim runs again so (its read finds the lock that won),
        // what needs more than new locks runs again with the write lock.
        let mode: 'locks' | 'write' = 'locks'
        const lostKeys = new Set<string>()
        let blind = this.blindPause === 0
        if (!blind) this.blindPause--
        for (let stalled = 0; ; ) {
          try {
            return await this.run(fn, mode, this.lockWait, blind)
          } catch (error) {
            const wasBlind = blind
            blind = false
            if (error instanceof ReadFirst && wasBlind) {
              this.readFirstRetries++
              if (error.pause) this.blindPause = BLIND_PAUSE
            } else if (error instanceof NeedsWriteLock && mode === 'locks') {
              this.lockWriteRetries++
              mode = 'write'
            } else if (error instanceof LostClaim) {
              const before = lostKeys.size
              for (const key of error.keys) lostKeys.add(key)
              stalled = lostKeys.size > before ? 0 : stalled + 1
              if (stalled >= LOST_CLAIM_RUNS) throw error
              this.lostClaimRetries++
            } else throw error
          }
        }
      }
      return this.run(fn, options?.write === true ? 'write' : 'read', this.lockWait)
    })
  }

  /**
   * A write transaction left open across calls (the import writer's batch, which commits
   * every N rows): the write lock as transaction({write: true}) takes it; commitOpen() or
   * rollbackOpen() ends it. Transactions run meanwhile join it (savepoints).
   */
  async beginOpen(): Promise<void> {
    const t = this.lane
    if (t.depth > 0) throw new Error('a batch cannot begin inside another transaction')
    await this.begin('write', this.lockWait)
    t.depth = 1
  }

  async commitOpen(): Promise<void> {
    this.lane.depth = 0
    await this.commit()
  }

  async rollbackOpen(): Promise<void> {
    this.lane.depth = 0
    await this.rollbackQuietly()
  }

  /**
   * BEGIN, with the write lock for a write transaction (a lock-writing one takes none: READ
   * COMMITTED, claims by the unique key); a failure (busy, lock_timeout) leaves no transaction open.
   */
  private async begin(mode: 'locks' | 'read' | 'write', wait: boolean, blind = false): Promise<void> {
    const t = this.lane
    if (this.readOnly) mode = 'read'
    t.mode = mode
    t.mayBeBlind = blind && mode === 'locks'
    t.blind = false
    t.truncated = false
    t.absent.clear()
    t.claimed.clear()
    t.claim = undefined
    t.deferred = []
    const sql =
      mode === 'read'
        ? this.readOnly
          ? 'BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ'
          : 'BEGIN ISOLATION LEVEL REPEATABLE READ'
        : mode === 'locks'
          ? 'BEGIN'
          : wait
            ? BEGIN_WRITE
            : BEGIN_TRY_WRITE
    t.catalogBase = 0
    t.conn = mode === 'locks' ? t.locks : t.raw
    t.owed = {base: mode === 'write', count: sql.split(';').length, sql, tried: mode === 'write' && !wait}
    // A write transaction takes its lock now (what tryWrite and the busy tests expect); the
    // others begin with their first statement (one round trip less), a lock-writing one with
    // its first write sent (owesBeforeRead), or never when that write is its only one (commit()).
    if (mode === 'write') await this.send()
  }

  /** Whether the open transaction owes the server its BEGIN or deferred writes. */
  get owes(): boolean {
    const t = this.lane
    return t.owed !== undefined || t.deferred.length > 0
  }

  /**
   * Whether a read must be sent after what the transaction owes. A lock-writing transaction
   * (READ COMMITTED: each statement reads what was committed when it starts, in a transaction
   * or not) reads alone until it has writes to send: they go with its next read, which must
   * see them, or with its commit (commit()).
   */
  private get owesBeforeRead(): boolean {
    const t = this.lane
    return t.deferred.length > 0 || (t.owed !== undefined && t.mode !== 'locks')
  }

  /** A read of the open transaction, rows as arrays: after what it owes (owesBeforeRead), in one round trip. */
  async read(statement: Statement): Promise<unknown[][]> {
    const t = this.lane
    if (this.owesBeforeRead) return await this.send(statement)
    return (await t.conn.batch([statement])) as unknown[][]
  }

  /**
   * Replace a deferred write not sent yet (false when it was sent): a repository folds the
   * next write of its transaction into it (PgPricing: a chunk's claims and users' countries, one statement).
   */
  replaceDeferred(statement: Statement, by: Statement): boolean {
    const t = this.lane
    const i = t.deferred.indexOf(statement)
    if (i < 0) return false
    t.deferred[i] = by
    return true
  }

  /**
   * Run `then` after what the transaction owes (its BEGIN, deferred writes), in one round trip;
   * the rows of `then`'s statements. A BEGIN that fails, or whose tried lock is taken (busy,
   * 55P03), leaves no transaction open. Statements with values need the pipelined client of a
   * lock-writing transaction; a claim that loses there (the key's lock was made meanwhile)
   * fails the transaction as LostClaim.
   */
  async send(then?: Statement | string, kind?: StatementKind): Promise<unknown[][]> {
    const t = this.lane
    // Claims made blind are sent alone, as the commit (commit()).
    if (t.blind && t.deferred.length > 0) throw new ReadFirst(true)
    const owed = t.owed
    const deferred = t.deferred
    const last: Statement[] = then === undefined ? [] : [typeof then === 'string' ? {text: then} : then]
    if (!owed && deferred.length === 0) return last.length === 0 ? [] : await t.conn.batch(last, kind)
    t.owed = undefined
    t.deferred = []
    const parts: Statement[] = [...(owed ? [{text: owed.sql}] : []), ...deferred, ...last]
    let results: unknown[][]
    try {
      // The BEGIN alone (a write transaction's, which takes its lock at once) is a begin.
      results = await t.conn.batch(parts, kind ?? (owed && parts.length === 1 ? 'begin' : undefined))
    } catch (error) {
      if (owed) await this.rollbackQuietly()
      throw lostClaimOf(error) ?? error
    }
    if (owed?.base) t.catalogBase = Number((results[owed.count - 1][0] as Row | undefined)?.n ?? 0)
    if (owed?.tried && (results[1][0] as Row | undefined)?.got !== true) {
      await this.rollbackQuietly()
      throw new PgError({code: '55P03', message: `the store ${this.path} is busy: another process holds its write lock`})
    }
    return then === undefined ? [] : results.slice((owed?.count ?? 0) + deferred.length)
  }

  /**
   * In a read transaction that has not begun yet: run one statement on its own, outside it
   * (its own snapshot), and let the transaction begin with the next statement, if any. A
   * locked user's price reads only its lock: no BEGIN and COMMIT round trips.
   */
  get unbegunRead(): boolean {
    const t = this.lane
    return t.depth > 0 && t.mode === 'read' && t.owed !== undefined && t.deferred.length === 0
  }

  /**
   * A write sent with the next statement of the transaction, or its commit. With values only in
   * a lock-writing transaction (its client is pipelined).
   */
  defer(statement: Statement): void {
    this.lane.deferred.push(statement)
  }

  private async rollbackQuietly(): Promise<void> {
    const t = this.lane
    // A transaction that never began has nothing to roll back.
    if (t.owed) {
      t.owed = undefined
      t.deferred = []
      return
    }
    t.deferred = []
    try {
      await t.conn.exec('ROLLBACK', 'rollback')
    } catch {}
  }

  private async run<T>(fn: (tx: StorePort) => Promise<T> | T, mode: 'locks' | 'read' | 'write', wait: boolean, blind = false): Promise<T> {
    const t = this.lane
    await this.begin(mode, wait, blind)
    t.depth = 1
    let result: T
    try {
      result = await fn(this)
    } catch (error) {
      t.depth = 0
      await this.rollbackQuietly()
      throw error
    }
    t.depth = 0
    await this.commit()
    return result
  }

  private async commit(): Promise<void> {
    const t = this.lane
    // A transaction that never began: nothing to commit.
    if (t.owed && t.deferred.length === 0) {
      t.owed = undefined
      return
    }
    // A lock-writing transaction that never began, with one write (a chunk's claims and users'
    // countries): that statement alone, atomic by itself, no BEGIN and COMMIT; claims as
    // ClaimStatement.alone, each lock and its user's country made or left to the lock that won.
    if (t.mode === 'locks' && t.owed && t.deferred.length === 1) {
      const [write] = t.deferred
      const claim = write === t.claim ? t.claim : undefined
      t.owed = undefined
      t.deferred = []
      let rows: unknown[][]
      try {
        rows = (await t.conn.batch([claim?.alone ?? write], 'commit'))[0] as unknown[][]
      } catch (error) {
        throw lostClaimOf(error) ?? error
      }
      if (claim) {
        claim.won(rows)
        if (rows.length < claim.keys.length) {
          const made = new Set(rows.map((r) => r[0]))
          throw new LostClaim(claim.keys.filter((k) => !made.has(k)))
        }
      }
      return
    }
    // A lock-writing transaction (locks and user countries only) or a read-only store: a plain COMMIT.
    if (t.mode === 'locks' || this.readOnly) {
      try {
        await this.send('COMMIT', 'commit')
      } catch (error) {
        await this.rollbackQuietly()
        throw error
      }
      return
    }
    // One round trip: the counter moves only when the transaction changed the catalog or configuration.
    let moved: unknown[]
    try {
      ;[moved] = await this.send(commitSql(t.truncated, t.catalogBase), 'commit')
    } catch (error) {
      await this.rollbackQuietly()
      throw error
    }
    if (moved.length > 0) this.ownCommits++
  }

  private async savepoint<T>(fn: (tx: StorePort) => Promise<T> | T): Promise<T> {
    const t = this.lane
    await this.send(SAVEPOINT)
    t.depth++
    const claims = t.claimed.size
    try {
      const result = await fn(this)
      await this.send('RELEASE SAVEPOINT pricectl_nested')
      return result
    } catch (error) {
      if (error instanceof NeedsWriteLock) throw error // the whole transaction runs again
      t.deferred = [] // writes deferred inside the savepoint go with it
      // Locks claimed inside it are absent again: saved later in this transaction, they are claimed anew.
      if (t.claimed.size > claims) {
        for (const key of [...t.claimed].slice(claims)) {
          t.claimed.delete(key)
          t.absent.add(key)
        }
      }
      try {
        await t.conn.exec('ROLLBACK TO SAVEPOINT pricectl_nested; RELEASE SAVEPOINT pricectl_nested')
      } catch {}
      throw error
    } finally {
      t.depth--
    }
  }

  /** Whether a transaction is open on this store's connection. */
  get inTransaction(): boolean {
    const t = this.lane
    return t.depth > 0
  }

  /**
   * The catalog version as other connections moved it (commits through this store do not
   * count): the pricing repository's catalogVersion(). From the watch while it follows the
   * notifications (never inside a transaction, which reads its own), else read.
   */
  async dataVersion(): Promise<number> {
    const watched = this.inside ? undefined : this.watch?.current()
    return (watched ?? (await this.readVersion())) - this.ownCommits
  }

  /**
   * Keep dataVersion() current by notifications (version-watch.ts) instead of a read per call:
   * a long-lived process (the server) calls it once.
   */
  followVersion(): void {
    this.watch ??= new VersionWatch(this.location, async () => await this.readVersion())
    this.watch.start()
  }

  private watch?: VersionWatch

  /** Whether dataVersion() comes from the watch's notifications now (followVersion()). */
  get following(): boolean {
    return this.watch?.current() !== undefined
  }

  private async readVersion(): Promise<number> {
    const [row] = await this.lookup<[number]>('SELECT version FROM pricectl_data_version WHERE id = 1')
    return row?.[0] ?? 0
  }

  /**
   * How long a write transaction waits for the write lock (and any statement for a row
   * lock), in ms; 0: fail busy at once (55P03), as the server wants.
   */
  setBusyTimeout(ms: number): void {
    const timeout = Math.max(0, Math.floor(ms))
    this.lockWait = timeout > 0
    // lock_timeout 0 means "wait forever" in PostgreSQL: 1 ms is the nearest to "fail at once".
    // Made before any later statement of this connection (pg sends in order), and on every new one.
    for (const c of this.clients) c.set('lock_timeout', String(Math.max(1, timeout))).catch(() => {})
  }

  /** A read that proves the store answers (the server's health check), with its schema version. */
  async health(): Promise<{schemaVersion: number}> {
    const [row] = await this.pg.query<{v: string}>(`SELECT value AS v FROM pricectl_meta WHERE key = 'schema_version'`)
    return {schemaVersion: Number(row?.v ?? 0)}
  }

  /** The connection as the repositories of ./support.ts use it. */
  private get sql(): Sql {
    return this.repo('sql', () => sqlOf(this))
  }

  private repo<R>(name: string, make: () => R): R {
    let r = this.repos.get(name) as R | undefined
    if (r === undefined) {
      r = make()
      this.repos.set(name, r)
    }
    return r
  }

  get catalog(): CatalogRepository {
    return this.repo('catalog', () => new PgCatalog(this.sql))
  }

  get config(): ConfigRepository {
    return this.repo('config', () => new PgConfig(this))
  }

  get experiments(): ExperimentsRepository {
    return this.repo('experiments', () => new PgExperiments(this.sql, this))
  }

  get history(): HistoryRepository {
    return this.repo('history', () => new PgHistory(this.sql))
  }

  get imports(): ImportsRepository {
    return this.repo('imports', () => new PgImports(this.sql, this.revenue))
  }

  get keys(): KeysRepository {
    return this.repo('keys', () => new PgKeys(this))
  }

  get pricing(): PricingRepository {
    return this.repo('pricing', () => new PgPricing(this))
  }

  get revenue(): PgRevenue {
    return this.repo('revenue', () => new PgRevenue(this.sql))
  }

  get segments(): SegmentsRepository {
    return this.repo('segments', () => new PgSegments(this.sql))
  }

  get tables(): PgTables {
    return this.repo('tables', () => new PgTables(this.pg, this))
  }
}
