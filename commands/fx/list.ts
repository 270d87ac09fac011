import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {csv, table} from '../../src/cli/render.js'
import {assertCurrency} from '../../src/currency.js'
import {NotFoundError} from '../../src/errors.js'
import {listRates} from '../../src/fx/repository.js'
import {FxDay, FxListOutput} from '../../src/schemas/fx.js'
import {validate} from '../../src/schemas/validate.js'

export default class FxList extends BaseCommand<typeof FxList> {
  static override readsOnly = true
  static override summary = 'List FX rates (units per 1 USD)'
  static override description = `List FX rates (units of each currency per 1 USD): the rates pricing uses today, as of a date, or the whole history

Each rate shows its kind (snapshot: the bundled default; manual; import) and its status
today: current (used now), scheduled (dated after today, not used before its date),
outranked (a snapshot rate while one of yours is current) or past.`
  static override examples = [
    '<%= config.bin %> fx list',
    '<%= config.bin %> fx list --currency EUR --history',
    '<%= config.bin %> fx list --date 2024-06-30 --output csv',
  ]
  static override flags = {
    ...listFlags,
    currency: Flags.string({description: 'Only this currency (ISO 4217)'}),
    date: Flags.string({description: 'As of this day (YYYY-MM-DD): the rate conversion uses on that day'}),
    history: Flags.boolean({description: 'Every dated rate, newest first (up to --date when given)'}),
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return FxListOutput
  }

  async run() {
    const currency = this.flags.currency === undefined ? undefined : assertCurrency(this.flags.currency.toUpperCase(), '--currency')
    const date = this.flags.date === undefined ? undefined : validate(FxDay, this.flags.date, '--date')
    const rates = await listRates(await this.store(), {currency, date, history: this.flags.history})
    if (currency && rates.length === 0) {
      throw new NotFoundError(`no FX rate for ${currency}: add one with "pricectl fx set ${currency} RATE" or "pricectl fx import FILE"`)
    }
    const noun = rates.length === 1 ? 'rate' : 'rates'
    const scheduled = rates.filter((r) => r.status === 'scheduled').length
    const what = this.flags.history
      ? `dated ${noun}${date ? ` up to ${date}` : ''}`
      : date
        ? `${noun} as of ${date}`
        : `${rates.length - scheduled === 1 ? 'rate' : 'rates'} in use today${scheduled ? ` and ${scheduled} scheduled for later` : ''}`
    const message = `${this.flags.history || date ? rates.length : rates.length - scheduled} ${what} (units per 1 USD)`
    const result = {message, rates, success: true as const}
    if (this.jsonEnabled()) return result
    type Row = (typeof rates)[number]
    const columns = [
      {header: 'currency', value: (r: Row) => r.currency},
      {header: 'rate', value: (r: Row) => r.rate},
      {header: 'date', value: (r: Row) => r.date},
      {header: 'source', value: (r: Row) => r.source},
      {header: 'kind', value: (r: Row) => r.kind},
      {header: 'status', value: (r: Row) => r.status},
    ]
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(csv(rates, columns))
    else {
      this.log(table(rates, columns))
      this.note(message)
    }
    const later = date && !this.flags.history ? rates.filter((r) => r.date > date).length : 0
    if (later > 0) this.note(`${later} of these have no rate on or before ${date}: shown with the earliest rate conversion falls back to`)
    return result
  }
}
