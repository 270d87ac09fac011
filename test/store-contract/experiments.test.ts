import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import type {ExperimentDef} from '../../src/store/port/experiments.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addAudience, addProduct, charge, subscription} from '../helpers/contract-fixtures.js'

describe.each(ADAPTERS)('experiments repository contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let p1: number
  let p2: number
  const def = (over: Partial<ExperimentDef> = {}): ExperimentDef => ({
    allocation: 'thompson',
    arms: [
      {id: 'baseline', multiplier: null, products: null, usd_price_minor: null},
      {id: '1', multiplier: 0.8, products: null, usd_price_minor: null},
      {id: 'big', multiplier: null, products: null, usd_price_minor: 1299},
    ],
    audience_id: null,
    countries: ['DE', 'US'],
    name: 'test',
    product_ids: [p2, p1],
    seed: 7,
    type: 'price',
    ...over,
  })

  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
    p1 = await addProduct(store, 'pro_monthly')
    p2 = await addProduct(store, 'team_monthly', 30)
  })
  afterEach(() => cleanup())

  it('stores drafts and reads them back whole, in order', async () => {
    const audience = await addAudience(store, 'students')
    const [a, b] = await store.experiments.insert([def(), def({audience_id: audience, name: 'second', type: 'packaging', arms: [{id: 'baseline', multiplier: null, products: ['pro_monthly'], usd_price_minor: null}]})], '2026-01-01T00:00:00.000Z')
    const [eb, none, ea] = await store.experiments.get([b, 999, a])
    expect(none).toBeUndefined()
    expect(ea).toMatchObject({allocation: 'thompson', audience: null, countries: ['DE', 'US'], created_at: '2026-01-01T00:00:00.000Z', id: a, name: 'test', seed: 7, started_at: null, status: 'draft', type: 'price'})
    expect(ea!.arms).toEqual(def().arms)
    expect(ea!.products.map((p) => p.api_id)).toEqual(['team_monthly', 'pro_monthly'])
    expect(ea!.products[0]).toMatchObject({base_px_minor: 3000, id: p2, interval: 'month', interval_count: 1})
    expect(eb).toMatchObject({audience: 'students', audience_id: audience, name: 'second', type: 'packaging'})
    expect(eb!.arms[0].products).toEqual(['pro_monthly'])
    expect((await store.experiments.list()).map((e) => e.id)).toEqual([a, b])
  })

  it('replaces a definition, moves status (keeping the first start), and removes', async () => {
    const [id] = await store.experiments.insert([def()], '2026-01-01T00:00:00.000Z')
    await store.experiments.replace(id, def({arms: [def().arms[0]], countries: [], name: 'renamed', product_ids: [p1]}), '2026-01-02T00:00:00.000Z')
    let [e] = await store.experiments.get([id])
    expect(e).toMatchObject({countries: [], name: 'renamed', updated_at: '2026-01-02T00:00:00.000Z'})
    expect(e!.arms).toHaveLength(1)
    expect(e!.products.map((p) => p.id)).toEqual([p1])
    await store.experiments.setStatus([id], 'running', '2026-01-03T00:00:00.000Z')
    await store.experiments.setStatus([id], 'stopped', '2026-01-04T00:00:00.000Z')
    await store.experiments.setStatus([id], 'running', '2026-01-05T00:00:00.000Z')
    ;[e] = await store.experiments.get([id])
    expect(e).toMatchObject({started_at: '2026-01-03T00:00:00.000Z', status: 'running', stopped_at: null})
    expect((await store.experiments.list('running')).map((x) => x.id)).toEqual([id])
    expect(await store.experiments.list('draft')).toEqual([])
    await store.experiments.setStatus([id], 'stopped', '2026-01-06T00:00:00.000Z')
    expect((await store.experiments.get([id]))[0]).toMatchObject({status: 'stopped', stopped_at: '2026-01-06T00:00:00.000Z'})
    await store.experiments.remove([id])
    expect(await store.experiments.get([id])).toEqual([undefined])
  })

  it('looks up products, audiences and running experiments', async () => {
    await addAudience(store, 'students')
    expect([...(await store.experiments.productsByApiId(['pro_monthly', 'nope'])).keys()]).toEqual(['pro_monthly'])
    expect(await store.experiments.productsByApiId([])).toEqual(new Map())
    expect([...(await store.experiments.audienceIds(['students', 'nope'])).keys()]).toEqual(['students'])
    expect(await store.experiments.productNamed('pro_monthly')).toBe(true)
    expect(await store.experiments.productNamed('sim_product')).toBe(false)
    const [a, b] = await store.experiments.insert([def({name: 'a'}), def({name: 'b', product_ids: [p1]})], '2026-01-01T00:00:00.000Z')
    await store.experiments.setStatus([a, b], 'running', '2026-01-02T00:00:00.000Z')
    expect(await store.experiments.runningOn([p1], 0)).toEqual([
      {id: a, name: 'a'},
      {id: b, name: 'b'},
    ])
    expect(await store.experiments.runningOn([p2], a)).toEqual([])
    expect(await store.experiments.runningOn([], 0)).toEqual([])
  })

  it('records exposures: new, same, moved (with the previous arm); a chunk equals its singles', async () => {
    const [id] = await store.experiments.insert([def()], '2026-01-01T00:00:00.000Z')
    const x = (visitor: string, armId: string, at = 10) => ({anonymous: false, armId, at, experimentId: id, visitor})
    expect(await store.experiments.recordExposures([x('v1', '1')])).toEqual([{change: 'new'}])
    expect(await store.experiments.recordExposures([x('v1', '1', 20), x('v2', 'big'), x('v1', 'big', 30)])).toEqual([{change: 'same'}, {change: 'new'}, {change: 'moved', previous: '1'}])
    // A chunk that names each visitor once (one statement on PostgreSQL).
    expect(await store.experiments.recordExposures([x('v2', 'big', 40), x('v3', '1'), x('v1', '1', 50)])).toEqual([{change: 'same'}, {change: 'new'}, {change: 'moved', previous: 'big'}])
    expect(await store.experiments.exposuresOf(id, ['v1', 'v2', 'v3'])).toEqual(['1', 'big', '1'])
    const counts = await store.experiments.armCounts(id)
    expect(counts.get('big')).toEqual({conversions: 0, revenue_minor: 0, visitors: 1})
    expect(counts.get('1')).toEqual({conversions: 0, revenue_minor: 0, visitors: 2})
  })

  it('reads the arms visitors are exposed to, in input order, per experiment (undefined: none)', async () => {
    const [id, other] = await store.experiments.insert([def(), def({name: 'other'})], '2026-01-01T00:00:00.000Z')
    const x = (experimentId: number, visitor: string, armId: string) => ({anonymous: visitor.includes('.'), armId, at: 10, experimentId, visitor})
    await store.experiments.recordExposures([x(id, 'v1', '1'), x(id, '203.0.113.7', 'big'), x(other, 'v2', 'baseline'), x(id, 'v1', 'big')])
    expect(await store.experiments.exposuresOf(id, ['v2', 'v1', 'nobody', '203.0.113.7', 'v1'])).toEqual([undefined, 'big', undefined, 'big', 'big'])
    expect(await store.experiments.exposuresOf(other, ['v1', 'v2'])).toEqual([undefined, 'baseline'])
    expect(await store.experiments.exposuresOf(id, [])).toEqual([])
  })

  it('an adopted anonymous exposure moves to the user, or is dropped when the user has one', async () => {
    const [id] = await store.experiments.insert([def()], '2026-01-01T00:00:00.000Z')
    await store.experiments.recordExposures([
      {anonymous: true, armId: '1', at: 10, experimentId: id, visitor: '203.0.113.7'},
      {anonymous: true, armId: 'big', at: 10, experimentId: id, visitor: '203.0.113.8'},
      {anonymous: false, armId: 'baseline', at: 10, experimentId: id, visitor: 'bob'},
    ])
    await store.experiments.adoptExposures([
      {experimentId: id, ip: '203.0.113.7', userId: 'alice'},
      {experimentId: id, ip: '203.0.113.8', userId: 'bob'},
    ])
    expect(await store.experiments.recordExposures([{anonymous: false, armId: '1', at: 20, experimentId: id, visitor: 'alice'}])).toEqual([{change: 'same'}])
    const counts = await store.experiments.armCounts(id)
    expect([...counts].sort()).toEqual([
      ['1', {conversions: 0, revenue_minor: 0, visitors: 1}],
      ['baseline', {conversions: 0, revenue_minor: 0, visitors: 1}],
    ])
  })

  it('attributes subscriptions and succeeded charges of exposed users, after the exposure, to arms', async () => {
    const [id] = await store.experiments.insert([def()], '2026-01-01T00:00:00.000Z')
    await store.experiments.recordExposures([
      {anonymous: false, armId: '1', at: 1000, experimentId: id, visitor: 'alice'},
      {anonymous: false, armId: '1', at: 1000, experimentId: id, visitor: 'bob'},
      {anonymous: false, armId: 'big', at: 1000, experimentId: id, visitor: 'carol'},
    ])
    await store.revenue.save('subscriptions', [
      subscription({amount_usd_monthly_minor: 800, created: 2000, product_id: p1, user_id: 'alice'}),
      subscription({amount_usd_monthly_minor: 800, created: 500, origin_id: 'early', product_id: p1, user_id: 'bob'}),
      subscription({created: 2000, origin_id: 'pending', product_id: p1, status: 'pending', user_id: 'bob'}),
    ])
    const other = await addProduct(store, 'other_monthly')
    await store.revenue.save('charges', [
      charge({amount_refunded_usd_minor: 500, amount_usd_minor: 3000, created: 2000, product_id: p2, user_id: 'carol'}),
      charge({created: 2000, origin_id: 'failed', product_id: p2, status: 'failed', user_id: 'carol'}),
      charge({created: 2000, origin_id: 'elsewhere', product_id: other, user_id: 'carol'}),
    ])
    const counts = await store.experiments.armCounts(id)
    expect(counts.get('1')).toEqual({conversions: 1, revenue_minor: 800, visitors: 2})
    expect(counts.get('big')).toEqual({conversions: 1, revenue_minor: 2500, visitors: 1})
  })
})
