import type {Column} from '../render.js'
import {usdText} from '../../revenue/report.js'
import type {RevenueCohorts, ReportRow} from '../../schemas/revenue.js'

/**
 * What people see of `revenue report` and `revenue cohorts`: currency formatted ($1,234.56),
 * percentages with a % sign, "-" where a rate has no base (nothing paid at the start), and
 * on a terminal a trend chart of MRR (asciichart, loaded only then). CSV and JSON keep the
 * plain numbers.
 */

export function money(v: null | number): string {
  return v === null ? '-' : usdText(v)
}

/**
 * The note for a store with charges and no subscriptions: MRR, subscription counts and
 * cohorts come from subscriptions only, so they read 0 or empty there.
 */
export async function chargesOnlyNote(store: {tables: {counts(): Promise<Record<string, number>>}}): Promise<string | undefined> {
  const counts = await store.tables.counts()
  if ((counts.subscriptions ?? 0) > 0 || (counts.charges ?? 0) === 0) return undefined
  return `note: this store holds charges and no subscriptions: MRR, subscription counts and cohorts come from subscriptions only (one-time charges count in net charge revenue); record subscriptions with "pricectl subscriptions create" or "pricectl subscriptions import"`
}

/** A loss shown as a negative amount ("-$40.00"), none as "$0.00". */
function loss(v: number): string {
  return money(v === 0 ? 0 : -v)
}

export function pct(v: null | number): string {
  return v === null ? '-' : `${v}%`
}

/**
 * The figures table: the report's first fields, as before the movements were added; with
 * `tax` (--tax), the charges' revenue with tax (gross_revenue) and the tax collected beside
 * net_revenue (net of both refunds and tax).
 */
export function summaryColumns(by: string, tax = false): Column<ReportRow>[] {
  return [
    {header: by, value: (r) => r.key},
    {header: 'mrr', value: (r) => money(r.mrr)},
    {header: 'active_subscriptions', value: (r) => r.active_subscriptions},
    {header: 'new_subscriptions', value: (r) => r.new_subscriptions},
    {header: 'churned_subscriptions', value: (r) => r.churned_subscriptions},
    ...(tax
      ? [
          {header: 'gross_revenue', value: (r: ReportRow) => money(r.gross_revenue)},
          {header: 'tax', value: (r: ReportRow) => money(r.tax)},
        ]
      : []),
    {header: 'net_revenue', value: (r) => money(r.net_revenue)},
    {header: 'arpu', value: (r) => money(r.arpu)},
  ]
}

/** MRR movements: starting MRR, each movement and net new MRR (the summary has the MRR at the end). */
export function movementColumns(by: string): Column<ReportRow>[] {
  return [
    {header: by, value: (r) => r.key},
    {header: 'starting_mrr', value: (r) => money(r.starting_mrr)},
    {header: 'new', value: (r) => money(r.new_mrr)},
    {header: 'expansion', value: (r) => money(r.expansion_mrr)},
    {header: 'contraction', value: (r) => loss(r.contraction_mrr)},
    {header: 'churned', value: (r) => loss(r.churned_mrr)},
    {header: 'reactivation', value: (r) => money(r.reactivation_mrr)},
    {header: 'net_new_mrr', value: (r) => money(r.net_new_mrr)},
  ]
}

/** Paying customers: at the start, the movements, at the end. */
export function customerColumns(by: string): Column<ReportRow>[] {
  return [
    {header: by, value: (r) => r.key},
    {header: 'starting', value: (r) => r.starting_customers},
    {header: 'new', value: (r) => r.new_customers},
    {header: 'reactivated', value: (r) => r.reactivated_customers},
    {header: 'churned', value: (r) => r.churned_customers},
    {header: 'customers', value: (r) => r.customers},
  ]
}

/** Churn and retention rates, ARPU and LTV. */
export function retentionColumns(by: string): Column<ReportRow>[] {
  return [
    {header: by, value: (r) => r.key},
    {header: 'logo_churn', value: (r) => pct(r.logo_churn_rate)},
    {header: 'revenue_churn', value: (r) => pct(r.revenue_churn_rate)},
    {header: 'nrr', value: (r) => pct(r.net_revenue_retention)},
    {header: 'arpu', value: (r) => money(r.arpu)},
    {header: 'ltv', value: (r) => money(r.ltv)},
  ]
}

/** Every field of a row, for CSV: the period and the headline figures, then the movements and rates. */
export function csvColumns(by: string): Column<ReportRow>[] {
  const first = ['mrr', 'active_subscriptions', 'new_subscriptions', 'churned_subscriptions', 'net_revenue', 'arpu'] as const
  const rest = [
    'starting_mrr',
    'new_mrr',
    'expansion_mrr',
    'contraction_mrr',
    'churned_mrr',
    'reactivation_mrr',
    'net_new_mrr',
    'starting_customers',
    'customers',
    'new_customers',
    'reactivated_customers',
    'churned_customers',
    'logo_churn_rate',
    'revenue_churn_rate',
    'net_revenue_retention',
    'ltv',
    'free_subscriptions',
    'tax',
    'gross_revenue',
  ] as const
  return [{header: by, value: (r) => r.key}, ...[...first, ...rest].map((f) => ({header: f, value: (r: ReportRow) => r[f]}))]
}

/**
 * A line chart of MRR over the periods, about `width` columns wide (each period repeated to
 * fill it), with formatted currency on the axis.
 */
export async function mrrTrend(rows: readonly ReportRow[], width = 60, height = 10): Promise<string> {
  const {plot} = await import('asciichart')
  const repeat = Math.max(1, Math.floor(width / rows.length))
  const series = rows.flatMap((r) => Array.from({length: repeat}, () => r.mrr))
  const labels = rows.map((r) => money(r.mrr))
  const pad = Math.max(...labels.map((l) => l.length)) + 1
  const chart = plot(series, {format: (x) => money(Math.round(x * 100) / 100).padStart(pad), height})
  // Period keys under the line where they fit: the series starts after the label and " ┤".
  let axis = ' '.repeat(pad + 2)
  for (const [i, r] of rows.entries()) {
    const at = pad + 2 + i * repeat
    if (at >= axis.length + (i === 0 ? 0 : 2)) axis = axis.padEnd(at) + r.key
  }
  return `MRR trend (USD), ${rows[0].key} .. ${rows.at(-1)!.key}\n${chart}\n${axis}`
}

/** The cohorts as two tables: logo retention and revenue retention per month since signup. */
export function cohortTables(result: RevenueCohorts, table: <R>(rows: R[], columns: Column<R>[]) => string): string {
  type C = RevenueCohorts['cohorts'][number]
  const months = Math.max(0, ...result.cohorts.map((c) => c.months.length))
  const head: Column<C>[] = [
    {header: 'cohort', value: (c) => c.cohort},
    {header: 'customers', value: (c) => c.customers},
    {header: 'starting_mrr', value: (c) => money(c.mrr)},
  ]
  const per = (field: 'logo_retention' | 'revenue_retention'): Column<C>[] =>
    Array.from({length: months}, (_, k) => ({header: `m${k}`, value: (c: C) => (k < c.months.length ? pct(c.months[k][field]) : '')}))
  return [
    'logo retention (paying customers, % of the cohort) by month since signup',
    table(result.cohorts, [...head, ...per('logo_retention')]),
    '',
    'revenue retention (MRR, % of the starting MRR) by month since signup',
    table(result.cohorts, [...head, ...per('revenue_retention')]),
  ].join('\n')
}
