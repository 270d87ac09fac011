import {isoDay, nowSeconds} from '../clock.js'
import {InvalidInputError} from '../errors.js'
import type {StorePort} from '../store/port.js'
import {type FxKind, fxKind} from './sources.js'
import type {FxRate} from '../domain.js'

/** A rate: units of `currency` per 1 USD, as of `date`. */
export type {FxRate}

/**
 * Which rate converts a currency on a day (docs/fx-localization-geoip.md, "Which rate is
 * used"): operator rates outrank the bundled snapshot whatever their dates, and a rate applies
 * from its own date on. Pricing asks for today, revenue for the record's created day; the
 * store applies the rule (ConfigRepository.ratesOn / rateOn).
 */

/** Today (UTC) by the clock module, so PRICECTL_NOW can pin it. */
export function fxToday(): string {
  return isoDay(nowSeconds())
}

const identity = (date: string): FxRate => ({currency: 'USD', date, rate: 1, source: 'identity'})

/**
 * The rate of a currency on a day (default today) by the rule above, or undefined when
 * it has none on file (or only operator rates dated after today and after the day).
 * USD is always 1.
 */
export async function rateOn(store: StorePort, currency: string, date?: string, today = fxToday()): Promise<FxRate | undefined> {
  const day = date ?? today
  if (currency === 'USD') return identity(day)
  return await store.config.rateOn(currency, day, today)
}

/** Like rateOn, but a missing rate is an input error naming the currency and the fix. */
export async function requireRate(store: StorePort, currency: string, date?: string): Promise<FxRate> {
  const r = await rateOn(store, currency, date)
  if (!r) throw new InvalidInputError(`no FX rate for ${currency}${date ? ` usable on ${date}` : ''}: add one with "pricectl fx set ${currency} RATE" or "pricectl fx import FILE"`)
  return r
}

/**
 * The rate of every currency on a day (default today) in one query, for pricing many
 * requests without a query each. USD is always 1.
 */
export async function ratesOn(store: StorePort, date?: string, today = fxToday()): Promise<Map<string, FxRate>> {
  const day = date ?? today
  const rows = await store.config.ratesOn(day, today)
  const map = new Map(rows.map((r) => [r.currency, r]))
  map.set('USD', identity(map.get('USD')?.date ?? day))
  return map
}

const KIND_WORDS: Record<FxKind, string> = {import: 'operator import', manual: 'operator rate', snapshot: 'bundled snapshot'}

/** "0.92 EUR/USD (2026-04-10, manual)": a rate inside an explain note of a conversion. */
export function rateText(r: FxRate): string {
  return `${r.rate} ${r.currency}/USD (${r.date}, ${r.source})`
}

/** "0.92 EUR/USD dated 2026-04-10 from "ECB eurofxref (hist.csv)" (operator import)": the explain step of a currency's rate. */
export function describeRate(r: FxRate): string {
  if (r.currency === 'USD') return '1 USD/USD (the base)'
  return `${r.rate} ${r.currency}/USD dated ${r.date} from "${r.source}" (${KIND_WORDS[fxKind(r.source)]})`
}

/**
 * What else a currency has on file beside the rate used on a day, for `price explain`:
 * the snapshot rate an operator rate outranks, and the next rate scheduled after today.
 */
export async function rateContext(store: StorePort, used: FxRate, today = fxToday()): Promise<string[]> {
  if (used.currency === 'USD') return []
  const notes: string[] = []
  if (used.date > today) notes.push(`dated after today (${today}): no earlier rate is on file, so the bundled snapshot is used as the floor`)
  if (fxKind(used.source) !== 'snapshot') {
    const s = await store.config.latestSnapshotRate(used.currency)
    if (s) notes.push(`outranks the bundled snapshot's ${s.rate} dated ${s.date}${s.date > used.date ? ' (operator rates win whatever their dates)' : ''}`)
  }
  const next = await store.config.nextOperatorRate(used.currency, today)
  if (next) notes.push(`${next.rate} from "${next.source}" is scheduled from ${next.date}, not used before then`)
  return notes
}
