import type {CouponSource, FeatureOutput, IntegrationInput, ProductInterval, Trial} from '../../domain.js'

/**
 * The catalog part of the storage port (see ../port.ts): products (with their country
 * prices, integrations, features and trials) and coupons. Methods are synchronous and shaped
 * for bulk work: a single call is a chunk of one (`saveProducts([def])` is a create, a
 * products import passes the whole file). The engine (src/catalog/) validates; the
 * repository only reads and writes. A taken unique key raises UniqueConflictError
 * (./errors.ts). Money is integer minor units.
 */

export type CountryPrice = {amount_minor: number; country: string; currency: string}

export type FeatureGroupDef = {api_id: string; description: string; name: string}

/** A feature as saved, its group given by api_id (ids differ between stores). */
export type FeatureDef = {
  api_id: string
  description: string
  feature_group: FeatureGroupDef | null
  name: string
  status: 'active' | 'inactive'
  type: 'boolean' | 'numeric'
  unit: null | string
  value: number
}

export type {ProductInterval}

/** A product's whole definition in minor units, store-independent (baseline by api_id): what saveProducts writes. */
export type ProductDef = {
  api_id: string
  base_px_minor: number
  baseline: null | string
  country_prices: CountryPrice[]
  features: FeatureDef[]
  integrations: IntegrationInput[]
  interval: ProductInterval
  interval_count: number
  max_px_minor: null | number
  min_px_minor: null | number
  name: string
  product_trials: Trial[]
}

/** A stored product with everything hanging off it, lists in their saved order. */
export type Product = {
  api_id: string
  base_px_minor: number
  baseline_api_id: null | string
  baseline_id: null | number
  country_prices: CountryPrice[]
  created_at: string
  features: FeatureOutput[]
  id: number
  integrations: IntegrationInput[]
  interval: ProductInterval
  interval_count: number
  max_px_minor: null | number
  min_px_minor: null | number
  name: string
  product_trials: Trial[]
  updated_at: string
}

/** How many stored records point at a product (deleting it unlinks them). */
export type ProductUses = {audience_prices: number; charges: number; experiments: number; packages: number; subscriptions: number}

export type {CouponSource}

/** A coupon's definition: what saveCoupons writes. Percent for percentage coupons, minor units of `currency` for fixed ones. */
export type CouponDef = {
  active_from: null | string
  active_till: null | string
  amount_minor: null | number
  api_id: string
  coupon_type: 'fixed_amount' | 'percentage'
  currency: null | string
  external: {external_id: string; source: CouponSource}[]
  name: string
  percent: null | number
  status: 'ACTIVE' | 'NOT_ACTIVE'
}

/** A stored coupon: its definition plus ids and timestamps; `external[].id` is the store's id of the link. */
export type StoredCoupon = Omit<CouponDef, 'external'> & {
  created_at: string
  external: {external_id: string; id: number; source: CouponSource}[]
  id: number
  updated_at: string
}

/** What a save did, by api_id, in the order given. */
export type SaveResult = {inserted: string[]; updated: string[]}

export interface CatalogRepository {
  /**
   * What the store holds beyond what a new store is seeded with (settings, FX snapshot,
   * exponents) and its change history: table and row count, the biggest parents first
   * (products, coupons, ...); empty for a new store. `demo` refuses surprise writes with it.
   */
  storeContents(): Promise<{rows: number; table: string}[]>
  /** Every product, by api_id. One read of the whole catalog (a snapshot). */
  listProducts(): Promise<Product[]>
  /** The products with these api_ids, in the order given; unknown ones are left out. */
  getProducts(apiIds: readonly string[]): Promise<Product[]>
  /** Store ids of products by api_id; unknown api_ids are absent from the map. */
  productIds(apiIds: readonly string[]): Promise<Map<string, number>>
  /** api_ids of products by store id; unknown ids are absent from the map. */
  productApiIds(ids: readonly number[]): Promise<Map<number, string>>
  /** Feature groups by store id; unknown ids are absent from the map. */
  featureGroups(ids: readonly number[]): Promise<Map<number, FeatureGroupDef>>
  /**
   * Insert or replace whole products (an existing api_id is replaced: its lists as whole
   * lists), stamped `at`. Names may be swapped within one chunk; a baseline may name a product
   * further down the chunk. Feature groups are created or updated by api_id. Atomic.
   */
  saveProducts(defs: readonly ProductDef[], at: string): Promise<SaveResult>
  /** Records pointing at the product with store id `id`. */
  productUses(id: number): Promise<ProductUses>
  /** Delete a product (its lists go with it, products based on it lose their baseline); returns those products' api_ids. */
  deleteProduct(id: number): Promise<{baselineOf: string[]}>

  /** Every coupon, by api_id. */
  listCoupons(): Promise<StoredCoupon[]>
  /** The coupons with these api_ids, in the order given; unknown ones are left out. */
  getCoupons(apiIds: readonly string[]): Promise<StoredCoupon[]>
  /** Insert or replace whole coupons (external links as a whole list), stamped `at`. Atomic. */
  saveCoupons(defs: readonly CouponDef[], at: string): Promise<SaveResult>
  /** api_ids of the campaigns that apply the coupon with store id `id`, sorted. */
  couponCampaigns(id: number): Promise<string[]>
  /** Delete a coupon, its external links and the campaigns applying it. */
  deleteCoupon(id: number): Promise<void>
}

/** How an integration is stored: one row shape for every gateway (the gateway's id in gateway_ref). */
export type IntegrationRow = {currency: null | string; gateway_ref: string; interval: null | string; interval_count: null | number; type: IntegrationInput['type']}

/** The stored row of an integration. */
export function integrationRow(i: IntegrationInput): IntegrationRow {
  switch (i.type) {
    case 'gateway_a': {
      return {currency: null, gateway_ref: i.gateway_a_product_id, interval: null, interval_count: null, type: i.type}
    }

    case 'gateway_a_with_interval': {
      return {currency: null, gateway_ref: i.gateway_a_product_id, interval: i.interval, interval_count: i.interval_count, type: i.type}
    }

    case 'gateway_c': {
      return {currency: null, gateway_ref: i.gateway_c_plan_id, interval: null, interval_count: null, type: i.type}
    }

    case 'gateway_d': {
      return {currency: i.currency, gateway_ref: i.gateway_d_plan_id, interval: null, interval_count: null, type: i.type}
    }
  }
}

/** The integration a stored row describes. */
export function integrationFromRow(i: IntegrationRow): IntegrationInput {
  switch (i.type) {
    case 'gateway_a': {
      return {gateway_a_product_id: i.gateway_ref, type: 'gateway_a'}
    }

    case 'gateway_a_with_interval': {
      return {gateway_a_product_id: i.gateway_ref, interval: i.interval as 'month', interval_count: i.interval_count!, type: 'gateway_a_with_interval'}
    }

    case 'gateway_c': {
      return {gateway_c_plan_id: i.gateway_ref, type: 'gateway_c'}
    }

    case 'gateway_d': {
      return {currency: i.currency!, gateway_d_plan_id: i.gateway_ref, type: 'gateway_d'}
    }
  }
}

