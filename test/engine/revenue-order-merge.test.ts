import {describe, expect, it} from 'vitest'

import {createCharge, deleteCharge, updateCharge} from '../../src/revenue/charges.js'
import type {EventRef} from '../../src/revenue/events.js'
import {subscriptionUpdateFields} from '../../src/revenue/order.js'
import {createSubscription, deleteSubscription, updateSubscription} from '../../src/revenue/subscriptions.js'
import type {DB} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {seededStores, setRates, withStore} from '../helpers/revenue-fixtures.js'

/**
 * How a record merges its events (src/revenue/order.ts; docs/revenue.md, "Events in any
 * order" and "Tax"): the fields a status clears, the tax after a currency change, the USD
 * figures after the amount, the currency or the created date moved, and what the user is
 * told when an event arrives too late (stale, duplicate, pending). The shuffled-stream
 * property of revenue-order.test.ts checks that any order ends like the ordered stream;
 * these pin what the ordered stream itself ends in.
 */

const T = 1_767_225_600 // 2026-01-01
const DAY = 86_400
const key = {origin: 'gateway_a', origin_id: 'sub_1', user_id: 'u1'}
const chargeKey = {...key, origin_id: 'ch_1'}
const ev = (id: string, timestamp: number): EventRef => ({id, timestamp})
/** An event at T + s, named by its offset. */
const at = (s: number, name = 'e'): EventRef => ev(`${name}${s}`, T + s)

/** EUR 0.8, GBP 0.5, JPY 100 per USD (seedCatalog), so 12 EUR is 15 USD and 12 JPY 0.12 USD. */
const seeded = seededStores()

async function fresh<R>(fn: (store: StorePort, db: DB) => R): Promise<R> {
  return await withStore(seeded(), (db, store) => fn(store, db))
}

const subscription = {amount: 10, created: T - DAY, currency: 'USD', origin: 'gateway_a', origin_id: 'sub_1', product: 'pro_monthly', status: 'active', user_id: 'u1'}
const charge = {amount: 10, created: T - DAY, currency: 'USD', origin: 'gateway_a', origin_id: 'ch_1', product: 'lifetime', status: 'succeeded', user_id: 'u1'}
const eurSubscription = {...subscription, amount: 12, currency: 'EUR', tax: 2}
const eurCharge = {...charge, amount: 12, amount_refunded: 6, currency: 'EUR', tax: 2}

describe('the fields a subscription update writes', () => {
  it('a status writes the dates it does not allow as null; the given ones and the allowed ones are left alone', () => {
    expect(subscriptionUpdateFields({status: 'active'})).toStrictEqual({cancel_at: null, canceled_at: null, status: 'active', trial_end: null, trial_start: null})
    expect(subscriptionUpdateFields({cancel_at: T, status: 'canceled'})).toStrictEqual({cancel_at: T, status: 'canceled', trial_end: null, trial_start: null})
    expect(subscriptionUpdateFields({status: 'trialing', trial_start: T})).toStrictEqual({cancel_at: null, canceled_at: null, status: 'trialing', trial_start: T})
    // No status: only what was given (an absent field is not written).
    expect(subscriptionUpdateFields({amount: 20, status: undefined})).toStrictEqual({amount: 20})
  })
})

describe('status and the dates it allows', () => {
  it('a cancel date written before a change to active does not come back when the subscription is canceled again', async () => {
    await fresh(async (store) => {
      await createSubscription(store, {...subscription, cancel_at: T + 30 * DAY, canceled_at: T, status: 'canceled'}, at(100))
      await updateSubscription(store, key, {cancel_at: T + 60 * DAY}, at(150))
      await updateSubscription(store, key, {status: 'active'}, at(200))
      const r = await updateSubscription(store, key, {canceled_at: T + 400, status: 'canceled'}, at(300))
      expect(r.record).toMatchObject({cancel_at: null, canceled_at: T + 400, status: 'canceled'})
    })
  })

  it('a trial end written before a change to active does not come back with a new trial', async () => {
    await fresh(async (store) => {
      await createSubscription(store, {...subscription, status: 'trialing', trial_end: T + 14 * DAY, trial_start: T - DAY}, at(100))
      await updateSubscription(store, key, {trial_end: T + 20 * DAY}, at(150))
      await updateSubscription(store, key, {status: 'active'}, at(200))
      const r = await updateSubscription(store, key, {status: 'trialing', trial_start: T}, at(300))
      expect(r.record).toMatchObject({status: 'trialing', trial_end: null, trial_start: T})
    })
  })

  it('a newer create whose status does not allow a date a still newer update wrote reads it null; a later status that allows it shows it again', async () => {
    await fresh(async (store) => {
      await createSubscription(store, {...subscription, cancel_at: T + 30 * DAY, canceled_at: T, status: 'canceled'}, at(100))
      await updateSubscription(store, key, {cancel_at: T + 60 * DAY}, at(300))
      expect((await createSubscription(store, subscription, at(200, 'c'))).record).toMatchObject({cancel_at: null, canceled_at: null, latest_event_id: 'e300', status: 'active'})
      const again = await updateSubscription(store, key, {canceled_at: T + 400, status: 'canceled'}, at(400))
      expect(again.record).toMatchObject({cancel_at: T + 60 * DAY, canceled_at: T + 400, status: 'canceled'})
    })
  })

  it('the same for trial dates; a trialing subscription keeps its trial dates through other updates', async () => {
    await fresh(async (store) => {
      await createSubscription(store, {...subscription, status: 'trialing', trial_end: T + 14 * DAY, trial_start: T - DAY}, at(100))
      expect((await updateSubscription(store, key, {amount: 12}, at(110))).record).toMatchObject({amount: 12, status: 'trialing', trial_end: T + 14 * DAY, trial_start: T - DAY})
      await updateSubscription(store, key, {trial_end: T + 20 * DAY}, at(300))
      expect((await createSubscription(store, subscription, at(200, 'c'))).record).toMatchObject({status: 'active', trial_end: null, trial_start: null})
      expect((await updateSubscription(store, key, {status: 'trialing'}, at(400))).record).toMatchObject({status: 'trialing', trial_end: T + 20 * DAY, trial_start: null})
    })
  })
})

describe('tax and currency', () => {
  it('a subscription\'s currency changed alone keeps its amount and tax as decimals in the new currency, USD recomputed', async () => {
    await fresh(async (store) => {
      expect((await createSubscription(store, eurSubscription, at(100))).record).toMatchObject({amount: 12, amount_usd: 15, net: 10, tax: 2})
      // 12 JPY at 100 per USD: 0.12 USD, of which 2/12 is tax.
      const jpy = await updateSubscription(store, key, {currency: 'JPY'}, at(200))
      expect(jpy.record).toMatchObject({amount: 12, amount_usd: 0.12, amount_usd_monthly: 0.12, currency: 'JPY', net: 10, net_usd_monthly: 0.1, tax: 2})
      // A tax given with the currency is taken as it is.
      const eur = await updateSubscription(store, key, {currency: 'EUR', tax: 1.5}, at(300))
      expect(eur.record).toMatchObject({amount: 12, amount_usd: 15, currency: 'EUR', net: 10.5, tax: 1.5})
    })
  })

  it('a charge\'s currency changed alone re-expresses its amount, refund and tax; the USD figures and the tax\'s shares follow', async () => {
    await fresh(async (store) => {
      await createCharge(store, eurCharge, at(100, 'ch'))
      // 12 EUR: 15.00 USD, 6 refunded 7.50, the tax's shares 2/12 of each.
      expect((await store.revenue.rows('charges', [chargeKey]))[0]).toMatchObject({amount_refunded_usd_minor: 750, amount_usd_minor: 1500, tax_refunded_usd_minor: 125, tax_usd_minor: 250})
      const r = await updateCharge(store, chargeKey, {currency: 'JPY'}, at(200, 'ch'))
      expect(r.record).toMatchObject({amount: 12, amount_refunded: 6, amount_usd: 0.12, currency: 'JPY', net: 10, net_usd: 0.1, tax: 2, tax_usd: 0.02})
      expect((await store.revenue.rows('charges', [chargeKey]))[0]).toMatchObject({amount_minor: 12, amount_refunded_minor: 6, amount_refunded_usd_minor: 6, tax_minor: 2, tax_refunded_usd_minor: 1})
    })
  })

  it('a tax updated alone moves the net and the USD tax', async () => {
    await fresh(async (store) => {
      await createSubscription(store, eurSubscription, at(100))
      // 15.00 USD a month, 3/12 of it tax: 11.25 net.
      expect((await updateSubscription(store, key, {tax: 3}, at(200))).record).toMatchObject({amount: 12, amount_usd_monthly: 15, net: 9, net_usd_monthly: 11.25, tax: 3})
      await createCharge(store, eurCharge, at(100, 'ch'))
      expect((await updateCharge(store, chargeKey, {tax: 3}, at(200, 'ch'))).record).toMatchObject({amount: 12, amount_usd: 15, net: 9, net_usd: 11.25, tax: 3, tax_usd: 3.75})
      expect((await store.revenue.rows('charges', [chargeKey]))[0]).toMatchObject({tax_refunded_usd_minor: 188})
    })
  })

  it('a kept tax above the amount its create brings is bounded by it (the whole amount is tax); sent after the create, it is refused', async () => {
    await fresh(async (store) => {
      expect((await updateSubscription(store, key, {tax: 50}, at(200))).outcome).toBe('pending')
      expect((await createSubscription(store, subscription, at(100))).record).toMatchObject({amount: 10, net: 0, net_usd_monthly: 0, tax: 10})
      expect((await updateCharge(store, chargeKey, {tax: 50}, at(200, 'ch'))).outcome).toBe('pending')
      expect((await createCharge(store, charge, at(100, 'ch'))).record).toMatchObject({amount: 10, net: 0, net_usd: 0, tax: 10, tax_usd: 10})
    })
    await fresh(async (store) => {
      await createSubscription(store, subscription, at(100))
      await expect(async () => await updateSubscription(store, key, {tax: 50}, at(200))).rejects.toThrow('invalid subscription update: tax: 50 is more than the amount 10 (')
      await expect(async () => await updateSubscription(store, key, {currency: 'EUR', tax: 11}, at(200))).rejects.toThrow('invalid subscription update: tax: 11 is more than the amount 10 (')
      await createCharge(store, charge, at(100, 'ch'))
      await expect(async () => await updateCharge(store, chargeKey, {tax: 50}, at(200, 'ch'))).rejects.toThrow('invalid charge update: tax: 50 is more than the amount 10 (')
      expect((await store.revenue.rows('subscriptions', [key]))[0]).toMatchObject({latest_event_id: 'e100', tax_minor: 0})
      expect((await store.revenue.rows('charges', [chargeKey]))[0]).toMatchObject({latest_event_id: 'ch100', tax_minor: 0})
    })
  })
})

describe('USD figures', () => {
  it('are recomputed at the new date\'s rate when created moves', async () => {
    await fresh(async (store, db) => {
      setRates(db, '2026-01-01', {EUR: 0.5}, false)
      await createSubscription(store, eurSubscription, at(100))
      // 12 EUR at 0.5 per USD: 24 USD.
      expect((await updateSubscription(store, key, {created: T + DAY}, at(200))).record).toMatchObject({amount_usd: 24, amount_usd_monthly: 24, created: T + DAY})
      await createCharge(store, eurCharge, at(100, 'ch'))
      expect((await updateCharge(store, chargeKey, {created: T + DAY}, at(200, 'ch'))).record).toMatchObject({amount_usd: 24, net_usd: 20, tax_usd: 4})
      expect((await store.revenue.rows('charges', [chargeKey]))[0]).toMatchObject({amount_refunded_usd_minor: 1200, tax_refunded_usd_minor: 200})
    })
  })

  it('are kept when neither the amount, the currency nor created moved, whatever the rates are by now', async () => {
    await fresh(async (store, db) => {
      await createSubscription(store, eurSubscription, at(100))
      await createCharge(store, eurCharge, at(100, 'ch'))
      setRates(db, '2020-01-01', {EUR: 0.5, JPY: 100, USD: 1})
      expect((await updateSubscription(store, key, {canceled_at: T, status: 'canceled'}, at(200))).record).toMatchObject({amount_usd: 15, amount_usd_monthly: 15, status: 'canceled'})
      expect((await updateCharge(store, chargeKey, {metadata: {k: 'v'}, status: 'failed'}, at(200, 'ch'))).record).toMatchObject({amount_usd: 15, net_usd: 12.5, status: 'failed', tax_usd: 2.5})
      expect((await store.revenue.rows('charges', [chargeKey]))[0]).toMatchObject({amount_refunded_usd_minor: 750})
    })
  })

  it('a record without an amount (the schema allows one) keeps none, and no USD figure, when its currency changes', async () => {
    await fresh(async (store, db) => {
      await createSubscription(store, subscription, at(100))
      db.exec('UPDATE subscriptions SET amount_minor = NULL, amount_usd_minor = NULL, amount_usd_monthly_minor = NULL')
      expect((await updateSubscription(store, key, {currency: 'EUR'}, at(200))).record).toMatchObject({amount: null, amount_usd: null, currency: 'EUR', net: null})
      await createCharge(store, charge, at(100, 'ch'))
      db.exec('UPDATE charges SET amount_minor = NULL, amount_usd_minor = NULL')
      expect((await updateCharge(store, chargeKey, {currency: 'EUR'}, at(200, 'ch'))).record).toMatchObject({amount: null, amount_usd: null, currency: 'EUR', net: null, tax_usd: null})
    })
  })

  it('a record without a created date (the schema allows one) gets no USD figure when its amount changes: there is no day to take a rate on', async () => {
    await fresh(async (store, db) => {
      await createSubscription(store, eurSubscription, at(100))
      db.exec('UPDATE subscriptions SET created = NULL, amount_usd_minor = NULL, amount_usd_monthly_minor = NULL')
      expect((await updateSubscription(store, key, {amount: 20}, at(200))).record).toMatchObject({amount: 20, amount_usd: null, amount_usd_monthly: null, created: null})
      await createCharge(store, eurCharge, at(100, 'ch'))
      db.exec('UPDATE charges SET created = NULL, amount_usd_minor = NULL')
      expect((await updateCharge(store, chargeKey, {amount: 20}, at(200, 'ch'))).record).toMatchObject({amount: 20, amount_usd: null, created: null, tax_usd: null})
    })
  })
})

describe('what a late event is told', () => {
  it('a create older than the record: stale against its latest event, or against its delete', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, at(100, 'c'))
      expect(await createSubscription(store, subscription, at(50, 'old'))).toMatchObject({
        message: `stale event ignored: event old50 at ${T + 50} is older than the subscription's latest event c100 at ${T + 100}; nothing changed`,
        outcome: 'stale',
        record: {latest_event_id: 'c100'},
      })
    })
    await fresh(async (store) => {
      await deleteSubscription(store, key, at(200, 'd'))
      const late = `is older than the subscription's delete d200 at ${T + 200}; nothing changed`
      expect((await createSubscription(store, subscription, at(100, 'c'))).message).toBe(`stale event ignored: event c100 at ${T + 100} ${late}`)
      expect((await updateSubscription(store, key, {amount: 3}, at(150, 'u'))).message).toBe(`stale event ignored: event u150 at ${T + 150} ${late}`)
      // An older delete too; a newer one is kept in its place.
      expect(await deleteSubscription(store, key, at(120, 'd'))).toEqual({message: `stale event ignored: event d120 at ${T + 120} ${late}`, outcome: 'stale', record: null})
      expect((await deleteSubscription(store, key, at(300, 'd'))).outcome).toBe('pending')
      expect((await createSubscription(store, subscription, at(250, 'c'))).message).toMatch(/older than the subscription's delete d300 at /)
    })
  })

  it('an update older than the create is stale against the create; one that loses every field, against the latest event', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, at(100, 'c'))
      await updateSubscription(store, key, {amount: 20}, at(300, 'u'))
      expect((await updateSubscription(store, key, {status: 'pending'}, at(50, 'old'))).message).toBe(
        `stale event ignored: event old50 at ${T + 50} is older than the subscription's latest event c100 at ${T + 100}; nothing changed`,
      )
      expect(await updateSubscription(store, key, {amount: 30}, at(200, 'u'))).toMatchObject({
        message: `stale event ignored: event u200 at ${T + 200} is older than the subscription's latest event u300 at ${T + 300}; nothing changed`,
        outcome: 'stale',
        record: {amount: 20},
      })
    })
  })

  it('an update that names no field still moves the latest event, and a create between the two still applies', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, at(100, 'c'))
      expect(await updateSubscription(store, key, {}, at(300, 'u'))).toMatchObject({outcome: 'updated', record: {amount: 10, latest_event_id: 'u300'}})
      expect(await createSubscription(store, {...subscription, amount: 15}, at(200, 'c'))).toMatchObject({outcome: 'updated', record: {amount: 15, latest_event_id: 'u300'}})
    })
  })

  it('a delete older than the record is stale and leaves it; the same delete twice is a duplicate', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, at(100, 'c'))
      expect(await deleteSubscription(store, key, at(50, 'd'))).toMatchObject({
        message: `stale event ignored: event d50 at ${T + 50} is older than the subscription's latest event c100 at ${T + 100}; nothing changed`,
        outcome: 'stale',
        record: {amount: 10},
      })
      expect((await deleteSubscription(store, key, at(200, 'd'))).outcome).toBe('deleted')
      expect(await deleteSubscription(store, key, at(200, 'd'))).toEqual({message: 'event d200 was already applied; nothing changed', outcome: 'duplicate', record: null})
      // Nothing waits for a create after a delete that no newer write followed.
      expect((await store.revenue.pending('subscription')).size).toBe(0)
    })
  })

  it('a create whose event the record already has (an import wrote it, nothing logged) is a duplicate', async () => {
    await fresh(async (store, db) => {
      await createSubscription(store, subscription, at(100, 'c'))
      db.exec('DELETE FROM events')
      expect(await createSubscription(store, {...subscription, amount: 99}, at(100, 'c'))).toMatchObject({message: 'event c100 was already applied; nothing changed', outcome: 'duplicate', record: {amount: 10}})
    })
  })
})

describe('a delete before its create', () => {
  it('drops the kept writes older than it and keeps the newer ones; a delete newer than all of them drops the entry', async () => {
    await fresh(async (store) => {
      await updateSubscription(store, key, {amount: 20}, at(100, 'u'))
      await updateSubscription(store, key, {tax: 1}, at(300, 'u'))
      await deleteSubscription(store, key, at(200, 'd'))
      const [entry] = [...(await store.revenue.pending('subscription')).values()]
      expect((await store.revenue.pending('subscription')).size).toBe(1)
      expect(Object.keys(entry!.fields)).toEqual(['tax'])
      expect(entry!.latest).toEqual(at(300, 'u'))
      await deleteSubscription(store, key, at(400, 'd'))
      expect((await store.revenue.pending('subscription')).size).toBe(0)
    })
  })
})

describe('the subscription history', () => {
  const ids = async (store: StorePort) =>
    (await store.revenue
      .history('product'))
      .filter((e) => e.origin_id === 'sub_1')
      .map((e) => e.event_id)
      .sort()

  it('takes every create (a stale one too) and every applied update; a delete forgets what came before it; charges never enter it', async () => {
    await fresh(async (store) => {
      await createSubscription(store, subscription, at(100, 'c'))
      await updateSubscription(store, key, {amount: 20}, at(200, 'u'))
      await createSubscription(store, subscription, at(50, 'c'))
      expect(await ids(store)).toEqual(['c100', 'c50', 'u200'])
      // A charge with the same key is another record: it neither adds to nor removes from the subscription's history.
      const sameKey = {...charge, origin_id: 'sub_1'}
      await createCharge(store, sameKey, at(250, 'ch'))
      await deleteCharge(store, key, at(260, 'chd'))
      expect(await ids(store)).toEqual(['c100', 'c50', 'u200'])
      await deleteSubscription(store, key, at(300, 'd'))
      await createSubscription(store, subscription, at(400, 'c'))
      expect(await ids(store)).toEqual(['c400'])
    })
  })
})
