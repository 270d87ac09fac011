import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {assertDeletable, deleteExperiment, parseExperimentId, requireExperiment} from '../../src/experiments/manage.js'
import {ExperimentDeleted} from '../../src/schemas/experiments.js'

export default class ExperimentsDelete extends BaseCommand<typeof ExperimentsDelete> {
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override changesExisting = true
  static override summary = 'Delete a draft experiment'
  static override description = `Delete a draft experiment (with its arms)

Running and stopped experiments are kept: they have exposures, locks that hold their arms
and results. Stop a running one with "pricectl experiments stop ID".`
  static override examples = ['<%= config.bin %> experiments delete 3 --yes']
  static override flags = {
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return ExperimentDeleted
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const e = await requireExperiment(await this.store(), id)
    assertDeletable(e)
    await confirmDestructive(this.flags.yes, `delete draft experiment ${id} "${e.name}"`)
    await deleteExperiment(await this.store(), id)
    const message = `deleted experiment ${id} "${e.name}"`
    this.log(message)
    return {id, message, success: true as const}
  }
}
