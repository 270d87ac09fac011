import fc from 'fast-check'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {NotFoundError} from '../../src/errors.js'
import {compareEvents, type EventRef, judge, newEventId} from '../../src/revenue/events.js'
import {createSubscription, deleteSubscription, updateSubscription} from '../../src/revenue/subscriptions.js'
import type {StorePort} from '../../src/store/port.js'
import {dumpTable, seedCatalog, seededStores, tempDir, withStore} from '../helpers/revenue-fixtures.js'

describe('event order', () => {
  it('is a total order on (timestamp, id)', () => {
    const ev = fc.record({id: fc.string({maxLength: 6}), timestamp: fc.integer({max: 20, min: 0})})
    fc.assert(
      fc.property(ev, ev, ev, (a, b, c) => {
        expect(Math.sign(compareEvents(a, b)) === -Math.sign(compareEvents(b, a))).toBe(true)
        if (compareEvents(a, b) <= 0 && compareEvents(b, c) <= 0) expect(compareEvents(a, c)).toBeLessThanOrEqual(0)
        expect(compareEvents(a, b) === 0).toBe(a.id === b.id && a.timestamp === b.timestamp)
      }),
    )
  })

  it('applies newer events, ignores older ones, recognises the same event', () => {
    const latest = {id: 'evt_b', timestamp: 100}
    expect(judge({id: 'x', timestamp: 101}, latest)).toBe('apply')
    expect(judge({id: 'evt_c', timestamp: 100}, latest)).toBe('apply')
    expect(judge({id: 'evt_a', timestamp: 100}, latest)).toBe('stale')
    expect(judge({id: 'zzz', timestamp: 99}, latest)).toBe('stale')
    expect(judge({id: 'evt_b', timestamp: 100}, latest)).toBe('duplicate')
    expect(judge({id: 'any', timestamp: 0}, undefined)).toBe('apply')
  })

  it('generates ids that grow with time, so a later command wins a same-second tie', async () => {
    const a = newEventId()
    await new Promise((r) => setTimeout(r, 3))
    const b = newEventId()
    expect(a < b).toBe(true)
    expect(new Set(Array.from({length: 1000}, () => newEventId())).size).toBe(1000)
  })
})

type Ev = {body: Record<string, unknown>; event: EventRef; key: {origin: string; origin_id: string; user_id: string}; kind: 'create' | 'update'}

/** A seeded stream: 100 subscriptions, 900 distinct events (creates and full updates), 100 redeliveries. */
function eventStream(seed: number): Ev[] {
  const rnd = random(seed)
  const base = 1_767_225_600
  const statuses = ['pending', 'trialing', 'active', 'canceled'] as const
  const state = () => {
    const status = statuses[rnd(4)]
    return {
      amount: [9.99, 12, 120, 4.5][rnd(4)],
      created: base - 86_400 * rnd(300),
      currency: ['USD', 'EUR', 'GBP', 'JPY'][rnd(3)],
      status,
      ...(status === 'canceled' ? {cancel_at: base + 86_400 * (1 + rnd(30)), canceled_at: base + rnd(1000)} : {}),
      ...(status === 'trialing' ? {trial_end: base + 86_400 * 14, trial_start: base + rnd(1000)} : {}),
    }
  }
  const out: Ev[] = []
  for (let i = 0; i < 100; i++) {
    const key = {origin: 'gateway_a', origin_id: `sub_${i}`, user_id: `u${i}`}
    const fixed = {country: ['DE', 'US', 'JP'][i % 3], origin: key.origin, origin_id: key.origin_id, product: i % 2 ? 'pro_monthly' : 'pro_yearly', user_id: key.user_id}
    // The first notification of each subscription is its create, strictly before the others.
    out.push({body: {...fixed, ...state()}, event: {id: `e${i}-000`, timestamp: base - 1}, key, kind: 'create'})
    for (let k = 1; k < 9; k++) {
      // Few distinct timestamps, so ties between different ids are common.
      const event = {id: `e${i}-${String(rnd(1000)).padStart(3, '0')}-${k}`, timestamp: base + rnd(4)}
      const kind = rnd(2) === 0 ? 'create' : 'update'
      out.push({body: kind === 'create' ? {...fixed, ...state()} : state(), event, key, kind})
    }
  }
  // Redeliveries: the same event (same id) sent again.
  for (let r = 0; r < 100; r++) out.push(out[rnd(900)])
  return out
}

/** Deliver events like a gateway does: an update that finds no record yet is retried later. */
async function deliver(store: StorePort, events: Ev[]): Promise<void> {
  const queue = [...events]
  let guard = 0
  while (queue.length > 0) {
    const e = queue.shift()!
    try {
      if (e.kind === 'create') await createSubscription(store, e.body, e.event)
      else await updateSubscription(store, e.key, e.body, e.event)
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
      queue.push(e)
      if (++guard > 100_000) throw new Error('retry loop')
    }
  }
}

/** mulberry32: a small seeded generator, integers in [0, n). */
function random(seed: number): (n: number) => number {
  let a = seed >>> 0
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4_294_967_296) * n)
  }
}

function shuffle<T>(items: T[], seed: number): T[] {
  const out = [...items]
  const rnd = random(seed)
  for (let i = out.length - 1; i > 0; i--) {
    const j = rnd(i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

/**
 * How often a delivery order puts each hazard of the rules before them, per subscription:
 * an update before the record's create, an event older than one already delivered, a
 * same-second tie delivered against id order, a create older than an event already
 * delivered, a redelivery after a newer event.
 */
function hazards(events: Ev[]): {createLate: number; older: number; redeliveredLate: number; tieReversed: number; updateFirst: number} {
  const out = {createLate: 0, older: 0, redeliveredLate: 0, tieReversed: 0, updateFirst: 0}
  const seen = new Map<string, Ev[]>()
  for (const e of events) {
    const before = seen.get(e.key.origin_id) ?? []
    if (before.length === 0 && e.kind === 'update') out.updateFirst++
    const newer = before.filter((b) => compareEvents(b.event, e.event) > 0)
    if (newer.length > 0) {
      out.older++
      if (e.kind === 'create') out.createLate++
      if (before.some((b) => b.event.id === e.event.id)) out.redeliveredLate++
    }
    if (newer.some((b) => b.event.timestamp === e.event.timestamp)) out.tieReversed++
    seen.set(e.key.origin_id, [...before, e])
  }
  return out
}

/** A store with the catalog, copied from one seeded once (beforeAll). */
const freshStore = seededStores()

async function finalState(events: Ev[]): Promise<unknown[]> {
  return await withStore(freshStore(), async (db, store) => {
    await deliver(store, events)
    return dumpTable(db, 'subscriptions')
  })
}

describe('shuffled event streams', () => {
  it('1,000 events on 100 subscriptions end, in random orders, in the state of the sorted replay', async () => {
    const events = eventStream(7)
    expect(events).toHaveLength(1000)
    const sorted = [...events].sort((a, b) => compareEvents(a.event, b.event))
    const expected = await finalState(sorted)
    expect(expected).toHaveLength(100)
    // The replay really exercised the rules: several statuses and event ids in the end state.
    expect(new Set(expected.map((r) => (r as {status: string}).status)).size).toBeGreaterThan(2)
    // 4 orders, not 20: each shuffles 100 independent subscriptions, so every hazard below is met hundreds of times (counted, and checked to be).
    const seen = {createLate: 0, older: 0, redeliveredLate: 0, tieReversed: 0, updateFirst: 0}
    for (let order = 1; order <= 4; order++) {
      const shuffled = shuffle(events, order * 7919)
      for (const [k, n] of Object.entries(hazards(shuffled))) seen[k as keyof typeof seen] += n
      expect(await finalState(shuffled), `order ${order}`).toEqual(expected)
    }
    for (const [k, n] of Object.entries(seen)) expect(n, k).toBeGreaterThan(100)
  })
})

describe('single writes as events', () => {
  it('ignores a stale event, applies a repeated id once, and keeps a delete against an older create', async () => {
    const path = join(tempDir(), 'single.db')
    await withStore(path, async (db, store) => {
      seedCatalog(db)
      const body = {amount: 9.99, created: 1_767_225_600, currency: 'USD', origin: 'gateway_a', origin_id: 's1', product: 'pro_monthly', status: 'active', user_id: 'u1'}
      const key = {origin: 'gateway_a', origin_id: 's1', user_id: 'u1'}
      expect((await createSubscription(store, body, {id: 'c1', timestamp: 100})).outcome).toBe('created')
      const stale = await updateSubscription(store, key, {amount: 20}, {id: 'u0', timestamp: 50})
      expect(stale.outcome).toBe('stale')
      expect(stale.message).toMatch(/^stale event ignored/)
      expect(stale.record!.amount).toBe(9.99)
      expect((await updateSubscription(store, key, {amount: 12}, {id: 'u1', timestamp: 200})).record!.amount).toBe(12)
      // u1 again, even with other content and a newer timestamp: applied once.
      const again = await updateSubscription(store, key, {amount: 99}, {id: 'u1', timestamp: 300})
      expect(again.outcome).toBe('duplicate')
      expect(again.record!.amount).toBe(12)
      expect((await deleteSubscription(store, key, {id: 'd1', timestamp: 400})).outcome).toBe('deleted')
      // A create older than the delete does not bring it back; a newer one does.
      expect((await createSubscription(store, body, {id: 'c2', timestamp: 350})).outcome).toBe('stale')
      expect(db.prepare('SELECT count(*) AS n FROM subscriptions').get()).toEqual({n: 0})
      expect((await createSubscription(store, body, {id: 'c3', timestamp: 500})).outcome).toBe('created')
      // An update older than the record's latest event but for a live record: stale.
      expect((await updateSubscription(store, key, {status: 'canceled', cancel_at: 1_769_904_000}, {id: 'u2', timestamp: 450})).outcome).toBe('stale')
    })
  })
})
