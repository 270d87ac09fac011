import type {FeatureOutput, Lock, Trial} from '../domain.js'
import {packQuote, unpackQuote} from '../pricing/locks.js'
import {type CountryPrice, integrationFromRow, type IntegrationRow, type Product} from './port/catalog.js'
import type {Experiment, ExperimentProduct} from './port/experiments.js'
import {eventOfRecord, SUBSCRIPTION_COLUMNS, type SubscriptionEvent, type SubscriptionValues} from './port/revenue.js'

/**
 * How both adapters turn their stored rows into the port's values: a locks row into a Lock
 * (its quote unpacked, src/pricing/locks.ts), a product's row and lists into a Product, an
 * experiment's rows into an Experiment, an import row into a subscription event. The port
 * (./port.ts) only describes the values; the adapters (./sqlite/, ./postgres/) share these
 * mappings so a store reads the same whichever adapter holds it.
 */

// ---- locks

/** A locks row as both adapters select it (their COLUMNS order), values in array mode. */
export type LockRow = [string, null | string, null | string, number, string, string, null | string, number, string, string, string, string]

/**
 * loadLockFingerprints' text of a locks row: the values it stands for as a JSON array (a
 * text that ends where the array ends), then a comma and the stored quote.
 */
export function lockFingerprint(row: LockRow | undefined): string | undefined {
  if (!row) return undefined
  const quote = row[9] as null | string
  return JSON.stringify([row[4], row[5], row[6], row[7], row[8]]) + (quote === null ? '' : `,${quote}`)
}

/** The locks row a Lock is stored as (lockFromRow's inverse): the quote packed, the arm as text. */
export function lockRow(l: Lock): LockRow {
  return [l.lock_key, l.user_id, l.ip, l.anonymous ? 1 : 0, l.country, l.currency, l.package_id, l.experiment_id, String(l.arm_id), packQuote(l), l.created_at, l.updated_at]
}

/** The port's Lock from a stored locks row: one mapping for every adapter. */
export function lockFromRow(row: LockRow | undefined): Lock | undefined {
  if (!row) return undefined
  const arm = row[8]
  return {
    anonymous: row[3] === 1,
    arm_id: arm === '0' ? 0 : /^\d+$/.test(arm) ? Number(arm) : arm,
    country: row[4],
    created_at: row[10],
    currency: row[5],
    experiment_id: row[7],
    ip: row[2],
    lock_key: row[0],
    package_id: row[6],
    quote: unpackQuote(row[9], row[5]),
    updated_at: row[11],
    user_id: row[1],
  }
}

// ---- products

/** A product's own row, without its lists (how both adapters read the products table). */
export type ProductRecord = Omit<Product, 'baseline_api_id' | 'country_prices' | 'features' | 'integrations' | 'product_trials'>

/** A product's lists as the adapters read them, one map per list keyed by product id. */
export type ProductLists = {
  /** Baseline product id -> its api_id. */
  baselines: Map<number, string>
  features: Map<number, (Omit<FeatureOutput, 'feature_group'> & {g_api_id: null | string; g_description: null | string; g_name: null | string})[]>
  integrations: Map<number, IntegrationRow[]>
  prices: Map<number, CountryPrice[]>
  trials: Map<number, Trial[]>
}

/** One product from its row and its lists: the one place a stored product becomes the port's Product. */
export function productFromRecord(r: ProductRecord, lists: ProductLists): Product {
  return {
    api_id: r.api_id,
    base_px_minor: r.base_px_minor,
    baseline_api_id: r.baseline_id === null ? null : (lists.baselines.get(r.baseline_id) ?? null),
    baseline_id: r.baseline_id,
    country_prices: (lists.prices.get(r.id) ?? []).map(({amount_minor, country, currency}) => ({amount_minor, country, currency})),
    created_at: r.created_at,
    features: (lists.features.get(r.id) ?? []).map((f) => ({
      api_id: f.api_id,
      description: f.description,
      feature_group: f.group_id === null ? null : {api_id: f.g_api_id!, description: f.g_description ?? '', id: f.group_id, name: f.g_name!},
      group_id: f.group_id,
      name: f.name,
      status: f.status,
      type: f.type,
      unit: f.unit,
      value: f.value,
    })),
    id: r.id,
    integrations: (lists.integrations.get(r.id) ?? []).map((i) => integrationFromRow(i)),
    interval: r.interval,
    interval_count: r.interval_count,
    max_px_minor: r.max_px_minor,
    min_px_minor: r.min_px_minor,
    name: r.name,
    product_trials: (lists.trials.get(r.id) ?? []).map(({interval, interval_count}) => ({interval, interval_count})),
    updated_at: r.updated_at,
  }
}

// ---- experiments

/** An experiments row as both adapters select it (with its audience's api_id). */
export type ExperimentRecord = Omit<Experiment, 'arms' | 'countries' | 'products'> & {countries_json: string}

/** An arms row as both adapters select it. */
export type ArmRecord = {arm_id: string; multiplier: null | number; products_json: null | string; usd_price_minor: null | number}

/** One experiment from its row, its arms and its products (in their stored order): one mapping for every adapter. */
export function experimentFromRecord(r: ExperimentRecord, arms: readonly ArmRecord[], products: readonly (ExperimentProduct & {experiment_id: number})[]): Experiment {
  const {countries_json: countries, ...rest} = r
  return {
    ...rest,
    arms: arms.map((a) => ({id: a.arm_id, multiplier: a.multiplier, products: a.products_json === null ? null : (JSON.parse(a.products_json) as string[]), usd_price_minor: a.usd_price_minor})),
    countries: JSON.parse(countries) as string[],
    products: products.map(({experiment_id: _e, ...p}) => p),
  }
}

// ---- subscription events

/**
 * The event of a subscription import row (SUBSCRIPTION_IMPORT_COLUMNS, or SUBSCRIPTION_COLUMNS
 * alone): the record's values at the row's event, with the trial dates the row showed.
 */
export function eventOfImportRow(row: readonly unknown[]): SubscriptionEvent {
  const v: Record<string, unknown> = {}
  SUBSCRIPTION_COLUMNS.forEach((c, i) => (v[c] = row[i]))
  const e = eventOfRecord(v as SubscriptionValues)
  const n = SUBSCRIPTION_COLUMNS.length
  e.trial_start = (row[n] as null | number | undefined) ?? e.trial_start
  e.trial_end = (row[n + 1] as null | number | undefined) ?? e.trial_end
  return e
}
