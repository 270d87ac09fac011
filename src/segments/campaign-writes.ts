import {getCoupon, isoWithOffset} from '../catalog/coupons.js'
import {ConflictError, InvalidInputError, NotFoundError} from '../errors.js'
import {windowEnd, windowStart} from '../schemas/no-zod.js'
import {CampaignInput} from '../schemas/segments.js'
import {validate} from '../schemas/validate.js'
import type {StorePort} from '../store/port.js'
import {type Campaign, getCampaign, requireCampaign} from './campaigns.js'
import {resolveAudience, resolveProducts} from './common.js'

/** Writing campaigns (src/segments/campaigns.ts reads them): validated with the campaign schema. */

export async function createCampaign(store: StorePort, input: unknown): Promise<Campaign> {
  const c = validate(CampaignInput, input, 'campaign')
  return await store.transaction(async () => {
    const coupon = await getCoupon(store, c.coupon)
    if (!coupon) throw new NotFoundError(`invalid campaign: coupon: unknown coupon ${JSON.stringify(c.coupon)} (see "pricectl coupons list")`)
    const audienceId = await resolveAudience(store, c.audience, 'campaign')
    const products = c.products ?? []
    await resolveProducts(store, products, (i) => `products[${i}]`, 'campaign')
    if (c.active_from && c.active_till && windowStart(c.active_from) > windowEnd(c.active_till)) {
      throw new InvalidInputError(`invalid campaign: active_till: ${c.active_till} is before active_from ${c.active_from}`)
    }
    if (await getCampaign(store, c.api_id)) throw new ConflictError(`api_id: campaign ${JSON.stringify(c.api_id)} already exists (delete it first with: pricectl campaigns delete ${c.api_id})`)
    await store.segments.addCampaigns(
      [
        {
          active_from: c.active_from ?? null,
          active_till: c.active_till ?? null,
          api_id: c.api_id,
          audience_id: audienceId,
          countries: c.countries ?? [],
          coupon_id: coupon.id,
          name: c.name,
          products,
        },
      ],
      isoWithOffset(),
    )
    return (await getCampaign(store, c.api_id))!
  }, {write: true})
}

export async function deleteCampaign(store: StorePort, apiId: string): Promise<Campaign> {
  return await store.transaction(async () => {
    const c = await requireCampaign(store, apiId)
    await store.segments.deleteCampaign(c.id)
    return c
  }, {write: true})
}
