import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {isoDay, nowSeconds} from '../../src/clock.js'
import {TaxDeleteOutput} from '../../src/schemas/tax.js'
import {currentRate, deleteTaxRate} from '../../src/tax/store.js'

export default class TaxDelete extends BaseCommand<typeof TaxDelete> {
  static override args = {
    country: Args.string({description: 'ISO 3166 code, e.g. DE', required: true}),
  }
  static override summary = 'Delete your tax rates of a country'
  static override description = `Delete your tax rates of a country (of a category; only the one from a day with --from): the bundled rate applies again where no rate of yours is left`
  static override examples = ['<%= config.bin %> tax delete DE', '<%= config.bin %> tax delete EE --from 2025-07-01', '<%= config.bin %> tax delete DE --category ebook']
  static override flags = {
    ...impactFlags,
    category: Flags.string({description: 'Product tax category (standard, ebook; default standard)'}),
    from: Flags.string({description: 'Only the rate from this day (YYYY-MM-DD)'}),
  }
  static override get outputSchema() {
    return TaxDeleteOutput
  }

  async run() {
    const {dryRun, impact, result} = await this.priceImpact(async () => await deleteTaxRate(await this.store(), {category: this.flags.category, country: this.args.country, from: this.flags.from}))
    const country = this.args.country.trim().toUpperCase()
    const current = await currentRate(await this.store(), country, this.flags.category ?? 'standard', isoDay(nowSeconds()))
    const message = `${dryRun ? 'dry run: would delete' : 'deleted'} ${result.removed} ${result.removed === 1 ? 'rate' : 'rates'} of ${country}; ${country} is taxed at ${current.rate}% (${current.source})`
    this.log(message)
    return {current, dry_run: dryRun, impact, message, removed: result.removed, success: true as const}
  }
}
