import fc from 'fast-check'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {createCharge, deleteCharge, getCharge, listCharges, updateCharge} from '../../src/revenue/charges.js'
import type {EventRef} from '../../src/revenue/events.js'
import {createSubscription, deleteSubscription, listSubscriptions, updateSubscription} from '../../src/revenue/subscriptions.js'
import {openSqliteStore as openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {seedCatalog, seededStores, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {compareEvents} from '../../src/revenue/events.js'
import {applyEvent, type Channel, ordered, orderStream, type Stream, streamOf} from '../helpers/revenue-order.js'

/**
 * Issue 16, point 1: partial updates in any order. Last writer wins per field; an update or
 * delete that arrives before its create waits for it; any delivery order of a stream ends in
 * the state of the ordered stream. The CLI, HTTP and import channels run the same property
 * in test/commands/revenue-order.test.ts.
 */

const T = 1_767_225_600 // 2026-01-01
const key = {origin: 'gateway_a', origin_id: 'sub_1', user_id: 'u1'}
const ev = (id: string, timestamp: number): EventRef => ({id, timestamp})

/** Stores with the catalog, copied from one seeded once (beforeAll). */
const seeded = seededStores()

async function fresh<T>(fn: (store: StorePort) => T): Promise<T> {
  return await withStore(seeded(), (_db, store) => fn(store))
}

const subscription = {amount: 10, created: T - 86_400, currency: 'USD', origin: 'gateway_a', origin_id: 'sub_1', product: 'pro_monthly', status: 'active', user_id: 'u1'}
const charge = {amount: 10, created: T - 86_400, currency: 'USD', origin: 'gateway_a', origin_id: 'ch_1', product: 'lifetime', status: 'pending', user_id: 'u1'}
const chargeKey = {...key, origin_id: 'ch_1'}

describe('last writer wins per field (the issue\'s reproduction)', () => {
  it('subscriptions: create t100 amount 10, amount 20 at t200, canceled at t300, delivered create, canceled, amount', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, ev('c', T + 100))
      await updateSubscription(store, key, {cancel_at: T + 86_400, canceled_at: T + 300, status: 'canceled'}, ev('s', T + 300))
      const late = await updateSubscription(store, key, {amount: 20}, ev('a', T + 200))
      expect(late).toMatchObject({message: 'subscription updated: u1 gateway_a sub_1', outcome: 'updated'})
      expect(late.record).toMatchObject({amount: 20, amount_usd: 20, amount_usd_monthly: 20, cancel_at: T + 86_400, latest_event_id: 's', latest_event_timestamp: T + 300, status: 'canceled'})
      // Nothing older than every field it names changes anything.
      const stale = await updateSubscription(store, key, {amount: 5}, ev('old', T + 150))
      expect(stale.outcome).toBe('stale')
      expect((await listSubscriptions(store, {})).records[0]).toMatchObject({amount: 20, status: 'canceled'})
    })
  })

  it('charges: the same with amount and status', async () => {
    await fresh(async (store) => {
      await createCharge(store, charge, ev('c', T + 100))
      await updateCharge(store, chargeKey, {status: 'succeeded'}, ev('s', T + 300))
      const late = await updateCharge(store, chargeKey, {amount: 20, metadata: {k: 'v'}}, ev('a', T + 200))
      expect(late.record).toMatchObject({amount: 20, amount_usd: 20, latest_event_id: 's', metadata: {k: 'v'}, status: 'succeeded'})
      expect(await getCharge(store, chargeKey)).toMatchObject({amount: 20, status: 'succeeded'})
    })
  })

  it('a newer create replaces every field but those a still newer update wrote', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, ev('c1', T + 100))
      await updateSubscription(store, key, {amount: 30}, ev('u', T + 300))
      const r = await createSubscription(store, {...subscription, amount: 15, country: 'DE', currency: 'EUR'}, ev('c2', T + 200))
      // 30 from the update, in EUR from the create (0.8 EUR per USD).
      expect(r.record).toMatchObject({amount: 30, amount_usd: 37.5, currency: 'EUR', latest_event_id: 'u'})
      expect((await createSubscription(store, subscription, ev('c0', T + 50))).outcome).toBe('stale')
    })
  })

  it('a status writes the fields it does not allow as null, so an older cancel date stays cleared', async () => {
    await fresh(async (store) => {
      await createSubscription(store, {...subscription, cancel_at: T + 86_400, status: 'canceled'}, ev('c', T + 100))
      await updateSubscription(store, key, {status: 'active'}, ev('act', T + 300))
      await updateSubscription(store, key, {cancel_at: T + 2 * 86_400, status: 'canceled'}, ev('late', T + 200))
      expect((await listSubscriptions(store, {})).records[0]).toMatchObject({cancel_at: null, status: 'active'})
    })
  })
})

describe('updates and deletes before their create', () => {
  it('an update is kept (pending) and applied when the create arrives; duplicates stay idempotent', async () => {
    await fresh(async (store) => {
      const early = await updateSubscription(store, key, {amount: 20}, ev('u', T + 200))
      expect(early).toEqual({
        message: 'no subscription u1 gateway_a sub_1 yet: update u is kept (pending) and applied when the subscription is created (check the key with "pricectl subscriptions list --user-id u1")',
        outcome: 'pending',
        record: null,
      })
      expect((await updateSubscription(store, key, {amount: 20}, ev('u', T + 200))).outcome).toBe('duplicate')
      expect((await listSubscriptions(store, {})).total).toBe(0)
      const created = await createSubscription(store, subscription, ev('c', T + 100))
      expect(created).toMatchObject({outcome: 'created', record: {amount: 20, latest_event_id: 'u'}})
      expect((await store.revenue.pending('subscription')).size).toBe(0)
      // An update older than the create that arrives after it lost to the create anyway.
      await fresh(async (other) => {
        await updateSubscription(other, key, {amount: 20}, ev('u', T + 50))
        expect((await createSubscription(other, subscription, ev('c', T + 100))).record).toMatchObject({amount: 10, latest_event_id: 'c'})
      })
    })
  })

  it('a delete is a tombstone: an older create stays out, a newer one makes the record', async () => {
    await fresh(async (store) => {
      const del = await deleteSubscription(store, key, ev('d', T + 200))
      expect(del).toMatchObject({message: expect.stringMatching(/^no subscription u1 gateway_a sub_1 yet: delete d is kept, so a create older than it will not make the subscription/), outcome: 'pending', record: null})
      expect((await createSubscription(store, subscription, ev('c', T + 100))).outcome).toBe('stale')
      expect((await listSubscriptions(store, {})).total).toBe(0)
      expect((await createSubscription(store, subscription, ev('c2', T + 300))).outcome).toBe('created')
      expect((await deleteCharge(store, chargeKey, ev('dc', T + 200))).outcome).toBe('pending')
      expect((await updateCharge(store, chargeKey, {amount: 3}, ev('older', T + 150))).outcome).toBe('stale')
    })
  })

  it('fields written after a delete that arrives late wait for a newer create', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, ev('c', T + 100))
      await updateSubscription(store, key, {amount: 40}, ev('u', T + 300))
      expect((await deleteSubscription(store, key, ev('d', T + 200))).outcome).toBe('deleted')
      expect((await listSubscriptions(store, {})).total).toBe(0)
      // Ordered: c, d, c2, u: the create after the delete, then the update's amount.
      expect((await createSubscription(store, {...subscription, amount: 15}, ev('c2', T + 250))).record).toMatchObject({amount: 40, latest_event_id: 'u'})
    })
  })
})

/** The engine channel: each event through the engine's write functions, on one store emptied between runs. */
function engineChannel(kind: 'charges' | 'subscriptions', store: StorePort, reset: () => void): Channel {
  return {
    async run(stream) {
      reset()
      for (const e of stream) {
        await applyEvent(kind, store, e)
      }
      const records: {origin_id: string}[] = kind === 'subscriptions' ? (await listSubscriptions(store, {})).records : (await listCharges(store, {})).records
      return records.sort((a, b) => (a.origin_id < b.origin_id ? -1 : 1))
    },
  }
}

type Hazards = {createAfterNewer: number; deleteFirst: number; redeliveredLate: number; tieReversed: number; updateFirst: number}

/**
 * The hazards a delivery order puts before the rules, per record: an update or a delete
 * before any create, a create older than an event already delivered, a same-second tie
 * against id order, a redelivery after a newer event.
 */
function hazards(stream: Stream, into: Hazards): void {
  const seen = new Map<string, Stream>()
  for (const e of stream) {
    const before = seen.get(e.key) ?? []
    if (!before.some((b) => b.action === 'create')) {
      if (e.action === 'update') into.updateFirst++
      if (e.action === 'delete') into.deleteFirst++
    }
    const newer = before.filter((b) => compareEvents(b.event, e.event) > 0)
    if (e.action === 'create' && newer.length > 0) into.createAfterNewer++
    if (newer.some((b) => b.event.timestamp === e.event.timestamp)) into.tieReversed++
    if (newer.length > 0 && before.some((b) => b.event.id === e.event.id)) into.redeliveredLate++
    seen.set(e.key, [...before, e])
  }
}

describe('any delivery order ends in the state of the ordered stream (engine)', () => {
  for (const kind of ['subscriptions', 'charges'] as const) {
    it(`${kind}: creates, partial updates, deletes and duplicates, shuffled`, async () => {
      const store = openStore(join(tempDir(), 'store.db'))
      const db = store.db
      try {
        seedCatalog(db)
        const reset = () => db.exec('DELETE FROM subscriptions; DELETE FROM charges; DELETE FROM events; DELETE FROM pending_fields')
        const channel = engineChannel(kind, store, reset)
        const seen: Hazards = {createAfterNewer: 0, deleteFirst: 0, redeliveredLate: 0, tieReversed: 0, updateFirst: 0}
        await fc.assert(
        fc.asyncProperty(streamOf(kind), fc.integer(), async (stream: Stream, seed: number) => {
          const want = await channel.run(ordered(stream))
          const shuffled = orderStream(stream, seed)
          hazards(shuffled, seen)
          expect(await channel.run(shuffled)).toEqual(want)
        }),
          // 100 streams, not 300: each hazard is met dozens of times in them (counted below); mutation runs (vitest.mutate.config.ts) try 60.
          {numRuns: process.env.PRICECTL_MUTATE === '1' ? 60 : 100},
        )
        for (const [k, n] of Object.entries(seen)) expect(n, k).toBeGreaterThan(process.env.PRICECTL_MUTATE === '1' ? 2 : 10)
      } finally {
        await store.close()
      }
    }, 120_000)
  }
})
