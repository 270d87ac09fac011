import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {CouponDef, Product, ProductDef} from '../../src/store/port/catalog.js'
import {UniqueConflictError} from '../../src/store/port/errors.js'
import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'

const AT = '2026-05-01T10:00:00.000Z'

function def(apiId: string, over: Partial<ProductDef> = {}): ProductDef {
  return {
    api_id: apiId,
    base_px_minor: 999,
    baseline: null,
    country_prices: [],
    features: [],
    integrations: [],
    interval: 'month',
    interval_count: 1,
    max_px_minor: null,
    min_px_minor: null,
    name: `Name of ${apiId}`,
    product_trials: [],
    ...over,
  }
}

const FULL = def('pro', {
  base_px_minor: 1299,
  country_prices: [
    {amount_minor: 1099, country: 'DE', currency: 'EUR'},
    {amount_minor: 150_000, country: 'JP', currency: 'JPY'},
  ],
  features: [
    {api_id: 'seats', description: 'Team seats', feature_group: {api_id: 'limits', description: 'Usage limits', name: 'Limits'}, name: 'Seats', status: 'active', type: 'numeric', unit: 'seats', value: 5},
    {api_id: 'sso', description: '', feature_group: null, name: 'SSO', status: 'inactive', type: 'boolean', unit: null, value: 0},
  ],
  integrations: [
    {gateway_a_product_id: 'prod_1', type: 'gateway_a'},
    {currency: 'EUR', gateway_d_plan_id: 'plan_d', type: 'gateway_d'},
  ],
  max_px_minor: 1999,
  min_px_minor: 499,
  product_trials: [{interval: 'day', interval_count: 14}],
})

/** What a saved product reads back as, store ids aside. */
function asDef(p: Product): ProductDef {
  return {
    api_id: p.api_id,
    base_px_minor: p.base_px_minor,
    baseline: p.baseline_api_id,
    country_prices: p.country_prices,
    features: p.features.map((f) => ({
      api_id: f.api_id,
      description: f.description,
      feature_group: f.feature_group && {api_id: f.feature_group.api_id, description: f.feature_group.description, name: f.feature_group.name},
      name: f.name,
      status: f.status,
      type: f.type,
      unit: f.unit,
      value: f.value,
    })),
    integrations: p.integrations,
    interval: p.interval,
    interval_count: p.interval_count,
    max_px_minor: p.max_px_minor,
    min_px_minor: p.min_px_minor,
    name: p.name,
    product_trials: p.product_trials,
  }
}

const coupon = (apiId: string, over: Partial<CouponDef> = {}): CouponDef => ({
  active_from: null,
  active_till: null,
  amount_minor: null,
  api_id: apiId,
  coupon_type: 'percentage',
  currency: null,
  external: [],
  name: `Coupon ${apiId}`,
  percent: 10,
  status: 'ACTIVE',
  ...over,
})

describe.each(ADAPTERS)('store port contract, catalog: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  it('saves a whole product and reads it back unchanged, lists in their saved order', async () => {
    expect(await store.catalog.saveProducts([FULL], AT)).toEqual({inserted: ['pro'], updated: []})
    const [p] = await store.catalog.getProducts(['pro'])
    expect(asDef(p)).toEqual(FULL)
    expect(p).toMatchObject({baseline_id: null, created_at: AT, updated_at: AT})
    expect(p.features[0].feature_group).toMatchObject({api_id: 'limits', id: p.features[0].group_id})
    expect(await store.catalog.featureGroups([p.features[0].group_id!, 4242])).toEqual(new Map([[p.features[0].group_id!, {api_id: 'limits', description: 'Usage limits', name: 'Limits'}]]))
  })

  it('replaces a saved product whole: lists as whole lists, created_at kept, updated_at stamped', async () => {
    await store.catalog.saveProducts([FULL], AT)
    const next = {...FULL, country_prices: [{amount_minor: 899, country: 'FR', currency: 'EUR'}], features: [], integrations: [], product_trials: []}
    expect(await store.catalog.saveProducts([next], '2026-06-01T00:00:00.000Z')).toEqual({inserted: [], updated: ['pro']})
    const [p] = await store.catalog.getProducts(['pro'])
    expect(asDef(p)).toEqual(next)
    expect(p).toMatchObject({created_at: AT, updated_at: '2026-06-01T00:00:00.000Z'})
  })

  it('lists products by api_id whatever the insertion order; gets them in the order asked, unknown ones left out', async () => {
    await store.catalog.saveProducts([def('c'), def('a')], AT)
    await store.catalog.saveProducts([def('b')], AT)
    expect((await store.catalog.listProducts()).map((p) => p.api_id)).toEqual(['a', 'b', 'c'])
    expect((await store.catalog.getProducts(['c', 'missing', 'a'])).map((p) => p.api_id)).toEqual(['c', 'a'])
    expect(await store.catalog.getProducts([])).toEqual([])
    const ids = await store.catalog.productIds(['a', 'missing', 'c'])
    expect([...ids.keys()].sort()).toEqual(['a', 'c'])
    expect(await store.catalog.productApiIds([ids.get('a')!, 9999])).toEqual(new Map([[ids.get('a')!, 'a']]))
  })

  it('links a baseline named further down the same chunk, and swaps names within one chunk', async () => {
    await store.catalog.saveProducts([def('intro', {baseline: 'yearly', name: 'Yearly'}), def('yearly', {name: 'Intro'})], AT)
    const intro = (await store.catalog.getProducts(['intro']))[0]
    expect(intro.baseline_api_id).toBe('yearly')
    expect(intro.baseline_id).toBe((await store.catalog.productIds(['yearly'])).get('yearly'))
    await store.catalog.saveProducts([def('intro', {baseline: 'yearly', name: 'Intro'}), def('yearly', {name: 'Yearly'})], AT)
    expect((await store.catalog.listProducts()).map((p) => [p.api_id, p.name])).toEqual([
      ['intro', 'Intro'],
      ['yearly', 'Yearly'],
    ])
  })

  it('a chunk of N saves what N single saves save', async () => {
    const defs = [def('base'), {...FULL, baseline: 'base'}, def('z', {features: [{...FULL.features[0], value: 9}]})]
    const other = await adapter.open()
    try {
      await store.catalog.saveProducts(defs, AT)
      for (const d of defs) await other.store.catalog.saveProducts([d], AT)
      expect(await other.store.catalog.listProducts()).toEqual(await store.catalog.listProducts())
    } finally {
      await other.cleanup()
    }
  })

  it('a taken unique key is a UniqueConflictError, and the chunk writes nothing', async () => {
    await store.catalog.saveProducts([def('a', {name: 'Same'})], AT)
    const error = await (async () => {
      try {
        await store.catalog.saveProducts([def('b'), def('c', {name: 'Same'})], AT)
      } catch (error_) {
        return error_
      }
    })()
    expect(error).toBeInstanceOf(UniqueConflictError)
    expect(error).toMatchObject({entity: 'product', key: 'name', value: 'Same'})
    expect((await store.catalog.listProducts()).map((p) => p.api_id)).toEqual(['a'])
    await expect(async () => await store.catalog.saveCoupons([coupon('X', {external: [{external_id: '1', source: 'GATEWAY_A'}, {external_id: '2', source: 'GATEWAY_A'}]})], AT)).rejects.toThrow(UniqueConflictError)
    expect(await store.catalog.listCoupons()).toEqual([])
  })

  it('rolls back everything written inside a failed transaction', async () => {
    await expect(async () =>
      await store.transaction(async () => {
        await store.catalog.saveProducts([FULL], AT)
        await store.catalog.saveCoupons([coupon('A')], AT)
        throw new Error('boom')
      }, {write: true}),
    ).rejects.toThrow('boom')
    expect(await store.catalog.listProducts()).toEqual([])
    expect(await store.catalog.listCoupons()).toEqual([])
    expect(await store.transaction(async () => await store.transaction(async () => await store.catalog.saveProducts([def('a')], AT), {write: true}), {write: true})).toEqual({inserted: ['a'], updated: []})
    expect((await store.catalog.listProducts()).length).toBe(1)
  })

  it('deletes a product with its lists; the products based on it lose their baseline', async () => {
    await store.catalog.saveProducts([FULL, def('intro', {baseline: 'pro'})], AT)
    const id = (await store.catalog.productIds(['pro'])).get('pro')!
    expect(await store.catalog.productUses(id)).toEqual({audience_prices: 0, charges: 0, experiments: 0, packages: 0, subscriptions: 0})
    expect(await store.catalog.deleteProduct(id)).toEqual({baselineOf: ['intro']})
    expect(await store.catalog.getProducts(['pro'])).toEqual([])
    expect((await store.catalog.getProducts(['intro']))[0]).toMatchObject({baseline_api_id: null, baseline_id: null})
    // Its name and gateway ids are free again.
    expect((await store.catalog.saveProducts([{...FULL, api_id: 'pro2'}], AT)).inserted).toEqual(['pro2'])
  })

  it('saves coupons whole and reads them back by api_id, links in order; a chunk of N equals N single saves', async () => {
    const defs = [
      coupon('SAVE5', {amount_minor: 550, coupon_type: 'fixed_amount', currency: 'EUR', external: [{external_id: 'promo_1', source: 'GATEWAY_A'}, {external_id: 'c_1', source: 'GATEWAY_C'}], percent: null}),
      coupon('ALWAYS', {active_from: '2026-01-01', active_till: '2026-12-31', status: 'NOT_ACTIVE'}),
    ]
    expect(await store.catalog.saveCoupons(defs, AT)).toEqual({inserted: ['SAVE5', 'ALWAYS'], updated: []})
    const read = await store.catalog.listCoupons()
    expect(read.map((c) => c.api_id)).toEqual(['ALWAYS', 'SAVE5'])
    const strip = ({created_at: _c, external, id: _i, updated_at: _u, ...rest}: (typeof read)[number]) => ({...rest, external: external.map((e) => ({external_id: e.external_id, source: e.source}))})
    expect((await store.catalog.getCoupons(['SAVE5', 'nope', 'ALWAYS'])).map((c) => strip(c))).toEqual(defs)
    const other = await adapter.open()
    try {
      for (const d of defs) await other.store.catalog.saveCoupons([d], AT)
      expect(await other.store.catalog.listCoupons()).toEqual(read)
    } finally {
      await other.cleanup()
    }
    expect(await store.catalog.saveCoupons([{...defs[0], external: []}], '2026-06-01T00:00:00.000Z')).toEqual({inserted: [], updated: ['SAVE5']})
    expect((await store.catalog.getCoupons(['SAVE5']))[0]).toMatchObject({created_at: AT, external: [], updated_at: '2026-06-01T00:00:00.000Z'})
  })

  it('deletes a coupon with the campaigns applying it', async () => {
    await store.catalog.saveCoupons([coupon('A')], AT)
    const [a] = await store.catalog.getCoupons(['A'])
    await store.segments.addCampaigns([{active_from: null, active_till: null, api_id: 'spring', audience_id: null, countries: [], coupon_id: a.id, name: 'Spring', products: []}], AT)
    expect(await store.catalog.couponCampaigns(a.id)).toEqual(['spring'])
    await store.catalog.deleteCoupon(a.id)
    expect(await store.catalog.getCoupons(['A'])).toEqual([])
    expect(await store.segments.listCampaigns()).toEqual([])
  })
})
