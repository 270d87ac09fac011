import {z} from 'zod'

import {decimalPlaces, isCurrency, minorDigits} from '../currency.js'
import {Amount, blankError, Country, Currency, Envelope, Interval, isBlank, IsoDate, isPlainText, Name, RecurringInterval} from './common.js'
import {windowEnd, windowStart} from './no-zod.js'
import type * as domain from '../domain.js'
import type {Expect, SameType} from '../domain.js'

export {windowEnd, windowStart}

/**
 * Catalog schemas: products (country prices, integration objects, features, trials),
 * coupons and users, as the spec shapes them. Input schemas validate bodies and flags;
 * output schemas are what `--json` prints (kept under schemas/ as JSON Schema).
 */

const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v))

/** Strict objects name the unknown field (a typo such as "base_price" must not be dropped silently). */
function strictObject<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown field ${iss.keys.map((k) => JSON.stringify(k)).join(', ')}` : iss.input === undefined ? 'is required' : `expected an object, got ${show(iss.input)}`),
  })
}

/** A required identifier (api_id, gateway product or plan id). */
export const RequiredId = z
  .string({error: (iss) => (iss.input === undefined ? 'is required' : `expected a string, got ${show(iss.input)}`)})
  .min(1, {error: 'must not be empty'})
  .max(255, {error: 'must be at most 255 characters'})
  .refine((s) => !isBlank(s), {abort: true, error: blankError})
  .refine(isPlainText, {error: 'must not contain control characters or broken unicode'})

const RequiredName = z.string({error: (iss) => (iss.input === undefined ? 'is required' : `expected a string, got ${show(iss.input)}`)}).pipe(Name)

const RequiredInt = z
  .number({error: (iss) => (iss.input === undefined ? 'is required' : `expected a whole number, got ${show(iss.input)}`)})
  .int({error: (iss) => `expected a whole number, got ${show(iss.input)}`})
  .min(1, {error: (iss) => `must be at least 1, got ${show(iss.input)}`})
  .max(1_000_000, {error: (iss) => `must be at most 1000000, got ${show(iss.input)}`})

/** Largest amount accepted: far above any price, far below where minor units stop being exact. */
export const MAX_AMOUNT = 1_000_000_000

const RequiredAmount = z
  .unknown()
  .refine((v) => v !== undefined, {abort: true, error: 'is required'})
  .pipe(Amount)
  .refine((n) => n <= MAX_AMOUNT, {error: (iss) => `${show(iss.input)} is too large (at most ${MAX_AMOUNT})`})

/** A USD amount: non-negative, at most 2 decimals (cents), so it converts to minor units exactly. */
export const UsdAmount = RequiredAmount.refine((n) => decimalPlaces(n) <= 2, {error: (iss) => `${show(iss.input)} has more decimals than USD allows (2)`})

const Description = z.string({error: (iss) => `expected a string, got ${show(iss.input)}`}).max(5000, {error: 'must be at most 5000 characters'})

/** Amount with the right number of decimals for its currency (checked once both are known). */
function checkDecimals(ctx: {addIssue: (i: {code: 'custom'; input: unknown; message: string; path: PropertyKey[]}) => void}, amount: unknown, currency: unknown, path: PropertyKey[]): void {
  if (typeof amount !== 'number' || typeof currency !== 'string' || !isCurrency(currency)) return
  const d = minorDigits(currency)
  if (decimalPlaces(amount) > d) ctx.addIssue({code: 'custom', input: amount, message: `${amount} has more decimals than ${currency} allows (${d})`, path})
}

// ---------------------------------------------------------------- products

/** Country price as input; `local_price` (the response name) is accepted for `amount` so a get can be fed back. */
export const CountryPriceInput = z.preprocess(
  (v) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && 'local_price' in v && !('amount' in v)) {
      const {local_price: amount, ...rest} = v as Record<string, unknown>
      return {...rest, amount}
    }
    return v
  },
  strictObject({amount: RequiredAmount, country: Country, currency: Currency}).superRefine((cp, ctx) => checkDecimals(ctx, cp.amount, cp.currency, ['amount'])),
)

export const INTEGRATION_TYPES = ['gateway_a', 'gateway_a_with_interval', 'gateway_c', 'gateway_d'] as const

/** Integration objects, discriminated by `type`; every field of each type is required. */
export const IntegrationInput = z.discriminatedUnion(
  'type',
  [
    strictObject({gateway_a_product_id: RequiredId, type: z.literal('gateway_a')}),
    strictObject({gateway_a_product_id: RequiredId, interval: RecurringInterval, interval_count: RequiredInt, type: z.literal('gateway_a_with_interval')}),
    strictObject({gateway_c_plan_id: RequiredId, type: z.literal('gateway_c')}),
    strictObject({currency: Currency, gateway_d_plan_id: RequiredId, type: z.literal('gateway_d')}),
  ],
  {
    error: (iss) =>
      (iss.code as string) === 'invalid_type'
        ? `expected an integration object, got ${show(iss.input)}`
        : `unknown integration type ${show((iss.input as {type?: unknown} | undefined)?.type)} (expected one of ${INTEGRATION_TYPES.join(', ')})`,
  },
)
export type IntegrationInput = z.output<typeof IntegrationInput>
type _IntegrationChecked = Expect<SameType<IntegrationInput, domain.IntegrationInput>>

export const FEATURE_STATUSES = ['active', 'inactive'] as const
export const FEATURE_TYPES = ['boolean', 'numeric'] as const

export const FeatureGroupInput = strictObject({
  api_id: RequiredId,
  description: Description.optional(),
  /** Read-only (a get's output); groups are matched by api_id. */
  id: z.number().optional(),
  name: RequiredName,
})

/**
 * A feature of a product. Groups are shared by api_id across products; `group_id` alone
 * links to an existing group. Boolean features carry no unit and value 0.
 */
export const FeatureInput = strictObject({
  api_id: RequiredId,
  description: Description.optional(),
  feature_group: FeatureGroupInput.nullable().optional(),
  group_id: z.number({error: (iss) => `expected a feature group id (number), got ${show(iss.input)}`}).int().nullable().optional(),
  name: RequiredName,
  status: z.enum(FEATURE_STATUSES, {error: (iss) => `unknown status ${show(iss.input)} (expected active or inactive)`}).optional(),
  type: z.enum(FEATURE_TYPES, {error: (iss) => `unknown feature type ${show(iss.input)} (expected boolean or numeric)`}),
  unit: z.string({error: (iss) => `expected a string, got ${show(iss.input)}`}).max(100).nullable().optional(),
  value: z.number({error: (iss) => `expected a number, got ${show(iss.input)}`}).finite().nullable().optional(),
}).superRefine((f, ctx) => {
  if (f.type === 'boolean') {
    if (f.unit !== undefined && f.unit !== null && f.unit !== '') ctx.addIssue({code: 'custom', input: f.unit, message: `a boolean feature has no unit, got ${show(f.unit)}`, path: ['unit']})
    if (f.value !== undefined && f.value !== null && f.value !== 0) ctx.addIssue({code: 'custom', input: f.value, message: `a boolean feature has value 0, got ${show(f.value)}`, path: ['value']})
  } else if (f.value === undefined || f.value === null) {
    ctx.addIssue({code: 'custom', input: f.value, message: 'is required for a numeric feature (its threshold)', path: ['value']})
  }
})
export type FeatureInput = z.output<typeof FeatureInput>

/** A free trial offered with a product: `interval_count` x `interval` (e.g. 14 x day). */
export const TrialInput = strictObject({interval: RecurringInterval, interval_count: RequiredInt})
export type Trial = z.output<typeof TrialInput>
type _TrialChecked = Expect<SameType<Trial, domain.Trial>>

const OptionalUsd = UsdAmount.nullable().optional()

/** Every writable product field. `message`/`success` are tolerated (a get's output fed back) and ignored. */
const productShape = {
  api_id: RequiredId,
  base_px: UsdAmount,
  baseline: RequiredId.nullable().optional(),
  baseline_id: z.number({error: (iss) => `expected a product id (number), got ${show(iss.input)}`}).int().nullable().optional(),
  // The spec: "list of one or more". None: leave the field out (create) or send null (update: removes them all).
  country_prices: z
    .array(CountryPriceInput, {error: (iss) => `expected an array of country prices, got ${show(iss.input)}`})
    .min(1, {error: 'must list one or more country prices (the spec\'s rule); to have none, leave the field out, or send null on update to remove them all (CLI: --country-price none)'})
    .nullable()
    .optional(),
  features: z.array(FeatureInput, {error: (iss) => `expected an array of features, got ${show(iss.input)}`}).optional(),
  integrations: z.array(IntegrationInput, {error: (iss) => `expected an array of integration objects, got ${show(iss.input)}`}).optional(),
  interval: z.unknown().refine((v) => v !== undefined, {abort: true, error: 'is required'}).pipe(Interval),
  interval_count: RequiredInt,
  max_px: OptionalUsd,
  message: z.string().optional(),
  min_px: OptionalUsd,
  name: RequiredName,
  product_trials: z.array(TrialInput, {error: (iss) => `expected an array of trials, got ${show(iss.input)}`}).optional(),
  success: z.boolean().optional(),
}

/** A complete product (create, import rows, and an update once merged with the stored product). */
export const ProductInput = strictObject(productShape).superRefine((p, ctx) => {
  if (p.interval === 'one_time' && p.interval_count !== 1) {
    ctx.addIssue({code: 'custom', input: p.interval_count, message: `one_time products use interval_count 1, got ${p.interval_count}`, path: ['interval_count']})
  }
  if (p.min_px !== undefined && p.min_px !== null && p.max_px !== undefined && p.max_px !== null && p.min_px > p.max_px) {
    ctx.addIssue({code: 'custom', input: p.min_px, message: `min_px ${p.min_px} is above max_px ${p.max_px}`, path: ['min_px']})
  }
  if (p.baseline && p.baseline === p.api_id) ctx.addIssue({code: 'custom', input: p.baseline, message: `a product cannot be its own baseline (${show(p.baseline)})`, path: ['baseline']})
  const seen = new Map<string, number>()
  p.country_prices?.forEach((cp, i) => {
    if (seen.has(cp.country)) ctx.addIssue({code: 'custom', input: cp.country, message: `country ${cp.country} is listed twice (also at [${seen.get(cp.country)}])`, path: ['country_prices', i, 'country']})
    else seen.set(cp.country, i)
  })
  const keys = new Map<string, number>()
  p.integrations?.forEach((it, i) => {
    const k = integrationKey(it)
    if (keys.has(k)) ctx.addIssue({code: 'custom', input: it, message: `integration ${describeIntegration(it)} is listed twice (also at [${keys.get(k)}])`, path: ['integrations', i]})
    else keys.set(k, i)
  })
  const features = new Map<string, number>()
  p.features?.forEach((f, i) => {
    if (features.has(f.api_id)) ctx.addIssue({code: 'custom', input: f.api_id, message: `feature ${show(f.api_id)} is listed twice (also at [${features.get(f.api_id)}])`, path: ['features', i, 'api_id']})
    else features.set(f.api_id, i)
  })
})
export type ProductInput = z.output<typeof ProductInput>

/** An update: any product field but api_id (immutable; equal to the path's id is tolerated). */
export const ProductPatch = strictObject(Object.fromEntries(Object.entries(productShape).map(([k, v]) => [k, (v as z.ZodType).optional()])) as {
  [K in keyof typeof productShape]: z.ZodOptional<(typeof productShape)[K]>
})
export type ProductPatch = z.output<typeof ProductPatch>

/**
 * The key two products may not share: a gateway id names one product (with-interval ids
 * one product per interval), or subscriptions could not be matched to their product.
 */
export function integrationKey(i: IntegrationInput): string {
  switch (i.type) {
    case 'gateway_a': {
      return `gateway_a\u0000${i.gateway_a_product_id}`
    }

    case 'gateway_a_with_interval': {
      return `gateway_a_with_interval\u0000${i.gateway_a_product_id}\u0000${i.interval}\u0000${i.interval_count}`
    }

    case 'gateway_c': {
      return `gateway_c\u0000${i.gateway_c_plan_id}`
    }

    case 'gateway_d': {
      return `gateway_d\u0000${i.gateway_d_plan_id}`
    }
  }
}

export function describeIntegration(i: IntegrationInput): string {
  switch (i.type) {
    case 'gateway_a': {
      return `gateway_a:${i.gateway_a_product_id}`
    }

    case 'gateway_a_with_interval': {
      return `gateway_a_with_interval:${i.gateway_a_product_id}:${i.interval}:${i.interval_count}`
    }

    case 'gateway_c': {
      return `gateway_c:${i.gateway_c_plan_id}`
    }

    case 'gateway_d': {
      return `gateway_d:${i.gateway_d_plan_id}:${i.currency}`
    }
  }
}

// Outputs -----------------------------------------------------------------

export const IntegrationOutput = z.union([
  z.object({gateway_a_product_id: z.string(), type: z.literal('gateway_a')}),
  z.object({gateway_a_product_id: z.string(), interval: z.enum(['day', 'week', 'month', 'year']), interval_count: z.number(), type: z.literal('gateway_a_with_interval')}),
  z.object({gateway_c_plan_id: z.string(), type: z.literal('gateway_c')}),
  z.object({currency: z.string(), gateway_d_plan_id: z.string(), type: z.literal('gateway_d')}),
])

export const CountryPriceOutput = z.object({country: z.string(), currency: z.string(), local_price: z.number()})

export const FeatureGroupOutput = z.object({api_id: z.string(), description: z.string(), id: z.number(), name: z.string()})

export const FeatureOutput = z.object({
  api_id: z.string(),
  description: z.string(),
  feature_group: FeatureGroupOutput.nullable(),
  group_id: z.number().nullable(),
  name: z.string(),
  status: z.enum(FEATURE_STATUSES),
  type: z.enum(FEATURE_TYPES),
  unit: z.string().nullable(),
  value: z.number(),
})
export type FeatureOutput = z.output<typeof FeatureOutput>
type _FeatureChecked = Expect<SameType<FeatureOutput, domain.FeatureOutput>>

export const TrialOutput = z.object({interval: z.enum(['day', 'week', 'month', 'year']), interval_count: z.number()})

/** Response of Create product. */
export const ProductCreated = Envelope.extend({
  api_id: z.string(),
  base_px: z.number(),
  baseline_id: z.number().nullable(),
  country_prices: z.array(CountryPriceOutput),
  integrations: z.array(IntegrationOutput),
  name: z.string(),
})

/** "Product as returned by Get product", plus interval and interval_count. */
export const ProductOutput = Envelope.extend({
  api_id: z.string(),
  base_px: z.number(),
  baseline_id: z.number().nullable(),
  country_prices: z.array(CountryPriceOutput),
  features: z.array(FeatureOutput),
  integrations: z.array(IntegrationOutput),
  interval: Interval,
  interval_count: z.number(),
  max_px: z.number().nullable(),
  min_px: z.number().nullable(),
  name: z.string(),
  product_trials: z.array(TrialOutput),
})
export type ProductOutput = z.output<typeof ProductOutput>

export const ProductListEntry = z.object({
  api_id: z.string(),
  base_px: z.number(),
  integrations: z.array(IntegrationOutput),
  max_px: z.number().nullable(),
  min_px: z.number().nullable(),
  name: z.string(),
})
export type ProductListEntry = z.output<typeof ProductListEntry>

export const ProductList = Envelope.extend({products: z.array(ProductListEntry)})

export const ProductDeleted = Envelope.extend({api_id: z.string()})

/** A product as `products export` writes it: the input shape, baseline by api_id, so import takes it back. */
export const ProductExport = z.object({
  api_id: z.string(),
  base_px: z.number(),
  baseline: z.string().nullable(),
  /** Left out when the product has none: an input list holds one or more. */
  country_prices: z.array(z.object({amount: z.number(), country: z.string(), currency: z.string()})).optional(),
  features: z.array(
    z.object({
      api_id: z.string(),
      description: z.string(),
      feature_group: z.object({api_id: z.string(), description: z.string(), name: z.string()}).nullable(),
      name: z.string(),
      status: z.enum(FEATURE_STATUSES),
      type: z.enum(FEATURE_TYPES),
      unit: z.string().nullable(),
      value: z.number(),
    }),
  ),
  integrations: z.array(IntegrationOutput),
  interval: Interval,
  interval_count: z.number(),
  max_px: z.number().nullable(),
  min_px: z.number().nullable(),
  name: z.string(),
  product_trials: z.array(TrialOutput),
})
export type ProductExport = z.output<typeof ProductExport>

export const ProductImported = Envelope.extend({
  inserted: z.number(),
  path: z.string(),
  read: z.number(),
  unchanged: z.number(),
  updated: z.number(),
})

export const ProductExported = Envelope.extend({
  count: z.number(),
  format: z.enum(['csv', 'json']),
  path: z.string().nullable(),
  products: z.array(ProductExport).optional(),
})

// ---------------------------------------------------------------- coupons

export const COUPON_TYPES = ['percentage', 'fixed_amount'] as const
export const COUPON_STATUSES = ['ACTIVE', 'NOT_ACTIVE'] as const
export const COUPON_SOURCES = ['GATEWAY_A', 'GATEWAY_C', 'GATEWAY_D'] as const
type _SourcesChecked = Expect<SameType<(typeof COUPON_SOURCES)[number], domain.CouponSource>>

const CouponType = z.enum(COUPON_TYPES, {error: (iss) => `unknown coupon type ${show(iss.input)} (expected percentage or fixed_amount)`})

/** `coupon_type` is `{"coupon_type": "percentage"}` in the spec; a bare string is accepted too. */
const CouponTypeInput = z.preprocess((v) => (typeof v === 'string' ? {coupon_type: v} : v), strictObject({coupon_type: CouponType}))

const CouponDate = z
  .string({error: (iss) => `expected an ISO date such as 2026-01-31, got ${show(iss.input)}`})
  .pipe(IsoDate)
  .nullable()
  .optional()

export const ExternalCouponInput = strictObject({
  external_coupon: strictObject({
    id: RequiredId,
    source: z.enum(COUPON_SOURCES, {error: (iss) => `unknown source ${show(iss.input)} (expected one of ${COUPON_SOURCES.join(', ')})`}),
  }),
})

const couponShape = {
  active_from: CouponDate,
  active_till: CouponDate,
  api_id: RequiredId,
  coupon_external_coupons: z.array(ExternalCouponInput, {error: (iss) => `expected an array, got ${show(iss.input)}`}).optional(),
  coupon_type: CouponTypeInput,
  /** Read-only fields of a listed coupon, tolerated so a coupon can be fed back; ignored. */
  created_at: z.string().optional(),
  currency: Currency.nullable().optional(),
  name: RequiredName,
  org: z.number().optional(),
  status: z.enum(COUPON_STATUSES, {error: (iss) => `unknown status ${show(iss.input)} (expected ACTIVE or NOT_ACTIVE)`}).optional(),
  updated_at: z.string().optional(),
  value: RequiredAmount,
}

/** A complete coupon (create, or an update once merged with the stored coupon). */
export const CouponInput = strictObject(couponShape).superRefine((c, ctx) => {
  const type = c.coupon_type.coupon_type
  if (type === 'percentage') {
    if (c.value <= 0 || c.value > 100) ctx.addIssue({code: 'custom', input: c.value, message: `a percentage must be above 0 and at most 100, got ${c.value}`, path: ['value']})
    else if (decimalPlaces(c.value) > 2) ctx.addIssue({code: 'custom', input: c.value, message: `a percentage has at most 2 decimals, got ${c.value}`, path: ['value']})
    if (c.currency) ctx.addIssue({code: 'custom', input: c.currency, message: `a percentage coupon takes no currency, got ${show(c.currency)}`, path: ['currency']})
  } else {
    if (!c.currency) ctx.addIssue({code: 'custom', input: c.currency, message: 'is required for a fixed_amount coupon', path: ['currency']})
    if (c.value <= 0) ctx.addIssue({code: 'custom', input: c.value, message: `a fixed amount must be above 0, got ${c.value}`, path: ['value']})
    checkDecimals(ctx, c.value, c.currency, ['value'])
  }
  if (c.active_from && c.active_till && windowStart(c.active_from) > windowEnd(c.active_till)) {
    ctx.addIssue({code: 'custom', input: c.active_till, message: `active_till ${c.active_till} is before active_from ${c.active_from}`, path: ['active_till']})
  }
  const sources = new Map<string, number>()
  c.coupon_external_coupons?.forEach((e, i) => {
    const s = e.external_coupon.source
    if (sources.has(s)) ctx.addIssue({code: 'custom', input: s, message: `source ${s} is listed twice (also at [${sources.get(s)}]); a coupon links one external coupon per source`, path: ['coupon_external_coupons', i, 'external_coupon', 'source']})
    else sources.set(s, i)
  })
})
export type CouponInput = z.output<typeof CouponInput>

export const CouponPatch = strictObject(Object.fromEntries(Object.entries(couponShape).map(([k, v]) => [k, (v as z.ZodType).optional()])) as {
  [K in keyof typeof couponShape]: z.ZodOptional<(typeof couponShape)[K]>
})
export type CouponPatch = z.output<typeof CouponPatch>

export const CouponOutput = z.object({
  active_from: z.string().nullable(),
  active_till: z.string().nullable(),
  api_id: z.string(),
  coupon_external_coupons: z.array(z.object({external_coupon: z.object({id: z.string(), source: z.enum(COUPON_SOURCES)})})),
  coupon_type: z.object({coupon_type: z.enum(COUPON_TYPES)}),
  created_at: z.string(),
  currency: z.string().nullable(),
  name: z.string(),
  org: z.number(),
  status: z.enum(COUPON_STATUSES),
  updated_at: z.string(),
  value: z.number(),
})
export type CouponOutput = z.output<typeof CouponOutput>

export const CouponResponse = Envelope.extend({coupon: CouponOutput})
export const CouponList = Envelope.extend({coupons: z.array(CouponOutput)})
export const CouponDeleted = Envelope.extend({api_id: z.string()})

// ---------------------------------------------------------------- users

/** Get user country: exactly `{"user": {"country": ...}}`. */
export const UserOutput = z.object({user: z.object({country: z.string().nullable()})})

// ---------------------------------------------------------------- demo

export const DemoOutput = Envelope.extend({coupons: z.number(), products: z.number()})
