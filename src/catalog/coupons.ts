import {nowSeconds} from '../clock.js'
import {fromMinor} from '../currency.js'
import {NotFoundError} from '../errors.js'
import type {COUPON_SOURCES, CouponOutput} from '../schemas/catalog.js'
import {windowEnd, windowStart} from '../schemas/no-zod.js'
import type {StoredCoupon} from '../store/port/catalog.js'
import type {StorePort} from '../store/port.js'
/**
 * Coupons: the rules, over the catalog repository of the storage port (store.catalog; no
 * SQL here). A percentage coupon keeps its percent; a fixed-amount coupon keeps integer
 * minor units of its currency. Reading them needs no zod, so the price command loads this
 * module without the schemas (docs/performance.md "Cold start"); writing them validates
 * with the coupon schemas, in ./coupon-writes.ts.
 */

export type CouponSource = (typeof COUPON_SOURCES)[number]

/** A coupon as the price command reads it. */
export type Coupon = {
  active_from: null | string
  /** First second (UNIX) the coupon applies, or null (no start). */
  active_from_s: null | number
  active_till: null | string
  /** Last second (UNIX) the coupon applies (a bare date lasts through that day, UTC), or null. */
  active_till_s: null | number
  /** Fixed amount in minor units of `currency`; null for percentage coupons. */
  amount_minor: null | number
  api_id: string
  coupon_type: 'fixed_amount' | 'percentage'
  created_at: string
  currency: null | string
  /** Links to the same coupon in gateways; `id` is the service's own id of the link. */
  external: {external_id: string; id: number; source: CouponSource}[]
  id: number
  name: string
  /** Percent off (0 < p <= 100); null for fixed-amount coupons. */
  percent: null | number
  status: 'ACTIVE' | 'NOT_ACTIVE'
  updated_at: string
  /** The spec's `value`: the percent, or the fixed amount in currency units. */
  value: number
}

/** ISO 8601 with an explicit UTC offset, as the spec's created_at / updated_at. */
export function isoWithOffset(seconds = nowSeconds()): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')
}

export function fromStored(r: StoredCoupon): Coupon {
  return {
    ...r,
    active_from_s: r.active_from === null ? null : windowStart(r.active_from),
    active_till_s: r.active_till === null ? null : windowEnd(r.active_till),
    value: r.coupon_type === 'percentage' ? r.percent! : fromMinor(r.amount_minor!, r.currency!),
  }
}

/** The coupon with `apiId`, or undefined. */
export async function getCoupon(store: StorePort, apiId: string): Promise<Coupon | undefined> {
  const c = (await store.catalog.getCoupons([apiId]))[0]
  return c && fromStored(c)
}

export async function requireCoupon(store: StorePort, apiId: string): Promise<Coupon> {
  const c = await getCoupon(store, apiId)
  if (!c) throw new NotFoundError(`no coupon with api_id ${JSON.stringify(apiId)} (list them with: pricectl coupons list)`)
  return c
}

/**
 * Where a moment stands against an active window (UNIX seconds; null = open end). Both
 * ends are inside: `active_from`'s second is the first second a coupon or campaign applies,
 * `active_till`'s the last (a bare date: 23:59:59 UTC). Coupons, campaigns and the coupons
 * kept in locks all ask this one function, so they cannot disagree about a boundary.
 */
export function inWindow(w: {active_from_s: null | number; active_till_s: null | number}, seconds: number): 'after' | 'before' | 'inside' {
  if (w.active_from_s !== null && seconds < w.active_from_s) return 'before'
  if (w.active_till_s !== null && seconds > w.active_till_s) return 'after'
  return 'inside'
}

/** Whether a coupon can be applied at `seconds`: ACTIVE and inside its window. */
export function isCouponActive(c: Coupon, seconds = nowSeconds()): boolean {
  return c.status === 'ACTIVE' && inWindow(c, seconds) === 'inside'
}

/**
 * Coupons, optionally filtered. `name` matches case-insensitively anywhere in the
 * coupon's name ("spring" finds "Spring Sale 25%").
 */
export async function listCoupons(store: StorePort, filter: {name?: string; status?: string} = {}): Promise<Coupon[]> {
  const q = filter.name?.toLowerCase()
  return (await store.catalog
    .listCoupons())
    .map((c) => fromStored(c))
    .filter((c) => (q === undefined || c.name.toLowerCase().includes(q)) && (filter.status === undefined || c.status === filter.status))
}

/** The spec's coupon object. */
export async function couponResponse(store: StorePort, c: Coupon): Promise<CouponOutput> {
  return {
    active_from: c.active_from,
    active_till: c.active_till,
    api_id: c.api_id,
    coupon_external_coupons: c.external.map((e) => ({external_coupon: {id: e.external_id, source: e.source}})),
    coupon_type: {coupon_type: c.coupon_type},
    created_at: c.created_at,
    currency: c.currency,
    name: c.name,
    // The store's org_id setting, 1 unless configured (as src/store/settings.ts orgId).
    org: Number(await store.config.setting('org_id') ?? 1),
    status: c.status,
    updated_at: c.updated_at,
    value: c.value,
  }
}
