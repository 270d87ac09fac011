import type {DB} from '../store/db.js'
import {type FxRate, latestRates, rateOn} from './rates.js'

/**
 * Reads and writes of fx_rates for the `fx` commands (rates.ts holds the lookups pricing
 * and revenue use). Rates are units of the currency per 1 USD.
 */

export type ListOptions = {
  /** Only this currency. */
  currency?: string
  /** As of this day: the rate conversion would use on that day (nearest earlier, see rateOn). */
  date?: string
  /** Every dated rate instead of one per currency (on or before `date` when given), newest first. */
  history?: boolean
}

export function listRates(db: DB, options: ListOptions = {}): FxRate[] {
  const {currency, date, history} = options
  if (history) {
    const where: string[] = []
    const params: string[] = []
    if (currency) {
      where.push('currency = ?')
      params.push(currency)
    }
    if (date) {
      where.push('date <= ?')
      params.push(date)
    }
    const sql = `SELECT currency, date, rate, source FROM fx_rates ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY currency, date DESC`
    return db.prepare(sql).all(...params) as FxRate[]
  }
  if (currency) {
    const r = currency === 'USD' ? storedUsd(db, date) : rateOn(db, currency, date)
    return r ? [r] : []
  }
  if (!date) {
    const rows = [...latestRates(db).values()]
    const usd = storedUsd(db)
    return rows.map((r) => (r.currency === 'USD' && usd ? usd : r)).sort((a, b) => a.currency.localeCompare(b.currency))
  }
  // As of a day: per currency the nearest earlier rate, else its earliest (what rateOn returns).
  const rows = db
    .prepare(
      `SELECT f.currency, f.date, f.rate, f.source FROM fx_rates f
       JOIN (SELECT currency, coalesce(max(CASE WHEN date <= ? THEN date END), min(date)) AS date FROM fx_rates GROUP BY currency) m
       USING (currency, date) ORDER BY f.currency`,
    )
    .all(date) as FxRate[]
  return rows
}

/** USD's own row (the seed stores USD = 1 with the snapshot's date), for listing; conversion never needs it. */
function storedUsd(db: DB, date?: string): FxRate | undefined {
  const row = date
    ? (db.prepare(`SELECT currency, date, rate, source FROM fx_rates WHERE currency = 'USD' AND date <= ? ORDER BY date DESC LIMIT 1`).get(date) as FxRate | undefined)
    : (db.prepare(`SELECT currency, date, rate, source FROM fx_rates WHERE currency = 'USD' ORDER BY date DESC LIMIT 1`).get() as FxRate | undefined)
  return row ?? {currency: 'USD', date: date ?? '1970-01-01', rate: 1, source: 'identity'}
}

/** Store one rate (replacing the one for the same currency and day). */
export function setRate(db: DB, rate: FxRate): FxRate {
  db.prepare(
    'INSERT INTO fx_rates (currency, date, rate, source) VALUES (?, ?, ?, ?) ON CONFLICT (currency, date) DO UPDATE SET rate = excluded.rate, source = excluded.source',
  ).run(rate.currency, rate.date, rate.rate, rate.source)
  return rate
}

/**
 * Mean of a currency's rates dated within a calendar year, with how many went into it;
 * undefined when none is on file. (The World Bank's market rates are annual averages too.)
 */
export function yearAverageRate(db: DB, currency: string, year: number): {days: number; rate: number} | undefined {
  if (currency === 'USD') return {days: 1, rate: 1}
  const row = db
    .prepare('SELECT avg(rate) AS rate, count(*) AS days FROM fx_rates WHERE currency = ? AND date >= ? AND date <= ?')
    .get(currency, `${year}-01-01`, `${year}-12-31`) as {days: number; rate: null | number}
  return row.rate === null ? undefined : {days: row.days, rate: row.rate}
}
