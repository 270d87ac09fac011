import {type Column, csv, recordTable, table} from '../render.js'
import {fromMinor} from '../../currency.js'
import {describeIntegration} from '../../schemas/catalog.js'
import type {Coupon} from '../../catalog/coupons.js'
import {nowSeconds} from '../../clock.js'
import type {Product} from '../../catalog/products.js'

/** Human output of the catalog commands (tables on stdout); --json prints the spec's shapes instead. */

const money = (minor: null | number, currency: string) => (minor === null ? '' : `${fromMinor(minor, currency)} ${currency}`)

export function billing(p: Pick<Product, 'interval' | 'interval_count'>): string {
  if (p.interval === 'one_time') return 'one time'
  return p.interval_count === 1 ? `every ${p.interval}` : `every ${p.interval_count} ${p.interval}s`
}

export function productDetail(p: Product): string {
  const parts = [
    recordTable([
      ['api_id', p.api_id],
      ['name', p.name],
      ['base price', money(p.base_px_minor, 'USD')],
      ['billing', billing(p)],
      ['price bounds', p.min_px_minor === null && p.max_px_minor === null ? '' : `${money(p.min_px_minor, 'USD') || '-'} .. ${money(p.max_px_minor, 'USD') || '-'}`],
      ['baseline', p.baseline_api_id ?? ''],
      ['integrations', p.integrations.map((i) => describeIntegration(i)).join('\n')],
      ['trials', p.product_trials.map((t) => `${t.interval_count} ${t.interval}${t.interval_count === 1 ? '' : 's'}`).join(', ')],
    ]),
  ]
  if (p.country_prices.length) {
    parts.push(
      table(p.country_prices, [
        {header: 'country', value: (c) => c.country},
        {header: 'price', value: (c) => fromMinor(c.amount_minor, c.currency)},
        {header: 'currency', value: (c) => c.currency},
      ]),
    )
  }
  if (p.features.length) {
    parts.push(
      table(p.features, [
        {header: 'feature', value: (f) => f.api_id},
        {header: 'name', value: (f) => f.name},
        {header: 'type', value: (f) => (f.type === 'numeric' ? `numeric ${f.value}${f.unit ? ' ' + f.unit : ''}` : 'boolean')},
        {header: 'status', value: (f) => f.status},
        {header: 'group', value: (f) => f.feature_group?.name ?? ''},
      ]),
    )
  }
  return parts.join('\n')
}

const productColumns: Column<Product>[] = [
  {header: 'api_id', value: (p) => p.api_id},
  {header: 'name', value: (p) => p.name},
  {header: 'base_px', value: (p) => fromMinor(p.base_px_minor, 'USD')},
  {header: 'billing', value: (p) => billing(p)},
  {header: 'min_px', value: (p) => (p.min_px_minor === null ? '' : fromMinor(p.min_px_minor, 'USD'))},
  {header: 'max_px', value: (p) => (p.max_px_minor === null ? '' : fromMinor(p.max_px_minor, 'USD'))},
  {header: 'countries', value: (p) => p.country_prices.length},
  {header: 'integrations', value: (p) => p.integrations.map((i) => describeIntegration(i)).join(' ')},
]

export const productsTable = (ps: Product[]) => table(ps, productColumns)
export const productsCsvList = (ps: Product[]) => csv(ps, productColumns)

export function couponValue(c: Coupon): string {
  return c.coupon_type === 'percentage' ? `${c.value}%` : `${c.value} ${c.currency}`
}

/**
 * The status people read: the stored status, and for an ACTIVE coupon whether its window
 * holds now ("ACTIVE, expired 2026-05-31", "ACTIVE, from 2026-03-01"); --json keeps the
 * stored status (the spec's field).
 */
export function couponStatus(c: Coupon, now = nowSeconds()): string {
  if (c.status !== 'ACTIVE') return c.status
  if (c.active_till_s !== null && now > c.active_till_s) return `ACTIVE, expired ${c.active_till}`
  if (c.active_from_s !== null && now < c.active_from_s) return `ACTIVE, from ${c.active_from}`
  return c.status
}

function window(c: Coupon): string {
  if (!c.active_from && !c.active_till) return 'always'
  return `${c.active_from ?? '…'} .. ${c.active_till ?? '…'}`
}

export function couponDetail(c: Coupon): string {
  return recordTable([
    ['api_id', c.api_id],
    ['name', c.name],
    ['discount', `${couponValue(c)} (${c.coupon_type})`],
    ['active', window(c)],
    ['status', couponStatus(c)],
    ['external coupons', c.external.map((e) => `${e.source}=${e.external_id}`).join('\n')],
    ['created', c.created_at],
    ['updated', c.updated_at],
  ])
}

const couponColumns: Column<Coupon>[] = [
  {header: 'api_id', value: (c) => c.api_id},
  {header: 'name', value: (c) => c.name},
  {header: 'discount', value: (c) => couponValue(c)},
  {header: 'active', value: (c) => window(c)},
  {header: 'status', value: (c) => couponStatus(c)},
  {header: 'external', value: (c) => c.external.map((e) => `${e.source}=${e.external_id}`).join(' ')},
]

export const couponsTable = (cs: Coupon[]) => table(cs, couponColumns)
// CSV keeps the stored status (ACTIVE / NOT_ACTIVE) for scripts; the window is in `active`.
export const couponsCsvList = (cs: Coupon[]) => csv(cs, couponColumns.map((c) => (c.header === 'status' ? {header: 'status', value: (x: Coupon) => x.status} : c)))
