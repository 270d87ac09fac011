import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {csv, table} from '../../src/cli/render.js'
import {minorDigits} from '../../src/currency.js'
import {type RuleTrial, tryRule} from '../../src/pricing/rounding.js'
import {RoundingTestInput, RoundingTestOutput} from '../../src/schemas/rounding.js'
import {validate} from '../../src/schemas/validate.js'

export default class RoundingTest extends BaseCommand<typeof RoundingTest> {
  static override args = {
    currency: Args.string({description: 'ISO 4217 code, e.g. EUR', required: true}),
    amount: Args.string({description: 'Amounts in currency units, e.g. 9.37 12.10 (one or more)', required: true}),
  }
  static override readsOnly = true
  static override summary = 'Show what a rounding rule does to amounts'
  static override description = 'Show what a rounding rule does to amounts: the rounded amount and the range and action that applied (nothing is saved)'
  static override examples = [
    '<%= config.bin %> rounding test EUR 0.20 9.37 12.10 1234.56',
    `<%= config.bin %> rounding test JPY 1234 --rule '0+: multiple 100 up'`,
  ]
  static override flags = {
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
    rule: Flags.string({description: 'Try this rule instead of the stored or default one (not saved)'}),
  }
  static override get outputSchema() {
    return RoundingTestOutput
  }
  static override strict = false
  static override usage = 'rounding test CURRENCY AMOUNT... [--rule TEXT] [--output table|csv|json]'

  async run() {
    // Variadic AMOUNT...: every positional after CURRENCY.
    const {argv} = await this.parse({args: RoundingTest.args, baseFlags: BaseCommand.baseFlags, enableJsonFlag: true, flags: RoundingTest.flags, strict: false})
    const [currency, ...amounts] = argv as string[]
    const input = validate(RoundingTestInput, {amounts, currency}, 'rounding test')
    const trial = await tryRule(await this.store(), input.currency, input.amounts, this.flags.rule)
    const message = `${trial.currency}: ${trial.rule} (${trial.source === 'flag' ? 'from --rule, not saved' : trial.source === 'store' ? 'stored rule' : 'built-in default'})`
    const result = {...trial, message, success: true as const}
    if (this.jsonEnabled()) return result
    // Tables show every minor digit (9.90, not 9.9); JSON carries plain numbers.
    const digits = minorDigits(trial.currency)
    const columns = [
      {header: 'amount', value: (r: RuleTrial['results'][number]) => r.amount.toFixed(digits)},
      {header: 'rounded', value: (r: RuleTrial['results'][number]) => r.rounded.toFixed(digits)},
      {header: 'range', value: (r: RuleTrial['results'][number]) => r.range},
      {header: 'action', value: (r: RuleTrial['results'][number]) => r.action},
    ]
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(csv(trial.results, columns))
    else {
      this.log(table(trial.results, columns))
      this.note(message)
    }
    return result
  }
}
