import {Flags} from '@oclif/core'

import {BaseCommand} from '../src/cli/base.js'
import {loadProducts} from '../src/catalog/products.js'
import {productsTable} from '../src/cli/catalog/render.js'
import {isoDay, nowSeconds} from '../src/clock.js'
import {DEMO_INCLUSIVE_COUNTRY, demoDir, describePlan, loadDemo, nextSteps, planDemo} from '../src/demo.js'
import {currentRate} from '../src/tax/store.js'
import {InvalidInputError} from '../src/errors.js'
import {table} from '../src/cli/render.js'
import {pricePreview} from '../src/pricing/preview.js'
import {DemoOutput} from '../src/schemas/catalog.js'

export default class Demo extends BaseCommand<typeof Demo> {
  static override summary = 'Fill the store with a demo catalog and show what to try next'
  static override description = 'Fill the store with a demo catalog (monthly, yearly and one-time products with country prices and integrations, coupons) and show what to try next. Into a store that already holds data it loads only with --yes (or when it would change nothing there).'
  static override examples = ['<%= config.bin %> demo --db ./demo.db', '<%= config.bin %> demo --db ./demo.db --json', '<%= config.bin %> demo --yes']
  static override flags = {
    yes: Flags.boolean({char: 'y', description: 'Load into a store that already holds data (adds the demo products and coupons, overwrites ones with the same api_id)'}),
  }
  static override get outputSchema() {
    return DemoOutput
  }

  async run() {
    const dir = demoDir(this.config.root)
    if (!this.flags.yes) await this.agreeToWrite(dir)
    const r = await loadDemo(await this.store(), dir)
    const count = (w: {inserted: string[]; unchanged: string[]; updated: string[]}) => w.inserted.length + w.updated.length + w.unchanged.length
    const products = count(r.products)
    const coupons = count(r.coupons)
    const message = `demo catalog loaded into ${(await this.store()).path}: ${products} products, ${coupons} coupons`
    const changes = (w: {inserted: string[]; unchanged: string[]; updated: string[]}) => `${w.inserted.length} new, ${w.updated.length} updated, ${w.unchanged.length} unchanged`
    this.log(message)
    this.log(`products: ${changes(r.products)}; coupons: ${changes(r.coupons)}`)
    this.log(productsTable(await loadProducts(await this.store())))
    if (!this.jsonEnabled()) {
      const shown = ['basic_monthly', 'pro_monthly', 'pro_yearly', 'lifetime'].filter((id) => r.products.inserted.includes(id) || r.products.updated.includes(id) || r.products.unchanged.includes(id))
      const rows = await pricePreview(await this.store(), shown, ['US', 'DE', 'GB', 'IN', 'BR', 'JP', 'KW'])
      this.log('\nPrice preview for a new user in each country (no lock written):')
      this.log(table(rows, [
        {header: 'country', value: (row) => `${row.country} (${row.currency})`},
        ...shown.map((id) => ({header: id, value: (row: (typeof rows)[number]) => row.prices[id]})),
      ]))
      const vat = await currentRate(await this.store(), DEMO_INCLUSIVE_COUNTRY, 'standard', isoDay(nowSeconds()))
      this.log(`${DEMO_INCLUSIVE_COUNTRY} prices include ${vat.rate}% ${vat.label} (tax behavior inclusive --country ${DEMO_INCLUSIVE_COUNTRY}); the other countries are shown before tax.`)
    }
    this.log('\nWhat to try next:')
    for (const step of await nextSteps(await this.store())) this.log(`  ${step}`)
    return {coupons, message, products, success: true as const}
  }

  /** A store with data gets the demo only when the operator agrees (no surprise writes). */
  private async agreeToWrite(dir: string): Promise<void> {
    const plan = await planDemo(await this.store(), dir)
    if (!plan.surprise) return
    const {changes, held} = describePlan(plan)
    const what = `the store ${(await this.store()).path} is not empty (${held}): demo would ${changes}`
    if (!this.interactive || this.jsonEnabled()) {
      throw new InvalidInputError(`${what}; nothing was written: pass --yes to load the demo into it anyway, or --db NEW_PATH for a separate demo store`)
    }
    const {confirm} = await import('@inquirer/prompts')
    if (!(await confirm({default: false, message: `${what}. Load the demo into it anyway?`}))) {
      throw new InvalidInputError('not confirmed: the demo was not loaded (pass --db NEW_PATH for a separate demo store)')
    }
  }
}
