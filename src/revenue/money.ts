import {isoDay} from '../clock.js'
import {convertMinor, fromMinor, mulDivHalfUp} from '../currency.js'
import {type FxRate, fxToday} from '../fx/rates.js'
import type {RevenueRepository} from '../store/port/revenue.js'

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

/** Dates (ascending) and rates of one class of rates of one currency. */
type Series = {dates: string[]; rates: number[]}

/** Index of the last date <= day in ascending `dates`, or -1. */
function lastOnOrBefore(dates: string[], day: string): number {
  let lo = 0
  let hi = dates.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (dates[mid] <= day) {
      found = mid
      lo = mid + 1
    } else {
      hi = mid - 1
    }
  }
  return found
}

/**
 * The FX rates of the store in memory, for imports: the rule of rateOn (src/fx/rates.ts:
 * operator rates outrank the snapshot, nearest earlier date, a rate applies from its
 * date) without a query per row. A currency's rates are read by load() (an export holds a
 * few currencies; the store may hold decades of ECB history for thirty), before rate() is
 * asked for them: rate() reads nothing, so the row mapper calling it stays synchronous
 * whatever the store (src/import/rows.ts, "Loads"). "Today" is fixed when the table is made.
 */
export class FxTable {
  private readonly byCurrency = new Map<string, {operator: Series; snapshot: Series}>()
  private readonly cache = new Map<string, number | undefined>()
  private readonly today: string

  constructor(
    private readonly rates: Pick<RevenueRepository, 'fxHistory'>,
    today = fxToday(),
  ) {
    this.today = today
  }

  /** Whether rate(currency) needs load(currency) first (USD never does). */
  missing(currency: string): boolean {
    return currency !== 'USD' && !this.byCurrency.has(currency)
  }

  /** Read the rates of currencies not read yet (one fxHistory call each). */
  async load(...currencies: string[]): Promise<void> {
    for (const currency of currencies) {
      if (!this.missing(currency)) continue
      const e = {operator: {dates: [], rates: []} as Series, snapshot: {dates: [], rates: []} as Series}
      const history = await this.rates.fxHistory(currency)
      for (const {date, rate, snapshot} of history) {
        const series = snapshot ? e.snapshot : e.operator
        series.dates.push(date)
        series.rates.push(rate)
      }
      this.byCurrency.set(currency, e)
    }
  }

  private series(currency: string): {operator: Series; snapshot: Series} {
    const e = this.byCurrency.get(currency)
    if (!e) throw new Error(`FxTable: the rates of ${currency} are not loaded (call load(${JSON.stringify(currency)}) first)`)
    return e
  }

  /** Units of `currency` per USD on the UTC day of `seconds`, or undefined without any rate; its rates loaded (load). */
  rate(currency: string, seconds: number): number | undefined {
    if (currency === 'USD') return 1
    const day = Math.floor(seconds / 86_400)
    const key = `${currency}:${day}`
    if (this.cache.has(key)) return this.cache.get(key)
    const {operator: op, snapshot: snap} = this.series(currency)
    const date = isoDay(day * 86_400)
    const o = lastOnOrBefore(op.dates, date)
    const s = o === -1 ? lastOnOrBefore(snap.dates, date) : -1
    let rate: number | undefined
    if (o !== -1) rate = op.rates[o]
    else if (s !== -1) rate = snap.rates[s]
    else if (op.dates.length > 0 && op.dates[0] <= this.today) rate = op.rates[0]
    else if (snap.dates.length > 0) rate = snap.rates[0]
    if (this.cache.size > 100_000) this.cache.clear()
    this.cache.set(key, rate)
    return rate
  }
}
