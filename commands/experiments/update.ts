import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {experimentBody, experimentFlags} from '../../src/cli/experiments/flags.js'
import {experimentOutput, parseExperimentId, updateExperiment} from '../../src/experiments/manage.js'
import {experimentDetail} from '../../src/cli/experiments/render.js'
import {ExperimentResponse} from '../../src/schemas/experiments.js'

export default class ExperimentsUpdate extends BaseCommand<typeof ExperimentsUpdate> {
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override changesExisting = true
  static override summary = 'Change an experiment'
  static override description = `Change an experiment

Name, allocation and seed can change at any time; arms, products, type, audience and
countries only while it is a draft. --arm replaces all arms.`
  static override examples = [
    '<%= config.bin %> experiments update 3 --arm x0.9 --arm x1.1',
    '<%= config.bin %> experiments update 3 --allocation uniform',
    '<%= config.bin %> experiments update 3 --country US,CA --audience students',
  ]
  static override flags = experimentFlags
  static override get outputSchema() {
    return ExperimentResponse
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const {changed, experiment} = await updateExperiment(await this.store(), id, experimentBody(this.flags))
    const message = changed ? `updated experiment ${id}` : `experiment ${id} unchanged`
    this.log(`${message}\n${experimentDetail(experiment)}`)
    return {experiment: experimentOutput(experiment), message, success: true}
  }
}
