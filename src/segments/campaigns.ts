import {getCoupon, inWindow, isCouponActive, isoWithOffset} from '../catalog/coupons.js'
import {nowSeconds} from '../clock.js'
import {ConflictError, InvalidInputError, NotFoundError} from '../errors.js'
import {windowEnd, windowStart} from '../schemas/catalog.js'
import {CampaignInput, type CampaignOutput} from '../schemas/segments.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'
import {resolveAudience, resolveProducts} from './common.js'

/**
 * Campaigns: a coupon applied automatically to users of a segment (countries and/or an
 * audience; none = everyone) inside an active window, optionally limited to products.
 */

export type Campaign = {
  active_from: null | string
  /** First second (UNIX) of the window, or null (open). */
  active_from_s: null | number
  active_till: null | string
  /** Last second (UNIX) of the window (a bare date lasts through that day, UTC), or null. */
  active_till_s: null | number
  api_id: string
  audience: null | string
  audience_id: null | number
  countries: string[]
  coupon: string
  coupon_id: number
  created_at: string
  id: number
  name: string
  /** Product api_ids the campaign is limited to; empty = every product of the quote. */
  products: string[]
  updated_at: string
}

type Row = Omit<Campaign, 'active_from_s' | 'active_till_s' | 'countries' | 'products'> & {countries_json: string; products_json: string}

function fromRow({countries_json: countries, products_json: products, ...r}: Row): Campaign {
  return {
    ...r,
    active_from_s: r.active_from === null ? null : windowStart(r.active_from),
    active_till_s: r.active_till === null ? null : windowEnd(r.active_till),
    countries: JSON.parse(countries) as string[],
    products: JSON.parse(products) as string[],
  }
}

const SELECT = `SELECT m.*, c.api_id AS coupon, a.api_id AS audience FROM campaigns m
  JOIN coupons c ON c.id = m.coupon_id LEFT JOIN audiences a ON a.id = m.audience_id`

export function listCampaigns(db: DB): Campaign[] {
  return (db.prepare(`${SELECT} ORDER BY m.api_id`).all() as Row[]).map((r) => fromRow(r))
}

export function getCampaign(db: DB, apiId: string): Campaign | undefined {
  const row = db.prepare(`${SELECT} WHERE m.api_id = ?`).get(apiId) as Row | undefined
  return row ? fromRow(row) : undefined
}

export function requireCampaign(db: DB, apiId: string): Campaign {
  const c = getCampaign(db, apiId)
  if (!c) throw new NotFoundError(`no campaign with api_id ${JSON.stringify(apiId)} (list them with: pricectl campaigns list)`)
  return c
}

/** Where a campaign stands now: its window first, then whether its coupon can apply. */
export function campaignState(db: DB, c: Campaign, seconds = nowSeconds()): CampaignOutput['state'] {
  const w = inWindow(c, seconds)
  if (w === 'before') return 'scheduled'
  if (w === 'after') return 'ended'
  const coupon = getCoupon(db, c.coupon)
  return coupon && isCouponActive(coupon, seconds) ? 'active' : 'coupon_not_active'
}

export function campaignResponse(db: DB, c: Campaign, seconds = nowSeconds()): CampaignOutput {
  return {
    active_from: c.active_from,
    active_till: c.active_till,
    api_id: c.api_id,
    audience: c.audience,
    countries: c.countries,
    coupon: c.coupon,
    created_at: c.created_at,
    name: c.name,
    products: c.products,
    state: campaignState(db, c, seconds),
    updated_at: c.updated_at,
  }
}

export function createCampaign(db: DB, input: unknown): Campaign {
  const c = validate(CampaignInput, input, 'campaign')
  const coupon = getCoupon(db, c.coupon)
  if (!coupon) throw new InvalidInputError(`invalid campaign: coupon: unknown coupon ${JSON.stringify(c.coupon)} (see "pricectl coupons list")`)
  const audienceId = resolveAudience(db, c.audience, 'campaign')
  const products = c.products ?? []
  resolveProducts(db, products, (i) => `products[${i}]`, 'campaign')
  if (c.active_from && c.active_till && windowStart(c.active_from) > windowEnd(c.active_till)) {
    throw new InvalidInputError(`invalid campaign: active_till: ${c.active_till} is before active_from ${c.active_from}`)
  }
  if (getCampaign(db, c.api_id)) throw new ConflictError(`api_id: campaign ${JSON.stringify(c.api_id)} already exists (delete it first with: pricectl campaigns delete ${c.api_id})`)
  const ts = isoWithOffset()
  db.prepare(
    'INSERT INTO campaigns (api_id, name, coupon_id, countries_json, audience_id, products_json, active_from, active_till, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(c.api_id, c.name, coupon.id, JSON.stringify(c.countries ?? []), audienceId, JSON.stringify(products), c.active_from ?? null, c.active_till ?? null, ts, ts)
  return getCampaign(db, c.api_id)!
}

export function deleteCampaign(db: DB, apiId: string): Campaign {
  const c = requireCampaign(db, apiId)
  db.prepare('DELETE FROM campaigns WHERE id = ?').run(c.id)
  return c
}
