import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {armBaseMinor, armLabel, type ArmQuote, armQuotes, pctChange} from '../../src/experiments/arm-prices.js'
import {createExperiment} from '../../src/experiments/manage.js'
import type {Experiment} from '../../src/experiments/store.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice, priceRequest} from '../../src/pricing/price.js'
import type {SqliteStore as Store} from '../../src/store/db.js'
import {openExperimentStore} from '../helpers/experiment-fixtures.js'

/**
 * The arms' prices and labels (src/experiments/arm-prices.ts) as `experiments results` and
 * `experiments conclude` show them: fixed examples where mutation testing (docs/hardening.md)
 * showed no other test pinned them.
 */

let store: Store
beforeEach(async () => {
  store = await openExperimentStore()
})
afterEach(async () => await store.close())

const labels = async (e: Experiment, country: string) => {
  const out = []
  for (const arm of e.arms) out.push(armLabel(e, arm, await armQuotes(store, e, arm, country)))
  return out
}

describe('pctChange', () => {
  it('the change from a price in percent, two decimals; none from a price of 0', () => {
    expect(pctChange(1000, 799)).toBe(-20.1)
    expect(pctChange(3000, 2399)).toBe(-20.03)
    expect(pctChange(1000, 1000)).toBe(0)
    expect(pctChange(0, 500)).toBeNull()
    expect(pctChange(0, 0)).toBeNull()
  })
})

describe('arm labels', () => {
  it('two products: multiplier arms give an example of each, USD arms their price per product', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}, {multiplier: 1}, {usd_price: 10}, {usd_price: 12.5}], name: 'two', products: ['pro_monthly', 'team_monthly'], seed: 1})
    expect(await labels(e, 'US')).toEqual([
      'control price: pro_monthly 10 USD, team_monthly 30 USD in US',
      'x0.8 (-20%): e.g. pro_monthly 7.99 USD (-20.1%), team_monthly 23.99 USD (-20.03%) in US',
      // No change is "0%", not "+0%".
      'x1 (0%): e.g. pro_monthly 9.99 USD (-0.1%), team_monthly 29.99 USD (-0.03%) in US',
      // USD arms priced as set in the US: the example would repeat the price, so there is none.
      'pro_monthly 10 USD (0%), team_monthly 10 USD (-66.67%)',
      'pro_monthly 12.5 USD (+25%), team_monthly 12.5 USD (-58.33%)',
    ])
  })

  it('a USD arm where the visitor pays another currency adds an example of what they pay', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}, {usd_price: 12.5}], name: 'de', products: ['pro_monthly', 'team_monthly'], seed: 1})
    expect(await labels(e, 'DE')).toEqual([
      'control price: pro_monthly 9 EUR, team_monthly 25.99 EUR in DE',
      'x0.8 (-20%): e.g. pro_monthly 6.99 EUR (-22.33%), team_monthly 20.99 EUR (-19.24%) in DE',
      'pro_monthly 12.5 USD (+25%), team_monthly 12.5 USD (-58.33%); e.g. pro_monthly 10.99 EUR (+22.11%), team_monthly 10.99 EUR (-57.71%) in DE',
    ])
  })

  it('a USD arm quoted in USD at another amount (converted, localized or clamped) adds the example, for any product that differs', async () => {
    const e = await createExperiment(store, {arms: [{usd_price: 12.5}], name: 'usd', products: ['pro_monthly', 'team_monthly'], seed: 1})
    const arm = e.arms[1]
    const quotes = await armQuotes(store, e, arm, 'US')
    const shifted = (q: ArmQuote): ArmQuote => ({...q, display: '$12.99', pct_change: pctChange(q.control * 100, 1299), price: 12.99, price_minor: 1299})
    const usd = 'pro_monthly 12.5 USD (+25%), team_monthly 12.5 USD (-58.33%)'
    expect(armLabel(e, arm, quotes)).toBe(usd)
    expect(armLabel(e, arm, [quotes[0], shifted(quotes[1])])).toBe(`${usd}; e.g. pro_monthly 12.5 USD (+25%), team_monthly 12.99 USD (-56.7%) in US`)
    expect(armLabel(e, arm, quotes.map(shifted))).toBe(`${usd}; e.g. pro_monthly 12.99 USD (+29.9%), team_monthly 12.99 USD (-56.7%) in US`)
  })

  it('without example quotes (none given, or none to give): the definition alone', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}, {usd_price: 12.99}], name: 'bare', products: ['pro_monthly'], seed: 1})
    expect(e.arms.map((arm) => armLabel(e, arm, undefined))).toEqual(['control price', 'x0.8 (-20%)', '12.99 USD (+29.9%)'])
    expect(e.arms.map((arm) => armLabel(e, arm, []))).toEqual(['control price', 'x0.8 (-20%)', '12.99 USD (+29.9%)'])
  })

  it('a USD arm on a product priced 0 shows no change (there is none to compute)', async () => {
    const e = await createExperiment(store, {arms: [{usd_price: 12.99}], name: 'free', products: ['pro_monthly'], seed: 1})
    const free = {...e, products: e.products.map((p) => ({...p, base_px_minor: 0}))}
    expect(armLabel(free, e.arms[1], undefined)).toBe('12.99 USD')
    const quote = {...(await armQuotes(store, e, e.arms[1], 'US'))[0], control: 0, pct_change: null}
    expect(armLabel(free, e.arms[1], [{...quote, currency: 'EUR'}])).toBe('12.99 USD; e.g. pro_monthly 12.99 EUR in US')
  })

  it('packaging arms: the products they show', async () => {
    const e = await createExperiment(store, {arms: [{products: ['pro_monthly']}, {products: ['pro_monthly', 'team_monthly']}], name: 'pack', seed: 1, type: 'packaging'})
    expect(e.arms.map((arm) => armLabel(e, arm, undefined))).toEqual(['shows every product', 'shows pro_monthly', 'shows pro_monthly + team_monthly'])
  })
})

describe('armQuotes', () => {
  it('reads no lock: a lock held by the preview user in another country does not change the preview', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], name: 'lock', products: ['pro_monthly'], seed: 1})
    const held = await calculatePrice(await PricingContext.open(store), {country: 'DE', products: ['pro_monthly'], run_experiment: false, user_id: 'pricectl-arm-preview'})
    expect(held.currency).toBe('EUR')
    expect(store.db.prepare('SELECT count(*) AS n FROM locks').get()).toEqual({n: 1})
    expect(await armQuotes(store, e, e.arms[1], 'US')).toEqual([{control: 10, country: 'US', currency: 'USD', display: '$7.99', pct_change: -20.1, price: 7.99, price_minor: 799, product: 'pro_monthly'}])
    expect(await armQuotes(store, e, e.arms[0], 'US')).toMatchObject([{control: 10, currency: 'USD', price: 10}])
  })

  it('a preview that fails leaves a shared pricing context unforced: the next visitor is priced as usual', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], countries: ['TH'], name: 'th', products: ['pro_monthly'], seed: 1})
    store.db.prepare("DELETE FROM fx_rates WHERE currency = 'THB'").run()
    const ctx = await PricingContext.open(store)
    await expect(async () => await armQuotes(store, e, e.arms[1], 'TH', {ctx})).rejects.toThrow('no FX rate for THB')
    // A draft experiment: no visitor meets it unless forced into an arm.
    const q = await priceRequest(ctx, {country: 'US', override: true, products: ['pro_monthly'], run_experiment: true, user_id: 'visitor'}, {dryRun: true})
    expect(q.products.pro_monthly.price).toBe(10)
    expect(q.variants.experiment_id).toBe(0)
  })
})

describe('armBaseMinor', () => {
  it('the USD base price an arm concludes to; none for the control or a product the store no longer has', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}, {usd_price: 12.99}], name: 'base', products: ['pro_monthly'], seed: 1})
    const ctx = await PricingContext.open(store)
    expect(e.arms.map((arm) => armBaseMinor(ctx, e, arm, 'pro_monthly'))).toEqual([undefined, 799, 1299])
    expect(armBaseMinor(ctx, e, e.arms[1], 'no_such_product')).toBeUndefined()
  })
})
