import type {ProductRow} from '../catalog/lookup.js'
import type {FxRate} from '../fx/rates.js'
import type {Move} from '../money/representable.js'

/**
 * The types the pricing layers share. The context (context.ts) builds the coupon, segment
 * and experiment layers and the price calculation (price.ts) drives them; the layers see the
 * context only through these types, so no module of src/pricing imports one that imports it.
 */

/** One line of `price explain`: a layer, what it decided, and why. */
export type ExplainStep = {detail: string; outcome: 'applied' | 'chose' | 'info' | 'skipped'; step: string}
export type Trace = ExplainStep[] | undefined

/** A product with its country prices, as the price calculation reads it. */
export type PricedProduct = ProductRow & {
  countryPrices: Map<string, {amountMinor: number; currency: string}>
  /** Gateways the product's integrations charge through (their tables constrain its price points). */
  gateways: string[]
  /** Currencies of its gateway_d plans, in integration order (a gateway_d price is in one of them). */
  planCurrencies: string[]
}

/** What the coupon and segment layers read from the pricing context (PricingContext implements it). */
export interface PricingServices {
  /** For `price explain`: a currency's rate today with its date and source. */
  describeRate(currency: string): string
  readonly display: {
    discount(priceMinor: number, baselineMinor: number): number
    format(minor: number, currency: string, country: string): string
    referenceInterval(minor: number, interval: string, count: number): number
    strike(baselineText: string, priceText: string): string
    symbol(currency: string, country: string): string
  }
  /** For `price explain`: an "fx" step naming the rate a conversion used. */
  noteRate(trace: Trace, currency: string): void
  product(apiId: string): PricedProduct | undefined
  rate(currency: string): FxRate | undefined
  /** The nearest point a product linked to `linked` gateways can show and charge (PricingContext.chargeConstraints). */
  representable(minor: number, currency: string, linked: readonly string[], direction?: 'down' | 'nearest' | 'up', exact?: boolean): {minor: number; moves: Move[]}
  round(amountMinor: number, currency: string): {minor: number; rule: string; source: string}
  toUsdMinor(minor: number, currency: string): number
}
