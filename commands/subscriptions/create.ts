import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {overlay, readBody, requireFields} from '../../src/cli/input.js'
import {resolveZone} from '../../src/dates.js'
import {bodyFlag, eventFlags, eventOf, momentFlag, numberish, productFlag, reportWrite, subscriptionFieldFlags, subscriptionFields} from '../../src/cli/revenue/flags.js'
import {createSubscription} from '../../src/revenue/subscriptions.js'
import {SubscriptionWritten} from '../../src/schemas/revenue.js'

export default class SubscriptionsCreate extends BaseCommand<typeof SubscriptionsCreate> {
  static override summary = 'Record a subscription (an event)'
  static override description =
    "Record a subscription (the spec's Create subscription). It is an event: an existing subscription with an older latest event is replaced, a newer one makes this a stale event that changes nothing"
  static override examples = [
    '<%= config.bin %> subscriptions create --user-id u1 --origin gateway_a --origin-id sub_1 --product pro_monthly --amount 9.99 --currency USD --created 1767225600 --status active',
    '<%= config.bin %> subscriptions create --body sub.json --event-id evt_42 --event-timestamp 1767225600',
    `<%= config.bin %> subscriptions create --body sub.json --product '{"type":"gateway_a","gateway_a_product_id":"prod_pro"}'`,
  ]
  static override flags = {
    ...bodyFlag,
    ...subscriptionFieldFlags,
    country: Flags.string({description: 'Two-letter country code of the user'}),
    origin: Flags.string({description: 'Gateway that handled it: gateway_a, gateway_b or gateway_c'}),
    'origin-id': Flags.string({description: 'Unique subscription id (may be the gateway\'s id)'}),
    product: Flags.string({description: 'Product api_id, or an integration object as JSON'}),
    'user-id': Flags.string({description: 'The user id'}),
    ...eventFlags,
  }
  static override get outputSchema() {
    return SubscriptionWritten
  }

  async run() {
    const f = this.flags
    const body = overlay(readBody(f.body), {
      ...subscriptionFields(f),
      country: f.country,
      origin: f.origin,
      origin_id: f['origin-id'],
      product: productFlag(f.product),
      user_id: f['user-id'],
    })
    const input = await requireFields(body, [
      {field: 'user_id', flag: '--user-id', message: 'User id'},
      {field: 'origin', flag: '--origin', message: 'Origin (gateway_a, gateway_b, gateway_c)'},
      {field: 'origin_id', flag: '--origin-id', message: 'Subscription id at the origin'},
      {field: 'product', flag: '--product', message: 'Product api_id', parse: productFlag},
      {field: 'amount', flag: '--amount', message: 'Amount', parse: numberish},
      {field: 'currency', flag: '--currency', message: 'Currency (ISO 4217)'},
      {field: 'created', flag: '--created', message: 'Created (UNIX seconds, ISO date or date-time)', parse: (s) => momentFlag(s, '--created', resolveZone(f.tz))},
      {field: 'status', flag: '--status', message: 'Status (pending, trialing, active, canceled)'},
    ])
    const event = eventOf(f)
    const r = await createSubscription(await this.store(), input, event)
    return await reportWrite((text) => this.log(text), r, await this.store())
  }
}
