import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {requireFields} from '../../src/cli/input.js'
import {createCoupon} from '../../src/catalog/coupon-writes.js'
import {couponResponse} from '../../src/catalog/coupons.js'
import {couponBody, couponFlags} from '../../src/cli/catalog/flags.js'
import {couponValue} from '../../src/cli/catalog/render.js'
import {numberish} from '../../src/catalog/shortforms.js'
import {CouponResponse} from '../../src/schemas/catalog.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class CouponsCreate extends BaseCommand<typeof CouponsCreate> {
  static override summary = 'Create a coupon'
  static override description = 'Create a coupon: a percentage or a fixed amount off, an optional active window, links to gateway coupons'
  static override examples = [
    '<%= config.bin %> coupons create --api-id WELCOME10 --name "Welcome 10%" --type percentage --value 10',
    '<%= config.bin %> coupons create --api-id SAVE5 --name "5 EUR off" --type fixed_amount --value 5 --currency EUR --active-till 2026-12-31 --external GATEWAY_A=promo_123',
    '<%= config.bin %> coupons create --body coupon.json',
  ]
  static override flags = {...couponFlags, ...impactFlags}
  static override get outputSchema() {
    return CouponResponse.extend(WithImpact)
  }

  async run() {
    const body = await requireFields(couponBody(this.flags), [
      {field: 'api_id', flag: '--api-id', message: 'api_id'},
      {field: 'name', flag: '--name', message: 'Name'},
      {field: 'coupon_type', flag: '--type', message: 'Type (percentage or fixed_amount)', parse: (a) => ({coupon_type: a.trim()})},
      {field: 'value', flag: '--value', message: 'Value (percent, or amount in the coupon currency)', parse: numberish},
    ])
    const {dryRun, impact, result: {c, out}} = await this.priceImpact(async () => {
      const c = await createCoupon(await this.store(), body)
      return {c, out: await couponResponse(await this.store(), c)}
    })
    const message = `${dryRun ? 'dry run: would create' : 'created'} coupon ${c.api_id}`
    this.log(`${message} (${c.name}): ${couponValue(c)} off, ${c.status}`)
    return {coupon: out, dry_run: dryRun, impact, message, success: true as const}
  }
}
