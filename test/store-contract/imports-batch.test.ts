import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import type {SubscriptionValues} from '../../src/store/port/revenue.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, subscription, subscriptionRow, withoutId} from '../helpers/contract-fixtures.js'

/**
 * A large batch ends as the same rows written one per batch: the SQLite writer stages a
 * batch and sorts it into the table, then applies the per-row rules to the rows whose key
 * was there or came earlier in the batch (more of them than it reads at a time).
 */
describe.each(ADAPTERS)('imports repository contract, large batches: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let product: number
  const all = () =>
    store.revenue
      .list('subscriptions', {limit: 100_000})
      .rows.map((r) => withoutId(r)!)
      .sort((a, b) => (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0))

  beforeEach(() => {
    ;({cleanup, store} = adapter.open())
    product = addProduct(store, 'pro_monthly')
  })
  afterEach(() => cleanup())

  it('one batch of 1,600 rows over 400 keys, some stored before, ends as row by row', () => {
    // Deterministic: keys and events from a small generator, with repeats of the same event.
    let s = 7
    const next = () => (s = (s * 48_271) % 2_147_483_647)
    const row = (k: number, ts: number, over: Partial<SubscriptionValues> = {}) =>
      subscriptionRow(subscription({latest_event_id: `import:${ts}`, latest_event_timestamp: ts, origin_id: `sub_${k}`, product_id: product, user_id: `u${(k * 7919) % 400}`, ...over}))
    const before = Array.from({length: 130}, (_, k) => row(k * 3, 500))
    const rows = Array.from({length: 1600}, () => {
      const k = next() % 400
      return row(k, 400 + (next() % 5) * 50, {amount_minor: next() % 1000})
    })
    const run = (perRow: boolean) => {
      const pre = store.imports.writer('subscriptions')
      pre.writeChunk(before)
      pre.commit()
      pre.close()
      const w = store.imports.writer('subscriptions')
      if (perRow) {
        // Reading the counts writes what was written so far (SQLite: the stage), in the batch.
        for (const r of rows) {
          w.writeChunk([r])
          expect(w.counts.inserted).toBeGreaterThanOrEqual(0)
        }
        expect(w.commit()).toBe(true)
      } else {
        w.writeChunk(rows)
        expect(w.commit()).toBe(true)
      }
      w.close()
      return {counts: {...w.counts}, rows: all()}
    }
    const byRow = run(true)
    cleanup()
    ;({cleanup, store} = adapter.open())
    product = addProduct(store, 'pro_monthly')
    const batch = run(false)
    expect(batch.counts).toEqual(byRow.counts)
    expect(batch.rows).toEqual(byRow.rows)
    expect(byRow.counts.inserted).toBe(byRow.rows.length - 130)
    expect(byRow.counts.updated + byRow.counts.unchanged + byRow.counts.stale).toBeGreaterThan(1000)
  })
})
