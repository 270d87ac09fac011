import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {readProductsFile} from '../../src/catalog/files.js'
import {upsertProducts} from '../../src/catalog/products.js'
import {WithImpact} from '../../src/schemas/impact.js'
import {ProductImported} from '../../src/schemas/catalog.js'

export default class ProductsImport extends BaseCommand<typeof ProductsImport> {
  static override args = {file: Args.string({description: 'CSV or JSON file of products (- for stdin); the format comes from the extension, else the content', required: true})}
  static override summary = 'Create or replace products from a CSV or JSON file'
  static override description =
    'Create or replace products from a CSV or JSON file. Every row is validated first: if any fails, every failing row is listed and nothing is written.'
  static override examples = ['<%= config.bin %> products import products.csv', '<%= config.bin %> products import catalog.json --dry-run', '<%= config.bin %> products export backup.json && <%= config.bin %> products import backup.json']
  static override flags = {...impactFlags}
  static override get outputSchema() {
    return ProductImported.extend(WithImpact)
  }

  async run() {
    const {file} = this.args
    const {format, items} = readProductsFile(file)
    // Priced: the products the import changes (a catalog of thousands re-imported unchanged
    // prices nothing); new products are counted in "inserted", not priced.
    const {updated} = await upsertProducts(await this.store(), items, {dryRun: true})
    const {impact, result: r} = await this.priceImpact(async () => await upsertProducts(await this.store(), items), {products: updated})
    const counts = `${r.inserted.length} inserted, ${r.updated.length} updated, ${r.unchanged.length} unchanged`
    const message = `${this.flags['dry-run'] ? 'dry run: would import' : 'imported'} ${items.length} product${items.length === 1 ? '' : 's'} from ${file} (${format}): ${counts}`
    this.log(message)
    return {dry_run: Boolean(this.flags['dry-run']), impact, inserted: r.inserted.length, message, path: file, read: items.length, success: true as const, unchanged: r.unchanged.length, updated: r.updated.length}
  }
}
