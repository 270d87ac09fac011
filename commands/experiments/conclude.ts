import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {concludeExperiment} from '../../src/experiments/conclude.js'
import {parseExperimentId, requireExperiment} from '../../src/experiments/manage.js'
import {describeChange} from '../../src/pricing/preview.js'
import {ExperimentConcluded} from '../../src/schemas/experiments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class ExperimentsConclude extends BaseCommand<typeof ExperimentsConclude> {
  static override args = {
    id: Args.string({description: 'Experiment id', required: true}),
    arm: Args.string({description: 'Arm whose prices become the products\' prices ("baseline" keeps them)', required: true}),
  }
  static override changesExisting = true
  static override summary = 'Stop an experiment and make an arm\'s prices the products\' prices'
  static override description = `Stop an experiment and make an arm's prices the products' prices

One transaction: the experiment stops and each of its products gets the arm's prices.
Without a country target, base_px becomes the arm's USD price and every country price
becomes the arm's price in that country; with a country target, those countries get the
arm's price as a country price and nothing else changes. "baseline" only stops it.
Prints the price impact (before -> after per product x country, lock-free previews);
--dry-run prints it and writes nothing. Locks made during the experiment keep their
price until "price --override". An experiment is concluded once. On a terminal, a change of
many prices is shown and confirmed first (--yes skips); without a terminal, a conclusion
that moves a country's price by more than --max-change-pct (25%) needs --yes (exit 2,
nothing written); --max-changes N refuses (exit 1, nothing written) a conclusion that
changes more than N prices (docs/change-control.md).`
  static override examples = [
    '<%= config.bin %> experiments conclude 3 2 --dry-run',
    '<%= config.bin %> experiments conclude 3 2',
    '<%= config.bin %> experiments conclude 3 premium --json',
    '<%= config.bin %> experiments conclude 3 2 --max-changes 50',
  ]
  static override flags = {...impactFlags}
  static override get outputSchema() {
    return ExperimentConcluded.extend(WithImpact)
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const e = await requireExperiment(await this.store(), id)
    const dry = Boolean(this.flags['dry-run'])
    // The shared wrapper measures the impact (products x countries x audiences x arms), asks on a
    // terminal above a handful of changes, enforces --max-changes and rolls back a dry run.
    const {dryRun, impact, result} = await this.priceImpact(async () => await concludeExperiment(await this.store(), id, this.args.arm, {wordAsDryRun: dry}), {
      experiments: [id],
      products: e.products.map((p) => p.api_id),
    })
    if (!this.jsonEnabled()) {
      for (const c of result.changes) this.log(describeChange(c))
      this.log(result.message)
    }
    return {...result, dry_run: dryRun, impact}
  }
}
