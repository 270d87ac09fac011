import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {requireFields} from '../../src/cli/input.js'
import {experimentBody, experimentFlags} from '../../src/cli/experiments/flags.js'
import {createExperiment, experimentOutput} from '../../src/experiments/manage.js'
import {experimentDetail} from '../../src/cli/experiments/render.js'
import {ExperimentResponse} from '../../src/schemas/experiments.js'

export default class ExperimentsCreate extends BaseCommand<typeof ExperimentsCreate> {
  static override summary = 'Create a price or packaging experiment'
  static override description = `Create a price or packaging experiment (a draft until started)

A baseline arm (the control price, or every product for packaging) is always added.
Arms outside a product's [min_px, max_px] are refused.`
  static override examples = [
    '<%= config.bin %> experiments create --name "Pro price" --product pro_monthly --arm x0.8 --arm x1.2',
    '<%= config.bin %> experiments create --name "US A/B" -p pro_monthly --arm usd:12.99 --allocation uniform --country US --start',
    '<%= config.bin %> experiments create --name "Tiers" --type packaging --arm products:basic,pro --arm products:basic,pro,team',
    '<%= config.bin %> experiments create --body experiment.json --json',
  ]
  static override flags = {
    ...experimentFlags,
    start: Flags.boolean({description: 'Start it right away (created and started in one step: a refused start leaves no draft)'}),
  }
  static override get outputSchema() {
    return ExperimentResponse
  }

  async run() {
    const body = await requireFields(experimentBody(this.flags), [{field: 'name', flag: '--name', message: 'Name of the experiment'}])
    const e = await createExperiment(await this.store(), body, {start: this.flags.start})
    const message = `created experiment ${e.id}${this.flags.start ? ' and started it' : ' (a draft: start it with "pricectl experiments start ' + e.id + '")'}`
    this.log(`${message}\n${experimentDetail(e)}`)
    return {experiment: experimentOutput(e), message, success: true}
  }
}
