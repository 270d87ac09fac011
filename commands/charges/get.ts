import {BaseCommand} from '../../src/cli/base.js'
import {getCharge} from '../../src/revenue/charges.js'
import {getArgs, productNames, recordView} from '../../src/cli/revenue/flags.js'
import {resolveKey} from '../../src/revenue/lookup.js'
import {ChargeGot} from '../../src/schemas/revenue.js'

export default class ChargesGet extends BaseCommand<typeof ChargesGet> {
  static override args = getArgs
  static override readsOnly = true
  static override summary = 'Show a charge'
  static override description =
    "Show a charge: the stored charge record. Name it by USER_ID ORIGIN ORIGIN_ID, or by the gateway's id alone when no other user or gateway has a charge with it (else exit 2 with the matches). People see the product's api_id and dates; --json keeps the spec's fields."
  static override examples = ['<%= config.bin %> charges get u1 gateway_a ch_1 --json', '<%= config.bin %> charges get ch_1']
  static override get outputSchema() {
    return ChargeGot
  }

  async run() {
    const charge = await getCharge(await this.store(), await resolveKey(await this.store(), 'charges', this.args))
    this.log(recordView(charge, await productNames(await this.store(), [charge])))
    return {charge, success: true as const}
  }
}
