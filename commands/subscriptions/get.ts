import {BaseCommand} from '../../src/cli/base.js'
import {recordTable} from '../../src/cli/render.js'
import {keyArgs} from '../../src/cli/revenue/flags.js'
import {getSubscription} from '../../src/revenue/subscriptions.js'
import {SubscriptionGot} from '../../src/schemas/revenue.js'

export default class SubscriptionsGet extends BaseCommand<typeof SubscriptionsGet> {
  static override args = keyArgs
  static override summary = 'Show a subscription'
  static override description = "Show a subscription (the spec's Get subscription: the reduced record, product id as service_product_id2)"
  static override examples = ['<%= config.bin %> subscriptions get u1 gateway_a sub_1', '<%= config.bin %> subscriptions get u1 gateway_a sub_1 --json']
  static override get outputSchema() {
    return SubscriptionGot
  }

  async run() {
    const subscription = getSubscription(this.store, this.args)
    this.log(recordTable(Object.entries(subscription)))
    return {subscription, success: true as const}
  }
}
