import {decimalPlaces, mulDivHalfUp, toRational} from '../currency.js'
import type {OperatorTaxRate, TaxBehavior, TaxSettingRow} from '../domain.js'
import {InvalidInputError} from '../errors.js'
import {REDUCED_RATES, STANDARD_RATES, TAX_TABLE_AS_OF, TAX_TABLE_SOURCE, taxLabel} from './table.js'

/**
 * Tax in prices (docs/tax.md): which rate and behaviour apply to a quote, and the exact
 * split of a price into net and tax. Pure: the store's rates and settings come in as values.
 */

export type {OperatorTaxRate, TaxBehavior, TaxSettingRow}

export const TAX_BEHAVIORS = ['inclusive', 'exclusive'] as const satisfies readonly TaxBehavior[]

/** Countries where prices are shown net and tax is added at checkout, whatever the product or store says. */
export const EXCLUSIVE_COUNTRIES: ReadonlySet<string> = new Set(['CA', 'US'])

/** Rates are kept in basis points (hundredths of a percent): 19% is 1900, 19.25% is 1925. */
export const BP_PER_UNIT = 10_000

/** A percent as typed (19, 25.5, 19.25) to basis points; more than two decimals or outside 0..<100 is refused. */
export function percentToBp(percent: number, field = 'rate'): number {
  if (!Number.isFinite(percent) || percent < 0 || percent >= 100) throw new InvalidInputError(`${field}: ${percent} is not a tax rate (expected a percent from 0 to below 100, e.g. 19)`)
  if (decimalPlaces(percent) > 2) throw new InvalidInputError(`${field}: ${percent} has more than two decimals (rates are kept in hundredths of a percent)`)
  const [n, d] = toRational(percent)
  return Number((n * 100n) / d)
}

/** Basis points back to the percent the JSON carries (1925 -> 19.25). */
export function bpToPercent(bp: number): number {
  return bp / 100
}

/** The tax on a net price: net x rate, half up to the minor unit. */
export function taxOfNet(netMinor: number, bp: number): number {
  return mulDivHalfUp(netMinor, BigInt(bp), BigInt(BP_PER_UNIT), 'tax')
}

/** The gross a net price becomes before any rounding rule: net x (1 + rate), half up. */
export function grossOfNet(netMinor: number, bp: number): number {
  return mulDivHalfUp(netMinor, BigInt(BP_PER_UNIT + bp), BigInt(BP_PER_UNIT), 'gross price')
}

/** The tax inside a gross price: gross x rate / (1 + rate), half up. */
export function taxOfGross(grossMinor: number, bp: number): number {
  return mulDivHalfUp(grossMinor, BigInt(bp), BigInt(BP_PER_UNIT + bp), 'tax')
}

/** A price split into net, tax and gross in minor units; net + tax = gross exactly. */
export type TaxSplit = {gross: number; net: number; tax: number}

/**
 * The split of a shown price: under `inclusive` the shown price is the gross and the tax is
 * taken out of it; under `exclusive` it is the net and the tax is added to it.
 */
export function splitShown(shownMinor: number, bp: number, behavior: TaxBehavior): TaxSplit {
  if (behavior === 'inclusive') {
    const tax = taxOfGross(shownMinor, bp)
    return {gross: shownMinor, net: shownMinor - tax, tax}
  }
  const tax = taxOfNet(shownMinor, bp)
  return {gross: shownMinor + tax, net: shownMinor, tax}
}

// ---------------------------------------------------------------- behaviour

/** The behaviour settings of a store: its own, per country and per product api_id (absent: not set). */
export type TaxSettings = {
  countries: ReadonlyMap<string, TaxBehavior>
  products: ReadonlyMap<string, TaxBehavior>
  store: TaxBehavior
}

/** The settings the store's rows make (a product's category is read by productCategory). */
export function taxSettingsOf(rows: readonly TaxSettingRow[]): TaxSettings {
  const countries = new Map<string, TaxBehavior>()
  const products = new Map<string, TaxBehavior>()
  let store: TaxBehavior = 'exclusive'
  for (const r of rows) {
    if (r.behavior === null) continue
    if (r.scope === 'store') store = r.behavior
    else if (r.scope === 'country') countries.set(r.subject, r.behavior)
    else products.set(r.subject, r.behavior)
  }
  return {countries, products, store}
}

/** The tax category of each product that has one other than standard, by api_id. */
export function productCategories(rows: readonly TaxSettingRow[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const r of rows) if (r.scope === 'product' && r.category) out.set(r.subject, r.category)
  return out
}

/** A store without settings: every price exclusive, as before tax behaviour existed. */
export const NO_TAX_SETTINGS: TaxSettings = {countries: new Map(), products: new Map(), store: 'exclusive'}

/** The behaviour of a product in a country and what decided it. */
export type BehaviorChoice = {behavior: TaxBehavior; source: string}

/**
 * Which behaviour applies, first match wins: the country's setting > US and CA are
 * exclusive > the product's setting > the store's setting (default exclusive).
 */
export function resolveBehavior(settings: TaxSettings, country: string, product: string): BehaviorChoice {
  const byCountry = settings.countries.get(country)
  if (byCountry) return {behavior: byCountry, source: `set for ${country}`}
  if (EXCLUSIVE_COUNTRIES.has(country)) return {behavior: 'exclusive', source: `${country} prices are shown before tax`}
  const byProduct = settings.products.get(product)
  if (byProduct) return {behavior: byProduct, source: `set for product ${product}`}
  return {behavior: settings.store, source: 'the store setting'}
}

// ---------------------------------------------------------------- rates

/** The rate that applies and where it comes from. */
export type TaxRateChoice = {bp: number; category: string; from: null | string; source: string}

/**
 * The rate of a country and product category on a day: the operator's latest rate dated on
 * or before the day (category first, then the country's standard), outranking the bundled
 * table whatever its date; else the bundled reduced rate of the category, else the bundled
 * standard rate, else 0 (no VAT: the US, or a country the table does not list).
 */
export function rateFor(operator: readonly OperatorTaxRate[], country: string, category: string, day: string): TaxRateChoice {
  const cat = category === 'standard' ? '' : category
  const pick = (c: string) => {
    let best: OperatorTaxRate | undefined
    for (const r of operator) if (r.country === country && r.category === c && r.from <= day && (!best || r.from > best.from)) best = r
    return best
  }
  const own = (cat && pick(cat)) || pick('')
  // An operator's standard rate outranks the bundled standard one, not a bundled reduced one
  // the operator has not overridden for the category: ebooks in DE stay at 7% when DE is set to 19.
  if (own && (own.category === cat || !(cat && REDUCED_RATES[cat]?.[country] !== undefined))) {
    return {bp: own.bp, category: own.category || 'standard', from: own.from, source: own.source}
  }
  const reduced = cat ? REDUCED_RATES[cat]?.[country] : undefined
  if (reduced !== undefined) return {bp: percentToBp(reduced), category: cat, from: TAX_TABLE_AS_OF, source: TAX_TABLE_SOURCE}
  const standard = STANDARD_RATES[country]
  if (standard !== undefined) return {bp: percentToBp(standard), category: 'standard', from: TAX_TABLE_AS_OF, source: TAX_TABLE_SOURCE}
  return {bp: 0, category: 'standard', from: null, source: `no ${taxLabel(country)} rate on file`}
}

// ---------------------------------------------------------------- words

/**
 * "incl. VAT" / "+ VAT" in the words of a language. Our own table: the wording price tags
 * use in each language (German "inkl. MwSt." as the Preisangabenverordnung has it, French
 * TTC/HT, Japanese 税込/税抜); CLDR has no such phrases. Other languages read English.
 */
const WORDS: Readonly<Record<string, readonly [string, string]>> = {
  da: ['inkl. moms', 'ekskl. moms'],
  de: ['inkl. MwSt.', 'zzgl. MwSt.'],
  es: ['IVA incluido', '+ IVA'],
  fi: ['sis. ALV', '+ ALV'],
  fr: ['TTC', 'HT'],
  hu: ['ÁFA-val', '+ ÁFA'],
  it: ['IVA inclusa', '+ IVA'],
  ja: ['税込', '税抜'],
  nb: ['inkl. mva.', 'ekskl. mva.'],
  nl: ['incl. btw', 'excl. btw'],
  pl: ['z VAT', '+ VAT'],
  pt: ['IVA incluído', '+ IVA'],
  sv: ['inkl. moms', 'exkl. moms'],
}

/** The display words of a behaviour for a country in its locale ("de-DE"). */
export function taxWords(behavior: TaxBehavior, country: string, locale: string): string {
  const words = WORDS[locale.split('-')[0]]
  if (words) return behavior === 'inclusive' ? words[0] : words[1]
  const label = taxLabel(country)
  return behavior === 'inclusive' ? `incl. ${label}` : `+ ${label}`
}

export {REDUCED_RATES, STANDARD_RATES, TAX_CATEGORIES, TAX_TABLE_AS_OF, TAX_TABLE_SOURCE, taxLabel} from './table.js'
