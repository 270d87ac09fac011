import {requireProduct, updateProduct} from '../catalog/products.js'
import {convertMinor, countryCurrency, fromMinor, scaleMinor} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import {listFactors} from '../localization/factors.js'
import type {StorePort} from '../store/port.js'
import {PricingContext} from './context.js'
import {integrationGateways} from './gateways.js'
import {grossOfNet} from '../tax/tax.js'

export type LocalizeChange = {
  after: number
  before: null | number
  before_currency: null | string
  country: string
  currency: string
  factor: number
}

export type LocalizeResult = {
  api_id: string
  changes: LocalizeChange[]
  dry_run: boolean
  skipped: {country: string; reason: string}[]
  unchanged: number
}

/**
 * `products localize`: a country price for every country with a localization factor,
 * the CLI form of "generate parity prices": base price -> the country's currency at the
 * rate in use today -> times the factor -> (where shown tax-inclusive, its gross) -> the
 * currency's rounding rule. Country prices of countries without a factor are kept.
 */
export async function localizeProduct(store: StorePort, apiId: string, options: {countries?: string[]; dryRun?: boolean}): Promise<LocalizeResult> {
  const product = await requireProduct(store, apiId)
  if (product.interval && product.base_px_minor === 0) throw new InvalidInputError(`${apiId} has base_px 0: nothing to localize`)
  let factors = await listFactors(store)
  if (factors.length === 0) {
    throw new InvalidInputError('no localization factors on file: import them first with "pricectl localization import FILE"')
  }
  if (options.countries?.length) {
    const wanted = new Set(options.countries)
    const missing = options.countries.filter((c) => !factors.some((f) => f.country === c))
    if (missing.length) throw new InvalidInputError(`no localization factor for ${missing.join(', ')} (see "pricectl localization list")`)
    factors = factors.filter((f) => wanted.has(f.country))
  }
  const ctx = await PricingContext.open(store)
  const existing = new Map(product.country_prices.map((cp) => [cp.country, cp]))
  const changes: LocalizeChange[] = []
  const skipped: LocalizeResult['skipped'] = []
  let unchanged = 0
  const next = new Map(existing)
  for (const f of factors) {
    const currency = countryCurrency(f.country)
    const rate = currency ? ctx.rate(currency) : undefined
    if (!currency || !rate) {
      skipped.push({country: f.country, reason: currency ? `no FX rate for ${currency}` : 'no currency known for the country'})
      continue
    }
    const local = scaleMinor(convertMinor(product.base_px_minor, 'USD', 1, currency, rate.rate), f.factor)
    // A country price is the shown price: where it is shown tax-inclusive, the rule rounds the gross (docs/tax.md).
    const tax = ctx.tax(f.country, apiId)
    const shown = tax.behavior === 'inclusive' && tax.bp > 0 ? grossOfNet(local, tax.bp) : local
    // A country price must be chargeable by every gateway the product uses (every gateway's exactness when it names none).
    const amount = ctx.representable(ctx.round(shown, currency).minor, currency, integrationGateways(product.integrations)).minor
    const before = existing.get(f.country)
    if (before && before.currency === currency && before.amount_minor === amount) {
      unchanged++
      continue
    }
    changes.push({
      after: fromMinor(amount, currency),
      before: before ? fromMinor(before.amount_minor, before.currency) : null,
      before_currency: before?.currency ?? null,
      country: f.country,
      currency,
      factor: f.factor,
    })
    next.set(f.country, {amount_minor: amount, country: f.country, currency})
  }
  if (!options.dryRun && changes.length > 0) {
    const countryPrices = [...next.values()].map((cp) => ({amount: fromMinor(cp.amount_minor, cp.currency), country: cp.country, currency: cp.currency}))
    await updateProduct(store, apiId, {country_prices: countryPrices})
  }
  return {api_id: apiId, changes, dry_run: Boolean(options.dryRun), skipped, unchanged}
}
