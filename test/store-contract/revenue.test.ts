import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {setRate} from '../../src/fx/repository.js'
import type {StorePort} from '../../src/store/port.js'
import {figures, paying, stretches} from '../../src/revenue/timeline.js'
import {eventOfRecord, recordKey} from '../../src/store/port/revenue.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, charge, keyOf, subscription, withoutId} from '../helpers/contract-fixtures.js'

describe.each(ADAPTERS)('revenue repository contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let product: number
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
  })
  afterEach(() => cleanup())

  it('saves subscriptions and charges and reads them back by key, in order', async () => {
    const s1 = subscription({product_id: product})
    const s2 = subscription({origin_id: 'sub_2', product_id: product, status: 'canceled', canceled_at: 1_767_300_000})
    const c1 = charge({metadata_json: '{"order":7}', product_id: product})
    await store.revenue.save('subscriptions', [s1, s2])
    await store.revenue.save('charges', [c1])
    const rows = await store.revenue.rows('subscriptions', [keyOf(s2), {origin: 'gateway_a', origin_id: 'nope', user_id: 'u1'}, keyOf(s1)])
    expect(rows.map((r) => withoutId(r))).toEqual([s2, undefined, s1])
    expect(withoutId((await store.revenue.rows('charges', [keyOf(c1)]))[0])).toEqual(c1)
  })

  it("a product's delete leaves its charges and subscriptions, without a product", async () => {
    const other = await addProduct(store, 'other')
    const s = subscription({product_id: product})
    const c = charge({product_id: product})
    const kept = charge({origin_id: 'ch_other', product_id: other})
    await store.revenue.save('subscriptions', [s])
    await store.revenue.save('charges', [c, kept])
    expect(await store.catalog.productUses(product)).toMatchObject({charges: 1, subscriptions: 1})
    await store.catalog.deleteProduct(product)
    expect(withoutId((await store.revenue.rows('subscriptions', [keyOf(s)]))[0])).toEqual({...s, product_id: null})
    expect((await store.revenue.rows('charges', [keyOf(c), keyOf(kept)])).map((r) => withoutId(r))).toEqual([{...c, product_id: null}, kept])
  })

  it('saving a key again replaces every column; a chunk of one is a single save', async () => {
    const s = subscription({product_id: product})
    await store.revenue.save('subscriptions', [s])
    const newer = subscription({amount_minor: 1999, country: null, latest_event_id: 'evt_2', latest_event_timestamp: 200, product_id: product})
    await store.revenue.save('subscriptions', [newer])
    expect(withoutId((await store.revenue.rows('subscriptions', [keyOf(s)]))[0])).toEqual(newer)
    expect((await store.revenue.list('subscriptions', {})).total).toBe(1)
  })

  it('removes records by key (absent ones are skipped)', async () => {
    const a = charge({product_id: product})
    const b = charge({origin_id: 'ch_2', product_id: product})
    await store.revenue.save('charges', [a, b])
    await store.revenue.remove('charges', [keyOf(a), {origin: 'x', origin_id: 'y', user_id: 'z'}])
    expect((await store.revenue.rows('charges', [keyOf(a), keyOf(b)])).map((r) => r?.origin_id)).toEqual([undefined, 'ch_2'])
  })

  it('logs events once and tells which ids were applied', async () => {
    await store.revenue.logEvents(
      [
        {action: 'create', event: {id: 'e1', timestamp: 10}, key: recordKey('u1', 'gateway_a', 's1'), kind: 'subscription'},
        {action: 'update', event: {id: 'e2', timestamp: 20}, key: recordKey('u1', 'gateway_a', 's1'), kind: 'subscription'},
      ],
      '2026-01-01T00:00:00.000Z',
    )
    expect(await store.revenue.appliedEvents(['e2', 'e3', 'e1'])).toEqual(new Set(['e1', 'e2']))
    await expect(async () => await store.revenue.logEvents([{action: 'create', event: {id: 'e1', timestamp: 30}, key: 'k', kind: 'charge'}], '2026-01-01T00:00:00.000Z')).rejects.toThrow()
  })

  it('the latest delete of a record wins by (timestamp, id), of some keys or all of a kind', async () => {
    const k1 = recordKey('u1', 'gateway_a', 's1')
    const k2 = recordKey('u2', 'gateway_a', 's2')
    const at = '2026-01-01T00:00:00.000Z'
    await store.revenue.logEvents(
      [
        {action: 'delete', event: {id: 'd-b', timestamp: 50}, key: k1, kind: 'subscription'},
        {action: 'delete', event: {id: 'd-a', timestamp: 50}, key: k1, kind: 'subscription'},
        {action: 'delete', event: {id: 'd-0', timestamp: 40}, key: k1, kind: 'subscription'},
        {action: 'create', event: {id: 'c-9', timestamp: 90}, key: k1, kind: 'subscription'},
        {action: 'delete', event: {id: 'd-c', timestamp: 70}, key: k2, kind: 'subscription'},
        {action: 'delete', event: {id: 'd-x', timestamp: 99}, key: k1, kind: 'charge'},
      ],
      at,
    )
    const expected = new Map([
      [k1, {id: 'd-b', timestamp: 50}],
      [k2, {id: 'd-c', timestamp: 70}],
    ])
    expect(await store.revenue.latestDeletes('subscription')).toEqual(expected)
    expect(await store.revenue.latestDeletes('subscription', [k2, 'none'])).toEqual(new Map([[k2, {id: 'd-c', timestamp: 70}]]))
    expect((await store.revenue.latestDeletes('charge', [k1])).get(k1)).toEqual({id: 'd-x', timestamp: 99})
  })

  it('lists newest first with filters, and the total before the limit', async () => {
    const other = await addProduct(store, 'team_monthly')
    await store.revenue.save('charges', [
      charge({created: 100, origin_id: 'a', product_id: product}),
      charge({created: 300, origin_id: 'b', product_id: other}),
      charge({created: 200, origin_id: 'c', product_id: product, status: 'failed', user_id: 'u2'}),
    ])
    expect((await store.revenue.list('charges', {})).rows.map((r) => r.origin_id)).toEqual(['b', 'c', 'a'])
    expect(await store.revenue.list('charges', {limit: 1})).toMatchObject({rows: [{origin_id: 'b'}], total: 3})
    expect((await store.revenue.list('charges', {product: 'pro_monthly'})).rows.map((r) => r.origin_id)).toEqual(['c', 'a'])
    expect((await store.revenue.list('charges', {since: 150, until: 300})).rows.map((r) => r.origin_id)).toEqual(['c'])
    expect((await store.revenue.list('charges', {status: 'failed', user_id: 'u2'})).total).toBe(1)
  })

  it('net charge revenue: one map per period, grouped as asked; subscription figures from the history', async () => {
    const jan = Date.UTC(2026, 0, 1) / 1000
    const feb = Date.UTC(2026, 1, 1) / 1000
    const mar = Date.UTC(2026, 2, 1) / 1000
    await store.revenue.save('subscriptions', [
      subscription({amount_usd_monthly_minor: 1000, country: 'US', created: jan + 10, origin_id: 's1', product_id: product}),
      subscription({amount_usd_monthly_minor: 500, cancel_at: feb + 5, country: 'DE', created: jan + 20, origin_id: 's2', product_id: product, status: 'canceled', user_id: 'u2'}),
    ])
    await store.revenue.save('charges', [charge({amount_refunded_usd_minor: 100, amount_usd_minor: 700, created: feb + 1, product_id: product})])
    const periods = [
      {end: feb, start: jan},
      {end: mar, start: feb},
    ]
    const [jn, fn] = await store.revenue.netRevenue('month', periods)
    expect(jn.get('all') ?? 0).toBe(0)
    expect(fn.get('all')).toBe(600)
    expect((await store.revenue.netRevenue('country', [{end: mar, start: feb}]))[0]).toEqual(new Map([['DE', 600]]))
    expect((await store.revenue.netRevenue('product', [{end: mar, start: feb}]))[0].get('pro_monthly')).toBe(600)
    expect(await store.revenue.netRevenue('month', [])).toEqual([])
    const [j, f] = figures(stretches(await store.revenue.history('month')), periods)
    expect(j.get('all')).toEqual({active: 2, churned: 0, free: 0, mrr: 1500, new: 2, paying_users: 2})
    expect(f.get('all')).toEqual({active: 1, churned: 1, free: 0, mrr: 1000, new: 0, paying_users: 1})
    const [byCountry] = figures(stretches(await store.revenue.history('country')), [{end: feb, start: jan}])
    expect([...byCountry.keys()].sort()).toEqual(['DE', 'US'])
    expect(byCountry.get('DE')!.mrr).toBe(500)
  })

  it('lists by the gateway id alone, across users and gateways', async () => {
    await store.revenue.save('subscriptions', [
      subscription({origin_id: 'sub_x', product_id: product, user_id: 'u1'}),
      subscription({origin: 'gateway_b', origin_id: 'sub_x', product_id: product, user_id: 'u2'}),
      subscription({origin_id: 'sub_y', product_id: product, user_id: 'u1'}),
    ])
    const found = await store.revenue.list('subscriptions', {origin_id: 'sub_x'})
    expect(found.total).toBe(2)
    expect(found.rows.map((r) => `${r.user_id} ${r.origin}`).sort()).toEqual(['u1 gateway_a', 'u2 gateway_b'])
    expect(await store.revenue.list('subscriptions', {limit: 1, origin_id: 'sub_x'})).toMatchObject({rows: [expect.anything()], total: 2})
    expect((await store.revenue.list('charges', {origin_id: 'sub_x'})).total).toBe(0)
  })

  it('history: the paying stretches of subscriptions (a record without stored events is its own history), grouped as asked', async () => {
    const jan = Date.UTC(2026, 0, 1) / 1000
    const feb = Date.UTC(2026, 1, 1) / 1000
    await store.revenue.save('subscriptions', [
      subscription({amount_usd_monthly_minor: 1000, country: 'US', created: jan, origin_id: 'active', product_id: product}),
      // canceled: ends at cancel_at, else canceled_at
      subscription({amount_usd_monthly_minor: 500, cancel_at: feb, canceled_at: jan + 5, country: 'DE', created: jan + 1, origin_id: 'cancel_at', product_id: product, status: 'canceled', user_id: 'u2'}),
      subscription({amount_usd_monthly_minor: 300, canceled_at: jan + 9, country: null, created: jan + 2, origin_id: 'canceled_at', product_id: product, status: 'canceled', user_id: 'u3'}),
      // never paid: trialing, pending, no MRR, ended when it began, no end at all, begun at `until`
      subscription({amount_usd_monthly_minor: 700, created: jan, origin_id: 'trial', product_id: product, status: 'trialing'}),
      subscription({amount_usd_monthly_minor: 700, created: jan, origin_id: 'pending', product_id: product, status: 'pending'}),
      subscription({amount_usd_monthly_minor: null, created: jan, origin_id: 'one_time', product_id: product}),
      subscription({amount_usd_monthly_minor: 0, created: jan, origin_id: 'free', product_id: product}),
      subscription({amount_usd_monthly_minor: 700, cancel_at: jan, created: jan, origin_id: 'empty', product_id: product, status: 'canceled'}),
      subscription({amount_usd_monthly_minor: 700, created: jan, origin_id: 'no_end', product_id: product, status: 'canceled'}),
      subscription({amount_usd_monthly_minor: 700, created: feb, origin_id: 'later', product_id: product}),
    ])
    const spans = async (by: 'country' | 'month' | 'product', until: number) =>
      paying(stretches(await store.revenue.history(by)))
        .filter((s) => s.start < until)
        .map(({sub: _sub, ...s}) => s)
        .sort((a, b) => a.start - b.start)
    expect(await spans('month', feb)).toEqual([
      {end: null, key: 'all', mrr: 1000, start: jan, user_id: 'u1'},
      {end: feb, key: 'all', mrr: 500, start: jan + 1, user_id: 'u2'},
      {end: jan + 9, key: 'all', mrr: 300, start: jan + 2, user_id: 'u3'},
    ])
    expect((await spans('country', feb)).map((s) => s.key)).toEqual(['US', 'DE', 'unknown'])
    expect((await spans('product', feb)).map((s) => s.key)).toEqual(['pro_monthly', 'pro_monthly', 'pro_monthly'])
    expect(await spans('month', jan)).toEqual([])
    expect((await store.revenue.history('month')).every((e) => e.record)).toBe(true)
  })

  it('subscription events: saved once per id, read with the record as the history of existing subscriptions only', async () => {
    const s1 = subscription({amount_usd_monthly_minor: 1000, created: 1000, latest_event_id: 'import:3000:2:b', latest_event_timestamp: 3000, origin_id: 's1', product_id: product})
    await store.revenue.save('subscriptions', [s1])
    const first = {...eventOfRecord(s1, {id: 'import:1000:2:a', timestamp: 1000}), amount_usd_monthly_minor: 500, trial_end: 900, trial_start: 800}
    const last = eventOfRecord(s1)
    await store.revenue.saveSubscriptionEvents([first, last])
    // The same id again is left as it is (an import row read again).
    await store.revenue.saveSubscriptionEvents([{...first, amount_usd_monthly_minor: 1}])
    // A subscription that does not exist (deleted): its events are not history.
    await store.revenue.saveSubscriptionEvents([{...first, origin_id: 'gone'}])
    const history = (await store.revenue.history('product')).sort((a, b) => a.event_timestamp - b.event_timestamp || Number(a.record) - Number(b.record))
    // The record's latest event is stored: the record is not read again as an event.
    expect(history).toEqual([
      {...first, key: 'pro_monthly', record: false},
      {...last, key: 'pro_monthly', record: false},
    ])
    // The month's growth from 500 to 1000 at the later event; the record's event is not counted twice.
    expect(stretches(await store.revenue.history('month')).map(({end, mrr, start}) => ({end, mrr, start}))).toEqual([
      {end: 3000, mrr: 500, start: 1000},
      {end: null, mrr: 1000, start: 3000},
    ])
    await store.revenue.dropSubscriptionEvents(keyOf(s1), {id: 'import:3000:2:b', timestamp: 3000})
    expect((await store.revenue.history('month')).filter((e) => !e.record).map((e) => e.event_id)).toEqual(['import:3000:2:b'])
    // A record whose latest event is not stored (a partial update merged in) ends its history itself.
    await store.revenue.save('subscriptions', [{...s1, amount_usd_monthly_minor: 2000, latest_event_id: 'evt_9', latest_event_timestamp: 5000}])
    expect(stretches(await store.revenue.history('month')).map(({end, mrr, start}) => ({end, mrr, start}))).toEqual([
      {end: 5000, mrr: 1000, start: 1000},
      {end: null, mrr: 2000, start: 5000},
    ])
  })

  it('FX history of a currency is ascending by date, each rate tagged snapshot or not', async () => {
    await setRate(store, {currency: 'XAG', date: '2026-03-01', rate: 0.05, source: 'manual'})
    await setRate(store, {currency: 'XAG', date: '2026-01-01', rate: 0.04, source: 'manual'})
    expect(await store.revenue.fxHistory('XAG')).toEqual([
      {date: '2026-01-01', rate: 0.04, snapshot: false},
      {date: '2026-03-01', rate: 0.05, snapshot: false},
    ])
    expect((await store.revenue.fxHistory('EUR')).some((r) => r.snapshot)).toBe(true)
  })
})
