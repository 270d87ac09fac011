import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {describeRule} from '../../src/cli/gateway-rules.js'
import {overlay, readBody} from '../../src/cli/input.js'
import {InvalidInputError} from '../../src/errors.js'
import {configureGateway} from '../../src/pricing/gateway-settings.js'
import {acceptedText, checkRuleFlags, configureRuleFromFlags, gatewayEntryJson, type RuleFlags} from '../../src/pricing/gateways.js'
import {Currency, Gateway} from '../../src/schemas/common.js'
import {GatewaysSetOutput} from '../../src/schemas/gateways.js'
import {validate} from '../../src/schemas/validate.js'

export default class GatewaysSet extends BaseCommand<typeof GatewaysSet> {
  static override args = {
    gateway: Args.string({description: 'gateway_a, gateway_b, gateway_c or gateway_d', required: true}),
  }
  static override summary = "Configure a gateway's price objects"
  static override description = `Configure a gateway's price objects, or with --currency override its currency table for one currency

Without --currency: which currencies the gateway accepts, its fallback currency and its amount format. Settings not given keep their current value. A price in a currency the gateway does not accept is converted to the fallback currency by FX.
--accept listed (the default) is the published currency list of the gateway its table follows (Stripe, PayPal, Paddle; gateway_c's Chargebee table records none: any currency); --accept all (or any, or *) sends every currency as it is; a comma-separated list is your own.
"minor" amounts are integers in the gateway's units (999 for USD 9.99, 1200 for JPY 1200, 240000 for ISK 2400 at gateway_a); "decimal" amounts are numbers in currency units.

With --currency CODE: override the gateway's rule for that currency (docs/money.md, "Gateway tables"). --exponent is the decimal places of the gateway's amounts, --divisible-by the multiple its amounts must be of (in its units), --min and --max the smallest and largest charge as amounts of the currency (0.50, 999999.99) or none. Fields not given keep the rule in force; --default drops the override. See the rule with "pricectl gateways show GATEWAY CODE".`
  static override examples = [
    '<%= config.bin %> gateways set gateway_b --accept EUR,USD,GBP --fallback USD',
    '<%= config.bin %> gateways set gateway_b --accept all',
    '<%= config.bin %> gateways set gateway_b --accept listed',
    '<%= config.bin %> gateways set gateway_b --default',
    '<%= config.bin %> gateways set gateway_a --currency ISK --exponent 2 --divisible-by 100',
    '<%= config.bin %> gateways set gateway_d --currency USD --min 0.70 --max none',
    '<%= config.bin %> gateways set gateway_a --currency ISK --default',
  ]
  static override flags = {
    ...impactFlags,
    accept: Flags.string({description: "Accepted currencies: listed (the gateway's published list, the default), all (any currency; also any or *), or a comma-separated list (EUR,USD)"}),
    'amount-format': Flags.string({description: 'minor (integer gateway units) or decimal'}),
    body: Flags.string({description: 'JSON body {"accepted_currencies", "fallback_currency", "amount_format"} from FILE, or - for stdin'}),
    currency: Flags.string({description: "Override the gateway's currency table for this currency (with --exponent, --divisible-by, --min, --max or --default)"}),
    default: Flags.boolean({description: 'Drop the stored settings (with --currency: the override) so the defaults apply again'}),
    'divisible-by': Flags.string({description: 'With --currency: amounts must be whole multiples of N gateway units (100: two decimals that must be 00)'}),
    exponent: Flags.string({description: "With --currency: decimal places of the gateway's amounts (0 to 6)"}),
    fallback: Flags.string({description: 'Currency used when the gateway does not accept the local one (default USD)'}),
    max: Flags.string({description: 'With --currency: largest charge, an amount of the currency (999999.99), or none'}),
    min: Flags.string({description: 'With --currency: smallest charge, an amount of the currency (0.50), or none'}),
  }
  static override get outputSchema() {
    return GatewaysSetOutput
  }

  async run() {
    // Checked before the store is opened: a typo in the id must not create or touch a store.
    validate(Gateway, this.args.gateway, 'GATEWAY')
    const rule: RuleFlags = {divisible_by: this.flags['divisible-by'], exponent: this.flags.exponent, max: this.flags.max, min: this.flags.min}
    const ruleGiven = Object.entries(rule).filter(([, v]) => v !== undefined).map(([k]) => `--${k.replace('_', '-')}`)
    if (this.flags.currency !== undefined) return this.setRule(rule, ruleGiven)
    if (ruleGiven.length > 0) throw new InvalidInputError(`${ruleGiven.join(', ')} change one currency's rule: pass --currency CODE as well`)
    const changes = overlay(readBody(this.flags.body), {
      accepted_currencies: this.flags.accept,
      amount_format: this.flags['amount-format'],
      fallback_currency: this.flags.fallback,
    })
    if (this.flags.default && Object.keys(changes).length > 0) {
      throw new InvalidInputError(`--default drops every setting of ${this.args.gateway}; do not combine it with ${Object.keys(changes).join(', ')}`)
    }
    if (!this.flags.default && Object.keys(changes).length === 0) {
      throw new InvalidInputError(`nothing to set for ${this.args.gateway}: pass --accept, --fallback or --amount-format (or --default), or --currency CODE with the rule to override`)
    }
    const {dryRun, impact, result: {reset, settings}} = await this.priceImpact(async () => await configureGateway(await this.store(), this.args.gateway, this.flags.default ? 'default' : changes))
    const gateway = gatewayEntryJson(settings)
    const message = (dryRun ? 'dry run: ' : '') + (reset
      ? `${gateway.gateway} uses its defaults: accepts ${acceptedText(settings)}, falls back to ${gateway.fallback_currency}, ${gateway.amount_format} amounts`
      : `${gateway.gateway}: accepts ${acceptedText(settings)}, falls back to ${gateway.fallback_currency}, ${gateway.amount_format} amounts`)
    this.log(message)
    return {dry_run: dryRun, gateway, impact, message, success: true as const}
  }

  private async setRule(flags: RuleFlags, given: string[]) {
    const gateway = validate(Gateway, this.args.gateway, 'GATEWAY')
    const currency = validate(Currency, this.flags.currency!.trim().toUpperCase(), '--currency')
    const settings = ['accept', 'amount-format', 'body', 'fallback'].filter((f) => this.flags[f as keyof typeof this.flags] !== undefined)
    if (settings.length > 0) {
      throw new InvalidInputError(`--currency overrides one rule of the currency table; --${settings.join(', --')} change the gateway's settings: run them as two commands`)
    }
    if (this.flags.default && given.length > 0) throw new InvalidInputError(`--default drops the override of ${gateway} ${currency}; do not combine it with ${given.join(', ')}`)
    if (!this.flags.default && given.length === 0) {
      throw new InvalidInputError(`nothing to set for ${gateway} ${currency}: pass --exponent, --divisible-by, --min or --max (or --default)`)
    }
    // Syntax first, before the store is opened.
    if (!this.flags.default) checkRuleFlags(flags)
    const {dryRun, impact, result: {reset, rule}} = await this.priceImpact(async () => await configureRuleFromFlags(await this.store(), gateway, currency, this.flags.default ? 'default' : flags))
    const message = (dryRun ? 'dry run: ' : '') + (this.flags.default
      ? reset
        ? `${gateway} ${currency}: override dropped; ${describeRule(rule)}`
        : `${gateway} ${currency}: no override was stored (nothing changed); ${describeRule(rule)}`
      : `${gateway} ${currency}: ${describeRule(rule)}`)
    this.log(message)
    if (rule.listed === false) this.note(`warning: ${currency} is not in ${rule.model}'s published list of currencies: make sure your ${gateway} account can charge it`)
    return {dry_run: dryRun, impact, message, reset, rule, success: true as const}
  }
}
