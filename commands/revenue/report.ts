import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {csv, table} from '../../src/cli/render.js'
import {tzFlag, window} from '../../src/cli/revenue/flags.js'
import {barChart, revenueReport} from '../../src/revenue/report.js'
import {type ReportRow, RevenueReport} from '../../src/schemas/revenue.js'

const COLUMNS = (by: string) => [
  {header: by, value: (r: ReportRow) => r.key},
  {header: 'mrr', value: (r: ReportRow) => r.mrr},
  {header: 'active_subscriptions', value: (r: ReportRow) => r.active_subscriptions},
  {header: 'new_subscriptions', value: (r: ReportRow) => r.new_subscriptions},
  {header: 'churned_subscriptions', value: (r: ReportRow) => r.churned_subscriptions},
  {header: 'net_revenue', value: (r: ReportRow) => r.net_revenue},
  {header: 'arpu', value: (r: ReportRow) => r.arpu},
]

export default class RevenueReportCommand extends BaseCommand<typeof RevenueReportCommand> {
  static override summary = 'Revenue in USD: MRR, churn, net charges, ARPU'
  static override description =
    'Revenue in USD: MRR, active subscriptions, new and churned, net charge revenue (after refunds), ARPU, by month, country or product, with a bar chart of MRR'
  static override examples = [
    '<%= config.bin %> revenue report',
    '<%= config.bin %> revenue report --since 2026-01-01 --until 2026-06-30',
    '<%= config.bin %> revenue report --by country --output csv > by-country.csv',
    '<%= config.bin %> revenue report --by product --json',
  ]
  static override flags = {
    by: Flags.string({default: 'month', description: 'Rows per calendar month (UTC), per country or per product', options: ['month', 'country', 'product']}),
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
    since: Flags.string({description: 'Start (ISO date or date-time, or UNIX seconds; default: 11 months before the current month)'}),
    until: Flags.string({description: 'End, a date includes its whole day (ISO date or date-time, or UNIX seconds; default: end of the current month)'}),
    ...tzFlag,
  }
  static override get outputSchema() {
    return RevenueReport
  }

  async run() {
    const f = this.flags
    const report = revenueReport(this.store, {by: f.by as 'country' | 'month' | 'product', ...window(f.since, f.until, f.tz)})
    if (f.output === 'json') {
      if (!this.jsonEnabled()) this.log(JSON.stringify(report, null, 2))
    } else if (f.output === 'csv') {
      this.log(csv(report.rows, COLUMNS(f.by)).trimEnd())
    } else {
      this.log(table([...report.rows, report.totals], COLUMNS(f.by)))
      // The chart shows MRR; a store with charges only charts net revenue instead.
      const mrr = report.rows.some((r) => r.mrr > 0)
      if (report.rows.length > 0) {
        this.log('')
        this.log(barChart(`${mrr ? 'MRR' : 'net charge revenue'} (USD) by ${f.by}`, report.rows.map((r) => ({label: r.key, value: mrr ? r.mrr : r.net_revenue}))))
      }
      this.log('')
      this.log(report.message)
    }
    return report
  }
}
