import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {concludeExperiment} from '../../src/experiments/conclude.js'
import {parseExperimentId} from '../../src/experiments/manage.js'
import {describeChange} from '../../src/pricing/preview.js'
import {ExperimentConcluded} from '../../src/schemas/experiments.js'

export default class ExperimentsConclude extends BaseCommand<typeof ExperimentsConclude> {
  static override args = {
    id: Args.string({description: 'Experiment id', required: true}),
    arm: Args.string({description: 'Arm whose prices become the products\' prices ("baseline" keeps them)', required: true}),
  }
  static override summary = 'Stop an experiment and make an arm\'s prices the products\' prices'
  static override description = `Stop an experiment and make an arm's prices the products' prices

One transaction: the experiment stops and each of its products gets the arm's prices.
Without a country target, base_px becomes the arm's USD price and every country price
becomes the arm's price in that country; with a country target, those countries get the
arm's price as a country price and nothing else changes. "baseline" only stops it.
Prints the price impact (before -> after per product x country, lock-free previews);
--dry-run prints it and writes nothing. Locks made during the experiment keep their
price until "price --override". An experiment is concluded once.`
  static override examples = [
    '<%= config.bin %> experiments conclude 3 2 --dry-run',
    '<%= config.bin %> experiments conclude 3 2',
    '<%= config.bin %> experiments conclude 3 premium --json',
  ]
  static override flags = {
    'dry-run': Flags.boolean({description: 'Print the price impact and write nothing'}),
  }
  static override get outputSchema() {
    return ExperimentConcluded
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const r = concludeExperiment(this.store.db, id, this.args.arm, {dryRun: this.flags['dry-run']})
    if (!this.jsonEnabled()) {
      for (const c of r.changes) this.log(describeChange(c))
      this.log(r.message)
    }
    return r
  }
}
