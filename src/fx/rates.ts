import {InvalidInputError} from '../errors.js'
import type {DB} from '../store/db.js'

/** A rate: units of `currency` per 1 USD, as of `date`. */
export type FxRate = {currency: string; date: string; rate: number; source: string}

/**
 * The rate for a currency on a date: the nearest earlier date on file, else (history
 * older than every rate) the earliest one. Without a date: the latest rate.
 * USD is always 1.
 */
export function rateOn(db: DB, currency: string, date?: string): FxRate | undefined {
  if (currency === 'USD') return {currency, date: date ?? '1970-01-01', rate: 1, source: 'identity'}
  const row = date
    ? ((db.prepare('SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? AND date <= ? ORDER BY date DESC LIMIT 1').get(currency, date) as FxRate | undefined) ??
      (db.prepare('SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? ORDER BY date ASC LIMIT 1').get(currency) as FxRate | undefined))
    : (db.prepare('SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? ORDER BY date DESC LIMIT 1').get(currency) as FxRate | undefined)
  return row
}

/** Like rateOn, but a missing rate is an input error naming the currency and the fix. */
export function requireRate(db: DB, currency: string, date?: string): FxRate {
  const r = rateOn(db, currency, date)
  if (!r) throw new InvalidInputError(`no FX rate for ${currency}: add one with "pricectl fx set ${currency} RATE" or "pricectl fx import FILE"`)
  return r
}

/** Latest rate of every currency, for pricing many requests without a query each. */
export function latestRates(db: DB): Map<string, FxRate> {
  const rows = db
    .prepare('SELECT f.currency, f.date, f.rate, f.source FROM fx_rates f JOIN (SELECT currency, max(date) AS date FROM fx_rates GROUP BY currency) m USING (currency, date)')
    .all() as FxRate[]
  const map = new Map(rows.map((r) => [r.currency, r]))
  map.set('USD', {currency: 'USD', date: map.get('USD')?.date ?? '1970-01-01', rate: 1, source: 'identity'})
  return map
}
