import Database from 'better-sqlite3'
import {beforeEach, describe, expect, it} from 'vitest'

import {createProducts} from '../helpers/catalog.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * Issue 12: the displayed price is the charged price. Each reproduction of the issue,
 * through the commands, on a store with fixed FX rates.
 */

const P1999 = {api_id: 'p1999', base_px: 19.99, interval: 'month', interval_count: 1, name: 'P 19.99'}

async function setRates(db: string, rates: Record<string, number>): Promise<void> {
  for (const [c, r] of Object.entries(rates)) {
    const set = await run(db, ['fx', 'set', c, String(r), '--source', 'test'])
    expect(set.code, set.stderr).toBe(0)
  }
}

function countryPrices(db: string): {amount_minor: number; country: string; currency: string}[] {
  const d = new Database(db, {readonly: true})
  try {
    return d.prepare('SELECT country, currency, amount_minor FROM country_prices ORDER BY country').all() as never
  } finally {
    d.close()
  }
}

describe('gateway_a (Stripe) amounts are what the display shows', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await setRates(db, {HUF: 330, IDR: 16_300, ISK: 122, JPY: 155, KWD: 0.3075})
    await createProducts(db, [P1999])
  })

  it('ISK 2.400 kr. is sent as 240000: Stripe reads ISK with two decimals that must be 00', async () => {
    const r = await run(db, ['price', '-u', 'u1', '-p', 'p1999', '--country', 'IS', '--integration', 'gateway_a', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const p = r.json.products.p1999
    expect(p.price).toBe(2400)
    expect(p.display.price).toBe('2.400\u00A0kr.')
    expect(p.integrations.gateway_a).toEqual({amount: 240_000, currency: 'ISK', formatted: '2.400\u00A0kr.', tax_behavior: 'exclusive'})
  })

  it('HUF and IDR are sent in fillér and sen (two decimals), JPY as whole yen', async () => {
    const hu = await run(db, ['price', '-u', 'hu', '-p', 'p1999', '--country', 'HU', '--integration', 'gateway_a', '--json'])
    expect(hu.json.products.p1999.price).toBe(6600) // 19.99 x 330 = 6596.7, rounded by HUF's whole-forint default rule
    expect(hu.json.products.p1999.integrations.gateway_a.amount).toBe(660_000)
    const id = await run(db, ['price', '-u', 'id', '-p', 'p1999', '--country', 'ID', '--integration', 'gateway_a', '--json'])
    expect(id.json.products.p1999.integrations.gateway_a.amount).toBe(id.json.products.p1999.price * 100)
    const jp = await run(db, ['price', '-u', 'jp', '-p', 'p1999', '--country', 'JP', '--integration', 'gateway_a', '--json'])
    expect(jp.json.products.p1999.integrations.gateway_a.amount).toBe(jp.json.products.p1999.price)
  })

  it('a country price KW=19.995:KWD is refused at products create and update, naming the gateway and the nearest amounts', async () => {
    const create = await run(db, ['products', 'create', '--api-id', 'kw', '--name', 'KW', '--base-px', '10', '--interval', 'month', '--interval-count', '1', '--country-price', 'KW=19.995:KWD', '--json'])
    expect(create.code).toBe(2)
    expect(create.json.message).toContain('gateway_a')
    expect(create.json.message).toContain('use 19.990 or 20.000')
    const update = await run(db, ['products', 'update', 'p1999', '--country-price', 'KW=19.995:KWD', '--json'])
    expect(update.code).toBe(2)
    expect(countryPrices(db)).toEqual([])
    // The nearest valid amount is accepted and charged as shown.
    // 19.99 KWD is far above the converted 19.99 USD: a move beyond --max-change-pct, so --yes.
    const ok = await run(db, ['products', 'update', 'p1999', '--country-price', 'KW=19.99:KWD', '--yes', '--json'])
    expect(ok.code, ok.stdout).toBe(0)
    const kw = await run(db, ['price', '-u', 'kw', '-p', 'p1999', '--country', 'KW', '--integration', 'gateway_a', '--json'])
    expect(kw.json.products.p1999.integrations.gateway_a.amount).toBe(19_990)
  })

  it('a product charged only through gateway_d may keep a KWD price gateway_a could not charge', async () => {
    const r = await run(db, [
      'products', 'create', '--api-id', 'kwc', '--name', 'KWC', '--base-px', '10', '--interval', 'month', '--interval-count', '1',
      '--country-price', 'KW=19.995:KWD', '--integration', '{"type":"gateway_d","gateway_d_plan_id":"plan_kw","currency":"KWD"}', '--json',
    ])
    expect(r.code, r.stdout).toBe(0)
    const q = await run(db, ['price', '-u', 'kw', '-p', 'kwc', '--country', 'KW', '--integration', 'gateway_d', '--json'])
    expect(q.json.products.kwc.price).toBe(19.995)
    expect(q.json.products.kwc.integrations.gateway_d.amount).toBe(19_995)
    // gateway_c (Chargebee) takes KWD with two decimals: a product charged through it may not.
    const c = await run(db, [
      'products', 'create', '--api-id', 'kwcb', '--name', 'KWCB', '--base-px', '10', '--interval', 'month', '--interval-count', '1',
      '--country-price', 'KW=19.995:KWD', '--integration', '{"type":"gateway_c","gateway_c_plan_id":"plan_kw"}', '--json',
    ])
    expect(c.code).toBe(2)
    expect(c.json.message).toContain('gateway_c takes KWD with 2 decimals')
    // Asking for gateway_a too leaves the lock as it is (the price the user sees): gateway_a's
    // object carries the nearest amount it can charge, says it moved, and explain says why.
    const both = await run(db, ['price', 'explain', '-u', 'kw2', '-p', 'kwc', '--country', 'KW', '--integration', 'gateway_a', '--json'])
    expect(both.code, both.stdout).toBe(0)
    expect(both.json.result.products.kwc.price).toBe(19.995)
    expect(both.json.result.products.kwc.integrations.gateway_a).toMatchObject({adjusted_from: 19.995, amount: 20_000, currency: 'KWD'})
    expect(JSON.stringify(both.json)).toContain('gateway_a cannot charge 19.995 KWD exactly; the lock keeps 19.995 KWD')
  })

  it('a fallback conversion to KWD lands on an amount gateway_a can charge', async () => {
    const set = await run(db, ['gateways', 'set', 'gateway_a', '--accept', 'KWD,USD', '--fallback', 'KWD'])
    expect(set.code, set.stderr).toBe(0)
    const r = await run(db, ['price', '-u', 'jp', '-p', 'p1999', '--country', 'JP', '--integration', 'gateway_a', '--json'])
    const g = r.json.products.p1999.integrations.gateway_a
    expect(g.currency).toBe('KWD')
    expect(g.amount % 10).toBe(0)
  })

  it('an experiment arm clamped by max_px is moved to a chargeable amount inside the bounds', async () => {
    await createProducts(db, [{api_id: 'bounded', base_px: 10, interval: 'month', interval_count: 1, max_px: 12.34, name: 'Bounded'}])
    const exp = await run(db, ['experiments', 'create', '--name', 'kw', '-p', 'bounded', '--arm', 'x1.234', '--allocation', 'uniform', '--seed', '1', '--start', '--json'])
    expect(exp.code, exp.stdout).toBe(0)
    for (let i = 0; i < 12; i++) {
      const r = await run(db, ['price', '-u', `k${i}`, '-p', 'bounded', '--country', 'KW', '--integration', 'gateway_a', '--json'])
      const p = r.json.products.bounded
      expect(p.integrations.gateway_a.amount % 10, JSON.stringify(p)).toBe(0)
      expect(p.integrations.gateway_a.amount).toBe(Math.round(p.price * 1000))
      expect(p.price_usd).toBeLessThanOrEqual(12.34)
    }
  })
})

describe('--override-currency cannot make a paid product free', () => {
  it('refuses (exit 2) a relabelling that turns 0.01 USD into 0 JPY, says what it would become, and writes nothing', async () => {
    const db = tempStore()
    await setRates(db, {JPY: 155})
    await createProducts(db, [{api_id: 'cent', base_px: 0.01, interval: 'one_time', interval_count: 1, name: 'Cent'}])
    const first = await run(db, ['price', '-u', 'u1', '-p', 'cent', '--country', 'US', '--json'])
    expect(first.json.products.cent.price).toBe(0.01)
    const swap = await run(db, ['price', '-u', 'u1', '-p', 'cent', '--currency', 'JPY', '--override-currency', '--json'])
    expect(swap.code).toBe(2)
    expect(swap.json.message).toContain('0.01 USD would become 0 JPY, a paid product made free')
    const again = await run(db, ['price', '-u', 'u1', '-p', 'cent', '--json'])
    expect(again.json).toEqual(first.json)
  })
})

describe('gateway_d prices are in the currency of one of the product plans (issue 13, item 15)', () => {
  it('a JP quote of a product whose only gateway_d plan is in EUR is sent in EUR; a JPY plan is used when there is one', async () => {
    const db = tempStore()
    await setRates(db, {EUR: 0.9, JPY: 150})
    await createProducts(db, [
      {api_id: 'eur_plan', base_px: 10, integrations: [{currency: 'EUR', gateway_d_plan_id: 'plan_eur', type: 'gateway_d'}], interval: 'month', interval_count: 1, name: 'EUR plan'},
      {
        api_id: 'two_plans',
        base_px: 10,
        integrations: [
          {currency: 'EUR', gateway_d_plan_id: 'plan2_eur', type: 'gateway_d'},
          {currency: 'JPY', gateway_d_plan_id: 'plan2_jpy', type: 'gateway_d'},
        ],
        interval: 'month',
        interval_count: 1,
        name: 'Two plans',
      },
    ])
    const one = await run(db, ['price', '-u', 'jp1', '-p', 'eur_plan', '--country', 'JP', '--integration', 'gateway_d', '--json'])
    expect(one.code, one.stdout).toBe(0)
    expect(one.json.currency).toBe('JPY')
    const price = one.json.products.eur_plan.price
    expect(one.json.products.eur_plan.integrations.gateway_d).toMatchObject({amount: Math.round((price / 150) * 0.9 * 100), currency: 'EUR'})
    const two = await run(db, ['price', '-u', 'jp2', '-p', 'two_plans', '--country', 'JP', '--integration', 'gateway_d', '--json'])
    expect(two.json.products.two_plans.integrations.gateway_d).toMatchObject({amount: two.json.products.two_plans.price, currency: 'JPY'})
  })
})
