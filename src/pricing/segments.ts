import {convertMinor, fromMinor, scaleMinor} from '../currency.js'
import {InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import type {Audience} from '../segments/audiences.js'
import {isSegmented, packageSegment} from '../segments/common.js'
import type {Package} from '../segments/packages.js'
import {explainRule, type FeatureValues, ruleMatches, ruleText} from '../segments/rules.js'
import type {PricedProduct, PricingServices, Trace} from './types.js'

export type AudienceRef = {api_id: string; name: string}

export const DEFAULT_AUDIENCE: AudienceRef = {api_id: 'default', name: 'default'}

type LoadedAudience = Audience & {ref: AudienceRef}
type PriceEntry = {amountMinor: null | number; currency: null | string; multiplier: null | number}

/**
 * Audience and package layers (DESIGN steps 4 and 5). Audiences, their prices and the
 * packages are read once per context (load(), by PricingContext): a batch of requests must
 * not re-read them.
 */
export class Segments {
  private readonly ctx: PricingServices
  private audienceList: LoadedAudience[] = []
  private priceMaps = new Map<string, Map<number, PriceEntry>>()
  private packageList: Package[] = []

  /** Price every request as this audience (api_id; 'default' for none): lock-free previews only (`price preview --audience`). */
  force?: string

  /** The api_ids of every audience, highest priority first. */
  audienceIds(): string[] {
    return this.loadAudiences().map((a) => a.api_id)
  }

  constructor(ctx: PricingServices) {
    this.ctx = ctx
  }

  /** Every audience (highest priority first, their prices included) and every package, as the store lists them. */
  load(audiences: readonly Audience[], packages: readonly Package[]): void {
    this.audienceList = audiences.map((a) => ({...a, ref: {api_id: a.api_id, name: a.name}}))
    this.priceMaps = new Map(audiences.map((a) => [a.api_id, new Map(a.prices.map((p) => [p.product_id, {amountMinor: p.amount_minor, currency: p.currency, multiplier: p.multiplier}]))]))
    this.packageList = [...packages]
  }

  private loadAudiences(): LoadedAudience[] {
    return this.audienceList
  }

  /**
   * Every audience whose rules all hold, highest priority first (ties by api_id); the
   * first is the user's audience, none -> the default audience.
   */
  audiences(country: string, features: FeatureValues, trace: Trace): {audience: AudienceRef; matching: AudienceRef[]} {
    const list = this.loadAudiences()
    if (this.force !== undefined) {
      const forced = list.find((a) => a.api_id === this.force)?.ref ?? DEFAULT_AUDIENCE
      trace?.push({detail: `${forced.api_id} (forced for a preview)`, outcome: 'chose', step: 'audience'})
      return {audience: forced, matching: forced === DEFAULT_AUDIENCE ? [] : [forced]}
    }
    const matching: AudienceRef[] = []
    if (!trace) {
      for (const a of list) if (a.rules.every((r) => ruleMatches(r, country, features))) matching.push(a.ref)
      return {audience: matching[0] ?? DEFAULT_AUDIENCE, matching}
    }
    if (list.length === 0) trace.push({detail: 'no audiences defined (see "pricectl audiences create")', outcome: 'info', step: 'audience'})
    for (const a of list) {
      const step = `audience ${a.api_id}`
      let failed = 0
      if (a.rules.length === 0) trace.push({detail: 'no rules: matches everyone', outcome: 'info', step})
      for (const r of a.rules) {
        const o = explainRule(r, country, features)
        if (!o.matched) failed++
        trace.push({detail: `rule "${ruleText(r)}" ${o.matched ? 'matched' : 'failed'} (${o.why})`, outcome: 'info', step})
      }
      if (failed === 0) matching.push(a.ref)
      trace.push(
        failed === 0
          ? {detail: `matches (priority ${a.priority})`, outcome: 'applied', step}
          : {detail: `does not match: ${failed} of ${a.rules.length} rule${a.rules.length === 1 ? '' : 's'} failed (priority ${a.priority})`, outcome: 'skipped', step},
      )
    }
    if (matching.length === 0) {
      trace.push({detail: 'no audience matched: default audience', outcome: 'chose', step: 'audience'})
      return {audience: DEFAULT_AUDIENCE, matching}
    }
    const top = list.find((a) => a.api_id === matching[0].api_id)!
    trace.push({
      detail: `${top.api_id} (priority ${top.priority}${matching.length > 1 ? `, highest of ${matching.length} matching: ${matching.map((m) => m.api_id).join(', ')}` : ''})`,
      outcome: 'chose',
      step: 'audience',
    })
    return {audience: top.ref, matching}
  }

  /**
   * The audience's price for a product, in minor units of `currency`: a multiplier of the
   * localized price (then the currency's rounding rule), or a fixed local price (as given
   * in its own currency, else converted and rounded). Undefined: no audience price.
   */
  audiencePrice(audienceId: string, product: PricedProduct, priceMinor: number, currency: string, trace: Trace): number | undefined {
    if (audienceId === DEFAULT_AUDIENCE.api_id) return undefined
    this.loadAudiences()
    const step = `price ${product.api_id}`
    const entry = this.priceMaps.get(audienceId)?.get(product.id)
    if (!entry) {
      trace?.push({detail: `audience ${audienceId} has no price for ${product.api_id}`, outcome: 'skipped', step})
      return undefined
    }
    if (entry.multiplier !== null) {
      const r = this.ctx.round(scaleMinor(priceMinor, entry.multiplier), currency)
      trace?.push({
        detail: `audience ${audienceId} price: ${fromMinor(priceMinor, currency)} x ${entry.multiplier} = ${fromMinor(scaleMinor(priceMinor, entry.multiplier), currency)}, rounded by ${r.source} rule "${r.rule}" to ${fromMinor(r.minor, currency)} ${currency}`,
        outcome: 'applied',
        step,
      })
      return r.minor
    }
    const amount = entry.amountMinor!
    const from = entry.currency!
    if (from === currency) {
      trace?.push({detail: `audience ${audienceId} price ${fromMinor(amount, currency)} ${currency} (used as given)`, outcome: 'applied', step})
      return amount
    }
    const fromRate = this.ctx.rate(from)
    if (!fromRate) throw new InvalidInputError(`no FX rate for ${from} (audience price of ${product.api_id} in audience ${audienceId}): add one with "pricectl fx set ${from} RATE"`)
    const converted = convertMinor(amount, from, fromRate.rate, currency, this.ctx.rate(currency)!.rate)
    const r = this.ctx.round(converted, currency)
    this.ctx.noteRate(trace, from)
    this.ctx.noteRate(trace, currency)
    trace?.push({
      detail: `audience ${audienceId} price ${fromMinor(amount, from)} ${from}, converted at ${[from, currency].filter((c) => c !== 'USD').map((c) => this.ctx.describeRate(c)).join(' and ')} to ${fromMinor(converted, currency)} ${currency} and rounded by ${r.source} rule "${r.rule}" to ${fromMinor(r.minor, currency)}`,
      outcome: 'applied',
      step,
    })
    return r.minor
  }

  private loadPackages(): Package[] {
    return this.packageList
  }

  /**
   * The package to price when no products are given: package_id picks one; else the package
   * segmented for the user's country and/or audiences (the user's own audience first, a
   * package with countries and audience before one with the audience only, packages with
   * countries only last); else the spec's error.
   */
  package(packageId: string | undefined, country: string, audience: AudienceRef, trace: Trace, matching: AudienceRef[] = audience.api_id === DEFAULT_AUDIENCE.api_id ? [] : [audience]): {api_id: string; products: string[]} {
    const packages = this.loadPackages()
    if (packageId) {
      const pkg = packages.find((p) => p.api_id === packageId)
      if (!pkg) throw new NotFoundError(`unknown package "${packageId}" (see "pricectl packages list")`)
      trace?.push({detail: `package ${pkg.api_id} from the request (package_id): ${pkg.products.join(', ')}`, outcome: 'chose', step: 'package'})
      return {api_id: pkg.api_id, products: nonEmpty(pkg)}
    }
    const audienceIds = matching.map((m) => m.api_id)
    let best: Package | undefined
    let bestKey = Number.POSITIVE_INFINITY
    for (const p of packages) {
      if (!isSegmented(p)) {
        trace?.push({detail: `${p.api_id}: no segment, picked by --package-id only`, outcome: 'skipped', step: 'package'})
        continue
      }
      const why: string[] = []
      if (p.countries.length && !p.countries.includes(country)) why.push(`country ${country} not in ${p.countries.join(', ')}`)
      const audienceIndex = p.audience === null ? audienceIds.length : audienceIds.indexOf(p.audience)
      if (audienceIndex < 0) why.push(`user is not in audience ${p.audience}${audienceIds.length ? ` (audiences: ${audienceIds.join(', ')})` : ' (default audience)'}`)
      if (why.length) {
        trace?.push({detail: `${p.api_id} (${packageSegment(p)}): ${why.join('; ')}`, outcome: 'skipped', step: 'package'})
        continue
      }
      // The user's own audience first; with the same audience, a package that also names countries is more specific.
      const key = audienceIndex * 2 + (p.countries.length ? 0 : 1)
      trace?.push({detail: `${p.api_id} (${packageSegment(p)}): matches`, outcome: 'info', step: 'package'})
      if (key < bestKey) {
        best = p
        bestKey = key
      }
    }
    if (!best) throw new InvalidInputError(`no package for country ${country} and audience ${audience.api_id}: pass --product or --package-id`)
    trace?.push({detail: `package ${best.api_id}, segmented for ${packageSegment(best)}: ${best.products.join(', ')}`, outcome: 'chose', step: 'package'})
    return {api_id: best.api_id, products: nonEmpty(best)}
  }
}

function nonEmpty(p: Package): string[] {
  if (p.products.length === 0) throw new OperationalError(`package ${p.api_id} has no products left (its products were deleted): add some with "pricectl packages update ${p.api_id} --product ..."`)
  return p.products
}
