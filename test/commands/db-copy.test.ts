import Database from 'better-sqlite3'
import {readdirSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {dump} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

/** A store with something in every part: catalog (demo), history, keys, a lock, revenue with an amount past 2^53. */
async function filledStore(): Promise<string> {
  const db = tempStore()
  expect((await run(db, ['demo'])).code).toBe(0)
  expect((await run(db, ['keys', 'create', '--name', 'ci'])).code).toBe(0)
  expect((await run(db, ['products', 'update', 'lifetime', '--name', 'Lifetime deal'])).code).toBe(0)
  const sql = new Database(db)
  sql.defaultSafeIntegers(true)
  sql.prepare("INSERT INTO locks (lock_key, user_id, country, currency, quote_json, created_at, updated_at) VALUES ('u1', 'u1', 'DE', 'EUR', '{\"products\":{}}', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')").run()
  sql
    .prepare("INSERT INTO charges (id, user_id, origin, origin_id, status, currency, amount_minor, amount_usd_minor, latest_event_timestamp, latest_event_id) VALUES (?, 'u1', 'gateway_a', 'ch_1', 'succeeded', 'EUR', ?, 1, 1, 'e1')")
    .run(9_007_199_254_740_993n, 9_007_199_254_740_993n)
  sql.close()
  return db
}

function bigCharge(db: string): unknown {
  const sql = new Database(db)
  sql.defaultSafeIntegers(true)
  try {
    return sql.prepare('SELECT id, amount_minor FROM charges').all()
  } finally {
    sql.close()
  }
}

describe('db copy (SQLite to SQLite)', () => {
  it('copies every table, row for row, ids and amounts exact, into a new owner-only file; prints the counts', async () => {
    const src = await filledStore()
    const dest = join(dirname(src), 'copy.db')
    const r = await run(src, ['db', 'copy', src, dest, '--json'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json).toMatchObject({dest, replaced: false, source: src, success: true})
    const byTable = Object.fromEntries(r.json.tables.map((t: {dest_rows: number; source_rows: number; table: string}) => [t.table, t]))
    for (const t of ['api_keys', 'changes', 'change_rows', 'charges', 'locks', 'products', 'settings', 'fx_rates', 'currency_exponents']) {
      expect(byTable[t].source_rows, t).toBeGreaterThan(0)
      expect(byTable[t].dest_rows, t).toBe(byTable[t].source_rows)
    }
    expect(dump(dest).tables).toEqual(dump(src).tables)
    expect(bigCharge(dest)).toEqual([{amount_minor: 9_007_199_254_740_993n, id: 9_007_199_254_740_993n}])
    expect(statSync(dest).mode & 0o777).toBe(0o600)
    expect(readdirSync(dirname(src)).sort()).toEqual(['copy.db', 'store.db'])
    // The copy is a working store: its history and keys came along.
    expect((await run(dest, ['db', 'check'])).code).toBe(0)
    expect((await run(dest, ['history', 'list', '--json'])).json).toEqual((await run(src, ['history', 'list', '--json'])).json)
    const table = await run(src, ['db', 'copy', src, join(dirname(src), 'again.db')])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/│ charges\s+│ 1\s+│ 1\s+│ ok\s+│/)
    expect(table.stderr).toContain('row counts match')
  })

  it('refuses a DEST that holds data without --yes (nothing written), replaces it whole with --yes', async () => {
    const src = await filledStore()
    const dest = tempStore()
    expect((await run(dest, ['products', 'create', '--api-id', 'other', '--name', 'Other', '--base-px', '5', '--interval', 'month', '--interval-count', '1'])).code).toBe(0)
    const before = dump(dest)
    const ask = await run(src, ['db', 'copy', src, dest, '--json'])
    expect(ask.code).toBe(2)
    expect(ask.json.message).toBe(`refusing to replace the store ${dest} (products 1, changes 1) with a copy of ${src} without --yes (no terminal to confirm on)`)
    expect(dump(dest)).toEqual(before)
    const r = await run(src, ['db', 'copy', src, dest, '--yes', '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json.replaced).toBe(true)
    expect(dump(dest).tables).toEqual(dump(src).tables)
  })

  it('copies into an existing new store (only the seed) without asking', async () => {
    const src = await filledStore()
    const dest = tempStore()
    expect((await run(dest, ['db', 'init'])).code).toBe(0)
    const r = await run(src, ['db', 'copy', src, dest, '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json.replaced).toBe(false)
    expect(dump(dest).tables).toEqual(dump(src).tables)
  })

  it('refuses a missing SRC, SRC as DEST, and a DEST that is a folder: exit 2, nothing created', async () => {
    const src = await filledStore()
    const dir = dirname(src)
    const missing = await run(src, ['db', 'copy', join(dir, 'nope.db'), join(dir, 'out.db'), '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.message).toBe(`db copy: SRC ${join(dir, 'nope.db')} does not exist (give a pricectl store: a file, or a postgres:// URL)`)
    const same = await run(src, ['db', 'copy', src, src, '--json'])
    expect(same.code).toBe(2)
    expect(same.json.message).toBe(`db copy DEST: ${src} is the store; pass another path`)
    const folder = await run(src, ['db', 'copy', src, dir, '--json'])
    expect(folder.code).toBe(2)
    expect(readdirSync(dir).sort()).toEqual(['store.db'])
  })
})
