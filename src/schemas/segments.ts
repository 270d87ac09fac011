import {z} from 'zod'

import {decimalPlaces, isCurrency, minorDigits} from '../currency.js'
import {asNumber, COUNTRY_OPERATORS, FEATURE_OPERATORS, featureOperator, parseRuleText, type Rule, RuleSyntaxError} from '../segments/rules.js'
import {RequiredId} from './catalog.js'
import {reservedKeyProblem} from './no-zod.js'
import {Country, Currency, Envelope, IsoDate, Name} from './common.js'

/**
 * Segmentation schemas: audiences (rules, audience prices), packages, campaigns. Input
 * schemas validate bodies and flags before anything is written; output schemas are what
 * `--json` prints (kept under schemas/ as JSON Schema). See docs/segments.md.
 */

const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v))

function strictObject<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown field ${iss.keys.map((k) => JSON.stringify(k)).join(', ')}` : iss.input === undefined ? 'is required' : `expected an object, got ${show(iss.input)}`),
  })
}

const RequiredName = z.string({error: (iss) => (iss.input === undefined ? 'is required' : `expected a string, got ${show(iss.input)}`)}).pipe(Name)

/** Read-only fields of a printed record, tolerated in a body so `get --json` output can be fed back. */
const readOnly = {created_at: z.string().optional(), updated_at: z.string().optional()}

const Countries = z
  .array(Country, {error: (iss) => `expected an array of country codes, got ${show(iss.input)}`})
  .max(300, {error: 'at most 300 countries'})
  .superRefine((cs, ctx) => {
    const seen = new Set<string>()
    cs.forEach((c, i) => {
      if (seen.has(c)) ctx.addIssue({code: 'custom', input: c, message: `${c} is listed twice`, path: [i]})
      seen.add(c)
    })
  })

const ProductIds = (min: number) =>
  z
    .array(RequiredId, {error: (iss) => `expected an array of product api_ids, got ${show(iss.input)}`})
    .min(min, {error: 'needs at least one product'})
    .superRefine((ps, ctx) => {
      const seen = new Set<string>()
      ps.forEach((p, i) => {
        if (seen.has(p)) ctx.addIssue({code: 'custom', input: p, message: `product ${JSON.stringify(p)} is listed twice`, path: [i]})
        seen.add(p)
      })
    })

// ---------------------------------------------------------------- rules

const Literal = z.union([z.string().max(1000), z.number().finite(), z.boolean()], {error: (iss) => `expected a string, number or boolean, got ${show(iss.input)}`})

const FeatureKey = z
  .string({error: (iss) => (iss.input === undefined ? 'is required' : `expected a string, got ${show(iss.input)}`)})
  .min(1, {error: 'must not be empty'})
  .max(200, {error: 'must be at most 200 characters'})
  .regex(/^\S+$/, {error: (iss) => `must not contain spaces, got ${show(iss.input)}`})
  .refine((k) => reservedKeyProblem(k, 'feature') === undefined, {error: reservedKeyProblem('__proto__', 'feature')})

const CountryRuleInput = strictObject({
  operator: z.preprocess(
    (v) => (typeof v === 'string' && /^not[\s_]in$/i.test(v.trim()) ? 'not_in' : typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.enum(COUNTRY_OPERATORS, {error: (iss) => `unknown country operator ${show(iss.input)} (expected in or not_in)`}),
  ),
  type: z.literal('country'),
  values: Countries.refine((cs) => cs.length > 0, {error: 'needs at least one country'}),
})

const FeatureRuleInput = strictObject({
  feature: FeatureKey,
  operator: z.preprocess(
    (v) => (typeof v === 'string' ? (featureOperator(v) ?? v) : v),
    z.enum(FEATURE_OPERATORS, {error: (iss) => `unknown operator ${show(iss.input)} (expected one of ${FEATURE_OPERATORS.join(', ')})`}),
  ),
  type: z.literal('feature'),
  value: Literal.optional(),
  values: z.array(Literal, {error: (iss) => `expected an array, got ${show(iss.input)}`}).min(1, {error: 'needs at least one value'}).optional(),
})
  .superRefine((r, ctx) => {
    const op = r.operator
    if (op === 'exists') {
      if (r.value !== undefined) ctx.addIssue({code: 'custom', input: r.value, message: `"exists" takes no value, got ${show(r.value)}`, path: ['value']})
      if (r.values !== undefined) ctx.addIssue({code: 'custom', input: r.values, message: `"exists" takes no values, got ${show(r.values)}`, path: ['values']})
      return
    }
    if (op === 'in') {
      if (r.values === undefined) ctx.addIssue({code: 'custom', input: r.values, message: '"in" needs values (a list)', path: ['values']})
      if (r.value !== undefined) ctx.addIssue({code: 'custom', input: r.value, message: `"in" takes values (a list), not value ${show(r.value)}`, path: ['value']})
      return
    }
    if (r.values !== undefined) ctx.addIssue({code: 'custom', input: r.values, message: `"${op}" takes one value, not values`, path: ['values']})
    if (r.value === undefined) {
      ctx.addIssue({code: 'custom', input: r.value, message: `"${op}" needs a value`, path: ['value']})
      return
    }
    if ((op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') && asNumber(r.value) === undefined) {
      ctx.addIssue({code: 'custom', input: r.value, message: `"${op}" compares numbers: ${show(r.value)} is not a number`, path: ['value']})
    }
  })
  .transform((r): Rule => {
    switch (r.operator) {
      case 'exists': {
        return {feature: r.feature, operator: 'exists', type: 'feature'}
      }

      case 'in': {
        return {feature: r.feature, operator: 'in', type: 'feature', values: r.values!}
      }

      case 'eq':
      case 'neq': {
        return {feature: r.feature, operator: r.operator, type: 'feature', value: r.value!}
      }

      default: {
        return {feature: r.feature, operator: r.operator, type: 'feature', value: asNumber(r.value)!}
      }
    }
  })

const RuleObject = z.discriminatedUnion('type', [CountryRuleInput, FeatureRuleInput], {
  error: (iss) => (iss.code === 'invalid_union' ? `expected a rule with "type" country or feature, got ${show(iss.input)}` : `expected a rule object or text such as "country in DE,AT", got ${show(iss.input)}`),
})

/** A rule as an object, or in its text form ("feature plan_level gt 3"). */
export const RuleInput = z
  .unknown()
  .transform((v, ctx) => {
    if (typeof v !== 'string') return v
    try {
      return parseRuleText(v)
    } catch (error) {
      if (!(error instanceof RuleSyntaxError)) throw error
      ctx.issues.push({code: 'custom', input: v, message: error.message})
      return z.NEVER
    }
  })
  .pipe(RuleObject)

// ---------------------------------------------------------------- audiences

export const MAX_MULTIPLIER = 100

export const AudiencePriceInput = strictObject({
  amount: z.number({error: (iss) => `expected a number, got ${show(iss.input)}`}).finite().nonnegative({error: (iss) => `must not be negative, got ${show(iss.input)}`}).nullable().optional(),
  currency: Currency.nullable().optional(),
  multiplier: z
    .number({error: (iss) => `expected a number, got ${show(iss.input)}`})
    .finite()
    .gt(0, {error: (iss) => `must be above 0, got ${show(iss.input)}`})
    .max(MAX_MULTIPLIER, {error: (iss) => `must be at most ${MAX_MULTIPLIER}, got ${show(iss.input)}`})
    .nullable()
    .optional(),
  product: RequiredId,
}).superRefine((p, ctx) => {
  const hasMultiplier = p.multiplier !== undefined && p.multiplier !== null
  const hasAmount = p.amount !== undefined && p.amount !== null
  if (hasMultiplier === hasAmount) {
    ctx.addIssue({code: 'custom', input: p, message: `give either multiplier or amount and currency for product ${show(p.product)}`, path: []})
    return
  }
  if (hasAmount) {
    if (!p.currency) ctx.addIssue({code: 'custom', input: p.currency, message: `is required with amount (price ${p.amount} of ${show(p.product)})`, path: ['currency']})
    else if (isCurrency(p.currency) && decimalPlaces(p.amount!) > minorDigits(p.currency)) {
      ctx.addIssue({code: 'custom', input: p.amount, message: `${p.amount} has more decimals than ${p.currency} allows (${minorDigits(p.currency)})`, path: ['amount']})
    }
  } else if (p.currency) {
    ctx.addIssue({code: 'custom', input: p.currency, message: `a multiplier takes no currency, got ${show(p.currency)}`, path: ['currency']})
  }
})
export type AudiencePriceInput = z.output<typeof AudiencePriceInput>

const Priority = z
  .number({error: (iss) => `expected a whole number, got ${show(iss.input)}`})
  .int({error: (iss) => `expected a whole number, got ${show(iss.input)}`})
  .min(-1_000_000, {error: (iss) => `must be at least -1000000, got ${show(iss.input)}`})
  .max(1_000_000, {error: (iss) => `must be at most 1000000, got ${show(iss.input)}`})

const audienceShape = {
  ...readOnly,
  api_id: RequiredId.refine((s) => s !== 'default', {error: '"default" is the audience of users no audience matches; choose another api_id'}),
  name: RequiredName,
  prices: z.array(AudiencePriceInput, {error: (iss) => `expected an array of audience prices, got ${show(iss.input)}`}).optional(),
  priority: Priority.optional(),
  rules: z.array(RuleInput, {error: (iss) => `expected an array of rules, got ${show(iss.input)}`}).max(100, {error: 'at most 100 rules'}).optional(),
  /** Read-only (printed beside `rules`), tolerated so a printed audience can be fed back; ignored. */
  rules_text: z.array(z.string()).optional(),
}

function uniqueProducts(prices: {product: string}[] | undefined, ctx: z.core.$RefinementCtx): void {
  const seen = new Set<string>()
  prices?.forEach((p, i) => {
    if (seen.has(p.product)) ctx.addIssue({code: 'custom', input: p.product, message: `product ${show(p.product)} has two audience prices`, path: ['prices', i, 'product']})
    seen.add(p.product)
  })
}

export const AudienceInput = strictObject(audienceShape).superRefine((a, ctx) => uniqueProducts(a.prices, ctx))
export type AudienceInput = z.output<typeof AudienceInput>

const RuleOutput = z.union([
  z.object({operator: z.enum(COUNTRY_OPERATORS), type: z.literal('country'), values: z.array(z.string())}),
  z.object({feature: z.string(), operator: z.enum(['eq', 'neq']), type: z.literal('feature'), value: z.union([z.string(), z.number(), z.boolean()])}),
  z.object({feature: z.string(), operator: z.enum(['gt', 'gte', 'lt', 'lte']), type: z.literal('feature'), value: z.number()}),
  z.object({feature: z.string(), operator: z.literal('in'), type: z.literal('feature'), values: z.array(z.union([z.string(), z.number(), z.boolean()]))}),
  z.object({feature: z.string(), operator: z.literal('exists'), type: z.literal('feature')}),
])

export const AudiencePriceOutput = z.object({
  amount: z.number().nullable(),
  currency: z.string().nullable(),
  multiplier: z.number().nullable(),
  product: z.string(),
})

export const AudienceOutput = z.object({
  api_id: z.string(),
  created_at: z.string(),
  name: z.string(),
  prices: z.array(AudiencePriceOutput),
  priority: z.number(),
  rules: z.array(RuleOutput),
  /** The rules in their text form, as flags take them. */
  rules_text: z.array(z.string()),
  updated_at: z.string(),
})
export type AudienceOutput = z.output<typeof AudienceOutput>

export const AudienceResponse = Envelope.extend({audience: AudienceOutput})
export const AudienceList = Envelope.extend({audiences: z.array(AudienceOutput)})
export const AudienceDeleted = Envelope.extend({api_id: z.string(), campaigns_deleted: z.array(z.string()), packages_deleted: z.array(z.string())})

// ---------------------------------------------------------------- packages

const AudienceRefInput = RequiredId.nullable().optional()

const packageShape = {
  ...readOnly,
  api_id: RequiredId,
  audience: AudienceRefInput,
  countries: Countries.optional(),
  name: RequiredName,
  products: ProductIds(1),
}

export const PackageInput = strictObject(packageShape)
export type PackageInput = z.output<typeof PackageInput>

export const PackageOutput = z.object({
  api_id: z.string(),
  audience: z.string().nullable(),
  countries: z.array(z.string()),
  created_at: z.string(),
  name: z.string(),
  products: z.array(z.string()),
  updated_at: z.string(),
})
export type PackageOutput = z.output<typeof PackageOutput>

export const PackageResponse = Envelope.extend({package: PackageOutput})
export const PackageList = Envelope.extend({packages: z.array(PackageOutput)})
export const PackageDeleted = Envelope.extend({api_id: z.string()})

// ---------------------------------------------------------------- campaigns

const WindowDate = z
  .string({error: (iss) => `expected an ISO date such as 2026-01-31, got ${show(iss.input)}`})
  .pipe(IsoDate)
  .nullable()
  .optional()

export const CAMPAIGN_STATES = ['active', 'scheduled', 'ended', 'coupon_not_active'] as const

export const CampaignInput = strictObject({
  ...readOnly,
  active_from: WindowDate,
  active_till: WindowDate,
  api_id: RequiredId,
  audience: AudienceRefInput,
  countries: Countries.optional(),
  coupon: RequiredId,
  name: RequiredName,
  products: ProductIds(0).optional(),
  /** Read-only (computed), tolerated so a printed campaign can be fed back. */
  state: z.string().optional(),
})
export type CampaignInput = z.output<typeof CampaignInput>

export const CampaignOutput = z.object({
  active_from: z.string().nullable(),
  active_till: z.string().nullable(),
  api_id: z.string(),
  audience: z.string().nullable(),
  countries: z.array(z.string()),
  coupon: z.string(),
  created_at: z.string(),
  name: z.string(),
  products: z.array(z.string()),
  /** Now: active, scheduled (window not started), ended, or coupon_not_active (the coupon cannot apply). */
  state: z.enum(CAMPAIGN_STATES),
  updated_at: z.string(),
})
export type CampaignOutput = z.output<typeof CampaignOutput>

export const CampaignResponse = Envelope.extend({campaign: CampaignOutput})
export const CampaignList = Envelope.extend({campaigns: z.array(CampaignOutput)})
export const CampaignDeleted = Envelope.extend({api_id: z.string()})
