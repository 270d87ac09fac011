import {describe, expect, it} from 'vitest'

import {createProducts} from '../helpers/catalog.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * Issue 29, "Money: what a gateway receives": what a gateway is sent is always chargeable,
 * through the commands, on stores with fixed FX rates.
 */

async function setRates(db: string, rates: Record<string, number>): Promise<void> {
  for (const [c, r] of Object.entries(rates)) {
    const set = await run(db, ['fx', 'set', c, String(r), '--source', 'test'])
    expect(set.code, set.stderr).toBe(0)
  }
}

async function price(db: string, args: string[]): Promise<any> {
  const r = await run(db, ['price', ...args, '--json'])
  expect(r.code, r.stdout + r.stderr).toBe(0)
  return r.json
}

const monthly = (apiId: string, extra: Record<string, unknown> = {}) => ({api_id: apiId, base_px: 9.99, interval: 'month', interval_count: 1, name: apiId, ...extra})
const stripe = (id: string) => ({gateway_a_product_id: id, type: 'gateway_a'})

describe('a lock does not depend on the integrations a request names (item 2)', () => {
  it('TWD 319.99 stays locked; gateway_b (whole TWD) gets 320 with adjusted_from, its text matching its amount; a first call naming gateway_b locks the same', async () => {
    const db = tempStore()
    await setRates(db, {TWD: 32})
    await createProducts(db, [monthly('P', {country_prices: [{amount: 319.99, country: 'TW', currency: 'TWD'}], integrations: [stripe('prod_p')]})])
    const first = await price(db, ['-u', 'twA', '-p', 'P', '--country', 'TW'])
    expect(first.products.P.price).toBe(319.99)
    const again = await price(db, ['-u', 'twA', '-p', 'P', '--country', 'TW', '--integration', 'gateway_b', '--integration', 'gateway_a'])
    expect(again.products.P.price).toBe(319.99)
    expect(again.products.P.display.price).toBe('$319.99')
    expect(again.products.P.integrations.gateway_b).toEqual({adjusted_from: 319.99, amount: 320, currency: 'TWD', formatted: '$320', tax_behavior: 'exclusive'})
    expect(again.products.P.integrations.gateway_a).toEqual({amount: 31_999, currency: 'TWD', formatted: '$319.99', tax_behavior: 'exclusive'})
    const other = await price(db, ['-u', 'twB', '-p', 'P', '--country', 'TW', '--integration', 'gateway_b'])
    expect(other.products.P.price).toBe(319.99)
    expect(other.products.P.integrations.gateway_b).toEqual(again.products.P.integrations.gateway_b)
  })

  it('a product linked to no gateway follows every gateway\'s exactness: a TWD price is whole whatever the request names', async () => {
    const db = tempStore()
    await setRates(db, {TWD: 32})
    await createProducts(db, [monthly('P')])
    expect((await run(db, ['rounding', 'set', 'TWD', '0+: end .99 up'])).code).toBe(0)
    const plain = await price(db, ['-u', 'u1', '-p', 'P', '--country', 'TW'])
    const named = await price(db, ['-u', 'u2', '-p', 'P', '--country', 'TW', '--integration', 'gateway_a'])
    // 9.99 x 32 = 319.68 -> .99 up = 319.99 -> whole (PayPal takes TWD without decimals) = 320.
    expect(plain.products.P.price).toBe(320)
    expect(named.products.P.price).toBe(320)
  })

  it('a 0.01 USD lock is sent to gateway_a at its 0.50 minimum, marked adjusted_from; the lock and display keep 0.01', async () => {
    const db = tempStore()
    await createProducts(db, [monthly('cent', {base_px: 0.01})])
    await price(db, ['-u', 'u1', '-p', 'cent', '--country', 'US'])
    const r = await price(db, ['-u', 'u1', '-p', 'cent', '--country', 'US', '--integration', 'gateway_a'])
    expect(r.products.cent.price).toBe(0.01)
    expect(r.products.cent.integrations.gateway_a).toEqual({adjusted_from: 0.01, amount: 50, currency: 'USD', formatted: '$0.50', tax_behavior: 'exclusive'})
    const explain = await run(db, ['price', 'explain', '-u', 'u1', '-p', 'cent', '--country', 'US', '--integration', 'gateway_a'])
    expect(explain.stdout).toContain("gateway_a is sent $0.50 (adjusted_from 0.01 USD): below gateway_a's minimum charge of 0.50 USD; the lock keeps 0.01 USD")
  })

  it('a locked 3.105 KWD is sent to gateway_a as 3110 (its last digit must be 0), not 3105', async () => {
    const db = tempStore()
    await setRates(db, {KWD: 0.3075})
    // Charged through Paddle with a KWD plan (KWD taken with three decimals once accepted).
    expect((await run(db, ['gateways', 'set', 'gateway_d', '--accept', 'all'])).code).toBe(0)
    await createProducts(db, [
      monthly('kw', {country_prices: [{amount: 3.105, country: 'KW', currency: 'KWD'}], integrations: [{currency: 'KWD', gateway_d_plan_id: 'plan_kw', type: 'gateway_d'}]}),
    ])
    const r = await price(db, ['-u', 'u1', '-p', 'kw', '--country', 'KW', '--integration', 'gateway_d', '--integration', 'gateway_a'])
    expect(r.products.kw.price).toBe(3.105)
    expect(r.products.kw.integrations.gateway_d).toMatchObject({amount: 3105, currency: 'KWD'})
    expect(r.products.kw.integrations.gateway_a).toMatchObject({adjusted_from: 3.105, amount: 3110, currency: 'KWD'})
    expect(r.products.kw.integrations.gateway_a.formatted).toContain('3.110')
  })
})

describe('--override-currency relabels without recomputing, and never compounds (item 3)', () => {
  it('DE 9.99 EUR -> JPY -> EUR is 9.99 EUR again; the raise to gateway_a\'s JPY minimum is only in its object', async () => {
    const db = tempStore()
    await setRates(db, {BHD: 0.376, EUR: 0.92, JPY: 155, KWD: 0.3075})
    await createProducts(db, [monthly('P', {country_prices: [{amount: 9.99, country: 'DE', currency: 'EUR'}], integrations: [stripe('prod_p')]})])
    expect((await price(db, ['-u', 'de', '-p', 'P', '--country', 'DE'])).products.P.price).toBe(9.99)
    const jpy = await price(db, ['-u', 'de', '-p', 'P', '--currency', 'JPY', '--override-currency', '--integration', 'gateway_a'])
    expect(jpy.currency).toBe('JPY')
    // The same amount relabelled: 9.99 -> 10 yen (JPY has no minor unit), not Stripe's 50 yen minimum.
    expect(jpy.products.P.price).toBe(10)
    expect(jpy.products.P.integrations.gateway_a).toMatchObject({adjusted_from: 10, amount: 50, currency: 'JPY'})
    const eur = await price(db, ['-u', 'de', '-p', 'P', '--currency', 'EUR', '--override-currency', '--integration', 'gateway_a'])
    expect(eur.currency).toBe('EUR')
    expect(eur.products.P.price).toBe(9.99)
    expect(eur.products.P.integrations.gateway_a).toEqual({amount: 999, currency: 'EUR', formatted: '9,99\u00A0€', tax_behavior: 'exclusive'})
  })

  it('a long chain ends where it started: EUR -> JPY -> KWD -> BHD -> JPY -> EUR', async () => {
    const db = tempStore()
    await setRates(db, {BHD: 0.376, EUR: 0.92, JPY: 155, KWD: 0.3075})
    await createProducts(db, [monthly('P', {country_prices: [{amount: 9.99, country: 'DE', currency: 'EUR'}], integrations: [stripe('prod_p')]})])
    await price(db, ['-u', 'de', '-p', 'P', '--country', 'DE'])
    const seen: [string, number][] = []
    for (const c of ['JPY', 'KWD', 'BHD', 'JPY', 'EUR']) {
      const r = await price(db, ['-u', 'de', '-p', 'P', '--currency', c, '--override-currency', '--integration', 'gateway_a'])
      seen.push([r.currency, r.products.P.price])
    }
    // KWD and BHD take 9.99 as 9.990 (three decimals, steps of 0.010 for Stripe).
    expect(seen).toEqual([['JPY', 10], ['KWD', 9.99], ['BHD', 9.99], ['JPY', 10], ['EUR', 9.99]])
  })
})

describe('coupons never lose precision silently (item 5)', () => {
  const couponArgs = (apiId: string, type: string, value: string, extra: string[] = []) => ['coupons', 'create', '--api-id', apiId, '--name', apiId, '--type', type, '--value', value, ...extra, '--json']

  it('refuses (exit 2, nothing written) a fixed amount the currency and the coupon\'s gateways cannot carry: 1.005 KWD', async () => {
    const db = tempStore()
    const r = await run(db, couponArgs('KW1005', 'fixed_amount', '1.005', ['--currency', 'KWD']))
    expect(r.code).toBe(2)
    expect(r.json.message).toBe(
      'invalid coupon: value: a fixed discount of 1.005 KWD cannot be shown and charged exactly (gateway_a takes KWD with 3 decimals, amounts divisible by 10; gateway_c takes KWD with 2 decimals): use 1.000 or 1.010 (a coupon with no external coupon may be used with any gateway)',
    )
    const linked = await run(db, couponArgs('KW1005', 'fixed_amount', '1.005', ['--currency', 'KWD', '--external', 'GATEWAY_A=promo_kw']))
    expect(linked.code).toBe(2)
    expect(linked.json.message).toContain('(gateway_a takes KWD with 3 decimals, amounts divisible by 10): use 1.000 or 1.010')
    expect((await run(db, ['coupons', 'list', '--json'])).json.coupons).toEqual([])
    // Carried exactly: accepted, and an update to an amount that is not is refused the same way.
    expect((await run(db, couponArgs('KW1', 'fixed_amount', '1.010', ['--currency', 'KWD']))).code).toBe(0)
    const update = await run(db, ['coupons', 'update', 'KW1', '--value', '1.005', '--json'])
    expect(update.code).toBe(2)
    expect(update.json.message).toContain('invalid coupon update: value: a fixed discount of 1.005 KWD cannot be shown and charged exactly')
  })

  it('a price after a coupon that is not chargeable moves down, in the buyer\'s favour, and says so; the discount shown is the one charged', async () => {
    const db = tempStore()
    await setRates(db, {KWD: 0.3075})
    await createProducts(db, [monthly('P', {country_prices: [{amount: 3.1, country: 'KW', currency: 'KWD'}], integrations: [stripe('prod_p')]})])
    expect((await run(db, couponArgs('PCT15', 'percentage', '15'))).code).toBe(0)
    const r = await price(db, ['-u', 'u1', '-p', 'P', '--country', 'KW', '--coupon', 'P=PCT15'])
    // 3.100 - 15% = 2.635, which Stripe cannot charge (steps of 0.010): 2.630, not 2.640.
    expect(r.products.P.coupon.display.price_numeric).toBe(2.63)
    expect(r.products.P.coupon.display.pct_discount_to_baseline).toBe(15.16)
    const explain = await run(db, ['price', 'explain', '-u', 'u2', '-p', 'P', '--country', 'KW', '--coupon', 'P=PCT15'])
    expect(explain.stdout).toContain("2.635 KWD rounded down in the buyer's favour so it can be shown and charged exactly")
  })

  it('a coupon on a price held at the gateway minimum shows a discount of 0', async () => {
    const db = tempStore()
    await createProducts(db, [monthly('min', {base_px: 0.5, integrations: [stripe('prod_min')]})])
    expect((await run(db, couponArgs('PCT33', 'percentage', '33'))).code).toBe(0)
    const r = await price(db, ['-u', 'u1', '-p', 'min', '--country', 'US', '--coupon', 'min=PCT33'])
    expect(r.products.min.price).toBe(0.5)
    expect(r.products.min.coupon.display).toMatchObject({pct_discount_to_baseline: 0, price_numeric: 0.5})
  })
})

describe('bounds are checked when prices are written; a preview prices what it can (item 6)', () => {
  const create = (db: string, apiId: string, basePx: string, extra: string[] = []) =>
    run(db, ['products', 'create', '--api-id', apiId, '--name', apiId, '--base-px', basePx, '--interval', 'month', '--interval-count', '1', ...extra, '--json'])

  it('products create/update refuse a base_px outside a linked gateway\'s USD minimum or maximum, naming the value and the limit', async () => {
    const db = tempStore()
    const big = await create(db, 'big', '1000000000', ['--integration', 'gateway_a:prod_big'])
    expect(big.code).toBe(2)
    expect(big.json.message).toBe(
      'invalid product: base_px: 1000000000.00 USD is above gateway_a\'s maximum charge of 999999.99 USD: lower the price or see "pricectl gateways show gateway_a USD"',
    )
    const small = await create(db, 'small', '0.10', ['--integration', 'gateway_a:prod_small'])
    expect(small.code).toBe(2)
    expect(small.json.message).toBe("invalid product: base_px: 0.10 USD cannot be charged (below gateway_a's minimum charge of 0.50 USD): use 0.50 or more")
    expect((await run(db, ['products', 'list', '--json'])).json.products).toEqual([])
    // No linked gateway: no bounds (it may be charged anywhere, in any currency).
    expect((await create(db, 'free', '0.10')).code).toBe(0)
    const linked = await run(db, ['products', 'update', 'free', '--integration', 'gateway_a:prod_free', '--json'])
    expect(linked.code).toBe(2)
    expect(linked.json.message).toContain("base_px: 0.10 USD cannot be charged (below gateway_a's minimum charge of 0.50 USD)")
  })

  it('audience prices and experiment arm prices are checked against the product\'s gateways too', async () => {
    const db = tempStore()
    expect((await create(db, 'P', '9.99', ['--integration', 'gateway_a:prod_p'])).code).toBe(0)
    const audience = await run(db, ['audiences', 'create', '--api-id', 'a1', '--name', 'A1', '--rule', 'country in DE', '--price', 'P=0.20:EUR', '--json'])
    expect(audience.code, audience.stdout).toBe(2)
    expect(audience.json.message).toBe("invalid audience: prices[0] (P): 0.20 EUR cannot be charged (below gateway_a's minimum charge of 0.50 EUR): use 0.50 or more")
    expect((await run(db, ['audiences', 'list', '--json'])).json.audiences).toEqual([])
    const arm = await run(db, ['experiments', 'create', '--name', 'E', '-p', 'P', '--arm', 'usd:2000000', '--json'])
    expect(arm.code, arm.stdout).toBe(2)
    expect(arm.json.message).toBe(
      'arm price not chargeable: arm 1 (2000000 USD): P would cost 2000000 USD, which is above gateway_a\'s maximum charge of 999999.99 USD: lower the price or see "pricectl gateways show gateway_a USD"',
    )
    const cheap = await run(db, ['experiments', 'create', '--name', 'E', '-p', 'P', '--arm', 'x0.01', '--json'])
    expect(cheap.code).toBe(2)
    expect(cheap.json.message).toContain("P would cost 0.1 USD, which cannot be charged (below gateway_a's minimum charge of 0.50 USD)")
  })

  it('price preview reports the product it cannot price in "errors" and prices the rest (exit 1)', async () => {
    const db = tempStore()
    expect((await create(db, 'big', '5000', ['--integration', 'gateway_a:prod_big'])).code).toBe(0)
    expect((await create(db, 'ok', '9.99', ['--integration', 'gateway_a:prod_ok'])).code).toBe(0)
    // Stripe's maximum lowered afterwards (an account limit): big is no longer chargeable in USD.
    // Prices the bound makes unquotable count as moved beyond --max-change-pct: --yes without a terminal.
    expect((await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'USD', '--max', '1000', '--yes'])).code).toBe(0)
    const r = await run(db, ['price', 'preview', '--country', 'US,DE', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.errors).toEqual([
      {audience: 'default', country: 'US', message: '5000.00 USD is above gateway_a\'s maximum charge of 1000.00 USD: lower the price or see "pricectl gateways show gateway_a USD"', product: 'big'},
    ])
    expect(r.json.rows.map((row: {country: string; product: string}) => `${row.product} ${row.country}`)).toEqual(['big DE', 'ok DE', 'ok US'])
    const text = await run(db, ['price', 'preview', '--country', 'US,DE'])
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(/ok\s*│\s*US/)
    expect(text.stderr).toContain('error: big in US: 5000.00 USD is above gateway_a\'s maximum charge of 1000.00 USD')
  })
})
