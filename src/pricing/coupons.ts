import type {z} from 'zod'

import {type Coupon, inWindow, listCoupons} from '../catalog/coupons.js'
import {nowSeconds} from '../clock.js'
import {convertMinor, fromMinor} from '../currency.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import type {CouponBlock, PriceRequest} from '../schemas/price.js'
import {type Campaign, listCampaigns} from '../segments/campaigns.js'
import {segmentText} from '../segments/common.js'
import type {StorePort} from '../store/port.js'
import type {Lock, LockedCoupon, LockedProduct} from './locks.js'
import type {PricingServices, Trace} from './types.js'

// ---------------------------------------------------------------- pure arithmetic

/**
 * Price after a percentage coupon, exact in integers: the discount (price x percent) is
 * rounded half up to the minor unit, so a half cent goes to the buyer. Never below zero.
 */
export function percentOff(priceMinor: number, percent: number): number {
  // Percentages have at most 2 decimals: hundredths of a percent are whole numbers.
  const hundredths = BigInt(Math.round(percent * 100))
  const price = BigInt(priceMinor)
  const discount = (price * hundredths * 2n + 10_000n) / 20_000n
  const after = price - discount
  return after < 0n ? 0 : Number(after)
}

/** Price after a fixed discount (already in the price's currency and minor unit); never below zero. */
export function amountOff(priceMinor: number, discountMinor: number): number {
  return Math.max(0, priceMinor - discountMinor)
}

/** `YYYY-MM-DD HH:MM:SS`, UTC, as the spec writes valid_till. */
export function utcText(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')
}

/** The request's mapping product -> "c1,c2" as lists, in the given order, without repeats. */
export function parseMapping(coupons: Record<string, string> | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const [product, list] of Object.entries(coupons ?? {})) {
    out.set(product, [...new Set(list.split(',').map((c) => c.trim()).filter(Boolean))])
  }
  return out
}

/** Why a coupon cannot be applied now, or undefined when it can (ACTIVE and inside its window). */
export function inactiveReason(c: Coupon, seconds: number): string | undefined {
  if (c.status !== 'ACTIVE') return `${c.api_id} is ${c.status}`
  const w = inWindow(c, seconds)
  if (w === 'before') return `${c.api_id} is not active yet: it starts ${utcText(c.active_from_s!)} UTC`
  if (w === 'after') return `${c.api_id} has expired: it ended ${utcText(c.active_till_s!)} UTC`
  return undefined
}

/** A locked coupon is shown through the last second of its validity (valid_till), like a coupon in its window. */
function stillValid(c: LockedCoupon, seconds: number): boolean {
  return inWindow({active_from_s: null, active_till_s: c.valid_till_s}, seconds) === 'inside'
}

/** A coupon considered for a product: the price after it, and before that was made chargeable (`exactMinor`). */
type Candidate = {campaign: Campaign | null; coupon: Coupon; exactMinor: number; priceMinor: number}

/**
 * Coupon layer (DESIGN step 7): the request's `coupons` mapping and campaigns. Several
 * coupons for one product do not stack: each is computed on the price and the one that
 * gives the lowest price wins (the first given on a tie). `price` stays pre-coupon; the
 * coupon block carries the price after it.
 */
export class Coupons {
  private readonly ctx: PricingServices
  private coupons = new Map<string, Coupon>()
  private campaignList: Campaign[] = []

  constructor(ctx: PricingServices) {
    this.ctx = ctx
  }

  /** Every coupon and campaign, read once per context (by PricingContext). */
  async load(store: StorePort): Promise<void> {
    this.coupons = new Map((await listCoupons(store)).map((c) => [c.api_id, c]))
    this.campaignList = await listCampaigns(store)
  }

  private coupon(apiId: string): Coupon | undefined {
    return this.coupons.get(apiId)
  }

  private campaigns(): Campaign[] {
    return this.campaignList
  }

  /** Validate the request's coupon mapping before anything is written: coupons must exist, products must be requested. */
  prepare(req: PriceRequest): void {
    if (!req.coupons) return
    const problems: string[] = []
    const unknown: string[] = []
    for (const [product, ids] of parseMapping(req.coupons)) {
      if (req.products && !req.products.includes(product)) problems.push(`coupons.${product}: product "${product}" is not in this request (products: ${req.products.join(', ')})`)
      for (const id of ids) if (!this.coupon(id)) unknown.push(`coupons.${product}: unknown coupon "${id}"`)
    }
    // A malformed mapping is invalid input (exit 2, HTTP 400); a coupon that does not exist is not found (exit 1, HTTP 404).
    if (problems.length) throw new InvalidInputError(`invalid price request: ${problems.join('; ')}`)
    if (unknown.length) throw new NotFoundError(`invalid price request: ${unknown.join('; ')} (see "pricectl coupons list")`)
  }

  /**
   * Give the lock's products their coupon. A new lock: every product, from the mapping and
   * from campaigns. A reused lock (`scope`): a product keeps the coupon it was locked with
   * while that is valid; one without gets a coupon from the mapping, and a product new to the
   * lock (`scope.fresh`) from campaigns too. Returns whether the lock changed.
   */
  apply(lock: Lock, req: PriceRequest, trace: Trace, scope?: {fresh: Set<string>; products: string[]}): boolean {
    // A new lock without a coupon mapping, with no campaign defined and nothing to explain:
    // the loop below would choose nothing (a batch of new users takes this way; it saves
    // the per-product texts and arrays, docs/performance.md "Batch pricing").
    if (!scope && !trace && req.coupons === undefined && this.campaigns().length === 0) return false
    const products = scope?.products ?? Object.keys(lock.quote.products)
    const mapping = parseMapping(req.coupons)
    const outside = [...mapping.keys()].filter((p) => !products.includes(p))
    if (outside.length) {
      throw new InvalidInputError(`invalid price request: ${outside.map((p) => `coupons.${p}: product "${p}" is not in this request (products: ${products.join(', ')})`).join('; ')}`)
    }
    // The clock is read only when a coupon or campaign needs it (a batch prices many requests without either).
    let at: number | undefined
    const seconds = () => (at ??= nowSeconds())
    const wantCampaigns = !scope || scope.fresh.size > 0
    const campaigns = wantCampaigns ? this.segmentCampaigns(lock, seconds, trace) : []
    let changed = false
    for (const id of products) {
      const p = lock.quote.products[id]
      if (!p) continue
      const step = `coupon ${id}`
      if (scope && p.coupon) {
        if (p.coupon.valid_till_s === null || stillValid(p.coupon, seconds())) {
          trace?.push({detail: `${p.coupon.api_id} kept from the lock (${p.coupon.source === 'campaign' ? `campaign ${p.coupon.campaign}` : 'request'}); pass --override to recompute`, outcome: 'info', step})
          continue
        }
        trace?.push({detail: `${p.coupon.api_id} from the lock expired ${utcText(p.coupon.valid_till_s)} UTC: no longer shown`, outcome: 'skipped', step})
      }
      const fromCampaigns = !scope || scope.fresh.has(id)
      const requested = mapping.get(id) ?? []
      const offered = fromCampaigns ? campaigns : []
      const chosen = requested.length > 0 || offered.length > 0 ? this.choose(lock, id, p, requested, offered, seconds(), trace) : undefined
      if (chosen) {
        p.coupon = chosen
        changed = true
      } else if (!mapping.has(id) && (!fromCampaigns || campaigns.length === 0)) {
        trace?.push({detail: fromCampaigns ? 'no coupon requested and no campaign for this user' : 'no coupon requested (campaigns apply when a lock is made)', outcome: 'skipped', step})
      }
    }
    return changed
  }

  /** Campaigns whose segment and window hold for this lock, each considered in explain. */
  private segmentCampaigns(lock: Lock, now: () => number, trace: Trace): Campaign[] {
    const all = this.campaigns()
    if (all.length === 0) return []
    const audiences = lock.quote.matching_audiences.map((a) => a.api_id)
    const out: Campaign[] = []
    const seconds = now()
    for (const c of all) {
      const why: string[] = []
      if (c.countries.length && !c.countries.includes(lock.country)) why.push(`country ${lock.country} not in ${c.countries.join(', ')}`)
      if (c.audience !== null && !audiences.includes(c.audience)) why.push(`user is not in audience ${c.audience}`)
      const w = inWindow(c, seconds)
      if (w === 'before') why.push(`starts ${utcText(c.active_from_s!)} UTC`)
      if (w === 'after') why.push(`ended ${utcText(c.active_till_s!)} UTC`)
      if (why.length === 0) out.push(c)
      trace?.push({
        detail: why.length ? `not for this user (${segmentText(c.countries, c.audience)}): ${why.join('; ')}` : `for this user (${segmentText(c.countries, c.audience)}): coupon ${c.coupon}`,
        outcome: why.length ? 'skipped' : 'info',
        step: `campaign ${c.api_id}`,
      })
    }
    return out
  }

  private choose(lock: Lock, productId: string, p: LockedProduct, requested: string[], campaigns: Campaign[], seconds: number, trace: Trace): LockedCoupon | undefined {
    const step = `coupon ${productId}`
    const candidates: Candidate[] = []
    for (const apiId of requested) {
      const coupon = this.coupon(apiId)!
      const reason = inactiveReason(coupon, seconds)
      if (reason) {
        trace?.push({detail: `${apiId} (request) not applied: ${reason}`, outcome: 'skipped', step})
        continue
      }
      candidates.push({campaign: null, coupon, ...this.priceAfter(coupon, p, productId, true)!})
    }
    for (const c of campaigns) {
      if (c.products.length && !c.products.includes(productId)) {
        trace?.push({detail: `${c.coupon} (campaign ${c.api_id}) not applied: the campaign is limited to ${c.products.join(', ')}`, outcome: 'skipped', step})
        continue
      }
      const coupon = this.coupon(c.coupon)
      const reason = coupon ? inactiveReason(coupon, seconds) : `coupon ${c.coupon} no longer exists`
      if (reason) {
        trace?.push({detail: `${c.coupon} (campaign ${c.api_id}) not applied: ${reason}`, outcome: 'skipped', step})
        continue
      }
      const after = this.priceAfter(coupon!, p, productId, false)
      if (after === undefined) {
        trace?.push({detail: `${c.coupon} (campaign ${c.api_id}) not applied: no FX rate for ${coupon!.currency} (add one with "pricectl fx set ${coupon!.currency} RATE")`, outcome: 'skipped', step})
        continue
      }
      candidates.push({campaign: c, coupon: coupon!, ...after})
    }
    if (candidates.length === 0) return undefined
    let best = candidates[0]
    for (const c of candidates) if (c.priceMinor < best.priceMinor) best = c
    for (const c of candidates) {
      const origin = c.campaign ? `campaign ${c.campaign.api_id}` : 'request'
      const moved = c.exactMinor === c.priceMinor ? '' : ` (${money(c.exactMinor, p.currency)} ${c.priceMinor < c.exactMinor ? 'rounded down in the buyer\'s favour' : 'raised to the gateway minimum'} so it can be shown and charged exactly)`
      const what = `${c.coupon.api_id} (${origin}, ${describe(c.coupon)}): ${money(p.price_minor, p.currency)} -> ${money(c.priceMinor, p.currency)}${moved}`
      const converted = this.conversion(c.coupon, p.currency, trace)
      if (c === best) trace?.push({detail: `${what}${candidates.length > 1 ? ', the lowest price of ' + candidates.length + ' coupons' : ''}${converted}`, outcome: 'applied', step})
      else trace?.push({detail: `${what} not applied: ${best.coupon.api_id} gives ${money(best.priceMinor, p.currency)}${c.priceMinor === best.priceMinor ? ' and comes first' : ''} (coupons do not stack)${converted}`, outcome: 'skipped', step})
    }
    return this.locked(best)
  }

  /**
   * Price after one coupon (`priceMinor`) and before it was made chargeable (`exactMinor`).
   * A fixed amount in another currency is converted at today's rates; without a rate, a
   * requested coupon is an input error, a campaign's is skipped.
   */
  private priceAfter(coupon: Coupon, p: LockedProduct, productId: string, requested: boolean): undefined | {exactMinor: number; priceMinor: number} {
    const after = this.discounted(coupon, p, productId, requested)
    if (after === undefined) return undefined
    if (after === 0) return {exactMinor: 0, priceMinor: 0}
    // Charged like any price: a point the display and the product's gateways represent
    // exactly (PricingContext.chargeConstraints). A discount is never made smaller to get
    // there: the price moves down, in the buyer's favour, unless a gateway's minimum holds it.
    return {exactMinor: after, priceMinor: this.ctx.representable(after, p.currency, this.ctx.product(productId)?.gateways ?? [], 'down').minor}
  }

  private discounted(coupon: Coupon, p: LockedProduct, productId: string, requested: boolean): number | undefined {
    if (coupon.coupon_type === 'percentage') return percentOff(p.price_minor, coupon.percent!)
    const from = coupon.currency!
    if (from === p.currency) return amountOff(p.price_minor, coupon.amount_minor!)
    const fromRate = this.ctx.rate(from)
    const toRate = this.ctx.rate(p.currency)
    if (!fromRate || !toRate) {
      if (!requested) return undefined
      const missing = fromRate ? p.currency : from
      throw new InvalidInputError(`coupons.${productId}: coupon ${coupon.api_id} is in ${from} and there is no FX rate for ${missing}: add one with "pricectl fx set ${missing} RATE"`)
    }
    return amountOff(p.price_minor, convertMinor(coupon.amount_minor!, from, fromRate.rate, p.currency, toRate.rate))
  }

  /** Explain: the rates a fixed amount in another currency was converted at. */
  private conversion(coupon: Coupon, currency: string, trace: Trace): string {
    if (!trace || coupon.coupon_type === 'percentage' || coupon.currency === currency) return ''
    const from = coupon.currency!
    this.ctx.noteRate(trace, from)
    this.ctx.noteRate(trace, currency)
    return `; ${coupon.value} ${from} converted at ${[from, currency].filter((c) => c !== 'USD').map((c) => this.ctx.describeRate(c)).join(' and ')}`
  }

  private locked(c: Candidate): LockedCoupon {
    const ends = [c.coupon.active_till_s, c.campaign?.active_till_s ?? null].filter((s): s is number => s !== null)
    const first = c.coupon.external[0]
    return {
      api_id: c.coupon.api_id,
      campaign: c.campaign?.api_id ?? null,
      coupon_source: [...new Set(c.coupon.external.map((e) => e.source))],
      currency_code: c.coupon.currency,
      external_coupon_id: first?.external_id ?? null,
      id: c.coupon.id,
      price_minor: c.priceMinor,
      service_external_coupon_id: first?.id ?? null,
      source: c.campaign ? 'campaign' : 'request',
      type: c.coupon.coupon_type,
      valid_till_s: ends.length ? Math.min(...ends) : null,
      value: c.coupon.value,
    }
  }

  /** The spec's coupon block of a locked product; undefined once the locked coupon's validity has passed. */
  render(lock: Lock, p: LockedProduct): z.output<typeof CouponBlock> | undefined {
    const c = p.coupon
    if (!c || (c.valid_till_s !== null && !stillValid(c, nowSeconds()))) return undefined
    const {country} = lock
    const {currency} = p
    const fmt = (minor: number, cur = currency) => this.ctx.display.format(minor, cur, country)
    const after = c.price_minor
    const afterText = fmt(after)
    const perInterval = this.ctx.display.referenceInterval(after, p.interval, p.interval_count)
    const usd = this.ctx.toUsdMinor(after, currency)
    return {
      api_id: c.api_id,
      coupon_source: c.coupon_source,
      currency_code: c.currency_code,
      display: {
        interval_local_price_formatted: fmt(perInterval),
        interval_price_numeric: fromMinor(perInterval, currency),
        local_currency_symbol: this.ctx.display.symbol(currency, country),
        local_price_formatted: afterText,
        local_price_formatted_with_baseline_strike: after < p.price_minor ? this.ctx.display.strike(fmt(p.price_minor), afterText) : afterText,
        // The discount charged: a percentage's own value when the price after it is exact,
        // else what was really taken off (0 when a gateway minimum held the price).
        pct_discount_to_baseline: c.type === 'percentage' && after === percentOff(p.price_minor, c.value) ? c.value : this.ctx.display.discount(after, p.price_minor),
        price_numeric: fromMinor(after, currency),
        usd_price_formatted: fmt(usd, 'USD'),
        usd_price_numeric: fromMinor(usd, 'USD'),
      },
      external_coupon_id: c.external_coupon_id,
      id: String(c.id),
      service_external_coupon_id: c.service_external_coupon_id,
      type: c.type,
      valid_till: c.valid_till_s === null ? null : utcText(c.valid_till_s),
      value: c.value,
    }
  }
}

function describe(c: Coupon): string {
  return c.coupon_type === 'percentage' ? `${c.value}% off` : `${c.value} ${c.currency} off`
}

function money(minor: number, currency: string): string {
  return `${fromMinor(minor, currency)} ${currency}`
}
