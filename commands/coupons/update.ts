import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {updateCoupon} from '../../src/catalog/coupon-writes.js'
import {couponResponse} from '../../src/catalog/coupons.js'
import {couponBody, couponFlags, refuseApiIdFlag} from '../../src/cli/catalog/flags.js'
import {CouponResponse} from '../../src/schemas/catalog.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class CouponsUpdate extends BaseCommand<typeof CouponsUpdate> {
  static override args = {api_id: Args.string({description: 'api_id of the coupon', required: true})}
  static override changesExisting = true
  static override summary = 'Change a coupon'
  static override description = 'Change a coupon; given fields replace stored ones (external coupons as a whole list). api_id cannot change.'
  static override examples = ['<%= config.bin %> coupons update SPRING25 --status NOT_ACTIVE', '<%= config.bin %> coupons update SAVE5 --value 7.5 --active-till none']
  static override flags = {...impactFlags, ...couponFlags, 'api-id': {...couponFlags['api-id'], hidden: true}}
  static override get outputSchema() {
    return CouponResponse.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    refuseApiIdFlag(this.flags['api-id'], 'coupons', apiId)
    const {dryRun, impact, result: {changed, out}} = await this.priceImpact(async () => {
      const {changed, coupon} = await updateCoupon(await this.store(), apiId, couponBody(this.flags))
      return {changed, out: await couponResponse(await this.store(), coupon)}
    })
    const message = changed ? `${dryRun ? 'dry run: would update' : 'updated'} coupon ${apiId}` : `coupon ${apiId} unchanged (the update matches what is stored)`
    this.log(message)
    return {coupon: out, dry_run: dryRun, impact, message, success: true as const}
  }
}
