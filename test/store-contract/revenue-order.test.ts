import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {type FieldEvents, type FieldWrites, type PendingFields, recordKey, type Resolve, type SubscriptionValues} from '../../src/store/port/revenue.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, charge, keyOf, subscription, subscriptionRow, withoutId} from '../helpers/contract-fixtures.js'

/**
 * The per-field order and pending rules every adapter keeps (issue 16, point 1; FieldEvents
 * and PendingFields in src/store/port/revenue.ts, the import writer in ./imports.ts): the
 * engine relies on them for "any delivery order ends in the state of the ordered stream".
 */
describe.each(ADAPTERS)('revenue order contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let product: number
  const ev = (timestamp: number, id = `e${timestamp}`) => ({id, timestamp})
  const sub = (over: Partial<SubscriptionValues> = {}) => subscription({product_id: product, ...over})
  const key = recordKey('u1', 'gateway_a', 'sub_1')
  const k = keyOf(sub())
  /** A resolve that writes each field onto the column of its name, and records its calls. */
  let calls: FieldWrites[]
  const resolve: Resolve<'subscriptions'> = async (values, writes) => {
    calls.push(writes)
    const out = {...values} as Record<string, unknown>
    for (const [f, w] of Object.entries(writes)) out[f] = w.value
    return out as unknown as SubscriptionValues
  }
  const importRows = async (rows: SubscriptionValues[], dryRun = false) => {
    const w = store.imports.writer('subscriptions', {dryRun, resolve})
    try {
      await w.writeChunk(rows.map((r) => subscriptionRow(r)))
      expect(await w.commit()).toBe(true)
      return w.counts
    } finally {
      await w.close()
    }
  }

  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
    calls = []
  })
  afterEach(() => cleanup())

  it('keeps a record\'s field order with it: saved, read back, replaced, removed', async () => {
    const fe: FieldEvents = {base: ev(100), fields: {status: {event: ev(300), value: 'canceled'}}}
    await store.revenue.save('subscriptions', [sub({latest_event_id: 'e300', latest_event_timestamp: 300, status: 'canceled'})], [fe])
    expect(await store.revenue.fieldEvents('subscriptions', [k, {...k, origin_id: 'none'}])).toEqual([fe, null])
    // Rows and lists show the record's values only.
    expect(withoutId((await store.revenue.rows('subscriptions', [k]))[0])).toEqual(sub({latest_event_id: 'e300', latest_event_timestamp: 300, status: 'canceled'}))
    expect(Object.keys((await store.revenue.list('subscriptions', {})).rows[0]!).sort()).toEqual(Object.keys({...sub(), id: 0}).sort())
    await store.revenue.save('subscriptions', [sub({latest_event_id: 'e400', latest_event_timestamp: 400})])
    expect(await store.revenue.fieldEvents('subscriptions', [k])).toEqual([null])
    await store.revenue.save('subscriptions', [sub()], [fe])
    await store.revenue.remove('subscriptions', [k])
    await store.revenue.save('subscriptions', [sub()])
    expect(await store.revenue.fieldEvents('subscriptions', [k])).toEqual([null])
    const c = charge({product_id: product})
    await store.revenue.save('charges', [c], [fe])
    expect(await store.revenue.fieldEvents('charges', [keyOf(c)])).toEqual([fe])
  })

  it('keeps pending partial updates per kind and key until dropped', async () => {
    const p: PendingFields = {fields: {amount: {event: ev(200), value: 20}, status: {event: ev(250), value: null}}, latest: ev(250)}
    const other = recordKey('u2', 'gateway_a', 'sub_2')
    await store.revenue.savePending('subscription', [[key, p], [other, {fields: {}, latest: ev(5)}]])
    expect(await store.revenue.pending('subscription', [key, recordKey('u9', 'gateway_a', 'x')])).toEqual(new Map([[key, p]]))
    expect((await store.revenue.pending('charge')).size).toBe(0)
    expect([...(await store.revenue.pending('subscription')).keys()].sort()).toEqual([key, other].sort())
    const q: PendingFields = {fields: {amount: {event: ev(300), value: 30}}, latest: ev(300)}
    await store.revenue.savePending('subscription', [[key, q], [other, null]])
    expect(await store.revenue.pending('subscription')).toEqual(new Map([[key, q]]))
  })

  it('an import row newer than the base takes every field but those written after it; older is stale, the same unchanged', async () => {
    const fe: FieldEvents = {base: ev(100, 'import:100'), fields: {amount_minor: {event: ev(150), value: 1500}, status: {event: ev(300), value: 'canceled'}}}
    await store.revenue.save('subscriptions', [sub({amount_minor: 1500, latest_event_id: 'e300', latest_event_timestamp: 300, status: 'canceled'})], [fe])
    expect(await importRows([sub({latest_event_id: 'import:100', latest_event_timestamp: 100}), sub({latest_event_id: 'import:50', latest_event_timestamp: 50})])).toEqual({inserted: 0, stale: 1, unchanged: 1, updated: 0})
    expect(calls).toEqual([])
    const row = sub({amount_minor: 2000, country: 'DE', latest_event_id: 'import:200', latest_event_timestamp: 200})
    expect(await importRows([row])).toEqual({inserted: 0, stale: 0, unchanged: 0, updated: 1})
    // Only the writes newer than the row reach resolve; the latest event stays the newest.
    expect(calls).toEqual([{status: fe.fields.status}])
    expect(withoutId((await store.revenue.rows('subscriptions', [k]))[0])).toEqual({...row, latest_event_id: 'e300', latest_event_timestamp: 300, status: 'canceled'})
    expect(await store.revenue.fieldEvents('subscriptions', [k])).toEqual([{base: ev(200, 'import:200'), fields: {status: fe.fields.status}}])
    // Newer than every write: the record is whole again (no field order), resolve not needed.
    calls = []
    const newest = sub({latest_event_id: 'import:400', latest_event_timestamp: 400})
    expect((await importRows([newest])).updated).toBe(1)
    expect(withoutId((await store.revenue.rows('subscriptions', [k]))[0])).toEqual(newest)
    expect(await store.revenue.fieldEvents('subscriptions', [k])).toEqual([null])
  })

  it('an import row that makes a record takes its pending writes newer than it, and the pending entry goes', async () => {
    await store.revenue.savePending('subscription', [[key, {fields: {amount_minor: {event: ev(50), value: 1}, status: {event: ev(300), value: 'canceled'}}, latest: ev(300)}]])
    // A dry run counts the insert and keeps the pending entry.
    expect(await importRows([sub({latest_event_id: 'import:100', latest_event_timestamp: 100})], true)).toEqual({inserted: 1, stale: 0, unchanged: 0, updated: 0})
    expect((await store.revenue.pending('subscription')).size).toBe(1)
    expect(await importRows([sub({latest_event_id: 'import:100', latest_event_timestamp: 100})])).toEqual({inserted: 1, stale: 0, unchanged: 0, updated: 0})
    expect(calls).toEqual([{status: {event: ev(300), value: 'canceled'}}])
    expect(withoutId((await store.revenue.rows('subscriptions', [k]))[0])).toEqual(sub({latest_event_id: 'e300', latest_event_timestamp: 300, status: 'canceled'}))
    expect(await store.revenue.fieldEvents('subscriptions', [k])).toEqual([{base: ev(100, 'import:100'), fields: {status: {event: ev(300), value: 'canceled'}}}])
    expect((await store.revenue.pending('subscription')).size).toBe(0)
  })

  it('a row older than a pending delete is stale; a writer without resolve refuses a row that needs one', async () => {
    await store.revenue.logEvents([{action: 'delete', event: ev(150), key, kind: 'subscription'}], '2026-01-01T00:00:00.000Z')
    await store.revenue.savePending('subscription', [[key, {fields: {status: {event: ev(300), value: 'canceled'}}, latest: ev(300)}]])
    expect(await importRows([sub({latest_event_id: 'import:100', latest_event_timestamp: 100})])).toEqual({inserted: 0, stale: 1, unchanged: 0, updated: 0})
    const w = store.imports.writer('subscriptions')
    try {
      await expect(async () => await w.writeChunk([subscriptionRow(sub({latest_event_id: 'import:200', latest_event_timestamp: 200}))])).rejects.toThrow(/resolve/)
    } finally {
      await w.close()
    }
    expect((await store.revenue.rows('subscriptions', [k]))[0]).toBeUndefined()
  })
})
