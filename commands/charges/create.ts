import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {overlay, readBody, requireFields} from '../../src/cli/input.js'
import {resolveZone} from '../../src/dates.js'
import {createCharge} from '../../src/revenue/charges.js'
import {bodyFlag, chargeFieldFlags, chargeFields, eventFlags, eventOf, metadataFlag, momentFlag, numberish, productFlag, reportWrite} from '../../src/cli/revenue/flags.js'
import {ChargeWritten} from '../../src/schemas/revenue.js'

export default class ChargesCreate extends BaseCommand<typeof ChargesCreate> {
  static override summary = 'Record a charge (an event)'
  static override description =
    "Record a charge (the spec's Create charge). It is an event: an existing charge with an older latest event is replaced (this is how a refund arrives: the charge again with amount_refunded), a newer one makes this a stale event that changes nothing"
  static override examples = [
    '<%= config.bin %> charges create --user-id u1 --origin gateway_a --origin-id ch_1 --product lifetime --amount 49 --currency EUR --created 1767225600 --status succeeded',
    '<%= config.bin %> charges create --body charge.json --metadata invoice=in_1 --metadata channel=web',
    '<%= config.bin %> charges create --user-id u2 --origin gateway_a --origin-id ch_2 --product lifetime --amount 11.90 --tax 1.90 --currency EUR --country DE --created 2026-01-05 --status succeeded',
  ]
  static override flags = {
    ...bodyFlag,
    ...chargeFieldFlags,
    'amount-refunded': Flags.string({description: 'Amount refunded, in currency units (default 0)'}),
    country: Flags.string({description: 'Two-letter country code of the user'}),
    metadata: Flags.string({description: 'Free-form data: one JSON object, or KEY=VALUE (repeatable)', multiple: true}),
    origin: Flags.string({description: 'Gateway that handled it: gateway_a, gateway_b or gateway_c'}),
    'origin-id': Flags.string({description: 'Unique charge id'}),
    product: Flags.string({description: 'Product api_id, or an integration object as JSON'}),
    'user-id': Flags.string({description: 'The user id'}),
    ...eventFlags,
  }
  static override get outputSchema() {
    return ChargeWritten
  }

  async run() {
    const f = this.flags
    const body = overlay(readBody(f.body), {
      ...chargeFields(f),
      amount_refunded: numberish(f['amount-refunded']),
      country: f.country,
      metadata: metadataFlag(f.metadata),
      origin: f.origin,
      origin_id: f['origin-id'],
      product: productFlag(f.product),
      user_id: f['user-id'],
    })
    const input = await requireFields(body, [
      {field: 'user_id', flag: '--user-id', message: 'User id'},
      {field: 'origin', flag: '--origin', message: 'Origin (gateway_a, gateway_b, gateway_c)'},
      {field: 'origin_id', flag: '--origin-id', message: 'Charge id at the origin'},
      {field: 'product', flag: '--product', message: 'Product api_id', parse: productFlag},
      {field: 'amount', flag: '--amount', message: 'Amount', parse: numberish},
      {field: 'currency', flag: '--currency', message: 'Currency (ISO 4217)'},
      {field: 'created', flag: '--created', message: 'Created (UNIX seconds, ISO date or date-time)', parse: (s) => momentFlag(s, '--created', resolveZone(f.tz))},
      {field: 'status', flag: '--status', message: 'Status (pending, succeeded, failed)'},
    ])
    const event = eventOf(f)
    const r = await createCharge(await this.store(), input, event)
    return await reportWrite((text) => this.log(text), r, await this.store())
  }
}
