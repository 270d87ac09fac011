import Database from 'better-sqlite3'
import type {MessagePort} from 'node:worker_threads'

/**
 * The write-behind writer (write-behind.ts): the lock, user and exposure rows of a batch's
 * groups, one transaction per group, on a connection of its own. Its thread runs
 * write-behind-worker.ts, which hands runWriter its port; a test runs it in its own thread.
 */

/**
 * The statements the writer runs: the pricing adapter's own upserts (multi-row and one-row),
 * and the experiments adapter's exposure insert and re-assignment (SqliteExperiments.recordExposure).
 */
export type WriterSql = {exposure: string; exposures: string; lock: string; locks: string; reassign: string; rows: number; user: string; users: string}

/** What WriteBehindWriter hands this worker: the store's file, the shared status (5 x Int32, write-behind.ts) and the statements. */
export type WriterData = {path: string; signal: SharedArrayBuffer; sql: WriterSql}

/**
 * What WriteBehindWriter posts: take the store's version (begin), rows of the group being
 * written (its last ones with the group's sequence number: commit), or stop.
 */
export type WriterMessage = {begin: true} | {exposures?: unknown[]; rows: unknown[]; seq?: number} | {stop: true}

type Statements = {[K in Exclude<keyof WriterSql, 'rows'>]: Database.Statement}

/**
 * Open the store `data.path` (the status says whether that worked) and write what arrives on
 * `port` (WriterMessage) until it is told to stop.
 */
export function runWriter(data: WriterData, port: MessagePort): void {
  const status = new Int32Array(data.signal)
  const sql = data.sql
  let db: Database.Database | undefined
  let s: Statements | undefined
  let version: unknown
  let failed = 0
  const wake = (i: number) => Atomics.notify(status, i)
  const fail = (seq: number) => {
    failed = seq
    try {
      if (db?.inTransaction) db.exec('ROLLBACK')
    } catch {}
    Atomics.store(status, 2, seq)
    wake(1)
  }
  try {
    db = new Database(data.path, {fileMustExist: true})
    db.pragma('busy_timeout = 10000')
    // Per connection, as the store opens it (src/store/db.ts): WAL is the file's, these are not.
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    db.pragma('cache_size = -65536')
    // Checkpoints are run here after each commit (PASSIVE), not by a commit that crosses a threshold.
    db.pragma('wal_autocheckpoint = 0')
    s = {
      exposure: db.prepare(sql.exposure),
      exposures: db.prepare(sql.exposures),
      lock: db.prepare(sql.lock),
      locks: db.prepare(sql.locks),
      reassign: db.prepare(sql.reassign),
      user: db.prepare(sql.user),
      users: db.prepare(sql.users),
    }
    version = db.pragma('data_version', {simple: true})
    Atomics.store(status, 0, 1)
  } catch {
    Atomics.store(status, 0, -1)
  }
  wake(0)
  // The statements' parameters, filled in place (a multi-row statement's worth of rows).
  const lockArgs: unknown[] = new Array(sql.rows * 12)
  const userArgs: unknown[] = new Array(sql.rows * 4)
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
  const quotes: unknown[] = []
  let nl = 0
  let nu = 0
  const user = (st: Statements, id: unknown, country: unknown, at: unknown) => {
    const u = userArgs
    const at4 = nu * 4
    u[at4] = id
    u[at4 + 1] = country
    u[at4 + 2] = at
    u[at4 + 3] = at
    if (++nu === sql.rows) {
      st.users.run(u)
      nu = 0
    }
  }
  const rows = (st: Statements, values: unknown[]) => {
    const a = lockArgs
    nl = 0
    nu = 0
    for (let i = 0; i < values.length; ) {
      const v = values[i]
      if (v === false) {
        quotes[values[i + 1] as number] = values[i + 2]
        i += 3
        continue
      }
      if (v === true) {
        user(st, values[i + 1], values[i + 2], values[i + 3])
        i += 4
        continue
      }
      const at = nl * 12
      if (v === null || v === 0) {
        for (let j = 0; j < 12; j++) a[at + j] = values[i + 1 + j]
        if (v === 0) user(st, values[i + 2], values[i + 5], values[i + 12])
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
            user(st, v, values[i + 1], values[i + 4])
          } else a[at + 9] = quotes[q]
        } else a[at + 9] = q
        a[at + 10] = values[i + 4]
        a[at + 11] = values[i + 4]
        i += 5
      }
      if (++nl === sql.rows) {
        st.locks.run(a)
        nl = 0
      }
    }
    for (let r = 0; r < nl; r++) st.lock.run(a.slice(r * 12, r * 12 + 12))
    for (let r = 0; r < nu; r++) st.user.run(userArgs.slice(r * 4, r * 4 + 4))
  }
  // Exposure rows come as 5 values (experiment, visitor, anonymous, arm, time), written as the
  // experiments repository writes one: inserted, or else moved to the arm (a row already on
  // that arm is left as it is). A multi-row insert that left rows out is followed by the move
  // of each of its rows in order, which ends where one row at a time would.
  const exposureArgs: unknown[] = new Array(sql.rows * 5)
  const reassign = (st: Statements, values: unknown[], from: number, to: number) => {
    for (let i = from; i < to; i += 5) st.reassign.run(values[i + 3], values[i + 2], values[i + 4], values[i], values[i + 1], values[i + 3])
  }
  const exposures = (st: Statements, values: unknown[]) => {
    const width = sql.rows * 5
    let from = 0
    for (; from + width <= values.length; from += width) {
      for (let j = 0; j < width; j++) exposureArgs[j] = values[from + j]
      if (st.exposures.run(exposureArgs).changes < sql.rows) reassign(st, values, from, from + width)
    }
    for (let i = from; i < values.length; i += 5) {
      if (st.exposure.run(values[i], values[i + 1], values[i + 2], values[i + 3], values[i + 4]).changes === 0) reassign(st, values, i, i + 5)
    }
  }
  // A group's rows come in several messages, the last one with the group's sequence number
  // (commit). Its transaction begins with its first rows: the write lock is not held while
  // this thread waits for them (another connection may write then, as between two groups of
  // a batch without write-behind), and a commit of another connection since the last BEGIN
  // fails the group (its reads may be older than that commit).
  let next = 1
  let open = false
  port.on('message', (m: WriterMessage) => {
    if ('stop' in m) {
      try {
        if (db?.inTransaction) db.exec('ROLLBACK')
      } catch {}
      try {
        db?.close()
      } catch {}
      Atomics.store(status, 3, 1)
      wake(3)
      port.close()
      return
    }
    // A writer that could not start is sent nothing but stop: begin() sees its status (-1).
    if (!db || !s) return
    if ('begin' in m) {
      // The caller's own commits before this are not another connection's.
      try {
        version = db.pragma('data_version', {simple: true})
      } catch {
        fail(next)
      }
      Atomics.store(status, 4, 1)
      wake(4)
      return
    }
    if (failed) return
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
      rows(s, m.rows)
      if (m.exposures) exposures(s, m.exposures)
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
    try {
      db.pragma('wal_checkpoint(PASSIVE)')
    } catch {}
  })
}
