import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {experimentOutput, parseExperimentId, requireExperiment} from '../../src/experiments/manage.js'
import {experimentDetail} from '../../src/cli/experiments/render.js'
import {ExperimentResponse} from '../../src/schemas/experiments.js'

export default class ExperimentsShow extends BaseCommand<typeof ExperimentsShow> {
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override readsOnly = true
  static override summary = 'Show an experiment'
  static override description = 'Show an experiment: target, arms and the USD price each arm sets'
  static override examples = ['<%= config.bin %> experiments show 3', '<%= config.bin %> experiments show 3 --json']
  static override get outputSchema() {
    return ExperimentResponse
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const e = await requireExperiment(await this.store(), id)
    this.log(experimentDetail(e))
    return {experiment: experimentOutput(e), message: `experiment ${id}`, success: true}
  }
}
