import Database from 'better-sqlite3'
import {existsSync, statSync} from 'node:fs'
import {MessageChannel, type MessagePort} from 'node:worker_threads'
import {afterEach, describe, expect, it} from 'vitest'

import {openStore} from '../../src/store/db.js'
import {writerSql} from '../../src/store/sqlite/pricing.js'
import {runWriter, type WriterMessage, type WriterSql} from '../../src/store/sqlite/write-behind-thread.js'
import {tempStore} from '../helpers/run.js'

/**
 * The write-behind writer (src/store/sqlite/write-behind-thread.ts) run in this thread, as
 * its worker runs it (write-behind-worker.ts), over a MessageChannel: the rows of each kind
 * in the flat stream write-behind.ts sends, one transaction per group, a group failed by
 * another connection's commit or by an SQLite error, exposures, checkpoints, stop. Three rows
 * to a multi-row statement, so a few rows take both the multi-row and the one-row statements.
 * The batch tests (price-batch-write-behind*.test.ts) run it in its thread from the
 * pricing adapter; these pin down each part of its protocol, fast enough for mutation runs
 * (vitest.mutate.config.ts).
 */

type Writer = {db: Database.Database; path: string; post(m: WriterMessage): void; status: Int32Array}

const open: {db: Database.Database; port: MessagePort; status: Int32Array}[] = []

afterEach(async () => {
  for (const {db, port, status} of open.splice(0)) {
    if (Atomics.load(status, 3) === 0) {
      port.postMessage({stop: true})
      await notified(status, 3, 0)
    }
    port.close()
    db.close()
  }
})

/** The writer on the store `path`, started in this thread, and a connection of the test's own (to `path`, else to memory). */
function start(path: string, own = path, sql = writerSql(3)): Writer {
  const {port1, port2} = new MessageChannel()
  const status = new Int32Array(new SharedArrayBuffer(20))
  runWriter({path, signal: status.buffer, sql}, port2)
  const db = new Database(own)
  open.push({db, port: port1, status})
  return {db, post: (m) => port1.postMessage(m), path, status}
}

/** A new store with a running experiment (id 1), its writer started (with `sql`). */
async function writer(sql?: WriterSql): Promise<Writer> {
  const path = tempStore()
  await openStore(path).close()
  const setup = new Database(path)
  setup.exec("INSERT INTO experiments (id, name, type, status, allocation, seed, created_at, updated_at) VALUES (1, 'e', 'price', 'running', 'uniform', 1, 't', 't')")
  setup.close()
  return start(path, path, sql)
}

/** Wait for the writer to notify status[i] while it still holds `from`: it must notify (a waiter sleeps until then). */
async function notified(status: Int32Array, i: number, from: number): Promise<void> {
  const wait = (Atomics as unknown as {waitAsync(a: Int32Array, i: number, v: number, ms: number): {async: boolean; value: Promise<string> | string}}).waitAsync
  const r = wait(status, i, from, 2000)
  expect(r.async, `status[${i}] moved from ${from} before the writer was waited for`).toBe(true)
  expect(await r.value).toBe('ok')
}

async function begin(w: Writer): Promise<void> {
  w.post({begin: true})
  if (Atomics.load(w.status, 4) === 0) await notified(w.status, 4, 0)
}

/** Post a group's last rows; wait for its commit (or failure). */
async function commit(w: Writer, m: {exposures?: unknown[]; rows: unknown[]; seq: number}): Promise<void> {
  w.post(m)
  await notified(w.status, 1, Atomics.load(w.status, 1))
}

const locks = (db: Database.Database) => db.prepare('SELECT * FROM locks ORDER BY lock_key').raw().all() as unknown[][]
const users = (db: Database.Database) => db.prepare('SELECT * FROM users ORDER BY user_id').raw().all() as unknown[][]
const exposures = (db: Database.Database) => db.prepare('SELECT user_id, anonymous, arm_id, exposed_at FROM exposures ORDER BY user_id').raw().all() as unknown[][]

describe('the write-behind writer', () => {
  it('starts: ready with its connection open; a store that does not exist is reported (-1), not made', async () => {
    expect([...(await writer()).status]).toEqual([1, 0, 0, 0, 0])
    const missing = tempStore()
    expect([...start(missing, ':memory:').status]).toEqual([-1, 0, 0, 0, 0])
    expect(existsSync(missing)).toBe(false)
  })

  it('writes each kind of row of the stream, a quote text sent once and then by its number', async () => {
    const w = await writer()
    await begin(w)
    const rows = [
      false, 0, 'Q0',
      // New users' locks (5 values): a quote text, the number of one sent before, -(n + 1): that text and a users row.
      // Any other lock (null and 12 values); 0 and 12: that lock and its user's users row.
      'u1', 'DE', 'EUR', 'text-1', 't1',
      null, 'k4', 'u4', '1.2.3.4', 1, 'GB', 'GBP', 'pkg', 7, 'arm', 'quote-4', 'c4', 't4',
      'u2', 'FR', 'EUR', 0, 't2',
      'u3', 'JP', 'JPY', -1, 't3',
      'u11', 'JP', 'JPY', 'text-11', 't13',
      0, 'k5', 'u5', null, 0, 'BR', 'BRL', null, 0, '0', 'quote-5', 'c5', 't5',
      'u12', 'KR', 'KRW', 0, 't14',
      null, 'k6', null, '5.6.7.8', 1, 'NL', 'EUR', null, 0, '0', 'quote-6', 'c6', 't6',
      // Users rows (true and 3 values).
      true, 'u6', 'IN', 't6',
      true, 'u9', 'US', 't11',
      true, 'u10', 'CA', 't12',
    ]
    await commit(w, {rows, seq: 1})
    expect([...w.status]).toEqual([1, 1, 0, 0, 1])
    expect(locks(w.db)).toEqual([
      ['k4', 'u4', '1.2.3.4', 1, 'GB', 'GBP', 'pkg', 7, 'arm', 'quote-4', 'c4', 't4'],
      ['k5', 'u5', null, 0, 'BR', 'BRL', null, 0, '0', 'quote-5', 'c5', 't5'],
      ['k6', null, '5.6.7.8', 1, 'NL', 'EUR', null, 0, '0', 'quote-6', 'c6', 't6'],
      ['u1', 'u1', null, 0, 'DE', 'EUR', null, 0, '0', 'text-1', 't1', 't1'],
      ['u11', 'u11', null, 0, 'JP', 'JPY', null, 0, '0', 'text-11', 't13', 't13'],
      ['u12', 'u12', null, 0, 'KR', 'KRW', null, 0, '0', 'Q0', 't14', 't14'],
      ['u2', 'u2', null, 0, 'FR', 'EUR', null, 0, '0', 'Q0', 't2', 't2'],
      ['u3', 'u3', null, 0, 'JP', 'JPY', null, 0, '0', 'Q0', 't3', 't3'],
    ])
    expect(users(w.db)).toEqual([
      ['u10', 'CA', 't12', 't12'],
      ['u3', 'JP', 't3', 't3'],
      ['u5', 'BR', 't5', 't5'],
      ['u6', 'IN', 't6', 't6'],
      ['u9', 'US', 't11', 't11'],
    ])
    // The numbers stay known to later groups; a key or user given twice keeps the last.
    await commit(w, {rows: [false, 1, 'Q1', 'u7', 'US', 'USD', 1, 't7', 'u8', 'US', 'USD', -1, 't8', 'u7', 'CA', 'CAD', -2, 't9', true, 'u8', 'MX', 't10'], seq: 2})
    expect(locks(w.db).slice(-3)).toEqual([
      ['u3', 'u3', null, 0, 'JP', 'JPY', null, 0, '0', 'Q0', 't3', 't3'],
      ['u7', 'u7', null, 0, 'CA', 'CAD', null, 0, '0', 'Q1', 't7', 't9'],
      ['u8', 'u8', null, 0, 'US', 'USD', null, 0, '0', 'Q0', 't8', 't8'],
    ])
    expect(users(w.db).slice(-3)).toEqual([
      ['u7', 'CA', 't9', 't9'],
      ['u8', 'MX', 't8', 't10'],
      ['u9', 'US', 't11', 't11'],
    ])
    expect([...w.status]).toEqual([1, 2, 0, 0, 1])
  })

  it('writes full multi-row statements, and the rows left one at a time', async () => {
    // One-row statements that mark the key they write.
    const sql = writerSql(3)
    const one = (statement: string, before: string) => statement.replace(before, `${before}'one:' || `)
    const w = await writer({...sql, exposure: one(sql.exposure, 'VALUES (?, '), lock: one(sql.lock, 'VALUES ('), user: one(sql.user, 'VALUES (')})
    await begin(w)
    const rows = [1, 2, 3, 4].flatMap((n) => [`u${n}`, 'DE', 'EUR', 'q', 't', true, `v${n}`, 'DE', 't'])
    await commit(w, {exposures: [1, 2, 3, 4].flatMap((n) => [1, `x${n}`, 0, 'A', n]), rows, seq: 1})
    expect(locks(w.db).map((l) => l[0])).toEqual(['one:u4', 'u1', 'u2', 'u3'])
    expect(users(w.db).map((u) => u[0])).toEqual(['one:v4', 'v1', 'v2', 'v3'])
    expect(exposures(w.db).map((x) => x[0])).toEqual(['one:x4', 'x1', 'x2', 'x3'])
    // A last full statement is one too.
    await commit(w, {exposures: [5, 6, 7].flatMap((n) => [1, `x${n}`, 0, 'A', n]), rows: [], seq: 2})
    expect(exposures(w.db).map((x) => x[0]).slice(-3)).toEqual(['x5', 'x6', 'x7'])
  })

  it('writes a group that comes in several messages in one transaction, committed with its last', async () => {
    const w = await writer()
    await begin(w)
    w.post({rows: ['u1', 'DE', 'EUR', 'q1', 't1']})
    w.post({rows: ['u2', 'DE', 'EUR', 'q2', 't2']})
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(locks(w.db)).toEqual([])
    expect(Atomics.load(w.status, 1)).toBe(0)
    await commit(w, {rows: ['u3', 'DE', 'EUR', 'q3', 't3'], seq: 1})
    expect(locks(w.db).map((l) => l[0])).toEqual(['u1', 'u2', 'u3'])
  })

  it("fails a group begun after another connection's commit, and every later group; the caller's writes before begin do not count", async () => {
    const w = await writer()
    w.db.exec("INSERT INTO users VALUES ('before', 'DE', 't', 't')")
    await begin(w)
    await commit(w, {rows: ['u1', 'DE', 'EUR', 'q1', 't1'], seq: 1})
    expect(Atomics.load(w.status, 1)).toBe(1)
    w.db.exec("INSERT INTO users VALUES ('other', 'DE', 't', 't')")
    await commit(w, {rows: ['u2', 'DE', 'EUR', 'q2', 't2'], seq: 2})
    expect([...w.status]).toEqual([1, 1, 2, 0, 1])
    w.post({rows: ['u3', 'DE', 'EUR', 'q3', 't3'], seq: 3})
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect([...w.status]).toEqual([1, 1, 2, 0, 1])
    expect(locks(w.db).map((l) => l[0])).toEqual(['u1'])
    // Nothing of the failed group is held: this connection writes at once.
    w.db.pragma('busy_timeout = 0')
    w.db.exec("INSERT INTO users VALUES ('after', 'DE', 't', 't')")
  })

  it("without a begin, a group is compared with the store's version at the writer's start", async () => {
    const w = await writer()
    await commit(w, {rows: ['u1', 'DE', 'EUR', 'q1', 't1'], seq: 1})
    expect([...w.status]).toEqual([1, 1, 0, 0, 0])
    const late = await writer()
    late.db.exec("INSERT INTO users VALUES ('other', 'DE', 't', 't')")
    await commit(late, {rows: ['u1', 'DE', 'EUR', 'q1', 't1'], seq: 1})
    expect([...late.status]).toEqual([1, 0, 1, 0, 0])
  })

  it('a begin takes the version anew: a commit of the caller between two runs of groups is its own', async () => {
    const w = await writer()
    await begin(w)
    w.db.exec("INSERT INTO users VALUES ('own', 'DE', 't', 't')")
    await begin(w)
    await commit(w, {rows: ['u1', 'DE', 'EUR', 'q1', 't1'], seq: 1})
    expect([...w.status]).toEqual([1, 1, 0, 0, 1])
  })

  it('fails a group SQLite refuses: rolled back whole', async () => {
    const w = await writer()
    await begin(w)
    // A lock without a country; an exposure of an experiment that does not exist (foreign keys are on).
    w.post({rows: ['u1', 'DE', 'EUR', 'q1', 't1']})
    await commit(w, {rows: ['u2', null, 'EUR', 'q2', 't2'], seq: 1})
    expect([...w.status]).toEqual([1, 0, 1, 0, 1])
    const other = await writer()
    await begin(other)
    await commit(other, {exposures: [99, 'v1', 0, 'A', 100], rows: [], seq: 1})
    expect([...other.status]).toEqual([1, 0, 1, 0, 1])
    expect(locks(w.db)).toEqual([])
    w.db.pragma('busy_timeout = 0')
    w.db.exec("INSERT INTO users VALUES ('after', 'DE', 't', 't')")
  })

  it('writes exposures as the experiments repository does: inserted, or moved to their arm', async () => {
    const w = await writer()
    w.db.exec("INSERT INTO exposures VALUES (1, 'v1', 1, 'A', 100)")
    await begin(w)
    const e = (visitor: string, anonymous: number, arm: string, at: number) => [1, visitor, anonymous, arm, at]
    // A multi-row insert (v1 there already: moved), then one row at a time (v1 again on its arm: left; v2 there already: moved).
    const rows = [...e('v1', 0, 'B', 200), ...e('v2', 0, 'A', 201), ...e('v3', 1, 'A', 202), ...e('v1', 1, 'B', 203), ...e('v2', 1, 'C', 204)]
    await commit(w, {exposures: rows, rows: ['u1', 'DE', 'EUR', 'q1', 't1'], seq: 1})
    expect([...w.status]).toEqual([1, 1, 0, 0, 1])
    expect(exposures(w.db)).toEqual([
      ['v1', 0, 'B', 200],
      ['v2', 1, 'C', 204],
      ['v3', 1, 'A', 202],
    ])
    // One multi-row insert, the last rows of the group: v3 moved, v4 and v5 new.
    await commit(w, {exposures: [...e('v3', 0, 'D', 300), ...e('v4', 0, 'A', 301), ...e('v5', 1, 'A', 302)], rows: [], seq: 2})
    await commit(w, {exposures: e('v4', 1, 'A', 400), rows: [], seq: 3})
    expect([...w.status]).toEqual([1, 3, 0, 0, 1])
    expect(exposures(w.db).slice(2)).toEqual([
      ['v3', 0, 'D', 300],
      ['v4', 0, 'A', 301],
      ['v5', 1, 'A', 302],
    ])
  })

  it('checkpoints after each commit: the rows reach the database file', async () => {
    const w = await writer()
    await begin(w)
    const size = statSync(w.path).size
    const rows = Array.from({length: 60}, (_, i) => [`u${i}`, 'DE', 'EUR', 'q'.repeat(300), 't']).flat()
    await commit(w, {rows, seq: 1})
    expect(statSync(w.path).size).toBeGreaterThan(size)
  })

  it('stops: what it has not committed is rolled back, its connection closed', async () => {
    const w = await writer()
    await begin(w)
    w.post({rows: ['u1', 'DE', 'EUR', 'q1', 't1']})
    w.post({stop: true})
    await notified(w.status, 3, 0)
    expect([...w.status]).toEqual([1, 0, 0, 1, 1])
    expect(locks(w.db)).toEqual([])
    w.db.pragma('busy_timeout = 0')
    w.db.exec("INSERT INTO users VALUES ('after', 'DE', 't', 't')")
    // The writer's connection is closed: this one's close is the last, and removes the WAL.
    w.db.close()
    expect(existsSync(`${w.path}-wal`)).toBe(false)
    w.db = new Database(':memory:')
  })
})
