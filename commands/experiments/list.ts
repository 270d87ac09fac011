import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {experimentOutput, experimentsList} from '../../src/experiments/manage.js'
import {experimentsCsv, experimentsTable} from '../../src/cli/experiments/render.js'
import {ExperimentList, STATUSES} from '../../src/schemas/experiments.js'

export default class ExperimentsList extends BaseCommand<typeof ExperimentsList> {
  static override readsOnly = true
  static override summary = 'List experiments'
  static override description = 'List experiments (by id)'
  static override examples = ['<%= config.bin %> experiments list', '<%= config.bin %> experiments list --status running --output csv']
  static override flags = {
    ...listFlags,
    output: Flags.string({default: 'table', description: 'Output format (--json prints the JSON response)', options: ['table', 'csv', 'json']}),
    status: Flags.string({description: 'Only experiments in this status', options: [...STATUSES]}),
  }
  static override get outputSchema() {
    return ExperimentList
  }

  async run() {
    const list = (await experimentsList(await this.store(), this.flags.status as (typeof STATUSES)[number] | undefined)).map((e) => experimentOutput(e))
    const result = {experiments: list, message: `${list.length} experiment${list.length === 1 ? '' : 's'}`, success: true as const}
    if (this.jsonEnabled()) return result
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(experimentsCsv(list))
    else if (list.length === 0) this.log('no experiments yet: create one with "pricectl experiments create"')
    else this.log(experimentsTable(list))
    return result
  }
}
