import {nowIso} from '../clock.js'
import {assertCountry} from '../currency.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import type {StorePort} from '../store/port.js'
import {REDUCED_RATES, STANDARD_RATES, TAX_TABLE_AS_OF, TAX_TABLE_SOURCE, taxLabel} from './table.js'
import {bpToPercent, type OperatorTaxRate, percentToBp, rateFor, TAX_BEHAVIORS, TAX_CATEGORIES, type TaxBehavior, type TaxSettingRow} from './tax.js'

/**
 * The operator's side of tax in prices (docs/tax.md): rates set, listed and deleted, and the
 * behaviour and category settings, as the `tax` commands and the library call them. Writes
 * go through the caller's price-impact measure and are recorded in the history.
 */

/** A rate as `tax list` and `tax set` show it. */
export type TaxRateOut = {category: string; country: string; from: null | string; kind: 'bundled' | 'operator'; label: string; rate: number; source: string; status: 'current' | 'outranked' | 'scheduled'}

const DAY = /^\d{4}-\d{2}-\d{2}$/

function checkDay(day: string, field: string): string {
  if (!DAY.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
    throw new InvalidInputError(`${field}: ${JSON.stringify(day)} is not a day (expected YYYY-MM-DD)`)
  }
  return day
}

/** A category as typed: 'standard' (or '') is the country's standard rate, another must be one the table knows. */
export function checkCategory(category: string | undefined): string {
  const c = (category ?? 'standard').trim().toLowerCase()
  if (c === '' || c === 'standard') return ''
  if (!(TAX_CATEGORIES as readonly string[]).includes(c)) {
    throw new InvalidInputError(`--category: unknown tax category ${JSON.stringify(category)} (expected one of ${TAX_CATEGORIES.join(', ')})`)
  }
  return c
}

function checkBehavior(b: string): TaxBehavior {
  if (!(TAX_BEHAVIORS as readonly string[]).includes(b)) throw new InvalidInputError(`BEHAVIOR: ${JSON.stringify(b)} is not a tax behaviour (expected inclusive or exclusive)`)
  return b as TaxBehavior
}

function out(r: OperatorTaxRate, status: TaxRateOut['status']): TaxRateOut {
  return {category: r.category || 'standard', country: r.country, from: r.from, kind: 'operator', label: taxLabel(r.country), rate: bpToPercent(r.bp), source: r.source, status}
}

/** `tax set`: store an operator rate for a country (and category) from a day; a later day schedules it. */
export async function setTaxRate(
  store: StorePort,
  input: {category?: string; country: string; from?: string; rate: number; source?: string},
  today: string,
): Promise<{current: TaxRateOut; rate: TaxRateOut; replaced: null | TaxRateOut; scheduled: boolean}> {
  const country = assertCountry(input.country.trim().toUpperCase(), 'COUNTRY')
  const category = checkCategory(input.category)
  const from = checkDay(input.from ?? today, '--from')
  const bp = percentToBp(input.rate, 'RATE')
  const source = input.source?.trim() || 'manual'
  const rate: OperatorTaxRate = {bp, category, country, from, source}
  let replaced: null | TaxRateOut = null
  await store.transaction(
    async () => {
      const old = (await store.config.taxRates()).find((r) => r.country === country && r.category === category && r.from === from)
      if (old) replaced = out(old, 'outranked')
      await store.config.saveTaxRate(rate, nowIso())
    },
    {write: true},
  )
  const scheduled = from > today
  return {current: await currentRate(store, country, category || 'standard', today), rate: out(rate, scheduled ? 'scheduled' : 'current'), replaced, scheduled}
}

/** The rate a country and category are priced at today, as a list row. */
export async function currentRate(store: StorePort, country: string, category: string, today: string): Promise<TaxRateOut> {
  const r = rateFor(await store.config.taxRates(), country, category, today)
  const bundled = r.source === TAX_TABLE_SOURCE || r.from === null
  return {category: r.category, country, from: r.from, kind: bundled ? 'bundled' : 'operator', label: taxLabel(country), rate: bpToPercent(r.bp), source: r.source, status: 'current'}
}

/**
 * `tax list`: the rate each country is priced at today (bundled or operator), with the
 * operator's scheduled and outranked rows; one country's when given.
 */
export async function listTaxRates(store: StorePort, options: {country?: string}, today: string): Promise<TaxRateOut[]> {
  const operator = await store.config.taxRates()
  const only = options.country ? assertCountry(options.country.trim().toUpperCase(), '--country') : undefined
  const countries = new Set<string>([...Object.keys(STANDARD_RATES), ...operator.map((r) => r.country)])
  for (const c of Object.values(REDUCED_RATES)) for (const k of Object.keys(c)) countries.add(k)
  const rows: TaxRateOut[] = []
  for (const country of [...countries].sort()) {
    if (only && country !== only) continue
    const categories = new Set<string>(['standard'])
    for (const [cat, table] of Object.entries(REDUCED_RATES)) if (table[country] !== undefined) categories.add(cat)
    for (const r of operator) if (r.country === country && r.category) categories.add(r.category)
    for (const category of categories) {
      const current = await currentRate(store, country, category, today)
      rows.push(current)
      for (const r of operator) {
        if (r.country !== country || (r.category || 'standard') !== category) continue
        if (current.kind === 'operator' && r.from === current.from && (r.category || 'standard') === current.category) continue
        rows.push(out(r, r.from > today ? 'scheduled' : 'outranked'))
      }
    }
  }
  if (only && rows.length === 0) rows.push(await currentRate(store, only, 'standard', today))
  return rows
}

/** `tax delete`: remove a country's operator rates (of a category; the one from a day when given). */
export async function deleteTaxRate(store: StorePort, input: {category?: string; country: string; from?: string}): Promise<{removed: number}> {
  const country = assertCountry(input.country.trim().toUpperCase(), 'COUNTRY')
  const category = checkCategory(input.category)
  const from = input.from === undefined ? undefined : checkDay(input.from, '--from')
  const removed = await store.transaction(async () => await store.config.deleteTaxRates(country, category, from), {write: true})
  if (removed === 0) {
    throw new NotFoundError(`no operator tax rate for ${country}${category ? ` (${category})` : ''}${from ? ` from ${from}` : ''} (see "pricectl tax list --country ${country}")`)
  }
  return {removed}
}

/** The behaviour settings as `tax behavior` shows them. */
export type TaxSettingOut = {behavior: null | TaxBehavior; category: null | string; scope: TaxSettingRow['scope']; subject: string}

/** Every stored setting, with the store's behaviour first (exclusive when never set). */
export async function taxSettingsList(store: StorePort): Promise<{settings: TaxSettingOut[]; store_behavior: TaxBehavior}> {
  const rows = await store.config.taxSettings()
  return {settings: rows, store_behavior: rows.find((r) => r.scope === 'store')?.behavior ?? 'exclusive'}
}

/**
 * `tax behavior`: set (or, with `behavior` null, unset) the behaviour of the store, a country
 * or a product. A product keeps its category when its behaviour is unset.
 */
export async function setTaxBehavior(store: StorePort, target: {country?: string; product?: string}, behavior: null | string): Promise<TaxSettingOut> {
  if (target.country && target.product) throw new InvalidInputError('give --country or --product, not both (no per product and country setting: docs/tax.md)')
  const b = behavior === null ? null : checkBehavior(behavior)
  const scope: TaxSettingRow['scope'] = target.country ? 'country' : target.product ? 'product' : 'store'
  const subject = target.country ? assertCountry(target.country.trim().toUpperCase(), '--country') : (target.product ?? '')
  if (target.product !== undefined && !await store.pricing.productRow(target.product)) throw new NotFoundError(`unknown product "${target.product}" (see "pricectl products list")`)
  return await store.transaction(
    async () => {
      const old = (await store.config.taxSettings()).find((r) => r.scope === scope && r.subject === subject)
      const row: TaxSettingRow = {behavior: b, category: old?.category ?? null, scope, subject}
      if (row.behavior === null && row.category === null) await store.config.deleteTaxSetting(scope, subject)
      else await store.config.saveTaxSetting(row, nowIso())
      return row
    },
    {write: true},
  )
}

/** `tax category`: a product's tax category ('standard' removes it). */
export async function setTaxCategory(store: StorePort, product: string, category: string): Promise<TaxSettingOut> {
  if (!await store.pricing.productRow(product)) throw new NotFoundError(`unknown product "${product}" (see "pricectl products list")`)
  const c = checkCategory(category)
  return await store.transaction(
    async () => {
      const old = (await store.config.taxSettings()).find((r) => r.scope === 'product' && r.subject === product)
      const row: TaxSettingRow = {behavior: old?.behavior ?? null, category: c || null, scope: 'product', subject: product}
      if (row.behavior === null && row.category === null) await store.config.deleteTaxSetting('product', product)
      else await store.config.saveTaxSetting(row, nowIso())
      return row
    },
    {write: true},
  )
}

export {TAX_TABLE_AS_OF}
