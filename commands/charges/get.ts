import {BaseCommand} from '../../src/cli/base.js'
import {getCharge} from '../../src/revenue/charges.js'
import {keyArgs, recordView} from '../../src/cli/revenue/flags.js'
import {ChargeGot} from '../../src/schemas/revenue.js'

export default class ChargesGet extends BaseCommand<typeof ChargesGet> {
  static override args = keyArgs
  static override summary = 'Show a charge'
  static override description = 'Show a charge: the stored charge record'
  static override examples = ['<%= config.bin %> charges get u1 gateway_a ch_1 --json']
  static override get outputSchema() {
    return ChargeGot
  }

  async run() {
    const charge = getCharge(this.store, this.args)
    this.log(recordView(charge))
    return {charge, success: true as const}
  }
}
