import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {recordKey, type SubscriptionValues} from '../../src/store/port/revenue.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, chargeRow, charge, keyOf, subscription, subscriptionRow, withoutId} from '../helpers/contract-fixtures.js'

describe.each(ADAPTERS)('imports repository contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let product: number
  const sub = (n: number, over: Partial<SubscriptionValues> = {}) =>
    subscription({latest_event_id: `import:${100 + n}`, latest_event_timestamp: 100 + n, origin_id: `sub_${n}`, product_id: product, user_id: `u${n}`, ...over})
  const all = async () => (await store.revenue.list('subscriptions', {})).rows.map((r) => withoutId(r)!).sort((a, b) => (a.origin_id < b.origin_id ? -1 : 1))

  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
  })
  afterEach(() => cleanup())

  it('writes chunks into a batch that lands on commit', async () => {
    const w = store.imports.writer('subscriptions')
    try {
      await w.writeChunk([subscriptionRow(sub(1)), subscriptionRow(sub(2)), subscriptionRow(sub(3))], 0, 2)
      await w.writeChunk([subscriptionRow(sub(3))])
      expect(await w.commit()).toBe(true)
    } finally {
      await w.close()
    }
    expect(await all()).toEqual([sub(1), sub(2), sub(3)])
    const c = charge({product_id: product})
    const cw = store.imports.writer('charges')
    await cw.writeChunk([chargeRow(c)])
    expect(await cw.commit()).toBe(true)
    await cw.close()
    expect(withoutId((await store.revenue.rows('charges', [keyOf(c)]))[0])).toEqual(c)
  })

  it('a batch not committed is rolled back by close; committed batches stay', async () => {
    const w = store.imports.writer('subscriptions')
    await w.writeChunk([subscriptionRow(sub(1))])
    await w.commit()
    await w.writeChunk([subscriptionRow(sub(2))])
    await w.close()
    expect(await all()).toEqual([sub(1)])
    expect(w.counts.inserted).toBe(2)
  })

  it('keeps the event order: newer rows update, the same event is unchanged, an older one is stale', async () => {
    const w1 = store.imports.writer('subscriptions')
    await w1.writeChunk([subscriptionRow(sub(1)), subscriptionRow(sub(2))])
    await w1.commit()
    await w1.close()
    const newer = sub(1, {latest_event_id: 'import:500', latest_event_timestamp: 500, status: 'canceled', canceled_at: 500})
    const older = sub(2, {latest_event_id: 'import:50', latest_event_timestamp: 50, amount_minor: 1})
    const w2 = store.imports.writer('subscriptions')
    await w2.writeChunk([subscriptionRow(newer), subscriptionRow(older), subscriptionRow(sub(2))])
    await w2.commit()
    await w2.close()
    expect(w2.counts).toEqual({inserted: 0, stale: 1, unchanged: 1, updated: 1})
    expect(await all()).toEqual([newer, sub(2)])
    // A stale row never overwrites the newer record, in the same chunk either.
    const w3 = store.imports.writer('subscriptions')
    await w3.writeChunk([subscriptionRow(sub(1)), subscriptionRow(newer)])
    await w3.commit()
    await w3.close()
    expect(w3.counts).toEqual({inserted: 0, stale: 1, unchanged: 1, updated: 0})
    expect(await all()).toEqual([newer, sub(2)])
  })

  it('a row older than the record\'s delete is stale; a newer one brings it back', async () => {
    await store.revenue.logEvents([{action: 'delete', event: {id: 'del', timestamp: 150}, key: recordKey('u1', 'gateway_a', 'sub_1'), kind: 'subscription'}], '2026-01-01T00:00:00.000Z')
    const w = store.imports.writer('subscriptions')
    await w.writeChunk([subscriptionRow(sub(1)), subscriptionRow(sub(2, {latest_event_timestamp: 160, origin_id: 'sub_1', user_id: 'u1'}))])
    await w.commit()
    await w.close()
    expect(w.counts).toEqual({inserted: 1, stale: 1, unchanged: 0, updated: 0})
    expect((await all()).map((r) => r!.latest_event_timestamp)).toEqual([160])
  })

  it('a dry run counts what the rows would do and writes nothing', async () => {
    const w1 = store.imports.writer('subscriptions')
    await w1.writeChunk([subscriptionRow(sub(1))])
    await w1.commit()
    await w1.close()
    const dry = store.imports.writer('subscriptions', {dryRun: true})
    await dry.writeChunk([subscriptionRow(sub(1)), subscriptionRow(sub(2)), subscriptionRow(sub(1, {latest_event_timestamp: 999}))])
    expect(await dry.commit()).toBe(true)
    await dry.close()
    expect(dry.counts).toEqual({inserted: 1, stale: 0, unchanged: 1, updated: 1})
    expect(await all()).toEqual([sub(1)])
  })

  it('resumes: a run killed after its first batch, run again, ends as an uninterrupted run', async () => {
    const rows = Array.from({length: 10}, (_, i) => subscriptionRow(sub(i)))
    const killed = store.imports.writer('subscriptions')
    await killed.writeChunk(rows, 0, 4)
    await killed.commit()
    await killed.writeChunk(rows, 4, 7)
    await killed.close() // killed before the second commit
    const again = store.imports.writer('subscriptions')
    await again.writeChunk(rows)
    await again.commit()
    await again.close()
    expect(again.counts).toEqual({inserted: 6, stale: 0, unchanged: 4, updated: 0})
    expect(await all()).toEqual(Array.from({length: 10}, (_, i) => sub(i)))
    // Run once more: nothing changes.
    const third = store.imports.writer('subscriptions')
    await third.writeChunk(rows)
    await third.commit()
    await third.close()
    expect(third.counts).toEqual({inserted: 0, stale: 0, unchanged: 10, updated: 0})
  })

  it('a writer meets the records other writers saved between its batches, and its own earlier rows, by the event rules', async () => {
    const w = store.imports.writer('subscriptions')
    try {
      await w.writeChunk([subscriptionRow(sub(1)), subscriptionRow(sub(2))])
      expect(await w.commit()).toBe(true)
      // Single writes between two batches: a new record, and a newer event of one the import wrote.
      await store.revenue.save('subscriptions', [sub(3, {latest_event_id: 'import:300', latest_event_timestamp: 300})])
      await store.revenue.save('subscriptions', [sub(1, {latest_event_id: 'import:400', latest_event_timestamp: 400, status: 'canceled'})])
      await w.writeChunk([subscriptionRow(sub(3)), subscriptionRow(sub(4))])
      await w.writeChunk([subscriptionRow(sub(1, {latest_event_id: 'import:350', latest_event_timestamp: 350})), subscriptionRow(sub(2, {latest_event_id: 'import:500', latest_event_timestamp: 500, amount_minor: 7}))])
      expect(await w.commit()).toBe(true)
    } finally {
      await w.close()
    }
    expect(w.counts).toEqual({inserted: 3, stale: 2, unchanged: 0, updated: 1})
    expect(await all()).toEqual([
      sub(1, {latest_event_id: 'import:400', latest_event_timestamp: 400, status: 'canceled'}),
      sub(2, {latest_event_id: 'import:500', latest_event_timestamp: 500, amount_minor: 7}),
      sub(3, {latest_event_id: 'import:300', latest_event_timestamp: 300}),
      sub(4),
    ])
  })

  it('chunk after chunk of newer, older and repeated rows of existing records: each row meets its record as it is then', async () => {
    const first = store.imports.writer('subscriptions')
    await first.writeChunk(Array.from({length: 10}, (_, i) => subscriptionRow(sub(i))))
    await first.commit()
    await first.close()
    const w = store.imports.writer('subscriptions')
    for (let i = 0; i < 10; i += 2) {
      const newer = sub(i, {latest_event_id: `import:${600 + i}`, latest_event_timestamp: 600 + i, amount_minor: 600 + i})
      const older = sub(i + 1, {latest_event_id: 'import:1', latest_event_timestamp: 1, amount_minor: 1})
      await w.writeChunk([subscriptionRow(newer), subscriptionRow(older), subscriptionRow(sub(i)), subscriptionRow(sub(i + 1))])
    }
    await w.commit()
    await w.close()
    expect(w.counts).toEqual({inserted: 0, stale: 10, unchanged: 5, updated: 5})
    expect(await all()).toEqual(Array.from({length: 10}, (_, i) => (i % 2 === 0 ? sub(i, {latest_event_id: `import:${600 + i}`, latest_event_timestamp: 600 + i, amount_minor: 600 + i}) : sub(i))))
  })

  it('a chunk of one is a single row: row by row ends as one chunk', async () => {
    const rows = [sub(1), sub(2), sub(1, {latest_event_timestamp: 300}), sub(2, {latest_event_timestamp: 50})].map((v) => subscriptionRow(v))
    const w = store.imports.writer('subscriptions')
    for (const r of rows) await w.writeChunk([r])
    await w.commit()
    await w.close()
    const byRow = await all()
    const counts = {...w.counts}
    cleanup()
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
    const one = store.imports.writer('subscriptions')
    await one.writeChunk(rows)
    await one.commit()
    await one.close()
    expect(await all()).toEqual(byRow)
    expect(one.counts).toEqual(counts)
  })
})
