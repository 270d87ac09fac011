import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {overlay, readBody, requireFields} from '../../src/cli/input.js'
import {InvalidInputError} from '../../src/errors.js'
import {resetRule, ruleFor, setRule} from '../../src/pricing/rounding.js'
import {RoundingCurrencyInput, RoundingSetInput, RoundingSetOutput} from '../../src/schemas/rounding.js'
import {validate} from '../../src/schemas/validate.js'

export default class RoundingSet extends BaseCommand<typeof RoundingSet> {
  static override args = {
    currency: Args.string({description: 'ISO 4217 code, e.g. EUR'}),
    rule: Args.string({description: 'The rule, quoted, e.g. "0-10: end .99 up; 10+: end 9.99 nearest"'}),
  }
  static override summary = 'Set the rounding rule of a currency'
  static override description = `Set the rounding rule of a currency, or drop back to the built-in default with --default

A rule is a list of ranges separated by ";", each "BOUNDS: ACTION DIRECTION".
Bounds (currency units): A-B (from A, below B), A+ (A and above),
<B (from the previous bound up to B), * (the rest).
Actions: end E[,E...] (endings as written: .99 | .49,.99 | 9.99 | 9 = whole
amounts ending in 9), multiple N (e.g. 10 or 0.05), sigfig N, keep.
Directions: up, down, nearest (a tie goes up); keep takes none.
Ranges start at 0, follow each other without gaps, and the last is open.
A price moves, in its range's direction, to the nearest price the rule
allows; a positive price never becomes 0. Country prices are never rounded.
Syntax and defaults: docs/rounding-display-gateways.md`
  static override examples = [
    `<%= config.bin %> rounding set EUR '0-10: end .49,.99 nearest; 10-100: end .99 up; 100+: end 9 nearest'`,
    `<%= config.bin %> rounding set JPY '<1000: multiple 10 up; <10000: end 80 nearest; *: sigfig 2 nearest'`,
    '<%= config.bin %> rounding set JPY --default',
  ]
  static override flags = {
    ...impactFlags,
    body: Flags.string({description: 'JSON body {"currency", "rule"} from FILE, or - for stdin'}),
    default: Flags.boolean({description: 'Drop the stored rule: the currency uses the built-in default again'}),
  }
  static override get outputSchema() {
    return RoundingSetOutput
  }

  async run() {
    if (this.flags.default) {
      if (this.args.rule !== undefined) throw new InvalidInputError(`give either RULE or --default, not both (got RULE ${JSON.stringify(this.args.rule)})`)
      const input = await requireFields(overlay(readBody(this.flags.body), {currency: this.args.currency}), [
        {field: 'currency', flag: 'CURRENCY', message: 'Currency (ISO 4217)'},
      ])
      const {currency} = validate(RoundingCurrencyInput, input, 'currency')
      const {dryRun, impact, result: dropped} = await this.priceImpact(async () => await resetRule(await this.store(), currency))
      const {source, text} = await ruleFor(await this.store(), currency)
      const message = (dryRun ? 'dry run: ' : '') + (dropped ? `${currency} uses the default rule again: ${text}` : `${currency} had no stored rule; it uses the default: ${text}`)
      this.log(message)
      return {currency, dry_run: dryRun, impact, message, rule: text, source, success: true as const}
    }
    const input = await requireFields(overlay(readBody(this.flags.body), {currency: this.args.currency, rule: this.args.rule}), [
      {field: 'currency', flag: 'CURRENCY', message: 'Currency (ISO 4217)'},
      {field: 'rule', flag: 'RULE (or --default)', message: 'Rounding rule, e.g. 0-10: end .99 up; 10+: end 9.99 nearest'},
    ])
    const valid = validate(RoundingSetInput, input, 'rounding rule')
    const {dryRun, impact, result: rule} = await this.priceImpact(async () => await setRule(await this.store(), valid.currency, valid.rule))
    const message = `${dryRun ? 'dry run: ' : ''}${valid.currency} rounding rule set: ${rule.text}`
    this.log(message)
    return {currency: valid.currency, dry_run: dryRun, impact, message, rule: rule.text, source: 'store' as const, success: true as const}
  }
}
