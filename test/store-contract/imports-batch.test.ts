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
        // flush() writes what was written so far (SQLite: the stage), in the batch: row by row.
        for (const r of rows) {
          w.writeChunk([r])
          w.flush()
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

  it('batches ended while the next one is written (endBatch, commitStep) end as rows flushed one by one; a batch not finished is not committed', () => {
    let s = 11
    const next = () => (s = (s * 48_271) % 2_147_483_647)
    const row = (k: number, ts: number, over: Partial<SubscriptionValues> = {}) =>
      subscriptionRow(subscription({latest_event_id: `import:${ts}`, latest_event_timestamp: ts, origin_id: `sub_${k}`, product_id: product, user_id: `u${(k * 7919) % 300}`, ...over}))
    const before = Array.from({length: 90}, (_, k) => row(k * 3, 500))
    const rows = Array.from({length: 1200}, () => {
      const k = next() % 300
      return row(k, 400 + (next() % 5) * 50, {amount_minor: next() % 1000})
    })
    const seed = () => {
      const pre = store.imports.writer('subscriptions')
      pre.writeChunk(before)
      expect(pre.commit()).toBe(true)
      pre.close()
    }
    const reopen = () => {
      cleanup()
      ;({cleanup, store} = adapter.open())
      product = addProduct(store, 'pro_monthly')
      seed()
    }
    seed()
    // Flushed after every row: the per-row rules one row at a time, counts current after each.
    const one = store.imports.writer('subscriptions')
    let inserted = 0
    for (const r of rows) {
      one.writeChunk([r])
      one.flush()
      expect(one.counts.inserted).toBeGreaterThanOrEqual(inserted)
      inserted = one.counts.inserted
    }
    expect(one.commit()).toBe(true)
    one.close()
    const byRow = {counts: {...one.counts}, rows: all()}

    // Batches of 300 rows, each committed a step per 100-row chunk of the next.
    reopen()
    const w = store.imports.writer('subscriptions')
    let ended = false
    for (let i = 0; i < rows.length; i += 100) {
      w.writeChunk(rows, i, i + 100)
      if ((i + 100) % 300 === 0) {
        if (ended) expect(w.finishCommit()).toBe(true)
        w.endBatch()
        ended = true
      } else if (ended) {
        const progress = w.commitStep()
        expect(progress).not.toBe('refused')
        ended = progress === 'pending'
      }
    }
    expect(w.commit()).toBe(true)
    w.close()
    expect(w.counts).toEqual(byRow.counts)
    expect(all()).toEqual(byRow.rows)

    // Ended and closed before its commit finished: SQLite commits it only then (PostgreSQL at endBatch).
    reopen()
    const first = store.imports.writer('subscriptions')
    first.writeChunk(rows, 0, 300)
    expect(first.commit()).toBe(true)
    first.close()
    const committed = all()
    reopen()
    const killed = store.imports.writer('subscriptions')
    killed.writeChunk(rows, 0, 300)
    killed.endBatch()
    killed.writeChunk(rows, 300, 400)
    expect(killed.commitStep()).not.toBe('refused')
    killed.writeChunk(rows, 400, 600)
    expect(killed.finishCommit()).toBe(true)
    killed.writeChunk(rows, 600, 900)
    killed.endBatch()
    killed.writeChunk(rows, 900, 1000)
    killed.close()
    // Rows 0-299 committed; on SQLite rows 300-999 not (the batch of rows 300-899 ended, its
    // commit not finished; rows 900-999 were the open batch).
    if (adapter.name === 'sqlite') expect(all()).toEqual(committed)
    const again = store.imports.writer('subscriptions')
    again.writeChunk(rows)
    expect(again.commit()).toBe(true)
    again.close()
    expect(all()).toEqual(byRow.rows)
  })
})
