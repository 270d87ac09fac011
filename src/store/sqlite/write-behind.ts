import {createRequire} from 'node:module'
import {Worker} from 'node:worker_threads'

import type {DB} from '../db.js'
import type {Exposure, ExposureChange} from '../port/experiments.js'

/**
 * The lock and user upserts of a batch, and the exposures of its running experiments
 * (docs/performance.md "New users: write-behind"), written by
 * a second thread with its own connection while this one prices the next group
 * (docs/performance.md "New users: write-behind").
 *
 * The writer writes each group in one transaction (BEGIN IMMEDIATE at its first rows,
 * COMMIT with its last), then checkpoints (PASSIVE). This thread read the group's locks
 * while the writer still wrote earlier groups, so another connection's commit in between
 * could make those reads stale: after each BEGIN the writer compares its `data_version`
 * with the one of its previous BEGIN (or its start, before this thread's first read), and
 * if another connection committed in between, that group and every later one are not
 * written and reported failed (the batch prices them again the usual way, in its own write
 * transactions). A group the writer cannot write (any SQLite error) is reported the same
 * way. Durability is the store's: the same WAL and synchronous level, one commit per group.
 *
 * Shared status (Int32Array): [0] 1 ready, -1 could not start; [1] last committed
 * sequence number; [2] first failed sequence number (0: none); [3] 1 once stopped; [4] 1
 * once the store's version was taken (begin).
 */
const WORKER_SOURCE = String.raw`
const {parentPort, workerData} = require('node:worker_threads')
const Database = require(workerData.driver)
const status = new Int32Array(workerData.signal)
const sql = workerData.sql
let db, s, version, failed = 0
const wake = (i) => Atomics.notify(status, i)
const fail = (seq) => {
  failed = seq
  try { if (db && db.inTransaction) db.exec('ROLLBACK') } catch {}
  Atomics.store(status, 2, seq)
  wake(1)
}
try {
  db = new Database(workerData.path, {fileMustExist: true})
  db.pragma('busy_timeout = 10000')
  // Per connection, as the store opens it (src/store/db.ts): WAL is the file's, these are not.
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma('cache_size = -65536')
  // Checkpoints are run here after each commit (PASSIVE), not by a commit that crosses a threshold.
  db.pragma('wal_autocheckpoint = 0')
  s = {locks: db.prepare(sql.locks), lock: db.prepare(sql.lock), users: db.prepare(sql.users), user: db.prepare(sql.user), exposure: db.prepare(sql.exposure), exposures: db.prepare(sql.exposures), reassign: db.prepare(sql.reassign)}
  version = db.pragma('data_version', {simple: true})
  Atomics.store(status, 0, 1)
} catch {
  Atomics.store(status, 0, -1)
}
wake(0)
// The statements' parameters, filled in place (a multi-row statement's worth of rows).
const lockArgs = new Array(sql.rows * 12)
const userArgs = new Array(sql.rows * 4)
// One stream of rows, in the order they were gathered (a key or user given twice keeps the
// last: each table's rows are written in their order):
// - a new user's lock as 5 values (key, country, currency, quote, time: the key is the user
//   id, no IP, no package, no experiment, created when updated), which the statement's 12
//   are made from. Its quote is its text, or the number n of a text sent before (false, n
//   and the text: not a row), or -(n + 1): that text, and the user's users row is (key,
//   country, time), made here instead of sent (docs/performance.md "New users: write-behind");
// - null and the lock statement's 12 values: any other lock; 0 instead of null: that lock,
//   and its user's users row is (user, country, updated);
// - true and 3 values (user, country, time: created and updated then): a users row.
const quotes = []
let nl = 0
let nu = 0
const user = (id, country, at) => {
  const u = userArgs
  const at4 = nu * 4
  u[at4] = id
  u[at4 + 1] = country
  u[at4 + 2] = at
  u[at4 + 3] = at
  if (++nu === sql.rows) {
    s.users.run(u)
    nu = 0
  }
}
const rows = (values) => {
  const a = lockArgs
  nl = 0
  nu = 0
  for (let i = 0; i < values.length; ) {
    const v = values[i]
    if (v === false) {
      quotes[values[i + 1]] = values[i + 2]
      i += 3
      continue
    }
    if (v === true) {
      user(values[i + 1], values[i + 2], values[i + 3])
      i += 4
      continue
    }
    const at = nl * 12
    if (v === null || v === 0) {
      for (let j = 0; j < 12; j++) a[at + j] = values[i + 1 + j]
      if (v === 0) user(values[i + 2], values[i + 5], values[i + 12])
      i += 13
    } else {
      a[at] = v
      a[at + 1] = v
      a[at + 2] = null
      a[at + 3] = 0
      a[at + 4] = values[i + 1]
      a[at + 5] = values[i + 2]
      a[at + 6] = null
      a[at + 7] = 0
      a[at + 8] = '0'
      const q = values[i + 3]
      if (typeof q === 'number') {
        if (q < 0) {
          a[at + 9] = quotes[-q - 1]
          user(v, values[i + 1], values[i + 4])
        } else a[at + 9] = quotes[q]
      } else a[at + 9] = q
      a[at + 10] = values[i + 4]
      a[at + 11] = values[i + 4]
      i += 5
    }
    if (++nl === sql.rows) {
      s.locks.run(a)
      nl = 0
    }
  }
  for (let r = 0; r < nl; r++) s.lock.run(a.slice(r * 12, r * 12 + 12))
  for (let r = 0; r < nu; r++) s.user.run(userArgs.slice(r * 4, r * 4 + 4))
}
// Exposure rows come as 5 values (experiment, visitor, anonymous, arm, time), written as the
// experiments repository writes one: inserted, or else moved to the arm (a row already on
// that arm is left as it is). A multi-row insert that left rows out is followed by the move
// of each of its rows in order, which ends where one row at a time would.
const exposureArgs = new Array(sql.rows * 5)
const reassign = (values, from, to) => {
  for (let i = from; i < to; i += 5) s.reassign.run(values[i + 3], values[i + 2], values[i + 4], values[i], values[i + 1], values[i + 3])
}
const exposures = (values) => {
  const width = sql.rows * 5
  let from = 0
  for (; from + width <= values.length; from += width) {
    for (let j = 0; j < width; j++) exposureArgs[j] = values[from + j]
    if (s.exposures.run(exposureArgs).changes < sql.rows) reassign(values, from, from + width)
  }
  for (let i = from; i < values.length; i += 5) {
    if (s.exposure.run(values[i], values[i + 1], values[i + 2], values[i + 3], values[i + 4]).changes === 0) reassign(values, i, i + 5)
  }
}
// A group's rows come in several messages, the last one with the group's sequence number
// (commit). Its transaction begins with its first rows: the write lock is not held while
// this thread waits for them (another connection may write then, as between two groups of
// a batch without write-behind), and a commit of another connection since the last BEGIN
// fails the group (its reads may be older than that commit).
let next = 1
let open = false
parentPort.on('message', (m) => {
  if (m.stop) {
    try { if (db && db.inTransaction) db.exec('ROLLBACK') } catch {}
    try { db && db.close() } catch {}
    Atomics.store(status, 3, 1)
    wake(3)
    parentPort.close()
    return
  }
  if (m.begin) {
    // The caller's own commits before this are not another connection's.
    try { version = db.pragma('data_version', {simple: true}) } catch { fail(next) }
    Atomics.store(status, 4, 1)
    wake(4)
    return
  }
  if (failed || !db) return
  try {
    if (!open) {
      db.exec('BEGIN IMMEDIATE')
      open = true
      const now = db.pragma('data_version', {simple: true})
      if (now !== version) {
        fail(next)
        return
      }
    }
    rows(m.rows)
    if (m.exposures) exposures(m.exposures)
    if (m.seq === undefined) return
    db.exec('COMMIT')
    open = false
  } catch {
    fail(next)
    return
  }
  Atomics.store(status, 1, m.seq)
  wake(1)
  next = m.seq + 1
  try { db.pragma('wal_checkpoint(PASSIVE)') } catch {}
})
`

/**
 * The statements the writer runs: the pricing adapter's own upserts (multi-row and one-row),
 * and the experiments adapter's exposure insert and re-assignment (SqliteExperiments.recordExposure).
 */
export type WriterSql = {exposure: string; exposures: string; lock: string; locks: string; reassign: string; rows: number; user: string; users: string}

export class WriteBehindWriter {
  private readonly status = new Int32Array(new SharedArrayBuffer(20))
  private readonly worker: Worker
  /** Sequence number of the last group sent. */
  sent = 0
  private stopped = false

  constructor(path: string, sql: WriterSql) {
    const require = createRequire(import.meta.url)
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // CommonJS code: flags of this process such as --input-type=module must not apply to it.
      execArgv: [],
      workerData: {driver: require.resolve('better-sqlite3'), path, signal: this.status.buffer, sql},
    })
    this.worker.unref()
    this.worker.on('error', () => {
      // A writer that died writes nothing more: what it did not commit is priced again.
      if (Atomics.load(this.status, 0) === 0) Atomics.store(this.status, 0, -1)
      if (Atomics.load(this.status, 2) === 0) Atomics.store(this.status, 2, Atomics.load(this.status, 1) + 1)
      Atomics.store(this.status, 3, 1)
    })
  }

  /**
   * A writer for a file store in WAL mode that this connection may write; undefined
   * otherwise. It may start inside the caller's transaction (its thread boots while the
   * first group is priced); begin() is called outside any.
   */
  static start(db: DB, sql: WriterSql): undefined | WriteBehindWriter {
    if (db.memory || db.readonly || !db.name) return undefined
    if (String(db.pragma('journal_mode', {simple: true})).toLowerCase() !== 'wal') return undefined
    return new WriteBehindWriter(db.name, sql)
  }

  /**
   * Take the store's version as the writer's reference (after this thread's last write of
   * its own, before its first read for write-behind); false when the writer could not start.
   */
  begin(): boolean {
    while (Atomics.load(this.status, 0) === 0 && Atomics.load(this.status, 3) === 0) Atomics.wait(this.status, 0, 0, 100)
    if (Atomics.load(this.status, 0) !== 1) return false
    this.worker.postMessage({begin: true})
    while (Atomics.load(this.status, 4) === 0 && Atomics.load(this.status, 3) === 0) Atomics.wait(this.status, 4, 0, 100)
    return Atomics.load(this.status, 4) === 1 && Atomics.load(this.status, 2) === 0
  }

  /** Send rows of the group being priced (flat, one row after the other; see the writer's `rows` and `exposures`). */
  rows(rows: unknown[], exposures?: unknown[]): void {
    this.worker.postMessage(exposures?.length ? {exposures, rows} : {rows})
  }

  /** Send the group's last rows and commit it; its sequence number. */
  commit(rows: unknown[], exposures?: unknown[]): number {
    this.sent++
    this.worker.postMessage(exposures?.length ? {exposures, rows, seq: this.sent} : {rows, seq: this.sent})
    return this.sent
  }

  /** The last sequence number committed (without waiting). */
  get committed(): number {
    return Atomics.load(this.status, 1)
  }

  /** The first sequence number that was not written (0: none). */
  get failedFrom(): number {
    return Atomics.load(this.status, 2)
  }

  /** Wait until `seq` is committed or failed: whether it was committed (false too for a writer silent for 60 s). */
  wait(seq: number): boolean {
    const until = Date.now() + 60_000
    for (;;) {
      if (Date.now() > until) return false
      const committed = Atomics.load(this.status, 1)
      if (committed >= seq) return true
      const failed = Atomics.load(this.status, 2)
      if (failed !== 0 && failed <= seq) return false
      if (Atomics.load(this.status, 3) !== 0) return false
      Atomics.wait(this.status, 1, committed, 100)
    }
  }

  /** Close the writer's connection (what it has not committed is rolled back) and wait for it. */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.worker.postMessage({stop: true})
    // The writer may be waiting for another connection's write lock (busy_timeout, 10 s);
    // a writer that does not answer well after that is terminated (SQLite rolls its
    // transaction back as after a crash).
    const until = Date.now() + 30_000
    while (Atomics.load(this.status, 3) === 0 && Date.now() < until) Atomics.wait(this.status, 3, 0, 100)
    if (Atomics.load(this.status, 3) === 0) void this.worker.terminate()
  }
}

/**
 * Write-behind's side of the experiments adapter: while a batch writes behind, an exposure
 * goes to the writer with its group's lock rows and commits in the same transaction (a
 * quote's exposure is stored iff its quote is; docs/performance.md "New users: write-behind"). SqlitePricing sets it from begin() to end().
 */
export type ExposuresBehind = {
  /**
   * Record an exposure in the group being priced: what it changes is the visitor's arm in
   * this group, else the stored one, read by `stored` once the groups that wrote the
   * visitor are committed (waited for), in a read transaction of write-behind's.
   */
  record(x: Exposure, stored: (experimentId: number, visitor: string) => string | undefined): ExposureChange
  /**
   * Before arm counts are read: every group sent is committed (waited for; WriteBehindAbort
   * when one was not written). The visitors the group being priced adds (or moves away, a
   * negative count) per arm of this experiment.
   */
  pending(experimentId: number): Map<string, number>
}

/** What the adapters of one store share while write-behind runs (SqliteStore makes one). */
export class WriteBehindLink {
  exposures?: ExposuresBehind
}
