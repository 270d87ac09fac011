import {beforeEach, describe, expect, it} from 'vitest'

import {run, seededStore, tempStore} from '../helpers/run.js'
import {at, count, coupon, must, segCatalog, steps, withBody} from '../helpers/segments-fixtures.js'

describe('campaigns', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    // Seeded once per worker and copied for each test (test/helpers/run.ts seededStore).
    await seededStore(db, 'campaigns:catalog', async (store) => {
      await segCatalog(store)
      await must(store, ['coupons', 'create'], coupon('SPRING25', {coupon_type: 'percentage', value: 25}))
      await must(store, ['audiences', 'create'], {api_id: 'students', name: 'Students', rules: ['feature student eq yes']})
    })
  })

  it('create from flags, get, list with the state now, delete', async () => {
    const r = await at('2026-03-10T12:00:00Z', () =>
      run(db, ['campaigns', 'create', '--api-id', 'spring', '--name', 'Spring', '--coupon', 'SPRING25', '--country', 'DE,AT', '--product', 'basic', '--active-from', '2026-03-01', '--active-till', '2026-03-31', '--yes', '--json']),
    )
    expect(r.code).toBe(0)
    expect(r.json.campaign).toMatchObject({
      active_from: '2026-03-01',
      active_till: '2026-03-31',
      api_id: 'spring',
      audience: null,
      countries: ['DE', 'AT'],
      coupon: 'SPRING25',
      name: 'Spring',
      products: ['basic'],
      state: 'active',
    })
    expect((await at('2026-02-01', () => run(db, ['campaigns', 'get', 'spring', '--json']))).json.campaign.state).toBe('scheduled')
    expect((await at('2026-04-01', () => run(db, ['campaigns', 'get', 'spring', '--json']))).json.campaign.state).toBe('ended')
    await run(db, ['coupons', 'update', 'SPRING25', '--status', 'NOT_ACTIVE'])
    const list = await at('2026-03-10', () => run(db, ['campaigns', 'list', '--json']))
    expect(list.json.campaigns.map((c: {state: string}) => c.state)).toEqual(['coupon_not_active'])
    const table = await at('2026-03-10', () => run(db, ['campaigns', 'list']))
    expect(table.stdout).toContain('countries DE, AT')
    expect(table.stdout).toContain('2026-03-01 .. 2026-03-31')
    const del = await run(db, ['campaigns', 'delete', 'spring', '--yes', '--json'])
    expect(del.json).toMatchObject({api_id: 'spring', success: true})
    expect(count(db, 'campaigns')).toBe(0)
    expect(count(db, 'coupons')).toBe(1)
  })

  it.each([
    // A coupon, audience or product that does not exist: exit 1 (not found); a bad value: exit 2.
    [{api_id: 'c', coupon: 'NOPE', name: 'C'}, 'coupon: unknown coupon "NOPE"', 1],
    [{api_id: 'c', audience: 'ghosts', coupon: 'SPRING25', name: 'C'}, 'audience: unknown audience "ghosts"', 1],
    [{api_id: 'c', coupon: 'SPRING25', name: 'C', products: ['nope']}, 'products[0]: unknown product "nope"', 1],
    [{api_id: 'c', countries: ['ZZ'], coupon: 'SPRING25', name: 'C'}, 'countries[0]: unknown country "ZZ"', 2],
    [{active_from: '2026-05-01', active_till: '2026-04-01', api_id: 'c', coupon: 'SPRING25', name: 'C'}, 'active_till: 2026-04-01 is before active_from 2026-05-01', 2],
    [{active_till: 'soon', api_id: 'c', coupon: 'SPRING25', name: 'C'}, 'active_till: expected an ISO date', 2],
  ])('bad campaign %j exits %s and writes nothing', async (body, message, code) => {
    const r = await withBody(db, ['campaigns', 'create'], body)
    expect(r.code).toBe(code)
    expect(r.json.message).toContain(message)
    expect(count(db, 'campaigns')).toBe(0)
  })

  it('applies its coupon only to users of its segment, inside its window', async () => {
    await must(db, ['campaigns', 'create'], {active_from: '2026-03-01', active_till: '2026-03-31', api_id: 'spring', countries: ['DE'], coupon: 'SPRING25', name: 'Spring'})
    const inside = await at('2026-03-15', () => run(db, ['price', '-u', 'de1', '-p', 'basic', '--country', 'DE', '--json']))
    expect(inside.json.products.basic.price).toBe(10)
    expect(inside.json.products.basic.coupon).toMatchObject({api_id: 'SPRING25', type: 'percentage', value: 25})
    expect(inside.json.products.basic.coupon.display.price_numeric).toBe(7.5)
    // The coupon ends with the campaign window: valid_till is its last second.
    expect(inside.json.products.basic.coupon.valid_till).toBe('2026-03-31 23:59:59')
    const us = await at('2026-03-15', () => run(db, ['price', '-u', 'us1', '-p', 'basic', '--country', 'US', '--json']))
    expect(us.json.products.basic.coupon).toBeUndefined()
    const before = await at('2026-02-28T23:59:59Z', () => run(db, ['price', '-u', 'de2', '-p', 'basic', '--country', 'DE', '--json']))
    expect(before.json.products.basic.coupon).toBeUndefined()
    const explain = await at('2026-04-01', () => run(db, ['price', 'explain', '-u', 'de3', '-p', 'basic', '--country', 'DE', '--json']))
    expect(steps(explain)).toContain('campaign spring | skipped | not for this user (country DE): ended 2026-03-31 23:59:59 UTC')
    const us2 = await at('2026-03-15', () => run(db, ['price', 'explain', '-u', 'us2', '-p', 'basic', '--country', 'US', '--json']))
    expect(steps(us2)).toContain('campaign spring | skipped | not for this user (country DE): country US not in DE')
  })

  it('an audience campaign reaches every user in that audience; a product-limited one only those products', async () => {
    await must(db, ['campaigns', 'create'], {api_id: 'students', audience: 'students', coupon: 'SPRING25', name: 'Students', products: ['yearly']})
    const r = await run(db, ['price', '-u', 's1', '-p', 'basic,yearly', '--country', 'US', '--feature', 'student=yes', '--json'])
    expect(r.json.products.basic.coupon).toBeUndefined()
    expect(r.json.products.yearly.coupon.display.price_numeric).toBe(75)
    const other = await run(db, ['price', '-u', 'n1', '-p', 'yearly', '--country', 'US', '--feature', 'student=no', '--json'])
    expect(other.json.products.yearly.coupon).toBeUndefined()
    const explain = await run(db, ['price', 'explain', '-u', 's2', '-p', 'basic', '--country', 'US', '--feature', 'student=yes', '--json'])
    expect(steps(explain)).toContain('coupon basic | skipped | SPRING25 (campaign students) not applied: the campaign is limited to yearly')
  })

  it('deleting its coupon needs --force and takes the campaign with it', async () => {
    await must(db, ['campaigns', 'create', '--yes'], {api_id: 'spring', coupon: 'SPRING25', name: 'Spring'})
    const refused = await run(db, ['coupons', 'delete', 'SPRING25', '--yes', '--json'])
    expect(refused.code).toBe(1)
    expect(refused.json.message).toContain('used by campaign spring')
    expect((await run(db, ['coupons', 'delete', 'SPRING25', '--yes', '--force', '--json'])).code).toBe(0)
    expect(count(db, 'campaigns')).toBe(0)
  })
})
