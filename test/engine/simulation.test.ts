import {copyFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {beforeAll, describe, expect, it, vi} from 'vitest'

import {experimentResults} from '../../src/experiments/results.js'
import {conversionProbability, parseDemand, readDemandFile, simulate, simulationArms} from '../../src/experiments/simulate.js'
import {openStore} from '../../src/store/db.js'
import {tempStore} from '../helpers/run.js'

/**
 * Three price arms on a 10 USD monthly product: 7.99 (x0.8), 10 (baseline), 12.99
 * (x1.3 after the USD rounding rule). True revenue per visitor 1.60, 2.00, 1.49: the best
 * arm is 20% above the next.
 */
const DEMAND = '7.99=0.20,10=0.20,12.99=0.115'
const ARMS = [{multiplier: 0.8}, {multiplier: 1.3}]

/** The store simulationArms set up (its synthetic product), made once: each run takes a copy. */
let template: string
let setup: Awaited<ReturnType<typeof simulationArms>>
beforeAll(async () => {
  template = tempStore()
  const store = openStore(template)
  try {
    setup = await simulationArms(store, {arms: ARMS, basePx: '10'})
  } finally {
    await store.close()
  }
})

function freshStore() {
  const path = tempStore()
  copyFileSync(template, path)
  return {setup, store: openStore(path)}
}

describe('simulation acceptance: Thompson against uniform and the oracle', () => {
  // The many-seed runs (20 x 5,000 and 100 x 300 visitors) are left out of mutation runs (vitest.mutate.config.ts).
  const slow = it.skipIf(process.env.PRICECTL_MUTATE === '1')

  slow('after 5,000 visitors Thompson gives >= 60% of the last 1,000 to the best arm and earns >= uniform, in >= 18 of 20 seeds', async () => {
    const demand = parseDemand(DEMAND)
    const outcomes: {seed: number; share: number; thompson: number; uniform: number}[] = []
    for (let seed = 1; seed <= 20; seed++) {
      const {setup, store} = freshStore()
      try {
        const r = await simulate(store, {...setup, demand, seed, visitors: 5000})
        if (seed === 1) {
          // The arms differ by at least 20% in true revenue per visitor.
          const rpv = r.arms.map((a) => a.true_revenue_per_visitor).sort((a, b) => b - a)
          expect(r.best_arm).toBe('baseline')
          expect(r.arms.map((a) => a.price_usd)).toEqual([10, 7.99, 12.99])
          expect(rpv[1]).toBeLessThanOrEqual(rpv[0] * 0.8)
        }
        outcomes.push({seed, share: r.policies.thompson!.best_arm_share_last, thompson: r.policies.thompson!.revenue, uniform: r.policies.uniform!.revenue})
        expect(r.policies.oracle.revenue_per_visitor).toBeGreaterThan(r.policies.uniform!.revenue_per_visitor)
      } finally {
        await store.close()
      }
    }
    const passed = outcomes.filter((o) => o.share >= 0.6 && o.thompson >= o.uniform)
    expect(passed.length, JSON.stringify(outcomes)).toBeGreaterThanOrEqual(18)
  })

  it('is reproducible: the same seed in a fresh store gives the same run', async () => {
    const demand = parseDemand(DEMAND)
    const runs = []
    for (let i = 0; i < 2; i++) {
      const {setup, store} = freshStore()
      try {
        runs.push(await simulate(store, {...setup, demand, seed: 42, visitors: 1500}))
      } finally {
        await store.close()
      }
    }
    expect(runs[1]).toEqual(runs[0])
    expect(runs[0].policies.thompson!.series.at(-1)!.visitors).toBe(1500)
  })

  it("reads the posteriors once per run: the bandit counts each batch's conversions in memory, as the store would", async () => {
    const {setup, store} = freshStore()
    try {
      const counts = vi.spyOn(store.experiments, 'armCounts')
      const r = await simulate(store, {...setup, demand: parseDemand(DEMAND), seed: 42, visitors: 1500})
      // Once for the Thompson policy (uniform reads none), not once per batch of 100.
      expect(counts).toHaveBeenCalledTimes(1)
      // The store holds the run's visitors and its own tally of purchases, which the bandit counted as they were made.
      for (const policy of ['thompson', 'uniform'] as const) {
        const stored = [...(await store.experiments.armCounts(r.experiments[policy]!)).values()]
        expect(stored.reduce((n, c) => n + c.visitors, 0)).toBe(1500)
        expect(stored.reduce((n, c) => n + c.conversions, 0)).toBe(r.policies[policy]!.conversions)
        expect(stored.reduce((n, c) => n + c.revenue_minor, 0) / 100).toBeCloseTo(r.policies[policy]!.revenue, 2)
      }
    } finally {
      await store.close()
    }
  })

  slow('on simulated data the 95% interval holds the true conversion rate in 90-99% of repetitions', async () => {
    const {setup, store} = freshStore()
    const demand = parseDemand(DEMAND)
    let held = 0
    let total = 0
    try {
      for (let seed = 1; seed <= 100; seed++) {
        const r = await simulate(store, {...setup, demand, policies: ['uniform'], seed, visitors: 300})
        const truth = new Map(r.arms.map((a) => [a.arm_id, a.conversion_probability]))
        const results = await experimentResults(store, r.experiments.uniform!, {draws: 500})
        for (const a of results.arms) {
          const p = truth.get(a.arm_id)!
          total++
          if (a.conversion_rate_ci[0] <= p && p <= a.conversion_rate_ci[1]) held++
        }
        expect(Math.abs(results.arms.reduce((s, a) => s + a.probability_best, 0) - 1)).toBeLessThan(0.01)
      }
    } finally {
      await store.close()
    }
    expect(total).toBe(300)
    expect(held / total).toBeGreaterThanOrEqual(0.9)
    expect(held / total).toBeLessThanOrEqual(0.99)
  })
})

describe('a non-baseline arm wins', () => {
  /**
   * The same three arms (baseline 10, arm 1 at 7.99, arm 2 at 12.99) under demand where the
   * cheaper arm or the pricier arm earns the most per visitor, by at least 20%. Fixed seeds:
   * each run is the same every time; one test per case and seed (2,000 visitors and both
   * policies, about 0.35 s) keeps each well under a second.
   */
  const cases = [
    {
      demand: '7.99=0.30,10=0.15,12.99=0.08',
      truth: [
        {arm_id: 'baseline', conversion_probability: 0.15, price_usd: 10, true_revenue_per_visitor: 1.5},
        {arm_id: 1, conversion_probability: 0.3, price_usd: 7.99, true_revenue_per_visitor: 2.397},
        {arm_id: 2, conversion_probability: 0.08, price_usd: 12.99, true_revenue_per_visitor: 1.0392},
      ],
      what: 'the cheaper arm',
      winner: 1,
    },
    {
      demand: '7.99=0.20,10=0.18,12.99=0.17',
      truth: [
        {arm_id: 'baseline', conversion_probability: 0.18, price_usd: 10, true_revenue_per_visitor: 1.8},
        {arm_id: 1, conversion_probability: 0.2, price_usd: 7.99, true_revenue_per_visitor: 1.598},
        {arm_id: 2, conversion_probability: 0.17, price_usd: 12.99, true_revenue_per_visitor: 2.2083},
      ],
      what: 'the pricier arm',
      winner: 2,
    },
  ]
  it.each(cases.flatMap((c) => [1, 2].map((seed) => ({...c, seed}))))('$what, seed $seed: named the best arm, given most of the traffic by Thompson, and the winner of the results', async ({demand, seed, truth, winner}) => {
    const {setup, store} = freshStore()
    try {
      const visitors = 2000
      const r = await simulate(store, {...setup, demand: parseDemand(demand), seed, visitors})
      expect(r.arms).toEqual(truth)
      expect(r.best_arm).toBe(winner)
      // The oracle shows the winner to everyone; the policies' shares of the last 1,000 count the winner's visitors.
      expect(r.policies.oracle.allocation).toEqual({1: 0, 2: 0, baseline: 0, [winner]: visitors})
      expect(r.policies.oracle.best_arm_share_last).toBe(1)
      const thompson = r.policies.thompson!
      const uniform = r.policies.uniform!
      const most = Object.entries(thompson.allocation).sort((a, b) => b[1] - a[1])[0][0]
      expect(most, JSON.stringify(thompson.allocation)).toBe(String(winner))
      expect(thompson.best_arm_share_last).toBeGreaterThanOrEqual(0.6)
      expect(uniform.best_arm_share_last).toBeGreaterThan(0.25)
      expect(uniform.best_arm_share_last).toBeLessThan(0.42)
      expect(thompson.revenue).toBeGreaterThan(uniform.revenue)
      expect(r.policies.oracle.revenue).toBeGreaterThan(uniform.revenue)
      // The experiments the simulation ran report the same winner from their own data.
      expect((await experimentResults(store, r.experiments.thompson!, {draws: 1000})).best_arm).toBe(winner)
      expect((await experimentResults(store, r.experiments.uniform!, {draws: 1000})).best_arm).toBe(winner)
    } finally {
      await store.close()
    }
  })
})

describe('demand curves', () => {
  it('interpolates linearly between points and is flat beyond the ends', () => {
    const curve = parseDemand('10=0.2, 5=0.4; 20=0.1')
    expect(curve.map((p) => p.price)).toEqual([5, 10, 20])
    expect(conversionProbability(curve, 1)).toBe(0.4)
    expect(conversionProbability(curve, 7.5)).toBeCloseTo(0.3, 12)
    expect(conversionProbability(curve, 15)).toBeCloseTo(0.15, 12)
    expect(conversionProbability(curve, 99)).toBe(0.1)
  })

  it('reads CSV (with or without a header) and JSON files', () => {
    const dir = dirname(tempStore())
    const write = (name: string, text: string) => {
      const f = join(dir, name)
      writeFileSync(f, text)
      return f
    }
    const expected = [
      {price: 7.99, probability: 0.12},
      {price: 9.99, probability: 0.1},
    ]
    expect(readDemandFile(write('a.csv', 'price,probability\n7.99,0.12\n9.99,0.10\n'))).toEqual(expected)
    expect(readDemandFile(write('b.csv', '9.99,0.10\r\n7.99,0.12\r\n'))).toEqual(expected)
    expect(readDemandFile(write('c.json', '{"7.99": 0.12, "9.99": 0.1}'))).toEqual(expected)
    expect(readDemandFile(write('d.json', '[{"price": 9.99, "probability": 0.1}, {"price": 7.99, "probability": 0.12}]'))).toEqual(expected)
  })

  it.each([
    ['', /no price points/],
    ['9.99', /expected PRICE=PROBABILITY, got "9.99"/],
    ['9.99=1.5', /probability 1.5 at price 9.99 must be between 0 and 1/],
    ['9.99=0.1,9.99=0.2', /price 9.99 is given twice/],
  ])('refuses %j with a message naming the value', (text, message) => {
    expect(() => parseDemand(text)).toThrow(message)
  })
})
