import {fromMinor, scaleMinor} from '../currency.js'
import {referenceIntervalMinor} from '../pricing/display.js'
import {BASELINE} from '../schemas/no-zod.js'
import type {ArmOutcome} from './stats.js'
import type {Arm, ArmCounts, Experiment, ExperimentProduct} from './store.js'

/** Arm ids as the price result and --json print them: 'baseline', a number, or a name. */
export function armIdOut(id: string): number | string {
  return /^\d+$/.test(id) ? Number(id) : id
}

/** The USD price (cents) an arm puts on a product before localization, or undefined for the control price. */
export function armUsdMinor(arm: Arm, product: ExperimentProduct): number | undefined {
  if (arm.multiplier !== null) return scaleMinor(product.base_px_minor, arm.multiplier)
  if (arm.usd_price_minor !== null) return arm.usd_price_minor
  return undefined
}

/** The products an arm shows: a packaging arm's set, else every product of the experiment. */
export function armProducts(e: Experiment, arm: Arm): ExperimentProduct[] {
  if (e.type !== 'packaging' || !arm.products) return e.products
  const set = new Set(arm.products)
  return e.products.filter((p) => set.has(p.api_id))
}

/**
 * Nominal value of a conversion on an arm: the mean USD price per month (one-time: the
 * whole price) of the products it prices, in cents. It is the bandit's prior on what a
 * sale is worth before the store has recorded any.
 */
export function nominalMinor(e: Experiment, arm: Arm): number {
  const products = armProducts(e, arm)
  if (products.length === 0) return 0
  let sum = 0
  for (const p of products) {
    const usd = e.type === 'price' ? (armUsdMinor(arm, p) ?? p.base_px_minor) : p.base_px_minor
    sum += referenceIntervalMinor(usd, p.interval, p.interval_count)
  }
  return sum / products.length
}

/** Outcomes per arm (in arm order) from the counts read from the store. */
export function outcomes(e: Experiment, counts: Map<string, ArmCounts>): ArmOutcome[] {
  return e.arms.map((arm) => {
    const c = counts.get(arm.id) ?? {conversions: 0, revenue_minor: 0, visitors: 0}
    return {arm_id: arm.id, conversions: c.conversions, nominal_minor: nominalMinor(e, arm), revenue_minor: c.revenue_minor, visitors: c.visitors}
  })
}

/** "x0.8", "12.99 USD", "a+b", "control": an arm in a few characters, for tables. */
export function describeArm(e: Pick<Experiment, 'type'>, arm: Arm): string {
  if (arm.multiplier !== null) return `x${arm.multiplier}`
  if (arm.usd_price_minor !== null) return `${fromMinor(arm.usd_price_minor, 'USD')} USD`
  if (arm.products) return arm.products.join(' + ')
  return e.type === 'packaging' ? 'all products' : 'control price'
}

export function isBaseline(arm: Arm): boolean {
  return arm.id === BASELINE
}
