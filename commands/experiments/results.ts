import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {intFlag} from '../../src/cli/experiments/flags.js'
import {parseExperimentId} from '../../src/experiments/manage.js'
import {resultsCsv, resultsReport} from '../../src/cli/experiments/render.js'
import {DEFAULT_DRAWS, experimentResults, MIN_CONVERSIONS_PER_ARM, MIN_VISITORS_PER_ARM} from '../../src/experiments/results.js'
import {ExperimentResults} from '../../src/schemas/experiments.js'

export default class ExperimentsResults extends BaseCommand<typeof ExperimentsResults> {
  static override args = {id: Args.string({description: 'Experiment id', required: true})}
  static override readsOnly = true
  static override summary = 'Results of an experiment, per arm'
  static override description = `Results of an experiment, per arm

Visitors (locks that got the arm), conversions (their subscriptions and charges of the
experiment's products made after exposure), conversion rate with its 95% credible
interval, revenue (USD; subscriptions per month), revenue per visitor with its interval,
and the probability of being best (Monte Carlo over the posteriors, seeded). Each arm is
labelled with the price it sets (multiplier arms: an example price in the store's default
country). No arm is "best" before a conversion; below ${MIN_VISITORS_PER_ARM} visitors and ${MIN_CONVERSIONS_PER_ARM} conversions per
arm a warning goes to stderr (and "sample.warning" in --json).`
  static override examples = ['<%= config.bin %> experiments results 3', '<%= config.bin %> experiments results 3 --json', '<%= config.bin %> experiments results 3 --output csv']
  static override flags = {
    draws: Flags.string({description: `Monte Carlo draws for the probability of being best (default ${DEFAULT_DRAWS})`}),
    output: Flags.string({default: 'table', description: 'table (with charts) or csv (one row per arm)', options: ['table', 'csv']}),
    seed: Flags.string({description: 'Seed of the Monte Carlo draws (default: the experiment\'s seed)'}),
  }
  static override get outputSchema() {
    return ExperimentResults
  }

  async run() {
    const id = parseExperimentId(this.args.id)
    const r = await experimentResults(await this.store(), id, {
      draws: intFlag(this.flags.draws, '--draws', {max: 10_000_000, min: 100}),
      seed: intFlag(this.flags.seed, '--seed', {max: 4_294_967_295}),
    })
    if (r.sample.warning) process.stderr.write(`Warning: experiment ${id}: ${r.sample.warning}\n`)
    if (!this.jsonEnabled()) {
      if (this.flags.output === 'csv') process.stdout.write(resultsCsv(r))
      else this.log(resultsReport(r))
    }
    return r
  }
}
