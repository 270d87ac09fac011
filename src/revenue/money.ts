import {isoDay} from '../clock.js'
import {convertMinor, fromMinor, mulDivHalfUp} from '../currency.js'
import type {FxRate} from '../fx/rates.js'
import type {DB} from '../store/db.js'

/**
 * USD amounts of revenue records: integer cents at the FX rate of the record's created
 * date, and the month-normalised figure subscriptions carry (amount_usd_monthly).
 */

/** Minor units of `currency` to USD cents with a rate in units per 1 USD. */
export function usdMinor(amountMinor: number, currency: string, rate: number): number {
  return convertMinor(amountMinor, currency, rate, 'USD', 1)
}

/**
 * USD cents per month: day x 365/12, week x 52/12, month x 1, year / 12, each divided by
 * interval_count, rounded half up to the cent. Computed from the (already rounded) USD
 * cents, so a monthly subscription's monthly figure equals its amount_usd. One-time: null.
 */
export function monthlyMinor(usdCents: number, interval: null | string | undefined, intervalCount: null | number | undefined): null | number {
  const count = intervalCount && intervalCount > 0 ? intervalCount : 1
  switch (interval) {
    case 'day': {
      return mulDivHalfUp(usdCents, 365n, BigInt(12 * count))
    }

    case 'week': {
      return mulDivHalfUp(usdCents, 52n, BigInt(12 * count))
    }

    case 'month': {
      return mulDivHalfUp(usdCents, 1n, BigInt(count))
    }

    case 'year': {
      return mulDivHalfUp(usdCents, 1n, BigInt(12 * count))
    }

    default: {
      return null
    }
  }
}

export function centsToUsd(cents: null | number): null | number {
  return cents === null ? null : fromMinor(cents, 'USD')
}

/**
 * Every FX rate of the store in memory, for imports: the same rule as rateOn (nearest
 * earlier date, else the earliest) without a query per row.
 */
export class FxTable {
  private readonly byCurrency = new Map<string, {dates: string[]; rates: number[]}>()
  private readonly cache = new Map<string, number | undefined>()

  constructor(db: DB) {
    const rows = db.prepare('SELECT currency, date, rate FROM fx_rates ORDER BY currency, date').all() as Pick<FxRate, 'currency' | 'date' | 'rate'>[]
    for (const r of rows) {
      let e = this.byCurrency.get(r.currency)
      if (!e) this.byCurrency.set(r.currency, (e = {dates: [], rates: []}))
      e.dates.push(r.date)
      e.rates.push(r.rate)
    }
  }

  /** Units of `currency` per USD on the UTC day of `seconds`, or undefined without any rate. */
  rate(currency: string, seconds: number): number | undefined {
    if (currency === 'USD') return 1
    const day = Math.floor(seconds / 86_400)
    const key = `${currency}:${day}`
    if (this.cache.has(key)) return this.cache.get(key)
    const e = this.byCurrency.get(currency)
    let rate: number | undefined
    if (e) {
      const date = isoDay(day * 86_400)
      let lo = 0
      let hi = e.dates.length - 1
      let found = -1
      while (lo <= hi) {
        const mid = (lo + hi) >> 1
        if (e.dates[mid] <= date) {
          found = mid
          lo = mid + 1
        } else {
          hi = mid - 1
        }
      }
      rate = e.rates[found === -1 ? 0 : found]
    }
    if (this.cache.size > 100_000) this.cache.clear()
    this.cache.set(key, rate)
    return rate
  }
}
