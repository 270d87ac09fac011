import {getCoupon, inWindow, isCouponActive} from '../catalog/coupons.js'
import {nowSeconds} from '../clock.js'
import {NotFoundError} from '../errors.js'
import {windowEnd, windowStart} from '../schemas/no-zod.js'
import type {CampaignOutput} from '../schemas/segments.js'
import type {StoredCampaign} from '../store/port/segments.js'
import type {StorePort} from '../store/port.js'
/**
 * Campaigns: a coupon applied automatically to users of a segment (countries and/or an
 * audience; none = everyone) inside an active window, optionally limited to products.
 * Reading them needs no zod, so the price command loads this module without the schemas
 * (docs/performance.md "Cold start"); writing them validates with the campaign schema, in
 * ./campaign-writes.ts.
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

function fromStored(r: StoredCampaign): Campaign {
  return {
    ...r,
    active_from_s: r.active_from === null ? null : windowStart(r.active_from),
    active_till_s: r.active_till === null ? null : windowEnd(r.active_till),
  }
}

export async function listCampaigns(store: StorePort): Promise<Campaign[]> {
  return (await store
    .segments.listCampaigns())
    .map((r) => fromStored(r))
}

export async function getCampaign(store: StorePort, apiId: string): Promise<Campaign | undefined> {
  const c = (await store.segments.getCampaigns([apiId]))[0]
  return c && fromStored(c)
}

export async function requireCampaign(store: StorePort, apiId: string): Promise<Campaign> {
  const c = await getCampaign(store, apiId)
  if (!c) throw new NotFoundError(`no campaign with api_id ${JSON.stringify(apiId)} (list them with: pricectl campaigns list)`)
  return c
}

/** Where a campaign stands now: its window first, then whether its coupon can apply. */
export async function campaignState(store: StorePort, c: Campaign, seconds = nowSeconds()): Promise<CampaignOutput['state']> {
  const w = inWindow(c, seconds)
  if (w === 'before') return 'scheduled'
  if (w === 'after') return 'ended'
  const coupon = await getCoupon(store, c.coupon)
  return coupon && isCouponActive(coupon, seconds) ? 'active' : 'coupon_not_active'
}

export async function campaignResponse(store: StorePort, c: Campaign, seconds = nowSeconds()): Promise<CampaignOutput> {
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
    state: await campaignState(store, c, seconds),
    updated_at: c.updated_at,
  }
}
