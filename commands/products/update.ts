import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {productBody, productFlags, refuseApiIdFlag} from '../../src/cli/catalog/flags.js'
import {productResponse, updateProduct} from '../../src/catalog/products.js'
import {ProductOutput} from '../../src/schemas/catalog.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class ProductsUpdate extends BaseCommand<typeof ProductsUpdate> {
  static override args = {api_id: Args.string({description: 'api_id of the product', required: true})}
  static override summary = 'Change a product'
  static override description =
    'Change a product; given fields replace stored ones (country prices, integrations, features and trials as whole lists). api_id cannot change.'
  static override examples = [
    '<%= config.bin %> products update pro_monthly --base-px 10.99',
    '<%= config.bin %> products update pro_monthly --country-price DE=9.49:EUR --country-price FR=9.49:EUR',
    '<%= config.bin %> products update pro_monthly --min-px none --baseline none',
  ]
  static override flags = {...productFlags, ...impactFlags, 'api-id': {...productFlags['api-id'], hidden: true}}
  static override get outputSchema() {
    return ProductOutput.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    refuseApiIdFlag(this.flags['api-id'], 'products', apiId)
    const {dryRun, impact, result: {changed, product}} = await this.priceImpact(() => updateProduct(this.store, apiId, productBody(this.flags)), {products: [apiId]})
    const message = changed ? `${dryRun ? 'dry run: would update' : 'updated'} product ${apiId}` : `product ${apiId} unchanged (the update matches what is stored)`
    this.log(message)
    return {...productResponse(product, message), dry_run: dryRun, impact}
  }
}
