import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {csv, table} from '../../src/cli/render.js'
import {tzFlag, window} from '../../src/cli/revenue/flags.js'
import {chargesOnlyNote, cohortTables} from '../../src/cli/revenue/render.js'
import {revenueCohorts} from '../../src/revenue/cohorts.js'
import {RevenueCohorts} from '../../src/schemas/revenue.js'

export default class RevenueCohortsCommand extends BaseCommand<typeof RevenueCohortsCommand> {
  static override readsOnly = true
  static override summary = 'Retention by signup month: customers and MRR kept, month by month'
  static override description =
    'Customers grouped by the UTC month they first paid, and for each month since: the share still paying (logo retention) and the share of their starting MRR they pay (revenue retention, expansion included). Definitions: docs/revenue.md'
  static override examples = [
    '<%= config.bin %> revenue cohorts',
    '<%= config.bin %> revenue cohorts --since 2025-01-01 --until 2025-12-31',
    '<%= config.bin %> revenue cohorts --json',
  ]
  static override flags = {
    output: Flags.string({default: 'table', description: 'Output format (csv: one line per cohort and month)', options: ['table', 'csv', 'json']}),
    since: Flags.string({description: 'First signup moment (ISO date or date-time, or UNIX seconds; default: 11 months before the current month)'}),
    until: Flags.string({description: 'Last signup moment, a date includes its whole day; retention is measured up to the end of its month (default: end of the current month)'}),
    ...tzFlag,
  }
  static override get outputSchema() {
    return RevenueCohorts
  }

  async run() {
    const f = this.flags
    const result = await revenueCohorts(await this.store(), window(f.since, f.until, f.tz))
    if (f.output !== 'json') {
      const hint = await chargesOnlyNote(await this.store())
      if (hint) this.note(hint)
    }
    if (f.output === 'json') {
      if (!this.jsonEnabled()) this.log(JSON.stringify(result, null, 2))
    } else if (f.output === 'csv') {
      const lines = result.cohorts.flatMap((c) => c.months.map((m) => ({cohort: c.cohort, cohort_customers: c.customers, starting_mrr: c.mrr, ...m})))
      const fields = ['cohort', 'cohort_customers', 'starting_mrr', 'month', 'customers', 'mrr', 'logo_retention', 'revenue_retention'] as const
      this.log(csv(lines, fields.map((h) => ({header: h, value: (r: (typeof lines)[number]) => r[h]}))).trimEnd())
    } else {
      if (result.cohorts.length > 0) {
        this.log(cohortTables(result, table))
        this.log('')
      }
      this.log(result.message)
    }
    return result
  }
}
