import type {Statement} from 'better-sqlite3'

import type {ProductRow} from '../../catalog/lookup.js'
import type {User} from '../../catalog/users.js'
import {type Lock, packedQuote, packQuote} from '../../pricing/locks.js'
import type {DB} from '../db.js'
import type {Exposure, ExposureChange} from '../port/experiments.js'
import {WriteBehindAbort} from '../port/errors.js'
import type {IntegrationMatch, PricingProduct, PricingRepository, UserCountry, WriteBehind} from '../port/pricing.js'
import {RememberedLocks} from '../remembered-locks.js'
import {lockFromRow, type LockRow} from '../rows.js'
import {Checkpointer} from './checkpointer.js'
import {INSERT_EXPOSURE_SQL, insertExposuresSql, REASSIGN_EXPOSURE_SQL} from './experiments.js'
import {type WriteBehindLink, WriteBehindWriter} from './write-behind.js'
import type {WriterSql} from './write-behind-thread.js'

const COLUMNS = 'lock_key, user_id, ip, anonymous, country, currency, package_id, experiment_id, arm_id, quote_json, created_at, updated_at'

/**
 * Rows per multi-row upsert of locks and users: a batch writes one lock and one user per
 * request, and one statement per row paid better-sqlite3's call and its result object per
 * row (docs/performance.md "Batch pricing").
 */
const ROWS = 32
/**
 * Locks a bulk run writes in its own transactions before its WAL checkpoints move to a
 * second thread (a small batch starts no thread; a batch with write-behind, which
 * checkpoints itself, reaches it only when write-behind ended early).
 */
const BULK_CHECKPOINT_ROWS = 10_000
/** Rows of one kind gathered before write-behind hands them to its writer. */
const ROWS_PER_MESSAGE = 256
const LOCK_PARAMS = 12
const USER_PARAMS = 4

/** Positional parameters: binding named ones costs more. */
function upsertLocksSql(rows: number): string {
  const row = `(${new Array(LOCK_PARAMS).fill('?').join(', ')})`
  return `INSERT INTO locks (lock_key, user_id, ip, anonymous, country, currency, package_id, experiment_id, arm_id, quote_json, created_at, updated_at)
    VALUES ${new Array(rows).fill(row).join(', ')}
    ON CONFLICT (lock_key) DO UPDATE SET user_id = excluded.user_id, ip = excluded.ip, anonymous = excluded.anonymous, country = excluded.country,
      currency = excluded.currency, package_id = excluded.package_id, experiment_id = excluded.experiment_id, arm_id = excluded.arm_id,
      quote_json = excluded.quote_json, updated_at = excluded.updated_at`
}

function upsertUsersSql(rows: number): string {
  return `INSERT INTO users (user_id, country, created_at, updated_at) VALUES ${new Array(rows).fill('(?, ?, ?, ?)').join(', ')}
    ON CONFLICT (user_id) DO UPDATE SET country = excluded.country, updated_at = excluded.updated_at WHERE users.country IS NOT excluded.country`
}

/** The statements write-behind's writer runs, `rows` rows to a multi-row statement (write-behind-thread.ts). */
export function writerSql(rows: number): WriterSql {
  return {
    exposure: INSERT_EXPOSURE_SQL,
    exposures: insertExposuresSql(rows),
    lock: upsertLocksSql(1),
    locks: upsertLocksSql(rows),
    reassign: REASSIGN_EXPOSURE_SQL,
    rows,
    user: upsertUsersSql(1),
    users: upsertUsersSql(rows),
  }
}

function setLockArgs(l: Lock, args: unknown[], at: number): void {
  args[at] = l.lock_key
  args[at + 1] = l.user_id
  args[at + 2] = l.ip
  args[at + 3] = l.anonymous ? 1 : 0
  args[at + 4] = l.country
  args[at + 5] = l.currency
  args[at + 6] = l.package_id
  args[at + 7] = l.experiment_id
  args[at + 8] = String(l.arm_id)
  args[at + 9] = packQuote(l)
  args[at + 10] = l.created_at
  args[at + 11] = l.updated_at
}

/**
 * A lock row for the write-behind writer: a new user's lock (its key the user id, no IP,
 * no package, no experiment, created when updated) as 5 values (key, country, currency,
 * quote, time), which the writer widens to the statement's 12; any other lock as `null`
 * and its 12 values. Fewer values to clone per row (docs/performance.md "New users:
 * write-behind"). Where the row begins in `out` (saveUserCountries may mark the user's
 * users row in it).
 */
function pushLockRow(l: Lock, out: unknown[], sent: boolean[]): number {
  if (l.user_id === l.lock_key && l.ip === null && !l.anonymous && l.package_id === null && l.experiment_id === 0 && l.arm_id === 0 && l.created_at === l.updated_at) {
    // A remembered quote text goes to the writer once (`false`, its number and the text,
    // before the row), then as its number (docs/performance.md "Batch pricing").
    const q = packedQuote(l)
    let quote: number | string
    if (typeof q === 'string') quote = q
    else {
      if (sent[q.id] !== true) {
        sent[q.id] = true
        out.push(false, q.id, q.text)
      }
      quote = q.id
    }
    const at = out.length
    out.push(l.lock_key, l.country, l.currency, quote, l.updated_at)
    return at
  }
  const at = out.length
  out.push(null)
  setLockArgs(l, out, out.length)
  return at
}

/** What an exposure changed, when nothing more is to say (no object per exposure). */
const NEW: ExposureChange = Object.freeze({change: 'new'})
const SAME: ExposureChange = Object.freeze({change: 'same'})

/** Write-behind's record of a group being gathered (SqlitePricing `behind.current`). */
function newGroup(): NonNullable<SqlitePricing['behind']>['current'] {
  return {exposures: new Map(), keys: new Set(), users: new Set()}
}

/**
 * SQLite adapter of the pricing repository: every statement prepared once per store, on
 * first use. A chunk is one prepared statement run per key inside the caller's transaction:
 * for SQLite that costs less than an IN (...) list (no parameter array, no regrouping by
 * key), and it is the same number of calls a network adapter makes in one round trip.
 */
export class SqlitePricing implements PricingRepository {
  private s?: ReturnType<SqlitePricing['prepare']>
  /** integrationMatches statements by number of types. */
  private matches = new Map<number, Statement>()

  /** The parameters of one multi-row statement of each kind, filled in place. */
  private lockArgs: unknown[] = new Array(ROWS * LOCK_PARAMS)
  private userArgs: unknown[] = new Array(ROWS * USER_PARAMS)

  /**
   * Lock rows read outside a transaction (rememberLocks(); the server's), for the data_version
   * catalogVersion() read last (it moves when another connection committed: another server
   * or a command on the same file). Inside a transaction locks are always read from the store
   * (a write must see the latest row, and a row read there may be rolled back), and nothing
   * read there is remembered.
   */
  private remembered?: RememberedLocks

  /** `link`: shared with the store's experiments adapter, which sends exposures with the locks while write-behind runs. */
  constructor(
    private readonly db: DB,
    private readonly link?: WriteBehindLink,
  ) {}

  private get stmts() {
    return (this.s ??= this.prepare())
  }

  /** The multi-row upserts, prepared when a chunk first has ROWS rows to write (a single price never does). */
  private multi?: {locks: Statement; users: Statement}
  private get multiRow() {
    return (this.multi ??= {locks: this.db.prepare(upsertLocksSql(ROWS)), users: this.db.prepare(upsertUsersSql(ROWS))})
  }

  private prepare() {
    const db = this.db
    return {
      anonymousByIp: db.prepare(`SELECT ${COLUMNS} FROM locks WHERE anonymous = 1 AND ip = ? ORDER BY created_at LIMIT 1`).raw(),
      anonymousVisitor: db.prepare('SELECT country, created_at, updated_at FROM locks WHERE lock_key = ? AND anonymous = 1'),
      countryPrices: db.prepare('SELECT country, currency, amount_minor AS amountMinor FROM country_prices WHERE product_id = ?'),
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      deleteLock: db.prepare('DELETE FROM locks WHERE lock_key = ?'),
      gateways: db.prepare(`SELECT DISTINCT CASE type WHEN 'gateway_a_with_interval' THEN 'gateway_a' ELSE type END AS g FROM product_integrations WHERE product_id = ? ORDER BY g`).pluck(),
      lockByKey: db.prepare(`SELECT ${COLUMNS} FROM locks WHERE lock_key = ?`).raw(),
      // One text, not a row: better-sqlite3 builds a row array per read, and most of a lock
      // read's cost is that array and its 12 values. quote() writes each value as an SQL
      // literal (NULL, a number, or a quoted text with its quotes doubled), so the values
      // before the quote cannot run into each other (and a row is found even without a quote).
      lockFingerprint: db
        .prepare(`SELECT quote(country) || ',' || quote(currency) || ',' || quote(package_id) || ',' || quote(experiment_id) || ',' || quote(arm_id) || ifnull(',' || quote_json, '') FROM locks WHERE lock_key = ?`)
        .pluck(),
      plans: db.prepare(`SELECT currency FROM product_integrations WHERE product_id = ? AND type = 'gateway_d' AND currency IS NOT NULL ORDER BY position`).pluck(),
      productApiId: db.prepare('SELECT api_id FROM products WHERE id = ?').pluck(),
      productByApiId: db.prepare('SELECT id, api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id FROM products WHERE api_id = ?'),
      productById: db.prepare('SELECT id, api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id FROM products WHERE id = ?'),
      upsertLock: db.prepare(upsertLocksSql(1)),
      userCountry: db.prepare('SELECT country FROM users WHERE user_id = ?').pluck(),
      userRow: db.prepare('SELECT user_id, country, created_at, updated_at FROM users WHERE user_id = ?'),
      userUpsert: db.prepare(upsertUsersSql(1)),
    }
  }

  private many<T>(stmt: Statement, keys: readonly string[], map: (row: never) => T | undefined): (T | undefined)[] {
    const out = new Array<T | undefined>(keys.length)
    for (let i = 0; i < keys.length; i++) out[i] = map(stmt.get(keys[i]) as never)
    return out
  }

  /** Write-behind's state (see writeBehind()). */
  private behind?: {
    /**
     * Keys and user ids of the rows gathered for the next commit(), and its exposures by
     * experiment and visitor: the arm, and the stored one before this group (undefined: none).
     */
    current: {exposures: Map<number, Map<string, {arm: string; stored: string | undefined}>>; keys: Set<string>; users: Set<string>}
    /** Same, of groups sent and not known to be committed, by sequence number. */
    inFlight: Map<number, {keys: Set<string>; users: Set<string>}>
    /**
     * Where the lock rows the last saveQuotes gathered begin in `rows` (`derivable[0..derivableN)`,
     * in order): saveUserCountries marks a users row in its lock row instead of sending it
     * when it is the lock's (key, country, time).
     */
    derivable: number[]
    derivableN: number
    /** Exposure rows (write-behind.ts `exposures`: 5 values a row). */
    exposures: unknown[]
    /** Lock rows and users rows in `rows`. */
    lockRows: number
    /** Numbers of the remembered quote texts (packedQuote) this writer was sent. */
    quotesSent: boolean[]
    /** Lock and users rows, in order (write-behind.ts `rows`: pushLockRow's, and `true` and 3 values a users row). */
    rows: unknown[]
    userRows: number
    writer: WriteBehindWriter
  }

  /** The write-behind writer, from writeBehind() (before begin()) to end(). */
  private writer?: WriteBehindWriter

  /** One read transaction around a chunk's reads while write-behind runs (the caller has none then). */
  private readTx?: ReturnType<DB['transaction']>

  /**
   * Batch writes on a second thread (write-behind.ts): the rows are gathered here and sent
   * as one transaction per group, so this thread prices the next group meanwhile.
   */
  writeBehind(requests: number): undefined | WriteBehind {
    // Requests that wrote few locks (locked users) would only pay for the second thread.
    if (this.writer || !this.bulk || this.bulk.rows < requests / 2) return undefined
    const writer = WriteBehindWriter.start(this.db, writerSql(ROWS))
    if (!writer) return undefined
    this.readTx ??= this.db.transaction((body: () => unknown) => body())
    // The repository works the write-behind way from begin() on: until then it writes in the caller's transactions.
    const b: NonNullable<SqlitePricing['behind']> = {current: newGroup(), derivable: [], derivableN: 0, exposures: [], inFlight: new Map(), lockRows: 0, quotesSent: [], rows: [], userRows: 0, writer}
    this.writer = writer
    const exposures = {pending: (id: number) => this.pendingExposures(b, id), record: (x: Exposure, stored: (experimentId: number, visitor: string) => string | undefined) => this.exposureBehind(b, x, stored)}
    return {
      begin: (priced: number) => {
        // Outside the caller's transactions, and only after a group of mostly new users.
        if (this.db.inTransaction || !this.bulk || this.bulk.rows < priced / 2) return false
        if (!writer.begin()) return false
        this.behind = b
        if (this.link) this.link.exposures = exposures
        return true
      },
      commit: () => {
        this.endExposureRead()
        const seq = writer.commit(b.rows, b.exposures)
        b.inFlight.set(seq, b.current)
        b.current = newGroup()
        b.exposures = []
        b.rows = []
        b.lockRows = 0
        b.userRows = 0
        b.derivableN = 0
        return seq
      },
      committed: (seq, wait) => {
        const ok = wait ? writer.wait(seq) : writer.committed >= seq ? true : writer.failedFrom !== 0 && writer.failedFrom <= seq ? false : undefined
        if (ok) for (const k of b.inFlight.keys()) if (k <= seq) b.inFlight.delete(k)
        return ok
      },
      end: () => {
        this.endExposureRead()
        writer.stop()
        if (this.behind === b) this.behind = undefined
        if (this.link?.exposures === exposures) this.link.exposures = undefined
        if (this.writer === writer) this.writer = undefined
      },
    }
  }

  /**
   * Hand the rows gathered so far to the writer (into the group's transaction, not committed):
   * a group's rows do not wait in this thread's heap until its end (they would outlive a
   * scavenge or two and be copied).
   */
  private sendRows(b: NonNullable<SqlitePricing['behind']>): void {
    b.writer.rows(b.rows, b.exposures)
    b.exposures = []
    b.rows = []
    b.lockRows = 0
    b.userRows = 0
    b.derivableN = 0
  }

  /**
   * An exposure while write-behind runs (SqliteExperiments.recordExposure): its change is
   * worked out from the visitor's arm in this group, else the stored arm (read once the
   * groups that wrote the visitor are committed), and the row sent with the group's locks,
   * where the writer makes that change (the same statements).
   */
  private exposureBehind(b: NonNullable<SqlitePricing['behind']>, x: Exposure, stored: (experimentId: number, visitor: string) => string | undefined): ExposureChange {
    let ofExperiment = b.current.exposures.get(x.experimentId)
    if (ofExperiment === undefined) b.current.exposures.set(x.experimentId, (ofExperiment = new Map()))
    const mine = ofExperiment.get(x.visitor)
    let previous: string | undefined
    if (mine) previous = mine.arm
    else {
      this.settle([x.visitor], 'keys', false)
      // One read transaction for the exposures of a chunk (an autocommit read costs several
      // times more), while no group commits: its snapshot holds every group committed.
      const committed = b.writer.committed
      if (this.exposureRead !== undefined && this.exposureRead !== committed) this.endExposureRead()
      if (this.exposureRead === undefined && !this.db.inTransaction) {
        this.db.exec('BEGIN')
        this.exposureRead = committed
      }
      previous = stored(x.experimentId, x.visitor) ?? undefined
    }
    if (previous === x.armId) return SAME
    b.exposures.push(x.experimentId, x.visitor, x.anonymous ? 1 : 0, x.armId, x.at)
    if (mine) mine.arm = x.armId
    else ofExperiment.set(x.visitor, {arm: x.armId, stored: previous})
    b.current.keys.add(x.visitor)
    return previous === undefined ? NEW : {change: 'moved', previous}
  }

  /**
   * The read transaction exposures are read in while write-behind runs (exposureBehind):
   * the writer's last committed sequence number when it began, undefined when none is open.
   */
  private exposureRead?: number

  private endExposureRead(): void {
    if (this.exposureRead === undefined) return
    this.exposureRead = undefined
    if (this.db.inTransaction) this.db.exec('COMMIT')
  }

  /** Before arm counts are read while write-behind runs: every group sent committed, and the visitors this group adds per arm. */
  private pendingExposures(b: NonNullable<SqlitePricing['behind']>, experimentId: number): Map<string, number> {
    this.endExposureRead()
    let last = 0
    for (const seq of b.inFlight.keys()) last = Math.max(last, seq)
    if (last > 0) {
      if (!b.writer.wait(last)) throw new WriteBehindAbort('a group was not written')
      b.inFlight.clear()
    }
    const out = new Map<string, number>()
    for (const e of b.current.exposures.get(experimentId)?.values() ?? []) {
      if (e.arm === e.stored) continue
      out.set(e.arm, (out.get(e.arm) ?? 0) + 1)
      if (e.stored !== undefined) out.set(e.stored, (out.get(e.stored) ?? 0) - 1)
    }
    return out
  }

  /**
   * Before a write-behind read: the writer holds its transaction, no key is one this group
   * wrote (unless `current` is false: an exposure's visitor, whose lock this group writes),
   * and the groups that wrote any of them are committed (waited for).
   */
  private settle(keys: readonly string[], kind: 'keys' | 'users', current = true): void {
    const b = this.behind!
    // Locks and users are read in a transaction of their own, never in the exposures' snapshot.
    if (current) this.endExposureRead()
    // Groups the writer committed by now need no look-up (the writer is usually done with
    // the last group early in the next one).
    if (b.inFlight.size > 0) {
      const committed = b.writer.committed
      for (const k of b.inFlight.keys()) if (k <= committed) b.inFlight.delete(k)
    }
    // A users row may be in its lock row (saveUserCountries): a user read looks at the keys too.
    const users = kind === 'users'
    const here = current ? b.current[kind] : undefined
    const hereKeys = current && users ? b.current.keys : undefined
    let last = 0
    if (b.inFlight.size === 0) {
      if (here) for (const k of keys) if (here.has(k) || hereKeys?.has(k)) throw new WriteBehindAbort('a key read again in the group that wrote it')
      return
    }
    for (const k of keys) {
      if (here?.has(k) || hereKeys?.has(k)) throw new WriteBehindAbort('a key read again in the group that wrote it')
      for (const [seq, written] of b.inFlight) if (seq > last && (written[kind].has(k) || (users && written.keys.has(k)))) last = seq
    }
    if (last === 0) return
    if (!b.writer.wait(last)) throw new WriteBehindAbort('a group was not written')
    for (const k of b.inFlight.keys()) if (k <= last) b.inFlight.delete(k)
  }

  expectBulk(): void {
    // A bigger page cache keeps the locks b-tree in memory across a batch's transactions,
    // and fewer WAL checkpoints (each one syncs the file) run while the batch writes.
    this.db.pragma('cache_size = -65536')
    this.db.pragma('wal_autocheckpoint = 16384')
    this.bulk = {rows: 0}
  }

  /** A bulk run (expectBulk): the locks written so far in the caller's transactions, and the checkpointer once they are enough. */
  private bulk?: {checkpointer?: Checkpointer; off?: boolean; rows: number}

  /**
   * In a bulk run, once BULK_CHECKPOINT_ROWS locks are written, WAL checkpoints run on a
   * second thread (checkpointer.ts) as the run goes: each call asks for one of what is
   * committed so far, so the close at the end has only the last transaction's pages to copy.
   */
  private checkpointSoon(rows: number): void {
    const bulk = this.bulk
    if (!bulk) return
    bulk.rows += rows
    if (bulk.checkpointer) bulk.checkpointer.request()
    else if (bulk.rows >= BULK_CHECKPOINT_ROWS && !bulk.off) {
      bulk.checkpointer = Checkpointer.start(this.db)
      bulk.off = !bulk.checkpointer
    }
  }

  /** End a bulk run: the checkpointer's connection is closed, so this one's close is the last. */
  endBulk(): void {
    this.writer?.stop()
    this.writer = undefined
    this.behind = undefined
    this.bulk?.checkpointer?.stop()
    this.bulk = undefined
  }

  /**
   * Remember up to `max` lock rows between requests (SqlitePricing.remembered): for a
   * long-lived process that reads catalogVersion() before each unit of work (the server, per
   * request), so that a lock another connection changed is never answered from memory.
   */
  rememberLocks(max: number): void {
    this.remembered = new RememberedLocks(max)
  }

  async loadLocks(keys: readonly string[]): Promise<(Lock | undefined)[]> {
    const r = this.remembered
    if (r && keys.length === 1 && !this.behind && !this.db.inTransaction) {
      const key = keys[0]
      let row = r.get(key)
      if (row === undefined) {
        row = this.stmts.lockByKey.get(key) as LockRow | undefined
        if (row === undefined) return [undefined]
        r.keep(row)
      }
      // lockFromRow builds a new Lock (quote copied) each time: the caller may change it.
      return [lockFromRow(row)]
    }
    if (this.behind) {
      this.settle(keys, 'keys')
      return this.readTx!(() => this.many(this.stmts.lockByKey, keys, lockFromRow)) as (Lock | undefined)[]
    }
    return this.many(this.stmts.lockByKey, keys, lockFromRow)
  }

  async loadLockFingerprints(keys: readonly string[]): Promise<(string | undefined)[]> {
    if (this.behind) {
      this.settle(keys, 'keys')
      return this.readTx!(() => this.fingerprints(keys)) as (string | undefined)[]
    }
    return this.fingerprints(keys)
  }

  private fingerprints(keys: readonly string[]): (string | undefined)[] {
    const stmt = this.stmts.lockFingerprint
    const out = new Array<string | undefined>(keys.length)
    for (let i = 0; i < keys.length; i++) out[i] = (stmt.get(keys[i]) as null | string | undefined) ?? undefined
    return out
  }

  async loadAnonymousLocks(ips: readonly string[]): Promise<(Lock | undefined)[]> {
    if (this.behind) throw new WriteBehindAbort('an anonymous lock is read')
    return this.many(this.stmts.anonymousByIp, ips, lockFromRow)
  }

  async saveQuotes(locks: readonly Lock[]): Promise<void> {
    this.remembered?.forget(locks.map((l) => l.lock_key))
    const b = this.behind
    if (b) {
      // Rows gathered before go first; these stay until saveUserCountries has seen them.
      if (b.lockRows + b.userRows >= ROWS_PER_MESSAGE) this.sendRows(b)
      const out = b.rows
      const derivable = b.derivable
      let n = 0
      for (const l of locks) {
        derivable[n++] = pushLockRow(l, out, b.quotesSent)
        b.current.keys.add(l.lock_key)
      }
      b.derivableN = n
      b.lockRows += locks.length
      return
    }
    const upsertLock = this.stmts.upsertLock
    const args = this.lockArgs
    let i = 0
    // ROWS locks per statement while there are that many, then one at a time; rows of one
    // statement are written in their order, so a key given twice keeps the last.
    for (; i + ROWS <= locks.length; i += ROWS) {
      for (let r = 0; r < ROWS; r++) setLockArgs(locks[i + r], args, r * LOCK_PARAMS)
      this.multiRow.locks.run(...args)
    }
    const one = this.lockArgs.slice(0, LOCK_PARAMS)
    for (; i < locks.length; i++) {
      setLockArgs(locks[i], one, 0)
      upsertLock.run(...one)
    }
    this.checkpointSoon(locks.length)
  }

  async deleteLocks(keys: readonly string[]): Promise<void> {
    if (this.behind) throw new WriteBehindAbort('a lock is deleted')
    this.remembered?.forget(keys)
    const del = this.stmts.deleteLock
    for (const k of keys) del.run(k)
  }

  async userCountries(userIds: readonly string[]): Promise<(string | undefined)[]> {
    if (this.behind) {
      this.settle(userIds, 'users')
      return this.readTx!(() => this.many(this.stmts.userCountry, userIds, (c: null | string | undefined) => c ?? undefined)) as (string | undefined)[]
    }
    return this.many(this.stmts.userCountry, userIds, (c: null | string | undefined) => c ?? undefined)
  }

  async saveUserCountries(rows: readonly UserCountry[]): Promise<void> {
    const b = this.behind
    if (b) {
      const out = b.rows
      // A new user's users row is its lock row's key, country and time (the locks saved just
      // before, in the same order): it is marked in the lock row and the writer makes it
      // (docs/performance.md "New users: write-behind"); its key is in the group's keys, which
      // settle() looks at for users too. Only while the users rows match the lock rows one
      // for one: the rest are sent, after them, so the writer inserts users in their order.
      const derivable = b.derivable
      const n = b.derivableN
      let j = 0
      for (const row of rows) {
        if (j < n) {
          const at = derivable[j]
          const v = out[at]
          if (v === null) {
            // null and the 12 values (setLockArgs): 0 marks it.
            if (out[at + 1] === row.userId && out[at + 2] === row.userId && out[at + 5] === row.country && out[at + 12] === row.at) {
              out[at] = 0
              j++
              continue
            }
          } else if (v === row.userId && out[at + 1] === row.country && out[at + 4] === row.at && typeof out[at + 3] === 'number') {
            // A 5-value row with a numbered quote: its number n as -(n + 1) marks it.
            out[at + 3] = -(out[at + 3] as number) - 1
            j++
            continue
          }
          j = n
        }
        // Else `true` and three values: the writer gives `at` as both created_at and updated_at.
        out.push(true, row.userId, row.country, row.at)
        b.current.users.add(row.userId)
        b.userRows++
      }
      b.derivableN = 0
      if (b.lockRows + b.userRows >= ROWS_PER_MESSAGE) this.sendRows(b)
      return
    }
    const userUpsert = this.stmts.userUpsert
    const args = this.userArgs
    let i = 0
    for (; i + ROWS <= rows.length; i += ROWS) {
      for (let r = 0; r < ROWS; r++) {
        const row = rows[i + r]
        const at = r * USER_PARAMS
        args[at] = row.userId
        args[at + 1] = row.country
        args[at + 2] = row.at
        args[at + 3] = row.at
      }
      this.multiRow.users.run(...args)
    }
    for (; i < rows.length; i++) userUpsert.run(rows[i].userId, rows[i].country, rows[i].at, rows[i].at)
  }

  async user(userId: string): Promise<undefined | User> {
    // The anonymous lock first: it is the id's current quote (a users row for an IP is left by an adoption).
    const visitor = this.stmts.anonymousVisitor.get(userId) as {country: string; created_at: string; updated_at: string} | undefined
    if (visitor) return {...visitor, user_id: userId}
    return this.stmts.userRow.get(userId) as undefined | User
  }

  async userHasRevenue(userId: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM subscriptions WHERE user_id = ? UNION ALL SELECT 1 FROM charges WHERE user_id = ? LIMIT 1').get(userId, userId) !== undefined
  }

  async catalogVersion(): Promise<number> {
    return this.commitVersion()
  }

  commitVersion(): number {
    const version = this.stmts.dataVersion.get() as number
    this.remembered?.seen(version)
    return version
  }

  async catalogSnapshot(): Promise<PricingProduct[]> {
    const db = this.db
    const rows = db.prepare('SELECT id, api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id FROM products ORDER BY api_id').all() as ProductRow[]
    const byId = new Map<number, PricingProduct>()
    const out = rows.map((row) => {
      const p: PricingProduct = {...row, countryPrices: [], gateways: [], planCurrencies: []}
      byId.set(row.id, p)
      return p
    })
    for (const c of db.prepare('SELECT product_id, country, currency, amount_minor AS amountMinor FROM country_prices ORDER BY product_id, country').all() as {amountMinor: number; country: string; currency: string; product_id: number}[]) {
      byId.get(c.product_id)?.countryPrices.push({amountMinor: c.amountMinor, country: c.country, currency: c.currency})
    }
    const gateways = db.prepare(`SELECT DISTINCT product_id, CASE type WHEN 'gateway_a_with_interval' THEN 'gateway_a' ELSE type END AS g FROM product_integrations ORDER BY product_id, g`).all() as {g: string; product_id: number}[]
    for (const r of gateways) byId.get(r.product_id)?.gateways.push(r.g)
    const plans = db.prepare(`SELECT product_id, currency FROM product_integrations WHERE type = 'gateway_d' AND currency IS NOT NULL ORDER BY product_id, position`).all() as {currency: string; product_id: number}[]
    for (const r of plans) {
      const p = byId.get(r.product_id)
      if (p && !p.planCurrencies.includes(r.currency)) p.planCurrencies.push(r.currency)
    }
    return out
  }

  async productRow(apiId: string): Promise<ProductRow | undefined> {
    return this.stmts.productByApiId.get(apiId) as ProductRow | undefined
  }

  async productRowById(id: number): Promise<ProductRow | undefined> {
    return this.stmts.productById.get(id) as ProductRow | undefined
  }

  async integrationMatches(types: readonly string[], ref: string): Promise<IntegrationMatch[]> {
    if (types.length === 0) return []
    let stmt = this.matches.get(types.length)
    if (!stmt) {
      stmt = this.db.prepare(
        `SELECT p.id, p.api_id, p.name, p.base_px_minor, p.interval, p.interval_count, p.min_px_minor, p.max_px_minor, p.baseline_id,
           pi.type AS i_type, pi.interval AS i_interval, pi.interval_count AS i_count
         FROM product_integrations pi JOIN products p ON p.id = pi.product_id
         WHERE pi.type IN (${types.map(() => '?').join(', ')}) AND pi.gateway_ref = ? ORDER BY pi.type, pi.id`,
      )
      this.matches.set(types.length, stmt)
    }
    return stmt.all(...types, ref) as IntegrationMatch[]
  }

  async product(apiId: string): Promise<PricingProduct | undefined> {
    const s = this.stmts
    const row = s.productByApiId.get(apiId) as ProductRow | undefined
    if (!row) return undefined
    return {
      ...row,
      countryPrices: s.countryPrices.all(row.id) as PricingProduct['countryPrices'],
      gateways: s.gateways.all(row.id) as string[],
      planCurrencies: [...new Set(s.plans.all(row.id) as string[])],
    }
  }

  async productApiId(id: number): Promise<string | undefined> {
    return this.stmts.productApiId.get(id) as string | undefined
  }

  async productApiIds(): Promise<string[]> {
    return this.db.prepare('SELECT api_id FROM products ORDER BY api_id').pluck().all() as string[]
  }

  async pricedCountries(): Promise<string[]> {
    return this.db.prepare('SELECT country FROM country_prices UNION SELECT country FROM localization_factors ORDER BY country').pluck().all() as string[]
  }
}
