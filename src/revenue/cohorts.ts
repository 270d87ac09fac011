import {nowSeconds} from '../clock.js'
import {fromMinor} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import type {StorePort} from '../store/port.js'
import type {Span} from '../store/port/revenue.js'
import {byCustomer, changes, percent} from './metrics.js'
import {day, monthStart} from './periods.js'
import {historyStretches} from './report.js'
import {paying} from './timeline.js'

/**
 * `revenue cohorts`: customers grouped by signup month (the UTC month their MRR first went
 * above 0, on the day-merged movements of metrics.ts), and per month since signup how many
 * of them still pay (logo retention) and how much of their starting MRR they pay (revenue
 * retention, expansion included, so it can pass 100%). Month k is measured at the end of
 * the k-th calendar month after the signup month (month 0: the end of the signup month).
 */

export type CohortMonth = {
  customers: number
  logo_retention: null | number
  month: number
  mrr: number
  revenue_retention: null | number
}

export type Cohort = {
  /** The signup month, YYYY-MM. */
  cohort: string
  customers: number
  /** Their MRR when each started paying (USD per month). */
  mrr: number
  months: CohortMonth[]
}

export type CohortsResult = {
  cohorts: Cohort[]
  currency: 'USD'
  message: string
  since: string
  success: true
  until: string
}

const DAY = 86_400

/** The signup moment and starting MRR (cents) of a customer: their first day-merged change to more than 0. */
function signup(spans: readonly Span[]): undefined | {mrr: number; t: number; timeline: ReturnType<typeof changes>} {
  const cs = changes(spans)
  for (let j = 0; j < cs.length; ) {
    const dayOf = Math.floor(cs[j].t / DAY)
    let k = j
    while (k + 1 < cs.length && Math.floor(cs[k + 1].t / DAY) === dayOf) k++
    if (cs[j].before === 0 && cs[k].after > 0) return {mrr: cs[k].after, t: cs[j].t, timeline: cs}
    j = k + 1
  }
  return undefined
}

function mrrAt(cs: ReturnType<typeof changes>, t: number): number {
  let v = 0
  for (const c of cs) {
    if (c.t >= t) break
    v = c.after
  }
  return v
}

/** Cohorts of the signup months in [since, until), measured up to the end of until's month. */
export function cohortTable(spans: readonly Span[], since: number, until: number): Cohort[] {
  const last = monthStart(until - 1)
  const groups = new Map<number, {customers: number; mrr: number; months: {customers: number; mrr: number}[]}>()
  for (const customer of byCustomer(spans).values()) {
    const s = signup(customer)
    if (!s || s.t < since || s.t >= until) continue
    const month = monthStart(s.t)
    let g = groups.get(month)
    if (!g) {
      g = {customers: 0, mrr: 0, months: []}
      for (let m = month; m <= last; m = monthStart(m, 1)) g.months.push({customers: 0, mrr: 0})
      groups.set(month, g)
    }
    g.customers++
    g.mrr += s.mrr
    for (const [k, cell] of g.months.entries()) {
      const v = mrrAt(s.timeline, monthStart(month, k + 1))
      if (v > 0) (cell.customers += 1), (cell.mrr += v)
    }
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([month, g]) => ({
      cohort: day(month).slice(0, 7),
      customers: g.customers,
      months: g.months.map((c, k) => ({
        customers: c.customers,
        logo_retention: percent(c.customers, g.customers),
        month: k,
        mrr: fromMinor(c.mrr, 'USD'),
        revenue_retention: percent(c.mrr, g.mrr),
      })),
      mrr: fromMinor(g.mrr, 'USD'),
    }))
}

export async function revenueCohorts(store: StorePort, o: {since?: number; until?: number}): Promise<CohortsResult> {
  const until = o.until ?? monthStart(nowSeconds(), 1)
  const since = o.since ?? monthStart(until - 1, -11)
  if (until <= since) throw new InvalidInputError(`--until (${day(until)}) must be after --since (${day(since)})`)
  if (until - since > 100 * 366 * DAY) throw new InvalidInputError('the cohorts cover more than 100 years: narrow --since/--until')
  // Spans ending by the end of until's month are all that month k can see.
  const cohorts = cohortTable(paying(await historyStretches(store, 'month', monthStart(until - 1, 1))), since, until)
  const customers = cohorts.reduce((n, c) => n + c.customers, 0)
  return {
    cohorts,
    currency: 'USD',
    message: `cohorts by signup month ${day(since)} to ${day(until - 1)}: ${cohorts.length} cohort${cohorts.length === 1 ? '' : 's'} of ${customers} customer${customers === 1 ? '' : 's'}`,
    since: day(since),
    success: true,
    until: day(until - 1),
  }
}
