import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {ProductDef} from '../../src/store/port/catalog.js'
import {UniqueConflictError} from '../../src/store/port/errors.js'
import type {AudienceDef, CampaignDef, PackageDef} from '../../src/store/port/segments.js'
import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'

const AT = '2026-05-01T10:00:00+00:00'

const product = (apiId: string): ProductDef => ({
  api_id: apiId,
  base_px_minor: 1000,
  baseline: null,
  country_prices: [],
  features: [],
  integrations: [],
  interval: 'month',
  interval_count: 1,
  max_px_minor: null,
  min_px_minor: null,
  name: apiId.toUpperCase(),
  product_trials: [],
})

/** A store with products basic and pro, and coupon SPRING; their store ids. */
async function seed(store: StorePort): Promise<{basic: number; coupon: number; pro: number}> {
  await store.catalog.saveProducts([product('basic'), product('pro')], AT)
  await store.catalog.saveCoupons(
    [{active_from: null, active_till: null, amount_minor: null, api_id: 'SPRING', coupon_type: 'percentage', currency: null, external: [], name: 'Spring', percent: 25, status: 'ACTIVE'}],
    AT,
  )
  const ids = await store.catalog.productIds(['basic', 'pro'])
  return {basic: ids.get('basic')!, coupon: (await store.catalog.getCoupons(['SPRING']))[0].id, pro: ids.get('pro')!}
}

describe.each(ADAPTERS)('store port contract, segments: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let ids: Awaited<ReturnType<typeof seed>>
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
    ids = await seed(store)
  })
  afterEach(() => cleanup())

  const audience = (apiId: string, priority = 0): AudienceDef => ({
    api_id: apiId,
    name: `Audience ${apiId}`,
    prices: [
      {amount_minor: null, currency: null, multiplier: 0.5, product_id: ids.pro},
      {amount_minor: 499, currency: 'EUR', multiplier: null, product_id: ids.basic},
    ],
    priority,
    rules: [{operator: 'in', type: 'country', values: ['DE', 'AT']}],
  })

  const campaign = (apiId: string, over: Partial<CampaignDef> = {}): CampaignDef => ({
    active_from: '2026-04-01',
    active_till: null,
    api_id: apiId,
    audience_id: null,
    countries: ['DE'],
    coupon_id: ids.coupon,
    name: `Campaign ${apiId}`,
    products: ['pro'],
    ...over,
  })

  it('saves an audience whole and reads it back, prices in order with their products named', async () => {
    const d = audience('students')
    expect(await store.segments.saveAudiences([d], AT)).toEqual({inserted: ['students'], updated: []})
    const [a] = await store.segments.getAudiences(['students'])
    expect(a).toMatchObject({api_id: 'students', created_at: AT, name: d.name, priority: 0, rules: d.rules, updated_at: AT})
    expect(a.prices).toEqual([
      {amount_minor: null, currency: null, multiplier: 0.5, product: 'pro', product_id: ids.pro},
      {amount_minor: 499, currency: 'EUR', multiplier: null, product: 'basic', product_id: ids.basic},
    ])
    expect(await store.segments.audienceIds(['students', 'nope'])).toEqual(new Map([['students', a.id]]))
    await store.segments.saveAudiences([{...d, prices: [], priority: 3}], '2026-06-01T00:00:00+00:00')
    expect((await store.segments.getAudiences(['students']))[0]).toMatchObject({created_at: AT, prices: [], priority: 3, updated_at: '2026-06-01T00:00:00+00:00'})
  })

  it('lists audiences by priority, highest first, then api_id, whatever the insertion order', async () => {
    await store.segments.saveAudiences([audience('b', 1), audience('z', 5)], AT)
    await store.segments.saveAudiences([audience('a', 1)], AT)
    expect((await store.segments.listAudiences()).map((a) => a.api_id)).toEqual(['z', 'a', 'b'])
    expect((await store.segments.getAudiences(['b', 'nope', 'z'])).map((a) => a.api_id)).toEqual(['b', 'z'])
  })

  it('saves packages whole, products in order; lists by api_id; a chunk of N equals N single saves', async () => {
    await store.segments.saveAudiences([audience('students')], AT)
    const students = (await store.segments.audienceIds(['students'])).get('students')!
    const defs: PackageDef[] = [
      {api_id: 'zeta', audience_id: null, countries: [], name: 'Zeta', product_ids: [ids.pro, ids.basic]},
      {api_id: 'alpha', audience_id: students, countries: ['DE', 'AT'], name: 'Alpha', product_ids: [ids.basic]},
    ]
    expect(await store.segments.savePackages(defs, AT)).toEqual({inserted: ['zeta', 'alpha'], updated: []})
    const list = await store.segments.listPackages()
    expect(list.map((p) => p.api_id)).toEqual(['alpha', 'zeta'])
    expect((await store.segments.getPackages(['zeta']))[0]).toMatchObject({...defs[0], audience: null, products: ['pro', 'basic']})
    expect((await store.segments.getPackages(['alpha']))[0]).toMatchObject({...defs[1], audience: 'students', products: ['basic']})
    const other = await adapter.open()
    try {
      await seed(other.store)
      await other.store.segments.saveAudiences([audience('students')], AT)
      for (const d of defs) await other.store.segments.savePackages([d], AT)
      expect(await other.store.segments.listPackages()).toEqual(list)
    } finally {
      await other.cleanup()
    }
    await store.segments.savePackages([{...defs[0], product_ids: [ids.basic]}], AT)
    expect((await store.segments.getPackages(['zeta']))[0].products).toEqual(['basic'])
    await store.segments.deletePackage(list[1].id)
    expect((await store.segments.listPackages()).map((p) => p.api_id)).toEqual(['alpha'])
  })

  it('adds campaigns and reads them back with coupon and audience named; a chunk of N equals N single adds', async () => {
    const defs = [campaign('spring'), campaign('autumn', {active_till: '2026-10-31', countries: [], products: []})]
    await store.segments.addCampaigns(defs, AT)
    const list = await store.segments.listCampaigns()
    expect(list.map((c) => c.api_id)).toEqual(['autumn', 'spring'])
    expect((await store.segments.getCampaigns(['spring']))[0]).toMatchObject({...defs[0], audience: null, coupon: 'SPRING', created_at: AT, updated_at: AT})
    const other = await adapter.open()
    try {
      await seed(other.store)
      for (const d of defs) await other.store.segments.addCampaigns([d], AT)
      expect(await other.store.segments.listCampaigns()).toEqual(list)
    } finally {
      await other.cleanup()
    }
    await store.segments.deleteCampaign(list[0].id)
    expect((await store.segments.listCampaigns()).map((c) => c.api_id)).toEqual(['spring'])
  })

  it('a campaign api_id already stored is a UniqueConflictError, and the chunk writes nothing', async () => {
    await store.segments.addCampaigns([campaign('spring')], AT)
    let error: unknown
    try {
      await store.segments.addCampaigns([campaign('new'), campaign('spring')], AT)
    } catch (error_) {
      error = error_
    }
    expect(error).toBeInstanceOf(UniqueConflictError)
    expect(error).toMatchObject({entity: 'campaign', key: 'api_id', value: 'spring'})
    expect((await store.segments.listCampaigns()).map((c) => c.api_id)).toEqual(['spring'])
    await expect(async () => await store.segments.savePackages([{api_id: 'p', audience_id: null, countries: [], name: 'P', product_ids: [ids.pro, ids.pro]}], AT)).rejects.toThrow(UniqueConflictError)
    expect(await store.segments.listPackages()).toEqual([])
  })

  it('deleting an audience takes the packages and campaigns segmented on it', async () => {
    await store.segments.saveAudiences([audience('students'), audience('others')], AT)
    const students = (await store.segments.audienceIds(['students'])).get('students')!
    await store.segments.savePackages([{api_id: 'edu', audience_id: students, countries: [], name: 'Edu', product_ids: [ids.basic]}], AT)
    await store.segments.addCampaigns([campaign('edu_spring', {audience_id: students}), campaign('all')], AT)
    expect(await store.segments.audienceUses(students)).toEqual({campaigns: ['edu_spring'], experiments: [], packages: ['edu']})
    await store.segments.deleteAudience(students)
    expect((await store.segments.listAudiences()).map((a) => a.api_id)).toEqual(['others'])
    expect(await store.segments.listPackages()).toEqual([])
    expect((await store.segments.listCampaigns()).map((c) => c.api_id)).toEqual(['all'])
  })

  it('rolls back everything written inside a failed transaction', async () => {
    await expect(async () =>
      await store.transaction(async () => {
        await store.segments.saveAudiences([audience('students')], AT)
        await store.segments.savePackages([{api_id: 'p', audience_id: null, countries: [], name: 'P', product_ids: [ids.pro]}], AT)
        await store.segments.addCampaigns([campaign('spring')], AT)
        throw new Error('boom')
      }, {write: true}),
    ).rejects.toThrow('boom')
    expect(await store.segments.listAudiences()).toEqual([])
    expect(await store.segments.listPackages()).toEqual([])
    expect(await store.segments.listCampaigns()).toEqual([])
  })
})
