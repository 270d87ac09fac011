import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {createExperiment, startExperiment} from '../../src/experiments/manage.js'
import {experimentResults} from '../../src/experiments/results.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice} from '../../src/pricing/price.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {experimentStore, insertCharge, insertSubscription} from '../helpers/experiment-fixtures.js'
import {tempStore} from '../helpers/run.js'

/** Attribution: exposures from the price engine, conversions from subscriptions and charges. */
describe('attribution of conversions to arms', () => {
  let store: Store
  let id: number
  const armOf: Record<string, string> = {}

  beforeEach(async () => {
    const path = tempStore()
    await experimentStore(path)
    store = openStore(path)
    const e = await createExperiment(store, {allocation: 'uniform', arms: [{multiplier: 0.8}], name: 'attribution', products: ['pro_monthly', 'pro_yearly'], seed: 5})
    id = e.id
    await startExperiment(store, id)
    const ctx = await PricingContext.open(store)
    for (const u of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']) {
      const q = await calculatePrice(ctx, {country: 'US', products: ['pro_monthly'], user_id: u})
      armOf[u] = String(q.variants.arm_id)
    }
  })
  afterEach(async () => await store.close())

  const total = async () => {
    let visitors = 0
    let conversions = 0
    let revenue = 0
    for (const c of (await store.experiments.armCounts(id)).values()) {
      visitors += c.visitors
      conversions += c.conversions
      revenue += c.revenue_minor
    }
    return {conversions, revenue, visitors}
  }

  it('counts every exposed visitor, and nothing else, before any sale', async () => {
    expect(await total()).toEqual({conversions: 0, revenue: 0, visitors: 6})
    const counts = await store.experiments.armCounts(id)
    for (const arm of Object.values(armOf)) {
      expect(['baseline', '1']).toContain(arm)
      expect(counts.get(arm)!.visitors).toBeGreaterThan(0)
    }
  })

  it('values subscriptions at amount_usd_monthly and charges at amount_usd less refunds', async () => {
    const db = store.db
    insertSubscription(db, {amount_usd: 96, amount_usd_monthly: 8, interval: 'year', product: 'pro_yearly', user_id: 'alice'})
    insertSubscription(db, {amount_usd: 10, product: 'pro_monthly', status: 'canceled', user_id: 'bob'})
    insertCharge(db, {amount_usd: 30, product: 'pro_monthly', refunded_usd: 5, user_id: 'carol'})
    const counts = await store.experiments.armCounts(id)
    const expected = new Map<string, {conversions: number; revenue: number}>()
    for (const [u, value] of [['alice', 800], ['bob', 1000], ['carol', 2500]] as const) {
      const e = expected.get(armOf[u]) ?? {conversions: 0, revenue: 0}
      expected.set(armOf[u], {conversions: e.conversions + 1, revenue: e.revenue + value})
    }
    for (const [arm, e] of expected) expect(counts.get(arm)).toMatchObject({conversions: e.conversions, revenue_minor: e.revenue})
    expect(await total()).toEqual({conversions: 3, revenue: 4300, visitors: 6})
  })

  it('a user who buys twice is one conversion with both amounts', async () => {
    insertSubscription(store.db, {amount_usd: 10, product: 'pro_monthly', user_id: 'dave'})
    insertCharge(store.db, {amount_usd: 50, product: 'pro_yearly', user_id: 'dave'})
    expect(await total()).toEqual({conversions: 1, revenue: 6000, visitors: 6})
  })

  it('ignores pending subscriptions, failed and pending charges, other products, other users and purchases made before exposure', async () => {
    const db = store.db
    insertSubscription(db, {amount_usd: 10, product: 'pro_monthly', status: 'pending', user_id: 'alice'})
    insertCharge(db, {amount_usd: 10, product: 'pro_monthly', status: 'failed', user_id: 'bob'})
    insertCharge(db, {amount_usd: 10, product: 'pro_monthly', status: 'pending', user_id: 'bob'})
    insertSubscription(db, {amount_usd: 30, product: 'team_monthly', user_id: 'carol'})
    insertSubscription(db, {amount_usd: 10, product: 'pro_monthly', user_id: 'never-priced'})
    insertSubscription(db, {amount_usd: 10, created: 1_000_000_000, product: 'pro_monthly', user_id: 'erin'})
    expect(await total()).toEqual({conversions: 0, revenue: 0, visitors: 6})
  })

  it('counts records whatever wrote them: a bulk insert in one transaction counts like single writes', async () => {
    const db = store.db
    db.transaction(() => {
      for (const u of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']) insertSubscription(db, {amount_usd: 10, product: 'pro_monthly', user_id: u})
    })()
    expect(await total()).toEqual({conversions: 6, revenue: 6000, visitors: 6})
    const r = await experimentResults(store, id, {draws: 1000})
    expect(r.visitors).toBe(6)
    expect(r.conversions).toBe(6)
    expect(r.revenue).toBe(60)
    for (const a of r.arms) if (a.visitors > 0) expect(a.conversion_rate).toBe(1)
  })

  it('an anonymous visitor converts once a user adopts the lock; the exposure follows the user', async () => {
    const ctx = await PricingContext.open(store)
    const anon = await calculatePrice(ctx, {country: 'US', ip: '8.8.4.4', products: ['pro_monthly']})
    expect(anon.variants.experiment_id).toBe(id)
    expect((await total()).visitors).toBe(7)
    insertSubscription(store.db, {amount_usd: 10, product: 'pro_monthly', user_id: 'grace'})
    expect((await total()).conversions).toBe(0)
    const user = await calculatePrice(ctx, {ip: '8.8.4.4', products: ['pro_monthly'], user_id: 'grace'})
    expect(user.variants.arm_id).toBe(anon.variants.arm_id)
    // Same visitor, now known: still 7 visitors, and grace's purchase counts for the arm she saw.
    expect(await total()).toEqual({conversions: 1, revenue: 1000, visitors: 7})
    const row = store.db.prepare('SELECT user_id, anonymous, arm_id FROM exposures WHERE experiment_id = ? AND user_id = ?').get(id, 'grace')
    expect(row).toEqual({anonymous: 0, arm_id: String(anon.variants.arm_id), user_id: 'grace'})
  })
})
