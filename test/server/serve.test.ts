import Database from 'better-sqlite3'
import {writeFileSync} from 'node:fs'
import net from 'node:net'
import {dirname, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildServer, type Server} from '../../src/server/app.js'
import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import type {SqliteStore} from '../../src/store/db.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {dump} from '../helpers/dump.js'
import {withStore} from '../helpers/revenue-fixtures.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * pricectl serve in-process: a real server on an ephemeral loopback port, called with a
 * real HTTP client (fetch), its bodies compared with the commands' --json output for the
 * same store (the commands run in-process through their own connection).
 */

type Reply = {headers: Headers; json: any; status: number}

async function call(base: string, method: string, path: string, options: {body?: unknown; headers?: Record<string, string>; key?: null | string} = {}): Promise<Reply> {
  const headers: Record<string, string> = {accept: 'application/json', ...options.headers}
  if (options.key) headers.authorization = `Bearer ${options.key}`
  let body: string | undefined
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const r = await fetch(base + path, {body, headers, method})
  const text = await r.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = text
  }
  return {headers: r.headers, json, status: r.status}
}

function bodyFile(db: string, name: string, body: unknown): string {
  const file = join(dirname(db), `${name}.json`)
  writeFileSync(file, JSON.stringify(body))
  return file
}

async function newKey(db: string, name = 'test'): Promise<{id: number; key: string; prefix: string}> {
  const r = await run(db, ['keys', 'create', '--name', name, '--json'])
  if (r.code !== 0) throw new Error(r.stdout + r.stderr)
  return {id: r.json.key.id, key: r.json.api_key, prefix: r.json.key.prefix}
}

/** A store with the test catalog, two coupons and a key; a server on it. */
async function start(options: {bodyLimit?: number; trustProxy?: boolean} = {}) {
  const db = tempStore()
  await createProducts(db, CATALOG)
  for (const c of [
    ['--api-id', 'SPRING20', '--name', 'Spring sale', '--type', 'percentage', '--value', '20'],
    ['--api-id', 'FIVEOFF', '--name', 'Five off', '--type', 'fixed_amount', '--value', '5', '--currency', 'USD'],
  ]) {
    const r = await run(db, ['coupons', 'create', ...c, '--json'])
    if (r.code !== 0) throw new Error(r.stdout + r.stderr)
  }
  const {key, prefix} = await newKey(db)
  const logs: string[] = []
  const app = buildServer({db, log: (t) => logs.push(t), ...options})
  const base = await app.listen({host: '127.0.0.1', port: 0})
  return {app, base, db, key, logs, prefix}
}

const SELLER_REQUEST = {country: 'DE', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: 'seller-user-1'}

describe('pricectl serve: the spec endpoints over HTTP', () => {
  let s: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    s = await start()
  })
  afterAll(async () => {
    await s.app.close()
  })

  it('GET /healthz answers without a key', async () => {
    const r = await call(s.base, 'GET', '/healthz')
    expect(r.status).toBe(200)
    expect(r.json).toEqual({message: 'ok', schema_version: SCHEMA_VERSION, success: true})
    expect((await fetch(s.base + '/healthz', {method: 'HEAD'})).status).toBe(200)
  })

  it('a client written the way sellers integrate works unchanged', async () => {
    // Price for the checkout page, then the gateway product to charge.
    const price = await call(s.base, 'POST', '/v1/prices', {body: SELLER_REQUEST, key: s.key})
    expect(price.status).toBe(200)
    expect(price.headers.get('content-type')).toMatch(/^application\/json/)
    const gatewayPrice = price.json.products.pro_monthly.integrations.gateway_a
    expect(gatewayPrice.currency).toBe('EUR')
    expect(gatewayPrice.amount).toBe(899) // gateway_a takes minor units; the DE country price is 8.99 EUR
    // Tax (docs/tax.md), after the spec's fields: the store never opted in, so 8.99 is shown net and VAT is added.
    expect(gatewayPrice.tax_behavior).toBe('exclusive')
    expect(price.json.products.pro_monthly.tax).toEqual({behavior: 'exclusive', country: 'DE', display: 'zzgl. MwSt.', gross: 10.7, label: 'VAT', net: 8.99, rate: 19, tax: 1.71})
    const product = await call(s.base, 'GET', '/v1/products/pro_monthly', {key: s.key})
    expect(product.status).toBe(200)
    const integration = product.json.integrations.find((i: {type: string}) => i.type === 'gateway_a_with_interval')
    expect(integration).toEqual({gateway_a_product_id: 'prod_pro', interval: 'month', interval_count: 1, type: 'gateway_a_with_interval'})

    // The same store through the command: the quote is the one locked over HTTP.
    const cli = await run(s.db, ['price', '--user-id', 'seller-user-1', '--product', 'pro_monthly', '--integration', 'gateway_a', '--json'])
    expect(cli.code).toBe(0)
    expect(price.json).toEqual(cli.json)
    // And the second HTTP call returns the locked quote.
    expect((await call(s.base, 'POST', '/v1/prices', {body: SELLER_REQUEST, key: s.key})).json).toEqual(price.json)
  })

  it('a quote locked by the command is the one the server returns', async () => {
    const cli = await run(s.db, ['price', '-u', 'cli-first', '-p', 'pro_monthly,pro_yearly', '--country', 'JP', '--integration', 'gateway_a', '--integration', 'gateway_c', '--json'])
    expect(cli.code).toBe(0)
    const http = await call(s.base, 'POST', '/v1/prices', {body: {integrations: ['gateway_a', 'gateway_c'], products: ['pro_monthly', 'pro_yearly'], user_id: 'cli-first'}, key: s.key})
    expect(http.status).toBe(200)
    expect(http.json).toEqual(cli.json)
  })

  it('new users priced at the same moment are group-committed: one lock each, the quote the command shows, a user asked twice gets one quote', async () => {
    const users = Array.from({length: 12}, (_, i) => `group-${i}`)
    const body = (u: string, i: number) => ({country: ['DE', 'JP', 'BR', 'US'][i % 4], integrations: ['gateway_a'], products: ['pro_monthly', 'pro_yearly'], user_id: u})
    // Each user twice, all at once: the second request of a user gets the lock the first wrote.
    const answers = await Promise.all([...users, ...users].map((u, i) => call(s.base, 'POST', '/v1/prices', {body: body(u, i % users.length), key: s.key})))
    for (const a of answers) expect(a.status).toBe(200)
    for (let i = 0; i < users.length; i++) expect(answers[i + users.length].json).toEqual(answers[i].json)
    const locks = new Database(s.db, {readonly: true})
    try {
      const n = locks.prepare(`SELECT count(*) FROM locks WHERE lock_key LIKE 'group-%'`).pluck().get()
      expect(n).toBe(users.length)
    } finally {
      locks.close()
    }
    for (const [i, u] of users.entries()) {
      const cli = await run(s.db, ['price', '-u', u, '-p', 'pro_monthly,pro_yearly', '--integration', 'gateway_a', '--json'])
      expect(cli.json, u).toEqual(answers[i].json)
    }
  })

  it('a group with a request that fails only when its quote is made: the others get their locks, it gets its error and leaves none', async () => {
    const users = Array.from({length: 8}, (_, i) => `mixed-${i}`)
    // An unknown package is found only while a new quote is made (the first attempt, which writes nothing, stops before).
    const body = (u: string, i: number) => (i === 3 ? {country: 'DE', package_id: 'nope', user_id: u} : {country: 'DE', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: u})
    const answers = await Promise.all(users.map((u, i) => call(s.base, 'POST', '/v1/prices', {body: body(u, i), key: s.key})))
    for (const [i, a] of answers.entries()) expect(a.status, users[i]).toBe(i === 3 ? 404 : 200)
    expect(answers[3].json.message).toMatch(/unknown package "nope"/)
    const locks = new Database(s.db, {readonly: true})
    try {
      expect(locks.prepare(`SELECT lock_key FROM locks WHERE lock_key LIKE 'mixed-%' ORDER BY lock_key`).pluck().all()).toEqual(users.filter((_, i) => i !== 3))
    } finally {
      locks.close()
    }
  })

  it('every read endpoint answers what the command prints with --json', async () => {
    await call(s.base, 'POST', '/v1/prices', {body: {country: 'FR', products: ['lifetime'], user_id: 'reader'}, key: s.key})
    const pairs: [string, string[]][] = [
      ['/v1/products', ['products', 'list']],
      ['/v1/products/pro_monthly', ['products', 'get', 'pro_monthly']],
      ['/v1/products/lifetime', ['products', 'get', 'lifetime']],
      ['/v1/coupons', ['coupons', 'list']],
      ['/v1/coupons?name=spring', ['coupons', 'list', '--name', 'spring']],
      ['/v1/coupons?status=NOT_ACTIVE', ['coupons', 'list', '--status', 'NOT_ACTIVE']],
      ['/v1/users/reader', ['user', 'get', 'reader']],
    ]
    for (const [path, args] of pairs) {
      const http = await call(s.base, 'GET', path, {key: s.key})
      const cli = await run(s.db, [...args, '--json'])
      expect(cli.code, args.join(' ')).toBe(0)
      expect(http.status, path).toBe(200)
      expect(http.json, path).toEqual(cli.json)
    }
    expect((await call(s.base, 'GET', '/v1/coupons?name=spring', {key: s.key})).json.coupons.map((c: {api_id: string}) => c.api_id)).toEqual(['SPRING20'])
  })

  it('GET /v1/users/{id} of an unknown user is 400 with success false and error_message, as the command says', async () => {
    const http = await call(s.base, 'GET', '/v1/users/ghost', {key: s.key})
    expect(http.status).toBe(400)
    const cli = await run(s.db, ['user', 'get', 'ghost', '--json'])
    expect(cli.code).toBe(1)
    expect(http.json).toEqual(cli.json)
    expect(http.json).toEqual({error_message: expect.stringContaining('no user "ghost"'), message: expect.stringContaining('no user "ghost"'), success: false})
  })

  it('path parameters are URL-decoded (user ids with spaces and slashes)', async () => {
    await call(s.base, 'POST', '/v1/prices', {body: {country: 'BR', products: ['pro_monthly'], user_id: 'team/a b'}, key: s.key})
    const http = await call(s.base, 'GET', `/v1/users/${encodeURIComponent('team/a b')}`, {key: s.key})
    expect(http.status).toBe(200)
    expect(http.json).toEqual({user: {country: 'BR'}})
    // The longest id the schemas accept (255 characters), non-ASCII, in a path.
    const long = 'ü'.repeat(255)
    expect((await call(s.base, 'POST', '/v1/prices', {body: {country: 'AT', products: ['pro_monthly'], user_id: long}, key: s.key})).status).toBe(200)
    const got = await call(s.base, 'GET', `/v1/users/${encodeURIComponent(long)}`, {key: s.key})
    expect(got.status).toBe(200)
    expect(got.json).toEqual({user: {country: 'AT'}})
  })

  describe('authentication', () => {
    it('no key, a wrong key or a malformed header: 401 with the spec error body, nothing written', async () => {
      // Last use of the key by earlier tests is written now, not by the 5 s timer in the middle of this test.
      await s.app.pricectl.keys.flush()
      const before = dump(s.db)
      const wrong = 'pk_' + 'A'.repeat(43)
      const attempts: Record<string, string>[] = [{}, {authorization: `Bearer ${wrong}`}, {'x-api-key': wrong}, {authorization: `Basic ${s.key}`}, {authorization: 'Bearer'}]
      for (const headers of attempts) {
        const r = await call(s.base, 'POST', '/v1/prices', {body: {...SELLER_REQUEST, user_id: 'intruder'}, headers})
        expect(r.status, JSON.stringify(headers)).toBe(401)
        expect(r.json).toEqual({message: expect.stringMatching(/API key/), success: false})
        expect(r.headers.get('www-authenticate')).toContain('Bearer')
      }
      for (const path of ['/v1/products', '/v1/products/pro_monthly', '/v1/coupons', '/v1/users/reader']) {
        expect((await call(s.base, 'GET', path)).status, path).toBe(401)
      }
      expect(dump(s.db)).toEqual(before)
    })

    it('X-Api-Key works like Authorization: Bearer', async () => {
      const r = await call(s.base, 'GET', '/v1/products', {headers: {'x-api-key': s.key}})
      expect(r.status).toBe(200)
    })

    it('a key revoked by the command stops working on the very next request', async () => {
      const k = await newKey(s.db, 'short-lived')
      expect((await call(s.base, 'GET', '/v1/products', {key: k.key})).status).toBe(200)
      const revoked = await run(s.db, ['keys', 'revoke', k.prefix, '--yes', '--json'])
      expect(revoked.code).toBe(0)
      const r = await call(s.base, 'GET', '/v1/products', {key: k.key})
      expect(r.status).toBe(401)
      expect(r.json).toEqual({message: expect.stringContaining('invalid or revoked API key'), success: false})
      // Other keys are untouched.
      expect((await call(s.base, 'GET', '/v1/products', {key: s.key})).status).toBe(200)
    })
  })

  describe('errors', () => {
    it('unknown routes are 404 with the error body', async () => {
      for (const [method, path] of [
        ['GET', '/v1/nothing'],
        ['POST', '/v1/price'],
        ['DELETE', '/v1/products/pro_monthly'],
        ['GET', '/v2/products'],
      ]) {
        const r = await call(s.base, method, path, {key: s.key})
        expect(r.status, `${method} ${path}`).toBe(404)
        expect(r.json).toEqual({message: expect.stringContaining(`no endpoint ${method}`), success: false})
      }
    })

    it('malformed paths get the error body too', async () => {
      const bad = await call(s.base, 'GET', '/v1/users/%E0%A4%A', {key: s.key})
      expect(bad.status).toBe(400)
      expect(bad.json).toEqual({message: expect.stringContaining('not a valid url component'), success: false})
      const long = await call(s.base, 'GET', `/v1/users/${'a'.repeat(5000)}`, {key: s.key})
      expect(long.status).toBe(414)
      expect(long.json.success).toBe(false)
      expect(long.json.message.length).toBeLessThan(300)
    })

    it('unknown records are 404 naming what is missing', async () => {
      const product = await call(s.base, 'GET', '/v1/products/nope', {key: s.key})
      expect(product.status).toBe(404)
      expect(product.json).toEqual({message: 'no product with api_id "nope" (list them with: pricectl products list)', success: false})
      const cli = await run(s.db, ['products', 'get', 'nope', '--json'])
      expect(product.json).toEqual(cli.json)
      const sub = await call(s.base, 'GET', '/v1/subscriptions/u9/gateway_a/sub_9', {key: s.key})
      expect(sub.status).toBe(404)
      expect(sub.json.message).toContain('no subscription u9 gateway_a sub_9')
      // A product, coupon or package named in a request body is not found either: 404, as the command exits 1.
      const before = dump(s.db)
      for (const [body, message] of [
        [{products: ['nope'], user_id: 'bad-2'}, /unknown product "nope"/],
        [{coupons: {pro_monthly: 'NOPE'}, products: ['pro_monthly'], user_id: 'bad-5'}, /coupons.pro_monthly: unknown coupon "NOPE"/],
        [{country: 'US', package_id: 'nope', user_id: 'bad-6'}, /unknown package "nope"/],
      ] as const) {
        const r = await call(s.base, 'POST', '/v1/prices', {body, key: s.key})
        expect(r.status, JSON.stringify(body)).toBe(404)
        expect(r.json.message).toMatch(message)
      }
      expect(dump(s.db)).toEqual(before)
    })

    it('invalid bodies are 400 naming the field and the value, and write nothing', async () => {
      const before = dump(s.db)
      const cases: [string, string, unknown, RegExp][] = [
        ['POST', '/v1/prices', {country: 'XX', products: ['pro_monthly'], user_id: 'bad-1'}, /country: unknown country "XX"/],
        ['POST', '/v1/prices', {products: ['pro_monthly'], user_id: 'bad-3', userid: 'x'}, /userid/],
        ['POST', '/v1/prices', {products: ['pro_monthly']}, /user_id: give user_id or ip/],
        ['POST', '/v1/prices', {integrations: ['gateway_z'], products: ['pro_monthly'], user_id: 'bad-4'}, /integrations\[0\]: unknown gateway "gateway_z"/],
        ['POST', '/v1/products', {api_id: 'new', base_px: 'ten', interval: 'month', interval_count: 1, name: 'New'}, /base_px: .*"ten"/],
        ['POST', '/v1/products', {}, /api_id: is required/],
        ['POST', '/v1/products/pro_monthly', {interval: 'fortnight'}, /interval: unknown interval "fortnight"/],
        ['POST', '/v1/products/pro_monthly', {api_id: 'renamed'}, /api_id: "renamed" cannot replace "pro_monthly"/],
        ['POST', '/v1/subscriptions', {amount: 9.99, created: 1793000000, currency: 'EUR', origin: 'gateway_a', origin_id: 's1', product: 'pro_monthly', status: 'paused', user_id: 'u1'}, /status: unknown status "paused"/],
        ['POST', '/v1/subscriptions', {amount: 9.99, created: 1793000000, currency: 'EUR', origin: 'gateway_a', origin_id: 's1', product: 'pro_monthly', status: 'active'}, /user_id/],
        ['POST', '/v1/charges', {amount: -1, created: 1793000000, currency: 'EUR', origin: 'gateway_a', origin_id: 'c1', product: 'lifetime', status: 'succeeded', user_id: 'u1'}, /amount: must not be negative, got -1/],
        ['POST', '/v1/subscriptions/u1/gateway_z/s1', {status: 'active'}, /origin: unknown origin "gateway_z"/],
        ['POST', '/v1/prices', '{"user_id": "u1", ', /body: malformed JSON/],
        ['POST', '/v1/prices', '[1, 2]', /body: expected a JSON object, got an array/],
        ['GET', '/v1/coupons?nam=spring', undefined, /unknown query parameter "nam"/],
        ['GET', '/v1/coupons?status=ON', undefined, /status: unknown coupon status "ON"/],
      ]
      for (const [method, path, body, message] of cases) {
        const r = await call(s.base, method, path, {body, key: s.key})
        expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400)
        expect(r.json.success).toBe(false)
        expect(r.json.message).toMatch(message)
      }
      expect(dump(s.db)).toEqual(before)
    })

    it('a bad event header is 400 naming the header', async () => {
      const r = await call(s.base, 'POST', '/v1/charges', {
        body: {amount: 1, created: 1793000000, currency: 'USD', origin: 'gateway_a', origin_id: 'ev', product: 'lifetime', status: 'succeeded', user_id: 'u1'},
        headers: {'x-event-timestamp': 'yesterday'},
        key: s.key,
      })
      expect(r.status).toBe(400)
      expect(r.json.message).toMatch(/X-Event-Timestamp.*"yesterday"/)
    })

    it('a body that is not JSON is 415 and says what to send', async () => {
      const r = await call(s.base, 'POST', '/v1/prices', {body: 'user_id=u1', headers: {'content-type': 'application/x-www-form-urlencoded'}, key: s.key})
      expect(r.status).toBe(415)
      expect(r.json).toEqual({message: expect.stringContaining('Content-Type: application/json'), success: false})
    })

    it('an oversized body is 413 and writes nothing', async () => {
      const before = dump(s.db)
      const huge = {...SELLER_REQUEST, features: {blob: 'x'.repeat(900)}, user_id: 'huge'}
      const features: Record<string, string> = {}
      for (let i = 0; i < 1500; i++) features[`f${i}`] = 'x'.repeat(900)
      const r = await call(s.base, 'POST', '/v1/prices', {body: {...huge, features}, key: s.key})
      expect(r.status).toBe(413)
      expect(r.json).toEqual({message: expect.stringContaining('request body is over 1048576 bytes'), success: false})
      expect(dump(s.db)).toEqual(before)
    })
  })

  it('get_ip_from_request uses the connection address and ignores X-Forwarded-For without --trust-proxy', async () => {
    const r = await call(s.base, 'POST', '/v1/prices', {body: {get_ip_from_request: true, products: ['pro_monthly']}, headers: {'x-forwarded-for': '81.2.69.142'}, key: s.key})
    expect(r.status).toBe(200)
    expect(r.json.user_id).toBe('127.0.0.1')
    expect(r.json.country).toBe('US') // a loopback address has no country: the store default
  })

  it('sees catalog changes at once: written through the server, or by a command on another connection', async () => {
    const price = async (user: string) => (await call(s.base, 'POST', '/v1/prices', {body: {country: 'US', products: ['pro_yearly'], user_id: user}, key: s.key})).json.products.pro_yearly.price
    expect(await price('cache-1')).toBe(99)
    const builds = s.app.pricectl.contexts.builds
    for (let i = 0; i < 5; i++) await price('cache-1')
    expect(s.app.pricectl.contexts.builds).toBe(builds) // nothing changed: the context is reused

    const updated = await call(s.base, 'POST', '/v1/products/pro_yearly', {body: {base_px: 109}, key: s.key})
    expect(updated.status).toBe(200)
    expect(await price('cache-2')).toBe(109)

    const cli = await run(s.db, ['products', 'update', 'pro_yearly', '--base-px', '119', '--json'])
    expect(cli.code).toBe(0)
    expect(await price('cache-3')).toBe(119)
    // Locks keep what they quoted.
    expect(await price('cache-1')).toBe(99)
    expect(await price('cache-2')).toBe(109)

    const created = await call(s.base, 'POST', '/v1/products', {body: {api_id: 'added_later', base_px: 5, interval: 'week', interval_count: 1, name: 'Added later'}, key: s.key})
    expect(created.status).toBe(200)
    expect((await call(s.base, 'POST', '/v1/prices', {body: {country: 'US', products: ['added_later'], user_id: 'cache-4'}, key: s.key})).json.products.added_later.price).toBe(5)
  })

  it('writes one access line per request to the log, with the key prefix', async () => {
    s.app.pricectl.accessLog.flush()
    const text = s.logs.join('')
    expect(text).toMatch(new RegExp(`^\\S+ 127\\.0\\.0\\.1 "POST /v1/prices" 200 \\d+ \\d+\\.\\dms ${s.prefix.replace(/[-_]/g, '\\$&')}$`, 'm'))
    expect(text).toMatch(/"POST \/v1\/prices" 401 \d+ \S+ -$/m)
    expect(text).toMatch(/"GET \/v1\/nothing" 404 /)
    expect(text).not.toContain(s.key)
  })
})

describe('pricectl serve: writes answer what the commands print', () => {
  // Two stores with the same history: one written over HTTP, the other by the commands.
  let http: Awaited<ReturnType<typeof start>>
  let cliDb: string
  beforeAll(async () => {
    http = await start()
    cliDb = tempStore()
    await createProducts(cliDb, CATALOG)
  })
  afterAll(async () => {
    await http.app.close()
  })

  const event = (id: string, ts: number) => ({http: {'x-event-id': id, 'x-event-timestamp': String(ts)}, cli: ['--event-id', id, '--event-timestamp', String(ts)]})

  async function both(method: string, path: string, body: unknown, cliArgs: string[], headers: Record<string, string> = {}) {
    const h = await call(http.base, method, path, {body, headers, key: http.key})
    const c = await run(cliDb, [...cliArgs, ...(body === undefined ? [] : ['--body', bodyFile(cliDb, `b${Math.random().toString(36).slice(2)}`, body)]), '--json'])
    expect(c.code, `${cliArgs.join(' ')}: ${c.stdout}`).toBe(0)
    expect(h.status, `${method} ${path}: ${JSON.stringify(h.json)}`).toBe(200)
    // The command adds its price impact (docs/change-control.md); the API's writes do not report one (yet).
    const {dry_run: _dryRun, impact: _impact, ...cli} = c.json
    expect(h.json).toEqual(cli)
    return h.json
  }

  it('products: create, update (the spec leaves its response open: the product as Get returns it)', async () => {
    const body = {
      api_id: 'team_monthly',
      base_px: 29,
      country_prices: [{amount: 25, country: 'DE', currency: 'EUR'}],
      integrations: [{gateway_c_plan_id: 'team-plan', type: 'gateway_c'}],
      interval: 'month',
      interval_count: 1,
      name: 'Team monthly',
    }
    const created = await both('POST', '/v1/products', body, ['products', 'create'])
    expect(created).toEqual({
      api_id: 'team_monthly',
      base_px: 29,
      baseline_id: null,
      country_prices: [{country: 'DE', currency: 'EUR', local_price: 25}],
      integrations: [{gateway_c_plan_id: 'team-plan', type: 'gateway_c'}],
      message: 'created product team_monthly',
      name: 'Team monthly',
      success: true,
    })
    const updated = await both('POST', '/v1/products/team_monthly', {base_px: 31, country_prices: [{amount: 27, country: 'FR', currency: 'EUR'}]}, ['products', 'update', 'team_monthly', '--yes'])
    expect(updated.country_prices).toEqual([{country: 'FR', currency: 'EUR', local_price: 27}])
    expect(await both('GET', '/v1/products/team_monthly', undefined, ['products', 'get', 'team_monthly'])).toEqual({...updated, message: 'product team_monthly'})
  })

  it('subscriptions: create, update, get, delete, with events from X-Event-Id / X-Event-Timestamp', async () => {
    const sub = {amount: 9.99, created: 1793000000, currency: 'EUR', origin: 'gateway_a', origin_id: 'sub_1', product: {gateway_a_product_id: 'prod_pro', interval: 'month', interval_count: 1, type: 'gateway_a_with_interval'}, status: 'active', user_id: 'u1'}
    let e = event('evt_1', 1793000000)
    const created = await both('POST', '/v1/subscriptions', sub, ['subscriptions', 'create', ...e.cli], e.http)
    expect(created.record).toMatchObject({latest_event_id: 'evt_1', latest_event_timestamp: 1793000000, origin_id: 'sub_1', status: 'active', type: 'subscription', user_id: 'u1'})

    e = event('evt_2', 1793000100)
    const canceled = await both('POST', '/v1/subscriptions/u1/gateway_a/sub_1', {cancel_at: 1795000000, canceled_at: 1793000100, status: 'canceled'}, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', ...e.cli], e.http)
    expect(canceled.record).toMatchObject({cancel_at: 1795000000, status: 'canceled'})

    // An older event changes nothing, over HTTP as in the command.
    e = event('evt_0', 1792000000)
    const stale = await both('POST', '/v1/subscriptions/u1/gateway_a/sub_1', {status: 'active'}, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', ...e.cli], e.http)
    expect(stale.message).toContain('stale event ignored')

    const got = await both('GET', '/v1/subscriptions/u1/gateway_a/sub_1', undefined, ['subscriptions', 'get', 'u1', 'gateway_a', 'sub_1'])
    expect(got.subscription).toMatchObject({service_product_id2: expect.any(Number), status: 'canceled'})

    e = event('evt_3', 1793000200)
    const h = await call(http.base, 'DELETE', '/v1/subscriptions/u1/gateway_a/sub_1', {headers: e.http, key: http.key})
    const c = await run(cliDb, ['subscriptions', 'delete', 'u1', 'gateway_a', 'sub_1', '--yes', ...e.cli, '--json'])
    expect(h.status).toBe(200)
    expect(h.json).toEqual(c.json)
    expect(h.json.message).toContain('subscription deleted')
    expect((await call(http.base, 'GET', '/v1/subscriptions/u1/gateway_a/sub_1', {key: http.key})).status).toBe(404)
  })

  it('charges: create, update, get', async () => {
    const charge = {amount: 49, created: 1793000000, currency: 'USD', metadata: {invoice: 'in_1'}, origin: 'gateway_c', origin_id: 'ch_1', product: 'lifetime', status: 'pending', user_id: 'u2'}
    let e = event('evt_c1', 1793000000)
    const created = await both('POST', '/v1/charges', charge, ['charges', 'create', ...e.cli], e.http)
    expect(created.record).toMatchObject({amount: 49, amount_usd: 49, status: 'pending', type: 'charge'})
    e = event('evt_c2', 1793000050)
    const updated = await both('POST', '/v1/charges/u2/gateway_c/ch_1', {status: 'succeeded'}, ['charges', 'update', 'u2', 'gateway_c', 'ch_1', ...e.cli], e.http)
    expect(updated.record.status).toBe('succeeded')
    const got = await both('GET', '/v1/charges/u2/gateway_c/ch_1', undefined, ['charges', 'get', 'u2', 'gateway_c', 'ch_1'])
    expect(got.charge).toEqual(updated.record)
  })

  it('a HUF charge and subscription of 6500.50 are kept as charged (two ISO decimals), over HTTP as in the commands', async () => {
    let e = event('evt_h1', 1793000000)
    const charge = {amount: 6500.5, created: 1793000000, currency: 'HUF', origin: 'gateway_a', origin_id: 'ch_huf', product: 'lifetime', status: 'succeeded', user_id: 'u4'}
    const created = await both('POST', '/v1/charges', charge, ['charges', 'create', ...e.cli], e.http)
    expect(created.record).toMatchObject({amount: 6500.5, currency: 'HUF'})
    const got = await both('GET', '/v1/charges/u4/gateway_a/ch_huf', undefined, ['charges', 'get', 'u4', 'gateway_a', 'ch_huf'])
    expect(got.charge.amount).toBe(6500.5)
    e = event('evt_h2', 1793000000)
    const sub = {amount: 6500.5, created: 1793000000, currency: 'HUF', origin: 'gateway_a', origin_id: 'sub_huf', product: 'pro_monthly', status: 'active', user_id: 'u4'}
    const s = await both('POST', '/v1/subscriptions', sub, ['subscriptions', 'create', ...e.cli], e.http)
    expect(s.record).toMatchObject({amount: 6500.5, currency: 'HUF'})
    for (const db of [http.db, cliDb]) {
      const minor = await withStore(db, (d) => [d.prepare("SELECT amount_minor FROM charges WHERE origin_id = 'ch_huf'").pluck().get(), d.prepare("SELECT amount_minor FROM subscriptions WHERE origin_id = 'sub_huf'").pluck().get()])
      expect(minor).toEqual([650_050, 650_050])
    }
  })

  it('a charge and a subscription take their tax (pricectl\'s addition to the spec bodies), over HTTP as in the commands', async () => {
    // 10.70 USD incl. 1.70 tax (a 18.9% rate): the record keeps gross, tax and net; the USD split is exact.
    let e = event('evt_t1', 1793000000)
    const charge = {amount: 10.7, created: 1793000000, currency: 'USD', origin: 'gateway_a', origin_id: 'ch_tax', product: 'lifetime', status: 'succeeded', tax: 1.7, user_id: 'u5'}
    const created = await both('POST', '/v1/charges', charge, ['charges', 'create', ...e.cli], e.http)
    expect(created.record).toMatchObject({amount: 10.7, amount_usd: 10.7, net: 9, net_usd: 9, tax: 1.7, tax_usd: 1.7})
    e = event('evt_t2', 1793000050)
    const updated = await both('POST', '/v1/charges/u5/gateway_a/ch_tax', {amount: 12.84, tax: 2.04}, ['charges', 'update', 'u5', 'gateway_a', 'ch_tax', ...e.cli], e.http)
    expect(updated.record).toMatchObject({amount: 12.84, net: 10.8, tax: 2.04})
    e = event('evt_t3', 1793000000)
    const sub = {amount: 11.9, created: 1793000000, currency: 'USD', origin: 'gateway_a', origin_id: 'sub_tax', product: 'pro_monthly', status: 'active', tax: 1.9, user_id: 'u5'}
    const s = await both('POST', '/v1/subscriptions', sub, ['subscriptions', 'create', ...e.cli], e.http)
    expect(s.record).toMatchObject({amount: 11.9, amount_usd_monthly: 11.9, net: 10, net_usd_monthly: 10, tax: 1.9})
    // A tax above the amount is refused alike (400 over HTTP, exit 2 in the command), nothing written.
    const bad = await call(http.base, 'POST', '/v1/charges', {body: {...charge, origin_id: 'ch_bad', tax: 10.71}, key: http.key})
    expect(bad.status).toBe(400)
    expect(bad.json.message).toMatch(/tax: 10\.71 is more than the amount 10\.7/)
  })

  it('a revenue write without event headers gets a generated event, like the command without --event-id', async () => {
    const r = await call(http.base, 'POST', '/v1/charges', {
      body: {amount: 5, created: 1793000000, currency: 'USD', origin: 'gateway_b', origin_id: 'ch_auto', product: 'lifetime', status: 'succeeded', user_id: 'u3'},
      key: http.key,
    })
    expect(r.status).toBe(200)
    expect(r.json.record.latest_event_id).toMatch(/^evt_/)
  })
})

describe('pricectl serve --trust-proxy', () => {
  let s: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    s = await start({bodyLimit: 2048, trustProxy: true})
  })
  afterAll(async () => {
    await s.app.close()
  })

  it('takes get_ip_from_request from X-Forwarded-For: the client is the first address', async () => {
    const r = await call(s.base, 'POST', '/v1/prices', {body: {get_ip_from_request: true, products: ['pro_monthly']}, headers: {'x-forwarded-for': '81.2.69.142, 10.0.0.1'}, key: s.key})
    expect(r.status).toBe(200)
    expect(r.json.user_id).toBe('81.2.69.142')
    const cli = await run(s.db, ['price', '--ip', '81.2.69.142', '-p', 'pro_monthly', '--json'])
    expect(cli.json).toEqual(r.json)
    s.app.pricectl.accessLog.flush()
    expect(s.logs.join('')).toMatch(/ 81\.2\.69\.142 "POST \/v1\/prices" 200 /)
  })

  it('refuses an X-Forwarded-For that is not an address', async () => {
    const before = dump(s.db)
    const r = await call(s.base, 'POST', '/v1/prices', {body: {get_ip_from_request: true, products: ['pro_monthly']}, headers: {'x-forwarded-for': 'not-an-ip'}, key: s.key})
    expect(r.status).toBe(400)
    expect(r.json.message).toContain('"not-an-ip"')
    expect(dump(s.db)).toEqual(before)
  })

  it('--body-limit sets the 413 threshold', async () => {
    const r = await call(s.base, 'POST', '/v1/prices', {body: {features: {note: 'x'.repeat(3000)}, products: ['pro_monthly'], user_id: 'big'}, key: s.key})
    expect(r.status).toBe(413)
    expect(r.json.message).toContain('over 2048 bytes')
  })
})

describe('buildServer lifecycle', () => {
  it('close() lets a request in flight finish (telling the client not to reuse the connection), then closes the store', async () => {
    const s = await start()
    const port = Number(new URL(s.base).port)
    const body = JSON.stringify(SELLER_REQUEST)
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    socket.on('data', (d) => (text += d))
    const ended = new Promise((resolve) => socket.on('close', resolve))
    socket.write(`POST /v1/prices HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 15)}`)
    await new Promise((r) => setTimeout(r, 100))
    const closed = s.app.close()
    await new Promise((r) => setTimeout(r, 100))
    expect((s.app.pricectl.store as SqliteStore).db.open).toBe(true)
    socket.write(body.slice(15))
    await ended
    await closed
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(text.toLowerCase()).toContain('connection: close')
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).products.pro_monthly.integrations.gateway_a.amount).toBe(899)
    expect((s.app.pricectl.store as SqliteStore).db.open).toBe(false)
  })

  it('close() closes the store', async () => {
    const db = tempStore()
    const app: Server = buildServer({db, log: () => {}})
    await app.listen({host: '127.0.0.1', port: 0})
    expect((app.pricectl.store as SqliteStore).db.open).toBe(true)
    await app.close()
    expect((app.pricectl.store as SqliteStore).db.open).toBe(false)
  })
})
