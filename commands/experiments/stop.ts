import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {experimentOutput, parseExperimentId, stopExperiment} from '../../src/experiments/manage.js'
import {ExperimentResponse} from '../../src/schemas/experiments.js'

export default class ExperimentsStop extends BaseCommand<typeof ExperimentsStop> {
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override summary = 'Stop an experiment: no new visitors get an arm'
  static override description = `Stop an experiment: no new visitors get an arm

Locks made during the experiment keep their arm and price until "price --override".
Results stay available ("pricectl experiments results ID").`
  static override examples = ['<%= config.bin %> experiments stop 3']
  static override get outputSchema() {
    return ExperimentResponse
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const {changed, experiment} = stopExperiment(this.store, id)
    const message = changed ? `stopped experiment ${id} "${experiment.name}"` : `experiment ${id} is not running (${experiment.status})`
    this.log(message)
    return {experiment: experimentOutput(experiment), message, success: true}
  }
}
