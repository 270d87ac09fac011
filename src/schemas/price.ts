import {isIP} from 'node:net'
import {z} from 'zod'

import {Country, Currency, Gateway, Id, Interval, userKeys} from './common.js'

/**
 * The Calculate price body (spec) plus the names DESIGN.md decides for what the spec
 * leaves unnamed: `features`, `coupons`, `override_currency`.
 */
export const FeatureValue = z.union([z.string().max(1000), z.number().finite(), z.boolean()], {
  error: (iss) => `feature values must be strings, numbers or booleans, got ${JSON.stringify(iss.input)}`,
})

export const PriceRequest = z
  .object({
    country: Country.optional(),
    coupons: z
      .record(
        Id,
        z.string().regex(/^[^,\s][^,]*(,[^,\s][^,]*)*$/, {error: (iss) => `expected "coupon1,coupon2", got ${JSON.stringify(iss.input)}`}),
        {error: (iss) => `expected an object of product -> "coupon1,coupon2", got ${JSON.stringify(iss.input)}`},
      )
      .optional(),
    currency: Currency.optional(),
    features: userKeys(z.record(z.string().min(1).max(200), FeatureValue, {error: (iss) => `expected an object of feature -> value, got ${JSON.stringify(iss.input)}`}), 'feature').optional(),
    get_ip_from_request: z.boolean().optional(),
    integrations: z.array(Gateway).optional(),
    ip: z
      .string()
      .refine((s) => isIP(s) !== 0, {error: (iss) => `not an IPv4 or IPv6 address: ${JSON.stringify(iss.input)}`})
      .optional(),
    override: z.boolean().optional(),
    override_currency: z.boolean().optional(),
    package_id: Id.optional(),
    products: z.array(Id).optional(),
    run_experiment: z.boolean().optional(),
    user_id: Id.optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.override_currency && !r.currency) ctx.addIssue({code: 'custom', message: 'override_currency needs currency', path: ['currency']})
    if (!r.user_id && !r.ip && !r.get_ip_from_request) {
      ctx.addIssue({code: 'custom', message: 'give user_id or ip (or get_ip_from_request)', path: ['user_id']})
    }
  })
export type PriceRequest = z.output<typeof PriceRequest>

export const AudienceRef = z.object({api_id: z.string(), name: z.string()})

/**
 * The spec's gateway price object. `adjusted_from` (beyond the spec): the locked price, when
 * the gateway cannot charge it and the object carries the nearest amount it can (docs/money.md).
 */
export const GatewayPrice = z.object({
  adjusted_from: z.number().optional(),
  amount: z.number(),
  currency: z.string(),
  formatted: z.string(),
  /** Whether `amount` includes tax (docs/tax.md, "Gateways"): gateway_a's (Stripe's) tax_behavior. */
  tax_behavior: z.enum(['inclusive', 'exclusive']).optional(),
})

/** The tax in a product's price (beyond the spec; docs/tax.md): amounts in the currency's number form, net + tax = gross. */
export const TaxObject = z.object({
  behavior: z.enum(['inclusive', 'exclusive']),
  country: z.string(),
  display: z.string(),
  gross: z.number(),
  label: z.string(),
  net: z.number(),
  rate: z.number(),
  tax: z.number(),
})

export const CouponBlock = z.object({
  api_id: z.string(),
  coupon_source: z.array(z.string()),
  currency_code: z.string().nullable(),
  display: z.object({
    interval_local_price_formatted: z.string(),
    local_currency_symbol: z.string(),
    local_price_formatted: z.string(),
    local_price_formatted_with_baseline_strike: z.string(),
    pct_discount_to_baseline: z.number(),
    price_numeric: z.number(),
    interval_price_numeric: z.number(),
    usd_price_numeric: z.number(),
    usd_price_formatted: z.string(),
  }),
  external_coupon_id: z.string().nullable(),
  id: z.string(),
  service_external_coupon_id: z.number().nullable(),
  type: z.enum(['percentage', 'fixed_amount']),
  valid_till: z.string().nullable(),
  value: z.number(),
})

export const ProductPrice = z.object({
  coupon: CouponBlock.optional(),
  display: z.object({
    discount_to_baseline: z.number(),
    price: z.string(),
    price_with_baseline_strike: z.string(),
    reference_interval_price: z.string(),
  }),
  integrations: z.record(z.string(), GatewayPrice),
  interval: Interval,
  interval_count: z.number().int(),
  price: z.number(),
  price_usd: z.number(),
  tax: TaxObject.optional(),
})

export const Variants = z.object({
  arm_id: z.union([z.number(), z.string()]),
  experiment_id: z.number().int(),
  experiment_type: z.enum(['price', 'packaging']).nullable(),
  experimented_on: z.boolean(),
  products_to_select: z.array(z.string()),
  treatment_group: z.null(),
})

export const PriceResult = z.object({
  audience: AudienceRef,
  country: z.string(),
  currency: z.string(),
  currency_symbol: z.string(),
  matching_audiences: z.array(AudienceRef),
  package_id: z.string().nullable(),
  products: z.record(z.string(), ProductPrice),
  success: z.literal(true),
  user_id: z.string(),
  variants: Variants,
})
export type PriceResult = z.output<typeof PriceResult>
export type ProductPrice = z.output<typeof ProductPrice>

/** One row of `price preview`: a product's control price in a country, for an audience. */
export const PreviewRow = z.object({
  /** Only with --experiment: the arm the row is priced under. */
  arm: z.union([z.number(), z.string()]).optional(),
  audience: z.string(),
  country: z.string(),
  currency: z.string(),
  display: z.string(),
  integrations: z.record(z.string(), GatewayPrice).optional(),
  layer: z.enum(['base', 'country_price', 'audience', 'experiment']).or(z.string()),
  price: z.number(),
  price_usd: z.number(),
  product: z.string(),
  /** The tax in `price` (docs/tax.md): `price` is the shown price, the gross under inclusive and the net under exclusive. */
  tax: TaxObject.pick({behavior: true, gross: true, net: true, rate: true, tax: true}).optional(),
})
export type PreviewRow = z.output<typeof PreviewRow>

/** A difference between a snapshot and fresh prices (`price preview --against`). */
export const PriceChange = z.object({
  after: z.number().nullable(),
  arm: z.union([z.number(), z.string()]).optional(),
  audience: z.string(),
  before: z.number().nullable(),
  change: z.enum(['added', 'changed', 'currency', 'removed', 'within_tolerance']),
  country: z.string(),
  currency_after: z.string().nullable(),
  currency_before: z.string().nullable(),
  pct_change: z.number().nullable(),
  product: z.string(),
})

/** A product `price preview` could not price in a country, and why (the run exits 1). */
export const PreviewError = z.object({
  arm: z.union([z.number(), z.string()]).optional(),
  audience: z.string(),
  country: z.string(),
  message: z.string(),
  product: z.string(),
})

export const PricePreviewOutput = z.object({
  comparison: z
    .object({
      against: z.string(),
      changes: z.array(PriceChange),
      /** Rows compared: the fresh rows and the snapshot's rows within the flags, counted once. */
      compared: z.number().int(),
      failed: z.number().int(),
      /** Snapshot rows outside -p, --country, --audience or --arm: not compared (and kept by --update). */
      not_compared: z.array(z.object({arm: z.union([z.number(), z.string()]).optional(), audience: z.string(), country: z.string(), currency: z.string(), price: z.number(), product: z.string()})),
      passed: z.boolean(),
      tolerance: z.string(),
    })
    .optional(),
  /** Products that could not be priced (present only when some could not; exit 1). */
  errors: z.array(PreviewError).optional(),
  rows: z.array(PreviewRow),
  /** What the exit code says: false when the gate failed or a product could not be priced (exit 1). */
  success: z.boolean(),
})
