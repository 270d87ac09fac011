import type {DB} from '../store/db.js'
import {PricingContext} from './context.js'
import {calculatePriceSync} from './price.js'

export type PreviewRow = {country: string; currency: string; prices: Record<string, string>}

/**
 * What a fresh user in each country would be quoted for each product (control prices, no
 * experiment arm), computed as `price` would but without writing a lock.
 */
export function pricePreview(db: DB, products: string[], countries: string[]): PreviewRow[] {
  const ctx = new PricingContext(db)
  return countries.map((country) => {
    const r = calculatePriceSync(ctx, {country, products, run_experiment: false, user_id: `preview-${country}`}, {dryRun: true})
    const prices: Record<string, string> = {}
    for (const [id, p] of Object.entries(r.products)) prices[id] = p.display.price_with_baseline_strike
    return {country, currency: r.currency, prices}
  })
}
