import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {createExperiment, startExperiment, updateExperiment} from '../../src/experiments/manage.js'
import {PricingContext} from '../../src/pricing/context.js'
import type {SqliteStore as Store} from '../../src/store/db.js'
import {insertSubscription, openExperimentStore} from '../helpers/experiment-fixtures.js'

const input = (lockKey: string, extra: Partial<Parameters<PricingContext['experiments']['assign']>[0]> = {}) => ({
  audienceId: 'default',
  country: 'US',
  lockKey,
  products: ['pro_monthly'],
  runExperiment: true,
  userId: lockKey,
  ...extra,
})

/** Assignment inside a chunk of price requests for these lock keys, as the calculation assigns: the chunk reads the posteriors when it begins. */
async function inChunk<T>(ctx: PricingContext, keys: string[], fn: () => T): Promise<T> {
  await ctx.chunk.begin(keys.map((user_id) => ({user_id})))
  try {
    return await fn()
  } finally {
    ctx.chunk.close()
  }
}

/** The experiment layer on its own: targeting, allocation, posteriors. */
describe('Experiments.assign', () => {
  let store: Store
  beforeEach(async () => {
    store = await openExperimentStore()
  })
  afterEach(async () => await store.close())

  it('targets an audience by api_id: other audiences get no arm', async () => {
    const db = store.db
    db.prepare("INSERT INTO audiences (api_id, name, priority, rules_json, created_at, updated_at) VALUES ('students', 'Students', 1, '[]', 'now', 'now')").run()
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], audience: 'students', name: 'students', products: ['pro_monthly'], seed: 1})
    expect(e.audience).toBe('students')
    await startExperiment(store, e.id)
    const ctx = await PricingContext.open(store)
    const trace: {detail: string}[] = []
    await inChunk(ctx, ['a', 'b', 'c'], () => {
      expect(ctx.experiments.assign(input('a'), trace as never)).toBeUndefined()
      expect(trace.map((t) => t.detail)).toContain('experiment 1: targets audience students, not default')
      expect(ctx.experiments.assign(input('b', {audienceId: 'students'}), undefined)).toMatchObject({experiment_id: 1, experiment_type: 'price'})
      expect(ctx.experiments.assign(input('c', {audienceId: 'students', runExperiment: false}), undefined)).toBeUndefined()
    })
    // The audience cannot be deleted from under the experiment (no ON DELETE action).
    expect(() => db.prepare("DELETE FROM audiences WHERE api_id = 'students'").run()).toThrow(/FOREIGN KEY/)
  })

  it('uniform allocation splits visitors about evenly and is the same for the same visitor', async () => {
    const db = store.db
    const e = await createExperiment(store, {allocation: 'uniform', arms: [{multiplier: 0.8}, {multiplier: 1.2}], name: 'ab', products: ['pro_monthly'], seed: 4})
    await startExperiment(store, e.id)
    const ctx = await PricingContext.open(store)
    const counts: Record<string, number> = {}
    for (let i = 0; i < 3000; i++) {
      const a = ctx.experiments.assign(input(`v${i}`), undefined)!
      counts[a.arm_id] = (counts[a.arm_id] ?? 0) + 1
    }
    for (const n of Object.values(counts)) expect(Math.abs(n - 1000)).toBeLessThan(120)
    const again = await PricingContext.open(store)
    for (let i = 0; i < 50; i++) expect(again.experiments.assign(input(`v${i}`), undefined)).toEqual(ctx.experiments.assign(input(`v${i}`), undefined))
  })

  it('Thompson sends new visitors to the arm whose recorded revenue per visitor is best, once it reads the conversions', async () => {
    const db = store.db
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], name: 'learn', products: ['pro_monthly'], seed: 9})
    await startExperiment(store, e.id)
    const insert = db.prepare("INSERT INTO exposures (experiment_id, user_id, anonymous, arm_id, exposed_at) VALUES (?, ?, 0, ?, 0)")
    db.transaction(() => {
      for (let i = 0; i < 400; i++) {
        insert.run(e.id, `base-${i}`, 'baseline')
        insert.run(e.id, `cheap-${i}`, '1')
      }
    })()
    const ctx = await PricingContext.open(store)
    const share = async (prefix: string) => {
      const keys = Array.from({length: 1000}, (_, i) => `${prefix}${i}`)
      return await inChunk(ctx, keys, () => keys.filter((k) => ctx.experiments.assign(input(k), undefined)!.arm_id === 1).length / 1000)
    }
    // No sale yet: both arms look alike apart from the price a sale would bring.
    const before = await share('x')
    expect(before).toBeGreaterThan(0.1)
    expect(before).toBeLessThan(0.6)
    // 30% of the cheap arm buys at 8, 10% of the baseline at 10: 2.4 vs 1.0 per visitor.
    db.transaction(() => {
      for (let i = 0; i < 120; i++) insertSubscription(db, {amount_usd: 8, created: 1, product: 'pro_monthly', user_id: `cheap-${i}`})
      for (let i = 0; i < 40; i++) insertSubscription(db, {amount_usd: 10, created: 1, product: 'pro_monthly', user_id: `base-${i}`})
    })()
    // Cached posteriors are kept until refresh() (or their TTL), read again when a chunk begins.
    expect(await share('y')).toBeCloseTo(before, 1)
    ctx.experiments.refresh()
    expect(await share('z')).toBeGreaterThan(0.99)
  })

  it('update: a draft may change type only with arms that fit it', async () => {
    const db = store.db
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}], name: 'change', products: ['pro_monthly'], seed: 1})
    await expect(async () => await updateExperiment(store, e.id, {type: 'packaging'})).rejects.toThrow(/a packaging arm is a product set/)
    const r = await updateExperiment(store, e.id, {arms: [{products: ['pro_monthly']}, {products: ['pro_monthly', 'team_monthly']}], type: 'packaging'})
    expect(r.experiment.type).toBe('packaging')
    expect(r.experiment.products.map((p) => p.api_id)).toEqual(['pro_monthly', 'team_monthly'])
  })
})
