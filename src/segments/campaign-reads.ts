import {NotFoundError} from '../errors.js'
import {windowEnd, windowStart} from '../schemas/no-zod.js'
import type {StoredCampaign} from '../store/port/segments.js'
import type {StorePort} from '../store/port.js'

/**
 * Campaigns as the price command reads them, over the segments repository of the storage
 * port. No zod: the writes, which validate with the campaign schema, are in ./campaigns.ts
 * (which re-exports this module), so a cold `price` loads no schema (docs/performance.md "Cold start").
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

/** A stored campaign as read: its window in UNIX seconds. */
function fromStored(r: StoredCampaign): Campaign {
  return {
    ...r,
    active_from_s: r.active_from === null ? null : windowStart(r.active_from),
    active_till_s: r.active_till === null ? null : windowEnd(r.active_till),
  }
}

export function listCampaigns(store: StorePort): Campaign[] {
  return store
    .segments.listCampaigns()
    .map((r) => fromStored(r))
}

export function getCampaign(store: StorePort, apiId: string): Campaign | undefined {
  const c = store.segments.getCampaigns([apiId])[0]
  return c && fromStored(c)
}

export function requireCampaign(store: StorePort, apiId: string): Campaign {
  const c = getCampaign(store, apiId)
  if (!c) throw new NotFoundError(`no campaign with api_id ${JSON.stringify(apiId)} (list them with: pricectl campaigns list)`)
  return c
}
