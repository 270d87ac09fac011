import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {experimentOutput, parseExperimentId, startExperiment} from '../../src/experiments/manage.js'
import {ExperimentResponse} from '../../src/schemas/experiments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class ExperimentsStart extends BaseCommand<typeof ExperimentsStart> {
  static override flags = {...impactFlags}
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override changesExisting = true
  static override summary = 'Start an experiment'
  static override description = 'Start an experiment: new locks of users it targets get an arm (a stopped experiment resumes)'
  static override examples = ['<%= config.bin %> experiments start 3']
  static override get outputSchema() {
    return ExperimentResponse.extend(WithImpact)
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const {dryRun, impact, result: {changed, experiment}} = await this.priceImpact(async () => await startExperiment(await this.store(), id), {experiments: [id]})
    const message = changed ? `${dryRun ? 'dry run: would start' : 'started'} experiment ${id} "${experiment.name}"` : `experiment ${id} is already running`
    this.log(message)
    return {dry_run: dryRun, experiment: experimentOutput(experiment), impact, message, success: true}
  }
}
