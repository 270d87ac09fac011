import {BaseCommand} from '../src/cli/base.js'
import {loadProducts} from '../src/catalog/products.js'
import {productsTable} from '../src/catalog/render.js'
import {demoDir, loadDemo, nextSteps} from '../src/demo.js'
import {table} from '../src/cli/render.js'
import {pricePreview} from '../src/pricing/preview.js'
import {DemoOutput} from '../src/schemas/catalog.js'

export default class Demo extends BaseCommand<typeof Demo> {
  static override summary = 'Fill the store with a demo catalog and show what to try next'
  static override description = 'Fill the store with a demo catalog (monthly, yearly and one-time products with country prices and integrations, coupons) and show what to try next. Safe to re-run.'
  static override examples = ['<%= config.bin %> demo', '<%= config.bin %> demo --db ./demo.db --json']
  static override get outputSchema() {
    return DemoOutput
  }

  async run() {
    const r = loadDemo(this.store.db, demoDir(this.config.root))
    const count = (w: {inserted: string[]; unchanged: string[]; updated: string[]}) => w.inserted.length + w.updated.length + w.unchanged.length
    const products = count(r.products)
    const coupons = count(r.coupons)
    const message = `demo catalog loaded into ${this.store.path}: ${products} products, ${coupons} coupons`
    const changes = (w: {inserted: string[]; unchanged: string[]; updated: string[]}) => `${w.inserted.length} new, ${w.updated.length} updated, ${w.unchanged.length} unchanged`
    this.log(message)
    this.log(`products: ${changes(r.products)}; coupons: ${changes(r.coupons)}`)
    this.log(productsTable(loadProducts(this.store.db)))
    if (!this.jsonEnabled()) {
      const shown = ['basic_monthly', 'pro_monthly', 'pro_yearly', 'lifetime'].filter((id) => r.products.inserted.includes(id) || r.products.updated.includes(id) || r.products.unchanged.includes(id))
      const rows = pricePreview(this.store.db, shown, ['US', 'DE', 'GB', 'IN', 'BR', 'JP', 'KW'])
      this.log('\nPrice preview for a new user in each country (no lock written):')
      this.log(table(rows, [
        {header: 'country', value: (row) => `${row.country} (${row.currency})`},
        ...shown.map((id) => ({header: id, value: (row: (typeof rows)[number]) => row.prices[id]})),
      ]))
    }
    this.log('\nWhat to try next:')
    for (const step of nextSteps(this.store.db)) this.log(`  ${step}`)
    return {coupons, message, products, success: true as const}
  }
}
