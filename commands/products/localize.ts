import {Args, Flags} from '@oclif/core'
import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {table} from '../../src/cli/render.js'
import {localizeProduct} from '../../src/pricing/localize.js'
import {PriceImpact} from '../../src/schemas/impact.js'

/** What `--json` prints. */
const Output = z.object({
  api_id: z.string(),
  changes: z.array(z.object({after: z.number(), before: z.number().nullable(), before_currency: z.string().nullable(), country: z.string(), currency: z.string(), factor: z.number()})),
  dry_run: z.boolean(),
  impact: PriceImpact,
  message: z.string(),
  skipped: z.array(z.object({country: z.string(), reason: z.string()})),
  success: z.literal(true),
  unchanged: z.number(),
})

export default class ProductsLocalize extends BaseCommand<typeof ProductsLocalize> {
  static override args = {api_id: Args.string({description: 'api_id of the product', required: true})}
  static override summary = 'Write country prices from the localization factors'
  static override description = `Write country prices from the localization factors (parity pricing)

For each country with a factor (pricectl localization list): the base price in the country's
currency at the latest FX rate, times the factor, rounded by the currency's rounding rule.
Existing country prices of those countries are replaced; others are kept. --dry-run shows the
changes and the price impact (docs/change-control.md) and writes nothing.`
  static override examples = [
    '<%= config.bin %> products localize pro_monthly --dry-run',
    '<%= config.bin %> products localize pro_monthly --country IN --country BR',
  ]
  static override flags = {
    country: Flags.string({description: 'Only these countries (repeatable)', multiple: true}),
    ...impactFlags,
  }
  static override get outputSchema() {
    return Output
  }

  async run() {
    const countries = this.flags.country?.map((c) => c.toUpperCase())
    const {dryRun, impact, result} = await this.priceImpact(async () => await localizeProduct(await this.store(), this.args.api_id, {countries}), {products: [this.args.api_id]})
    const r = {...result, dry_run: dryRun}
    const verb = r.dry_run ? 'would change' : 'changed'
    const message = `${r.api_id}: ${verb} ${r.changes.length} country prices, ${r.unchanged} unchanged, ${r.skipped.length} skipped`
    if (r.changes.length > 0) {
      this.log(table(r.changes, [
        {header: 'country', value: (c) => c.country},
        {header: 'factor', value: (c) => c.factor},
        {header: 'before', value: (c) => (c.before === null ? '' : `${c.before} ${c.before_currency}`)},
        {header: 'after', value: (c) => `${c.after} ${c.currency}`},
      ]))
    }
    this.log(message)
    for (const s of r.skipped) this.note(`skipped ${s.country}: ${s.reason}`)
    return {...r, impact, message, success: true as const}
  }
}
