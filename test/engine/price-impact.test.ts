import {afterEach, describe, expect, it} from 'vitest'

import {createProduct, updateProduct} from '../../src/catalog/products.js'
import {setFactor} from '../../src/localization/factors.js'
import {diffSnapshots, measureImpact, personasOf, type Snapshot, type SnapshotRow, snapshot, summarize, witness} from '../../src/pricing/impact.js'
import {setRule} from '../../src/pricing/rounding.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {dump} from '../helpers/dump.js'
import {tempStore} from '../helpers/run.js'

function row(product: string, country: string, price: number, extra: Partial<SnapshotRow> = {}): SnapshotRow {
  const currency = extra.currency ?? 'EUR'
  return {audience: 'default', country, currency, display: `${price} ${currency}`, minor: Math.round(price * 100), persona: 'default', price, product, ...extra}
}

function snap(rows: SnapshotRow[], countryPrices: Record<string, string[]> = {}): Snapshot {
  return {
    countryPrices: new Map(Object.entries(countryPrices).map(([p, c]) => [p, new Set(c)])),
    rows: new Map(rows.map((r) => [`${r.product}|${r.country}|${r.persona}`, r])),
  }
}

describe('diffSnapshots: the math', () => {
  it('reports changed prices with their percent change, the largest, and the summary', () => {
    const before = snap([row('a', 'DE', 10), row('a', 'FR', 8), row('b', 'DE', 100), row('b', 'IT', 50)])
    const after = snap([row('a', 'DE', 11.25), row('a', 'FR', 8), row('b', 'DE', 90), row('b', 'IT', 50)])
    const i = diffSnapshots(before, after)
    expect(i.changes.map((c) => [c.product, c.country, c.pct_change])).toEqual([
      ['a', 'DE', 12.5],
      ['b', 'DE', -10],
    ])
    expect(i.changes[0]).toMatchObject({after: {currency: 'EUR', display: '11.25 EUR', price: 11.25}, before: {display: '10 EUR', price: 10}, change: 'changed'})
    expect(i).toMatchObject({added: 0, changed: 2, compared: 4, countries: 1, largest: {country: 'DE', pct_change: 12.5, product: 'a'}, products: 2})
    expect(i.summary).toBe('largest moves +12.5% DE a, -10% DE b; 2 prices change in 2 products x 1 country')
  })

  it('compares whole minor units: a float wobble is no change, one cent is', () => {
    const i = diffSnapshots(snap([row('a', 'DE', 9.99), row('a', 'FR', 9.99)]), snap([row('a', 'DE', 9.990000001), row('a', 'FR', 10)]))
    expect(i.changes.map((c) => c.country)).toEqual(['FR'])
    expect(i.changes[0].pct_change).toBe(0.1)
  })

  it('a currency change has no percent; a removed price counts as a change, a new one only as added', () => {
    const before = snap([row('a', 'DE', 10), row('gone', 'DE', 5)])
    const after = snap([row('a', 'DE', 11, {currency: 'USD'}), row('new', 'DE', 7)])
    const i = diffSnapshots(before, after)
    expect(i.changes.map((c) => [c.product, c.change, c.pct_change])).toEqual([
      ['a', 'currency', null],
      ['gone', 'removed', null],
      ['new', 'added', null],
    ])
    expect(i.changed).toBe(2)
    expect(i.added).toBe(1)
    expect(i.largest).toBeNull()
    // Unmeasurable in percent: a currency change ranks first, a price no longer quoted counts as 100%.
    expect(i.summary).toBe('largest moves DE a EUR -> USD, DE gone no longer quoted; 2 prices change in 2 products x 1 country; 1 new price')
  })

  it('a price that can no longer be quoted is removed with the reason', () => {
    const i = diffSnapshots(snap([row('a', 'VE', 10)]), snap([row('a', 'VE', 0, {error: 'no FX rate for VES'})]))
    expect(i.changes).toEqual([expect.objectContaining({after: null, change: 'removed', note: 'no FX rate for VES'})])
  })

  it('an audience persona counts only where its member is in the audience, on either side', () => {
    const p = {persona: 'students'}
    const before = snap([row('a', 'DE', 10, {...p, audience: 'default'}), row('a', 'US', 10, {...p, audience: 'default'})])
    const after = snap([row('a', 'DE', 8, {...p, audience: 'students'}), row('a', 'US', 12, {...p, audience: 'default'})])
    const i = diffSnapshots(before, after)
    expect(i.changes).toEqual([expect.objectContaining({audience: 'students', country: 'DE', pct_change: -20})])
  })

  it('lists the country prices a write drops, per product', () => {
    const i = diffSnapshots(snap([], {a: ['DE', 'FR', 'JP'], b: ['DE']}), snap([], {a: ['DE'], b: ['DE']}))
    expect(i.dropped).toEqual([{count: 2, countries: ['FR', 'JP'], product: 'a'}])
    expect(i.summary).toBe('no price changes; drops 2 country prices (a: 2)')
  })

  it('summarize words singulars', () => {
    expect(summarize({added: 0, changed: 1, countries: 1, dropped: [], largest: {country: 'FR', pct_change: -5, product: 'x'}, products: 1})).toBe(
      'largest move -5% FR x; 1 price changes in 1 product x 1 country',
    )
  })
})

describe('witness: features that satisfy an audience', () => {
  it('meets every feature operator', () => {
    expect(
      witness([
        {operator: 'in', type: 'country', values: ['DE']},
        {feature: 'plan', operator: 'eq', type: 'feature', value: 'pro'},
        {feature: 'seats', operator: 'gt', type: 'feature', value: 3},
        {feature: 'age', operator: 'lt', type: 'feature', value: 26},
        {feature: 'tier', operator: 'in', type: 'feature', values: ['gold', 'silver']},
        {feature: 'beta', operator: 'exists', type: 'feature'},
        {feature: 'region', operator: 'neq', type: 'feature', value: 'eu'},
      ]),
    ).toEqual({age: 25, beta: true, plan: 'pro', region: 'eu-other', seats: 4, tier: 'gold'})
  })
})

describe('measureImpact on a real store', () => {
  let store: Store | undefined
  afterEach(async () => await store?.close())

  async function withProduct(countries: string[]): Promise<Store> {
    const path = tempStore()
    store = openStore(path)
    await createProduct(store, {
      api_id: 'starter_monthly',
      base_px: 9.99,
      country_prices: countries.map((country) => ({amount: 9.99, country, currency: 'EUR'})),
      interval: 'month',
      interval_count: 1,
      name: 'Starter',
    })
    await createProduct(store, {api_id: 'other', base_px: 20, interval: 'month', interval_count: 1, name: 'Other'})
    return store
  }

  it('a list-replacing update: the dropped country prices and the prices they move, rolled back exactly', async () => {
    const s = await withProduct(['DE', 'FR', 'JP', 'BR', 'IN'])
    const path = s.path
    await s.close()
    const before = dump(path)
    store = openStore(path)
    const r = await measureImpact(store, async () => await updateProduct(store!, 'starter_monthly', {country_prices: [{amount: 9.99, country: 'DE', currency: 'EUR'}]}), {products: ['starter_monthly']}, () => 'rollback')
    expect(r.committed).toBe(false)
    expect(r.result.changed).toBe(true)
    expect(r.impact.dropped).toEqual([{count: 4, countries: ['BR', 'FR', 'IN', 'JP'], product: 'starter_monthly'}])
    // JP, BR and IN go from 9.99 EUR to their own currency; FR stays in EUR at the FX price.
    const byCountry = new Map(r.impact.changes.map((c) => [c.country, c]))
    expect(byCountry.get('JP')).toMatchObject({after: {currency: 'JPY'}, before: {currency: 'EUR', price: 9.99}, change: 'currency'})
    expect(r.impact.changes.every((c) => c.product === 'starter_monthly')).toBe(true)
    expect(r.impact.summary).toContain('drops 4 country prices (starter_monthly: 4)')
    await store.close()
    store = undefined
    expect(dump(path)).toEqual(before)
  })

  it('commits when told to; a failing write writes nothing and rethrows', async () => {
    const s = await withProduct(['DE'])
    const r = await measureImpact(s, async () => await updateProduct(s, 'starter_monthly', {base_px: 12}), {products: ['starter_monthly']}, () => 'commit')
    expect(r.committed).toBe(true)
    expect(r.impact.changed).toBeGreaterThan(100)
    expect(r.impact.changes.find((c) => c.country === 'DE')).toBeUndefined() // the country price holds
    expect(r.impact.changes.find((c) => c.country === 'US')).toMatchObject({after: {display: '$12', price: 12}, before: {display: '$9.99', price: 9.99}, pct_change: 20.12})
    await expect(async () => await measureImpact(s, async () => {
      await updateProduct(s, 'starter_monthly', {base_px: 50})
      throw new Error('boom')
    }, {products: ['starter_monthly']}, () => 'commit')).rejects.toThrow('boom')
    expect(s.db.prepare('SELECT base_px_minor FROM products WHERE api_id = ?').pluck().get('starter_monthly')).toBe(1200)
  })

  it('a product scope snapshots only that product; a global change reaches every product', async () => {
    const s = await withProduct(['DE'])
    const only = await snapshot(s, {products: ['other']}, await personasOf(s, {}))
    expect(new Set([...only.rows.values()].map((r) => r.product))).toEqual(new Set(['other']))
    const r = await measureImpact(s, async () => await setRule(s, 'EUR', '0+: end .49 nearest'), {}, () => 'rollback')
    // Both products, in every EUR country but DE, where starter_monthly's country price holds.
    expect(new Set(r.impact.changes.map((c) => c.product))).toEqual(new Set(['other', 'starter_monthly']))
    expect(r.impact.changes.filter((c) => c.country === 'DE').map((c) => c.product)).toEqual(['other'])
    expect(r.impact.changes.every((c) => c.after?.currency === 'EUR')).toBe(true)
    const f = await measureImpact(s, async () => await setFactor(s, {country: 'FR', factor: 0.5, source: 'test', year: null}), {}, () => 'rollback')
    expect(f.impact.changes.map((c) => [c.product, c.country])).toEqual([['other', 'FR'], ['starter_monthly', 'FR']])
  })
})
