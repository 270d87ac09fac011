import {Args, Flags} from '@oclif/core'

import {numberish} from '../../src/catalog/shortforms.js'
import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {isoDay, nowSeconds} from '../../src/clock.js'
import {InvalidInputError} from '../../src/errors.js'
import {TaxSetOutput} from '../../src/schemas/tax.js'
import {setTaxRate} from '../../src/tax/store.js'

export default class TaxSet extends BaseCommand<typeof TaxSet> {
  static override args = {
    country: Args.string({description: 'ISO 3166 code, e.g. DE', required: true}),
    rate: Args.string({description: 'Percent, e.g. 19 or 25.5', required: true}),
  }
  static override summary = 'Set the tax rate of a country from a day'
  static override description = `Set the VAT/GST (or sales tax) rate of a country, in percent, from a day on

Your rates outrank the bundled table whatever their dates. A rate dated after today is
scheduled: kept, listed, and not used before its day. --category sets the rate of a
product tax category (ebook) instead of the standard rate. A locked price keeps the tax it
was shown with; new quotes use the new rate (docs/tax.md).`
  static override examples = ['<%= config.bin %> tax set DE 19', '<%= config.bin %> tax set EE 24 --from 2025-07-01', '<%= config.bin %> tax set DE 7 --category ebook', '<%= config.bin %> tax set US 8.875 --source "NYC combined"']
  static override flags = {
    ...impactFlags,
    category: Flags.string({description: 'Product tax category the rate is for (standard, ebook; default standard)'}),
    from: Flags.string({description: 'Day the rate applies from (YYYY-MM-DD; default today, UTC); a later day schedules it'}),
    source: Flags.string({description: 'Where the rate comes from (default "manual")'}),
  }
  static override get outputSchema() {
    return TaxSetOutput
  }

  async run() {
    const rate = numberish(this.args.rate)
    if (typeof rate !== 'number') throw new InvalidInputError(`RATE: expected a percent such as 19, got ${JSON.stringify(this.args.rate)}`)
    const today = isoDay(nowSeconds())
    const {dryRun, impact, result} = await this.priceImpact(async () => await setTaxRate(await this.store(), {category: this.flags.category, country: this.args.country, from: this.flags.from, rate, source: this.flags.source}, today))
    const r = result.rate
    const message = `${dryRun ? 'dry run: would set ' : ''}${r.country} ${r.label}${r.category === 'standard' ? '' : ` (${r.category})`} = ${r.rate}% from ${r.from} (${r.source})${result.scheduled ? ', scheduled: not used before that day' : ''}`
    this.log(message)
    if (result.scheduled) this.note(`until ${r.from}, ${r.country} is taxed at ${result.current.rate}% (${result.current.source})`)
    if (result.replaced && (result.replaced.rate !== r.rate || result.replaced.source !== r.source)) this.note(`replaced ${result.replaced.rate}% (${result.replaced.source}) of ${result.replaced.from}`)
    return {current: result.current, dry_run: dryRun, impact, message, rate: r, replaced: result.replaced, scheduled: result.scheduled, success: true as const}
  }
}
