import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {csv, table} from '../../src/cli/render.js'
import {gatewayEntryJson, type GatewayEntryJson, listGatewaySettings} from '../../src/pricing/gateways.js'
import {GatewaysListOutput} from '../../src/schemas/gateways.js'

export default class GatewaysList extends BaseCommand<typeof GatewaysList> {
  static override readsOnly = true
  static override summary = 'List the gateway price settings'
  static override description = `List the gateway price settings: accepted currencies, fallback currency and amount format of each gateway

"listed" is the published currency list of the gateway a table follows ("pricectl gateways show GATEWAY" prints it), "*" any currency. "source" says whether the settings were stored with "pricectl gateways set" or are the defaults.`
  static override examples = ['<%= config.bin %> gateways list', '<%= config.bin %> gateways list --json']
  static override flags = {
    ...listFlags,
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return GatewaysListOutput
  }

  async run() {
    const gateways = (await listGatewaySettings(await this.store())).map((g) => gatewayEntryJson(g))
    const stored = gateways.filter((g) => g.source === 'store').length
    const message = `${gateways.length} gateways (${stored} configured, ${gateways.length - stored} on defaults)`
    const result = {gateways, message, success: true as const}
    if (this.jsonEnabled()) return result
    const columns = [
      {header: 'gateway', value: (g: GatewayEntryJson) => g.gateway},
      {header: 'accepted currencies', value: (g: GatewayEntryJson) => g.accepted_currencies.join(',')},
      {header: 'fallback', value: (g: GatewayEntryJson) => g.fallback_currency},
      {header: 'amount format', value: (g: GatewayEntryJson) => g.amount_format},
      {header: 'source', value: (g: GatewayEntryJson) => g.source},
    ]
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(csv(gateways, columns))
    else {
      this.log(table(gateways, columns))
      this.note(message)
    }
    return result
  }
}
