import {Args, Flags} from '@oclif/core'
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {BaseCommand} from '../../src/cli/base.js'
import {InvalidInputError} from '../../src/errors.js'
import {intFlag, parseArm} from '../../src/cli/experiments/flags.js'
import {simulationReport} from '../../src/cli/experiments/render.js'
import {parseDemand, readDemandFile, type Policy, simulate, simulationArms} from '../../src/experiments/simulate.js'
import {SimulationResult} from '../../src/schemas/experiments.js'
import {isPostgresUrl, openStore, sqliteOf} from '../../src/store/db.js'

export default class ExperimentsSimulate extends BaseCommand<typeof ExperimentsSimulate> {
  static override args = {id: Args.string({description: 'Simulate the arms, product and countries of this experiment (of --db)'})}
  static override summary = 'Simulate visitors against a demand curve'
  static override description = `Simulate visitors against a demand curve: Thompson vs uniform vs the best fixed arm

Synthetic visitors go through the real price engine and a real store: each gets a lock
and an arm, buys with the demand curve's probability at the quoted USD price, and the
purchase is recorded as a subscription that the bandit learns from. Runs in a temporary
store: a fresh one, or a copy of --db (its catalog, FX rates and rounding rules apply; the
store itself is not changed).`
  static override examples = [
    '<%= config.bin %> experiments simulate --arm x0.8 --arm x1.3 --demand "7.99=0.10,10=0.10,12.99=0.058"',
    '<%= config.bin %> experiments simulate --base-px 20 --arm x0.75 --arm x1.25 --demand-file demand.csv --visitors 20000 --seed 7',
    '<%= config.bin %> experiments simulate 3 --db shop.db --demand-file demand.json --json',
  ]
  static override flags = {
    arm: Flags.string({description: 'An arm besides the baseline (repeatable): [ID=]x0.8 or [ID=]usd:12.99', multiple: true}),
    'base-px': Flags.string({default: '10', description: 'Monthly USD base price of the synthetic product (when no --product)'}),
    batch: Flags.string({default: '100', description: 'Visitors between posterior updates (how late the bandit sees conversions)'}),
    country: Flags.string({description: 'Countries the visitors come from, in turn (repeatable or comma-separated; default US)', multiple: true}),
    demand: Flags.string({description: 'Demand curve: USD price = conversion probability, e.g. "7.99=0.12,9.99=0.10,12.99=0.06" (linear between points)'}),
    'demand-file': Flags.string({description: 'Demand curve from a file: CSV "price,probability" lines or JSON {"9.99": 0.1} / [{"price","probability"}]'}),
    keep: Flags.boolean({description: 'Keep the temporary store and print its path'}),
    last: Flags.string({default: '1000', description: 'Window at the end for the share of visitors the best arm got'}),
    points: Flags.string({default: '50', description: 'Points of each cumulative series'}),
    policy: Flags.string({description: 'Policies to run (repeatable; default both)', multiple: true, options: ['thompson', 'uniform']}),
    product: Flags.string({char: 'p', description: 'Product of --db to price (default: a synthetic monthly product)'}),
    seed: Flags.string({default: '1', description: 'Seed of the visitors\' draws and of the bandit'}),
    visitors: Flags.string({default: '5000', description: 'Visitors per policy'}),
  }
  static override get outputSchema() {
    return SimulationResult
  }

  async run() {
    const {flags} = this
    const demand = flags.demand ? parseDemand(flags.demand) : flags['demand-file'] ? readDemandFile(flags['demand-file']) : undefined
    if (!demand) throw new InvalidInputError('missing demand curve: pass --demand "PRICE=PROBABILITY,..." or --demand-file FILE')
    if (flags.demand && flags['demand-file']) throw new InvalidInputError('give --demand or --demand-file, not both')
    const visitors = intFlag(flags.visitors, '--visitors', {max: 10_000_000, min: 1})!
    const seed = intFlag(flags.seed, '--seed', {max: 4_294_967_295})!
    const batch = intFlag(flags.batch, '--batch', {max: 1_000_000, min: 1})!
    const points = intFlag(flags.points, '--points', {max: 100_000, min: 2})!
    const last = intFlag(flags.last, '--last', {max: 10_000_000, min: 1})!
    const countries = flags.country?.flatMap((c) => c.split(',')).map((c) => c.trim().toUpperCase()).filter(Boolean)

    // A temporary store: a copy of the given one (never written to), else a fresh one.
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-simulate-'))
    const path = join(dir, 'simulation.db')
    try {
      // A store named by --db, --profile, their variables or the config file; never the default one.
      if (this.storeChoice.spec) {
        const source = this.storeLocation
        if (!isPostgresUrl(source) && !existsSync(source)) throw new InvalidInputError(`no store at ${source} to simulate against (omit --db for a fresh temporary store)`)
        const src = openStore(source, {migrate: false})
        try {
          sqliteOf(src, 'experiments simulate --db').copyTo(path)
        } finally {
          await src.close()
        }
      } else if (this.args.id) {
        throw new InvalidInputError('an experiment id needs the store it lives in: pass --db PATH')
      }
      const store = openStore(path)
      try {
        const setup = await simulationArms(store, {
          arms: flags.arm?.map((a, i) => parseArm(a, `--arm #${i + 1}`)),
          basePx: flags['base-px'],
          countries,
          experimentId: this.args.id,
          product: flags.product,
        })
        const result = await simulate(store, {
          ...setup,
          batch,
          demand,
          last,
          onProgress: (policy, done, total) => {
            if (done === total) this.note(`${policy}: ${total} visitors`)
          },
          points,
          policies: flags.policy?.length ? (flags.policy as Policy[]) : undefined,
          seed,
          storePath: flags.keep ? path : null,
          visitors,
        })
        this.log(simulationReport(result))
        if (flags.keep) this.note(`kept the simulation store: ${path}`)
        return result
      } finally {
        await store.close()
      }
    } finally {
      if (!flags.keep) rmSync(dir, {force: true, recursive: true})
    }
  }
}
