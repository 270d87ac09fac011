import Database from 'better-sqlite3'
import {afterEach, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {getProduct} from '../../src/catalog/products.js'
import {concludedWith, concludeExperiment} from '../../src/experiments/conclude.js'
import {createExperiment, requireExperiment, stopExperiment} from '../../src/experiments/manage.js'
import {createAudience} from '../../src/segments/audiences.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {createProducts} from '../helpers/catalog.js'
import {copyOf} from '../helpers/pricing-store.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * What `experiments conclude` writes and says, number for number: which prices each product
 * gets (each product quoted on its own), which country prices a country target keeps, the
 * summary's counts and the message's wording.
 */

// alpha's country prices are stored out of country order (DE, JP, FR), FR in USD.
const CATALOG = [
  {
    api_id: 'alpha',
    base_px: 10,
    country_prices: [
      {amount: 9, country: 'DE', currency: 'EUR'},
      {amount: 1500, country: 'JP', currency: 'JPY'},
      {amount: 12, country: 'FR', currency: 'USD'},
    ],
    interval: 'month',
    interval_count: 1,
    name: 'Alpha',
  },
  {api_id: 'beta', base_px: 30, country_prices: [{amount: 20, country: 'DE', currency: 'EUR'}], interval: 'month', interval_count: 1, name: 'Beta'},
  {api_id: 'big', base_px: 1000, interval: 'month', interval_count: 1, name: 'Big'},
  {api_id: 'free', base_px: 0, interval: 'month', interval_count: 1, name: 'Free'},
]

/** A product's stored country prices, in stored order. */
const stored = async (store: Store, api: string) => (await getProduct(store, api))!.country_prices.map((c) => [c.country, c.currency, c.amount_minor])

let fixture: string
beforeAll(async () => {
  fixture = tempStore()
  await createProducts(fixture, CATALOG)
  // Fixed rates of the operator (EUR 0.5, JPY 100 per USD), so localized prices are plain.
  for (const [currency, rate] of [
    ['EUR', '0.5'],
    ['JPY', '100'],
  ]) {
    const r = await run(fixture, ['fx', 'set', currency, rate, '--date', '2020-01-01', '--yes', '--json'])
    if (r.code !== 0) throw new Error(`fx set ${currency}: ${r.stdout} ${r.stderr}`)
  }
})

let path: string
let store: Store
beforeEach(() => {
  path = copyOf(fixture)
  store = openStore(path)
})
afterEach(async () => await store.close())

const start = async (body: Record<string, unknown>) => await createExperiment(store, {name: 'pinned', seed: 1, ...body}, {start: true})

describe('experiments conclude without a country target', () => {
  it('gives each product its own arm prices, base and every country price, and sorts the stored country prices by country', async () => {
    const e = await start({arms: [{multiplier: 1.2}], products: ['alpha', 'beta']})
    const r = await concludeExperiment(store, e.id, '1')
    expect(r.products).toEqual([
      {
        base_px_after: 11.99,
        base_px_before: 10,
        country_prices: [
          {after: 10.99, before: 9, country: 'DE', currency: 'EUR'},
          {after: 1800, before: 1500, country: 'JP', currency: 'JPY'},
          {after: 13.99, before: 12, country: 'FR', currency: 'USD'},
        ],
        product: 'alpha',
      },
      // beta's DE price is beta's quote (x1.2 on its 20 EUR), not alpha's.
      {base_px_after: 35.99, base_px_before: 30, country_prices: [{after: 23.99, before: 20, country: 'DE', currency: 'EUR'}], product: 'beta'},
    ])
    expect(await stored(store, 'alpha')).toEqual([
      ['DE', 'EUR', 1099],
      ['FR', 'USD', 1399],
      ['JP', 'JPY', 1800],
    ])
    expect(await stored(store, 'beta')).toEqual([['DE', 'EUR', 2399]])
    expect((await getProduct(store, 'beta'))!.base_px_minor).toBe(3599)
    expect(r.summary).toBe('8 of 8 prices change (8 up, 0 down) on 2 product(s)')
    expect(r.message).toBe('concluded experiment 1 "pinned" with arm 1 (x1.2): stopped it; 8 of 8 prices change (8 up, 0 down) on 2 product(s)')
  })

  it('counts the prices that go up and those that go down (--dry-run words it as such)', async () => {
    const e = await start({arms: [{usd_price: 20}], products: ['alpha', 'beta']})
    const r = await concludeExperiment(store, e.id, '1', {dryRun: true})
    expect(r.changes.map((c) => [c.product, c.country, c.before, c.after])).toEqual([
      ['alpha', 'DE', 9, 9.99],
      ['alpha', 'FR', 12, 20],
      ['alpha', 'JP', 1500, 2000],
      ['alpha', 'US', 10, 20],
      ['beta', 'DE', 20, 9.99],
      ['beta', 'FR', 30, 20],
      ['beta', 'JP', 3000, 2000],
      ['beta', 'US', 30, 20],
    ])
    expect(r.message).toBe('would conclude experiment 1 "pinned" with arm 1 (20 USD): would stop it; 8 of 8 prices change (4 up, 4 down) on 2 product(s) (dry run: nothing written)')
    expect(r.dry_run).toBe(true)
  })

  it('counts a cent on a large price as up, although its pct_change rounds to 0', async () => {
    const e = await start({arms: [{usd_price: 1000.01}], products: ['big']})
    const r = await concludeExperiment(store, e.id, '1')
    expect(r.changes).toEqual([
      {after: 1000.01, audience: 'default', before: 1000, change: 'changed', country: 'US', currency_after: 'USD', currency_before: 'USD', pct_change: 0, product: 'big'},
    ])
    expect(r.summary).toBe('1 of 4 prices change (1 up, 0 down) on 1 product(s)')
    expect(r.products).toEqual([{base_px_after: 1000.01, base_px_before: 1000, country_prices: [], product: 'big'}])
  })

  it('counts a price from 0 as up (its pct_change is null)', async () => {
    const e = await start({arms: [{usd_price: 20}], products: ['free']})
    const r = await concludeExperiment(store, e.id, '1')
    expect(r.changes.map((c) => [c.country, c.before, c.after, c.pct_change])).toEqual([
      ['DE', 0, 9.99, null],
      ['FR', 0, 9.99, null],
      ['JP', 0, 2000, null],
      ['US', 0, 20, null],
    ])
    expect(r.summary).toBe('4 of 4 prices change (4 up, 0 down) on 1 product(s)')
  })

  it('the baseline arm: "no price changes" with the number of prices previewed', async () => {
    const e = await start({arms: [{multiplier: 1.2}], products: ['alpha', 'beta']})
    const r = await concludeExperiment(store, e.id, 'baseline')
    expect(r.summary).toBe('no price changes (8 prices previewed)')
    expect(r.message).toBe('concluded experiment 1 "pinned" with arm baseline (control price): stopped it; no price changes (8 prices previewed)')
  })
})

describe('experiments conclude with a country target', () => {
  it('sets the targeted countries only: a replaced price reports its old amount, an added one none, the others stay', async () => {
    // IT has no price anywhere before: it is previewed because it is targeted.
    const e = await start({arms: [{multiplier: 1.2}], countries: ['FR', 'IT'], products: ['beta', 'alpha']})
    const r = await concludeExperiment(store, e.id, '1')
    expect(r.products).toEqual([
      {
        base_px_after: 30,
        base_px_before: 30,
        country_prices: [
          {after: 17.99, before: null, country: 'FR', currency: 'EUR'},
          {after: 17.99, before: null, country: 'IT', currency: 'EUR'},
        ],
        product: 'beta',
      },
      {
        base_px_after: 10,
        base_px_before: 10,
        country_prices: [
          {after: 13.99, before: 12, country: 'FR', currency: 'USD'},
          {after: 5.99, before: null, country: 'IT', currency: 'EUR'},
        ],
        product: 'alpha',
      },
    ])
    expect(await stored(store, 'alpha')).toEqual([
      ['DE', 'EUR', 900],
      ['FR', 'USD', 1399],
      ['IT', 'EUR', 599],
      ['JP', 'JPY', 1500],
    ])
    expect(await stored(store, 'beta')).toEqual([
      ['DE', 'EUR', 2000],
      ['FR', 'EUR', 1799],
      ['IT', 'EUR', 1799],
    ])
    // A basket of a country is quoted in one currency: FR's moves from alpha's USD to beta's new EUR price ("other").
    expect(r.changes.map((c) => [c.product, c.country, c.change, c.before, c.after, c.currency_before, c.currency_after])).toEqual([
      ['alpha', 'FR', 'currency', 12, 6.99, 'USD', 'EUR'],
      ['alpha', 'IT', 'changed', 4.99, 5.99, 'EUR', 'EUR'],
      ['beta', 'FR', 'currency', 30, 17.99, 'USD', 'EUR'],
      ['beta', 'IT', 'changed', 14.99, 17.99, 'EUR', 'EUR'],
    ])
    expect(r.summary).toBe('4 of 10 prices change (2 up, 0 down, 2 other) on 2 product(s)')
  })
})

describe('experiments conclude: status, refusals, arm text', () => {
  it('an experiment stopped before: keeps its stop time and says it was already stopped', async () => {
    const e = await start({arms: [{multiplier: 1.2}], products: ['big']})
    vi.stubEnv('PRICECTL_NOW', '2026-01-01T00:00:00Z')
    try {
      await stopExperiment(store, e.id)
      const stoppedAt = (await requireExperiment(store, e.id)).stopped_at
      vi.stubEnv('PRICECTL_NOW', '2026-02-01T00:00:00Z')
      const r = await concludeExperiment(store, e.id, '1')
      expect(r.stopped).toBe(false)
      expect(r.experiment).toMatchObject({status: 'stopped', stopped_at: stoppedAt})
      expect(r.message).toBe('concluded experiment 1 "pinned" with arm 1 (x1.2): it was already stopped; 4 of 4 prices change (4 up, 0 down) on 1 product(s)')
    } finally {
      vi.unstubAllEnvs()
    }
  })

  it('refuses an audience-targeted experiment and writes nothing', async () => {
    await createAudience(store, {api_id: 'students', name: 'Students', priority: 5, rules: [{feature: 'student', operator: 'eq', type: 'feature', value: 1}]})
    const e = await start({arms: [{multiplier: 1.2}], audience: 'students', products: ['alpha']})
    await expect(async () => await concludeExperiment(store, e.id, '1')).rejects.toThrow(
      'experiment 1 targets audience students: conclude writes product prices, which every audience would get; stop it ("pricectl experiments stop 1") and set the audience\'s price instead ("pricectl audiences update students ...")',
    )
    expect((await requireExperiment(store, e.id)).status).toBe('running')
    expect(await concludedWith(store, e.id)).toBeUndefined()
    expect((await getProduct(store, 'alpha'))!.base_px_minor).toBe(1000)
  })

  it('takes the arm as typed around spaces', async () => {
    const e = await start({arms: [{multiplier: 1.2}], products: ['big']})
    expect((await concludeExperiment(store, e.id, ' 1 ')).arm_id).toBe(1)
    expect((await concludedWith(store, e.id))?.arm).toBe('1')
  })

  it('holds the write lock from its first read: another writer cannot change a price between the preview and the writes', async () => {
    const e = await start({arms: [{multiplier: 1.2}], products: ['alpha']})
    const other = new Database(path)
    other.pragma('busy_timeout = 0')
    const repo = store.experiments
    const setStatus = repo.setStatus.bind(repo)
    let intruder: unknown
    // The first write of conclude, after its reads: another connection tries to write then.
    repo.setStatus = async (...args: Parameters<typeof setStatus>) => {
      try {
        other.prepare("UPDATE products SET base_px_minor = 1 WHERE api_id = 'alpha'").run()
      } catch (error) {
        intruder = error
      }
      await setStatus(...args)
    }
    try {
      const r = await concludeExperiment(store, e.id, '1')
      expect((intruder as {code?: string} | undefined)?.code).toBe('SQLITE_BUSY')
      expect(r.products[0]).toMatchObject({base_px_after: 11.99, base_px_before: 10})
      expect((await getProduct(store, 'alpha'))!.base_px_minor).toBe(1199)
    } finally {
      other.close()
    }
  })
})
