import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {priceFlags} from '../../src/cli/price-flags.js'
import {table} from '../../src/cli/render.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice, type ExplainStep} from '../../src/pricing/price.js'
import {requestFromFlags} from '../../src/cli/pricing/request.js'
import {PriceResult} from '../../src/schemas/price.js'
import {renderPrice} from './index.js'

/** What `--json` prints. */
const Output = z.object({
  result: PriceResult,
  steps: z.array(z.object({detail: z.string(), outcome: z.enum(['applied', 'chose', 'info', 'skipped']), step: z.string()})),
  success: z.literal(true),
})

export default class PriceExplain extends BaseCommand<typeof PriceExplain> {
  static override readsOnly = true
  static override summary = 'Show how a price is made, layer by layer'
  static override description = `Show how a price is made: each layer, which one won and why

Takes the same request as "pricectl price" and computes exactly what it would return, but
writes nothing (no lock is created or changed).`
  static override examples = ['<%= config.bin %> price explain --user-id u1 --product pro_monthly --ip 81.2.69.142']
  static override flags = priceFlags
  static override get outputSchema() {
    return Output
  }

  async run() {
    const steps: ExplainStep[] = []
    const ctx = await PricingContext.open(await this.store(), {geoipDb: this.flags['geoip-db']})
    const result = await calculatePrice(ctx, requestFromFlags(this.flags), {dryRun: true, trace: steps})
    if (!this.jsonEnabled()) {
      this.log(table(steps, [
        {header: 'step', value: (s) => s.step},
        {header: '', value: (s) => s.outcome},
        {header: 'why', value: (s) => s.detail},
      ]))
      this.log(renderPrice(result))
    }
    return {result, steps, success: true as const}
  }
}
