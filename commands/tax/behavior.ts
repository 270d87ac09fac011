import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {InvalidInputError} from '../../src/errors.js'
import {TaxBehaviorOutput} from '../../src/schemas/tax.js'
import {setTaxBehavior, setTaxCategory, taxSettingsList} from '../../src/tax/store.js'

export default class TaxBehavior extends BaseCommand<typeof TaxBehavior> {
  static override args = {
    behavior: Args.string({description: 'inclusive (shown price includes tax) or exclusive (shown net, tax added at checkout)', options: ['inclusive', 'exclusive']}),
  }
  static override summary = 'Show or set whether shown prices include tax'
  static override description = `Show or set the tax behaviour of the store, a country (--country) or a product (--product)

inclusive: the shown and locked price includes tax, and rounding rules round the gross price
(9.99 EUR stays 9.99 EUR incl. VAT). exclusive: the price is shown net and tax is added at
checkout. First match wins: the country's setting > US and CA are exclusive > the product's
setting > the store's (default exclusive). --unset removes a setting; --category sets a
product's tax category (standard, ebook). Without BEHAVIOR, --unset or --category it shows
the settings. Locked prices keep the tax they were shown with (docs/tax.md).`
  static override examples = [
    '<%= config.bin %> tax behavior',
    '<%= config.bin %> tax behavior inclusive',
    '<%= config.bin %> tax behavior exclusive --country FR',
    '<%= config.bin %> tax behavior --product ebook_monthly --category ebook',
    '<%= config.bin %> tax behavior --country FR --unset',
  ]
  static override flags = {
    ...impactFlags,
    category: Flags.string({description: 'With --product: its tax category (standard, ebook)', dependsOn: ['product']}),
    country: Flags.string({description: 'The setting of this country (ISO 3166)', exclusive: ['product']}),
    product: Flags.string({description: 'The setting of this product (api_id)'}),
    unset: Flags.boolean({description: 'Remove the setting (the next rule decides)'}),
  }
  static override get outputSchema() {
    return TaxBehaviorOutput
  }

  async run() {
    const {behavior} = this.args
    const {category, country, product, unset} = this.flags
    if (behavior !== undefined && unset) throw new InvalidInputError('give BEHAVIOR or --unset, not both')
    if (behavior === undefined && !unset && category === undefined) {
      const listed = await taxSettingsList(await this.store())
      const message = `store: ${listed.store_behavior}; ${listed.settings.filter((s) => s.scope !== 'store').length} country and product settings`
      this.log(message)
      for (const s of listed.settings) if (s.scope !== 'store') this.log(`  ${s.scope} ${s.subject}: ${s.behavior ?? '(store)'}${s.category ? `, category ${s.category}` : ''}`)
      return {...listed, message, success: true as const}
    }
    const {dryRun, impact, result} = await this.priceImpact(async () => {
      let row = behavior !== undefined || unset ? await setTaxBehavior(await this.store(), {country, product}, unset ? null : behavior!) : undefined
      if (category !== undefined) row = await setTaxCategory(await this.store(), product!, category)
      return row!
    })
    const what = result.scope === 'store' ? 'the store' : `${result.scope} ${result.subject}`
    const message = `${dryRun ? 'dry run: ' : ''}${what}: ${result.behavior ?? 'no behaviour of its own'}${result.category ? `, category ${result.category}` : ''}`
    this.log(message)
    return {...await taxSettingsList(await this.store()), dry_run: dryRun, impact, message, setting: result, success: true as const}
  }
}

