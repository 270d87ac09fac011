import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {applyListEdits, droppedCountryPrices, productBody, productEditFlags, productFlags, refuseApiIdFlag} from '../../src/cli/catalog/flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {productResponse, requireProduct, updateProduct} from '../../src/catalog/products.js'
import {ProductOutput} from '../../src/schemas/catalog.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class ProductsUpdate extends BaseCommand<typeof ProductsUpdate> {
  static override args = {api_id: Args.string({description: 'api_id of the product', required: true})}
  static override changesExisting = true
  static override summary = 'Change a product'
  static override description =
    `Change a product; given fields replace stored ones (country prices, integrations, features and trials as whole lists). api_id cannot change.

--add-country-price / --remove-country-price and --add-integration / --remove-integration edit
one entry and keep the others. --country-price replaces the whole list: a replacement that
drops stored country prices is confirmed on a terminal and needs --yes without one (exit 2,
nothing written). Without --yes, a price moved by more than --max-change-pct (25%) is refused
without a terminal (docs/change-control.md).`
  static override examples = [
    '<%= config.bin %> products update pro_monthly --base-px 10.99',
    '<%= config.bin %> products update pro_monthly --add-country-price DE=9.49:EUR',
    '<%= config.bin %> products update pro_monthly --remove-country-price FR --add-integration gateway_c:plan_42',
    '<%= config.bin %> products update pro_monthly --country-price DE=9.49:EUR --country-price FR=9.49:EUR --yes',
    '<%= config.bin %> products update pro_monthly --min-px none --baseline none',
  ]
  static override flags = {...productFlags, ...productEditFlags, ...impactFlags, 'api-id': {...productFlags['api-id'], hidden: true}}
  static override get outputSchema() {
    return ProductOutput.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    refuseApiIdFlag(this.flags['api-id'], 'products', apiId)
    const body = productBody(this.flags)
    const dropped = droppedCountryPrices(body, await requireProduct(await this.store(), apiId))
    if (dropped.length > 0 && !this.flags['dry-run']) {
      const shown = dropped.length > 10 ? `${dropped.slice(0, 10).join(', ')} and ${dropped.length - 10} more` : dropped.join(', ')
      await confirmDestructive(
        this.flags.yes,
        `drop ${dropped.length} country ${dropped.length === 1 ? 'price' : 'prices'} of ${apiId} (${shown})`,
        '--country-price replaces the whole list; to change one country keep the others with --add-country-price COUNTRY=AMOUNT[:CURRENCY] (and --remove-country-price COUNTRY), or pass --yes to replace the list; see the price impact with --dry-run',
      )
    }
    // The edits apply to the list stored when the write runs (inside its transaction).
    const write = async () => await updateProduct(await this.store(), apiId, applyListEdits(body, this.flags, await requireProduct(await this.store(), apiId)))
    const {dryRun, impact, result: {changed, product}} = await this.priceImpact(write, {products: [apiId]})
    const message = changed ? `${dryRun ? 'dry run: would update' : 'updated'} product ${apiId}` : `product ${apiId} unchanged (the update matches what is stored)`
    this.log(message)
    return {...productResponse(product, message), dry_run: dryRun, impact}
  }
}
