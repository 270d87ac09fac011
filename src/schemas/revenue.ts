import {z} from 'zod'

import {DECIMAL_SEPARATORS, THOUSANDS_SEPARATORS} from '../import/amounts.js'
import {Amount, Country, Currency, Envelope, Id, Origin, PositiveInt, RecurringInterval, Timestamp, userKeys} from './common.js'

/**
 * Revenue tracking: the spec's subscription and charge inputs and records, the event
 * fields every write carries, the import mapping file and the command outputs.
 */

export const SUBSCRIPTION_STATUSES = ['pending', 'trialing', 'active', 'canceled'] as const
export const CHARGE_STATUSES = ['pending', 'succeeded', 'failed'] as const
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number]
export type ChargeStatus = (typeof CHARGE_STATUSES)[number]

const show = (v: unknown) => JSON.stringify(v) ?? String(v)

export const SubscriptionStatus = z.enum(SUBSCRIPTION_STATUSES, {
  error: (iss) => `unknown status ${show(iss.input)} (expected one of ${SUBSCRIPTION_STATUSES.join(', ')})`,
})
export const ChargeStatus = z.enum(CHARGE_STATUSES, {
  error: (iss) => `unknown status ${show(iss.input)} (expected one of ${CHARGE_STATUSES.join(', ')})`,
})

/** The spec's integration objects, as `product` of a subscription or charge may carry one. */
export const IntegrationObject = z.discriminatedUnion(
  'type',
  [
    z.strictObject({gateway_a_product_id: Id, type: z.literal('gateway_a')}),
    z.strictObject({gateway_a_product_id: Id, interval: RecurringInterval, interval_count: PositiveInt, type: z.literal('gateway_a_with_interval')}),
    z.strictObject({gateway_c_plan_id: Id, type: z.literal('gateway_c')}),
    z.strictObject({currency: Currency, gateway_d_plan_id: Id, type: z.literal('gateway_d')}),
  ],
  {error: (iss) => `unknown integration type ${show((iss.input as {type?: unknown})?.type)} (expected gateway_a, gateway_a_with_interval, gateway_c or gateway_d)`},
)
export type IntegrationObject = z.output<typeof IntegrationObject>

/** `product`: an api_id string or an integration object; nested problems keep their path. */
export const ProductRef = z.unknown().transform((value, ctx): IntegrationObject | string => {
  if (value === undefined || value === null) {
    ctx.addIssue({code: 'custom', input: value, message: 'required: a product api_id or an integration object'})
    return z.NEVER
  }
  const schema = typeof value === 'string' ? Id : typeof value === 'object' && !Array.isArray(value) ? IntegrationObject : undefined
  if (!schema) {
    ctx.addIssue({code: 'custom', input: value, message: `expected a product api_id or an integration object, got ${show(value)}`})
    return z.NEVER
  }
  const r = schema.safeParse(value)
  if (r.success) return r.data as IntegrationObject | string
  for (const issue of r.error.issues) ctx.addIssue({code: 'custom', input: value, message: issue.message, path: issue.path as PropertyKey[]})
  return z.NEVER
})

/** Optional input fields: null in a body means "not given". */
const opt = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? undefined)

const CANCEL_FIELDS = ['cancel_at', 'canceled_at'] as const
const TRIAL_FIELDS = ['trial_start', 'trial_end'] as const

export type StatusFields = Partial<Record<(typeof CANCEL_FIELDS)[number] | (typeof TRIAL_FIELDS)[number], null | number>>

/** The spec's field rules: cancel fields only when canceled, trial fields only when trialing. */
export function statusRuleProblems(status: string, fields: StatusFields): {field: string; message: string}[] {
  const out: {field: string; message: string}[] = []
  if (status !== 'canceled') {
    for (const f of CANCEL_FIELDS) if (fields[f] !== undefined && fields[f] !== null) out.push({field: f, message: `provide ${f} only when status is canceled (status is ${show(status)})`})
  }
  if (status !== 'trialing') {
    for (const f of TRIAL_FIELDS) if (fields[f] !== undefined && fields[f] !== null) out.push({field: f, message: `provide ${f} only when status is trialing (status is ${show(status)})`})
  }
  return out
}

export type DateFields = StatusFields & {created?: null | number}

const when = (t: number) => `${t} (${new Date(t * 1000).toISOString().replace('.000Z', 'Z')})`

/**
 * The order of a subscription's moments: a trial ends no earlier than it starts, and a
 * subscription is not canceled, nor does it end, before it was created. (cancel_at before
 * canceled_at is allowed: a cancellation may be recorded after access already ended.)
 */
export function dateOrderProblems(f: DateFields): {field: string; message: string}[] {
  const out: {field: string; message: string}[] = []
  const has = (v: null | number | undefined): v is number => typeof v === 'number'
  if (has(f.trial_start) && has(f.trial_end) && f.trial_end < f.trial_start) {
    out.push({field: 'trial_end', message: `${when(f.trial_end)} is before trial_start ${when(f.trial_start)}`})
  }
  if (has(f.created)) {
    for (const k of CANCEL_FIELDS) {
      const v = f[k]
      if (has(v) && v < f.created) out.push({field: k, message: `${when(v)} is before created ${when(f.created)}`})
    }
  }
  return out
}

/** The refusal of a tax above its amount (the tax is part of the amount: the amount is gross). */
export function taxAboveAmount(tax: number | string, amount: number | string): string {
  return `${tax} is more than the amount ${amount} (amount is what the customer paid, tax included; tax is the part of it that is tax)`
}

function unknownKeys(allowed: readonly string[]) {
  return (iss: {code?: string; keys?: string[]}) =>
    iss.code === 'unrecognized_keys' ? `unknown field${iss.keys!.length === 1 ? '' : 's'} ${iss.keys!.map((k) => show(k)).join(', ')} (accepted: ${allowed.join(', ')})` : undefined
}

const subscriptionCreateShape = {
  amount: Amount,
  cancel_at: opt(Timestamp),
  canceled_at: opt(Timestamp),
  country: opt(Country),
  created: Timestamp,
  currency: Currency,
  origin: Origin,
  origin_id: Id,
  product: ProductRef,
  status: SubscriptionStatus,
  /** pricectl's addition (docs/revenue.md, "Tax"): the tax part of amount, default 0. */
  tax: opt(Amount),
  trial_end: opt(Timestamp),
  trial_start: opt(Timestamp),
  user_id: Id,
}

export const SubscriptionCreate = z
  .strictObject(subscriptionCreateShape, {error: unknownKeys(Object.keys(subscriptionCreateShape))})
  .transform((v) => ({...v, tax: v.tax ?? 0}))
  .superRefine((v, ctx) => {
    for (const p of [...statusRuleProblems(v.status, v), ...dateOrderProblems(v)]) ctx.addIssue({code: 'custom', input: v[p.field as keyof typeof v], message: p.message, path: [p.field]})
    if (v.tax > v.amount) ctx.addIssue({code: 'custom', input: v.tax, message: taxAboveAmount(v.tax, v.amount), path: ['tax']})
  })
export type SubscriptionCreate = z.output<typeof SubscriptionCreate>

const subscriptionUpdateShape = {
  amount: opt(Amount),
  cancel_at: opt(Timestamp),
  canceled_at: opt(Timestamp),
  created: opt(Timestamp),
  currency: opt(Currency),
  status: opt(SubscriptionStatus),
  tax: opt(Amount),
  trial_end: opt(Timestamp),
  trial_start: opt(Timestamp),
}
/** Update body; the status rules are checked against the status the record will have. */
export const SubscriptionUpdate = z.strictObject(subscriptionUpdateShape, {error: unknownKeys(Object.keys(subscriptionUpdateShape))})
export type SubscriptionUpdate = z.output<typeof SubscriptionUpdate>

/** Free-form key-value data, bounded so a charge stays a row and not a blob. */
export const Metadata = userKeys(
  z
    .record(z.string(), z.unknown(), {error: (iss) => `expected an object of key-value pairs, got ${show(iss.input)}`})
    .refine((m) => JSON.stringify(m).length <= 16_384, {error: 'must be at most 16384 characters as JSON'}),
  'metadata key',
)

const chargeCreateShape = {
  amount: Amount,
  amount_refunded: opt(Amount),
  country: opt(Country),
  created: Timestamp,
  currency: Currency,
  metadata: opt(Metadata),
  origin: Origin,
  origin_id: Id,
  product: ProductRef,
  status: ChargeStatus,
  /** pricectl's addition (docs/revenue.md, "Tax"): the tax part of amount, default 0. */
  tax: opt(Amount),
  user_id: Id,
}
export const ChargeCreate = z
  .strictObject(chargeCreateShape, {error: unknownKeys(Object.keys(chargeCreateShape))})
  .transform((v) => ({...v, amount_refunded: v.amount_refunded ?? 0, tax: v.tax ?? 0}))
  .superRefine((v, ctx) => {
    if (v.amount_refunded > v.amount) {
      ctx.addIssue({code: 'custom', input: v.amount_refunded, message: `${v.amount_refunded} is more than the amount ${v.amount}`, path: ['amount_refunded']})
    }
    if (v.tax > v.amount) ctx.addIssue({code: 'custom', input: v.tax, message: taxAboveAmount(v.tax, v.amount), path: ['tax']})
  })
export type ChargeCreate = z.output<typeof ChargeCreate>

const chargeUpdateShape = {
  amount: opt(Amount),
  created: opt(Timestamp),
  currency: opt(Currency),
  metadata: opt(Metadata),
  status: opt(ChargeStatus),
  tax: opt(Amount),
}
export const ChargeUpdate = z.strictObject(chargeUpdateShape, {
  error: (iss) => {
    if (iss.code === 'unrecognized_keys' && iss.keys.includes('amount_refunded')) {
      return 'amount_refunded is not accepted by an update (the spec refuses it): send the charge again with "pricectl charges create" and a newer --event-timestamp'
    }
    return unknownKeys(Object.keys(chargeUpdateShape))(iss)
  },
})
export type ChargeUpdate = z.output<typeof ChargeUpdate>

/**
 * What an import row must satisfy beyond what reading its cells guarantees (dates,
 * currency and mapped status are checked while reading): the same rules as create, with
 * the same messages, in plain objects without transforms, since they run for every row.
 */
export const ImportedCharge = z.object({
  amount: Amount,
  amount_refunded: Amount,
  country: Country.optional(),
  metadata: Metadata.optional(),
  origin_id: Id,
  product: Id,
  status: ChargeStatus,
  user_id: Id,
})
export const ImportedSubscription = z.object({
  amount: Amount,
  country: Country.optional(),
  origin_id: Id,
  product: Id,
  status: SubscriptionStatus,
  user_id: Id,
})

/** Every write is an event: an id (given or generated) and a timestamp (given or now). */
export const EventInput = z.object({event_id: Id, event_timestamp: Timestamp})

// ---- outputs ----

const ts = z.number().nullable()

export const SubscriptionRecord = z.object({
  amount: z.number().nullable(),
  amount_usd: z.number().nullable(),
  amount_usd_monthly: z.number().nullable(),
  cancel_at: ts,
  canceled_at: ts,
  created: ts,
  currency: z.string().nullable(),
  interval: z.string().nullable(),
  interval_count: z.number().nullable(),
  latest_event_id: z.string(),
  latest_event_timestamp: z.number(),
  org_id: z.number(),
  origin: z.string(),
  origin_id: z.string(),
  service_product_id: z.number().nullable(),
  status: z.string(),
  trial_end: ts,
  trial_start: ts,
  type: z.literal('subscription'),
  user_id: z.string(),
  // pricectl's additions (docs/revenue.md, "Tax"): amount is gross; tax is the part of it that is tax
  tax: z.number().nullable(),
  net: z.number().nullable(),
  /** What the subscription adds to MRR: amount_usd_monthly net of tax. */
  net_usd_monthly: z.number().nullable(),
})
export type SubscriptionRecord = z.output<typeof SubscriptionRecord>

/** What Get subscription returns: only the fields the spec lists, product id as service_product_id2. */
export const SubscriptionReduced = z.object({
  created: ts,
  interval: z.string().nullable(),
  interval_count: z.number().nullable(),
  latest_event_id: z.string(),
  latest_event_timestamp: z.number(),
  org_id: z.number(),
  origin: z.string(),
  origin_id: z.string(),
  service_product_id2: z.number().nullable(),
  status: z.string(),
  type: z.literal('subscription'),
  user_id: z.string(),
})
export type SubscriptionReduced = z.output<typeof SubscriptionReduced>

export const ChargeRecord = z.object({
  amount: z.number().nullable(),
  amount_refunded: z.number(),
  amount_usd: z.number().nullable(),
  created: ts,
  currency: z.string().nullable(),
  latest_event_id: z.string(),
  latest_event_timestamp: z.number(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  org_id: z.number(),
  origin: z.string(),
  origin_id: z.string(),
  service_product_id: z.number().nullable(),
  status: z.string(),
  type: z.literal('charge'),
  user_id: z.string(),
  // pricectl's additions (docs/revenue.md, "Tax"): amount is gross; tax is the part of it that is tax, net = amount - tax
  tax: z.number().nullable(),
  net: z.number().nullable(),
  tax_usd: z.number().nullable(),
  net_usd: z.number().nullable(),
})
export type ChargeRecord = z.output<typeof ChargeRecord>

/** Create/update/delete responses: record is null only when a repeated event id finds no record. */
export const SubscriptionWritten = Envelope.extend({record: SubscriptionRecord.nullable()})
export const SubscriptionGot = z.object({subscription: SubscriptionReduced, success: z.literal(true)})
export const SubscriptionList = Envelope.extend({subscriptions: z.array(SubscriptionRecord), total: z.number()})
export const ChargeWritten = Envelope.extend({record: ChargeRecord.nullable()})
export const ChargeGot = z.object({charge: ChargeRecord, success: z.literal(true)})
export const ChargeList = Envelope.extend({charges: z.array(ChargeRecord), total: z.number()})

/** One file of an import (`files` of the summary, in the order the files were written). */
export const ImportFileSummary = z.object({
  file: z.string(),
  inserted: z.number(),
  preset: z.string(),
  read: z.number(),
  rejected: z.number(),
  stale: z.number(),
  unchanged: z.number(),
  updated: z.number(),
})

export const ImportSummary = Envelope.extend({
  dry_run: z.boolean(),
  /** The path given (a file or a folder), resolved; several paths: joined with ", ". */
  file: z.string(),
  files: z.array(ImportFileSummary),
  inserted: z.number(),
  preset: z.string(),
  read: z.number(),
  rejected: z.number(),
  /** Rejected rows per kind of reason, the most frequent first. */
  rejected_by_reason: z.record(z.string(), z.number()),
  rejects_file: z.string().nullable(),
  rows_per_second: z.number(),
  seconds: z.number(),
  /** Charge rows whose USD amount is what the gateway settled (its converted amount in USD), and the total difference to the store's FX. */
  settled_usd: z.object({difference_usd: z.number(), difference_usd_minor: z.number().int(), rows: z.number()}),
  stale: z.number(),
  unchanged: z.number(),
  updated: z.number(),
})
export type ImportSummary = z.output<typeof ImportSummary>

const percent = z.number().nullable()

export const ReportRow = z.object({
  active_subscriptions: z.number(),
  arpu: z.number().nullable(),
  churned_subscriptions: z.number(),
  key: z.string(),
  mrr: z.number(),
  net_revenue: z.number(),
  new_subscriptions: z.number(),
  // MRR movements and rates (docs/revenue.md, "Metrics"): USD per month, percentages
  starting_mrr: z.number(),
  new_mrr: z.number(),
  expansion_mrr: z.number(),
  contraction_mrr: z.number(),
  churned_mrr: z.number(),
  reactivation_mrr: z.number(),
  net_new_mrr: z.number(),
  starting_customers: z.number(),
  customers: z.number(),
  new_customers: z.number(),
  reactivated_customers: z.number(),
  churned_customers: z.number(),
  logo_churn_rate: percent,
  revenue_churn_rate: percent,
  net_revenue_retention: percent,
  ltv: z.number().nullable(),
  // Live subscriptions adding no MRR (free plans, one-time products): in active_subscriptions, not in ARPU
  free_subscriptions: z.number(),
  // Tax (docs/revenue.md, "Tax"): net_revenue excludes it; tax collected on the same charges, and the two together
  tax: z.number(),
  gross_revenue: z.number(),
})
export type ReportRow = z.output<typeof ReportRow>

export const RevenueReport = Envelope.extend({
  by: z.enum(['week', 'month', 'quarter', 'country', 'product']),
  currency: z.literal('USD'),
  rows: z.array(ReportRow),
  since: z.string(),
  totals: ReportRow,
  until: z.string(),
})
export type RevenueReport = z.output<typeof RevenueReport>

const CohortMonth = z.object({
  customers: z.number(),
  logo_retention: percent,
  month: z.number(),
  mrr: z.number(),
  revenue_retention: percent,
})

export const RevenueCohorts = Envelope.extend({
  cohorts: z.array(z.object({cohort: z.string(), customers: z.number(), months: z.array(CohortMonth), mrr: z.number()})),
  currency: z.literal('USD'),
  since: z.string(),
  until: z.string(),
})
export type RevenueCohorts = z.output<typeof RevenueCohorts>

// ---- import mapping file (`--mapping FILE`); presets are written in the same shape ----

export const CHARGE_FIELDS = [
  'origin_id',
  'user_id',
  'created',
  'amount',
  'amount_refunded',
  'currency',
  'status',
  'product',
  'price',
  'country',
  'converted_amount',
  'converted_amount_refunded',
  'converted_currency',
  'tax',
] as const
export const SUBSCRIPTION_FIELDS = [
  'origin_id',
  'user_id',
  'created',
  'amount',
  'quantity',
  'currency',
  'status',
  'product',
  'country',
  'interval',
  'interval_count',
  'cancel_at',
  'canceled_at',
  'trial_start',
  'trial_end',
  'tax',
] as const

const Header = z.string().min(1, {error: 'a column name must not be empty'})
const Columns = z.union([Header, z.array(Header).min(1)], {error: (iss) => `expected a column name or a list of column names, got ${show(iss.input)}`})

export const ImportMapping = z.strictObject({
  /** Amounts in currency units ("9.99") or the gateway's integer minor units ("999"). */
  amount_unit: z.enum(['major', 'minor']).default('major'),
  /** Field -> column name, or a list of column names (the first non-empty cell wins). */
  columns: z.record(z.string(), Columns),
  /** Field -> a value for rows whose columns for it are missing or empty (such as a connected account's user id). */
  constants: z.record(z.string(), z.string().trim().min(1, {error: 'a constant must not be empty'})).optional(),
  description: z.string().optional(),
  /** The separator before decimals in the file's amounts (src/import/amounts.ts). */
  decimal_separator: z.enum(DECIMAL_SEPARATORS, {error: (iss) => `expected "." or ",", got ${show(iss.input)}`}).default('.'),
  /** Columns whose latest date is the row's event timestamp (default: every mapped date column). */
  event_timestamp: z.array(Header).optional(),
  kind: z.enum(['charges', 'subscriptions']).optional(),
  /** Extra columns copied into a charge's metadata, and/or a suffix marking metadata columns. */
  metadata: z.array(Header).optional(),
  metadata_suffix: z.string().min(1).optional(),
  origin: Origin,
  /** Integration types a product cell is matched against before trying api_ids. */
  product_types: z.array(z.enum(['gateway_a', 'gateway_a_with_interval', 'gateway_c', 'gateway_d'])).optional(),
  /** IANA zone of dates without an offset (default UTC); `--tz` overrides it. */
  time_zone: z.string().min(1).optional(),
  /** Statuses (case-insensitive) whose charge is fully refunded when no refunded amount is given. */
  refunded_statuses: z.array(z.string()).optional(),
  /** Status in the file (case-insensitive) -> the spec's status. Default: the spec's statuses as they are. */
  statuses: z.record(z.string(), z.string()).optional(),
  /** The separator between groups of thousands in the file's amounts; null (default): digits are never grouped. */
  thousands_separator: z
    .enum(THOUSANDS_SEPARATORS, {error: (iss) => `expected null or one of ${THOUSANDS_SEPARATORS.map((t) => JSON.stringify(t)).join(', ')}, got ${show(iss.input)}`})
    .nullable()
    .default(null),
})
export type ImportMapping = z.output<typeof ImportMapping>

export {Amount, Country, Currency, Id, Origin, PositiveInt, Timestamp}
