import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {productResponse, requireProduct} from '../../src/catalog/products.js'
import {productDetail} from '../../src/cli/catalog/render.js'
import {ProductOutput} from '../../src/schemas/catalog.js'

export default class ProductsGet extends BaseCommand<typeof ProductsGet> {
  static override args = {api_id: Args.string({description: 'api_id of the product', required: true})}
  static override readsOnly = true
  static override summary = 'Show a product'
  static override description = 'Show a product: prices, bounds, baseline, integrations, features, trials'
  static override examples = ['<%= config.bin %> products get pro_monthly', '<%= config.bin %> products get pro_monthly --json']
  static override get outputSchema() {
    return ProductOutput
  }

  async run() {
    const p = await requireProduct(await this.store(), this.args.api_id)
    this.log(productDetail(p))
    return productResponse(p, `product ${p.api_id}`)
  }
}
