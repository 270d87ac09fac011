/**
 * `node --import ./kill-in-transaction.mjs` (NODE_OPTIONS): the process sends itself SIGKILL
 * from inside a SQLite write transaction once that transaction has put more than
 * $PRICECTL_KILL_AT_WAL_BYTES bytes into the store's WAL (0: its first spilled page), right
 * after the write statement that did it. Each connection's page cache is kept to 16 pages so
 * that a transaction spills its pages into the WAL while it runs, not all at its commit: a
 * watcher outside the process would have a few milliseconds to land its kill.
 * test/hardening/history-kill.test.ts kills `products import` with it.
 */
import {existsSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'

const Database = createRequire(import.meta.url)('better-sqlite3')
const limit = Number(process.env.PRICECTL_KILL_AT_WAL_BYTES)
if (!Number.isInteger(limit) || limit < 0) throw new Error(`PRICECTL_KILL_AT_WAL_BYTES: a whole number of bytes, not ${JSON.stringify(process.env.PRICECTL_KILL_AT_WAL_BYTES)}`)

const walSize = (db) => (existsSync(`${db.name}-wal`) ? statSync(`${db.name}-wal`).size : 0)
/** Each connection's WAL size when it last was outside a transaction: where the current one started. */
const before = new WeakMap()
const outside = (db) => {
  if (!db.inTransaction) before.set(db, walSize(db))
}

const {exec, prepare, transaction} = Database.prototype
Database.prototype.exec = function (...args) {
  outside(this)
  return exec.apply(this, args)
}
Database.prototype.transaction = function (fn) {
  const db = this
  const tx = transaction.call(this, fn)
  const wrapped = function (...args) {
    outside(db)
    return tx.apply(this, args)
  }
  for (const variant of ['deferred', 'immediate', 'exclusive']) {
    wrapped[variant] = function (...args) {
      outside(db)
      return tx[variant].apply(this, args)
    }
  }
  return wrapped
}
let patched = false
Database.prototype.prepare = function (...args) {
  if (!before.has(this)) {
    this.pragma('cache_size = 16')
    outside(this)
  }
  const statement = prepare.apply(this, args)
  if (!patched) {
    patched = true
    const proto = Object.getPrototypeOf(statement)
    const run = proto.run
    proto.run = function (...params) {
      const db = this.database
      outside(db)
      const result = run.apply(this, params)
      if (db.inTransaction && !this.reader && before.has(db) && walSize(db) > before.get(db) + limit) process.kill(process.pid, 'SIGKILL')
      return result
    }
  }
  return statement
}
