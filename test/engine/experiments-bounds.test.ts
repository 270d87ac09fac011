import fc from 'fast-check'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {updateProduct} from '../../src/catalog/products.js'
import {convertMinor, minorDigits} from '../../src/currency.js'
import {clampToBounds, usdOf} from '../../src/experiments/bounds.js'
import {createExperiment, startExperiment, stopExperiment} from '../../src/experiments/manage.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice} from '../../src/pricing/price.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {createProducts} from '../helpers/catalog.js'
import {tempStore} from '../helpers/run.js'

/** Currencies of 0, 2 and 3 minor digits, strong and weak against USD. */
const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'KRW', 'INR', 'BRL', 'IDR', 'CLP', 'KWD', 'BHD', 'ISK', 'VND', 'CHF', 'TRY', 'ZAR']
const COUNTRIES = ['US', 'DE', 'GB', 'JP', 'KR', 'IN', 'BR', 'ID', 'CL', 'KW', 'BH', 'IS', 'VN', 'CH', 'TR', 'ZA', 'MX', 'PL']

describe('clampToBounds (pure)', () => {
  it('leaves a price inside the bounds alone and brings any other inside, to the nearest amount', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('USD', 'EUR', 'JPY', 'KWD', 'IDR', 'GBP'),
        fc.double({max: 30_000, min: 0.3, noNaN: true}),
        fc.integer({max: 10_000_000, min: 0}),
        fc.integer({max: 100_000, min: 0}),
        fc.integer({max: 100_000, min: 100}),
        (currency, rawRate, price, min, gap) => {
          const rate = currency === 'USD' ? 1 : rawRate
          const max = min + gap
          const r = clampToBounds(price, currency, rate, min, max)
          // Some amount always fits when one minor unit is worth no more than the gap.
          const unitCents = 10 ** (2 - minorDigits(currency)) / rate
          if (unitCents <= gap) expect(r).toBeDefined()
          if (!r) return
          const u = usdOf(r!.minor, currency, rate)
          expect(u).toBeGreaterThanOrEqual(min)
          expect(u).toBeLessThanOrEqual(max)
          const before = usdOf(price, currency, rate)
          if (before >= min && before <= max) expect(r).toEqual({clamped: null, minor: price})
          // Nearest: one more minor unit towards the original price would leave the bounds.
          if (r!.clamped === 'max') expect(usdOf(r!.minor + 1, currency, rate)).toBeGreaterThan(max)
          if (r!.clamped === 'min') expect(usdOf(r!.minor - 1, currency, rate)).toBeLessThan(min)
        },
      ),
      {numRuns: 500},
    )
  })

  it('says when no amount of a currency fits (bounds narrower than its minor unit)', () => {
    // 1 unit of a 0-digit currency at 0.5 per USD is worth 2 USD: nothing lands on exactly 10.01 USD.
    expect(clampToBounds(100, 'JPY', 0.5, 1001, 1001)).toBeUndefined()
    expect(clampToBounds(100, 'USD', 1, 500, 400)).toBeUndefined()
    expect(clampToBounds(100, 'USD', 1, null, null)).toEqual({clamped: null, minor: 100})
  })
})

// Skipped under `npm run mutate` only (vitest.mutate.config.ts): 3-4 s through the whole
// price path for each mutant it covers; the pure clampToBounds tests above stay in.
describe.skipIf(process.env.PRICECTL_MUTATE === '1')('no quote leaves [min_px, max_px] (property over arms, countries, currencies)', () => {
  let path: string
  let store: Store
  let previous: number | undefined
  beforeAll(async () => {
    path = tempStore()
    await createProducts(path, [
      {api_id: 'plan', base_px: 20, interval: 'month', interval_count: 1, name: 'Plan'},
      {api_id: 'annual', base_px: 200, country_prices: [{amount: 150, country: 'DE', currency: 'EUR'}, {amount: 20_000, country: 'JP', currency: 'JPY'}], interval: 'year', interval_count: 1, name: 'Annual'},
    ])
    store = openStore(path)
  })
  afterAll(async () => await store.close())

  it('holds for every arm that is not the baseline, refused arms excepted', async () => {
    const db = store.db
    let priced = 0
    let refused = 0
    let clamped = 0
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          arms: fc.array(fc.oneof(fc.record({multiplier: fc.double({max: 2.5, min: 0.4, noNaN: true}).map((m) => Math.round(m * 100) / 100)}), fc.record({usd_price: fc.integer({max: 5000, min: 500}).map((c) => c / 100)})), {maxLength: 3, minLength: 1}),
          country: fc.constantFrom(...COUNTRIES),
          currency: fc.option(fc.constantFrom(...CURRENCIES), {nil: undefined}),
          factor: fc.option(fc.double({max: 2.5, min: 0.2, noNaN: true}), {nil: undefined}),
          gap: fc.integer({max: 5000, min: 100}),
          min: fc.integer({max: 2000, min: 500}),
          pick: fc.nat(),
        }),
        async (c) => {
          const min = c.min / 100
          const max = (c.min + c.gap) / 100
          await updateProduct(store, 'plan', {max_px: max, min_px: min})
          await updateProduct(store, 'annual', {max_px: ((c.min + c.gap) * 10) / 100, min_px: (c.min * 10) / 100})
          db.prepare('DELETE FROM localization_factors').run()
          if (c.factor !== undefined) db.prepare("INSERT INTO localization_factors (country, factor, source) VALUES (?, ?, 'test')").run(c.country, c.factor)
          if (previous !== undefined) await stopExperiment(store, previous)
          // A USD price suits one billing period: such arms test the monthly plan only.
          const products = c.arms.some((a) => 'usd_price' in a) ? ['plan'] : ['plan', 'annual']
          let exp
          try {
            exp = await createExperiment(store, {arms: c.arms, name: 'bounds', products, seed: 1})
          } catch (error) {
            // Refused at creation (exit 2) exactly when an arm's USD price leaves a product's bounds.
            expect((error as Error).message).toMatch(/arm outside the price bounds/)
            const outside = c.arms.some((a) =>
              [['plan', 2000, c.min, c.min + c.gap] as const, ['annual', 20_000, c.min * 10, (c.min + c.gap) * 10] as const].filter(([id]) => products.includes(id)).some(([, base, lo, hi]) => {
                const usd = 'multiplier' in a ? base * a.multiplier : Math.round(a.usd_price * 100)
                return usd < lo || usd > hi
              }),
            )
            expect(outside).toBe(true)
            refused++
            return
          }
          await startExperiment(store, exp.id)
          previous = exp.id
          const ctx = await PricingContext.open(store)
          const arms = exp.arms.filter((a) => a.id !== 'baseline')
          ctx.experiments.pin = {armId: arms[c.pick % arms.length].id, experimentId: exp.id}
          const trace: {detail: string}[] = []
          const q = await calculatePrice(ctx, {country: c.country, currency: c.currency, products, user_id: `u${priced++}`}, {trace: trace as never})
          if (trace.some((t) => /above max_px|below min_px/.test(t.detail))) clamped++
          expect(q.variants).toMatchObject({experiment_id: exp.id, experimented_on: true})
          for (const [id, lo, hi] of [['plan', min, max], ['annual', min * 10, max * 10]] as const) {
            if (!products.includes(id)) continue
            const p = q.products[id]
            expect(p.price_usd, `${id} in ${q.currency} for ${c.country}`).toBeGreaterThanOrEqual(lo - 1e-9)
            expect(p.price_usd, `${id} in ${q.currency} for ${c.country}`).toBeLessThanOrEqual(hi + 1e-9)
            // price_usd is what the bounds were checked on: the local price at the latest rate.
            const rate = ctx.rate(q.currency)!.rate
            expect(p.price_usd).toBe(convertMinor(Math.round(p.price * 10 ** minorDigits(q.currency)), q.currency, rate, 'USD', 1) / 100)
          }
        },
      ),
      // Enough runs that the clamp count below is far from its threshold: at 150 runs it
      // averaged 12 and once came out at 3 (the inputs are random on every run).
      {numRuns: 400},
    )
    expect(priced).toBeGreaterThan(30)
    expect(refused).toBeGreaterThan(5)
    // Localized and converted prices leave the bounds often enough to exercise the clamp.
    expect(clamped).toBeGreaterThan(5)
  })
})
