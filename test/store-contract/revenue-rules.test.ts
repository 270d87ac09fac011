import fc from 'fast-check'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {type ChargeValues, compareEvents, type EventRef, eventOfRecord, type Kind, type LoggedEvent, type Period, recordKey, type SubscriptionEvent} from '../../src/store/port/revenue.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, charge, keyOf, subscription, withoutId} from '../helpers/contract-fixtures.js'

/**
 * The revenue rules the adapters implement in SQL, on every adapter, compared with plain
 * reference models over random records: which delete of a record is the latest (timestamp,
 * then the id in byte order, whatever the database's collation), the order of a list (newest
 * first, no date last, then the newest row), its filters and total, net revenue per period
 * and group (a charge's country, else its user's, else "unknown"), and which subscription
 * events a delete forgets. A query that sorts or compares the wrong way fails here on the
 * adapter that has it.
 */

/**
 * Event ids whose byte order differs from a language collation's (upper case before lower,
 * `_` and `-` between, accents after z, a prefix before its extensions).
 */
const IDS = ['a', 'A', 'b', 'B', 'Z', '_', '-', 'é', 'e', 'ea', 'a ', 'aa', '10', '9', 'evt_1', 'Evt_1', 'evt-1', 'évt']

const at = '2026-01-01T00:00:00.000Z'

/** Each property run writes under keys of its own, so runs never see each other's rows. */
let run = 0

describe.each(ADAPTERS)('revenue rules in SQL: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let products: Record<string, number>
  beforeAll(async () => {
    ;({cleanup, store} = await adapter.open())
    products = {p1: await addProduct(store, 'p1'), p2: await addProduct(store, 'p2')}
  })
  afterAll(() => cleanup())

  it('the latest delete of each record: by timestamp, then id in byte order; of some keys or of all of a kind', async () => {
    const logged = fc.record({
      action: fc.constantFrom('create', 'delete', 'delete', 'update'),
      id: fc.constantFrom(...IDS),
      key: fc.nat(2),
      kind: fc.constantFrom<Kind>('charge', 'subscription'),
      timestamp: fc.nat(3),
    })
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(logged, {maxLength: 16, selector: (e) => e.id}), fc.subarray([0, 1, 2, 3]), async (events, asked) => {
        const r = ++run
        const keyOfRun = (k: number) => recordKey(`u${r}`, 'gateway_a', `s${k}`)
        const log: LoggedEvent[] = events.map((e) => ({action: e.action as LoggedEvent['action'], event: {id: `${r}:${e.id}`, timestamp: e.timestamp}, key: keyOfRun(e.key), kind: e.kind}))
        await store.revenue.logEvents(log, at)
        for (const kind of ['charge', 'subscription'] as const) {
          const expected = new Map<string, EventRef>()
          for (const e of log) {
            if (e.kind !== kind || e.action !== 'delete') continue
            const prev = expected.get(e.key)
            if (!prev || compareEvents(e.event, prev) > 0) expected.set(e.key, e.event)
          }
          const keys = asked.map((k) => keyOfRun(k))
          expect(await store.revenue.latestDeletes(kind, keys)).toEqual(new Map([...expected].filter(([k]) => keys.includes(k))))
          const all = await store.revenue.latestDeletes(kind)
          expect(new Map([...all].filter(([k]) => k.startsWith(`["u${r}"`)))).toEqual(expected)
        }
      }),
      {numRuns: 60},
    )
  })

  it('a list: newest first, a record without a date last, then the newest row; its filters and the total before the limit', async () => {
    const record = fc.record({
      created: fc.constantFrom(null, 100, 200, 200, 300),
      origin: fc.constantFrom('gateway_a', 'gateway_b'),
      product: fc.constantFrom('p1', 'p2', null),
      status: fc.constantFrom('succeeded', 'failed'),
      user: fc.constantFrom('u1', 'u2'),
    })
    const filters = fc.record(
      {
        limit: fc.integer({max: 4, min: 0}),
        origin: fc.constantFrom('gateway_a', 'gateway_b'),
        product: fc.constantFrom('p1', 'p2', 'none'),
        since: fc.constantFrom(100, 150, 200, 300),
        status: fc.constantFrom('succeeded', 'failed'),
        until: fc.constantFrom(100, 200, 250, 301),
        user: fc.constantFrom('u1', 'u2'),
      },
      {requiredKeys: []},
    )
    await fc.assert(
      fc.asyncProperty(fc.array(record, {maxLength: 8}), fc.array(fc.nat(8), {maxLength: 3}), filters, async (records, cuts, f) => {
        const r = ++run
        const values: ChargeValues[] = records.map((x, i) =>
          charge({created: x.created, origin: x.origin, origin_id: `ch${i}`, product_id: x.product ? products[x.product] : null, status: x.status, user_id: `${x.user}-${r}`}),
        )
        // Saved in chunks (as imports save): the ids follow the order of saving.
        let from = 0
        for (const cut of [...cuts].sort((a, b) => a - b).concat(values.length)) {
          await store.revenue.save('charges', values.slice(from, Math.max(from, cut)))
          from = Math.max(from, cut)
        }
        const stored = await store.revenue.rows('charges', values.map((v) => keyOf(v)))
        const rows = stored.map((s, i) => ({...values[i], id: s!.id}))
        for (let i = 1; i < rows.length; i++) expect(rows[i].id).toBeGreaterThan(rows[i - 1].id)
        const filter = {
          limit: f.limit,
          origin: f.origin,
          product: f.product,
          since: f.since,
          status: f.status,
          until: f.until,
          user_id: f.user === undefined ? `u1-${r}` : `${f.user}-${r}`,
        }
        const taken = rows
          .filter((x) => x.user_id === filter.user_id)
          .filter((x) => filter.origin === undefined || x.origin === filter.origin)
          .filter((x) => filter.status === undefined || x.status === filter.status)
          .filter((x) => filter.product === undefined || (filter.product !== 'none' && x.product_id === products[filter.product]))
          .filter((x) => filter.since === undefined || (x.created !== null && x.created >= filter.since))
          .filter((x) => filter.until === undefined || (x.created !== null && x.created < filter.until))
          .sort((a, b) => (b.created ?? -Infinity) - (a.created ?? -Infinity) || b.id - a.id)
        const got = await store.revenue.list('charges', filter)
        expect(got.total).toBe(taken.length)
        expect(got.rows).toEqual(filter.limit ? taken.slice(0, filter.limit) : taken)
        // Without a user: every run's records, in the same order.
        const everyone = (await store.revenue.list('charges', {origin: filter.origin, status: filter.status})).rows.filter((x) => x.user_id.endsWith(`-${r}`))
        const expected = rows
          .filter((x) => (filter.origin === undefined || x.origin === filter.origin) && (filter.status === undefined || x.status === filter.status))
          .sort((a, b) => (b.created ?? -Infinity) - (a.created ?? -Infinity) || b.id - a.id)
        expect(everyone.map((x) => withoutId(x))).toEqual(expected.map((x) => withoutId(x)))
        await store.revenue.remove('charges', values.map((v) => keyOf(v)))
      }),
      {numRuns: 60},
    )
  })

  it('net revenue per period and group: succeeded charges in [start, end), USD amount less refunds; country of the charge, else of the user, else "unknown"', async () => {
    const record = fc.record({
      amount: fc.option(fc.integer({max: 10_000, min: 0}), {freq: 4}),
      country: fc.constantFrom(null, 'DE', 'JP'),
      created: fc.option(fc.integer({max: 12, min: 0}), {freq: 6}),
      product: fc.constantFrom('p1', 'p2', null),
      refunded: fc.integer({max: 500, min: 0}),
      status: fc.constantFrom('succeeded', 'succeeded', 'failed', 'pending'),
      user: fc.constantFrom('u1', 'u2', 'u3'),
    })
    const period = fc.tuple(fc.integer({max: 12, min: 0}), fc.integer({max: 13, min: 0})).map(([a, b]): Period => ({end: Math.max(a, b), start: Math.min(a, b)}))
    await fc.assert(
      fc.asyncProperty(fc.array(record, {maxLength: 10}), fc.array(period, {maxLength: 3, minLength: 1}), async (records, periods) => {
        const r = ++run
        // Each run's charges at times of its own, so other runs' (removed anyway) never fall in its periods.
        const base = r * 1000
        // u1 has a stored country, u2 one too, u3 none.
        await store.transaction(
          async () =>
            await store.pricing.saveUserCountries([
              {at, country: 'FR', userId: `u1-${r}`},
              {at, country: 'JP', userId: `u2-${r}`},
            ]),
          {write: true},
        )
        const userCountry: Record<string, string> = {u1: 'FR', u2: 'JP'}
        const values = records.map((x, i) =>
          charge({
            amount_refunded_usd_minor: x.refunded,
            amount_usd_minor: x.amount,
            country: x.country,
            created: x.created === null ? null : base + x.created,
            origin_id: `ch${i}`,
            product_id: x.product ? products[x.product] : null,
            status: x.status,
            user_id: `${x.user}-${r}`,
          }),
        )
        await store.revenue.save('charges', values)
        const shifted = periods.map((p) => ({end: base + p.end, start: base + p.start}))
        for (const by of ['country', 'month', 'product'] as const) {
          const expected = periods.map((p) => {
            const out = new Map<string, number>()
            records.forEach((x) => {
              if (x.status !== 'succeeded' || x.created === null || x.created < p.start || x.created >= p.end) return
              const key = by === 'month' ? 'all' : by === 'product' ? (x.product ?? '(no product)') : (x.country ?? userCountry[x.user] ?? 'unknown')
              out.set(key, (out.get(key) ?? 0) + (x.amount === null ? 0 : x.amount - x.refunded))
            })
            return out
          })
          expect(await store.revenue.netRevenue(by, shifted), by).toEqual(expected)
        }
        await store.revenue.remove('charges', values.map((v) => keyOf(v)))
      }),
      {numRuns: 60},
    )
  })

  it('a delete forgets the events of a subscription before it (timestamp, then id in byte order), of that subscription only; history groups each event', async () => {
    const stored = fc.record({country: fc.constantFrom(null, 'DE'), id: fc.constantFrom(...IDS), timestamp: fc.nat(3)})
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(stored, {maxLength: 10, selector: (e) => e.id}),
        fc.constantFrom(...IDS),
        fc.nat(3),
        fc.constantFrom('u1', 'u3'),
        async (events, beforeId, beforeTs, user) => {
          const r = ++run
          await store.transaction(async () => await store.pricing.saveUserCountries([{at, country: 'FR', userId: `u1-${r}`}]), {write: true})
          // Two subscriptions with the same events; the record's own latest event is not stored.
          const subs = ['mine', 'other'].map((id) =>
            subscription({country: null, latest_event_id: '~record', latest_event_timestamp: 99, origin_id: `${id}-${r}`, product_id: products.p1, user_id: `${user}-${r}`}),
          )
          await store.revenue.save('subscriptions', subs)
          const eventsOf = (s: (typeof subs)[number]): SubscriptionEvent[] => events.map((e) => ({...eventOfRecord(s, {id: e.id, timestamp: e.timestamp}), country: e.country}))
          await store.revenue.saveSubscriptionEvents([...eventsOf(subs[0]), ...eventsOf(subs[1])])
          const before = {id: beforeId, timestamp: beforeTs}
          await store.revenue.dropSubscriptionEvents(keyOf(subs[0]), before)
          const history = (await store.revenue.history('country')).filter((e) => e.user_id === `${user}-${r}`)
          const left = (originId: string) =>
            history
              .filter((e) => e.origin_id === originId && !e.record)
              .map((e) => `${e.event_timestamp} ${e.event_id} ${e.key}`)
              .sort()
          const fallback = user === 'u1' ? 'FR' : 'unknown'
          const line = (e: (typeof events)[number]) => `${e.timestamp} ${e.id} ${e.country ?? fallback}`
          expect(left(subs[0].origin_id)).toEqual(events.filter((e) => compareEvents({id: e.id, timestamp: e.timestamp}, before) >= 0).map(line).sort())
          expect(left(subs[1].origin_id)).toEqual(events.map(line).sort())
          // Each record is read as its own latest event too, grouped the same way.
          expect(history.filter((e) => e.record).map((e) => `${e.origin_id} ${e.key}`).sort()).toEqual(subs.map((s) => `${s.origin_id} ${fallback}`).sort())
          await store.revenue.remove('subscriptions', subs.map((s) => keyOf(s)))
        },
      ),
      {numRuns: 60},
    )
  })
})

