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
  static override summary = 'List FX rates (units per 1 USD)'
  static override description = 'List FX rates (units of each currency per 1 USD): the latest per currency, as of a date, or the whole history'
  static override examples = [
    '<%= config.bin %> fx list',
    '<%= config.bin %> fx list --currency EUR --history',
    '<%= config.bin %> fx list --date 2024-06-30 --output csv',
  ]
  static override flags = {
    ...listFlags,
    currency: Flags.string({description: 'Only this currency (ISO 4217)'}),
    date: Flags.string({description: 'As of this day (YYYY-MM-DD): the rate conversion uses on that day, the nearest earlier on file'}),
    history: Flags.boolean({description: 'Every dated rate, newest first (up to --date when given)'}),
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return FxListOutput
  }

  async run() {
    const currency = this.flags.currency === undefined ? undefined : assertCurrency(this.flags.currency.toUpperCase(), '--currency')
    const date = this.flags.date === undefined ? undefined : validate(FxDay, this.flags.date, '--date')
    const rates = listRates(this.store.db, {currency, date, history: this.flags.history})
    if (currency && rates.length === 0) {
      throw new NotFoundError(`no FX rate for ${currency}: add one with "pricectl fx set ${currency} RATE" or "pricectl fx import FILE"`)
    }
    const noun = rates.length === 1 ? 'rate' : 'rates'
    const what = this.flags.history ? `dated ${noun}${date ? ` up to ${date}` : ''}` : date ? `${noun} as of ${date}` : `latest ${noun}`
    const message = `${rates.length} ${what} (units per 1 USD)`
    const result = {message, rates, success: true as const}
    if (this.jsonEnabled()) return result
    const columns = [
      {header: 'currency', value: (r: (typeof rates)[number]) => r.currency},
      {header: 'rate', value: (r: (typeof rates)[number]) => r.rate},
      {header: 'date', value: (r: (typeof rates)[number]) => r.date},
      {header: 'source', value: (r: (typeof rates)[number]) => r.source},
    ]
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(csv(rates, columns))
    else {
      this.log(table(rates, columns))
      this.note(message)
    }
    const later = date && !this.flags.history ? rates.filter((r) => r.date > date).length : 0
    if (later > 0) this.note(`${later} of these have no rate on or before ${date}: shown with their earliest rate, which conversion falls back to`)
    return result
  }
}
