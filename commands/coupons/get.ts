import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {couponResponse, requireCoupon} from '../../src/catalog/coupons.js'
import {couponDetail} from '../../src/cli/catalog/render.js'
import {CouponResponse} from '../../src/schemas/catalog.js'

export default class CouponsGet extends BaseCommand<typeof CouponsGet> {
  static override args = {api_id: Args.string({description: 'api_id of the coupon', required: true})}
  static override readsOnly = true
  static override summary = 'Show a coupon'
  static override description = 'Show a coupon'
  static override examples = ['<%= config.bin %> coupons get WELCOME10', '<%= config.bin %> coupons get WELCOME10 --json']
  static override get outputSchema() {
    return CouponResponse
  }

  async run() {
    const c = await requireCoupon(await this.store(), this.args.api_id)
    this.log(couponDetail(c))
    return {coupon: await couponResponse(await this.store(), c), message: `coupon ${c.api_id}`, success: true as const}
  }
}
