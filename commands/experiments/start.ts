import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {experimentOutput, parseExperimentId, startExperiment} from '../../src/experiments/manage.js'
import {ExperimentResponse} from '../../src/schemas/experiments.js'

export default class ExperimentsStart extends BaseCommand<typeof ExperimentsStart> {
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override summary = 'Start an experiment'
  static override description = 'Start an experiment: new locks of users it targets get an arm (a stopped experiment resumes)'
  static override examples = ['<%= config.bin %> experiments start 3']
  static override get outputSchema() {
    return ExperimentResponse
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const {changed, experiment} = startExperiment(this.store, id)
    const message = changed ? `started experiment ${id} "${experiment.name}"` : `experiment ${id} is already running`
    this.log(message)
    return {experiment: experimentOutput(experiment), message, success: true}
  }
}
