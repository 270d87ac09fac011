import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {commandLine, requestContext} from '../../src/history/context.js'
import {listChanges, revertChange, showChange} from '../../src/history/history.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {RECORDED_TABLES} from '../../src/store/schema/history.js'

/** Tables deliberately not recorded (docs/history.md); a new table must be put in one list or the other. */
const NOT_RECORDED = ['changes', 'change_rows', 'currency_exponents', 'users', 'locks', 'exposures', 'subscriptions', 'charges', 'events', 'pending_fields', 'subscription_events']

const CONTEXT = {actor: 'alice', at: '2026-03-15T12:00:00.000Z', command: 'pricectl test'}

let stores: Store[] = []
function store(): Store {
  const s = openStore(join(mkdtempSync(join(tmpdir(), 'pricectl-history-')), 'store.db'))
  stores.push(s)
  return s
}
afterEach(async () => {
  for (const s of stores) await s.close()
  stores = []
})

const count = (s: Store, t: string) => (s.db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as {n: number}).n
const product = (s: Store, apiId: string) =>
  s.db.prepare("INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES (?, ?, 999, 'month', 1, 't', 't')").run(apiId, apiId.toUpperCase())

describe('history recording', () => {
  it('every table of the store is either recorded or deliberately not', () => {
    const s = store()
    const tables = (s.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as {name: string}[]).map((r) => r.name)
    const recorded = RECORDED_TABLES.map((t) => t.table)
    expect(tables.filter((t) => !recorded.includes(t) && !NOT_RECORDED.includes(t))).toEqual([])
    expect(recorded.filter((t) => !tables.includes(t))).toEqual([])
  })

  it('records nothing without a context, and nothing for a context that writes nothing', async () => {
    const s = store()
    product(s, 'a')
    await s.history.begin(CONTEXT)
    s.db.prepare('SELECT * FROM products').all()
    s.db.prepare("UPDATE products SET name = name WHERE api_id = 'a'").run() // no column changes
    expect(count(s, 'changes')).toBe(0)
    await s.history.end()
    product(s, 'b')
    expect(count(s, 'changes')).toBe(0)
  })

  it('one change per context, created on the first recorded write, with each row before and after', async () => {
    const s = store()
    await s.history.begin(CONTEXT)
    await s.transaction(() => product(s, 'a'))
    await s.transaction(() => s.db.prepare("UPDATE products SET base_px_minor = 1099 WHERE api_id = 'a'").run())
    s.db.prepare("INSERT INTO country_prices VALUES (1, 'DE', 'EUR', 899, 0)").run()
    const id = (await s.history.currentChange())!
    expect(await listChanges(s)).toEqual([
      {...CONTEXT, id, reverted_by: null, reverts: null, rows: [{action: 'inserted', count: 1, table: 'products'}, {action: 'updated', count: 1, table: 'products'}, {action: 'inserted', count: 1, table: 'country_prices'}], summary: null},
    ])
    const {rows} = await showChange(s, id)
    expect(rows[1]).toMatchObject({action: 'updated', after: {base_px_minor: 1099}, before: {base_px_minor: 999}, key: [1], product_id: 1, table: 'products'})
    expect(rows[2]).toMatchObject({after: {amount_minor: 899, country: 'DE'}, before: null, key: [1, 'DE'], product_id: 1})
    // A new context is a new change.
    await s.history.begin({...CONTEXT, actor: 'bob'})
    product(s, 'b')
    expect((await listChanges(s)).map((c) => c.actor)).toEqual(['bob', 'alice'])
  })

  it('a rolled-back transaction leaves neither the write nor its history, and the next write starts the change', async () => {
    const s = store()
    await s.history.begin(CONTEXT)
    await expect(async () =>
      await s.transaction(() => {
        product(s, 'a')
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect([count(s, 'products'), count(s, 'changes'), count(s, 'change_rows')]).toEqual([0, 0, 0])
    expect(await s.history.currentChange()).toBeUndefined()
    product(s, 'b')
    expect([count(s, 'changes'), count(s, 'change_rows')]).toEqual([1, 1])
  })

  it('INSERT OR REPLACE is recorded as the delete of the old row and the insert of the new one', async () => {
    const s = store()
    product(s, 'a')
    s.db.prepare("INSERT INTO country_prices VALUES (1, 'DE', 'EUR', 899, 0)").run()
    await s.history.begin(CONTEXT)
    s.db.prepare("INSERT OR REPLACE INTO country_prices VALUES (1, 'DE', 'EUR', 999, 0)").run()
    const {rows} = await showChange(s, (await s.history.currentChange())!)
    expect(rows.map((r) => [r.action, r.before?.amount_minor ?? null, r.after?.amount_minor ?? null])).toEqual([
      ['deleted', 899, null],
      ['inserted', null, 999],
    ])
  })

  it('API keys: no hash in the images, last_used_at bookkeeping not recorded', async () => {
    const s = store()
    await s.history.begin(CONTEXT)
    s.db.prepare("INSERT INTO api_keys (name, prefix, hash, created_at) VALUES ('ci', 'pk_x', 'secret-hash', 't')").run()
    s.db.prepare("UPDATE api_keys SET last_used_at = 'now'").run()
    const {rows} = await showChange(s, (await s.history.currentChange())!)
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain('secret-hash')
  })

  it('a TEMP trigger set per connection: another connection writes unrecorded, nothing fails', async () => {
    const s = store()
    await s.history.begin(CONTEXT)
    const other = openStore(s.path)
    stores.push(other)
    product(other, 'x')
    expect(count(s, 'changes')).toBe(0)
  })
})

describe('revert', () => {
  it('restores a deleted product with its cascaded rows and ids, as a new change marked as the revert', async () => {
    const s = store()
    await s.history.begin(CONTEXT)
    product(s, 'a')
    s.db.prepare("INSERT INTO country_prices VALUES (1, 'DE', 'EUR', 899, 0), (1, 'FR', 'EUR', 799, 1)").run()
    s.db.prepare("INSERT INTO product_integrations (product_id, position, type, gateway_ref) VALUES (1, 0, 'gateway_c', 'plan')").run()
    const snapshot = () => ['products', 'country_prices', 'product_integrations'].map((t) => s.db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all())
    const before = snapshot()
    await s.history.begin({...CONTEXT, command: 'pricectl products delete a'})
    s.db.prepare("DELETE FROM products WHERE api_id = 'a'").run()
    const deleted = (await s.history.currentChange())!
    expect(count(s, 'country_prices')).toBe(0)

    await s.history.begin({...CONTEXT, command: 'pricectl revert'})
    const dry = await revertChange(s, deleted, {dryRun: true})
    expect(dry).toMatchObject({dry_run: true, restored: 4})
    expect(count(s, 'products')).toBe(0)
    expect(await s.history.currentChange()).toBeUndefined()

    const r = await revertChange(s, deleted)
    expect(r.change).toMatchObject({command: 'pricectl revert', reverts: deleted, summary: `revert of change ${deleted}`})
    expect(snapshot()).toEqual(before)
    expect(s.db.pragma('foreign_key_check')).toEqual([])
    expect((await s.history.get(deleted))!.reverted_by).toBe(r.change!.id)
  })

  it('refuses rows changed outside the history unless forced', async () => {
    const s = store()
    await s.history.begin(CONTEXT)
    product(s, 'a')
    const created = (await s.history.currentChange())!
    await s.history.end()
    s.db.prepare("UPDATE products SET name = 'Changed by hand'").run()
    await s.history.begin(CONTEXT)
    await expect(async () => await revertChange(s, created)).rejects.toThrow(/1 row is no longer what change 1 left \(products \(1\)\), changed outside the history/)
    expect(count(s, 'products')).toBe(1)
    await revertChange(s, created, {force: true})
    expect(count(s, 'products')).toBe(0)
  })

  it('an update written twice in one change goes back to its first before image', async () => {
    const s = store()
    product(s, 'a')
    await s.history.begin(CONTEXT)
    s.db.prepare("UPDATE products SET name = 'step'").run()
    s.db.prepare("UPDATE products SET name = 'final'").run()
    const id = (await s.history.currentChange())!
    await s.history.begin(CONTEXT)
    await revertChange(s, id)
    expect(s.db.prepare('SELECT name FROM products').pluck().get()).toBe('A')
  })
})

describe('who and which command', () => {
  it('the command line leaves out --db and hides secret-looking flag values', () => {
    expect(commandLine('pricectl', 'products:update', ['pro', '--country-price', 'DE=9.99:EUR', '--db', '/tmp/s.db'])).toBe('pricectl products update pro --country-price DE=9.99:EUR')
    expect(commandLine('pricectl', 'x', ['--api-key', 'pk_secret', '--token=abc', '--db=/x', '--name', 'two words'])).toBe("pricectl x --api-key *** --token=*** --name 'two words'")
  })

  it('a full API key given as an argument keeps only the prefix keys list shows', () => {
    const key = `pk_AbC12xyz${'Q'.repeat(35)}`
    expect(commandLine('pricectl', 'keys:revoke', [key, '--yes'])).toBe('pricectl keys revoke pk_AbC12xyz*** --yes')
    // A prefix is not a secret: it stays.
    expect(commandLine('pricectl', 'keys:revoke', ['pk_AbC12xyz', '--yes'])).toBe('pricectl keys revoke pk_AbC12xyz --yes')
  })

  it('a server request is attributed to its API key, its path without the query', () => {
    expect(requestContext('ci', 'POST', '/v1/products/pro?x=1')).toMatchObject({actor: 'key:ci', command: 'POST /v1/products/pro'})
  })
})
