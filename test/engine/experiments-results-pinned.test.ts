import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {createExperiment, startExperiment} from '../../src/experiments/manage.js'
import {experimentResults} from '../../src/experiments/results.js'
import {conversionInterval} from '../../src/experiments/stats.js'
import type {SqliteStore as Store} from '../../src/store/db.js'
import {insertSubscription, openExperimentStore} from '../helpers/experiment-fixtures.js'

/**
 * `experiments results` (src/experiments/results.ts) to the word and the number: the message,
 * the minimum-sample warning, arms without visitors, ties, the seeded probabilities, and arms
 * that cannot be priced. Fixed examples where mutation testing (docs/hardening.md) showed no
 * other test pinned them.
 */

let store: Store
beforeEach(async () => {
  store = await openExperimentStore()
})
afterEach(async () => await store.close())

/** A started, uniform experiment on pro_monthly with one x0.8 arm. */
async function started(name: string, arms: Record<string, unknown>[] = [{multiplier: 0.8}], products = ['pro_monthly']) {
  const e = await createExperiment(store, {allocation: 'uniform', arms, name, products, seed: 3})
  await startExperiment(store, e.id)
  return e
}

/** `visitors` visitors exposed to `arm`, the first `buyers` of them subscribed at `usd`. */
async function exposed(experimentId: number, arm: string, visitors: number, buyers = 0, usd = 10, product = 'pro_monthly') {
  for (let i = 0; i < visitors; i++) {
    const visitor = `e${experimentId}-${arm}-${i}`
    await store.experiments.recordExposure({anonymous: false, armId: arm, at: 1000, experimentId, visitor})
    if (i < buyers) insertSubscription(store.db, {amount_usd: usd, product, user_id: visitor})
  }
}

describe('the message and the minimum-sample warning, singular and plural', () => {
  it('one visitor who converted: "1 visitor, 1 conversion"; an arm nobody saw: "0 visitors, 0 conversions"', async () => {
    const e = await started('one')
    await exposed(e.id, 'baseline', 1, 1)
    const r = await experimentResults(store, e.id, {draws: 1000})
    expect(r.message).toBe(`experiment ${e.id}: 1 visitor, 1 conversion`)
    expect(r.sample.warning).toBe(
      'below the minimum sample of 100 visitors and 10 conversions per arm (arm baseline: 1 visitor, 1 conversion; arm 1: 0 visitors, 0 conversions): read the figures as provisional, not as a winner',
    )
  })

  it('several visitors and conversions: plurals everywhere', async () => {
    const e = await started('many')
    await exposed(e.id, 'baseline', 3, 2)
    await exposed(e.id, '1', 2)
    const r = await experimentResults(store, e.id, {draws: 1000})
    expect(r.message).toBe(`experiment ${e.id}: 5 visitors, 2 conversions`)
    expect(r.sample.warning).toContain('(arm baseline: 3 visitors, 2 conversions; arm 1: 2 visitors, 0 conversions)')
  })

  it('visitors but no conversion: "0 conversions"', async () => {
    const e = await started('none')
    await exposed(e.id, '1', 1)
    expect((await experimentResults(store, e.id, {draws: 1000})).message).toBe(`experiment ${e.id}: 1 visitor, 0 conversions`)
  })

  it('an arm is short of the minimum with enough visitors but too few conversions, or enough conversions but too few visitors', async () => {
    const e = await started('short')
    await exposed(e.id, 'baseline', 100, 5)
    await exposed(e.id, '1', 50, 10, 7.99)
    const r = await experimentResults(store, e.id, {draws: 1000})
    expect(r.sample.enough).toBe(false)
    expect(r.sample.warning).toBe(
      'below the minimum sample of 100 visitors and 10 conversions per arm (arm baseline: 100 visitors, 5 conversions; arm 1: 50 visitors, 10 conversions): read the figures as provisional, not as a winner',
    )
  })
})

describe('the figures of an arm', () => {
  it('an arm nobody saw has a rate and revenue per visitor of 0 (not NaN), and the intervals of its priors', async () => {
    const e = await started('empty arm')
    await exposed(e.id, 'baseline', 1, 1)
    const [, empty] = (await experimentResults(store, e.id, {draws: 1000})).arms
    expect(empty.visitors).toBe(0)
    expect(empty.conversion_rate).toBe(0)
    expect(empty.revenue_per_visitor).toBe(0)
    // Beta(1, 1): the uniform prior. A conversion is worth the arm's nominal price, 10 USD x 0.8.
    expect(empty.conversion_rate_ci).toEqual([0.025, 0.975])
    expect(empty.revenue_per_visitor_ci).toEqual([0.2, 7.8])
  })

  it('revenue per visitor interval: the conversion interval times the value of a conversion in USD', async () => {
    const e = await started('value')
    await exposed(e.id, 'baseline', 10, 2)
    const [baseline] = (await experimentResults(store, e.id, {draws: 1000})).arms
    // Two sales of 10 USD and the nominal 10 USD as one more: a conversion is worth 10 USD.
    const [lo, hi] = conversionInterval({arm_id: 'baseline', conversions: 2, nominal_minor: 1000, revenue_minor: 2000, visitors: 10})
    expect(baseline.conversion_rate).toBe(0.2)
    expect(baseline.revenue_per_visitor).toBe(2)
    expect(baseline.revenue_per_visitor_ci).toEqual([Math.round(lo * 10 * 10_000) / 10_000, Math.round(hi * 10 * 10_000) / 10_000])
    expect(baseline.revenue_per_visitor_ci[0]).toBeGreaterThan(0.2)
    expect(baseline.revenue_per_visitor_ci[1]).toBeLessThan(6)
  })

  it('the probabilities of being best are the same for a seed in every version (drawn from the seed, "results" and the experiment)', async () => {
    const e = await started('seeded')
    await exposed(e.id, 'baseline', 20, 4)
    await exposed(e.id, '1', 20, 5, 7.99)
    const r = await experimentResults(store, e.id, {draws: 2000})
    expect(r.seed).toBe(3)
    expect(r.arms.map((a) => a.probability_best)).toEqual([0.5445, 0.4555])
    const other = await experimentResults(store, e.id, {draws: 2000, seed: 4})
    expect(other.seed).toBe(4)
    expect(other.arms.map((a) => a.probability_best)).toEqual([0.5195, 0.4805])
  })

  it('on a tie of the probabilities the first arm in order is named best', async () => {
    // Two arms at the same price (the control's 30 USD, and usd:30) with the same sales.
    const e = await started('tie', [{usd_price: 30}], ['team_monthly'])
    await exposed(e.id, 'baseline', 4, 2, 30, 'team_monthly')
    await exposed(e.id, '1', 4, 2, 30, 'team_monthly')
    // Two draws, one won by each arm (seed 4).
    const r = await experimentResults(store, e.id, {draws: 2, seed: 4})
    expect(r.arms.map((a) => a.probability_best)).toEqual([0.5, 0.5])
    expect(r.best_arm).toBe('baseline')
  })
})

describe('labels and example prices', () => {
  it('a packaging experiment: each arm labelled by the products it shows, no example prices', async () => {
    const e = await createExperiment(store, {arms: [{products: ['pro_monthly']}, {products: ['pro_monthly', 'team_monthly']}], name: 'pack', seed: 1, type: 'packaging'})
    const r = await experimentResults(store, e.id, {draws: 1000})
    expect(r.arms.map((a) => a.label)).toEqual(['shows every product', 'shows pro_monthly', 'shows pro_monthly + team_monthly'])
    expect(r.arms.map((a) => a.prices)).toEqual([[], [], []])
  })

  it('arms that cannot be priced in the example country (no FX rate) are labelled by their definition alone', async () => {
    const e = await createExperiment(store, {arms: [{multiplier: 0.8}, {usd_price: 12.99}], countries: ['TH'], name: 'th', products: ['pro_monthly'], seed: 1})
    store.db.prepare("DELETE FROM fx_rates WHERE currency = 'THB'").run()
    const r = await experimentResults(store, e.id, {draws: 1000})
    expect(r.arms.map((a) => a.label)).toEqual(['control price', 'x0.8 (-20%)', '12.99 USD (+29.9%)'])
    expect(r.arms.map((a) => a.prices)).toEqual([[], [], []])
  })
})
