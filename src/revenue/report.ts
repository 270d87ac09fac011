import {nowSeconds} from '../clock.js'
import {fromMinor} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import type {ReportRow, RevenueReport} from '../schemas/revenue.js'
import type {StorePort} from '../store/port.js'
import type {ChargeRevenue, Period} from '../store/port/revenue.js'
import {type Movements, movements, noMovements, pooled, rates, type Months} from './metrics.js'
import {type Bucket, buckets, day, monthStart} from './periods.js'
import {figures, noFigures, paying, type Stretch, stretches, type SubscriptionFigures} from './timeline.js'

/**
 * `revenue report`: figures in USD (docs/revenue.md defines each) from the subscriptions'
 * history (timeline.ts), the stored charges and the movements of metrics.ts.
 */

/** Rows per week, month or quarter (UTC), or per country or product over the window. */
export type By = 'country' | 'product' | Bucket

export type ReportOptions = {
  by: By
  /** Start, UNIX seconds (inclusive). Default: the first day of the month 11 months ago. */
  since?: number
  /** End, UNIX seconds (exclusive). Default: the first day of next month. */
  until?: number
}

const usd = (cents: number) => fromMinor(cents, 'USD')

/** Months in a period: rational, so LTV is exact (week 12/52, month 1, quarter 3, else days x 12/365). */
const BUCKET_MONTHS: Record<Bucket, Months> = {month: [1n, 1n], quarter: [3n, 1n], week: [12n, 52n]}

const NO_CHARGES: ChargeRevenue = {net: 0, tax: 0}

function row(key: string, f: SubscriptionFigures, charges: ChargeRevenue, m: Movements, months: Months, pool?: Movements): ReportRow {
  const r = rates(pool ?? m, f.mrr, f.paying_users, months)
  const net = charges.net
  return {
    active_subscriptions: f.active,
    arpu: f.paying_users > 0 ? usd(Math.round(f.mrr / f.paying_users)) : null,
    churned_subscriptions: f.churned,
    key,
    mrr: usd(f.mrr),
    net_revenue: usd(net),
    new_subscriptions: f.new,
    starting_mrr: usd(m.starting_mrr),
    new_mrr: usd(m.new),
    expansion_mrr: usd(m.expansion),
    contraction_mrr: usd(m.contraction),
    churned_mrr: usd(m.churned),
    reactivation_mrr: usd(m.reactivation),
    net_new_mrr: usd(m.new + m.expansion + m.reactivation - m.contraction - m.churned),
    starting_customers: m.starting_customers,
    customers: m.customers,
    new_customers: m.new_customers,
    reactivated_customers: m.reactivated_customers,
    churned_customers: m.churned_customers,
    logo_churn_rate: r.logo_churn_rate,
    revenue_churn_rate: r.revenue_churn_rate,
    net_revenue_retention: r.net_revenue_retention,
    ltv: r.ltv === null ? null : usd(r.ltv),
    free_subscriptions: f.free,
    tax: usd(charges.tax),
    gross_revenue: usd(charges.net + charges.tax),
  }
}

/** A window's length in months (365/12 days each), for the rates of group rows. */
function monthsIn(p: Period): Months {
  return [BigInt(p.end - p.start) * 12n, 365n * 86_400n]
}

function groupBy<T extends {key: string}>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const s of items) {
    const list = out.get(s.key)
    if (list) list.push(s)
    else out.set(s.key, [s])
  }
  return out
}

/** The live stretches of every subscription that began before `until`, grouped as `by` says. */
export async function historyStretches(store: StorePort, by: 'country' | 'month' | 'product', until: number): Promise<Stretch[]> {
  return stretches(await store.revenue.history(by)).filter((s) => s.start < until)
}

export async function revenueReport(store: StorePort, o: ReportOptions): Promise<RevenueReport> {
  const now = nowSeconds()
  const until = o.until ?? monthStart(now, 1)
  const since = o.since ?? monthStart(until - 1, -11)
  if (until <= since) throw new InvalidInputError(`--until (${day(until)}) must be after --since (${day(since)})`)
  const rows: ReportRow[] = []
  const window = {end: until, start: since}
  let totals: ReportRow
  if (o.by === 'week' || o.by === 'month' || o.by === 'quarter') {
    const bucket = o.by
    const years = new Date(until * 1000).getUTCFullYear() - new Date(since * 1000).getUTCFullYear()
    if (years > (bucket === 'week' ? 20 : 100)) throw new InvalidInputError(`the report covers more than ${bucket === 'week' ? 20 : 100} years: narrow --since/--until`)
    // Every period and the totals from one read of the history and one of the charges.
    const periods = buckets(bucket, since, until)
    const all = await historyStretches(store, 'month', until)
    const subs = figures(all, [...periods, window])
    const nets = await store.revenue.chargeRevenue('month', [...periods, window])
    const spans = paying(all)
    const moves = movements(spans, periods)
    for (const [i, p] of periods.entries()) rows.push(row(p.key, subs[i].get('all') ?? noFigures(), nets[i].get('all') ?? NO_CHARGES, moves[i], BUCKET_MONTHS[bucket]))
    // The total's rates are the periods' pooled (docs/revenue.md, "Rates"): a rate per period, as its rows have.
    const k = periods.length
    totals = row('total', subs[k].get('all') ?? noFigures(), nets[k].get('all') ?? NO_CHARGES, movements(spans, [window])[0], BUCKET_MONTHS[bucket], pooled(moves))
  } else {
    const all = await historyStretches(store, o.by, until)
    const [subs] = figures(all, [window])
    const [nets] = await store.revenue.chargeRevenue(o.by, [window])
    const spans = groupBy(paying(all))
    const keys = new Set([...subs.keys(), ...nets.keys()])
    for (const k of [...keys].sort()) {
      const group = spans.get(k)
      rows.push(row(k, subs.get(k) ?? noFigures(), nets.get(k) ?? NO_CHARGES, group ? movements(group, [window])[0] : noMovements(), monthsIn(window)))
    }
    rows.sort((a, b) => b.mrr - a.mrr || b.net_revenue - a.net_revenue || b.tax - a.tax || (a.key < b.key ? -1 : 1))
    // Distinct users do not add up across groups: the totals are their own read.
    const whole = await historyStretches(store, 'month', until)
    const [wholeSubs] = figures(whole, [window])
    const [wholeNet] = await store.revenue.chargeRevenue('month', [window])
    totals = row('total', wholeSubs.get('all') ?? noFigures(), wholeNet.get('all') ?? NO_CHARGES, movements(paying(whole), [window])[0], monthsIn(window))
  }
  const last = day(until - 1)
  return {
    by: o.by,
    currency: 'USD',
    message: `revenue ${day(since)} to ${last} by ${o.by}: MRR ${usdText(totals.mrr)}, ${totals.active_subscriptions} active subscriptions, net charge revenue ${usdText(totals.net_revenue)}${totals.tax === 0 ? '' : ` (tax collected ${usdText(totals.tax)} not included)`}`,
    rows,
    since: day(since),
    success: true,
    totals,
    until: last,
  }
}

const USD_TEXT = new Intl.NumberFormat('en-US', {currency: 'USD', style: 'currency'})

/** An amount in USD as the tables show it ("$10,614,353.50"): cents, so the text is exact. */
export const usdText = (v: number): string => USD_TEXT.format(v)

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A horizontal bar chart in Unicode blocks (eighths), one bar per row. */
export function barChart(title: string, items: {label: string; value: number}[], width = 40, maxLine = Number.POSITIVE_INFINITY): string {
  const max = Math.max(0, ...items.map((i) => i.value))
  const labelWidth = Math.max(0, ...items.map((i) => i.label.length))
  const figure = (v: number) => v.toLocaleString('en-US', {maximumFractionDigits: 2, minimumFractionDigits: 2})
  // Narrowed so a whole line (label, " │", bar, " ", figure) fits maxLine, never below 8.
  if (Number.isFinite(maxLine)) width = Math.max(8, Math.min(width, maxLine - labelWidth - 4 - Math.max(0, ...items.map((i) => figure(i.value).length))))
  const lines = [title]
  for (const i of items) {
    const eighths = max > 0 ? Math.round((Math.max(0, i.value) / max) * width * 8) : 0
    const bar = '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8]
    lines.push(`${i.label.padEnd(labelWidth)} │${bar.padEnd(width + 1)} ${figure(i.value)}`)
  }
  return lines.join('\n')
}
