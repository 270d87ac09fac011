import {Args, Flags} from '@oclif/core'
import {extname} from 'node:path'

import {BaseCommand} from '../../src/cli/base.js'
import {productsCsv, productsJson} from '../../src/catalog/files.js'
import {exportProducts} from '../../src/catalog/products.js'
import {ProductExported} from '../../src/schemas/catalog.js'
import {checkOutput, writeOutputFile} from '../../src/store/output-file.js'

export default class ProductsExport extends BaseCommand<typeof ProductsExport> {
  static override args = {file: Args.string({description: 'Where to write (default: stdout)'})}
  static override readsOnly = true
  static override summary = 'Write every product to a JSON or CSV file'
  static override description = 'Write every product to JSON or CSV in the layout "products import" reads back (export then import changes nothing)'
  static override examples = [
    '<%= config.bin %> products export products.json',
    '<%= config.bin %> products export --output csv products.csv',
    '<%= config.bin %> products export --output csv > products.csv',
  ]
  static override flags = {
    force: Flags.boolean({description: 'Overwrite FILE if it exists (never the store or its -wal/-shm files)'}),
    output: Flags.string({description: 'File format (default: from the FILE extension, else json)', options: ['json', 'csv']}),
  }
  static override get outputSchema() {
    return ProductExported
  }

  async run() {
    const {file} = this.args
    const format = (this.flags.output ?? (file && extname(file).toLowerCase() === '.csv' ? 'csv' : 'json')) as 'csv' | 'json'
    // Refused before the store is read: it may not be the store itself, nor overwrite without --force.
    const rules = {force: this.flags.force, label: 'FILE', store: this.storeLocation}
    if (file) checkOutput(file, rules)
    const products = await exportProducts(await this.store())
    const text = format === 'csv' ? productsCsv(products) : productsJson(products)
    const message = `exported ${products.length} product${products.length === 1 ? '' : 's'}${file ? ` to ${file}` : ''} (${format})`
    if (file) {
      writeOutputFile(file, text, rules)
      this.log(message)
      return {count: products.length, format, message, path: file, success: true as const}
    }
    // To stdout: the file itself, or under --json the products inside the JSON result.
    if (this.jsonEnabled()) return {count: products.length, format: 'json' as const, message, path: null, products, success: true as const}
    process.stdout.write(text)
    return {count: products.length, format, message, path: null, success: true as const}
  }
}
