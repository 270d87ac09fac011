import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deleteCoupon} from '../../src/catalog/coupon-writes.js'
import {requireCoupon} from '../../src/catalog/coupons.js'
import {CouponDeleted} from '../../src/schemas/catalog.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class CouponsDelete extends BaseCommand<typeof CouponsDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the coupon', required: true})}
  static override changesExisting = true
  static override summary = 'Delete a coupon'
  static override description = 'Delete a coupon and its external coupon links'
  static override examples = ['<%= config.bin %> coupons delete OLD50 --yes']
  static override flags = {
    ...impactFlags,
    force: Flags.boolean({description: 'Delete even when campaigns use the coupon (the campaigns are deleted too)'}),
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return CouponDeleted.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    await requireCoupon(await this.store(), apiId)
    if (!this.flags['dry-run']) await confirmDestructive(this.flags.yes, `delete coupon ${apiId}`)
    const {dryRun, impact} = await this.priceImpact(async () => await deleteCoupon(await this.store(), apiId, {force: this.flags.force}), undefined, {confirmed: !this.flags.yes})
    const message = `${dryRun ? 'dry run: would delete' : 'deleted'} coupon ${apiId}`
    this.log(message)
    return {api_id: apiId, dry_run: dryRun, impact, message, success: true as const}
  }
}
