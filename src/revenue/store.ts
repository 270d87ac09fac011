import {fromMinor} from '../currency.js'
import type {ChargeRecord, SubscriptionRecord, SubscriptionReduced} from '../schemas/revenue.js'
import type {DB} from '../store/db.js'
import {orgId} from '../store/settings.js'
import {centsToUsd} from './money.js'

/**
 * The revenue tables behind repository functions: rows as stored (minor units), the
 * spec's records as printed, and the prepared statements single writes and imports share.
 */

export type RecordKey = {origin: string; origin_id: string; user_id: string}

export type SubscriptionValues = {
  amount_minor: null | number
  amount_usd_minor: null | number
  amount_usd_monthly_minor: null | number
  cancel_at: null | number
  canceled_at: null | number
  country: null | string
  created: null | number
  currency: null | string
  interval: null | string
  interval_count: null | number
  latest_event_id: string
  latest_event_timestamp: number
  origin: string
  origin_id: string
  product_id: null | number
  status: string
  trial_end: null | number
  trial_start: null | number
  user_id: string
}
export type SubscriptionRow = SubscriptionValues & {id: number}

export type ChargeValues = {
  amount_minor: null | number
  amount_refunded_minor: number
  amount_refunded_usd_minor: number
  amount_usd_minor: null | number
  country: null | string
  created: null | number
  currency: null | string
  latest_event_id: string
  latest_event_timestamp: number
  metadata_json: null | string
  origin: string
  origin_id: string
  product_id: null | number
  status: string
  user_id: string
}
export type ChargeRow = ChargeValues & {id: number}

export const SUBSCRIPTION_COLUMNS = [
  'user_id',
  'origin',
  'origin_id',
  'product_id',
  'country',
  'created',
  'interval',
  'interval_count',
  'status',
  'cancel_at',
  'canceled_at',
  'trial_start',
  'trial_end',
  'currency',
  'amount_minor',
  'amount_usd_minor',
  'amount_usd_monthly_minor',
  'latest_event_timestamp',
  'latest_event_id',
] as const satisfies readonly (keyof SubscriptionValues)[]

export const CHARGE_COLUMNS = [
  'user_id',
  'origin',
  'origin_id',
  'product_id',
  'country',
  'created',
  'status',
  'currency',
  'amount_minor',
  'amount_refunded_minor',
  'amount_usd_minor',
  'amount_refunded_usd_minor',
  'metadata_json',
  'latest_event_timestamp',
  'latest_event_id',
] as const satisfies readonly (keyof ChargeValues)[]

export type Table = 'charges' | 'subscriptions'

function columnsOf(table: Table): readonly string[] {
  return table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
}

/**
 * Prepared statements per table, bound by name from a values object (extra keys are
 * ignored), so single writes and imports pass the same object without building arrays.
 */
export function statements(db: DB, table: Table) {
  const cols = columnsOf(table)
  const set = cols.filter((c) => !['origin', 'origin_id', 'user_id'].includes(c))
  return {
    del: db.prepare(`DELETE FROM ${table} WHERE user_id = ? AND origin = ? AND origin_id = ?`),
    /** Inserts, or reports 0 changes when the key exists (imports try this first). */
    insertNew: db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')}) ON CONFLICT (user_id, origin, origin_id) DO NOTHING`),
    latest: db.prepare(`SELECT latest_event_timestamp AS timestamp, latest_event_id AS id FROM ${table} WHERE user_id = ? AND origin = ? AND origin_id = ?`),
    /** Replace every column of an existing record. */
    replace: db.prepare(`UPDATE ${table} SET ${set.map((c) => `${c} = @${c}`).join(', ')} WHERE user_id = @user_id AND origin = @origin AND origin_id = @origin_id`),
    /** insertNew with positional values in *_COLUMNS order (imports pass row arrays). */
    insertRow: db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ON CONFLICT (user_id, origin, origin_id) DO NOTHING`),
    /** replace with positional values: the row without its key (user_id, origin, origin_id come first), then the key. */
    replaceRow: db.prepare(`UPDATE ${table} SET ${set.map((c) => `${c} = ?`).join(', ')} WHERE user_id = ? AND origin = ? AND origin_id = ?`),
  }
}

export type Statements = ReturnType<typeof statements>

export function subscriptionRow(db: DB, key: RecordKey): SubscriptionRow | undefined {
  return db.prepare('SELECT * FROM subscriptions WHERE user_id = ? AND origin = ? AND origin_id = ?').get(key.user_id, key.origin, key.origin_id) as SubscriptionRow | undefined
}

export function chargeRow(db: DB, key: RecordKey): ChargeRow | undefined {
  return db.prepare('SELECT * FROM charges WHERE user_id = ? AND origin = ? AND origin_id = ?').get(key.user_id, key.origin, key.origin_id) as ChargeRow | undefined
}

function money(minor: null | number, currency: null | string): null | number {
  return minor === null || currency === null ? null : fromMinor(minor, currency)
}

export function subscriptionRecord(row: SubscriptionValues, org: number): SubscriptionRecord {
  return {
    amount: money(row.amount_minor, row.currency),
    amount_usd: centsToUsd(row.amount_usd_minor),
    amount_usd_monthly: centsToUsd(row.amount_usd_monthly_minor),
    cancel_at: row.cancel_at,
    canceled_at: row.canceled_at,
    created: row.created,
    currency: row.currency,
    interval: row.interval,
    interval_count: row.interval_count,
    latest_event_id: row.latest_event_id,
    latest_event_timestamp: row.latest_event_timestamp,
    org_id: org,
    origin: row.origin,
    origin_id: row.origin_id,
    service_product_id: row.product_id,
    status: row.status,
    trial_end: row.trial_end,
    trial_start: row.trial_start,
    type: 'subscription',
    user_id: row.user_id,
  }
}

export function subscriptionReduced(row: SubscriptionValues, org: number): SubscriptionReduced {
  return {
    created: row.created,
    interval: row.interval,
    interval_count: row.interval_count,
    latest_event_id: row.latest_event_id,
    latest_event_timestamp: row.latest_event_timestamp,
    org_id: org,
    origin: row.origin,
    origin_id: row.origin_id,
    service_product_id2: row.product_id,
    status: row.status,
    type: 'subscription',
    user_id: row.user_id,
  }
}

export function chargeRecord(row: ChargeValues, org: number): ChargeRecord {
  return {
    amount: money(row.amount_minor, row.currency),
    amount_refunded: money(row.amount_refunded_minor, row.currency) ?? 0,
    amount_usd: centsToUsd(row.amount_usd_minor),
    created: row.created,
    currency: row.currency,
    latest_event_id: row.latest_event_id,
    latest_event_timestamp: row.latest_event_timestamp,
    metadata: row.metadata_json === null ? null : (JSON.parse(row.metadata_json) as Record<string, unknown>),
    org_id: org,
    origin: row.origin,
    origin_id: row.origin_id,
    service_product_id: row.product_id,
    status: row.status,
    type: 'charge',
    user_id: row.user_id,
  }
}

export {orgId}

// ---- lists ----

export type ListFilters = {
  limit?: number
  origin?: string
  product?: string
  since?: number
  status?: string
  until?: number
  user_id?: string
}

/** Rows of a table matching the filters, newest first, plus the total before the limit. */
export function listRows<R>(db: DB, table: Table, f: ListFilters): {rows: R[]; total: number} {
  const where: string[] = []
  const params: unknown[] = []
  if (f.user_id !== undefined) where.push('t.user_id = ?'), params.push(f.user_id)
  if (f.status !== undefined) where.push('t.status = ?'), params.push(f.status)
  if (f.origin !== undefined) where.push('t.origin = ?'), params.push(f.origin)
  if (f.product !== undefined) where.push('t.product_id = (SELECT id FROM products WHERE api_id = ?)'), params.push(f.product)
  if (f.since !== undefined) where.push('t.created >= ?'), params.push(f.since)
  if (f.until !== undefined) where.push('t.created < ?'), params.push(f.until)
  const w = where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''
  const total = (db.prepare(`SELECT count(*) AS n FROM ${table} t ${w}`).get(...params) as {n: number}).n
  const limit = f.limit && f.limit > 0 ? ` LIMIT ${Math.floor(f.limit)}` : ''
  const rows = db.prepare(`SELECT t.* FROM ${table} t ${w} ORDER BY t.created DESC, t.id DESC${limit}`).all(...params) as R[]
  return {rows, total}
}
