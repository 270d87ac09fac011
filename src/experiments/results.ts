import type {ExperimentResults} from '../schemas/experiments.js'
import type {StorePort} from '../store/port.js'
import {PricingContext} from '../pricing/context.js'
import {armLabel, armQuotes, exampleCountry} from './arm-prices.js'
import {experimentOutput, requireExperiment} from './manage.js'
import {armIdOut, outcomes} from './model.js'
import {seededRng} from './random.js'
import {conversionInterval, conversionValue, probabilityBest} from './stats.js'

export const DEFAULT_DRAWS = 20_000

/**
 * Minimum sample per arm before results are read as a verdict: below it `experiments
 * results` warns (stderr, and `sample.warning` in --json). 100 visitors and 10
 * conversions per arm: under that, one or two purchases move an arm's revenue per visitor
 * by more than the differences a price test looks for. See docs/experiments.md.
 */
export const MIN_VISITORS_PER_ARM = 100
export const MIN_CONVERSIONS_PER_ARM = 10

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
export async function experimentResults(store: StorePort, id: number, options: {draws?: number; seed?: number} = {}): Promise<ExperimentResults> {
  const e = await requireExperiment(store, id)
  const o = outcomes(e, await store.experiments.armCounts(id))
  const draws = options.draws ?? DEFAULT_DRAWS
  const seed = options.seed ?? e.seed
  const pBest = probabilityBest(o, seededRng(seed, 'results', id), draws)
  const ctx = await PricingContext.open(store)
  const country = exampleCountry(ctx, e)
  const arms = []
  for (const [i, x] of o.entries()) {
    const [lo, hi] = conversionInterval(x)
    const value = conversionValue(x) / 100
    const arm = e.arms[i]
    const quotes = e.type === 'price' && e.products.length > 0 ? await exampleQuotes(store, e, arm, country, ctx) : []
    arms.push({
      arm_id: armIdOut(x.arm_id),
      label: armLabel(e, arm, quotes),
      prices: quotes.map(({price_minor: _m, ...q}) => q),
      conversion_rate: x.visitors === 0 ? 0 : round(x.conversions / x.visitors, 6),
      conversion_rate_ci: [round(lo, 6), round(hi, 6)] as [number, number],
      conversions: x.conversions,
      probability_best: round(pBest[i], 4),
      revenue: round(x.revenue_minor / 100, 2),
      revenue_per_visitor: x.visitors === 0 ? 0 : round(x.revenue_minor / 100 / x.visitors, 4),
      revenue_per_visitor_ci: [round(lo * value, 4), round(hi * value, 4)] as [number, number],
      visitors: x.visitors,
    })
  }
  const visitors = o.reduce((s, x) => s + x.visitors, 0)
  const conversions = o.reduce((s, x) => s + x.conversions, 0)
  // Nothing is "best" before any arm has sold: the probabilities then only restate the priors.
  let best: null | number | string = null
  if (conversions > 0) {
    let top = -1
    for (const a of arms) {
      if (a.probability_best > top) {
        top = a.probability_best
        best = a.arm_id
      }
    }
  }
  const short = o.filter((x) => x.visitors < MIN_VISITORS_PER_ARM || x.conversions < MIN_CONVERSIONS_PER_ARM)
  const warning =
    short.length === 0
      ? null
      : `below the minimum sample of ${MIN_VISITORS_PER_ARM} visitors and ${MIN_CONVERSIONS_PER_ARM} conversions per arm (${short
          .map((x) => `arm ${x.arm_id}: ${x.visitors} visitor${x.visitors === 1 ? '' : 's'}, ${x.conversions} conversion${x.conversions === 1 ? '' : 's'}`)
          .join('; ')}): read the figures as provisional, not as a winner`
  return {
    arms,
    best_arm: best,
    conversions,
    draws,
    experiment: experimentOutput(e),
    message: `experiment ${id}: ${visitors} visitor${visitors === 1 ? '' : 's'}, ${conversions} conversion${conversions === 1 ? '' : 's'}`,
    revenue: round(o.reduce((s, x) => s + x.revenue_minor, 0) / 100, 2),
    sample: {enough: short.length === 0, min_conversions: MIN_CONVERSIONS_PER_ARM, min_visitors: MIN_VISITORS_PER_ARM, warning},
    seed,
    success: true,
    visitors,
  }
}

/** The example quotes of an arm; none when it cannot be priced there (e.g. no FX rate): the label then shows the arm's definition only. */
async function exampleQuotes(store: StorePort, e: Parameters<typeof armQuotes>[1], arm: Parameters<typeof armQuotes>[2], country: string, ctx: PricingContext) {
  try {
    return await armQuotes(store, e, arm, country, {ctx})
  } catch {
    return []
  }
}
