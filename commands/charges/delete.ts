import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deleteCharge} from '../../src/revenue/charges.js'
import {eventFlags, eventOf, keyArgs, reportWrite} from '../../src/cli/revenue/flags.js'
import {ChargeWritten} from '../../src/schemas/revenue.js'

export default class ChargesDelete extends BaseCommand<typeof ChargesDelete> {
  static override args = keyArgs
  static override summary = "Delete the store's record of a charge"
  static override description = "Delete the store's record of a charge. The delete is an event: an older create arriving later does not bring it back"
  static override examples = ['<%= config.bin %> charges delete u1 gateway_a ch_1 --yes']
  static override flags = {
    ...eventFlags,
    yes: Flags.boolean({char: 'y', description: 'Delete without asking (required without a terminal)'}),
  }
  static override get outputSchema() {
    return ChargeWritten
  }

  async run() {
    const event = eventOf(this.flags)
    await confirmDestructive(this.flags.yes, `delete charge ${this.args.user_id} ${this.args.origin} ${this.args.origin_id}`)
    const r = await deleteCharge(await this.store(), this.args, event)
    return await reportWrite((text) => this.log(text), r, await this.store())
  }
}
