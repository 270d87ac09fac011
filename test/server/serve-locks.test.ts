import Database from 'better-sqlite3'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildServer, type Server} from '../../src/server/app.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * The server remembers the lock rows it read (src/store/sqlite/pricing.ts rememberLocks,
 * docs/performance.md "serve"): a lock changed by anyone must be answered as changed on
 * the next request. Two servers and the command share one store file; each change is
 * made by one of them, then every one of them is asked.
 */

type Reply = {json: any; status: number}

async function price(base: string, key: string, body: Record<string, unknown>): Promise<Reply> {
  const r = await fetch(base + '/v1/prices', {body: JSON.stringify(body), headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'}, method: 'POST'})
  return {json: await r.json(), status: r.status}
}

const ASK = {integrations: ['gateway_a'], products: ['pro_monthly']}

describe('pricectl serve: remembered locks follow every change', () => {
  let db: string
  let key: string
  const servers: {app: Server; base: string}[] = []
  beforeAll(async () => {
    db = tempStore()
    await createProducts(db, CATALOG)
    const r = await run(db, ['keys', 'create', '--name', 'locks', '--json'])
    if (r.code !== 0) throw new Error(r.stdout + r.stderr)
    key = r.json.api_key
    for (let i = 0; i < 2; i++) {
      const app = buildServer({accessLog: false, db})
      servers.push({app, base: await app.listen({host: '127.0.0.1', port: 0})})
    }
  })
  afterAll(async () => {
    for (const s of servers) await s.app.close()
  })

  /** The quote every server answers for `user` (asked twice each: the second from memory), and the command's. */
  async function everyone(user: string): Promise<unknown[]> {
    const out: unknown[] = []
    for (const s of servers) {
      for (let i = 0; i < 2; i++) {
        const r = await price(s.base, key, {...ASK, user_id: user})
        expect(r.status).toBe(200)
        out.push(r.json)
      }
    }
    const cli = await run(db, ['price', '-u', user, '-p', 'pro_monthly', '--integration', 'gateway_a', '--json'])
    expect(cli.code).toBe(0)
    out.push(cli.json)
    return out
  }

  const currencyOf = (quote: any): string => quote.products.pro_monthly.integrations.gateway_a.currency

  it('a lock changed through the same server is answered changed at once', async () => {
    const [a] = servers
    const first = await price(a.base, key, {...ASK, country: 'DE', user_id: 'same-server'})
    expect(currencyOf(first.json)).toBe('EUR')
    // Read (and remembered) as locked.
    expect((await price(a.base, key, {...ASK, user_id: 'same-server'})).json).toEqual(first.json)
    const swapped = await price(a.base, key, {...ASK, currency: 'USD', override_currency: true, user_id: 'same-server'})
    expect(currencyOf(swapped.json)).toBe('USD')
    for (const q of await everyone('same-server')) expect(q).toEqual(swapped.json)
  })

  it('a lock changed by another server on the same file is answered changed on its next request', async () => {
    const [a, b] = servers
    const first = await price(a.base, key, {...ASK, country: 'FR', user_id: 'two-servers'})
    // Both servers have it in memory now.
    for (const q of await everyone('two-servers')) expect(q).toEqual(first.json)
    const swapped = await price(b.base, key, {...ASK, currency: 'USD', override_currency: true, user_id: 'two-servers'})
    expect(currencyOf(swapped.json)).toBe('USD')
    for (const q of await everyone('two-servers')) expect(q).toEqual(swapped.json)
    // And back, through the other one.
    const again = await price(a.base, key, {...ASK, currency: 'EUR', override_currency: true, user_id: 'two-servers'})
    expect(currencyOf(again.json)).toBe('EUR')
    for (const q of await everyone('two-servers')) expect(q).toEqual(again.json)
  })

  it('a lock changed by the command is answered changed by both servers', async () => {
    const first = await price(servers[0].base, key, {...ASK, country: 'GB', user_id: 'by-command'})
    for (const q of await everyone('by-command')) expect(q).toEqual(first.json)
    const cli = await run(db, ['price', '-u', 'by-command', '-p', 'pro_monthly', '--integration', 'gateway_a', '--currency', 'USD', '--override-currency', '--json'])
    expect(cli.code).toBe(0)
    expect(currencyOf(cli.json)).toBe('USD')
    for (const q of await everyone('by-command')) expect(q).toEqual(cli.json)
    // A new lock in place of the old one (--override): a new quote, the same everywhere.
    const override = await run(db, ['price', '-u', 'by-command', '-p', 'pro_monthly', '--integration', 'gateway_a', '--country', 'JP', '--override', '--json'])
    expect(override.code).toBe(0)
    expect(currencyOf(override.json)).toBe('JPY')
    for (const q of await everyone('by-command')) expect(q).toEqual(override.json)
  })

  it('an anonymous lock adopted by a user is gone for its IP: the next anonymous request makes a new one', async () => {
    const [a] = servers
    const ip = '81.2.69.142'
    const lockRows = () => {
      const d = new Database(db, {readonly: true})
      try {
        return d.prepare('SELECT lock_key, anonymous FROM locks WHERE lock_key IN (?, ?) ORDER BY lock_key').all(ip, 'adopter')
      } finally {
        d.close()
      }
    }
    const anonymous = await price(a.base, key, {...ASK, country: 'GB', ip})
    expect(anonymous.status).toBe(200)
    // Remembered under the IP.
    expect((await price(a.base, key, {...ASK, ip})).json).toEqual(anonymous.json)
    const adopted = await price(a.base, key, {...ASK, ip, user_id: 'adopter'})
    expect(adopted.json).toEqual({...anonymous.json, user_id: 'adopter'})
    expect(lockRows()).toEqual([{anonymous: 0, lock_key: 'adopter'}])
    // The IP's lock row was deleted by this server: asked again, it is priced and stored anew.
    expect((await price(a.base, key, {...ASK, country: 'GB', ip})).status).toBe(200)
    expect(lockRows()).toEqual([{anonymous: 1, lock_key: ip}, {anonymous: 0, lock_key: 'adopter'}])
  })

  it('a product added to a remembered lock is kept in the lock, and the lock read without it answers without it', async () => {
    const [a, b] = servers
    const first = await price(a.base, key, {...ASK, country: 'DE', user_id: 'grows'})
    expect(Object.keys(first.json.products)).toEqual(['pro_monthly'])
    await price(b.base, key, {...ASK, user_id: 'grows'})
    // The lock gains a product (a write through b); the answer to the first request's shape is unchanged, on both.
    const both = await price(b.base, key, {...ASK, products: ['pro_monthly', 'pro_yearly'], user_id: 'grows'})
    expect(Object.keys(both.json.products).sort()).toEqual(['pro_monthly', 'pro_yearly'])
    for (const s of servers) {
      expect((await price(s.base, key, {...ASK, products: ['pro_monthly', 'pro_yearly'], user_id: 'grows'})).json).toEqual(both.json)
      expect((await price(s.base, key, {...ASK, user_id: 'grows'})).json).toEqual(first.json)
    }
  })
})
