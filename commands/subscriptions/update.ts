import {BaseCommand} from '../../src/cli/base.js'
import {overlay, readBody} from '../../src/cli/input.js'
import {bodyFlag, eventFlags, eventOf, keyArgs, reportWrite, subscriptionFieldFlags, subscriptionFields} from '../../src/cli/revenue/flags.js'
import {updateSubscription} from '../../src/revenue/subscriptions.js'
import {SubscriptionWritten} from '../../src/schemas/revenue.js'

export default class SubscriptionsUpdate extends BaseCommand<typeof SubscriptionsUpdate> {
  static override args = keyArgs
  static override summary = 'Update a subscription'
  static override description =
    "Update a subscription (the spec's Update subscription): amount, created, currency, status, cancel and trial fields, and the tax part of the amount (--tax, pricectl's addition). A change of status clears the cancel fields (unless canceled) and trial fields (unless trialing)"
  static override examples = [
    '<%= config.bin %> subscriptions update u1 gateway_a sub_1 --status canceled --canceled-at 1769904000 --cancel-at 1772323200',
    '<%= config.bin %> subscriptions update u1 gateway_a sub_1 --amount 12 --event-id evt_43 --event-timestamp 1769904000',
  ]
  static override flags = {...bodyFlag, ...subscriptionFieldFlags, ...eventFlags}
  static override get outputSchema() {
    return SubscriptionWritten
  }

  async run() {
    const f = this.flags
    const body = overlay(readBody(f.body), subscriptionFields(f))
    const event = eventOf(f)
    const r = await updateSubscription(await this.store(), this.args, body, event)
    return await reportWrite((text) => this.log(text), r, await this.store())
  }
}
