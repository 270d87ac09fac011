import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {ruleRecord, tableListing} from '../../src/cli/gateway-rules.js'
import {GATEWAY_TABLES} from '../../src/money/gateway-tables.js'
import {showRule, showTable} from '../../src/pricing/gateways.js'
import {Currency, Gateway} from '../../src/schemas/common.js'
import {GatewaysShowOutput} from '../../src/schemas/gateways.js'
import {validate} from '../../src/schemas/validate.js'

export default class GatewaysShow extends BaseCommand<typeof GatewaysShow> {
  static override args = {
    gateway: Args.string({description: 'gateway_a, gateway_b, gateway_c or gateway_d', required: true}),
    currency: Args.string({description: 'A currency code (ISO 4217); without it, the whole table'}),
  }
  static override readsOnly = true
  static override summary = "Show a gateway's currency rule and where it comes from"
  static override description = `Show a gateway's currency rule and where it comes from, or its whole currency table

With a currency: the exponent of the gateway's amounts, the multiple they must be of, the smallest and largest charge (in the currency and in gateway units), the note, and the source: a stored override ("pricectl gateways set GATEWAY --currency CODE"), the table's entry for the currency, or the table's default. The table's published sources follow.
Without: the table's default and every entry and stored override. docs/money.md says which gateway each table follows.`
  static override examples = ['<%= config.bin %> gateways show gateway_a ISK', '<%= config.bin %> gateways show gateway_b', '<%= config.bin %> gateways show gateway_a KWD --json']
  static override get outputSchema() {
    return GatewaysShowOutput
  }

  async run() {
    // Checked before the store is opened: a typo must not create or touch a store.
    const gateway = validate(Gateway, this.args.gateway, 'GATEWAY')
    const currency = this.args.currency === undefined ? undefined : validate(Currency, this.args.currency.trim().toUpperCase(), 'CURRENCY')
    const sources = GATEWAY_TABLES[gateway].sources
    if (currency !== undefined) {
      const rule = await showRule(await this.store(), gateway, currency)
      const message = `${gateway} ${currency}: exponent ${rule.exponent}, divisible by ${rule.divisible_by}, from the ${rule.source === 'store' ? 'stored override' : rule.source === 'table' ? `${rule.model} table entry` : `${rule.model} table default`}`
      if (!this.jsonEnabled()) {
        this.log(ruleRecord(rule, sources))
        if (rule.listed === false) this.note(`warning: ${currency} is not in ${rule.model}'s published list of currencies`)
        if (!rule.accepted) this.note(`${gateway} is not sent ${currency}: prices in ${currency} go to it in its fallback currency (see "pricectl gateways list"; "pricectl gateways set ${gateway} --accept" changes it)`)
      }
      return {message, rule, success: true as const}
    }
    const table = await showTable(await this.store(), gateway)
    const message = `${gateway} follows ${table.model}: ${table.entries.length} currencies listed (${table.overrides} stored ${table.overrides === 1 ? 'override' : 'overrides'}), the default for the rest`
    if (!this.jsonEnabled()) {
      this.log(tableListing(table))
      this.log(`Sources:\n${sources.map((s) => `- ${s}`).join('\n')}`)
      this.note(message)
    }
    return {message, success: true as const, table}
  }
}
