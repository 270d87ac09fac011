import {z} from 'zod'

import {decimalPlaces} from '../currency.js'
import {RequiredId} from './catalog.js'
import {Country, Envelope, Name} from './common.js'
import {BASELINE} from './no-zod.js'
import {PriceChange} from './price.js'

export {BASELINE}

/**
 * Experiment schemas: the body of `experiments create` / `update` (validated before
 * anything is written) and what each experiments command prints under --json (kept
 * under schemas/ as JSON Schema). See docs/experiments.md.
 */

const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v))

function strictObject<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown field ${iss.keys.map((k) => JSON.stringify(k)).join(', ')}` : iss.input === undefined ? 'is required' : `expected an object, got ${show(iss.input)}`),
  })
}

export const EXPERIMENT_TYPES = ['price', 'packaging'] as const
export const ALLOCATIONS = ['thompson', 'uniform'] as const
export const STATUSES = ['draft', 'running', 'stopped'] as const
export const MAX_ARMS = 20
export const MAX_MULTIPLIER = 100

/** Arm ids: 'baseline', a positive whole number, or a short name (not "0": that means "no experiment"). */
const armIdMessage = (input: unknown) =>
  `arm id must be "baseline", a whole number from 1 or a name (letters, digits, _ . -; starting with a letter), got ${show(input)}`
export const ArmId = z.union(
  [
    z.number({error: (iss) => armIdMessage(iss.input)}).int({error: (iss) => armIdMessage(iss.input)}).min(1, {error: (iss) => armIdMessage(iss.input)}).max(1_000_000, {error: (iss) => armIdMessage(iss.input)}),
    z
      .string({error: (iss) => armIdMessage(iss.input)})
      .regex(/^(?:[1-9]\d{0,6}|[A-Za-z][A-Za-z0-9_.-]{0,63})$/, {error: (iss) => armIdMessage(iss.input)})
      .transform((s) => (/^\d+$/.test(s) ? Number(s) : s)),
  ],
  {error: (iss) => armIdMessage(iss.input)},
)

const ProductList = z
  .array(RequiredId, {error: (iss) => `expected an array of product api_ids, got ${show(iss.input)}`})
  .min(1, {error: 'needs at least one product'})
  .superRefine((ps, ctx) => {
    const seen = new Set<string>()
    ps.forEach((p, i) => {
      if (seen.has(p)) ctx.addIssue({code: 'custom', input: p, message: `product ${JSON.stringify(p)} is listed twice`, path: [i]})
      seen.add(p)
    })
  })

export const ArmInput = strictObject({
  id: ArmId.optional(),
  multiplier: z
    .number({error: (iss) => `expected a number, got ${show(iss.input)}`})
    .finite()
    .gt(0, {error: (iss) => `must be above 0, got ${show(iss.input)}`})
    .max(MAX_MULTIPLIER, {error: (iss) => `must be at most ${MAX_MULTIPLIER}, got ${show(iss.input)}`})
    .nullable()
    .optional(),
  products: ProductList.nullable().optional(),
  usd_price: z
    .number({error: (iss) => `expected a number of US dollars, got ${show(iss.input)}`})
    .finite()
    .gt(0, {error: (iss) => `must be above 0, got ${show(iss.input)}`})
    .max(1_000_000_000, {error: (iss) => `${show(iss.input)} is too large`})
    .refine((n) => decimalPlaces(n) <= 2, {error: (iss) => `${show(iss.input)} has more decimals than USD allows (2)`})
    .nullable()
    .optional(),
})
export type ArmInput = z.output<typeof ArmInput>

const Countries = z
  .array(Country, {error: (iss) => `expected an array of country codes, got ${show(iss.input)}`})
  .max(300)
  .superRefine((cs, ctx) => {
    const seen = new Set<string>()
    cs.forEach((c, i) => {
      if (seen.has(c)) ctx.addIssue({code: 'custom', input: c, message: `${c} is listed twice`, path: [i]})
      seen.add(c)
    })
  })

export const Seed = z
  .number({error: (iss) => `expected a whole number, got ${show(iss.input)}`})
  .int({error: (iss) => `expected a whole number, got ${show(iss.input)}`})
  .min(0, {error: (iss) => `must be 0 or more, got ${show(iss.input)}`})
  .max(4_294_967_295, {error: (iss) => `must be at most 4294967295, got ${show(iss.input)}`})

const shape = {
  allocation: z.enum(ALLOCATIONS, {error: (iss) => `unknown allocation ${show(iss.input)} (expected thompson or uniform)`}),
  arms: z.array(ArmInput, {error: (iss) => `expected an array of arms, got ${show(iss.input)}`}).min(1, {error: 'needs at least one arm besides the baseline'}).max(MAX_ARMS, {error: `at most ${MAX_ARMS} arms`}),
  audience: RequiredId.nullable(),
  countries: Countries,
  name: z.string({error: (iss) => (iss.input === undefined ? 'is required' : `expected a string, got ${show(iss.input)}`)}).pipe(Name),
  products: ProductList,
  seed: Seed.nullable(),
  type: z.enum(EXPERIMENT_TYPES, {error: (iss) => `unknown experiment type ${show(iss.input)} (expected price or packaging)`}),
}

/** What `experiments create` accepts (flags overlay the body). */
export const ExperimentInput = strictObject({
  allocation: shape.allocation.default('thompson'),
  arms: shape.arms,
  audience: shape.audience.optional(),
  countries: shape.countries.optional(),
  name: shape.name,
  products: shape.products.optional(),
  seed: shape.seed.optional(),
  type: shape.type.default('price'),
}).superRefine((e, ctx) => checkArms(e, ctx))
export type ExperimentInput = z.output<typeof ExperimentInput>

/** `experiments update`: any field; arms given replace all arms. */
export const ExperimentPatch = strictObject({
  allocation: shape.allocation.optional(),
  arms: shape.arms.optional(),
  audience: shape.audience.optional(),
  countries: shape.countries.optional(),
  name: shape.name.optional(),
  products: shape.products.optional(),
  seed: shape.seed.optional(),
  type: shape.type.optional(),
})
export type ExperimentPatch = z.output<typeof ExperimentPatch>

type Issues = {addIssue: (i: {code: 'custom'; input: unknown; message: string; path: PropertyKey[]}) => void}

/** Arms fit the experiment type, ids are unique, and there is at least one arm besides the baseline. */
export function checkArms(e: {arms: ArmInput[]; products?: string[]; type: 'packaging' | 'price'}, ctx: Issues): void {
  const ids = new Map<string, number>()
  let others = 0
  e.arms.forEach((arm, i) => {
    const id = arm.id === undefined ? undefined : String(arm.id)
    if (id !== undefined) {
      if (ids.has(id)) ctx.addIssue({code: 'custom', input: arm.id, message: `arm id ${show(arm.id)} is used twice (also at arms[${ids.get(id)}])`, path: ['arms', i, 'id']})
      ids.set(id, i)
    }
    const isBaseline = id === BASELINE
    if (!isBaseline) others++
    const hasMultiplier = arm.multiplier !== undefined && arm.multiplier !== null
    const hasUsd = arm.usd_price !== undefined && arm.usd_price !== null
    const hasProducts = arm.products !== undefined && arm.products !== null
    if (e.type === 'price') {
      if (hasProducts) ctx.addIssue({code: 'custom', input: arm.products, message: 'product sets belong to packaging experiments; a price arm has multiplier or usd_price', path: ['arms', i, 'products']})
      if (isBaseline) {
        if (hasMultiplier || hasUsd) ctx.addIssue({code: 'custom', input: arm, message: 'the baseline arm is the control price: it takes no multiplier or usd_price', path: ['arms', i]})
      } else if (hasMultiplier === hasUsd) {
        ctx.addIssue({code: 'custom', input: arm, message: `a price arm needs exactly one of multiplier (e.g. 0.8) or usd_price (e.g. 12.99), got ${show(arm)}`, path: ['arms', i]})
      }
    } else {
      if (hasMultiplier || hasUsd) ctx.addIssue({code: 'custom', input: arm, message: 'a packaging arm is a product set ("products"), not a price', path: ['arms', i]})
      if (!isBaseline && !hasProducts) ctx.addIssue({code: 'custom', input: arm, message: `a packaging arm needs "products" (the product api_ids to show), got ${show(arm)}`, path: ['arms', i]})
    }
  })
  if (others === 0) ctx.addIssue({code: 'custom', input: e.arms, message: 'needs at least one arm besides the baseline (the baseline is always there)', path: ['arms']})
  if (e.type === 'price' && (!e.products || e.products.length === 0)) {
    ctx.addIssue({code: 'custom', input: e.products, message: 'a price experiment needs the products it prices (--product)', path: ['products']})
  }
}

// ------------------------------------------------------------------ outputs

export const ArmOutput = z.object({
  id: z.union([z.number(), z.string()]),
  multiplier: z.number().nullable(),
  products: z.array(z.string()).nullable(),
  usd_price: z.number().nullable(),
})

export const ExperimentOutput = z.object({
  allocation: z.enum(ALLOCATIONS),
  arms: z.array(ArmOutput),
  audience: z.string().nullable(),
  countries: z.array(z.string()),
  created_at: z.string(),
  id: z.number().int(),
  name: z.string(),
  products: z.array(z.string()),
  seed: z.number().int(),
  started_at: z.string().nullable(),
  status: z.enum(STATUSES),
  stopped_at: z.string().nullable(),
  type: z.enum(EXPERIMENT_TYPES),
  updated_at: z.string(),
})
export type ExperimentOutput = z.output<typeof ExperimentOutput>

export const ExperimentResponse = Envelope.extend({experiment: ExperimentOutput})
/** `experiments delete ID --json`. */
export const ExperimentDeleted = Envelope.extend({id: z.number()})
export const ExperimentList = Envelope.extend({experiments: z.array(ExperimentOutput)})

/** What an arm quotes for a product in the example country (results labels, conclude). */
export const ArmPrice = z.object({
  control: z.number(),
  country: z.string(),
  currency: z.string(),
  display: z.string(),
  pct_change: z.number().nullable(),
  price: z.number(),
  product: z.string(),
})

export const ArmResult = z.object({
  arm_id: z.union([z.number(), z.string()]),
  /** The price the arm sets, in words: "12.99 USD (+30%)", "x0.8 (-20%): e.g. pro_monthly 7.99 USD in US". */
  label: z.string(),
  /** Price experiments: what the arm quotes per product in the example country (the store's default, or the first targeted). */
  prices: z.array(ArmPrice),
  conversion_rate: z.number(),
  conversion_rate_ci: z.tuple([z.number(), z.number()]),
  conversions: z.number().int(),
  probability_best: z.number(),
  revenue: z.number(),
  revenue_per_visitor: z.number(),
  revenue_per_visitor_ci: z.tuple([z.number(), z.number()]),
  visitors: z.number().int(),
})
export type ArmResult = z.output<typeof ArmResult>

export const ExperimentResults = Envelope.extend({
  arms: z.array(ArmResult),
  /** The arm most likely best; null until some arm has a conversion. */
  best_arm: z.union([z.number(), z.string()]).nullable(),
  conversions: z.number().int(),
  draws: z.number().int(),
  experiment: ExperimentOutput,
  revenue: z.number(),
  /** Whether every arm reached the minimum sample; `warning` says which did not (also on stderr). */
  sample: z.object({enough: z.boolean(), min_conversions: z.number().int(), min_visitors: z.number().int(), warning: z.string().nullable()}),
  seed: z.number().int(),
  visitors: z.number().int(),
})
export type ExperimentResults = z.output<typeof ExperimentResults>

const Point = z.object({revenue_per_visitor: z.number(), visitors: z.number().int()})

export const PolicyResult = z.object({
  /** Visitors per arm over the whole run. */
  allocation: z.record(z.string(), z.number().int()),
  best_arm_share_last: z.number(),
  conversions: z.number().int(),
  revenue: z.number(),
  revenue_per_visitor: z.number(),
  series: z.array(Point),
})

export const SimulationResult = Envelope.extend({
  arms: z.array(
    z.object({
      arm_id: z.union([z.number(), z.string()]),
      conversion_probability: z.number(),
      price_usd: z.number(),
      true_revenue_per_visitor: z.number(),
    }),
  ),
  best_arm: z.union([z.number(), z.string()]),
  /** Ids of the experiments each policy ran as (in the simulation store; see --keep). */
  experiments: z.object({thompson: z.number().int().optional(), uniform: z.number().int().optional()}),
  last: z.number().int(),
  policies: z.object({oracle: PolicyResult, thompson: PolicyResult.optional(), uniform: PolicyResult.optional()}),
  product: z.string(),
  seed: z.number().int(),
  store: z.string().nullable(),
  visitors: z.number().int(),
})
export type SimulationResult = z.output<typeof SimulationResult>

/** `experiments conclude ID ARM --json`: what was (or, with --dry-run, would be) written, and the price impact. */
export const ExperimentConcluded = Envelope.extend({
  arm_id: z.union([z.number(), z.string()]),
  /** Every price that changes, product x country (lock-free previews before and after). */
  changes: z.array(PriceChange),
  dry_run: z.boolean(),
  experiment: ExperimentOutput,
  /** Per product: base_px and the country prices written. */
  products: z.array(
    z.object({
      base_px_after: z.number(),
      base_px_before: z.number(),
      country_prices: z.array(z.object({after: z.number(), before: z.number().nullable(), country: z.string(), currency: z.string()})),
      product: z.string(),
    }),
  ),
  stopped: z.boolean(),
  summary: z.string(),
})
