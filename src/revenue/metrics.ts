import type {Period, Span} from '../store/port/revenue.js'

/**
 * MRR movements, churn, retention and LTV (docs/revenue.md, "Metrics"), per customer
 * (user_id) from the paying stretches of subscriptions, counted as ChartMogul, Baremetrics
 * and ProfitWell do. A customer's changes on one UTC day are one movement, so an upgrade
 * recorded as "old ends, new starts" is an expansion, not a churn and a reactivation.
 * Amounts are integer USD cents per month.
 */

export type Movements = {
  churned: number
  churned_customers: number
  contraction: number
  /** Paying customers (MRR > 0) at the end of the period. */
  customers: number
  ending_mrr: number
  expansion: number
  new: number
  new_customers: number
  reactivated_customers: number
  reactivation: number
  starting_customers: number
  starting_mrr: number
}

export function noMovements(): Movements {
  return {
    churned: 0,
    churned_customers: 0,
    contraction: 0,
    customers: 0,
    ending_mrr: 0,
    expansion: 0,
    new: 0,
    new_customers: 0,
    reactivated_customers: 0,
    reactivation: 0,
    starting_customers: 0,
    starting_mrr: 0,
  }
}

const DAY = 86_400

/** One change of a customer's MRR: the MRR just before and just after moment t. */
export type Change = {after: number; before: number; t: number}

/** The spans of each customer (user_id), in one map. */
export function byCustomer(spans: readonly Span[]): Map<string, Span[]> {
  const out = new Map<string, Span[]>()
  for (const s of spans) {
    const list = out.get(s.user_id)
    if (list) list.push(s)
    else out.set(s.user_id, [s])
  }
  return out
}

/** A customer's MRR changes in time order (changes at the same second summed into one). */
export function changes(spans: readonly Span[]): Change[] {
  const delta = new Map<number, number>()
  for (const s of spans) {
    delta.set(s.start, (delta.get(s.start) ?? 0) + s.mrr)
    if (s.end !== null) delta.set(s.end, (delta.get(s.end) ?? 0) - s.mrr)
  }
  const out: Change[] = []
  let mrr = 0
  for (const t of [...delta.keys()].sort((a, b) => a - b)) {
    const after = mrr + delta.get(t)!
    if (after !== mrr) out.push({after, before: mrr, t})
    mrr = after
  }
  return out
}

/** The index of the period holding t (periods sorted and disjoint), or -1. */
function periodOf(periods: readonly Period[], t: number): number {
  let lo = 0
  let hi = periods.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (t < periods[mid].start) hi = mid - 1
    else if (t >= periods[mid].end) lo = mid + 1
    else return mid
  }
  return -1
}

/** A customer's MRR at moment t: the MRR after the last change before t. */
function mrrAt(cs: readonly Change[], t: number): number {
  let lo = 0
  let hi = cs.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (cs[mid].t < t) lo = mid + 1
    else hi = mid
  }
  return lo === 0 ? 0 : cs[lo - 1].after
}

/**
 * The movements of each period (sorted, disjoint [start, end) in UNIX seconds) from the
 * spans of one group. Periods need not be contiguous; history before the first period
 * counts for "has this customer paid before".
 */
export function movements(spans: readonly Span[], periods: readonly Period[]): Movements[] {
  const out = periods.map(() => noMovements())
  for (const customer of byCustomer(spans).values()) {
    const cs = changes(customer)
    for (const [i, p] of periods.entries()) {
      const start = mrrAt(cs, p.start)
      const end = mrrAt(cs, p.end)
      if (start > 0) (out[i].starting_mrr += start), out[i].starting_customers++
      if (end > 0) (out[i].ending_mrr += end), out[i].customers++
    }
    let paid = false
    for (let j = 0; j < cs.length; ) {
      // One movement per customer, UTC day and period.
      const first = cs[j]
      const period = periodOf(periods, first.t)
      const day = Math.floor(first.t / DAY)
      let k = j
      while (k + 1 < cs.length && Math.floor(cs[k + 1].t / DAY) === day && periodOf(periods, cs[k + 1].t) === period) k++
      const before = first.before
      const after = cs[k].after
      j = k + 1
      if (period >= 0) {
        const m = out[period]
        if (before === 0 && after > 0) {
          if (paid) (m.reactivation += after), m.reactivated_customers++
          else (m.new += after), m.new_customers++
        } else if (before > 0 && after === 0) {
          ;(m.churned += before), m.churned_customers++
        } else if (after > before) m.expansion += after - before
        else if (after < before) m.contraction += before - after
      }
      if (after > 0) paid = true
    }
  }
  return out
}

/** A percentage with two decimals, null when the base is 0. */
export function percent(part: number, base: number): null | number {
  return base > 0 ? Math.round((part / base) * 10_000) / 100 : null
}

/** A number of months as an exact fraction [numerator, denominator] (a week is 12/52 of a month). */
export type Months = readonly [bigint, bigint]

/** n / d rounded half up (n, d >= 0, d > 0). */
function divHalfUp(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d)
}

/**
 * The movements of several periods pooled: their counts and amounts summed, so rates of the
 * sums are each period's rate weighted by its starting base (the total row of a time report).
 */
export function pooled(periods: readonly Movements[]): Movements {
  const out = noMovements()
  for (const m of periods) for (const k of Object.keys(out) as (keyof Movements)[]) out[k] += m[k]
  return out
}

/**
 * The rates of one period (or of pooled periods): logo (customer) churn, revenue (gross MRR)
 * churn and net revenue retention in percent of the start, null when nothing was paying at
 * the start; LTV in cents = ARPA / logo churn rate, with ARPA = `mrr` / `payingUsers` per
 * month and the churn rate brought to a month (`months` per period), computed exactly and
 * rounded to the cent once; null while no customer churned or none pays.
 */
export function rates(m: Movements, mrr: number, payingUsers: number, months: Months) {
  const lost = m.churned + m.contraction
  let ltv: null | number = null
  if (payingUsers > 0 && m.starting_customers > 0 && m.churned_customers > 0) {
    // (mrr / users) x months / (churned / starting)
    const n = BigInt(mrr) * BigInt(m.starting_customers) * months[0]
    const d = BigInt(payingUsers) * BigInt(m.churned_customers) * months[1]
    ltv = Number(divHalfUp(n, d))
  }
  return {
    logo_churn_rate: percent(m.churned_customers, m.starting_customers),
    ltv,
    net_revenue_retention: percent(m.starting_mrr - lost + m.expansion, m.starting_mrr),
    revenue_churn_rate: percent(lost, m.starting_mrr),
  }
}
