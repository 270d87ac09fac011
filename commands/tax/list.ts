import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {csv, table} from '../../src/cli/render.js'
import {isoDay, nowSeconds} from '../../src/clock.js'
import {TaxListOutput} from '../../src/schemas/tax.js'
import {listTaxRates, TAX_TABLE_AS_OF, type TaxRateOut} from '../../src/tax/store.js'

export default class TaxList extends BaseCommand<typeof TaxList> {
  static override readsOnly = true
  static override summary = 'List the tax rates per country'
  static override description = `List the tax rate each country is priced at today (bundled or yours), and your scheduled and outranked rates

The bundled table is as of ${TAX_TABLE_AS_OF} (sources: docs/tax.md). status: current (used today), scheduled (dated after today), outranked (an earlier rate of yours).`
  static override examples = ['<%= config.bin %> tax list', '<%= config.bin %> tax list --country DE', '<%= config.bin %> tax list --output csv']
  static override flags = {
    ...listFlags,
    country: Flags.string({description: 'Only this country (ISO 3166)'}),
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return TaxListOutput
  }

  async run() {
    const rates = await listTaxRates(await this.store(), {country: this.flags.country}, isoDay(nowSeconds()))
    const own = rates.filter((r) => r.kind === 'operator').length
    const message = `${rates.length} ${rates.length === 1 ? 'rate' : 'rates'}, ${own} of them yours`
    const result = {message, rates, success: true as const}
    if (this.jsonEnabled()) return result
    const columns = [
      {header: 'country', value: (r: TaxRateOut) => r.country},
      {header: 'category', value: (r: TaxRateOut) => r.category},
      {header: 'rate', value: (r: TaxRateOut) => r.rate},
      {header: 'label', value: (r: TaxRateOut) => r.label},
      {header: 'from', value: (r: TaxRateOut) => r.from ?? ''},
      {header: 'status', value: (r: TaxRateOut) => r.status},
      {header: 'source', value: (r: TaxRateOut) => r.source},
    ]
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(csv(rates, columns))
    else {
      this.log(table(rates, columns))
      this.note(message)
    }
    return result
  }
}
