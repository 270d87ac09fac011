import countryToCurrency from 'country-to-currency'

import {countryCurrency, minorDigits} from '../currency.js'
import {listFactors} from '../localization/factors.js'
import {listAudiences} from '../segments/audiences.js'
import {listCampaigns} from '../segments/campaigns.js'
import {listPackages} from '../segments/packages.js'
import type {FeatureValues, Rule} from '../segments/rules.js'
import type {StorePort} from '../store/port.js'
import {PricingContext} from './context.js'
import {priceRequest} from './price.js'
import {previewCountries} from './preview.js'

/**
 * Price impact of a write (docs/change-control.md): lock-free prices of the affected
 * products x countries (x audiences, x experiment arms) before and after the write, taken
 * inside one write transaction, and their difference. A dry run, a refused change or a
 * change over --max-changes rolls the transaction back, so "nothing written" holds exactly.
 * No oclif here: src/cli/impact.ts renders and confirms.
 */

/** What a write can touch; the narrower, the faster the snapshot. */
export type ImpactScope = {
  /** Products the write changes (api_ids); unset: every product (FX, rounding, localization, segments). */
  products?: string[]
  /** Running or about-to-run experiments whose arms to price (experiments start/stop). */
  experiments?: number[]
  /**
   * The write changes audiences: it is run once first (and rolled back) to learn the
   * audiences it leaves, so a new audience's members are priced before the write as well.
   */
  audiences?: boolean
}

/** Who a snapshot row is priced for: a new user of the default audience, a member of an audience, or an arm. */
export type Persona = {experiment?: {arm: string; id: number}; features: FeatureValues; key: string; package?: boolean}

export type SnapshotRow = {
  /** The audience the quote matched. */
  audience: string
  country: string
  currency: string
  display: string
  /** Why the product cannot be priced there (no FX rate ...); price and display are then empty. */
  error?: string
  /** The arm the quote got, when the persona is an arm: "EXPERIMENT:ARM". */
  arm?: string
  minor: number
  persona: string
  price: number
  product: string
}

/** Prices keyed product|country|persona, and each product's country prices (for what an update drops). */
export type Snapshot = {countryPrices: Map<string, Set<string>>; rows: Map<string, SnapshotRow>}

export type PriceImpactChange = {
  after: null | {currency: string; display: string; price: number}
  /** The audience (default, an audience api_id) or arm ("arm EXPERIMENT:ARM") the price is for. */
  audience: string
  before: null | {currency: string; display: string; price: number}
  /** changed: same currency, other amount; currency: the currency changed; added: a price that was not quoted; removed: no longer quoted. */
  change: 'added' | 'changed' | 'currency' | 'removed'
  country: string
  /** Why a side has no price (the product is gone, no FX rate ...). */
  note: null | string
  /** Percent change, two decimals; null unless the amount changed in the same currency. */
  pct_change: null | number
  product: string
}

export type DroppedCountryPrices = {count: number; countries: string[]; product: string}

export type PriceImpact = {
  /** Prices compared (rows of the before and after snapshots). */
  compared: number
  /** Prices that change for someone already quoted them: changed + currency + removed. */
  changed: number
  /** Prices quoted only after the change (a new product, a new audience's prices). */
  added: number
  changes: PriceImpactChange[]
  /** Country prices a list-replacing write removes, per product. */
  dropped: DroppedCountryPrices[]
  largest: null | {country: string; pct_change: number; product: string}
  products: number
  countries: number
  summary: string
}

const PREVIEW_USER = 'pricectl-preview'

/** A set of feature values that satisfies an audience's feature rules (its country rules are met by the country loop). */
export function witness(rules: Rule[]): FeatureValues {
  const f: FeatureValues = {}
  for (const r of rules) {
    if (r.type !== 'feature') continue
    switch (r.operator) {
      case 'eq':
        f[r.feature] = r.value
        break
      case 'neq':
        f[r.feature] = typeof r.value === 'number' ? r.value + 1 : typeof r.value === 'boolean' ? !r.value : `${r.value}-other`
        break
      case 'in':
        f[r.feature] = r.values[0]
        break
      case 'gt':
        f[r.feature] = r.value + 1
        break
      case 'lt':
        f[r.feature] = r.value - 1
        break
      case 'gte':
      case 'lte':
        f[r.feature] = r.value
        break
      case 'exists':
        f[r.feature] ??= true
        break
    }
  }
  return f
}

/** The personas of the current store state: the default user, one per audience with feature rules, one per arm of the experiments. */
export async function personasOf(store: StorePort, scope: ImpactScope): Promise<Persona[]> {
  const out: Persona[] = [{features: {}, key: 'default'}]
  const byAudience = new Map<string, FeatureValues>()
  for (const a of await listAudiences(store)) {
    const features = witness(a.rules)
    byAudience.set(a.api_id, features)
    // An audience without feature rules is what a default user in its countries matches already.
    if (Object.keys(features).length > 0) out.push({features, key: a.api_id})
  }
  // A request without products is quoted its package: a package change adds or removes products there.
  if ((await listPackages(store)).length > 0) out.push({features: {}, key: 'package', package: true})
  const ids = new Set([...(await store.experiments.list('running')).map((e) => e.id), ...(scope.experiments ?? [])])
  for (const id of [...ids].sort((a, b) => a - b)) {
    const e = (await store.experiments.get([id]))[0]
    if (!e || e.type !== 'price') continue
    const features = e.audience ? (byAudience.get(e.audience) ?? {}) : {}
    for (const arm of e.arms) out.push({experiment: {arm: arm.id, id: e.id}, features, key: `arm ${e.id}:${arm.id}`})
  }
  return out
}

function unionPersonas(a: Persona[], b: Persona[]): Persona[] {
  const seen = new Set(a.map((p) => p.key))
  return [...a, ...b.filter((p) => !seen.has(p.key))]
}

/** Every country pricectl knows a currency for: a change of a base price, FX rate or rounding rule reaches them all. */
const ALL_COUNTRIES = Object.keys(countryToCurrency as Record<string, string>).sort()

/**
 * The countries priced one by one: those with a country price of a scoped product or a
 * localization factor, the default country, and every country an audience, campaign,
 * package or experiment names. Every other country is priced like the others of its
 * currency (same amount: no country price, no factor, no segment tells them apart).
 */
async function namedCountries(store: StorePort, ctx: PricingContext, products: string[]): Promise<Set<string>> {
  const named = new Set<string>([ctx.defaultCountry, ...(await listFactors(store)).map((f) => f.country)])
  for (const p of products) for (const c of ctx.product(p)?.countryPrices.keys() ?? []) named.add(c)
  for (const a of await listAudiences(store)) for (const r of a.rules) if (r.type === 'country') for (const c of r.values) named.add(c)
  for (const c of await listCampaigns(store)) for (const x of c.countries) named.add(x)
  for (const p of await listPackages(store)) for (const x of p.countries) named.add(x)
  for (const e of await store.experiments.list()) for (const x of e.countries) named.add(x)
  return named
}

/**
 * What tells a country's shown prices apart from another of its currency by tax (docs/tax.md):
 * the rate of each product it shows tax-inclusive (an exclusive price is shown net, whatever
 * the rate). Empty when every product is exclusive there, as in a store that never opted in.
 */
function taxKey(ctx: PricingContext, country: string, products: string[]): string {
  let key = ''
  for (const p of products) {
    const t = ctx.tax(country, p)
    if (t.behavior === 'inclusive') key += `|${p}:${t.bp}`
  }
  return key
}

/**
 * Lock-free prices of the scope's products in every country, for each persona: what a new
 * user would be quoted (no lock, no user, no exposure written). A product or country that
 * cannot be priced is a row with `error`. Countries that only their currency tells apart
 * are priced once per currency and the row copied, with the country's own display format.
 */
export async function snapshot(store: StorePort, scope: ImpactScope, personas: Persona[]): Promise<Snapshot> {
  const ctx = await PricingContext.open(store)
  const products = scope.products ? [...new Set(scope.products)].filter((p) => ctx.product(p)) : await store.pricing.productApiIds()
  const named = await namedCountries(store, ctx, products)
  const all = [...new Set([...ALL_COUNTRIES, ...await previewCountries(ctx), ...named])].sort()
  // The first country of each currency stands for the others of that currency.
  const standsFor = new Map<string, string[]>()
  for (const c of all) {
    if (named.has(c)) continue
    const key = (countryCurrency(c) ?? 'USD') + taxKey(ctx, c, products)
    const group = standsFor.get(key)
    if (group) group.push(c)
    else standsFor.set(key, [c])
  }
  const countries = [...named, ...[...standsFor.values()].map((g) => g[0])].sort()
  const copies = new Map([...standsFor.values()].map((g) => [g[0], g.slice(1)]))
  const rows = new Map<string, SnapshotRow>()
  const countryPrices = new Map<string, Set<string>>()
  for (const p of scope.products ?? products) countryPrices.set(p, new Set(ctx.product(p)?.countryPrices.keys() ?? []))
  if (products.length === 0) return {countryPrices, rows}
  for (const persona of personas) {
    ctx.experiments.pin = persona.experiment && {armId: persona.experiment.arm, experimentId: persona.experiment.id}
    for (const country of countries) {
      const quote = async (ids: string[] | undefined) => {
        // No empty `features` and no `products: undefined`: such a request takes
        // validatePriceRequest's fast path instead of the schema (16% of a snapshot).
        const request: Record<string, unknown> = {country, override: true, run_experiment: Boolean(persona.experiment), user_id: PREVIEW_USER}
        if (Object.keys(persona.features).length > 0) request.features = persona.features
        if (ids) request.products = ids
        const r = await priceRequest(ctx, request, {dryRun: true})
        const arm = r.variants.experiment_id ? `${r.variants.experiment_id}:${r.variants.arm_id}` : undefined
        for (const [product, p] of Object.entries(r.products)) {
          if (persona.package && scope.products && !scope.products.includes(product)) continue
          const price = p.coupon ? p.coupon.display.price_numeric : p.price
          const row: SnapshotRow = {
            audience: r.audience.api_id,
            country,
            currency: r.currency,
            display: p.coupon ? p.coupon.display.local_price_formatted : p.display.price,
            minor: Math.round(price * 10 ** minorDigits(r.currency)),
            persona: persona.key,
            price,
            product,
          }
          if (arm) row.arm = arm
          rows.set(`${product}|${country}|${persona.key}`, row)
          for (const other of copies.get(country) ?? []) rows.set(`${product}|${other}|${persona.key}`, copyRow(row, other, ctx.display.format))
        }
      }
      if (persona.package) {
        try {
          await quote(undefined)
        } catch {
          // No package for this country: nothing quoted there.
        }
        continue
      }
      try {
        await quote(products)
      } catch {
        // One product (or the country's currency) cannot be priced: price each alone to say which.
        for (const id of products) {
          try {
            await quote([id])
          } catch (error) {
            for (const c of [country, ...(copies.get(country) ?? [])]) {
              rows.set(`${id}|${c}|${persona.key}`, {audience: '', country: c, currency: '', display: '', error: (error as Error).message, minor: 0, persona: persona.key, price: 0, product: id})
            }
          }
        }
      }
    }
  }
  ctx.experiments.pin = undefined
  return {countryPrices, rows}
}

/**
 * A row for a country priced like `row`'s (same currency, nothing else tells them apart), with
 * that country's display format, made when read: only the rows of changed prices are shown.
 */
function copyRow(row: SnapshotRow, country: string, format: (minor: number, currency: string, country: string) => string): SnapshotRow {
  let display: string | undefined
  const copy: SnapshotRow = {
    audience: row.audience,
    country,
    currency: row.currency,
    get display() {
      display ??= format(row.minor, row.currency, country)
      return display
    },
    minor: row.minor,
    persona: row.persona,
    price: row.price,
    product: row.product,
  }
  if (row.arm !== undefined) copy.arm = row.arm
  return copy
}

/** Whether a row is what its persona stands for: an audience's member in that audience, an arm's user in that arm. */
function relevant(row: SnapshotRow | undefined, persona: string): boolean {
  if (!row || row.error) return false
  if (persona === 'default' || persona === 'package') return true
  if (persona.startsWith('arm ')) return row.arm === persona.slice(4)
  return row.audience === persona
}

function side(r: SnapshotRow | undefined) {
  return r && !r.error ? {currency: r.currency, display: r.display, price: r.price} : null
}

/** The difference of two snapshots: every price that changes, what the write drops, and the one-line summary. */
export function diffSnapshots(before: Snapshot, after: Snapshot): PriceImpact {
  const changes: PriceImpactChange[] = []
  let added = 0
  const keys = [...new Set([...before.rows.keys(), ...after.rows.keys()])]
  for (const key of keys) {
    const b = before.rows.get(key)
    const a = after.rows.get(key)
    const persona = (a ?? b)!.persona
    const okB = relevant(b, persona)
    const okA = relevant(a, persona)
    if (!okB && !okA) continue
    const base = {audience: persona, country: (a ?? b)!.country, product: (a ?? b)!.product}
    // A persona's row off its audience or arm on one side stands for the price such a user got there.
    const bb = b && !b.error ? b : undefined
    const aa = a && !a.error ? a : undefined
    if (!bb || !aa) {
      if (!bb && !aa) continue
      const note = bb ? (a?.error ?? 'no longer quoted (the product is gone)') : (b?.error ?? null)
      if (!bb) added++
      changes.push({...base, after: side(aa), before: side(bb), change: bb ? 'removed' : 'added', note, pct_change: null})
      continue
    }
    if (aa.currency !== bb.currency) {
      changes.push({...base, after: side(aa), before: side(bb), change: 'currency', note: null, pct_change: null})
      continue
    }
    if (aa.minor === bb.minor) continue
    const pct = bb.minor === 0 ? null : Math.round(((aa.minor - bb.minor) / bb.minor) * 10_000) / 100
    changes.push({...base, after: side(aa), before: side(bb), change: 'changed', note: null, pct_change: pct})
  }
  changes.sort((x, y) => x.product.localeCompare(y.product) || x.country.localeCompare(y.country) || personaOrder(x.audience, y.audience))
  const dropped: DroppedCountryPrices[] = []
  for (const [product, was] of before.countryPrices) {
    const now = after.countryPrices.get(product) ?? new Set<string>()
    const gone = [...was].filter((c) => !now.has(c)).sort()
    if (gone.length) dropped.push({count: gone.length, countries: gone, product})
  }
  const real = changes.filter((c) => c.change !== 'added')
  let largest: PriceImpact['largest'] = null
  for (const c of real) {
    if (c.pct_change !== null && (!largest || Math.abs(c.pct_change) > Math.abs(largest.pct_change))) largest = {country: c.country, pct_change: c.pct_change, product: c.product}
  }
  const products = new Set(real.map((c) => c.product)).size
  const countries = new Set(real.map((c) => c.country)).size
  const impact: PriceImpact = {added, changed: real.length, changes, compared: new Set([...before.rows.keys(), ...after.rows.keys()]).size, countries, dropped, largest, products, summary: ''}
  impact.summary = summarize(impact)
  return impact
}

function personaOrder(a: string, b: string): number {
  if (a === b) return 0
  if (a === 'default') return -1
  if (b === 'default') return 1
  return a.localeCompare(b)
}

export function pct(n: number): string {
  return `${n > 0 ? '+' : ''}${n}%`
}

/**
 * How far a change moves a price, for ranking and for --max-change-pct: the percent's size;
 * a price no longer quoted moves 100%; a currency change (or a price from zero) cannot be
 * measured in percent and counts as beyond any threshold. New prices move nothing.
 */
export function moveSize(c: PriceImpactChange): number {
  if (c.change === 'added') return 0
  if (c.change === 'removed') return 100
  if (c.change === 'currency' || c.pct_change === null) return Number.POSITIVE_INFINITY
  return Math.abs(c.pct_change)
}

/** The changes (not new prices), largest move first; ties keep their order (product, country, audience). */
export function largestMoves(changes: readonly PriceImpactChange[]): PriceImpactChange[] {
  return changes.filter((c) => c.change !== 'added').sort((x, y) => moveSize(y) - moveSize(x))
}

/** One move as the summary and messages name it: "+83% IN pro_monthly", "IN pro_monthly INR -> USD", "IN pro_monthly no longer quoted". */
export function describeMove(c: PriceImpactChange): string {
  const who = `${c.country} ${c.product}${c.audience === 'default' ? '' : ` (${c.audience})`}`
  if (c.change === 'removed') return `${who} no longer quoted`
  if (c.change === 'currency') return `${who} ${c.before!.currency} -> ${c.after!.currency}`
  if (c.pct_change === null) return `${who} ${c.before!.display} -> ${c.after!.display}`
  return `${pct(c.pct_change)} ${who}`
}

/** Moves the summary names. */
const SUMMARY_MOVES = 3

/** "largest moves +83% IN pro_monthly, -12.5% FR team_yearly; 42 prices change in 3 products x 14 countries; drops 202 country prices (starter_monthly: 202)". */
export function summarize(i: Pick<PriceImpact, 'added' | 'changed' | 'countries' | 'dropped' | 'largest' | 'products'> & {changes?: readonly PriceImpactChange[]}): string {
  const parts: string[] = []
  if (i.changed === 0) parts.push('no price changes')
  else {
    // The largest moves first: a summary read in a log must show what matters before the counts.
    const top = i.changes ? largestMoves(i.changes).slice(0, SUMMARY_MOVES).map((c) => describeMove(c)) : i.largest ? [`${pct(i.largest.pct_change)} ${i.largest.country} ${i.largest.product}`] : []
    if (top.length > 0) parts.push(`${top.length === 1 ? 'largest move' : 'largest moves'} ${top.join(', ')}`)
    parts.push(`${i.changed} ${i.changed === 1 ? 'price changes' : 'prices change'} in ${i.products} ${i.products === 1 ? 'product' : 'products'} x ${i.countries} ${i.countries === 1 ? 'country' : 'countries'}`)
  }
  if (i.added > 0) parts.push(`${i.added} new ${i.added === 1 ? 'price' : 'prices'}`)
  const drops = i.dropped.reduce((n, d) => n + d.count, 0)
  if (drops > 0) parts.push(`drops ${drops} country ${drops === 1 ? 'price' : 'prices'} (${i.dropped.map((d) => `${d.product}: ${d.count}`).join(', ')})`)
  return parts.join('; ')
}

/** Thrown inside the transaction to roll a measured write back (dry run, refused, over --max-changes). */
export class ImpactRollback<T = unknown> extends Error {
  constructor(
    readonly result: T,
    readonly impact: PriceImpact,
  ) {
    super('rolled back: price impact only')
  }
}

const PROBE = new Error('probe: rolled back')

/**
 * Run `write` in one write transaction, with a snapshot of the scope before and after it.
 * `decide` sees the impact: 'commit' keeps the write, 'rollback' undoes it (nothing
 * written, the result and impact still returned).
 */
export async function measureImpact<T>(store: StorePort, write: () => Promise<T> | T, scope: ImpactScope, decide: (impact: PriceImpact) => 'commit' | 'rollback'): Promise<{committed: boolean; impact: PriceImpact; result: T}> {
  const measured = async () => {
    let personas = await personasOf(store, scope)
    if (scope.audiences) {
      // Learn the audiences the write leaves (a new audience's members are priced before it too).
      try {
        await store.transaction(async () => {
          await write()
          personas = unionPersonas(personas, await personasOf(store, scope))
          throw PROBE
        })
      } catch (error) {
        if (error !== PROBE) throw error
      }
    }
    const before = await snapshot(store, scope, personas)
    const result = await write()
    const after = await snapshot(store, scope, personas)
    const impact = diffSnapshots(before, after)
    if (decide(impact) === 'rollback') throw new ImpactRollback(result, impact)
    return {committed: true, impact, result}
  }
  try {
    // The write lock from the start (a savepoint inside a caller's transaction; a plain transaction on a read-only store).
    return await store.transaction(measured, {write: true})
  } catch (error) {
    if (error instanceof ImpactRollback) return {committed: false, impact: error.impact, result: error.result as T}
    throw error
  }
}
