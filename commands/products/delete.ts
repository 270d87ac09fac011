import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deleteProduct, requireProduct} from '../../src/catalog/products.js'
import {ProductDeleted} from '../../src/schemas/catalog.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class ProductsDelete extends BaseCommand<typeof ProductsDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the product', required: true})}
  static override changesExisting = true
  static override summary = 'Delete a product'
  static override description = 'Delete a product with its country prices, integrations, features and trials'
  static override examples = ['<%= config.bin %> products delete old_plan --yes']
  static override flags = {
    ...impactFlags,
    force: Flags.boolean({description: 'Delete even when subscriptions, charges, experiments or packages use the product (they lose the link)'}),
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return ProductDeleted.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    await requireProduct(await this.store(), apiId)
    if (!this.flags['dry-run']) await confirmDestructive(this.flags.yes, `delete product ${apiId}`)
    const {dryRun, impact, result: {baselineOf}} = await this.priceImpact(async () => await deleteProduct(await this.store(), apiId, {force: this.flags.force}), {products: [apiId]}, {confirmed: !this.flags.yes})
    const message = `${dryRun ? 'dry run: would delete' : 'deleted'} product ${apiId}` + (baselineOf.length ? `; ${baselineOf.join(', ')} no longer ${baselineOf.length === 1 ? 'has a' : 'have a'} baseline` : '')
    this.log(message)
    return {api_id: apiId, dry_run: dryRun, impact, message, success: true as const}
  }
}
