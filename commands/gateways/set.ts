import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {overlay, readBody} from '../../src/cli/input.js'
import {InvalidInputError} from '../../src/errors.js'
import {configureGateway, gatewayEntryJson} from '../../src/pricing/gateways.js'
import {Gateway} from '../../src/schemas/common.js'
import {GatewaysSetOutput} from '../../src/schemas/gateways.js'
import {validate} from '../../src/schemas/validate.js'

export default class GatewaysSet extends BaseCommand<typeof GatewaysSet> {
  static override args = {
    gateway: Args.string({description: 'gateway_a, gateway_b, gateway_c or gateway_d', required: true}),
  }
  static override summary = "Configure a gateway's price objects"
  static override description = `Configure a gateway's price objects: which currencies it accepts, its fallback currency and its amount format

Settings not given keep their current value. A price in a currency the gateway does not accept is converted to the fallback currency by FX.
"minor" amounts are integers in the currency's smallest unit (999 for USD 9.99, 1200 for JPY 1200, 4500 for KWD 4.500); "decimal" amounts are numbers in currency units.`
  static override examples = [
    '<%= config.bin %> gateways set gateway_b --accept EUR,USD,GBP --fallback USD',
    `<%= config.bin %> gateways set gateway_c --accept '*' --amount-format minor`,
    '<%= config.bin %> gateways set gateway_b --default',
  ]
  static override flags = {
    accept: Flags.string({description: 'Accepted currencies: a comma-separated list (EUR,USD) or * for any'}),
    'amount-format': Flags.string({description: 'minor (integer smallest unit) or decimal'}),
    body: Flags.string({description: 'JSON body {"accepted_currencies", "fallback_currency", "amount_format"} from FILE, or - for stdin'}),
    default: Flags.boolean({description: 'Drop the stored settings: the gateway uses its defaults again'}),
    fallback: Flags.string({description: 'Currency used when the gateway does not accept the local one (default USD)'}),
  }
  static override get outputSchema() {
    return GatewaysSetOutput
  }

  async run() {
    // Checked before the store is opened: a typo in the id must not create or touch a store.
    validate(Gateway, this.args.gateway, 'GATEWAY')
    const changes = overlay(readBody(this.flags.body), {
      accepted_currencies: this.flags.accept,
      amount_format: this.flags['amount-format'],
      fallback_currency: this.flags.fallback,
    })
    if (this.flags.default && Object.keys(changes).length > 0) {
      throw new InvalidInputError(`--default drops every setting of ${this.args.gateway}; do not combine it with ${Object.keys(changes).join(', ')}`)
    }
    if (!this.flags.default && Object.keys(changes).length === 0) {
      throw new InvalidInputError(`nothing to set for ${this.args.gateway}: pass --accept, --fallback or --amount-format (or --default)`)
    }
    const {reset, settings} = configureGateway(this.store.db, this.args.gateway, this.flags.default ? 'default' : changes)
    const gateway = gatewayEntryJson(settings)
    const message = reset
      ? `${gateway.gateway} uses its defaults: accepts ${gateway.accepted_currencies.join(',')}, falls back to ${gateway.fallback_currency}, ${gateway.amount_format} amounts`
      : `${gateway.gateway}: accepts ${gateway.accepted_currencies.join(',')}, falls back to ${gateway.fallback_currency}, ${gateway.amount_format} amounts`
    this.log(message)
    return {gateway, message, success: true as const}
  }
}
