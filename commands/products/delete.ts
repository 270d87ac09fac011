import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deleteProduct, requireProduct} from '../../src/catalog/products.js'
import {ProductDeleted} from '../../src/schemas/catalog.js'

export default class ProductsDelete extends BaseCommand<typeof ProductsDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the product', required: true})}
  static override summary = 'Delete a product'
  static override description = 'Delete a product with its country prices, integrations, features and trials'
  static override examples = ['<%= config.bin %> products delete old_plan --yes']
  static override flags = {
    force: Flags.boolean({description: 'Delete even when subscriptions, charges, experiments or packages use the product (they lose the link)'}),
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return ProductDeleted
  }

  async run() {
    const apiId = this.args.api_id
    requireProduct(this.store, apiId)
    await confirmDestructive(this.flags.yes, `delete product ${apiId}`)
    const {baselineOf} = deleteProduct(this.store, apiId, {force: this.flags.force})
    const message = `deleted product ${apiId}` + (baselineOf.length ? `; ${baselineOf.join(', ')} no longer ${baselineOf.length === 1 ? 'has a' : 'have a'} baseline` : '')
    this.log(message)
    return {api_id: apiId, message, success: true as const}
  }
}
