import {createProduct} from '../../src/catalog/products.js'
import type {Lock, LockedProduct} from '../../src/pricing/locks.js'
import {createAudience} from '../../src/segments/audiences.js'
import type {StorePort} from '../../src/store/port.js'
import {
  CHARGE_COLUMNS,
  type ChargeValues,
  type RecordKey,
  SUBSCRIPTION_COLUMNS,
  type SubscriptionValues,
} from '../../src/store/port/revenue.js'

/**
 * Shared fixtures of the storage-port contract tests (test/store-contract/): records built
 * the same way for every adapter. Catalog and segments rows are made through the engine.
 */

/** A monthly product; returns its id. */
export async function addProduct(store: StorePort, apiId: string, basePx = 10): Promise<number> {
  return (await createProduct(store, {api_id: apiId, base_px: basePx, interval: 'month', interval_count: 1, name: apiId})).id
}

/** An audience without rules; returns its id. */
export async function addAudience(store: StorePort, apiId: string): Promise<number> {
  return (await createAudience(store, {api_id: apiId, name: apiId, rules: []})).id
}

export function keyOf(v: {origin: string; origin_id: string; user_id: string}): RecordKey {
  return {origin: v.origin, origin_id: v.origin_id, user_id: v.user_id}
}

export function subscription(over: Partial<SubscriptionValues> & {product_id: null | number}): SubscriptionValues {
  return {
    amount_minor: 999,
    amount_usd_minor: 999,
    amount_usd_monthly_minor: 999,
    cancel_at: null,
    canceled_at: null,
    country: 'US',
    created: 1_767_225_600,
    currency: 'USD',
    interval: 'month',
    interval_count: 1,
    latest_event_id: 'evt_1',
    latest_event_timestamp: 100,
    origin: 'gateway_a',
    origin_id: 'sub_1',
    status: 'active',
    tax_minor: 0,
    trial_end: null,
    trial_start: null,
    user_id: 'u1',
    ...over,
  }
}

export function charge(over: Partial<ChargeValues> & {product_id: null | number}): ChargeValues {
  return {
    amount_minor: 5000,
    amount_refunded_minor: 0,
    amount_refunded_usd_minor: 0,
    amount_usd_minor: 5000,
    country: 'DE',
    created: 1_767_225_600,
    currency: 'USD',
    latest_event_id: 'evt_1',
    latest_event_timestamp: 100,
    metadata_json: null,
    origin: 'gateway_a',
    origin_id: 'ch_1',
    status: 'succeeded',
    tax_minor: 0,
    tax_refunded_usd_minor: 0,
    tax_usd_minor: 0,
    user_id: 'u1',
    ...over,
  }
}

/** An import row: the values as an array in the table's column order. */
export function subscriptionRow(v: SubscriptionValues): unknown[] {
  return SUBSCRIPTION_COLUMNS.map((c) => v[c])
}

export function chargeRow(v: ChargeValues): unknown[] {
  return CHARGE_COLUMNS.map((c) => v[c])
}

/** A stored row without its surrogate id (ids are the adapter's business). */
export function withoutId<T extends {id: number}>(row: T | undefined): Omit<T, 'id'> | undefined {
  if (!row) return row
  const {id: _id, ...rest} = row
  return rest
}

/** A locked product at `price` minor units (EUR, monthly, base layer). */
export const lockedProduct = (price: number, more: Partial<LockedProduct> = {}): LockedProduct => ({
  baseline_minor: null,
  control_minor: price,
  currency: 'EUR',
  interval: 'month',
  interval_count: 1,
  layer: 'base',
  price_minor: price,
  ...more,
})

/** A stored quote for `key` (a user id, or an anonymous key), priced for DE in EUR. */
export function lock(key: string, more: Partial<Lock> = {}): Lock {
  const anonymous = more.anonymous ?? false
  return {
    anonymous,
    arm_id: 0,
    country: 'DE',
    created_at: '2026-01-01T00:00:00.000Z',
    currency: 'EUR',
    experiment_id: 0,
    ip: null,
    lock_key: key,
    package_id: null,
    quote: {
      audience: {api_id: 'default', name: 'default'},
      country_source: 'request',
      currency_source: 'currency of DE',
      experiment_type: null,
      matching_audiences: [],
      products: {basic: lockedProduct(999)},
      products_to_select: [],
    },
    updated_at: '2026-01-01T00:00:00.000Z',
    user_id: anonymous ? null : key,
    ...more,
  }
}
