import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {Writable} from 'node:stream'
import {beforeAll, describe, expect, it} from 'vitest'

import {priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice} from '../../src/pricing/price.js'
import {openStore} from '../../src/store/db.js'
import {copyOf, written} from '../helpers/pricing-store.js'
import {tempStore} from '../helpers/run.js'
import {at, coupon, must, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * Batch pricing reads the locks and user countries of a chunk of requests in one call and
 * writes them in one call (src/pricing/locks.ts QuoteChunk). Whatever the chunk size, and
 * wherever a chunk boundary falls (a user priced twice in one chunk, or in two; an IP's
 * anonymous lock adopted in the same chunk or the next), the results and the store must be
 * exactly those of pricing the requests one by one.
 */
const NOW = '2026-03-01T00:00:00Z'
const IP = '198.51.100.23'

const REQUESTS: Record<string, unknown>[] = [
  {country: 'DE', products: ['basic', 'yearly'], user_id: 'u1'},
  {country: 'DE', products: ['basic', 'yearly'], user_id: 'u1'},
  {country: 'JP', products: ['basic'], user_id: 'u2'},
  {country: 'IN', override: true, products: ['basic'], user_id: 'u2'},
  {country: 'US', products: ['basic', 'lifetime'], user_id: 'u1'},
  {country: 'BR', products: ['basic'], user_id: 'u3'},
  {country: 'GB', ip: IP, products: ['basic']},
  {ip: IP, products: ['basic', 'yearly'], user_id: 'u4'},
  {country: 'FR', ip: IP, products: ['basic']},
  {currency: 'JPY', override_currency: true, products: ['basic'], user_id: 'u3'},
  {coupons: {basic: 'TEN'}, country: 'DE', products: ['basic'], user_id: 'u5'},
  {coupons: {basic: 'TEN'}, products: ['basic', 'yearly'], user_id: 'u5'},
  {products: ['basic'], user_id: 'u6'},
  {country: 'AT', products: ['basic'], user_id: 'u6', override: true},
  {country: 'nope', products: ['basic'], user_id: 'u7'},
  {country: 'DE', products: ['no_such_product'], user_id: 'u8'},
  {country: 'DE', products: ['basic'], user_id: 'u7'},
  {ip: IP, override: true, products: ['lifetime'], user_id: 'u4'},
  {country: 'DE', products: ['basic', 'yearly'], user_id: 'u1'},
]

let fixture: string

beforeAll(async () => {
  fixture = tempStore()
  await segCatalog(fixture)
  await must(fixture, ['coupons', 'create'], coupon('TEN', {coupon_type: 'percentage', value: 10}))
  await must(fixture, ['audiences', 'create'], {api_id: 'dach', name: 'DACH', priority: 2, rules: ['country in AT,CH']})
  await must(fixture, ['campaigns', 'create'], {api_id: 'dach_sale', audience: 'dach', coupon: 'TEN', name: 'Sale'})
}, 60_000)



async function batch(chunkSize: number): Promise<{lines: string[]; path: string}> {
  const path = copyOf(fixture)
  const file = join(dirname(path), 'requests.jsonl')
  writeFileSync(file, REQUESTS.map((r) => JSON.stringify(r)).join('\n') + '\n')
  let text = ''
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8')
      done()
    },
  })
  const store = openStore(path)
  try {
    await at(NOW, async () => priceBatch(await PricingContext.open(store), file, out, {chunkSize, output: 'jsonl'}))
  } finally {
    await store.close()
  }
  return {lines: text.split('\n').filter(Boolean), path}
}

async function oneByOne(): Promise<{lines: string[]; path: string}> {
  const path = copyOf(fixture)
  const store = openStore(path)
  const lines: string[] = []
  try {
    const ctx = await PricingContext.open(store)
    for (const [i, request] of REQUESTS.entries()) {
      try {
        lines.push(JSON.stringify(await at(NOW, () => calculatePrice(ctx, request))))
      } catch (error) {
        lines.push(JSON.stringify({line: i + 1, message: (error as Error).message, success: false}))
      }
    }
  } finally {
    await store.close()
  }
  return {lines, path}
}

describe('batch pricing in chunks', () => {
  it('equals pricing one by one, for any chunk size: results line for line, and the locks, users and exposures written', async () => {
    const single = await oneByOne()
    expect(single.lines).toHaveLength(REQUESTS.length)
    // Two requests are refused (an unknown country, an unknown product): their lines say so.
    expect(single.lines.filter((l) => l.includes('"success":false'))).toHaveLength(2)
    const stored = written(single.path)
    expect(stored.locks.length).toBeGreaterThan(5)
    for (const size of [1, 2, 3, 5, 512]) {
      const b = await batch(size)
      expect(b.lines, `chunk size ${size}`).toEqual(single.lines)
      expect(written(b.path), `chunk size ${size}`).toEqual(stored)
    }
  }, 120_000)

  it("the catalog snapshot a batch reads at once is each product as pricing reads it one by one", async () => {
    const path = copyOf(fixture)
    await must(path, ['products', 'create'], {
      api_id: 'plans',
      base_px: 10,
      country_prices: [{amount: 9, country: 'FR', currency: 'EUR'}],
      integrations: [
        {currency: 'EUR', gateway_d_plan_id: 'plan_eur', type: 'gateway_d'},
        {currency: 'GBP', gateway_d_plan_id: 'plan_gbp', type: 'gateway_d'},
        {currency: 'EUR', gateway_d_plan_id: 'plan_eur2', type: 'gateway_d'},
        {gateway_a_product_id: 'prod_plans', interval: 'month', interval_count: 1, type: 'gateway_a_with_interval'},
        {gateway_c_plan_id: 'c_plans', type: 'gateway_c'},
      ],
      interval: 'month',
      interval_count: 1,
      name: 'Plans',
    })
    const store = openStore(path)
    try {
      expect(await store.pricing.product('plans')).toMatchObject({gateways: ['gateway_a', 'gateway_c', 'gateway_d'], planCurrencies: ['EUR', 'GBP']})
      const snapshot = await store.pricing.catalogSnapshot()
      expect(snapshot.map((p) => p.api_id)).toEqual(await store.pricing.productApiIds())
      expect(snapshot.length).toBeGreaterThan(1)
      const sorted = (p: Awaited<ReturnType<typeof store.pricing.catalogSnapshot>>[number]) => ({...p, countryPrices: [...p.countryPrices].sort((a, b) => a.country.localeCompare(b.country))})
      for (const p of snapshot) expect(sorted(p)).toEqual(sorted((await store.pricing.product(p.api_id))!))
    } finally {
      await store.close()
    }
  })
})
