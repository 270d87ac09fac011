import {productByApiId, type ProductRow} from '../catalog/lookup.js'
import {minorDigits, minorToDecimalString} from '../currency.js'
import type {PricingContext} from '../pricing/context.js'
import {gatewayAmountMinor, gatewaySettings, isGateway} from '../pricing/gateways.js'
import type {StorePort} from '../store/port.js'
import {type CountryPrice, integrationRow} from '../store/port/catalog.js'
import type {IntegrationMatch} from '../store/port/pricing.js'
import {parseInterval} from './intervals.js'
import {RowMiss} from './loads.js'

/**
 * The product of an import row (docs/revenue.md, "Product"). The row's product cell is
 * matched against the layout's integration types, then as an api_id. One gateway product
 * may carry several prices (a monthly and a yearly `gateway_a_with_interval` integration
 * on two products): such a cell names several products, and the row's own facts choose:
 *
 * 1. its price or plan id (`price` column): a candidate's api_id, an id of another of its
 *    integrations, or an interval ("year", "3 month") of one of its integrations;
 * 2. else its amount and currency: the prices the engine would quote for each candidate
 *    (every priced country and the store's default country, with and without campaign
 *    coupons, and what the origin gateway charges when it falls back to another currency),
 *    then the candidate's base price in USD and its country prices; with a country on
 *    the row, that country's prices decide a tie;
 * 3. else the row is rejected with what was tried.
 *
 * Everything is read once per import (per distinct cell value), outside the matching: a
 * cell not read yet is a miss (RowMiss) that RowMapper.load reads (loadMatch, loadPrices),
 * then the row is matched again; a row costs map lookups.
 */

/** What a row tells about its price: its amount and currency, its country, its price or plan id. */
/** What a row says of its price: its amount (gross), and its net of tax when it carries tax (a price shown net has tax added on top). */
export type RowFacts = {amountMinor: number; country?: string; currency: string; netMinor?: number}

/** A resolved cell: one product, several to choose from, or none. */
type Resolution = {candidates: Candidates; kind: 'several'} | {kind: 'none'} | {kind: 'one'; product: ProductRow}

/** A cell that names several products: the row's facts choose (ImportProducts.choose). */
export type Several = Extract<Resolution, {kind: 'several'}>

/** The products one gateway id names, with what tells them apart. */
type Candidates = {
  /** Price/plan ids and intervals -> product (undefined: the id names several of them). */
  byId: Map<string, ProductRow | undefined>
  /** `CUR|minor` -> products quoted that amount; `CC|CUR|minor` the same for one country. */
  byPrice?: Map<string, ProductRow[]>
  countryPrices: Map<number, CountryPrice[]>
  /** Example prices per product, for reasons. */
  examples?: Map<number, string[]>
  products: ProductRow[]
  /** Each product's intervals as its integrations name them ("year", "3 month"). */
  intervals: Map<number, string>
}

const PREVIEW_USER = 'pricectl-import'

/**
 * The pricing engine, which only a cell naming several products needs (to tell them apart
 * by price): loaded on demand (loadPricingEngine), not with the matcher. Loading it costs
 * each import worker about 6 MB of heap and the time to load its modules, and most imports
 * (an export without a product column, --product, a gateway id naming one product) never
 * use it (docs/performance.md, "Import").
 */
type Engine = {
  PricingContext: typeof import('../pricing/context.js').PricingContext
  priceRequest: typeof import('../pricing/price.js').priceRequest
  previewCountries: typeof import('../pricing/preview.js').previewCountries
}
let engine: Engine | undefined

/** Load the pricing engine for ImportProducts (once per thread); before mapping rows that name products. */
export async function loadPricingEngine(): Promise<void> {
  if (engine) return
  const [context, price, preview] = await Promise.all([import('../pricing/context.js'), import('../pricing/price.js'), import('../pricing/preview.js')])
  engine = {PricingContext: context.PricingContext, priceRequest: price.priceRequest, previewCountries: preview.previewCountries}
}

function intervalText(interval: null | string, count: null | number): string {
  if (!interval || interval === 'one_time') return 'one-time'
  return count && count !== 1 ? `${count} ${interval}` : interval
}

export class ImportProducts {
  private readonly cache = new Map<string, Resolution>()
  private ctx?: PricingContext

  constructor(
    private readonly store: StorePort,
    private readonly types: string[],
    /** The layout's gateway: its fallback currency is a price the product is charged in too. */
    private readonly origin: string,
  ) {}

  private resolve(ref: string, interval?: string, intervalCount?: number): Resolution {
    const r = this.cache.get(cacheKey(ref, interval, intervalCount))
    if (r === undefined) throw new RowMiss({interval, intervalCount, kind: 'product', ref})
    return r
  }

  /** Read what a cell names (a product miss): its integrations' products, else the product of that api_id. */
  async loadMatch(ref: string, interval?: string, intervalCount?: number): Promise<void> {
    const key = cacheKey(ref, interval, intervalCount)
    if (!this.cache.has(key)) this.cache.set(key, await this.resolveUncached(ref, interval, intervalCount))
  }

  private async resolveUncached(ref: string, interval?: string, intervalCount?: number): Promise<Resolution> {
    const rows = this.types.length > 0 ? await this.store.pricing.integrationMatches(this.types, ref) : []
    const pick =
      rows.find((r) => interval && r.i_interval === interval && (intervalCount === undefined || r.i_count === intervalCount)) ??
      rows.find((r) => r.i_interval === null) ??
      (rows.length > 0 && rows.every((r) => r.id === rows[0].id) ? rows[0] : undefined)
    if (pick) return {kind: 'one', product: rowOf(pick)}
    if (rows.length > 1) return {candidates: await this.candidates(rows), kind: 'several'}
    const p = await productByApiId(this.store, ref)
    return p ? {kind: 'one', product: p} : {kind: 'none'}
  }

  private async candidates(rows: IntegrationMatch[]): Promise<Candidates> {
    const products = new Map<number, ProductRow>()
    const intervals = new Map<number, string>()
    const byId = new Map<string, ProductRow | undefined>()
    const claim = (id: string, p: ProductRow) => {
      const k = id.trim().toLowerCase()
      if (k === '') return
      byId.set(k, byId.has(k) && byId.get(k)?.id !== p.id ? undefined : p)
    }
    for (const r of rows) {
      const p = products.get(r.id) ?? rowOf(r)
      products.set(r.id, p)
      const iv = intervalText(r.i_interval, r.i_count)
      intervals.set(r.id, intervals.has(r.id) && intervals.get(r.id) !== iv ? `${intervals.get(r.id)}, ${iv}` : iv)
      if (r.i_interval) claim(`${r.i_interval}|${r.i_count ?? 1}`, p)
    }
    const list = [...products.values()]
    const full = await this.store.catalog.getProducts(list.map((p) => p.api_id))
    for (const p of list) {
      claim(p.api_id, p)
      // Ids of its other integrations (a gateway_c plan, a gateway_d plan) name it too.
      for (const i of full.find((f) => f.api_id === p.api_id)?.integrations ?? []) claim(integrationRow(i).gateway_ref, p)
    }
    return {byId, countryPrices: new Map(full.map((f) => [f.id, f.country_prices])), intervals, products: list}
  }

  /** Prices the engine quotes for the candidates (a prices miss: the first row that needs them). */
  async loadPrices(r: Several): Promise<void> {
    const c = r.candidates
    if (c.byPrice) return
    const byPrice = new Map<string, ProductRow[]>()
    const examples = new Map<number, string[]>()
    const add = (key: string, p: ProductRow) => {
      const list = byPrice.get(key)
      if (!list) byPrice.set(key, [p])
      else if (!list.includes(p)) list.push(p)
    }
    const point = (p: ProductRow, currency: string, minor: number, country?: string) => {
      add(`${currency}|${minor}`, p)
      if (country) add(`${country}|${currency}|${minor}`, p)
      const ex = examples.get(p.id) ?? []
      const text = `${minorToDecimalString(minor, minorDigits(currency))} ${currency}`
      if (ex.length < 4 && !ex.includes(text)) ex.push(text)
      examples.set(p.id, ex)
    }
    for (const p of c.products) point(p, 'USD', p.base_px_minor)
    if (!engine) throw new Error('import: the pricing engine is not loaded (call loadPricingEngine() before mapping rows that name products)')
    const {PricingContext, priceRequest, previewCountries} = engine
    this.ctx ??= await PricingContext.open(this.store)
    const ctx = this.ctx
    const apiIds = c.products.map((p) => p.api_id)
    const settings = isGateway(this.origin) ? await gatewaySettings(this.store, this.origin) : undefined
    for (const country of await previewCountries(ctx)) {
      const quoted: Record<string, {control_minor: number; currency: string; price_minor: number}> = {}
      try {
        await priceRequest(ctx, {country, override: true, products: apiIds, run_experiment: false, user_id: PREVIEW_USER}, {
          dryRun: true,
          onQuote: (lock) => Object.assign(quoted, lock.quote.products),
        })
      } catch {
        // A country the engine cannot price (no FX rate for its currency) offers no price.
        continue
      }
      for (const p of c.products) {
        const q = quoted[p.api_id]
        if (!q) continue
        for (const minor of new Set([q.price_minor, q.control_minor])) {
          point(p, q.currency, minor, country)
          if (!settings) continue
          try {
            const g = gatewayAmountMinor({currency: q.currency, priceMinor: minor, rateOf: (cur) => ctx.rate(cur)?.rate, ruleOf: (cur) => ctx.ruleOf(this.origin, cur), settings})
            if (g.currency !== q.currency) point(p, g.currency, g.minor, country)
          } catch {
            // No FX rate for the fallback: the gateway could not have charged it either.
          }
        }
      }
    }
    for (const p of c.products) {
      for (const cp of c.countryPrices.get(p.id) ?? []) point(p, cp.currency, cp.amount_minor, cp.country)
    }
    c.examples = examples
    c.byPrice = byPrice
  }

  /** The product a cell names (cached per cell value), none, or several for choose() (the caller words "no such product"). */
  match(ref: string, interval?: string, intervalCount?: number): ProductRow | Several | undefined {
    const r = this.resolve(ref, interval, intervalCount)
    return r.kind === 'one' ? r.product : r.kind === 'none' ? undefined : r
  }

  /** Which of several products a row is, by its price id, else its amount; else the reason it cannot be told. */
  choose(r: Several, ref: string, facts: RowFacts, price: string, column: string): ProductRow | {reason: string} {
    const c = r.candidates
    if (price) {
      const t = price.trim().toLowerCase()
      const iv = parseInterval(t)
      const byId = c.byId.get(t) ?? (iv ? c.byId.get(`${iv.interval}|${iv.count}`) : undefined)
      if (byId) return byId
    }
    const byPrice = c.byPrice
    if (!byPrice) throw new RowMiss({kind: 'prices', several: r})
    let amountKey = `${facts.currency}|${facts.amountMinor}`
    let found = byPrice.get(amountKey)
    // A row with tax: its amount is the price when prices include tax, its net when tax is added on top.
    if (!found && facts.netMinor !== undefined && facts.netMinor !== facts.amountMinor) {
      amountKey = `${facts.currency}|${facts.netMinor}`
      found = byPrice.get(amountKey)
    }
    if (found && found.length > 1 && facts.country) found = byPrice.get(`${facts.country}|${amountKey}`) ?? found
    if (found?.length === 1) return found[0]
    const names = c.products.map((p) => `${p.api_id} (${c.intervals.get(p.id)})`)
    const amount = `${minorToDecimalString(facts.amountMinor, minorDigits(facts.currency))} ${facts.currency}`
    const idNote = price ? `its price id ${JSON.stringify(price)} names none of them, and ` : ''
    if (found && found.length > 1) {
      return {reason: `ambiguous product ${JSON.stringify(ref)} in ${column}: it is the ${this.types.join('/')} product of ${names.join(' and ')}; ${idNote}${amount} is a price of ${found.map((p) => p.api_id).join(' and ')} alike (add a price id column naming the product's api_id or interval, such as price_id (metadata))`}
    }
    const quoted = c.products.map((p) => `${p.api_id}: ${(c.examples!.get(p.id) ?? []).join(', ')}`).join('; ')
    return {reason: `no price matches product ${JSON.stringify(ref)} in ${column}: it is the ${this.types.join('/')} product of ${names.join(' and ')}; ${idNote}${amount} is no price of theirs (${quoted}; a discounted or since-changed price is not matched: add a price id column naming the product's api_id or interval, such as price_id (metadata))`}
  }
}

function cacheKey(ref: string, interval?: string, intervalCount?: number): string {
  return `${ref}\u0000${interval ?? ''}\u0000${intervalCount ?? ''}`
}

/** The product row of an integration match, without the integration's columns. */
function rowOf(m: IntegrationMatch): ProductRow {
  const {i_count: _c, i_interval: _i, i_type: _t, ...product} = m
  return product
}
