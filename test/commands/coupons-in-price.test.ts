import {beforeEach, describe, expect, it} from 'vitest'

import {run, seededStore, tempStore} from '../helpers/run.js'
import {at, count, coupon, must, segCatalog, steps} from '../helpers/segments-fixtures.js'

/** Every price call here happens on 2026-03-01 UTC unless a test says otherwise. */
const NOW = '2026-03-01T00:00:00Z'
const price = (db: string, args: string[], now = NOW) => at(now, () => run(db, ['price', ...args, '--json']))
const explain = (db: string, args: string[], now = NOW) => at(now, () => run(db, ['price', 'explain', ...args, '--json']))

const COUPONS = [
  coupon('TEN', {coupon_external_coupons: [{external_coupon: {id: 'promo_10', source: 'GATEWAY_A'}}, {external_coupon: {id: 'c10', source: 'GATEWAY_C'}}], coupon_type: 'percentage', value: 10}),
  coupon('USD4', {coupon_type: 'fixed_amount', currency: 'USD', value: 4}),
  coupon('EUR2', {coupon_type: 'fixed_amount', currency: 'EUR', value: 2}),
  coupon('JPY300', {coupon_type: 'fixed_amount', currency: 'JPY', value: 300}),
  coupon('USD50', {coupon_type: 'fixed_amount', currency: 'USD', value: 50}),
  coupon('OLD', {active_till: '2026-02-28', coupon_type: 'percentage', value: 50}),
  coupon('LATER', {active_from: '2026-03-02', coupon_type: 'percentage', value: 50}),
  coupon('OFF', {coupon_type: 'percentage', status: 'NOT_ACTIVE', value: 50}),
  coupon('MARCH', {active_from: '2026-03-01', active_till: '2026-03-31', coupon_type: 'percentage', value: 20}),
]

describe('audiences in price', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    // Seeded once per worker and copied for each test (test/helpers/run.ts seededStore).
    await seededStore(db, 'coupons-in-price:audiences', async (store) => {
      await segCatalog(store)
      await must(store, ['audiences', 'create'], {api_id: 'a1', name: 'Level ten', priority: 1, rules: ['feature level gt 9']})
      await must(store, ['audiences', 'create', '--yes'], {api_id: 'a3', name: 'Germany', prices: [{multiplier: 0.8, product: 'basic'}, {amount: 30, currency: 'USD', product: 'yearly'}], priority: 3, rules: ['country in DE']})
      await must(store, ['audiences', 'create'], {api_id: 'a2', name: 'Has level', priority: 2, rules: ['feature level exists']})
    })
  })

  it('matching_audiences is ordered by priority; "10" gt "9" holds for a numeric feature', async () => {
    const r = await price(db, ['-u', 'u1', '-p', 'lifetime', '--country', 'DE', '--feature', 'level=10'])
    expect(r.json.matching_audiences).toEqual([
      {api_id: 'a3', name: 'Germany'},
      {api_id: 'a2', name: 'Has level'},
      {api_id: 'a1', name: 'Level ten'},
    ])
    expect(r.json.audience).toEqual({api_id: 'a3', name: 'Germany'})
    const nine = await price(db, ['-u', 'u2', '-p', 'lifetime', '--country', 'US', '--feature', 'level=9'])
    expect(nine.json.matching_audiences).toEqual([{api_id: 'a2', name: 'Has level'}])
    const none = await price(db, ['-u', 'u3', '-p', 'lifetime', '--country', 'US'])
    expect(none.json.audience).toEqual({api_id: 'default', name: 'default'})
    expect(none.json.matching_audiences).toEqual([])
  })

  it('the audience price: a multiplier of the localized price (rounded), or a fixed price converted and rounded', async () => {
    const r = await price(db, ['-u', 'u1', '-p', 'basic,yearly,lifetime', '--country', 'DE'])
    // 10 EUR x 0.8 = 8, rounded by the EUR default rule (.99 endings) to 7.99.
    expect(r.json.products.basic.price).toBe(7.99)
    // 30 USD at 0.5 EUR/USD = 15 EUR, rounded to 14.99.
    expect(r.json.products.yearly.price).toBe(14.99)
    // No audience price for lifetime: the localized price stays.
    expect(r.json.products.lifetime.price).toBe(99.99)
    const us = await price(db, ['-u', 'u2', '-p', 'yearly', '--country', 'US'])
    expect(us.json.products.yearly.price).toBe(100)
  })

  it('explain shows every rule that matched or failed', async () => {
    const s = steps(await explain(db, ['-u', 'u1', '-p', 'basic', '--country', 'US', '--feature', 'level=9']))
    expect(s).toContain('audience a3 | info | rule "country in DE" failed (country is US)')
    expect(s).toContain('audience a3 | skipped | does not match: 1 of 1 rule failed (priority 3)')
    expect(s).toContain('audience a1 | info | rule "feature level gt 9" failed (level = "9", compared as numbers)')
    expect(s).toContain('audience a2 | info | rule "feature level exists" matched (level = "9")')
    expect(s).toContain('audience | chose | a2 (priority 2)')
    expect(s).toContain('price basic | skipped | audience a2 has no price for basic')
  })
})

/** The catalog and COUPONS, through the commands (seeded once per worker: test/helpers/run.ts seededStore). */
async function withCoupons(store: string): Promise<void> {
  await segCatalog(store)
  for (const c of COUPONS) await must(store, ['coupons', 'create'], c)
}

describe('coupons in price', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    // Seeded once per worker and copied for each test (test/helpers/run.ts seededStore).
    await seededStore(db, 'coupons-in-price:coupons', withCoupons)
  })

  it('the coupon block has every field of the spec; price stays pre-coupon', async () => {
    const r = await price(db, ['-u', 'u1', '-p', 'yearly', '--country', 'DE', '--coupon', 'yearly=TEN', '--integration', 'gateway_a'])
    expect(r.code).toBe(0)
    const p = r.json.products.yearly
    expect(p.price).toBe(100)
    expect(p.integrations.gateway_a.amount).toBe(10_000)
    const c = p.coupon
    expect(Object.keys(c).sort()).toEqual(['api_id', 'coupon_source', 'currency_code', 'display', 'external_coupon_id', 'id', 'service_external_coupon_id', 'type', 'valid_till', 'value'])
    expect(c).toMatchObject({api_id: 'TEN', coupon_source: ['GATEWAY_A', 'GATEWAY_C'], currency_code: null, external_coupon_id: 'promo_10', type: 'percentage', valid_till: null, value: 10})
    expect(typeof c.id).toBe('string')
    expect(typeof c.service_external_coupon_id).toBe('number')
    expect(c.display).toEqual({
      interval_local_price_formatted: '7,50\u00A0€',
      interval_price_numeric: 7.5,
      local_currency_symbol: '€',
      local_price_formatted: '90\u00A0€',
      local_price_formatted_with_baseline_strike: expect.stringMatching(/^1\u03360\u03360\u0336.*\u0336 90\u00A0€$/),
      pct_discount_to_baseline: 10,
      price_numeric: 90,
      usd_price_formatted: '180\u00A0$',
      usd_price_numeric: 180,
    })
  })

  it('a fixed amount in another currency is converted; the price after a coupon never goes below zero', async () => {
    const usd = await price(db, ['-u', 'u1', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=USD4'])
    // 4 USD at 0.5 EUR/USD = 2 EUR off 10 EUR.
    expect(usd.json.products.basic.coupon.display.price_numeric).toBe(8)
    expect(usd.json.products.basic.coupon.currency_code).toBe('USD')
    expect(usd.json.products.basic.coupon.display.pct_discount_to_baseline).toBe(20)
    const jpy = await price(db, ['-u', 'u2', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=JPY300'])
    // 300 JPY = 3 USD = 1.50 EUR.
    expect(jpy.json.products.basic.coupon.display.price_numeric).toBe(8.5)
    const inJapan = await price(db, ['-u', 'u3', '-p', 'basic', '--country', 'JP', '--coupon', 'basic=EUR2'])
    // 2 EUR = 4 USD = 400 JPY off 1000 JPY.
    expect(inJapan.json.products.basic.coupon.display.price_numeric).toBe(600)
    const big = await price(db, ['-u', 'u4', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=USD50'])
    expect(big.json.products.basic.coupon.display).toMatchObject({pct_discount_to_baseline: 100, price_numeric: 0, usd_price_numeric: 0})
    expect(big.json.products.basic.price).toBe(10)
  })

  it('an expired, not yet active or NOT_ACTIVE coupon is never applied, and explain says why', async () => {
    const r = await price(db, ['-u', 'u1', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=OLD,LATER,OFF'])
    expect(r.code).toBe(0)
    expect(r.json.products.basic.coupon).toBeUndefined()
    const s = steps(await explain(db, ['-u', 'u2', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=OLD,LATER,OFF']))
    expect(s).toContain('coupon basic | skipped | OLD (request) not applied: OLD has expired: it ended 2026-02-28 23:59:59 UTC')
    expect(s).toContain('coupon basic | skipped | LATER (request) not applied: LATER is not active yet: it starts 2026-03-02 00:00:00 UTC')
    expect(s).toContain('coupon basic | skipped | OFF (request) not applied: OFF is NOT_ACTIVE')
    // The same coupons through a campaign are not applied either.
    await must(db, ['campaigns', 'create'], {api_id: 'c_old', coupon: 'OLD', name: 'old'})
    await must(db, ['campaigns', 'create'], {api_id: 'c_off', coupon: 'OFF', name: 'off'})
    const viaCampaign = await explain(db, ['-u', 'u3', '-p', 'basic', '--country', 'DE'])
    expect(viaCampaign.json.result.products.basic.coupon).toBeUndefined()
    expect(steps(viaCampaign)).toContain('coupon basic | skipped | OFF (campaign c_off) not applied: OFF is NOT_ACTIVE')
    // On its first day a windowed coupon applies; a day after its last it does not.
    expect((await price(db, ['-u', 'u5', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=MARCH'])).json.products.basic.coupon.valid_till).toBe('2026-03-31 23:59:59')
    expect((await price(db, ['-u', 'u6', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=MARCH'], '2026-04-01T00:00:00Z')).json.products.basic.coupon).toBeUndefined()
  })

  it('several coupons on one product do not stack: the lowest price wins, explain says why', async () => {
    const r = await price(db, ['-u', 'u1', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=TEN,USD4'])
    expect(r.json.products.basic.coupon.api_id).toBe('USD4')
    expect(r.json.products.basic.coupon.display.price_numeric).toBe(8)
    const s = steps(await explain(db, ['-u', 'u2', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=TEN,USD4']))
    expect(s).toContain('coupon basic | skipped | TEN (request, 10% off): 10 EUR -> 9 EUR not applied: USD4 gives 8 EUR (coupons do not stack)')
    expect(s).toContain('coupon basic | applied | USD4 (request, 4 USD off): 10 EUR -> 8 EUR, the lowest price of 2 coupons')
    // A tie goes to the coupon given first.
    const tie = await price(db, ['-u', 'u3', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=EUR2,USD4'])
    expect(tie.json.products.basic.coupon.api_id).toBe('EUR2')
  })

  it('a percentage coupon reports its value as pct_discount_to_baseline, even when rounding makes the cents differ', async () => {
    const r = await price(db, ['-u', 'u1', '-p', 'basic', '--country', 'JP', '--coupon', 'basic=MARCH'])
    expect(r.json.products.basic.coupon.display).toMatchObject({pct_discount_to_baseline: 20, price_numeric: 800})
  })

  it('refuses an unknown coupon (exit 1) or a product not in the request (exit 2): no lock', async () => {
    const unknown = await price(db, ['-u', 'bad1', '-p', 'basic', '--coupon', 'basic=NOPE'])
    expect(unknown.code).toBe(1)
    expect(unknown.json.message).toContain('coupons.basic: unknown coupon "NOPE"')
    const outside = await price(db, ['-u', 'bad2', '-p', 'basic', '--coupon', 'yearly=TEN'])
    expect(outside.code).toBe(2)
    expect(outside.json.message).toContain('coupons.yearly: product "yearly" is not in this request (products: basic)')
    await must(db, ['packages', 'create'], {api_id: 'de_pkg', countries: ['DE'], name: 'DE', products: ['basic']})
    const pkg = await price(db, ['-u', 'bad3', '--country', 'DE', '--coupon', 'yearly=TEN'])
    expect(pkg.code).toBe(2)
    expect(pkg.json.message).toContain('coupons.yearly: product "yearly" is not in this request (products: basic)')
    expect(count(db, 'locks')).toBe(0)
  })

  it('a reused lock keeps its coupon; a product without one takes a coupon asked for later', async () => {
    const first = await price(db, ['-u', 'u1', '-p', 'basic', '--country', 'DE'])
    expect(first.json.products.basic.coupon).toBeUndefined()
    const withCoupon = await price(db, ['-u', 'u1', '-p', 'basic', '--coupon', 'basic=TEN'])
    expect(withCoupon.json.products.basic.price).toBe(10)
    expect(withCoupon.json.products.basic.coupon.api_id).toBe('TEN')
    const again = await price(db, ['-u', 'u1', '-p', 'basic'])
    expect(again.json).toEqual(withCoupon.json)
    // A better coupon later does not replace the locked one.
    const later = await price(db, ['-u', 'u1', '-p', 'basic', '--coupon', 'basic=USD4'])
    expect(later.json.products.basic.coupon.api_id).toBe('TEN')
    const s = steps(await explain(db, ['-u', 'u1', '-p', 'basic', '--coupon', 'basic=USD4']))
    expect(s).toContain('coupon basic | info | TEN kept from the lock (request); pass --override to recompute')
  })

  it('a locked coupon is shown until its valid_till, then no longer', async () => {
    await price(db, ['-u', 'u1', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=MARCH'], '2026-03-15T00:00:00Z')
    const inside = await price(db, ['-u', 'u1', '-p', 'basic'], '2026-03-31T23:00:00Z')
    expect(inside.json.products.basic.coupon.api_id).toBe('MARCH')
    const after = await price(db, ['-u', 'u1', '-p', 'basic'], '2026-04-01T00:00:00Z')
    expect(after.json.products.basic.coupon).toBeUndefined()
    expect(after.json.products.basic.price).toBe(10)
    const s = steps(await explain(db, ['-u', 'u1', '-p', 'basic'], '2026-04-01T00:00:00Z'))
    expect(s).toContain('coupon basic | skipped | MARCH from the lock expired 2026-03-31 23:59:59 UTC: no longer shown')
  })

  it('--override-currency keeps the coupon and moves its amount with the price', async () => {
    await price(db, ['-u', 'u1', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=USD4'])
    const r = await price(db, ['-u', 'u1', '-p', 'basic', '--currency', 'USD', '--override-currency'])
    expect(r.json.currency).toBe('USD')
    expect(r.json.products.basic.price).toBe(10)
    expect(r.json.products.basic.coupon.display.price_numeric).toBe(8)
    expect(r.json.products.basic.coupon.display.local_price_formatted).toBe('8\u00A0$')
  })
})

describe('locks keep the audience, package and coupon they were computed with', () => {
  it('changing or deleting them later does not change a locked quote, until --override', async () => {
    const db = tempStore()
    await seededStore(db, 'coupons-in-price:coupons', withCoupons)
    await must(db, ['audiences', 'create', '--yes'], {api_id: 'germany', name: 'Germany', prices: [{multiplier: 2, product: 'basic'}], rules: ['country in DE']})
    await must(db, ['packages', 'create'], {api_id: 'de_pkg', audience: 'germany', name: 'DE', products: ['basic']})
    await must(db, ['campaigns', 'create'], {api_id: 'de_sale', audience: 'germany', coupon: 'TEN', name: 'DE sale'})
    const first = await price(db, ['-u', 'locked', '--country', 'DE'])
    expect(first.json).toMatchObject({audience: {api_id: 'germany'}, matching_audiences: [{api_id: 'germany'}], package_id: 'de_pkg'})
    // 10 EUR x 2, rounded by the EUR default rule to 19.99; 10% off (2.00, rounded half up) is 17.99.
    expect(first.json.products.basic.price).toBe(19.99)
    expect(first.json.products.basic.coupon).toMatchObject({api_id: 'TEN'})
    expect(first.json.products.basic.coupon.display.price_numeric).toBe(17.99)

    expect((await run(db, ['campaigns', 'delete', 'de_sale', '--yes'])).code).toBe(0)
    expect((await run(db, ['coupons', 'update', 'TEN', '--status', 'NOT_ACTIVE'])).code).toBe(0)
    expect((await run(db, ['packages', 'update', 'de_pkg', '--product', 'yearly'])).code).toBe(0)
    // DE's basic goes back from x2 (-50%): --yes without a terminal.
    expect((await run(db, ['audiences', 'update', 'germany', '--rule', 'country in FR', '--price', 'none', '--yes'])).code).toBe(0)

    const again = await price(db, ['-u', 'locked'])
    expect(again.json).toEqual(first.json)
    const s = steps(await explain(db, ['-u', 'locked']))
    expect(s).toContain('coupon basic | info | TEN kept from the lock (campaign de_sale)')

    const fresh = await price(db, ['-u', 'locked', '--country', 'DE', '--product', 'basic', '--override'])
    expect(fresh.json.audience.api_id).toBe('default')
    expect(fresh.json.package_id).toBeNull()
    expect(fresh.json.products.basic.price).toBe(10)
    expect(fresh.json.products.basic.coupon).toBeUndefined()
  })
})
