import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {eventFlags, eventOf, keyArgs, reportWrite} from '../../src/cli/revenue/flags.js'
import {deleteSubscription} from '../../src/revenue/subscriptions.js'
import {SubscriptionWritten} from '../../src/schemas/revenue.js'

export default class SubscriptionsDelete extends BaseCommand<typeof SubscriptionsDelete> {
  static override args = keyArgs
  static override summary = "Delete the store's record of a subscription"
  static override description =
    "Delete the store's record of a subscription (the spec's Delete subscription). The delete is an event: an older create arriving later does not bring it back"
  static override examples = ['<%= config.bin %> subscriptions delete u1 gateway_a sub_1 --yes']
  static override flags = {
    ...eventFlags,
    yes: Flags.boolean({char: 'y', description: 'Delete without asking (required without a terminal)'}),
  }
  static override get outputSchema() {
    return SubscriptionWritten
  }

  async run() {
    const event = eventOf(this.flags)
    await confirmDestructive(this.flags.yes, `delete subscription ${this.args.user_id} ${this.args.origin} ${this.args.origin_id}`)
    const r = await deleteSubscription(await this.store(), this.args, event)
    return await reportWrite((text) => this.log(text), r, await this.store())
  }
}
