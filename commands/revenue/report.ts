import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {csv, outputWidth, paragraph, table} from '../../src/cli/render.js'
import {tzFlag, window} from '../../src/cli/revenue/flags.js'
import {chargesOnlyNote, csvColumns, customerColumns, movementColumns, mrrTrend, retentionColumns, summaryColumns} from '../../src/cli/revenue/render.js'
import {barChart, type By, revenueReport} from '../../src/revenue/report.js'
import {RevenueReport} from '../../src/schemas/revenue.js'

export default class RevenueReportCommand extends BaseCommand<typeof RevenueReportCommand> {
  static override readsOnly = true
  static override summary = 'Revenue in USD: MRR, MRR movements, churn, retention, ARPU, LTV'
  static override description =
    'Revenue in USD: MRR, active subscriptions, new and churned, net charge revenue (after refunds), ARPU; MRR movements (new, expansion, contraction, churned, reactivation), logo and revenue churn, net revenue retention and LTV; by week, month or quarter, or by country or product over the window. Revenue and MRR are net of tax; --tax shows the tax collected beside it (per country with --by country). Tables show formatted currency, with a bar chart of MRR, and on a terminal a trend chart of MRR. Definitions: docs/revenue.md'
  static override examples = [
    '<%= config.bin %> revenue report',
    '<%= config.bin %> revenue report --since 2026-01-01 --until 2026-06-30',
    '<%= config.bin %> revenue report --period quarter --since 2025-01-01',
    '<%= config.bin %> revenue report --by country --output csv > by-country.csv',
    '<%= config.bin %> revenue report --by product --json',
    '<%= config.bin %> revenue report --by country --tax --since 2026-01-01 --until 2026-03-31',
  ]
  static override flags = {
    by: Flags.string({
      aliases: ['period'],
      default: 'month',
      description: 'Rows per ISO week, calendar month or quarter (UTC), or per country or product over the window (--period is another name for it)',
      options: ['week', 'month', 'quarter', 'country', 'product'],
    }),
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
    since: Flags.string({description: 'Start (ISO date or date-time, or UNIX seconds; default: 11 months before the current month)'}),
    tax: Flags.boolean({
      default: false,
      description: 'Show the charges\' revenue with tax (gross_revenue) and the tax collected beside net revenue, which excludes both refunds and tax; per country with --by country (JSON and CSV always carry tax and gross_revenue)',
    }),
    until: Flags.string({description: 'End, a date includes its whole day (ISO date or date-time, or UNIX seconds; default: end of the current month)'}),
    ...tzFlag,
  }
  static override get outputSchema() {
    return RevenueReport
  }

  async run() {
    const f = this.flags
    const by = f.by as By
    const report = await revenueReport(await this.store(), {by, ...window(f.since, f.until, f.tz)})
    if (f.output !== 'json') {
      const hint = await chargesOnlyNote(await this.store())
      if (hint) this.note(hint)
    }
    if (f.output === 'json') {
      if (!this.jsonEnabled()) this.log(JSON.stringify(report, null, 2))
    } else if (f.output === 'csv') {
      this.log(csv(report.rows, csvColumns(by)).trimEnd())
    } else {
      const all = [...report.rows, report.totals]
      this.log(table(all, summaryColumns(by, f.tax)))
      this.log('')
      this.log('MRR movements (USD per month)')
      this.log(table(all, movementColumns(by)))
      this.log('')
      this.log('paying customers')
      this.log(table(all, customerColumns(by)))
      this.log('')
      this.log('churn, retention and lifetime value')
      this.log(table(all, retentionColumns(by)))
      // The chart shows MRR; a store with charges only charts net revenue instead.
      const mrr = report.rows.some((r) => r.mrr > 0)
      if (report.rows.length > 0) {
        this.log('')
        this.log(barChart(`${mrr ? 'MRR' : 'net charge revenue'} (USD) by ${by}`, report.rows.map((r) => ({label: r.key, value: mrr ? r.mrr : r.net_revenue})), 40, outputWidth()))
      }
      // A trend line of MRR, for people at a terminal only (never piped, never --json).
      if (process.stdout.isTTY && mrr && report.rows.length > 1 && by !== 'country' && by !== 'product') {
        this.log('')
        this.log(await mrrTrend(report.rows))
      }
      this.log('')
      this.log(paragraph(report.message))
    }
    return report
  }
}
