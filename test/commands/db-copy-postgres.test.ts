import Database from 'better-sqlite3'
import {readdirSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {openStore} from '../../src/store/db.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'
import {run, tempStore} from '../helpers/run.js'

const databases: PgDatabase[] = []
afterEach(async () => {
  for (const d of databases.splice(0)) await d.drop()
})

async function database(): Promise<string> {
  const d = await freshPgDatabase()
  databases.push(d)
  return d.url
}

const BIG = 9_007_199_254_740_993n

/** A SQLite store with something in every part: catalog (demo), history, keys, a lock, a charge past 2^53. */
async function filledStore(): Promise<string> {
  const db = tempStore()
  expect((await run(db, ['demo'])).code).toBe(0)
  expect((await run(db, ['keys', 'create', '--name', 'ci'])).code).toBe(0)
  expect((await run(db, ['products', 'update', 'lifetime', '--name', 'Lifetime deal'])).code).toBe(0)
  const sql = new Database(db)
  sql.defaultSafeIntegers(true)
  sql.prepare("INSERT INTO locks (lock_key, user_id, country, currency, quote_json, created_at, updated_at) VALUES ('u1', 'u1', 'DE', 'EUR', '{\"products\":{}}', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')").run()
  sql
    .prepare("INSERT INTO charges (id, user_id, origin, origin_id, status, currency, amount_minor, amount_usd_minor, latest_event_timestamp, latest_event_id, metadata_json) VALUES (?, 'u1', 'gateway_a', 'ch_1', 'succeeded', 'EUR', ?, 1, 1, 'e1', ?)")
    .run(BIG, BIG, 'tab\there, newline\nthere, backslash \\ and "quotes"')
  sql.close()
  return db
}

/**
 * Every table's rows through the port, comparable across adapters: rows in a stable order
 * (SQLite copies in rowid order, PostgreSQL in key order) and history images as parsed JSON
 * (jsonb on PostgreSQL keeps their content, not their spacing or key order, and cannot hold
 * U+0000: a SQLite image with one, such as the transient name of a products update, gets
 * U+FFFD there).
 */
async function contents(db: string): Promise<Record<string, unknown[]>> {
  const store = openStore(db)
  try {
    return await store.tables.snapshot(async () => {
      const out: Record<string, unknown[]> = {}
      for (const t of await store.tables.list()) {
        const names = t.columns.map((c) => c.name)
        const read: unknown[][] = []
        for await (const chunk of store.tables.read(t.name, names, 1000)) read.push(...chunk)
        const rows = read.map((row) =>
          Object.fromEntries(names.map((n, i) => [n, t.name === 'change_rows' && ['key', 'before', 'after'].includes(n) && typeof row[i] === 'string' ? JSON.parse((row[i] as string).replaceAll('\\u0000', '\\ufffd')) : row[i]])),
        )
        out[t.name] = rows.map((r) => JSON.stringify(r, canonical)).sort()
      }
      return out
    })
  } finally {
    await store.close()
  }
}

/** JSON.stringify replacer: bigints marked, object keys sorted (jsonb keeps its own key order). */
function canonical(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`
  if (v && typeof v === 'object' && !Array.isArray(v)) return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  return v
}

describe('db copy between SQLite and PostgreSQL', () => {
  it('SQLite -> PostgreSQL -> SQLite keeps every row, id and amount (past 2^53), and prints the counts', async () => {
    const src = await filledStore()
    const pg = await database()
    const there = await run(src, ['db', 'copy', src, pg, '--json'])
    expect(there.code, there.stdout + there.stderr).toBe(0)
    expect(there.json).toMatchObject({replaced: false, success: true})
    const byTable = Object.fromEntries(there.json.tables.map((t: {dest_rows: number; source_rows: number; table: string}) => [t.table, t]))
    for (const t of ['api_keys', 'changes', 'change_rows', 'charges', 'locks', 'products', 'settings', 'fx_rates', 'currency_exponents']) {
      expect(byTable[t].source_rows, t).toBeGreaterThan(0)
      expect(byTable[t].dest_rows, t).toBe(byTable[t].source_rows)
    }
    expect(await contents(pg)).toEqual(await contents(src))
    // The database passes its check: foreign keys, constraints, sequences past the copied ids.
    const check = await run(pg, ['db', 'check', '--json'])
    expect(check.code, check.stdout).toBe(0)

    const back = join(dirname(src), 'back.db')
    const again = await run(src, ['db', 'copy', pg, back, '--json'])
    expect(again.code, again.stdout + again.stderr).toBe(0)
    expect(await contents(back)).toEqual(await contents(src))
    const sql = new Database(back)
    sql.defaultSafeIntegers(true)
    expect(sql.prepare('SELECT id, amount_minor FROM charges').all()).toEqual([{amount_minor: BIG, id: BIG}])
    sql.close()
    expect(statSync(back).mode & 0o777).toBe(0o600)
    expect((await run(back, ['db', 'check'])).code).toBe(0)
  })

  it('refuses a database that holds data without --yes, replaces it whole with --yes; PostgreSQL -> PostgreSQL', async () => {
    const src = await filledStore()
    const a = await database()
    const b = await database()
    expect((await run(src, ['db', 'copy', src, a])).code).toBe(0)
    expect((await run(src, ['db', 'copy', src, b])).code).toBe(0)
    const ask = await run(src, ['db', 'copy', a, b, '--json'])
    expect(ask.code).toBe(2)
    expect(ask.json.message).toMatch(/^refusing to replace the store postgres:\/\/\S+ \(products 7, coupons 4, .*\) with a copy of postgres:\/\/\S+ without --yes/)
    const ok = await run(src, ['db', 'copy', a, b, '--yes', '--json'])
    expect(ok.code, ok.stdout).toBe(0)
    expect(ok.json.replaced).toBe(true)
    expect(await contents(b)).toEqual(await contents(src))
    const same = await run(src, ['db', 'copy', a, a, '--json'])
    expect(same.code).toBe(2)
  })

  it('new rows after a copy into PostgreSQL get new ids (the sequences moved past the copied ones)', async () => {
    const src = await filledStore()
    const pg = await database()
    expect((await run(src, ['db', 'copy', src, pg])).code).toBe(0)
    const store = openStore(pg)
    try {
      const before = (await store.keys.list()).map((k) => k.id)
      const [made] = await store.keys.insert([{created_at: '2026-01-01T00:00:00Z', hash: 'h-new', name: 'new', prefix: 'pk_new'}])
      expect(made!.id).toBeGreaterThan(Math.max(...before))
    } finally {
      await store.close()
    }
  })

  it('db backup of a PostgreSQL store writes a SQLite store file; db restore loads it into another database', async () => {
    const src = await filledStore()
    const pg = await database()
    expect((await run(src, ['db', 'copy', src, pg])).code).toBe(0)
    const file = join(dirname(src), 'pg-backup.db')
    const b = await run(pg, ['db', 'backup', file, '--json'])
    expect(b.code, b.stdout + b.stderr).toBe(0)
    expect(b.json).toMatchObject({path: file, success: true})
    expect(b.json.bytes).toBe(statSync(file).size)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(await contents(file)).toEqual(await contents(src))
    expect((await run(pg, ['db', 'backup', file, '--json'])).code).toBe(2) // exists: --force

    const other = await database()
    const r = await run(other, ['db', 'restore', file, '--json'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json).toMatchObject({backup: file, foreign_key_violations: 0, integrity: 'ok', replaced: false, success: true})
    expect(await contents(other)).toEqual(await contents(src))
    const ask = await run(other, ['db', 'restore', file, '--json'])
    expect(ask.code).toBe(2)
    expect(ask.json.message).toContain('without --yes')
    expect((await run(other, ['db', 'restore', file, '--yes'])).code).toBe(0)
    expect(readdirSync(dirname(src)).sort()).toEqual(['pg-backup.db', 'store.db'])
  })
})
