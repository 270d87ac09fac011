import {beforeAll, describe, expect, it} from 'vitest'

import {runArgs, seedCatalog, withStore} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * Issue 16 point 6: what people see of subscriptions and charges names products by api_id
 * and moments as ISO dates (--json keeps the spec's fields), and `get` takes the gateway's
 * id alone when it names one record.
 */
let db: string

async function ok(args: string[]) {
  const r = await runArgs(db, args)
  expect(r.code, r.stderr).toBe(0)
  return r
}

beforeAll(async () => {
  process.env.PRICECTL_NOW = '2026-03-01'
  db = tempStore()
  await withStore(db, seedCatalog)
  const sub = (user: string, origin: string, id: string) =>
    ok(['subscriptions', 'create', '--user-id', user, '--origin', origin, '--origin-id', id, '--product', 'pro_yearly', '--amount', '100', '--currency', 'USD', '--created', '2026-01-10T08:30:00Z', '--status', 'active', '--event-timestamp', '2026-01-10T08:30:05Z'])
  const charge = (user: string, origin: string, id: string) =>
    ok(['charges', 'create', '--user-id', user, '--origin', origin, '--origin-id', id, '--product', 'lifetime', '--amount', '199', '--currency', 'USD', '--created', '2026-02-01', '--status', 'succeeded'])
  await sub('u1', 'gateway_a', 'sub_unique')
  await sub('u1', 'gateway_a', 'sub_twice')
  await sub('u2', 'gateway_b', 'sub_twice')
  await charge('u1', 'gateway_a', 'ch_unique')
  await charge('u1', 'gateway_a', 'ch_twice')
  await charge('u3', 'gateway_c', 'ch_twice')
})

describe('human output: api_ids and ISO dates', () => {
  it('lists show the product api_id and ISO dates; --json keeps the internal product id the spec has', async () => {
    const subs = await ok(['subscriptions', 'list'])
    expect(subs.stdout).toMatch(/│ u1 +│ gateway_a +│ sub_unique +│ pro_yearly +│ active +│ 2026-01-10T08:30:00Z +│/)
    const charges = await ok(['charges', 'list'])
    expect(charges.stdout).toMatch(/│ u1 +│ gateway_a +│ ch_unique +│ lifetime +│ succeeded +│ 2026-02-01T00:00:00Z +│/)
    const json = await ok(['subscriptions', 'list', '--json'])
    expect(json.json.subscriptions[0]).toMatchObject({created: 1_768_033_800, service_product_id: expect.any(Number)})
  })

  it('get and write outputs show the product api_id and ISO dates, never the internal id or epochs', async () => {
    const got = await ok(['charges', 'get', 'u1', 'gateway_a', 'ch_unique'])
    expect(got.stdout).toMatch(/│ product +│ lifetime +│/)
    expect(got.stdout).toMatch(/│ created +│ 2026-02-01T00:00:00Z +│/)
    expect(got.stdout).not.toMatch(/service_product_id|1769904000/)
    const updated = await ok(['subscriptions', 'update', 'u1', 'gateway_a', 'sub_unique', '--status', 'canceled', '--cancel-at', '2026-04-10', '--event-timestamp', '2026-02-20'])
    expect(updated.stdout).toMatch(/│ cancel_at +│ 2026-04-10T00:00:00Z +│/)
    expect(updated.stdout).toMatch(/│ product +│ pro_yearly +│/)
    expect(updated.stdout).not.toMatch(/service_product_id|1775779200/)
  })
})

describe("get by the gateway's id alone", () => {
  it('finds the one record that has it (subscriptions and charges), the same as the full key', async () => {
    const alone = await ok(['subscriptions', 'get', 'sub_unique', '--json'])
    const full = await ok(['subscriptions', 'get', 'u1', 'gateway_a', 'sub_unique', '--json'])
    expect(alone.json).toEqual(full.json)
    expect(alone.json.subscription).toMatchObject({origin: 'gateway_a', origin_id: 'sub_unique', user_id: 'u1'})
    const charge = await ok(['charges', 'get', 'ch_unique'])
    expect(charge.stdout).toMatch(/│ origin_id +│ ch_unique +│/)
  })

  it('exits 2 when several users or gateways have it, listing them and the full form; 1 when none', async () => {
    const subs = await runArgs(db, ['subscriptions', 'get', 'sub_twice'])
    expect(subs.code).toBe(2)
    expect(subs.stderr).toContain('gateway id sub_twice is not unique: 2 subscriptions carry it')
    expect(subs.stderr).toContain('u1 gateway_a sub_twice')
    expect(subs.stderr).toContain('u2 gateway_b sub_twice')
    expect(subs.stderr).toMatch(/name one in full: pricectl subscriptions get u\d gateway_\w sub_twice/)
    const charges = await runArgs(db, ['charges', 'get', 'ch_twice', '--json'])
    expect(charges.code).toBe(2)
    expect(charges.json).toMatchObject({success: false})
    expect(JSON.stringify(charges.json)).toContain('u3 gateway_c ch_twice')
    const none = await runArgs(db, ['charges', 'get', 'ch_nope'])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('no charge has the gateway id ch_nope')
    const two = await runArgs(db, ['charges', 'get', 'u1', 'gateway_a'])
    expect(two.code).toBe(2)
    expect(two.stderr).toContain('give USER_ID ORIGIN ORIGIN_ID (pricectl charges get u1 gateway_a ORIGIN_ID)')
  })
})
