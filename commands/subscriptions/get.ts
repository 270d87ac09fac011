import {BaseCommand} from '../../src/cli/base.js'
import {getArgs, productNames, recordView} from '../../src/cli/revenue/flags.js'
import {resolveKey} from '../../src/revenue/lookup.js'
import {getSubscription} from '../../src/revenue/subscriptions.js'
import {SubscriptionGot} from '../../src/schemas/revenue.js'

export default class SubscriptionsGet extends BaseCommand<typeof SubscriptionsGet> {
  static override args = getArgs
  static override readsOnly = true
  static override summary = 'Show a subscription'
  static override description =
    "Show a subscription (the spec's Get subscription: the reduced record, product id as service_product_id2). Name it by USER_ID ORIGIN ORIGIN_ID, or by the gateway's id alone when no other user or gateway has a subscription with it (else exit 2 with the matches). People see the product's api_id and dates; --json keeps the spec's fields."
  static override examples = [
    '<%= config.bin %> subscriptions get u1 gateway_a sub_1',
    '<%= config.bin %> subscriptions get sub_1',
    '<%= config.bin %> subscriptions get u1 gateway_a sub_1 --json',
  ]
  static override get outputSchema() {
    return SubscriptionGot
  }

  async run() {
    const subscription = await getSubscription(await this.store(), await resolveKey(await this.store(), 'subscriptions', this.args))
    this.log(recordView(subscription, await productNames(await this.store(), [subscription])))
    return {subscription, success: true as const}
  }
}
