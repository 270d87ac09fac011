import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {overlay, readBody} from '../../src/cli/input.js'
import {bodyFlag, eventFlags, eventOf, keyArgs, numberish, reportWrite, timestampish} from '../../src/revenue/cli.js'
import {updateSubscription} from '../../src/revenue/subscriptions.js'
import {SubscriptionWritten} from '../../src/schemas/revenue.js'

export default class SubscriptionsUpdate extends BaseCommand<typeof SubscriptionsUpdate> {
  static override args = keyArgs
  static override description =
    "Update a subscription (the spec's Update subscription): amount, created, currency, status, cancel and trial fields. A change of status clears the cancel fields (unless canceled) and trial fields (unless trialing)"
  static override examples = [
    '<%= config.bin %> subscriptions update u1 gateway_a sub_1 --status canceled --canceled-at 1769904000 --cancel-at 1772323200',
    '<%= config.bin %> subscriptions update u1 gateway_a sub_1 --amount 12 --event-id evt_43 --event-timestamp 1769904000',
  ]
  static override flags = {
    ...bodyFlag,
    amount: Flags.string({description: 'Price of the subscription, in currency units'}),
    'cancel-at': Flags.string({description: 'Moment after which the customer has no access (only with status canceled)'}),
    'canceled-at': Flags.string({description: 'Moment the customer asked to cancel (only with status canceled)'}),
    created: Flags.string({description: 'When the subscription was initialised (UNIX seconds or ISO date)'}),
    currency: Flags.string({description: 'ISO 4217 currency of the amount'}),
    status: Flags.string({description: 'pending, trialing, active or canceled'}),
    'trial-end': Flags.string({description: 'End of the trial (only with status trialing)'}),
    'trial-start': Flags.string({description: 'Start of the trial (only with status trialing)'}),
    ...eventFlags,
  }
  static override get outputSchema() {
    return SubscriptionWritten
  }

  async run() {
    const f = this.flags
    const body = overlay(readBody(f.body), {
      amount: numberish(f.amount),
      cancel_at: timestampish(f['cancel-at']),
      canceled_at: timestampish(f['canceled-at']),
      created: timestampish(f.created),
      currency: f.currency,
      status: f.status,
      trial_end: timestampish(f['trial-end']),
      trial_start: timestampish(f['trial-start']),
    })
    const event = eventOf(f)
    const r = updateSubscription(this.store.db, this.args, body, event)
    return reportWrite((text) => this.log(text), r)
  }
}
