import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {requireFields} from '../../src/cli/input.js'
import {productBody, productFlags} from '../../src/cli/catalog/flags.js'
import {createdResponse, createProduct} from '../../src/catalog/products.js'
import {billing} from '../../src/cli/catalog/render.js'
import {numberish} from '../../src/catalog/shortforms.js'
import {fromMinor} from '../../src/currency.js'
import {ProductCreated} from '../../src/schemas/catalog.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class ProductsCreate extends BaseCommand<typeof ProductsCreate> {
  static override summary = 'Create a product'
  static override description = 'Create a product: base price in USD, billing interval, country prices, gateway integrations, price bounds, baseline, features, trials'
  static override examples = [
    '<%= config.bin %> products create --api-id pro_monthly --name "Pro Monthly" --base-px 9.99 --interval month --interval-count 1 --country-price DE=8.99:EUR --country-price GB=7.99:GBP --integration gateway_a:prod_pro',
    '<%= config.bin %> products create --body product.json',
    'cat product.json | <%= config.bin %> products create --body - --json',
  ]
  static override flags = {...productFlags, ...impactFlags}
  static override get outputSchema() {
    return ProductCreated.extend(WithImpact)
  }

  async run() {
    const body = await requireFields(productBody(this.flags), [
      {field: 'api_id', flag: '--api-id', message: 'api_id (used when requesting prices)'},
      {field: 'name', flag: '--name', message: 'Name'},
      {field: 'base_px', flag: '--base-px', message: 'Base price in USD', parse: numberish},
      {field: 'interval', flag: '--interval', message: 'Interval (day, week, month, year, one_time)'},
      {field: 'interval_count', flag: '--interval-count', message: 'Interval count (1 for one_time)', parse: numberish},
    ])
    const {dryRun, impact, result: p} = await this.priceImpact(async () => await createProduct(await this.store(), body), {products: [String(body.api_id)]})
    const message = `${dryRun ? 'dry run: would create' : 'created'} product ${p.api_id}`
    this.log(`${message} (${p.name}): ${fromMinor(p.base_px_minor, 'USD')} USD ${billing(p)}, ${p.country_prices.length} country price${p.country_prices.length === 1 ? '' : 's'}, ${p.integrations.length} integration${p.integrations.length === 1 ? '' : 's'}`)
    return {...createdResponse(p, message), dry_run: dryRun, impact}
  }
}
