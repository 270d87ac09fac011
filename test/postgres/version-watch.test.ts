import {afterEach, describe, expect, it} from 'vitest'

import {buildServer, type Server} from '../../src/server/app.js'
import {connectPg} from '../../src/store/postgres/client.js'
import {NOTIFY_VERSION, VersionWatch} from '../../src/store/postgres/version-watch.js'
import type {PgStore} from '../../src/store/postgres/store.js'
import {openStore} from '../../src/store/db.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {lock} from '../helpers/contract-fixtures.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'
import {run} from '../helpers/run.js'

/**
 * A long-lived process on PostgreSQL (the server) follows the catalog version by LISTEN
 * (src/store/postgres/version-watch.ts) instead of reading it before every request: what
 * another process commits is still seen by the next request, and a lost watch falls back to
 * reading until it is made again.
 */

const made: PgDatabase[] = []
const closing: {close(): Promise<unknown>}[] = []
afterEach(async () => {
  for (const c of closing.splice(0)) await c.close()
  for (const d of made.splice(0)) await d.drop()
})

async function database(): Promise<string> {
  const d = await freshPgDatabase()
  made.push(d)
  return d.url
}

/** Until `check` holds, for at most `ms`; whether it did. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 3000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 10))) if (await check()) return true
  return false
}

/** Whether the store follows the version by notifications (within 3 s). */
async function watched(store: PgStore): Promise<boolean> {
  return await eventually(() => store.following)
}

describe('the catalog version followed by notifications (PostgreSQL)', () => {
  it('a commit notified while the watch reads its first version is not lost when that read does not see it', async () => {
    const url = await database()
    const other = connectPg(url)
    closing.push(other)
    // The first read: another session commits version 42 meanwhile, and the read answers what it saw before.
    const watch = new VersionWatch(url, async () => {
      await other.query(`SELECT ${NOTIFY_VERSION("'42'")}`)
      await new Promise((r) => setTimeout(r, 200))
      return 1
    })
    closing.push(watch)
    watch.start()
    expect(await eventually(() => watch.current() !== undefined)).toBe(true)
    expect(watch.current()).toBe(42)
  })

  it('moves for another process\'s catalog change, key revoke and lock delete, not for its new locks; a lost watch falls back to reads and is made again', async () => {
    const url = await database()
    const a = openStore(url) as PgStore
    const b = openStore(url) as PgStore
    closing.push(a, b)
    a.pricing.followVersion?.()
    expect(await watched(a)).toBe(true)
    const v = await a.pricing.catalogVersion()

    // Locks are no catalog change: the version stays.
    await b.transaction(async () => await b.pricing.saveQuotes([lock('carol')]), {write: true})
    await new Promise((r) => setTimeout(r, 50))
    expect(await a.pricing.catalogVersion()).toBe(v)
    // A lock deleted (or changed) is: a server may remember it.
    await b.transaction(async () => await b.pricing.deleteLocks(['carol']), {write: true})
    expect(await eventually(async () => (await a.pricing.catalogVersion()) > v)).toBe(true)
    const u = await a.pricing.catalogVersion()

    await b.transaction(async () => await b.config.saveSetting('default_country', 'FR'), {write: true})
    expect(await eventually(async () => (await a.pricing.catalogVersion()) > u)).toBe(true)
    const w = await a.pricing.catalogVersion()

    // API keys are configuration (the history records them): a new key moves it, and so does its revoke.
    const [key] = await b.keys.insert([{created_at: '2026-01-01T00:00:00.000Z', hash: 'h1', name: 'k', prefix: 'pk_watch01'}])
    expect(await eventually(async () => (await a.pricing.catalogVersion()) > w)).toBe(true)
    const made = await a.pricing.catalogVersion()
    expect(await b.keys.revoke([key!.id], '2026-01-02T00:00:00.000Z')).toBe(1)
    expect(await eventually(async () => (await a.pricing.catalogVersion()) > made)).toBe(true)
    // Revoking again changes nothing, and moves nothing.
    const x = await a.pricing.catalogVersion()
    expect(await b.keys.revoke([key!.id], '2026-01-03T00:00:00.000Z')).toBe(0)
    await new Promise((r) => setTimeout(r, 50))
    expect(await a.pricing.catalogVersion()).toBe(x)

    // The watch's connection ended by the server: reads until it is back, then notifications again.
    const admin = connectPg(url)
    closing.push(admin)
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pricectl watch' AND datname = current_database()`)
    expect(await eventually(() => !a.following)).toBe(true)
    await b.transaction(async () => await b.config.saveSetting('default_country', 'DE'), {write: true})
    expect(await a.pricing.catalogVersion()).toBeGreaterThan(x)
    expect(await watched(a)).toBe(true)
    const y = await a.pricing.catalogVersion()
    await b.transaction(async () => await b.config.saveSetting('default_country', 'US'), {write: true})
    expect(await eventually(async () => (await a.pricing.catalogVersion()) > y)).toBe(true)
  })

  it('a server on PostgreSQL: a key revoked, a lock overridden and a price changed by a command are seen by the very next request', async () => {
    const url = await database()
    await createProducts(url, CATALOG)
    const keys: {api_key: string; key: {prefix: string}}[] = []
    for (const name of ['stays', 'goes']) keys.push((await run(url, ['keys', 'create', '--name', name, '--json'])).json as (typeof keys)[number])
    const app: Server = buildServer({db: url, log: () => {}})
    closing.push(app)
    const base = await app.listen({host: '127.0.0.1', port: 0})
    const call = async (key: string, path: string, body?: unknown) => {
      const r = await fetch(base + path, {
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: {authorization: `Bearer ${key}`, ...(body === undefined ? {} : {'content-type': 'application/json'})},
        method: body === undefined ? 'GET' : 'POST',
      })
      return {json: (await r.json()) as Record<string, unknown>, status: r.status}
    }
    const [stays, goes] = keys
    expect((await call(goes.api_key, '/v1/products')).status).toBe(200)
    const price = async () => {
      const r = await call(stays.api_key, '/v1/prices', {country: 'US', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: `u-${Math.random()}`})
      expect(r.status).toBe(200)
      return JSON.stringify(r.json)
    }
    const before = await price()

    const revoked = await run(url, ['keys', 'revoke', goes.key.prefix, '--yes', '--json'])
    expect(revoked.code, revoked.stderr).toBe(0)
    const r = await call(goes.api_key, '/v1/products')
    expect(r.status).toBe(401)
    expect(r.json.message).toMatch(/invalid or revoked API key/)
    expect((await call(stays.api_key, '/v1/products')).status).toBe(200)

    // A locked user is answered from the lock the server remembers, until another process changes it.
    const locked = {country: 'US', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: 'kept'}
    const first = await call(stays.api_key, '/v1/prices', locked)
    expect(first.status).toBe(200)
    expect((await call(stays.api_key, '/v1/prices', locked)).json).toEqual(first.json)
    const overridden = await run(url, ['price', '-u', 'kept', '-p', 'pro_monthly', '--integration', 'gateway_a', '--country', 'DE', '--override', '--json'])
    expect(overridden.code, overridden.stderr).toBe(0)
    const after = await call(stays.api_key, '/v1/prices', locked)
    expect(after.json.country).toBe('DE')
    expect(after.json).toEqual(overridden.json)

    const updated = await run(url, ['products', 'update', 'pro_monthly', '--base-px', '10.99', '--json'])
    expect(updated.code, updated.stderr).toBe(0)
    const repriced = await price()
    expect(repriced).not.toBe(before)
    expect(repriced).toContain('10.99')
  })
})
