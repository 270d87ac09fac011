import Database from 'better-sqlite3'
import {copyFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {getUser} from '../../src/catalog/users.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice} from '../../src/pricing/price.js'
import {buildServer} from '../../src/server/app.js'
import {openStore, type Store} from '../../src/store/db.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {runArgs, seedCatalog, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {ROOT, run, tempStore} from '../helpers/run.js'

/**
 * Who a quote belongs to and which country it is made for (docs/hardening.md, "Identity
 * and country"): an override recomputes the quote and keeps the country; every id the
 * price calculation hands out (a user id, or the IP of an anonymous visitor) can be looked
 * up; the country of a subscription or charge does not move the user's stored country.
 */

/** 81.2.69.142 is in GB in the bundled country database; 8.8.8.8 in US. */
const GB_IP = '81.2.69.142'

function users(db: string): number {
  const d = new Database(db, {readonly: true})
  try {
    return (d.prepare('SELECT count(*) AS n FROM users').get() as {n: number}).n
  } finally {
    d.close()
  }
}

describe('--override recomputes the quote, not the country (flag > stored > IP > default)', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await createProducts(db, CATALOG)
  })

  it('a user locked in FR, overridden with no country or IP, is quoted again in FR and stays FR', async () => {
    const first = await run(db, ['price', '-u', 'ov1', '-p', 'pro_monthly', '--country', 'FR', '--currency', 'USD', '--json'])
    expect(first.json).toMatchObject({country: 'FR', currency: 'USD'})
    expect((await run(db, ['products', 'update', 'pro_monthly', '--base-px', '12.99', '--yes', '--json'])).code).toBe(0)
    const over = await run(db, ['price', '-u', 'ov1', '-p', 'pro_monthly', '--override', '--json'])
    expect(over.code).toBe(0)
    // The country is kept; currency and price are recomputed (the currency flag was not sent again).
    expect(over.json).toMatchObject({country: 'FR', currency: 'EUR', user_id: 'ov1'})
    expect(over.json.products.pro_monthly.price).not.toBe(first.json.products.pro_monthly.price)
    expect((await run(db, ['user', 'get', 'ov1', '--json'])).json).toEqual({user: {country: 'FR'}})
    // Explain says where the country came from.
    const explain = await run(db, ['price', 'explain', '-u', 'ov1', '-p', 'pro_monthly', '--override', '--json'])
    expect(explain.json.steps.map((s: {detail: string}) => s.detail)).toContain('FR, stored for user ov1')
  })

  it('the stored country outranks the IP under --override too; only --country moves it', async () => {
    await run(db, ['price', '-u', 'ov2', '-p', 'lifetime', '--country', 'FR', '--json'])
    const viaIp = await run(db, ['price', '-u', 'ov2', '-p', 'lifetime', '--ip', GB_IP, '--override', '--json'])
    expect(viaIp.json.country).toBe('FR')
    const flag = await run(db, ['price', '-u', 'ov2', '-p', 'lifetime', '--country', 'JP', '--override', '--json'])
    expect(flag.json).toMatchObject({country: 'JP', currency: 'JPY'})
    expect((await run(db, ['user', 'get', 'ov2', '--json'])).json).toEqual({user: {country: 'JP'}})
    const again = await run(db, ['price', '-u', 'ov2', '-p', 'lifetime', '--override', '--json'])
    expect(again.json.country).toBe('JP')
  })

  it('an anonymous visitor locked in DE by the flag stays in DE when overridden by its IP alone', async () => {
    const anon = await run(db, ['price', '--ip', GB_IP, '-p', 'lifetime', '--country', 'DE', '--json'])
    expect(anon.json).toMatchObject({country: 'DE', user_id: GB_IP})
    const over = await run(db, ['price', '--ip', GB_IP, '-p', 'lifetime', '--override', '--json'])
    expect(over.json).toMatchObject({country: 'DE', user_id: GB_IP})
  })
})

describe('--override in the engine', () => {
  let store: Store
  beforeEach(async () => {
    const path = tempStore()
    await createProducts(path, CATALOG)
    store = openStore(path)
  })
  afterEach(async () => await store.close())

  it('keeps the stored country and recomputes currency and prices', async () => {
    const first = await calculatePrice(await PricingContext.open(store), {country: 'FR', currency: 'USD', products: ['pro_monthly', 'lifetime'], user_id: 'ov1'})
    expect([first.country, first.currency]).toEqual(['FR', 'USD'])
    expect((await store.pricing.userCountries(['ov1']))[0]).toBe('FR')
    const over = await calculatePrice(await PricingContext.open(store), {override: true, products: ['pro_monthly'], user_id: 'ov1'})
    expect([over.country, over.currency]).toEqual(['FR', 'EUR'])
    expect(Object.keys(over.products)).toEqual(['pro_monthly'])
    expect((await store.pricing.userCountries(['ov1']))[0]).toBe('FR')
    // With an IP (US) the stored country still wins.
    const withIp = await calculatePrice(await PricingContext.open(store), {ip: '8.8.8.8', override: true, products: ['lifetime'], user_id: 'ov1'})
    expect(withIp.country).toBe('FR')
    expect((await store.pricing.userCountries(['ov1']))[0]).toBe('FR')
  })

  it('a user adopting an IP lock with --override is not given the anonymous lock\'s country: it is a new quote for a new user', async () => {
    await calculatePrice(await PricingContext.open(store), {country: 'DE', ip: GB_IP, products: ['lifetime']})
    const r = await calculatePrice(await PricingContext.open(store), {ip: GB_IP, override: true, products: ['lifetime'], user_id: 'newbie'})
    expect(r.country).toBe('GB')
  })
})

describe('an id the price calculation hands out can be looked up', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await createProducts(db, CATALOG)
  })

  it('the IP of an anonymous quote is a user id for user get, without a users row per visitor', async () => {
    const anon = await run(db, ['price', '-p', 'pro_monthly', '--ip', GB_IP, '--json'])
    expect(anon.json).toMatchObject({country: 'GB', user_id: GB_IP})
    const got = await run(db, ['user', 'get', GB_IP, '--json'])
    expect(got.code).toBe(0)
    expect(got.json).toEqual({user: {country: 'GB'}})
    expect((await run(db, ['user', 'get', GB_IP])).stdout.trim()).toBe(`user ${GB_IP}: country GB`)
    expect(users(db)).toBe(0)
  })

  it('after a user adopts the IP\'s lock, both the user and the IP resolve; a later anonymous quote of the IP wins', async () => {
    await run(db, ['price', '-p', 'pro_monthly', '--ip', GB_IP, '--json'])
    const adopted = await run(db, ['price', '-u', 'alice', '-p', 'pro_monthly', '--ip', GB_IP, '--json'])
    expect(adopted.json).toMatchObject({country: 'GB', user_id: 'alice'})
    expect((await run(db, ['user', 'get', 'alice', '--json'])).json).toEqual({user: {country: 'GB'}})
    expect((await run(db, ['user', 'get', GB_IP, '--json'])).json).toEqual({user: {country: 'GB'}})
    // The IP's next anonymous visitor gets a new lock; the lookup answers with its country.
    const next = await run(db, ['price', '-p', 'pro_monthly', '--ip', GB_IP, '--country', 'DE', '--json'])
    expect(next.json).toMatchObject({country: 'DE', user_id: GB_IP})
    expect((await run(db, ['user', 'get', GB_IP, '--json'])).json).toEqual({user: {country: 'DE'}})
  })

  it('batch pricing (price --input): anonymous visitors resolve, and no users row is written for them', async () => {
    const ips = ['81.2.69.142', '81.2.69.160', '8.8.8.8', '8.8.4.4']
    const file = join(dirname(db), 'anon.jsonl')
    writeFileSync(file, ips.map((ip) => JSON.stringify({ip, products: ['lifetime']})).join('\n') + '\n')
    const r = await run(db, ['price', '--input', file])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    for (const [i, ip] of ips.entries()) {
      expect(lines[i].user_id).toBe(ip)
      expect((await run(db, ['user', 'get', ip, '--json'])).json).toEqual({user: {country: lines[i].country}})
    }
    expect(users(db)).toBe(0)
  })

  it('getUser answers for a user, an anonymous IP, and nothing else', async () => {
    await run(db, ['price', '-u', 'bob', '-p', 'lifetime', '--country', 'JP', '--json'])
    await run(db, ['price', '-p', 'lifetime', '--ip', '8.8.8.8', '--json'])
    const store = openStore(db)
    try {
      expect(await getUser(store, 'bob')).toMatchObject({country: 'JP', user_id: 'bob'})
      expect(await getUser(store, '8.8.8.8')).toMatchObject({country: 'US', user_id: '8.8.8.8'})
      expect(await getUser(store, '8.8.4.4')).toBeUndefined()
    } finally {
      await store.close()
    }
  })

  it('GET /v1/users/{ip} answers like user get', async () => {
    await run(db, ['price', '-p', 'pro_monthly', '--ip', GB_IP, '--json'])
    const key = (await run(db, ['keys', 'create', '--name', 'identity', '--json'])).json.api_key as string
    const app = buildServer({db, log: () => {}})
    try {
      const base = await app.listen({host: '127.0.0.1', port: 0})
      const r = await fetch(`${base}/v1/users/${GB_IP}`, {headers: {accept: 'application/json', authorization: `Bearer ${key}`}})
      expect(r.status).toBe(200)
      expect(await r.json()).toEqual({user: {country: 'GB'}})
      const unknown = await fetch(`${base}/v1/users/10.0.0.1`, {headers: {accept: 'application/json', authorization: `Bearer ${key}`}})
      expect(unknown.status).toBe(400)
    } finally {
      await app.close()
    }
  })
})

describe('the country of a subscription or charge stays on its record', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1767312000'
  })
  afterEach(() => {
    delete process.env.PRICECTL_NOW
  })

  const subscription = (user: string, id: string, country: string) => [
    'subscriptions', 'create', '--user-id', user, '--origin', 'gateway_a', '--origin-id', id, '--product', 'pro_monthly',
    '--amount', '10', '--currency', 'USD', '--created', '1767225600', '--status', 'active', '--country', country, '--json',
  ]
  const charge = (user: string, id: string, country: string) => [
    'charges', 'create', '--user-id', user, '--origin', 'gateway_a', '--origin-id', id, '--product', 'lifetime',
    '--amount', '199', '--currency', 'USD', '--created', '1767225600', '--status', 'succeeded', '--country', country, '--json',
  ]

  it('does not store a country for a user only known from revenue; user get says where the country is', async () => {
    expect((await runArgs(db, subscription('rev1', 'sub_1', 'DE'))).code).toBe(0)
    expect((await runArgs(db, charge('rev1', 'ch_1', 'DE'))).code).toBe(0)
    const got = await run(db, ['user', 'get', 'rev1', '--json'])
    expect(got.code).toBe(1)
    expect(got.json.error_message).toContain('no user "rev1"')
    expect(got.json.error_message).toContain('the country of its subscriptions and charges stays on those records')
    expect(users(db)).toBe(0)
    // The record keeps it: the report groups by it.
    const report = await run(db, ['revenue', 'report', '--by', 'country', '--json'])
    expect(JSON.stringify(report.json)).toContain('"DE"')
  })

  it('does not move the country a user is priced in', async () => {
    await run(db, ['price', '-u', 'rev2', '-p', 'pro_monthly', '--country', 'FR', '--json'])
    expect((await runArgs(db, subscription('rev2', 'sub_2', 'DE'))).code).toBe(0)
    expect((await runArgs(db, charge('rev2', 'ch_2', 'GB'))).code).toBe(0)
    expect((await run(db, ['user', 'get', 'rev2', '--json'])).json).toEqual({user: {country: 'FR'}})
    expect((await run(db, ['price', '-u', 'rev2', '-p', 'pro_monthly', '--override', '--json'])).json.country).toBe('FR')
  })

  it('over HTTP neither: POST /v1/subscriptions and /v1/charges with a country, then GET /v1/users is 400', async () => {
    await run(db, ['price', '-u', 'rev3', '-p', 'pro_monthly', '--country', 'FR', '--json'])
    const key = (await run(db, ['keys', 'create', '--name', 'identity', '--json'])).json.api_key as string
    const app = buildServer({db, log: () => {}})
    try {
      const base = await app.listen({host: '127.0.0.1', port: 0})
      const headers = {accept: 'application/json', authorization: `Bearer ${key}`, 'content-type': 'application/json'}
      const post = (path: string, body: unknown) => fetch(base + path, {body: JSON.stringify(body), headers, method: 'POST'})
      const common = {amount: 10, country: 'DE', created: 1_767_225_600, currency: 'USD', origin: 'gateway_a'}
      expect((await post('/v1/subscriptions', {...common, origin_id: 'sub_h1', product: 'pro_monthly', status: 'active', user_id: 'rev4'})).status).toBe(200)
      expect((await post('/v1/charges', {...common, origin_id: 'ch_h1', product: 'lifetime', status: 'succeeded', user_id: 'rev4'})).status).toBe(200)
      expect((await post('/v1/charges', {...common, origin_id: 'ch_h2', product: 'lifetime', status: 'succeeded', user_id: 'rev3'})).status).toBe(200)
      expect((await fetch(`${base}/v1/users/rev4`, {headers})).status).toBe(400)
      expect(await (await fetch(`${base}/v1/users/rev3`, {headers})).json()).toEqual({user: {country: 'FR'}})
    } finally {
      await app.close()
    }
  })

  it('an import of a gateway export with a country column writes no user either', async () => {
    const file = join(tempDir(), 'payments-new.csv')
    copyFileSync(join(ROOT, 'fixtures', 'imports', 'payments-new.csv'), file)
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.json.inserted).toBeGreaterThan(0)
    expect(users(db)).toBe(0)
    expect((await run(db, ['user', 'get', 'u_alice', '--json'])).code).toBe(1)
  })
})
