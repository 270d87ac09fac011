import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {overlay, readBody} from '../../src/cli/input.js'
import {updateCharge} from '../../src/revenue/charges.js'
import {bodyFlag, chargeFieldFlags, chargeFields, eventFlags, eventOf, keyArgs, metadataFlag, reportWrite} from '../../src/cli/revenue/flags.js'
import {ChargeWritten} from '../../src/schemas/revenue.js'

export default class ChargesUpdate extends BaseCommand<typeof ChargesUpdate> {
  static override args = keyArgs
  static override summary = 'Update a charge'
  static override description =
    "Update a charge (the spec's Update charge): amount, created, currency, status, metadata (replaced whole), and the tax part of the amount (--tax, pricectl's addition). amount_refunded is refused, as the spec says"
  static override examples = [
    '<%= config.bin %> charges update u1 gateway_a ch_1 --status failed',
    '<%= config.bin %> charges update u1 gateway_a ch_1 --metadata \'{"invoice":"in_2"}\' --event-id evt_7 --event-timestamp 1769904000',
  ]
  static override flags = {
    ...bodyFlag,
    ...chargeFieldFlags,
    metadata: Flags.string({description: 'Free-form data: one JSON object, or KEY=VALUE (repeatable); replaces the stored metadata', multiple: true}),
    ...eventFlags,
  }
  static override get outputSchema() {
    return ChargeWritten
  }

  async run() {
    const f = this.flags
    const body = overlay(readBody(f.body), {...chargeFields(f), metadata: metadataFlag(f.metadata)})
    const event = eventOf(f)
    const r = await updateCharge(await this.store(), this.args, body, event)
    return await reportWrite((text) => this.log(text), r, await this.store())
  }
}
