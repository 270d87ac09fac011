import type {ExperimentResults} from '../schemas/experiments.js'
import type {StorePort} from '../store/port.js'
import {experimentOutput, requireExperiment} from './manage.js'
import {armIdOut, outcomes} from './model.js'
import {seededRng} from './random.js'
import {conversionInterval, conversionValue, probabilityBest} from './stats.js'

export const DEFAULT_DRAWS = 20_000

const round = (x: number, digits: number) => {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/**
 * `experiments results ID`: per arm, visitors, conversions, conversion rate with its 95%
 * credible interval (Beta posterior, equal tails), revenue, revenue per visitor with
 * its interval (the conversion interval times the value of a conversion), and the
 * probability of being best (Monte Carlo over the posteriors, seeded: the experiment's
 * seed unless `seed` is given).
 */
export function experimentResults(store: StorePort, id: number, options: {draws?: number; seed?: number} = {}): ExperimentResults {
  const e = requireExperiment(store, id)
  const o = outcomes(e, store.experiments.armCounts(id))
  const draws = options.draws ?? DEFAULT_DRAWS
  const seed = options.seed ?? e.seed
  const pBest = probabilityBest(o, seededRng(seed, 'results', id), draws)
  const arms = o.map((x, i) => {
    const [lo, hi] = conversionInterval(x)
    const value = conversionValue(x) / 100
    return {
      arm_id: armIdOut(x.arm_id),
      conversion_rate: x.visitors === 0 ? 0 : round(x.conversions / x.visitors, 6),
      conversion_rate_ci: [round(lo, 6), round(hi, 6)] as [number, number],
      conversions: x.conversions,
      probability_best: round(pBest[i], 4),
      revenue: round(x.revenue_minor / 100, 2),
      revenue_per_visitor: x.visitors === 0 ? 0 : round(x.revenue_minor / 100 / x.visitors, 4),
      revenue_per_visitor_ci: [round(lo * value, 4), round(hi * value, 4)] as [number, number],
      visitors: x.visitors,
    }
  })
  const visitors = o.reduce((s, x) => s + x.visitors, 0)
  let best: null | number | string = null
  if (visitors > 0) {
    let top = -1
    for (const a of arms) {
      if (a.probability_best > top) {
        top = a.probability_best
        best = a.arm_id
      }
    }
  }
  const conversions = o.reduce((s, x) => s + x.conversions, 0)
  return {
    arms,
    best_arm: best,
    conversions,
    draws,
    experiment: experimentOutput(e),
    message: `experiment ${id}: ${visitors} visitor${visitors === 1 ? '' : 's'}, ${conversions} conversion${conversions === 1 ? '' : 's'}`,
    revenue: round(o.reduce((s, x) => s + x.revenue_minor, 0) / 100, 2),
    seed,
    success: true,
    visitors,
  }
}
