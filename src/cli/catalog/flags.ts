import {Flags} from '@oclif/core'

import {overlay, readBody} from '../input.js'
import {InvalidInputError} from '../../errors.js'
import {upperCode} from '../../currency.js'
import {nullableNumberish, numberish, parseCountryPrice, parseExternalCoupon, parseIntegration, parseJsonObjectFlag, parseTrial} from '../../catalog/shortforms.js'

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
