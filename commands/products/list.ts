import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {listEntry, loadProducts} from '../../src/catalog/products.js'
import {productsCsvList, productsTable} from '../../src/cli/catalog/render.js'
import {ProductList} from '../../src/schemas/catalog.js'

export default class ProductsList extends BaseCommand<typeof ProductsList> {
  static override readsOnly = true
  static override summary = 'List products'
  static override description = 'List products (sorted by api_id)'
  static override examples = ['<%= config.bin %> products list', '<%= config.bin %> products list --output csv > products.csv', '<%= config.bin %> products list --json']
  static override flags = {
    ...listFlags,
    output: Flags.string({default: 'table', description: 'Output format (--json prints the spec\'s response)', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return ProductList
  }

  async run() {
    const products = await loadProducts(await this.store())
    const result = {message: `${products.length} product${products.length === 1 ? '' : 's'}`, products: products.map((p) => listEntry(p)), success: true as const}
    if (this.jsonEnabled()) return result
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(productsCsvList(products))
    else if (products.length === 0) this.log('no products yet: add one with "pricectl products create" or try "pricectl demo"')
    else this.log(productsTable(products))
    return result
  }
}
