import {nowSeconds} from '../clock.js'
import {fromMinor} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import type {ReportRow, RevenueReport} from '../schemas/revenue.js'
import type {StorePort} from '../store/port.js'
import type {Figures, Period, Span} from '../store/port/revenue.js'
import {type Movements, movements, noMovements, rates} from './metrics.js'
import {type Bucket, buckets, day, MONTHS_PER, monthStart} from './periods.js'

/**
 * `revenue report`: figures in USD from the stored records (docs/revenue.md defines
 * each). There is no status history, so "live at a moment" is read from the current
 * record: an active subscription is live from its created date on, a canceled one from
 * created until its cancel_at (else canceled_at); trialing and pending ones are not.
 *
 * - mrr: sum of amount_usd_monthly of the subscriptions live at the end of the period
 * - active_subscriptions: how many are live then; arpu = mrr / distinct users among them
 * - new_subscriptions: created in the period and active or canceled now (they paid)
 * - churned_subscriptions: canceled, with cancel_at (else canceled_at) in the period
 * - net_revenue: succeeded charges created in the period, minus what was refunded of them
 * - MRR movements, customers, churn and retention rates, LTV: metrics.ts
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

function empty(): Figures {
  return {active: 0, churned: 0, mrr: 0, net: 0, new: 0, users: 0}
}

const usd = (cents: number) => fromMinor(cents, 'USD')

function row(key: string, f: Figures, m: Movements, monthsPerPeriod: number): ReportRow {
  const arpu = f.users > 0 ? Math.round(f.mrr / f.users) : null
  const r = rates(m, arpu, monthsPerPeriod)
  return {
    active_subscriptions: f.active,
    arpu: arpu === null ? null : usd(arpu),
    churned_subscriptions: f.churned,
    key,
    mrr: usd(f.mrr),
    net_revenue: usd(f.net),
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
  }
}

/** A window's length in months (365/12 days each), for the rates of totals and group rows. */
function monthsIn(p: Period): number {
  return ((p.end - p.start) / 86_400) * (12 / 365)
}

function groupSpans(spans: readonly Span[]): Map<string, Span[]> {
  const out = new Map<string, Span[]>()
  for (const s of spans) {
    const list = out.get(s.key)
    if (list) list.push(s)
    else out.set(s.key, [s])
  }
  return out
}

export function revenueReport(store: StorePort, o: ReportOptions): RevenueReport {
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
    // Every period and the totals in one call to the store ("month" groups every period as "all").
    const periods = buckets(bucket, since, until)
    const figures = store.revenue.figures('month', [...periods, window])
    const spans = store.revenue.spans('month', until)
    const moves = movements(spans, periods)
    for (const [i, p] of periods.entries()) rows.push(row(p.key, figures[i].get('all') ?? empty(), moves[i], MONTHS_PER[bucket]))
    totals = row('total', figures.at(-1)!.get('all') ?? empty(), movements(spans, [window])[0], monthsIn(window))
  } else {
    const [groups] = store.revenue.figures(o.by, [window])
    const spans = groupSpans(store.revenue.spans(o.by, until))
    for (const k of [...groups.keys()].sort()) {
      const group = spans.get(k)
      rows.push(row(k, groups.get(k)!, group ? movements(group, [window])[0] : noMovements(), monthsIn(window)))
    }
    rows.sort((a, b) => b.mrr - a.mrr || b.net_revenue - a.net_revenue || (a.key < b.key ? -1 : 1))
    // Distinct users do not add up across groups: the totals are their own query.
    const all = store.revenue.figures('month', [window])[0].get('all') ?? empty()
    totals = row('total', all, movements(store.revenue.spans('month', until), [window])[0], monthsIn(window))
  }
  const last = day(until - 1)
  return {
    by: o.by,
    currency: 'USD',
    message: `revenue ${day(since)} to ${last} by ${o.by}: MRR ${totals.mrr} USD, ${totals.active_subscriptions} active subscriptions, net charge revenue ${totals.net_revenue} USD`,
    rows,
    since: day(since),
    success: true,
    totals,
    until: last,
  }
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A horizontal bar chart in Unicode blocks (eighths), one bar per row. */
export function barChart(title: string, items: {label: string; value: number}[], width = 40): string {
  const max = Math.max(0, ...items.map((i) => i.value))
  const labelWidth = Math.max(0, ...items.map((i) => i.label.length))
  const lines = [title]
  for (const i of items) {
    const eighths = max > 0 ? Math.round((Math.max(0, i.value) / max) * width * 8) : 0
    const bar = '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8]
    lines.push(`${i.label.padEnd(labelWidth)} │${bar.padEnd(width + 1)} ${i.value.toLocaleString('en-US', {maximumFractionDigits: 2, minimumFractionDigits: 2})}`)
  }
  return lines.join('\n')
}
