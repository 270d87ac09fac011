import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {couponResponse, listCoupons} from '../../src/catalog/coupons.js'
import {couponsCsvList, couponsTable} from '../../src/cli/catalog/render.js'
import {COUPON_STATUSES, CouponList} from '../../src/schemas/catalog.js'

export default class CouponsList extends BaseCommand<typeof CouponsList> {
  static override readsOnly = true
  static override summary = 'List coupons'
  static override description = 'List coupons (sorted by api_id); --name matches case-insensitively anywhere in the name'
  static override examples = ['<%= config.bin %> coupons list', '<%= config.bin %> coupons list --name spring', '<%= config.bin %> coupons list --status ACTIVE --json']
  static override flags = {
    ...listFlags,
    name: Flags.string({description: 'Only coupons whose name contains this text (case-insensitive)'}),
    output: Flags.string({default: 'table', description: 'Output format (--json prints the spec\'s response)', options: ['table', 'csv', 'json']}),
    status: Flags.string({description: 'Only coupons with this status', options: [...COUPON_STATUSES]}),
  }
  static override get outputSchema() {
    return CouponList
  }

  async run() {
    const store = await this.store()
    const coupons = await listCoupons(store, {name: this.flags.name, status: this.flags.status})
    const filtered = this.flags.name !== undefined || this.flags.status !== undefined
    const result = {
      coupons: await Promise.all(coupons.map(async (c) => await couponResponse(store, c))),
      message: `${coupons.length} coupon${coupons.length === 1 ? '' : 's'}${filtered ? ' matching' : ''}`,
      success: true as const,
    }
    if (this.jsonEnabled()) return result
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(couponsCsvList(coupons))
    else if (coupons.length === 0) this.log(filtered ? 'no coupons match' : 'no coupons yet: add one with "pricectl coupons create" or try "pricectl demo"')
    else this.log(couponsTable(coupons))
    return result
  }
}
