import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {csv, table} from '../../src/cli/render.js'
import {assertCountry} from '../../src/currency.js'
import {NotFoundError} from '../../src/errors.js'
import {type LocalizationFactor, listFactors} from '../../src/localization/factors.js'
import {LocalizationListOutput} from '../../src/schemas/localization.js'

export default class LocalizationList extends BaseCommand<typeof LocalizationList> {
  static override readsOnly = true
  static override summary = 'List localization factors per country'
  static override description = 'List localization factors per country (price level ratio applied to the FX-converted base price; 1 = US prices)'
  static override examples = ['<%= config.bin %> localization list', '<%= config.bin %> localization list --country IN --json']
  static override flags = {
    ...listFlags,
    country: Flags.string({description: 'Only this country (ISO 3166 alpha-2)'}),
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return LocalizationListOutput
  }

  async run() {
    const country = this.flags.country === undefined ? undefined : assertCountry(this.flags.country.toUpperCase(), '--country')
    const factors = await listFactors(await this.store(), country)
    if (country && factors.length === 0) {
      throw new NotFoundError(`no localization factor for ${country}: its prices use FX and rounding only; add one with "pricectl localization set ${country} FACTOR"`)
    }
    const message =
      factors.length === 0 ? 'no localization factors: prices use FX and rounding only ("pricectl localization import FILE" adds them)' : `${factors.length} localization ${factors.length === 1 ? 'factor' : 'factors'}`
    const result = {factors, message, success: true as const}
    if (this.jsonEnabled()) return result
    const columns = [
      {header: 'country', value: (f: LocalizationFactor) => f.country},
      {header: 'factor', value: (f: LocalizationFactor) => (this.flags.output === 'csv' ? f.factor : Number(f.factor.toPrecision(6)))},
      {header: 'year', value: (f: LocalizationFactor) => f.year},
      {header: 'source', value: (f: LocalizationFactor) => f.source},
    ]
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(csv(factors, columns))
    else if (factors.length === 0) this.log(message)
    else {
      this.log(table(factors, columns))
      this.note(message)
    }
    return result
  }
}
