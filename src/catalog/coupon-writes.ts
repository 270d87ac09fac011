import {toMinor} from '../currency.js'
import {ConflictError, InvalidInputError, OperationalError} from '../errors.js'
import {CouponInput, CouponPatch} from '../schemas/catalog.js'
import {formatIssues} from '../schemas/validate.js'
import {exactnessCheck, type GatewayId} from '../pricing/gateways.js'
import type {CouponDef} from '../store/port/catalog.js'
import type {StorePort} from '../store/port.js'
import {type Coupon, fromStored, getCoupon, isoWithOffset, requireCoupon} from './coupons.js'
import {failRows, type Item, type RowError} from './products.js'

/**
 * Writing coupons (src/catalog/coupons.ts reads them): validated with the coupon schemas,
 * checked against the gateways, saved through the catalog repository of the storage port.
 */

function defOf(c: Coupon): CouponDef {
  return {
    active_from: c.active_from,
    active_till: c.active_till,
    amount_minor: c.amount_minor,
    api_id: c.api_id,
    coupon_type: c.coupon_type,
    currency: c.currency,
    external: c.external.map((e) => ({external_id: e.external_id, source: e.source})),
    name: c.name,
    percent: c.percent,
    status: c.status,
  }
}

/** A coupon as input (what `coupons get` prints, minus read-only fields), for merging an update. */
function inputOf(c: Coupon): Record<string, unknown> {
  return {
    active_from: c.active_from,
    active_till: c.active_till,
    api_id: c.api_id,
    coupon_external_coupons: c.external.map((e) => ({external_coupon: {id: e.external_id, source: e.source}})),
    coupon_type: {coupon_type: c.coupon_type},
    currency: c.currency,
    name: c.name,
    status: c.status,
    value: c.value,
  }
}

function parseDef(value: unknown, problems: string[]): CouponDef | undefined {
  const r = CouponInput.safeParse(value)
  if (!r.success) {
    problems.push(formatIssues(r.error.issues, value))
    return undefined
  }
  const c = r.data
  const type = c.coupon_type.coupon_type
  try {
    return {
      active_from: c.active_from ?? null,
      active_till: c.active_till ?? null,
      amount_minor: type === 'fixed_amount' ? toMinor(c.value, c.currency!, 'value') : null,
      api_id: c.api_id,
      coupon_type: type,
      currency: type === 'fixed_amount' ? c.currency! : null,
      external: (c.coupon_external_coupons ?? []).map((e) => ({external_id: e.external_coupon.id, source: e.external_coupon.source})),
      name: c.name,
      percent: type === 'percentage' ? c.value : null,
      status: c.status ?? 'ACTIVE',
    }
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error
    problems.push(error.message)
    return undefined
  }
}

/**
 * Why a fixed discount cannot be taken off exactly, or undefined when it can: the display
 * and the gateways of its external coupons (every gateway when it has none) must carry
 * the amount in its currency (1.005 KWD: Stripe takes KWD in steps of 0.010, Chargebee
 * with two decimals), else part of it would silently disappear from the price. Checked
 * when the amount, currency or external coupons change (a stored coupon keeps working).
 */
function amountProblem(check: Awaited<ReturnType<typeof exactnessCheck>>, d: CouponDef, old?: Coupon): string | undefined {
  if (d.coupon_type !== 'fixed_amount' || d.amount_minor === null || d.currency === null) return undefined
  if (old && old.amount_minor === d.amount_minor && old.currency === d.currency && JSON.stringify(old.external.map((e) => e.source)) === JSON.stringify(d.external.map((e) => e.source))) return undefined
  const gateways = [...new Set(d.external.map((e) => e.source.toLowerCase() as GatewayId))]
  const reason = check(d.amount_minor, d.currency, gateways)
  return reason === undefined ? undefined : `value: a fixed discount of ${reason}${gateways.length === 0 ? ' (a coupon with no external coupon may be used with any gateway)' : ''}`
}

/** Save the coupons that differ from the stored ones, in one chunk; an identical coupon is not touched (updated_at stays). */
/** A coupon's definition without its window: what stays when only active_from / active_till move. */
function withoutWindow(d: CouponDef): string {
  return JSON.stringify({...d, active_from: null, active_till: null})
}

/** `moved`: the updated coupons whose only change is their window (the demo's coupons follow today). */
async function writeDefs(store: StorePort, defs: CouponDef[], existing: Map<string, Coupon>): Promise<{inserted: string[]; moved: string[]; unchanged: string[]; updated: string[]}> {
  const unchanged: string[] = []
  const moved: string[] = []
  const changed: CouponDef[] = []
  for (const d of defs) {
    const old = existing.get(d.api_id)
    if (old && JSON.stringify(defOf(old)) === JSON.stringify(d)) unchanged.push(d.api_id)
    else {
      changed.push(d)
      if (old && withoutWindow(defOf(old)) === withoutWindow(d)) moved.push(d.api_id)
    }
  }
  const saved = await store.catalog.saveCoupons(changed, isoWithOffset())
  return {inserted: saved.inserted, moved, unchanged, updated: saved.updated}
}

export async function createCoupon(store: StorePort, input: unknown): Promise<Coupon> {
  const problems: string[] = []
  const d = parseDef(input, problems)
  if (!d) throw new InvalidInputError(`invalid coupon: ${problems.join('; ')}`)
  return await store.transaction(async () => {
    const problem = amountProblem(await exactnessCheck(store), d)
    if (problem) throw new InvalidInputError(`invalid coupon: ${problem}`)
    if (await getCoupon(store, d.api_id)) throw new ConflictError(`api_id: coupon ${JSON.stringify(d.api_id)} already exists (change it with: pricectl coupons update ${d.api_id} ...)`)
    await writeDefs(store, [d], new Map())
    return (await getCoupon(store, d.api_id))!
  }, {write: true})
}

/**
 * Update: given fields replace stored ones (external coupons as a whole list). Switching
 * to a percentage coupon drops the currency unless the update names one.
 */
export async function updateCoupon(store: StorePort, apiId: string, patch: Record<string, unknown>): Promise<{changed: boolean; coupon: Coupon}> {
  return await store.transaction(async () => {
    const existing = await requireCoupon(store, apiId)
    const parsed = CouponPatch.safeParse(patch)
    if (!parsed.success) throw new InvalidInputError(`invalid coupon update: ${formatIssues(parsed.error.issues, patch)}`)
    const fields = Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && !['created_at', 'org', 'updated_at'].includes(k)))
    if ('api_id' in fields && fields.api_id !== apiId) {
      throw new InvalidInputError(`api_id: ${JSON.stringify(fields.api_id)} cannot replace ${JSON.stringify(apiId)}; api_id is immutable (create a new coupon with: pricectl coupons create --api-id ...)`)
    }
    const merged = {...inputOf(existing), ...fields}
    const type = parsed.data.coupon_type?.coupon_type
    if (type === 'percentage' && !('currency' in fields)) merged.currency = null
    const problems: string[] = []
    const d = parseDef(merged, problems)
    if (!d) throw new InvalidInputError(`invalid coupon update: ${problems.join('; ')}`)
    const problem = amountProblem(await exactnessCheck(store), d, existing)
    if (problem) throw new InvalidInputError(`invalid coupon update: ${problem}`)
    const r = await writeDefs(store, [d], new Map([[apiId, existing]]))
    return {changed: r.unchanged.length === 0, coupon: (await getCoupon(store, apiId))!}
  }, {write: true})
}

/** Upsert complete coupons (demo): all validated first, nothing written on any failure; then one chunk. */
export async function upsertCoupons(store: StorePort, items: Item[]): Promise<{inserted: string[]; moved: string[]; unchanged: string[]; updated: string[]}> {
  const errors: RowError[] = []
  const defs: CouponDef[] = []
  const seen = new Set<string>()
  for (const item of items) {
    if (item.error !== undefined) {
      errors.push({label: item.label, message: item.error})
      continue
    }
    const problems: string[] = []
    const d = parseDef(item.value, problems)
    for (const message of problems) errors.push({label: item.label, message})
    if (!d) continue
    if (seen.has(d.api_id)) errors.push({label: item.label, message: `api_id: ${JSON.stringify(d.api_id)} appears twice`})
    seen.add(d.api_id)
    defs.push(d)
  }
  if (errors.length) failRows(errors, items.length)
  return await store.transaction(async () => {
    const existing = new Map(
      (await store.catalog
        .getCoupons(defs.map((d) => d.api_id)))
        .map((c) => fromStored(c))
        .map((c) => [c.api_id, c]),
    )
    const check = await exactnessCheck(store)
    for (const [i, d] of defs.entries()) {
      const problem = amountProblem(check, d, existing.get(d.api_id))
      if (problem) errors.push({label: items[i]?.label ?? d.api_id, message: problem})
    }
    if (errors.length) failRows(errors, items.length)
    return await writeDefs(store, defs, existing)
  }, {write: true})
}

/** Delete a coupon; one that campaigns use is kept unless `force` (the campaigns go with it). */
export async function deleteCoupon(store: StorePort, apiId: string, options: {force?: boolean} = {}): Promise<Coupon> {
  return await store.transaction(async () => {
    const c = await requireCoupon(store, apiId)
    const campaigns = await store.catalog.couponCampaigns(c.id)
    if (campaigns.length > 0 && !options.force) {
      throw new OperationalError(`coupon ${JSON.stringify(apiId)} is used by campaign${campaigns.length === 1 ? '' : 's'} ${campaigns.join(', ')}; pass --force to delete the coupon and those campaigns`)
    }
    await store.catalog.deleteCoupon(c.id)
    return c
  }, {write: true})
}
