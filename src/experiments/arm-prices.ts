import {fromMinor, minorDigits} from '../currency.js'
import {PricingContext} from '../pricing/context.js'
import {priceRequest} from '../pricing/price.js'
import type {StorePort} from '../store/port.js'
import {isBaseline} from './model.js'
import type {Arm, Experiment} from './store.js'

/** The synthetic user of an arm preview: `override` and `dryRun`, so nothing is read from or written to a lock. */
const ARM_PREVIEW_USER = 'pricectl-arm-preview'

/** What one arm quotes for one product in one country, next to the control price. */
export type ArmQuote = {
  control: number
  country: string
  currency: string
  display: string
  /** (arm / control - 1) x 100, two decimals; null when the control is 0. */
  pct_change: null | number
  price: number
  price_minor: number
  product: string
}

export function pctChange(beforeMinor: number, afterMinor: number): null | number {
  if (beforeMinor === 0) return null
  return Math.round(((afterMinor - beforeMinor) / beforeMinor) * 10_000) / 100
}

/**
 * Lock-free quotes of one arm of a price experiment for products in a country, as a new
 * visitor of the arm would get them (whatever the experiment's status and target),
 * with the control price beside each. Writes nothing.
 */
export async function armQuotes(store: StorePort, e: Experiment, arm: Arm, country: string, options: {currency?: string; ctx?: PricingContext; products?: string[]} = {}): Promise<ArmQuote[]> {
  const products = options.products ?? e.products.map((p) => p.api_id)
  const quote = async (force: boolean) => {
    const ctx = options.ctx ?? await PricingContext.open(store)
    ctx.experiments.force = force ? {armId: arm.id, experimentId: e.id} : undefined
    try {
      return await priceRequest(ctx, {country, currency: options.currency, override: true, products, run_experiment: force, user_id: ARM_PREVIEW_USER}, {dryRun: true})
    } finally {
      ctx.experiments.force = undefined
    }
  }
  const withArm = await quote(!isBaseline(arm))
  const control = isBaseline(arm) ? withArm : await quote(false)
  return products.map((product) => {
    const a = withArm.products[product]
    const c = control.products[product]
    const digits = 10 ** minorDigits(withArm.currency)
    const priceMinor = Math.round(a.price * digits)
    const controlMinor = Math.round(c.price * digits)
    return {
      control: c.price,
      country,
      currency: withArm.currency,
      display: a.display.price,
      pct_change: pctChange(controlMinor, priceMinor),
      price: a.price,
      price_minor: priceMinor,
      product,
    }
  })
}

/** The country an arm's example price is shown for: the store's default country, unless the experiment targets others. */
export function exampleCountry(ctx: PricingContext, e: Experiment): string {
  if (e.countries.length === 0 || e.countries.includes(ctx.defaultCountry)) return ctx.defaultCountry
  return e.countries[0]
}

const signed = (pct: null | number) => (pct === null ? '' : ` (${pct > 0 ? '+' : ''}${pct}%)`)

/**
 * A label per arm of a price experiment: the price it sets. A USD-price arm shows its
 * USD price and its change from the product's base price; a multiplier arm its
 * multiplier and, as an example, what it quotes in `country`. Packaging arms: their products.
 */
export function armLabel(e: Experiment, arm: Arm, quotes: ArmQuote[] | undefined): string {
  if (e.type === 'packaging') return arm.products ? `shows ${arm.products.join(' + ')}` : 'shows every product'
  const example = (quotes ?? []).map((q) => `${q.product} ${q.price} ${q.currency}${isBaseline(arm) ? '' : signed(q.pct_change)}`).join(', ')
  const where = quotes?.length ? ` in ${quotes[0].country}` : ''
  if (isBaseline(arm)) return `control price${example ? `: ${example}${where}` : ''}`
  if (arm.usd_price_minor !== null) {
    const usd = e.products.map((p) => `${e.products.length > 1 ? `${p.api_id} ` : ''}${fromMinor(arm.usd_price_minor!, 'USD')} USD${signed(pctChange(p.base_px_minor, arm.usd_price_minor!))}`).join(', ')
    // The example adds something only where the arm's price was converted, localized or clamped.
    const same = (quotes ?? []).every((q) => q.currency === 'USD' && q.price_minor === arm.usd_price_minor)
    return `${usd}${example && !same ? `; e.g. ${example}${where}` : ''}`
  }
  const m = arm.multiplier!
  const pct = Math.round((m - 1) * 10_000) / 100
  return `x${m}${signed(pct)}${example ? `: e.g. ${example}${where}` : ''}`
}

/** The USD base price a product gets when an arm is concluded: its USD price as a visitor priced in USD (no localization factor) sees it. */
export function armBaseMinor(ctx: PricingContext, e: Experiment, arm: Arm, apiId: string): number | undefined {
  const product = ctx.product(apiId)
  if (!product || isBaseline(arm)) return undefined
  const lock = {arm_id: arm.id, experiment_id: e.id} as Parameters<typeof ctx.experiments.armPrice>[0]
  return ctx.experiments.armPrice(lock, product, product.base_px_minor, 'USD', undefined)
}
