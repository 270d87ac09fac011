import {BaseCommand} from '../../src/cli/base.js'
import {listFlags, printList, productNames, subscriptionColumns, window} from '../../src/cli/revenue/flags.js'
import {listSubscriptions} from '../../src/revenue/subscriptions.js'
import {SubscriptionList, SubscriptionRecord} from '../../src/schemas/revenue.js'

export default class SubscriptionsList extends BaseCommand<typeof SubscriptionsList> {
  static override readsOnly = true
  static override summary = 'List subscriptions, newest first'
  static override description = 'List subscriptions, newest first, with filters'
  static override examples = [
    '<%= config.bin %> subscriptions list --user-id u1',
    '<%= config.bin %> subscriptions list --status active --product pro_monthly --since 2026-01-01 --output csv > active.csv',
  ]
  static override flags = listFlags
  static override get outputSchema() {
    return SubscriptionList
  }

  async run() {
    const f = this.flags
    const {records, total} = await listSubscriptions(await this.store(), {
      limit: f.limit,
      product: f.product,
      status: f.status,
      user_id: f['user-id'],
      ...window(f.since, f.until, f.tz),
    })
    const message = `${records.length} of ${total} subscription${total === 1 ? '' : 's'}`
    const result = {message, subscriptions: records, success: true, total}
    printList(this, f.output, {columns: subscriptionColumns(await productNames(await this.store(), records)), fields: Object.keys(SubscriptionRecord.shape), message, records, result})
    return result
  }
}
