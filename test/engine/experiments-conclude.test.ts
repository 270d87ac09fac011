import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {getProduct} from '../../src/catalog/products.js'
import {armQuotes} from '../../src/experiments/arm-prices.js'
import {concludedWith, concludeExperiment} from '../../src/experiments/conclude.js'
import {createExperiment, requireExperiment, startExperiment} from '../../src/experiments/manage.js'
import {experimentResults, MIN_CONVERSIONS_PER_ARM, MIN_VISITORS_PER_ARM} from '../../src/experiments/results.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice} from '../../src/pricing/price.js'
import {previewPrices} from '../../src/pricing/preview.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {createProducts} from '../helpers/catalog.js'
import {dump} from '../helpers/dump.js'
import {experimentStore, insertSubscription} from '../helpers/experiment-fixtures.js'
import {tempStore} from '../helpers/run.js'

/** A new user's quote with no experiment (what the catalog prices are now). */
async function fresh(store: Store, user: string, product: string, country: string) {
  const q = await calculatePrice(await PricingContext.open(store), {country, products: [product], run_experiment: false, user_id: user})
  return {currency: q.currency, price: q.products[product].price}
}

describe('experiments results: labels, no winner before data, minimum sample', () => {
  let path: string
  let store: Store
  beforeEach(async () => {
    path = tempStore()
    await experimentStore(path)
    store = openStore(path)
  })
  afterEach(async () => await store.close())

  it('labels each arm with the price it sets: USD arms their price and change, multiplier arms an example in the default country', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}, {usd_price: 12.99}], name: 'labels', products: ['pro_monthly'], seed: 1})
    const r = await experimentResults(store, e.id)
    expect(r.arms.map((a) => a.label)).toEqual(['control price: pro_monthly 10 USD in US', 'x0.8 (-20%): e.g. pro_monthly 7.99 USD (-20.1%) in US', '12.99 USD (+29.9%)'])
    expect(r.arms[1].prices).toEqual([{control: 10, country: 'US', currency: 'USD', display: '$7.99', pct_change: -20.1, price: 7.99, product: 'pro_monthly'}])
  })

  it('shows the example in the first targeted country when the experiment does not target the default one', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 1.2}], countries: ['DE'], name: 'de', products: ['pro_monthly'], seed: 1})
    const r = await experimentResults(store, e.id)
    expect(r.arms[0].label).toBe('control price: pro_monthly 9 EUR in DE')
    expect(r.arms[1].prices[0]).toMatchObject({control: 9, country: 'DE', currency: 'EUR'})
    expect(r.arms[1].label).toMatch(/^x1\.2 \(\+20%\): e\.g\. pro_monthly \d+\.\d+ EUR \(\+\d+(\.\d+)?%\) in DE$/)
  })

  it('names no best arm with visitors but no conversion, one as soon as an arm converts, and warns below the minimum sample', async () => {
    const e = await createExperiment(store, {allocation: 'uniform', arms: [{multiplier: 0.8}], name: 'sample', products: ['pro_monthly'], seed: 1})
    await startExperiment(store, e.id)
    for (let i = 0; i < 10; i++) await store.experiments.recordExposure({anonymous: false, armId: 'baseline', at: 1000, experimentId: e.id, visitor: `b${i}`})
    for (let i = 0; i < 10; i++) await store.experiments.recordExposure({anonymous: false, armId: '1', at: 1000, experimentId: e.id, visitor: `a${i}`})
    let r = await experimentResults(store, e.id)
    expect(r.visitors).toBe(20)
    expect(r.best_arm).toBeNull()
    expect(r.sample).toMatchObject({enough: false, min_conversions: MIN_CONVERSIONS_PER_ARM, min_visitors: MIN_VISITORS_PER_ARM})
    expect(r.sample.warning).toContain('arm baseline: 10 visitors, 0 conversions; arm 1: 10 visitors, 0 conversions')
    insertSubscription(store.db, {amount_usd: 8, product: 'pro_monthly', user_id: 'a3'})
    r = await experimentResults(store, e.id)
    expect(r.best_arm).toBe(1)
    expect(r.sample.enough).toBe(false)
  })

  it('reports the sample as enough once every arm has the minimum visitors and conversions', async () => {
    const e = await createExperiment(store, {allocation: 'uniform', arms: [{multiplier: 0.8}], name: 'enough', products: ['pro_monthly'], seed: 1})
    await startExperiment(store, e.id)
    for (const arm of ['baseline', '1']) {
      for (let i = 0; i < MIN_VISITORS_PER_ARM; i++) await store.experiments.recordExposure({anonymous: false, armId: arm, at: 1000, experimentId: e.id, visitor: `${arm}-${i}`})
      for (let i = 0; i < MIN_CONVERSIONS_PER_ARM; i++) insertSubscription(store.db, {amount_usd: 10, product: 'pro_monthly', user_id: `${arm}-${i}`})
    }
    const r = await experimentResults(store, e.id)
    expect(r.sample).toEqual({enough: true, min_conversions: MIN_CONVERSIONS_PER_ARM, min_visitors: MIN_VISITORS_PER_ARM, warning: null})
    expect(r.best_arm).not.toBeNull()
  })
})

describe('experiments conclude (engine)', () => {
  let path: string
  let store: Store
  beforeEach(async () => {
    path = tempStore()
    await experimentStore(path)
    store = openStore(path)
  })
  afterEach(async () => await store.close())

  it('stops the experiment and makes the arm\'s quotes the catalog prices, base and country prices alike, with the impact', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], name: 'cheaper', products: ['pro_monthly', 'pro_yearly'], seed: 1})
    await startExperiment(store, e.id)
    const arm = (await requireExperiment(store, e.id)).arms[1]
    const us = await armQuotes(store, await requireExperiment(store, e.id), arm, 'US')
    const de = await armQuotes(store, await requireExperiment(store, e.id), arm, 'DE', {products: ['pro_monthly']})
    const before = await previewPrices(store, {countries: ['DE', 'US'], products: ['pro_monthly', 'pro_yearly']})

    const r = await concludeExperiment(store, e.id, '1')
    expect(r).toMatchObject({arm_id: 1, dry_run: false, stopped: true, success: true})
    expect((await requireExperiment(store, e.id)).status).toBe('stopped')
    expect((await concludedWith(store, e.id))?.arm).toBe('1')
    // What a new visitor of the arm was quoted is now what every new visitor is quoted.
    expect(await fresh(store, 'n1', 'pro_monthly', 'US')).toEqual({currency: 'USD', price: us[0].price})
    expect(await fresh(store, 'n2', 'pro_yearly', 'US')).toEqual({currency: 'USD', price: us[1].price})
    expect(await fresh(store, 'n3', 'pro_monthly', 'DE')).toEqual({currency: 'EUR', price: de[0].price})
    expect((await getProduct(store, 'pro_monthly'))!.base_px_minor).toBe(799)
    expect(r.products.find((p) => p.product === 'pro_monthly')).toEqual({
      base_px_after: 7.99,
      base_px_before: 10,
      country_prices: [{after: de[0].price, before: 9, country: 'DE', currency: 'EUR'}],
      product: 'pro_monthly',
    })
    // The impact is every previewed price that moved, before -> after.
    const after = await previewPrices(store, {countries: ['DE', 'US'], products: ['pro_monthly', 'pro_yearly']})
    for (const b of before) {
      const a = after.find((x) => x.product === b.product && x.country === b.country)!
      const c = r.changes.find((x) => x.product === b.product && x.country === b.country)
      if (a.price === b.price) expect(c).toBeUndefined()
      else expect(c).toMatchObject({after: a.price, before: b.price, change: 'changed'})
    }
    expect(r.changes.find((c) => c.product === 'pro_monthly' && c.country === 'US')).toMatchObject({after: 7.99, before: 10, pct_change: -20.1})
  })

  it('--dry-run reports the same impact and writes nothing', async () => {
    const e = await createExperiment(store, {arms: [{usd_price: 12.99}], name: 'dearer', products: ['pro_monthly'], seed: 1})
    await startExperiment(store, e.id)
    await store.close()
    const snapshot = dump(path)
    store = openStore(path)
    const dry = await concludeExperiment(store, e.id, '1', {dryRun: true})
    await store.close()
    expect(dump(path)).toEqual(snapshot)
    store = openStore(path)
    expect(dry).toMatchObject({dry_run: true, stopped: true})
    const real = await concludeExperiment(store, e.id, '1')
    expect(real.changes).toEqual(dry.changes)
    expect(real.products).toEqual(dry.products)
  })

  it('with a country target, writes country prices for those countries only', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 1.2}], countries: ['FR'], name: 'fr', products: ['team_monthly'], seed: 1})
    await startExperiment(store, e.id)
    const fr = (await armQuotes(store, await requireExperiment(store, e.id), (await requireExperiment(store, e.id)).arms[1], 'FR'))[0]
    const r = await concludeExperiment(store, e.id, '1')
    const p = (await getProduct(store, 'team_monthly'))!
    expect(p.base_px_minor).toBe(3000)
    expect(p.country_prices.map((c) => [c.country, c.currency])).toEqual([['FR', 'EUR']])
    expect(await fresh(store, 'f', 'team_monthly', 'FR')).toEqual({currency: 'EUR', price: fr.price})
    expect(await fresh(store, 'u', 'team_monthly', 'US')).toEqual({currency: 'USD', price: 30})
    expect(r.products[0].country_prices).toEqual([{after: fr.price, before: null, country: 'FR', currency: 'EUR'}])
  })

  it('the baseline arm only stops the experiment', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], name: 'keep', products: ['pro_monthly'], seed: 1})
    await startExperiment(store, e.id)
    const r = await concludeExperiment(store, e.id, 'baseline')
    expect(r).toMatchObject({arm_id: 'baseline', changes: [], products: [], stopped: true})
    expect((await getProduct(store, 'pro_monthly'))!.base_px_minor).toBe(1000)
  })

  it('is one transaction: a product write that fails leaves the experiment running and unconcluded', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], name: 'atomic', products: ['pro_monthly', 'pro_yearly'], seed: 1})
    await startExperiment(store, e.id)
    // The second product's write fails, after the stop and the first product were written.
    store.db.exec(`CREATE TRIGGER fail_yearly BEFORE UPDATE ON products WHEN NEW.api_id = 'pro_yearly' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`)
    await expect(async () => await concludeExperiment(store, e.id, '1')).rejects.toThrow(/disk on fire/)
    expect((await requireExperiment(store, e.id)).status).toBe('running')
    expect(await concludedWith(store, e.id)).toBeUndefined()
    expect((await getProduct(store, 'pro_monthly'))!.base_px_minor).toBe(1000)
  })

  it('refuses a second conclusion, a draft, a packaging experiment, an audience target and an unknown arm', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], name: 'once', products: ['pro_monthly'], seed: 1})
    await expect(async () => await concludeExperiment(store, e.id, '1')).rejects.toThrow(/is a draft/)
    await startExperiment(store, e.id)
    await expect(async () => await concludeExperiment(store, e.id, '7')).rejects.toThrow(/has no arm "7": its arms are baseline \(control price\), 1 \(x0.8\)/)
    await concludeExperiment(store, e.id, '1')
    await expect(async () => await concludeExperiment(store, e.id, '1')).rejects.toThrow(/already concluded with arm 1/)
    const pack = await createExperiment(store, {arms: [{products: ['pro_monthly']}], name: 'pack', products: ['pro_monthly', 'team_monthly'], seed: 1, type: 'packaging'})
    await startExperiment(store, pack.id)
    await expect(async () => await concludeExperiment(store, pack.id, '1')).rejects.toThrow(/packaging experiment/)
  })
})

describe('a usd_price arm is localized like a base price (FX x localization factor, then rounded)', () => {
  let store: Store
  beforeEach(async () => {
    const path = tempStore()
    // `ref` costs what the arm sets: its control price is the base layer of 20 USD.
    await createProducts(path, [
      {api_id: 'plan', base_px: 15, interval: 'month', interval_count: 1, name: 'Plan'},
      {api_id: 'ref', base_px: 20, interval: 'month', interval_count: 1, name: 'Ref'},
    ])
    store = openStore(path)
  })
  afterEach(async () => await store.close())

  it.each([
    ['FR with a factor', 'FR', 0.5],
    ['IN with a factor', 'IN', 0.3],
    ['US with a factor', 'US', 0.8],
    ['FR without a factor', 'FR', undefined],
  ])('%s', async (_, country, factor) => {
    if (factor !== undefined) store.db.prepare("INSERT INTO localization_factors (country, factor, source) VALUES (?, ?, 'test')").run(country, factor)
    const e = await createExperiment(store, {arms: [{usd_price: 20}], name: 'usd', products: ['plan'], seed: 1})
    const arm = (await armQuotes(store, e, e.arms[1], country))[0]
    const ref = (await previewPrices(store, {countries: [country], products: ['ref']}))[0]
    expect(arm.currency).toBe(ref.currency)
    expect(arm.price).toBe(ref.price)
  })
})
