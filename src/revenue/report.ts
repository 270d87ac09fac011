import {nowSeconds} from '../clock.js'
import {fromMinor} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import type {ReportRow, RevenueReport} from '../schemas/revenue.js'
import type {StorePort} from '../store/port.js'
import type {By, Figures} from '../store/port/revenue.js'

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
 */

export type {By} from '../store/port/revenue.js'

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

function row(key: string, f: Figures): ReportRow {
  return {
    active_subscriptions: f.active,
    arpu: f.users > 0 ? Math.round(f.mrr / f.users) / 100 : null,
    churned_subscriptions: f.churned,
    key,
    mrr: fromMinor(f.mrr, 'USD'),
    net_revenue: fromMinor(f.net, 'USD'),
    new_subscriptions: f.new,
  }
}

function monthStart(seconds: number, add = 0): number {
  const d = new Date(seconds * 1000)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1) / 1000
}

function day(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10)
}

export function revenueReport(store: StorePort, o: ReportOptions): RevenueReport {
  const now = nowSeconds()
  const until = o.until ?? monthStart(now, 1)
  const since = o.since ?? monthStart(until - 1, -11)
  if (until <= since) throw new InvalidInputError(`--until (${day(until)}) must be after --since (${day(since)})`)
  const rows: ReportRow[] = []
  let totalsFigures: Figures
  if (o.by === 'month') {
    const months = (new Date(until * 1000).getUTCFullYear() - new Date(since * 1000).getUTCFullYear()) * 12 + 12
    if (months > 1200) throw new InvalidInputError('the report covers more than 100 years: narrow --since/--until')
    // Every month and the totals in one call to the store.
    const periods: {end: number; key: string; start: number}[] = []
    for (let start = monthStart(since); start < until; start = monthStart(start, 1)) {
      periods.push({end: Math.min(monthStart(start, 1), until), key: day(start).slice(0, 7), start: Math.max(start, since)})
    }
    const figures = store.revenue.figures('month', [...periods, {end: until, start: since}])
    for (const [i, p] of periods.entries()) rows.push(row(p.key, figures[i].get('all') ?? empty()))
    totalsFigures = figures.at(-1)!.get('all') ?? empty()
  } else {
    const [groups] = store.revenue.figures(o.by, [{end: until, start: since}])
    // Distinct users do not add up across groups: the totals are their own query.
    totalsFigures = store.revenue.figures('month', [{end: until, start: since}])[0].get('all') ?? empty()
    for (const k of [...groups.keys()].sort()) rows.push(row(k, groups.get(k)!))
    rows.sort((a, b) => b.mrr - a.mrr || b.net_revenue - a.net_revenue || (a.key < b.key ? -1 : 1))
  }
  const totals = row('total', totalsFigures)
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
