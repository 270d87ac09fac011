import {Flags} from '@oclif/core'

import {overlay, readBody} from '../input.js'
import {InvalidInputError} from '../../errors.js'
import {upperCode} from '../../currency.js'
import {nullableNumberish, numberish, parseCountryPrice, parseExternalCoupon, parseIntegration, parseJsonObjectFlag, parseTrial} from '../../catalog/shortforms.js'
import {defOf, exportShape, type Product} from '../../catalog/products.js'
import {describeIntegration, IntegrationInput} from '../../schemas/catalog.js'

/**
 * Flags of the catalog write commands (the spec's body fields in kebab-case) and how
 * they turn into a body. Flags given beside --body override its fields.
 */

const repeatable = {multiple: true, multipleNonGreedy: true} as const

export const productFlags = {
  'api-id': Flags.string({description: 'Identifier used when requesting prices (create only; immutable)'}),
  'base-px': Flags.string({description: 'Base price in USD, e.g. 9.99'}),
  baseline: Flags.string({description: 'api_id of the product shown struck through as the baseline (none to clear)'}),
  body: Flags.string({description: "The spec's JSON body (FILE, or - for stdin); flags override its fields"}),
  'country-price': Flags.string({
    description: 'Country price COUNTRY=AMOUNT[:CURRENCY], e.g. DE=8.99:EUR (currency defaults to the country\'s); repeatable; replaces all country prices; "none" clears them',
    ...repeatable,
  }),
  feature: Flags.string({description: 'Feature as a JSON object (api_id, name, type, ...; see docs/catalog.md); repeatable; replaces all features; "none" clears them', ...repeatable}),
  integration: Flags.string({
    description: 'Integration: gateway_a:PRODUCT_ID | gateway_a_with_interval:PRODUCT_ID:INTERVAL:COUNT | gateway_c:PLAN_ID | gateway_d:PLAN_ID:CURRENCY | JSON object; repeatable; replaces all integrations; "none" clears them',
    ...repeatable,
  }),
  interval: Flags.string({description: 'Billing interval: day, week, month, year or one_time'}),
  'interval-count': Flags.string({description: 'Intervals per billing (one_time products use 1)'}),
  'max-px': Flags.string({description: 'Upper bound (USD) of experimental prices (none to clear)'}),
  'min-px': Flags.string({description: 'Lower bound (USD) of experimental prices (none to clear)'}),
  name: Flags.string({description: 'Product name (unique)'}),
  trial: Flags.string({description: 'Free trial INTERVAL:COUNT, e.g. day:14, or a JSON object; repeatable; replaces all trials; "none" clears them', ...repeatable}),
}

/**
 * `products update` only: edit the stored lists one entry at a time, as `gh` edits labels
 * (--add-label / --remove-label). --country-price and --integration replace whole lists (the
 * spec's update, which the HTTP API keeps); a replacement that drops country prices needs
 * --yes without a terminal.
 */
export const productEditFlags = {
  'add-country-price': Flags.string({
    description: 'Add a country price COUNTRY=AMOUNT[:CURRENCY] (or change that country\'s), keeping the others; repeatable',
    exclusive: ['country-price'],
    ...repeatable,
  }),
  'add-integration': Flags.string({description: 'Add an integration (the forms of --integration), keeping the others; repeatable', exclusive: ['integration'], ...repeatable}),
  'remove-country-price': Flags.string({description: 'Remove the country price of COUNTRY (e.g. DE), keeping the others; repeatable', exclusive: ['country-price'], ...repeatable}),
  'remove-integration': Flags.string({
    description: 'Remove an integration: its short form as `products get` shows it (gateway_c:PLAN_ID) or a type (gateway_c: all of that type), keeping the others; repeatable',
    exclusive: ['integration'],
    ...repeatable,
  }),
}

export type ProductEditFlagValues = {[K in keyof typeof productEditFlags]?: string[]}

/**
 * The update body with the --add-/--remove- edits applied to the stored lists of `stored`
 * (read in the write's transaction). An edit beside the same list in --body is refused: one
 * says "replace", the other "edit".
 */
export function applyListEdits(body: Record<string, unknown>, flags: ProductEditFlagValues, stored: Product): Record<string, unknown> {
  const out = {...body}
  const shape = exportShape(defOf(stored))
  const addCp = flags['add-country-price']
  const removeCp = flags['remove-country-price']
  if (addCp || removeCp) {
    if (body.country_prices !== undefined) throw new InvalidInputError('--add-country-price / --remove-country-price edit the stored country prices; country_prices in --body replaces them: give one or the other')
    let prices: {amount: unknown; country: string; currency?: unknown}[] = [...(shape.country_prices ?? [])]
    for (const text of removeCp ?? []) {
      const country = upperCode(text.trim())
      if (!prices.some((c) => c.country === country)) {
        const have = prices.map((c) => c.country).sort().join(', ') || 'none'
        throw new InvalidInputError(`--remove-country-price: product ${stored.api_id} has no country price for ${JSON.stringify(text)} (its country prices: ${have})`)
      }
      prices = prices.filter((c) => c.country !== country)
    }
    for (const text of addCp ?? []) {
      const price = parseCountryPrice(text, '--add-country-price') as {amount: unknown; country?: unknown; currency?: unknown}
      const country = typeof price.country === 'string' ? upperCode(price.country) : undefined
      prices = [...prices.filter((c) => country === undefined || c.country !== country), {...price, country: country ?? (price.country as string)}]
    }
    // An empty list is "no country prices" (null), as --country-price none.
    out.country_prices = prices.length === 0 ? null : prices
  }
  const addIn = flags['add-integration']
  const removeIn = flags['remove-integration']
  if (addIn || removeIn) {
    if (body.integrations !== undefined) throw new InvalidInputError('--add-integration / --remove-integration edit the stored integrations; integrations in --body replaces them: give one or the other')
    let integrations: unknown[] = [...shape.integrations]
    for (const text of removeIn ?? []) {
      const wanted = text.trim()
      const matches = (i: IntegrationInput) => describeIntegration(i) === wanted || i.type === wanted
      if (!shape.integrations.some((i) => matches(i))) {
        const have = shape.integrations.map((i) => describeIntegration(i)).join(', ') || 'none'
        throw new InvalidInputError(`--remove-integration: product ${stored.api_id} has no integration ${JSON.stringify(text)} (its integrations: ${have})`)
      }
      integrations = integrations.filter((i) => !matches(i as IntegrationInput))
    }
    for (const text of addIn ?? []) {
      const raw = parseIntegration(text, '--add-integration')
      const parsed = IntegrationInput.safeParse(raw)
      // The same integration again is no change; an invalid one is left to the update's validation.
      if (parsed.success && integrations.some((i) => describeIntegration(i as IntegrationInput) === describeIntegration(parsed.data))) continue
      integrations.push(raw)
    }
    out.integrations = integrations
  }
  return out
}

/** The stored country prices a replacing update (--country-price, --body) drops, as COUNTRY=AMOUNT:CURRENCY. */
export function droppedCountryPrices(body: Record<string, unknown>, stored: Product): string[] {
  // [] is refused by the update itself (the spec's "one or more"): no question first.
  if (body.country_prices === undefined || (Array.isArray(body.country_prices) && body.country_prices.length === 0)) return []
  const given = Array.isArray(body.country_prices) ? body.country_prices : []
  const kept = new Set(given.map((c) => (c && typeof c === 'object' && typeof (c as {country?: unknown}).country === 'string' ? upperCode((c as {country: string}).country) : '')))
  return (exportShape(defOf(stored)).country_prices ?? []).filter((c) => !kept.has(c.country)).map((c) => `${c.country}=${c.amount}:${c.currency}`)
}

const isNone = (v: string) => ['none', 'null'].includes(v.trim().toLowerCase())

/** A repeatable flag as a list; a single "none" means an empty list. */
function list(values: string[] | undefined, parse: (t: string, what: string) => unknown, what: string): unknown[] | undefined {
  if (values === undefined) return undefined
  if (values.length === 1 && isNone(values[0])) return []
  return values.map((v) => parse(v, what))
}

type ProductFlagValues = {[K in keyof typeof productFlags]?: K extends 'country-price' | 'feature' | 'integration' | 'trial' ? string[] : string}

/** The product body: --body, then every flag given on top of it. */
export function productBody(flags: ProductFlagValues): Record<string, unknown> {
  return overlay(readBody(flags.body), {
    api_id: flags['api-id'],
    base_px: flags['base-px'] === undefined ? undefined : numberish(flags['base-px']),
    baseline: flags.baseline === undefined ? undefined : isNone(flags.baseline) ? null : flags.baseline,
    // "none" removes every country price: null, since a given list holds one or more.
    country_prices: flags['country-price']?.length === 1 && isNone(flags['country-price'][0]) ? null : list(flags['country-price'], parseCountryPrice, '--country-price'),
    features: list(flags.feature, parseJsonObjectFlag, '--feature'),
    integrations: list(flags.integration, parseIntegration, '--integration'),
    interval: flags.interval,
    interval_count: flags['interval-count'] === undefined ? undefined : numberish(flags['interval-count']),
    max_px: flags['max-px'] === undefined ? undefined : nullableNumberish(flags['max-px']),
    min_px: flags['min-px'] === undefined ? undefined : nullableNumberish(flags['min-px']),
    name: flags.name,
    product_trials: list(flags.trial, parseTrial, '--trial'),
  })
}

export const couponFlags = {
  'active-from': Flags.string({description: 'ISO date (or date-time) from which the coupon applies (none to clear)'}),
  'active-till': Flags.string({description: 'ISO date (or date-time) until which the coupon applies; a bare date lasts through that day, UTC (none to clear)'}),
  'api-id': Flags.string({description: 'Coupon identifier (create only; immutable)'}),
  body: Flags.string({description: "The spec's JSON body (FILE, or - for stdin); flags override its fields"}),
  currency: Flags.string({description: 'Currency of a fixed_amount coupon (ISO 4217)'}),
  external: Flags.string({description: 'External coupon SOURCE=ID, e.g. GATEWAY_A=promo_123 (GATEWAY_A, GATEWAY_C, GATEWAY_D); repeatable; replaces all; "none" clears them', ...repeatable}),
  name: Flags.string({description: 'Coupon name'}),
  status: Flags.string({description: 'ACTIVE (default) or NOT_ACTIVE'}),
  type: Flags.string({description: 'Coupon type: percentage or fixed_amount'}),
  value: Flags.string({description: 'Percent off (0 < value <= 100) or the fixed amount in the coupon currency'}),
}

type CouponFlagValues = {[K in keyof typeof couponFlags]?: K extends 'external' ? string[] : string}

const dateFlag = (v: string | undefined) => (v === undefined ? undefined : isNone(v) ? null : v.trim())

export function couponBody(flags: CouponFlagValues): Record<string, unknown> {
  return overlay(readBody(flags.body), {
    active_from: dateFlag(flags['active-from']),
    active_till: dateFlag(flags['active-till']),
    api_id: flags['api-id'],
    coupon_external_coupons: list(flags.external, parseExternalCoupon, '--external'),
    coupon_type: flags.type === undefined ? undefined : {coupon_type: flags.type.trim()},
    currency: flags.currency === undefined ? undefined : isNone(flags.currency) ? null : upperCode(flags.currency.trim()),
    name: flags.name,
    status: flags.status?.trim().toUpperCase(),
    value: flags.value === undefined ? undefined : numberish(flags.value),
  })
}

/** `update` takes the api_id from its argument: a --api-id flag would suggest a rename, which the spec forbids. */
export function refuseApiIdFlag(value: string | undefined, kind: 'coupons' | 'products', apiId: string): void {
  if (value === undefined) return
  const instead = value === apiId ? `name it by the argument only: pricectl ${kind} update ${apiId} ...` : `create a new one with: pricectl ${kind} create --api-id ${value} ...`
  throw new InvalidInputError(`--api-id: api_id is immutable and cannot be given to update (got ${JSON.stringify(value)}; ${instead})`)
}
