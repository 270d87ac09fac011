import {Args, Flags} from '@oclif/core'

import {parseJsonValue, parseKeyValues} from '../input.js'
import {listFlags as viewFlags} from '../list-options.js'
import {type Column, csv, recordTable, table} from '../render.js'
import {requireMoment, resolveZone} from '../../dates.js'
import {InvalidInputError} from '../../errors.js'
import type {ChargeRecord, SubscriptionRecord, SubscriptionReduced} from '../../schemas/revenue.js'
import type {StorePort} from '../../store/port.js'
import {eventFrom, type EventRef} from '../../revenue/events.js'
import type {WriteResult} from '../../revenue/subscriptions.js'

/**
 * Flag shapes and conversions the subscription, charge and revenue commands share.
 * Conversions keep what they cannot convert as the raw string, so the zod schema
 * reports the field and the value the user typed.
 */

export const keyArgs = {
  user_id: Args.string({description: 'User id the record was created with', required: true}),
  origin: Args.string({description: 'Gateway that handled it: gateway_a, gateway_b or gateway_c', required: true}),
  origin_id: Args.string({description: 'The subscription or charge id at the origin', required: true}),
}

/**
 * The arguments of `subscriptions get` and `charges get`: the full key, or the gateway's id
 * alone (in the first place) when it names one record (src/revenue/lookup.ts).
 */
export const getArgs = {
  user_id: Args.string({description: "User id the record was created with; or the gateway's id alone (ORIGIN_ID) when no other record has it", required: true}),
  origin: Args.string({description: 'Gateway that handled it: gateway_a, gateway_b or gateway_c'}),
  origin_id: Args.string({description: 'The subscription or charge id at the origin'}),
}

export const bodyFlag = {
  body: Flags.string({description: "The spec's JSON body (FILE, or - for stdin); flags given beside it override its fields"}),
}

/** `--tz`: the zone of dates and date-times given without an offset (src/dates.ts reads them all). */
export const tzFlag = {
  tz: Flags.string({description: 'IANA time zone (such as Europe/Berlin) of dates and date-times given without an offset (default UTC)'}),
}

export const eventFlags = {
  'event-id': Flags.string({description: 'Id of the event this write is (default: a generated id); the same id twice is applied once', helpGroup: 'EVENT'}),
  'event-timestamp': Flags.string({
    description: 'When the event happened, UNIX seconds or ISO date/date-time (default: now); older than the record\'s latest event: "stale event ignored"',
    helpGroup: 'EVENT',
  }),
  ...tzFlag,
}

export const listFlags = {
  ...viewFlags,
  limit: Flags.integer({default: 100, description: 'Show at most this many (0: all)', min: 0}),
  output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
  product: Flags.string({description: 'Only records of this product (api_id)'}),
  since: Flags.string({description: 'Only records created at or after this moment (ISO date or date-time, or UNIX seconds)'}),
  status: Flags.string({description: 'Only records with this status'}),
  until: Flags.string({description: 'Only records created up to this moment, a date includes its whole day (ISO date or date-time, or UNIX seconds)'}),
  'user-id': Flags.string({description: 'Only records of this user'}),
  ...tzFlag,
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/** A flag's number, or the raw text for the schema to reject with its value. */
/** Flags of the subscription fields an update may change; create takes these, the key, country and product. */
export const subscriptionFieldFlags = {
  amount: Flags.string({description: 'Price of the subscription, in currency units'}),
  'cancel-at': Flags.string({description: 'Moment after which the customer has no access (only with status canceled; not before created)'}),
  'canceled-at': Flags.string({description: 'Moment the customer asked to cancel (only with status canceled; not before created)'}),
  created: Flags.string({description: 'When the subscription was initialised (UNIX seconds, ISO date or date-time)'}),
  currency: Flags.string({description: 'ISO 4217 currency of the amount'}),
  status: Flags.string({description: 'pending, trialing, active or canceled'}),
  tax: Flags.string({description: 'The tax part of the amount, in currency units (default 0): MRR counts the amount net of it'}),
  'trial-end': Flags.string({description: 'End of the trial (only with status trialing; not before trial-start)'}),
  'trial-start': Flags.string({description: 'Start of the trial (only with status trialing)'}),
  ...tzFlag,
}

type FlagValues<F> = {[K in keyof F]?: string}

/** The body fields of subscriptionFieldFlags. */
export function subscriptionFields(f: FlagValues<typeof subscriptionFieldFlags>): Record<string, unknown> {
  const zone = resolveZone(f.tz)
  return {
    amount: numberish(f.amount),
    cancel_at: momentFlag(f['cancel-at'], '--cancel-at', zone),
    canceled_at: momentFlag(f['canceled-at'], '--canceled-at', zone),
    created: momentFlag(f.created, '--created', zone),
    currency: f.currency,
    status: f.status,
    tax: numberish(f.tax),
    trial_end: momentFlag(f['trial-end'], '--trial-end', zone),
    trial_start: momentFlag(f['trial-start'], '--trial-start', zone),
  }
}

/** Flags of the charge fields an update may change (and metadata, described per command); create takes more. */
export const chargeFieldFlags = {
  amount: Flags.string({description: 'Price of the charge, in currency units'}),
  created: Flags.string({description: 'When the charge was initialised (UNIX seconds, ISO date or date-time)'}),
  currency: Flags.string({description: 'ISO 4217 currency of the amount'}),
  status: Flags.string({description: 'pending, succeeded or failed'}),
  tax: Flags.string({description: 'The tax part of the amount (the amount is what the customer paid, tax included), in currency units (default 0): revenue counts the amount net of it'}),
  ...tzFlag,
}

/** The body fields of chargeFieldFlags. */
export function chargeFields(f: FlagValues<typeof chargeFieldFlags>): Record<string, unknown> {
  return {amount: numberish(f.amount), created: momentFlag(f.created, '--created', resolveZone(f.tz)), currency: f.currency, status: f.status, tax: numberish(f.tax)}
}

export function numberish(s: string | undefined): number | string | undefined {
  if (s === undefined) return undefined
  const t = s.trim()
  return NUMBER.test(t) ? Number(t) : s
}

/**
 * A moment flag as UNIX seconds, read by the one date reader (src/dates.ts); an impossible
 * or unreadable value exits 2 naming the flag, the value and the accepted forms.
 */
export function momentFlag(value: string | undefined, flag: string, zone: string | undefined): number | undefined {
  return value === undefined ? undefined : requireMoment(value, flag, {zone}).seconds
}

/** `--product`: an api_id, or an integration object as JSON. */
export function productFlag(s: string | undefined): unknown {
  if (s === undefined) return undefined
  return s.trim().startsWith('{') ? parseJsonValue(s, '--product') : s
}

/** `--metadata`: one JSON object, or repeatable KEY=VALUE. */
export function metadataFlag(items: string[] | undefined): unknown {
  if (!items?.length) return undefined
  if (items.length === 1 && items[0].trim().startsWith('{')) return parseJsonValue(items[0], '--metadata')
  return parseKeyValues(items, '--metadata')
}

export function eventOf(flags: {'event-id'?: string; 'event-timestamp'?: string; tz?: string}): EventRef {
  return eventFrom({event_id: flags['event-id'], event_timestamp: momentFlag(flags['event-timestamp'], '--event-timestamp', resolveZone(flags.tz))})
}

/**
 * --since (inclusive) and --until (inclusive; a date-only value covers its whole day in
 * the zone) as [since, until) seconds.
 */
export function window(since: string | undefined, until: string | undefined, tz?: string): {since?: number; until?: number} {
  const zone = resolveZone(tz)
  const out: {since?: number; until?: number} = {}
  if (since !== undefined) out.since = requireMoment(since, '--since', {zone}).seconds
  if (until !== undefined) {
    const u = requireMoment(until, '--until', {zone})
    out.until = u.dayEnd ?? u.seconds + 1
  }
  if (out.since !== undefined && out.until !== undefined && out.until <= out.since) {
    throw new InvalidInputError(`--until ${until} is before --since ${since}`)
  }
  return out
}

/** A moment for people: ISO 8601 in UTC, to the second ("2026-01-10T00:00:00Z"). */
export function when(ts: null | number): string {
  return ts === null ? '' : new Date(ts * 1000).toISOString().replace('.000Z', 'Z')
}

/** A product for people: its api_id, never the store's internal id. */
export type ProductName = (id: null | number) => string

/** The api_ids of the products of some records, read in one call. */
export async function productNames(store: StorePort, records: readonly {service_product_id?: null | number; service_product_id2?: null | number}[]): Promise<ProductName> {
  const ids = new Set<number>()
  for (const r of records) {
    const id = r.service_product_id ?? r.service_product_id2
    if (typeof id === 'number') ids.add(id)
  }
  const names = ids.size > 0 ? await store.catalog.productApiIds([...ids]) : new Map<number, string>()
  return (id) => (id === null ? '(product deleted)' : (names.get(id) ?? '(product deleted)'))
}

const MOMENTS = new Set(['cancel_at', 'canceled_at', 'created', 'latest_event_timestamp', 'trial_end', 'trial_start'])

/**
 * One record (subscription, reduced subscription or charge) as a two-column table for
 * people: the product's api_id in place of its internal id, moments as ISO dates in UTC.
 * --json keeps the spec's fields.
 */
export function recordView(record: ChargeRecord | SubscriptionRecord | SubscriptionReduced, product: ProductName): string {
  const rows: [string, unknown][] = []
  for (const [k, v] of Object.entries(record)) {
    if (k === 'service_product_id' || k === 'service_product_id2') rows.push(['product', product(v as null | number)])
    else if (MOMENTS.has(k)) rows.push([k, typeof v === 'number' ? when(v) : v])
    else rows.push([k, v])
  }
  return recordTable(rows)
}

/**
 * What a create, update or delete prints and returns: the outcome, then the record when
 * this write created or changed it (not when it was stale, a duplicate or a delete).
 */
export async function reportWrite<R extends ChargeRecord | SubscriptionRecord>(log: (text: string) => void, r: WriteResult<R>, store: StorePort): Promise<{message: string; record: null | R; success: true}> {
  log(r.message)
  if (r.record && (r.outcome === 'created' || r.outcome === 'updated')) log(recordView(r.record, await productNames(store, [r.record])))
  return {message: r.message, record: r.record, success: true}
}

export function subscriptionColumns(product: ProductName): Column<SubscriptionRecord>[] {
  return [
    {header: 'user_id', value: (r) => r.user_id},
    {header: 'origin', value: (r) => r.origin},
    {header: 'origin_id', value: (r) => r.origin_id},
    {header: 'product', value: (r) => product(r.service_product_id)},
    {header: 'status', value: (r) => r.status},
    {header: 'created', value: (r) => when(r.created)},
    {header: 'interval', value: (r) => (r.interval ? `${r.interval_count} ${r.interval}` : '')},
    {header: 'amount', value: (r) => (r.amount === null ? '' : `${r.amount} ${r.currency}`)},
    {header: 'tax', value: (r) => r.tax},
    {header: 'amount_usd', value: (r) => r.amount_usd},
    {header: 'amount_usd_monthly', value: (r) => r.amount_usd_monthly},
  ]
}

export function chargeColumns(product: ProductName): Column<ChargeRecord>[] {
  return [
    {header: 'user_id', value: (r) => r.user_id},
    {header: 'origin', value: (r) => r.origin},
    {header: 'origin_id', value: (r) => r.origin_id},
    {header: 'product', value: (r) => product(r.service_product_id)},
    {header: 'status', value: (r) => r.status},
    {header: 'created', value: (r) => when(r.created)},
    {header: 'amount', value: (r) => (r.amount === null ? '' : `${r.amount} ${r.currency}`)},
    {header: 'tax', value: (r) => r.tax},
    {header: 'refunded', value: (r) => r.amount_refunded},
    {header: 'amount_usd', value: (r) => r.amount_usd},
  ]
}

/**
 * What `charges list` and `subscriptions list` print: the result as JSON (`--output json`),
 * the full records as CSV, or a table and the count.
 */
export function printList<R extends object>(
  cmd: {jsonEnabled(): boolean; log(text: string): void},
  output: string | undefined,
  list: {columns: Column<R>[]; fields: string[]; message: string; records: R[]; result: object},
): void {
  if (output === 'json' && !cmd.jsonEnabled()) cmd.log(JSON.stringify(list.result, null, 2))
  else if (output === 'csv') cmd.log(recordsCsv(list.records, list.fields).trimEnd())
  else {
    cmd.log(table(list.records, list.columns))
    cmd.log(list.message)
  }
}

/** CSV of full records: every field of the JSON, one column each. */
export function recordsCsv<R extends object>(records: R[], fields: string[]): string {
  return csv(
    records,
    fields.map((f) => ({header: f, value: (r: R) => (r as Record<string, unknown>)[f]})),
  )
}

export {table}
