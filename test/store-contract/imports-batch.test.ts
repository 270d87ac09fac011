import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import type {ExternalStages} from '../../src/store/port/imports.js'
import {type ChargeValues, recordKey, type Resolve, type SubscriptionValues} from '../../src/store/port/revenue.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, charge, chargeRow, keyOf, subscription, subscriptionRow, withoutId} from '../helpers/contract-fixtures.js'

/**
 * A large batch ends as the same rows written one per batch: the SQLite writer stages a
 * batch and sorts it into the table, then applies the per-row rules to the rows whose key
 * was there or came earlier in the batch (more of them than it reads at a time).
 */
describe.each(ADAPTERS)('imports repository contract, large batches: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let product: number
  const all = async () =>
    (await store.revenue
      .list('subscriptions', {limit: 100_000}))
      .rows.map((r) => withoutId(r)!)
      .sort((a, b) => (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0))

  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
  })
  afterEach(() => cleanup())

  it('one batch of 800 rows over 200 keys, some stored before, ends as row by row', async () => {
    // Deterministic: keys and events from a small generator, with repeats of the same event.
    let s = 7
    const next = () => (s = (s * 48_271) % 2_147_483_647)
    const row = (k: number, ts: number, over: Partial<SubscriptionValues> = {}) =>
      subscriptionRow(subscription({latest_event_id: `import:${ts}`, latest_event_timestamp: ts, origin_id: `sub_${k}`, product_id: product, user_id: `u${(k * 7919) % 200}`, ...over}))
    const before = Array.from({length: 65}, (_, k) => row(k * 3, 500))
    const rows = Array.from({length: 800}, () => {
      const k = next() % 200
      return row(k, 400 + (next() % 5) * 50, {amount_minor: next() % 1000})
    })
    const run = async (perRow: boolean) => {
      const pre = store.imports.writer('subscriptions')
      await pre.writeChunk(before)
      await pre.commit()
      await pre.close()
      const w = store.imports.writer('subscriptions')
      if (perRow) {
        // flush() writes what was written so far (SQLite: the stage), in the batch: row by row.
        for (const r of rows) {
          await w.writeChunk([r])
          await w.flush()
          expect(w.counts.inserted).toBeGreaterThanOrEqual(0)
        }
        expect(await w.commit()).toBe(true)
      } else {
        await w.writeChunk(rows)
        expect(await w.commit()).toBe(true)
      }
      await w.close()
      return {counts: {...w.counts}, rows: await all()}
    }
    const byRow = await run(true)
    cleanup()
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
    const batch = await run(false)
    expect(batch.counts).toEqual(byRow.counts)
    expect(batch.rows).toEqual(byRow.rows)
    expect(byRow.counts.inserted).toBe(byRow.rows.length - 65)
    expect(byRow.counts.updated + byRow.counts.unchanged + byRow.counts.stale).toBeGreaterThan(500)
  })

  it('batches staged by the reading thread (externalStages, commitStaged) end as rows flushed one by one; a stage not committed leaves nothing', async () => {
    let s = 11
    const next = () => (s = (s * 48_271) % 2_147_483_647)
    const row = (k: number, ts: number, over: Partial<SubscriptionValues> = {}) =>
      subscriptionRow(subscription({latest_event_id: `import:${ts}`, latest_event_timestamp: ts, origin_id: `sub_${k}`, product_id: product, user_id: `u${(k * 7919) % 150}`, ...over}))
    const before = Array.from({length: 45}, (_, k) => row(k * 3, 500))
    const rows = Array.from({length: 600}, () => {
      const k = next() % 150
      return row(k, 400 + (next() % 5) * 50, {amount_minor: next() % 1000})
    })
    const seed = async () => {
      const pre = store.imports.writer('subscriptions')
      await pre.writeChunk(before)
      expect(await pre.commit()).toBe(true)
      await pre.close()
    }
    const reopen = async () => {
      cleanup()
      ;({cleanup, store} = await adapter.open())
      product = await addProduct(store, 'pro_monthly')
      await seed()
    }
    await seed()
    // Flushed after every row: the per-row rules one row at a time, counts current after each.
    const one = store.imports.writer('subscriptions')
    let inserted = 0
    for (const r of rows) {
      await one.writeChunk([r])
      await one.flush()
      expect(one.counts.inserted).toBeGreaterThanOrEqual(inserted)
      inserted = one.counts.inserted
    }
    expect(await one.commit()).toBe(true)
    await one.close()
    const byRow = {counts: {...one.counts}, rows: await all()}

    /** Rows [from, to) into stage `i`, filled through a connection of its own as the reading thread does. */
    const stage = (stages: ExternalStages, i: number, from: number, to: number) => {
      stages.start(i)
      for (const r of rows.slice(from, to)) stages.insert(i, r)
      stages.complete(i)
      return {products: [product], rows: to - from, stage: i}
    }

    // Batches of 150 rows, the stages taking turns.
    await reopen()
    const w = store.imports.writer('subscriptions')
    const stages = store.imports.fillStages(w.externalStages())
    for (let i = 0; i < rows.length; i += 150) expect(await w.commitStaged(stage(stages, (i / 150) % 2, i, i + 150))).toBe(true)
    stages.close()
    await w.close()
    expect(w.counts).toEqual(byRow.counts)
    expect(await all()).toEqual(byRow.rows)

    // A stage filled and not committed when the writer closes: nothing of it is in the store.
    await reopen()
    const killed = store.imports.writer('subscriptions')
    const killedStages = store.imports.fillStages(killed.externalStages())
    expect(await killed.commitStaged(stage(killedStages, 0, 0, 150))).toBe(true)
    const committed = await all()
    stage(killedStages, 1, 150, 300)
    killedStages.close()
    await killed.close()
    expect(await all()).toEqual(committed)
    const again = store.imports.writer('subscriptions')
    await again.writeChunk(rows)
    expect(await again.commit()).toBe(true)
    await again.close()
    expect(await all()).toEqual(byRow.rows)
  })

  it('charges staged by the reading thread meet deletes, pending and kept partial updates, repeats and escaped text as rows flushed one by one do', async () => {
    let s = 23
    const next = () => (s = (s * 48_271) % 2_147_483_647)
    const ev = (timestamp: number, id = `e${timestamp}`) => ({id, timestamp})
    const notes = [null, 'plain', 'tab\there', 'line\nbreak\r', 'back\\slash', '\\N', '', '{"a":"b\\tc"}']
    const value = (k: number, ts: number, over: Partial<ChargeValues> = {}) =>
      charge({latest_event_id: `import:${ts}`, latest_event_timestamp: ts, origin_id: `ch_${k}`, product_id: product, user_id: `u${(k * 7919) % 100}`, ...over})
    const rows = Array.from({length: 400}, () => {
      const k = next() % 100
      return chargeRow(value(k, 400 + (next() % 7) * 50, {amount_minor: next() % 10_000, metadata_json: notes[next() % notes.length]}))
    })
    const keyOfK = (k: number) => recordKey(`u${(k * 7919) % 100}`, 'gateway_a', `ch_${k}`)
    const resolve: Resolve<'charges'> = async (values, writes) => {
      const out = {...values} as Record<string, unknown>
      for (const [f, w] of Object.entries(writes)) out[f] = w.value
      return out as unknown as ChargeValues
    }
    const seed = async () => {
      // Records stored before, some with a partial update kept after their base; pending
      // updates of records not made yet; a delete newer than some rows of its key.
      const stored = Array.from({length: 30}, (_, k) => value(k, 500))
      await store.revenue.save('charges', stored, stored.map((_, k) => (k % 10 === 0 ? {base: ev(500, 'import:500'), fields: {status: {event: ev(900), value: 'failed'}}} : null)))
      await store.revenue.savePending('charge', [95, 96, 97].map((k) => [keyOfK(k), {fields: {status: {event: ev(900), value: 'failed'}}, latest: ev(900)}]))
      await store.revenue.logEvents([{action: 'delete', event: ev(600, 'del'), key: keyOfK(90), kind: 'charge'}], '2026-01-01T00:00:00.000Z')
    }
    const state = async () => {
      const listed = (await store.revenue.list('charges', {limit: 100_000})).rows.map((r) => withoutId(r)!)
      listed.sort((a, b) => (a.user_id + a.origin_id < b.user_id + b.origin_id ? -1 : 1))
      return {fields: await store.revenue.fieldEvents('charges', listed.map((r) => keyOf(r))), pending: [...(await store.revenue.pending('charge')).keys()].sort(), rows: listed}
    }
    await seed()
    const one = store.imports.writer('charges', {resolve})
    for (const r of rows) {
      await one.writeChunk([r])
      await one.flush()
    }
    expect(await one.commit()).toBe(true)
    await one.close()
    const byRow = {counts: {...one.counts}, ...(await state())}
    expect(byRow.counts.stale).toBeGreaterThan(0)
    expect(byRow.fields.filter((f) => f !== null).length).toBeGreaterThan(0)
    expect(byRow.pending.length).toBeLessThan(3)

    cleanup()
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
    await seed()
    const w = store.imports.writer('charges', {resolve})
    const stages = store.imports.fillStages(w.externalStages())
    for (let i = 0; i < rows.length; i += 100) {
      const at = (i / 100) % 2
      stages.start(at)
      for (const r of rows.slice(i, i + 100)) stages.insert(at, r)
      stages.complete(at)
      expect(await w.commitStaged({products: [product], rows: 100, stage: at})).toBe(true)
    }
    stages.close()
    await w.close()
    expect(w.counts).toEqual(byRow.counts)
    expect(await state()).toEqual({fields: byRow.fields, pending: byRow.pending, rows: byRow.rows})
  })

  it('checkpoints, where the adapter offers them, run on a store in WAL mode through a connection of their own', () => {
    if (!store.imports.checkpoints) return
    const checkpoints = store.imports.checkpoints()
    expect(checkpoints).toBeDefined()
    checkpoints!.run()
    checkpoints!.close()
  })
})
