import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {csv, table} from '../../src/cli/render.js'
import {listRules, type RuleListEntry} from '../../src/pricing/rounding.js'
import {RoundingListOutput} from '../../src/schemas/rounding.js'

export default class RoundingList extends BaseCommand<typeof RoundingList> {
  static override readsOnly = true
  static override summary = 'List the rounding rules'
  static override description = `List the rounding rules: every stored rule, then the built-in default for each number of minor digits

A currency without a stored rule uses the default of its digit count (currency "*"): 0 for JPY, KRW, CLP; 2 for USD, EUR; 3 for KWD, BHD.`
  static override examples = ['<%= config.bin %> rounding list', '<%= config.bin %> rounding list --output csv']
  static override flags = {
    ...listFlags,
    output: Flags.string({default: 'table', description: 'Output format', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return RoundingListOutput
  }

  async run() {
    const rules = await listRules(await this.store())
    const stored = rules.filter((r) => r.source === 'store').length
    const message = `${stored} stored ${stored === 1 ? 'rule' : 'rules'}; other currencies use the default for their minor digits`
    const result = {message, rules, success: true as const}
    if (this.jsonEnabled()) return result
    const columns = [
      {header: 'currency', value: (r: RuleListEntry) => r.currency},
      {header: 'digits', value: (r: RuleListEntry) => r.digits},
      {header: 'source', value: (r: RuleListEntry) => r.source},
      {header: 'rule', value: (r: RuleListEntry) => r.rule},
    ]
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(csv(rules, columns))
    else {
      this.log(table(rules, columns))
      this.note(message)
    }
    return result
  }
}
