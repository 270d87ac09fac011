import {fromMinor} from '../currency.js'
import type {ChargeRecord, SubscriptionRecord, SubscriptionReduced} from '../schemas/revenue.js'
import type {ChargeValues, RevenueTable, SubscriptionValues} from '../store/port/revenue.js'
import type {StorePort} from '../store/port.js'
import {centsToUsd} from './money.js'
import {netMonthly} from './tax.js'

/**
 * Revenue records: rows as stored (minor units, see the revenue part of the storage port,
 * src/store/port/revenue.ts) and the spec's records as printed.
 */

export {CHARGE_COLUMNS, SUBSCRIPTION_COLUMNS} from '../store/port/revenue.js'
export type {ChargeRow, ChargeValues, ListFilters, RecordKey, SubscriptionRow, SubscriptionValues} from '../store/port/revenue.js'
export type Table = RevenueTable

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
    tax: money(row.tax_minor, row.currency),
    net: row.amount_minor === null ? null : money(row.amount_minor - row.tax_minor, row.currency),
    net_usd_monthly: centsToUsd(netMonthly(row.amount_usd_monthly_minor, row.tax_minor, row.amount_minor)),
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
    tax: money(row.tax_minor, row.currency),
    net: row.amount_minor === null ? null : money(row.amount_minor - row.tax_minor, row.currency),
    tax_usd: row.amount_usd_minor === null ? null : centsToUsd(row.tax_usd_minor),
    net_usd: row.amount_usd_minor === null ? null : centsToUsd(row.amount_usd_minor - row.tax_usd_minor),
  }
}

/** The organisation records are printed with (one store = one organisation, 1 unless configured). */
export async function orgId(store: StorePort): Promise<number> {
  return Number(await store.config.setting('org_id') ?? 1)
}
