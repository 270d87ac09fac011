import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {overlay, readBody} from '../../src/cli/input.js'
import {updateCharge} from '../../src/revenue/charges.js'
import {bodyFlag, eventFlags, eventOf, keyArgs, metadataFlag, numberish, reportWrite, timestampish} from '../../src/revenue/cli.js'
import {ChargeWritten} from '../../src/schemas/revenue.js'

export default class ChargesUpdate extends BaseCommand<typeof ChargesUpdate> {
  static override args = keyArgs
  static override description =
    "Update a charge (the spec's Update charge): amount, created, currency, status, metadata (replaced whole). amount_refunded is refused, as the spec says"
  static override examples = [
    '<%= config.bin %> charges update u1 gateway_a ch_1 --status failed',
    '<%= config.bin %> charges update u1 gateway_a ch_1 --metadata \'{"invoice":"in_2"}\' --event-id evt_7 --event-timestamp 1769904000',
  ]
  static override flags = {
    ...bodyFlag,
    amount: Flags.string({description: 'Price of the charge, in currency units'}),
    created: Flags.string({description: 'When the charge was initialised (UNIX seconds or ISO date)'}),
    currency: Flags.string({description: 'ISO 4217 currency of the amount'}),
    metadata: Flags.string({description: 'Free-form data: one JSON object, or KEY=VALUE (repeatable); replaces the stored metadata', multiple: true}),
    status: Flags.string({description: 'pending, succeeded or failed'}),
    ...eventFlags,
  }
  static override get outputSchema() {
    return ChargeWritten
  }

  async run() {
    const f = this.flags
    const body = overlay(readBody(f.body), {
      amount: numberish(f.amount),
      created: timestampish(f.created),
      currency: f.currency,
      metadata: metadataFlag(f.metadata),
      status: f.status,
    })
    const event = eventOf(f)
    const r = updateCharge(this.store.db, this.args, body, event)
    return reportWrite((text) => this.log(text), r)
  }
}
