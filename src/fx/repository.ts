import type {StorePort} from '../store/port.js'
import {defaultFxSnapshot} from './snapshot.js'
import {type FxRate, fxToday, rateOn, ratesOn} from './rates.js'
import {type FxKind, fxKind} from './sources.js'

/**
 * Reads and writes of fx_rates for the `fx` commands (rates.ts holds the lookups pricing
 * and revenue use, prune.ts the removals). Rates are units of the currency per 1 USD.
 */

/**
 * What a listed rate means for pricing today: `current` is the rate prices use now;
 * `scheduled` is dated after today and not used before its date; `outranked` is a
 * snapshot rate while an operator rate is current; `past` is an earlier rate (revenue
 * records of its days still convert at it).
 */
export type FxStatus = 'current' | 'outranked' | 'past' | 'scheduled'

export type ListedRate = FxRate & {kind: FxKind; status: FxStatus}

export type ListOptions = {
  /** Only this currency. */
  currency?: string
  /** As of this day: the rate conversion would use on that day (see rateOn). */
  date?: string
  /** Every dated rate instead of one per currency (on or before `date` when given), newest first. */
  history?: boolean
  /** Today, for statuses and the current rate (default: the clock's). */
  today?: string
}

/**
 * Rates to list. Default: per currency the rate pricing uses today, followed by its
 * rates scheduled after today. `date`: per currency the rate conversion uses on that
 * day. `history`: every row. Each with its kind and its status today.
 */
export async function listRates(store: StorePort, options: ListOptions = {}): Promise<ListedRate[]> {
  const {currency, date, history} = options
  const today = options.today ?? fxToday()
  const current = await currentRows(store, today)
  const status = statusOf(current, today)
  if (history) {
    return (await store.config.fxHistory({currency, onOrBefore: date})).map(status)
  }
  if (date) {
    const rows = currency ? [await rowOn(store, currency, date, today)].filter((r): r is FxRate => r !== undefined) : withUsd(await ratesOnRows(store, date, today), date)
    return rows.map(status)
  }
  const rows = currency ? [current.get(currency)].filter((r): r is FxRate => r !== undefined) : [...current.values()]
  const scheduled = await store.config.fxScheduled(today, currency)
  return [...rows, ...scheduled.filter((s) => current.get(s.currency)?.date !== s.date)]
    .sort((a, b) => (a.currency === b.currency ? a.date.localeCompare(b.date) : a.currency.localeCompare(b.currency)))
    .map(status)
}

/** Per currency the row pricing uses today, USD's own stored row included (listing only). */
async function currentRows(store: StorePort, today: string): Promise<Map<string, FxRate>> {
  return new Map(withUsd(await ratesOnRows(store, today, today), today).map((r) => [r.currency, r]))
}

/** ratesOn without the identity USD: the stored rows, for listing. */
async function ratesOnRows(store: StorePort, day: string, today: string): Promise<FxRate[]> {
  const map = await ratesOn(store, day, today)
  const usd = await rowOn(store, 'USD', day, today)
  const rows = [...map.values()].filter((r) => r.currency !== 'USD')
  if (usd) rows.push(usd)
  return rows.sort((a, b) => a.currency.localeCompare(b.currency))
}

/** The stored row of a currency on a day (USD too: the seed stores USD = 1 for listing). */
async function rowOn(store: StorePort, currency: string, day: string, today: string): Promise<FxRate | undefined> {
  if (currency !== 'USD') return await rateOn(store, currency, day, today)
  return (
    await store.config.latestStoredRate('USD', day) ?? {
      currency: 'USD',
      date: day,
      rate: 1,
      source: 'identity',
    }
  )
}

function withUsd(rows: FxRate[], day: string): FxRate[] {
  if (rows.some((r) => r.currency === 'USD')) return rows
  return [...rows, {currency: 'USD', date: day, rate: 1, source: 'identity'}].sort((a, b) => a.currency.localeCompare(b.currency))
}

function statusOf(current: Map<string, FxRate>, today: string): (r: FxRate) => ListedRate {
  // Rows share a handful of labels: classify each label once (a history has 200,000 rows).
  const kinds = new Map<string, FxKind>()
  const kindOf = (source: string) => {
    let k = kinds.get(source)
    if (k === undefined) kinds.set(source, (k = source === 'identity' ? 'snapshot' : fxKind(source)))
    return k
  }
  return (r) => {
    const kind = kindOf(r.source)
    const cur = current.get(r.currency)
    let status: FxStatus
    if (cur && cur.date === r.date) status = 'current'
    else if (kind === 'snapshot' && cur && kindOf(cur.source) !== 'snapshot') status = 'outranked'
    else if (r.date > today) status = 'scheduled'
    else status = 'past'
    return {currency: r.currency, date: r.date, kind, rate: r.rate, source: r.source, status}
  }
}

/** The row stored for a currency and day, if any. */
export async function storedRate(store: StorePort, currency: string, date: string): Promise<FxRate | undefined> {
  return await store.config.storedRate(currency, date)
}

/** Store one rate (replacing the one for the same currency and day). */
export async function setRate(store: StorePort, rate: FxRate): Promise<FxRate> {
  await store.config.saveFxRates([rate])
  return rate
}

export type SetResult = {
  /** The rate pricing uses today after the write (this one, or another while this one is scheduled). */
  current: FxRate | undefined
  rate: FxRate
  /** The row this one replaced (same currency and day), if any. */
  replaced: FxRate | undefined
  /** Dated after today: kept, not used before its date. */
  scheduled: boolean
  /** The replaced row was the installed snapshot's: deleting this rate puts it back (see prune.ts). */
  snapshotComesBack: boolean
}

/** `fx set`: store an operator rate and say what it replaced and whether it is used today. */
export async function setOperatorRate(store: StorePort, rate: FxRate, today = fxToday()): Promise<SetResult> {
  return await store.transaction(
    async () => {
      const replaced = await storedRate(store, rate.currency, rate.date)
      await setRate(store, rate)
      const snapshotComesBack = replaced !== undefined && replaced.source === defaultFxSnapshot().source && replaced.date === defaultFxSnapshot().date
      return {current: await rateOn(store, rate.currency, undefined, today), rate, replaced, scheduled: rate.date > today, snapshotComesBack}
    },
    {write: true},
  )
}

/**
 * Mean of a currency's rates dated within a calendar year, with how many went into it;
 * undefined when none is on file. (The World Bank's market rates are annual averages too.)
 */
export async function yearAverageRate(store: StorePort, currency: string, year: number, today = fxToday()): Promise<{days: number; rate: number} | undefined> {
  if (currency === 'USD') return {days: 1, rate: 1}
  // A rate scheduled after today is not used yet, in an average either.
  const end = `${year}-12-31` < today ? `${year}-12-31` : today
  return await store.config.fxAverage(currency, `${year}-01-01`, end)
}
