import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {concludeExperiment} from '../../src/experiments/conclude.js'
import {parseExperimentId} from '../../src/experiments/manage.js'
import {describeChange} from '../../src/pricing/preview.js'
import {ExperimentConcluded} from '../../src/schemas/experiments.js'

/** More changed prices than this are confirmed on a terminal (without one, --max-changes limits them). */
const CONFIRM_ABOVE = 5

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
price until "price --override". An experiment is concluded once. On a terminal, more than
${CONFIRM_ABOVE} changed prices are shown and confirmed first (--yes skips); --max-changes N refuses
(exit 1, nothing written) a conclusion that changes more than N prices.`
  static override examples = [
    '<%= config.bin %> experiments conclude 3 2 --dry-run',
    '<%= config.bin %> experiments conclude 3 2',
    '<%= config.bin %> experiments conclude 3 premium --json',
    '<%= config.bin %> experiments conclude 3 2 --max-changes 50',
  ]
  static override flags = {
    'dry-run': Flags.boolean({description: 'Print the price impact and write nothing'}),
    'max-changes': Flags.integer({description: 'Refuse (exit 1, nothing written) when more than N prices would change', min: 0}),
    yes: Flags.boolean({char: 'y', description: `Do not ask on a terminal before changing more than ${CONFIRM_ABOVE} prices`}),
  }
  static override get outputSchema() {
    return ExperimentConcluded
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const {flags} = this
    const maxChanges = flags['max-changes']
    if (!flags['dry-run'] && !flags.yes && this.interactive) {
      // On a terminal, a change of more than a handful of prices is shown and confirmed first.
      const preview = concludeExperiment(this.store.db, id, this.args.arm, {dryRun: true})
      if (preview.changes.length > CONFIRM_ABOVE && (maxChanges === undefined || preview.changes.length <= maxChanges)) {
        for (const c of preview.changes) process.stderr.write(describeChange(c) + '\n')
        await confirmDestructive(false, `conclude experiment ${id} with arm ${this.args.arm}: ${preview.summary}`)
      }
    }
    const r = concludeExperiment(this.store.db, id, this.args.arm, {dryRun: flags['dry-run'], maxChanges})
    if (!this.jsonEnabled()) {
      for (const c of r.changes) this.log(describeChange(c))
      this.log(r.message)
    }
    return r
  }
}
