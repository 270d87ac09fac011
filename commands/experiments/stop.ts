import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {experimentOutput, parseExperimentId, stopExperiment} from '../../src/experiments/manage.js'
import {ExperimentResponse} from '../../src/schemas/experiments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class ExperimentsStop extends BaseCommand<typeof ExperimentsStop> {
  static override flags = {...impactFlags}
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override changesExisting = true
  static override summary = 'Stop an experiment: no new visitors get an arm'
  static override description = `Stop an experiment: no new visitors get an arm

Locks made during the experiment keep their arm and price until "price --override".
Results stay available ("pricectl experiments results ID").`
  static override examples = ['<%= config.bin %> experiments stop 3']
  static override get outputSchema() {
    return ExperimentResponse.extend(WithImpact)
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const {dryRun, impact, result: {changed, experiment}} = await this.priceImpact(async () => await stopExperiment(await this.store(), id), {experiments: [id]})
    const message = changed ? `${dryRun ? 'dry run: would stop' : 'stopped'} experiment ${id} "${experiment.name}"` : `experiment ${id} is not running (${experiment.status})`
    this.log(message)
    return {dry_run: dryRun, experiment: experimentOutput(experiment), impact, message, success: true}
  }
}
