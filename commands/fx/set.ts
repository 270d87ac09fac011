import {Args, Flags} from '@oclif/core'

import {numberish} from '../../src/catalog/shortforms.js'
import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {overlay, readBody, requireFields} from '../../src/cli/input.js'
import {isoDay, nowSeconds} from '../../src/clock.js'
import {InvalidInputError} from '../../src/errors.js'
import {setOperatorRate} from '../../src/fx/repository.js'
import {FxSetInput, FxSetOutput} from '../../src/schemas/fx.js'
import {validate} from '../../src/schemas/validate.js'

export default class FxSet extends BaseCommand<typeof FxSet> {
  static override args = {
    currency: Args.string({description: 'ISO 4217 code, e.g. EUR'}),
    rate: Args.string({description: 'Units of CURRENCY per 1 USD, e.g. 0.92'}),
  }
  static override summary = 'Set the rate of a currency for a day'
  static override description = `Set the rate of a currency (units per 1 USD) for a day, replacing the one on file for that day

Your rates outrank the bundled snapshot whatever their dates. A rate dated after today is
kept but not used before its date (a warning says so).`
  static override examples = ['<%= config.bin %> fx set EUR 0.92', '<%= config.bin %> fx set JPY 151.3 --date 2026-04-01']
  static override flags = {
    ...impactFlags,
    body: Flags.string({description: 'JSON body {"currency", "rate", "date", "source"} from FILE, or - for stdin'}),
    date: Flags.string({description: 'Day the rate applies from (YYYY-MM-DD; default today, UTC); a later day schedules it'}),
    source: Flags.string({description: 'Where the rate comes from (default "manual")'}),
  }
  static override get outputSchema() {
    return FxSetOutput
  }

  async run() {
    // Decimal notation only: Number() would also take "0x1F" (31) or "1e400" (Infinity).
    const rate = this.args.rate === undefined ? undefined : numberish(this.args.rate)
    if (this.args.rate !== undefined && typeof rate !== 'number') {
      throw new InvalidInputError(`RATE: expected a number of units per 1 USD, got ${JSON.stringify(this.args.rate)}`)
    }
    let input = overlay(readBody(this.flags.body), {
      currency: this.args.currency?.toUpperCase(),
      date: this.flags.date,
      rate,
      source: this.flags.source,
    })
    input = await requireFields(input, [
      {field: 'currency', flag: 'CURRENCY', message: 'Currency (ISO 4217)', parse: (a) => a.trim().toUpperCase()},
      {field: 'rate', flag: 'RATE', message: 'Units per 1 USD', parse: numberish},
    ])
    if (typeof input.currency === 'string') input.currency = input.currency.toUpperCase()
    const today = isoDay(nowSeconds())
    input.date ??= today
    const valid = validate(FxSetInput, input, 'FX rate')
    const {dryRun, impact, result: {current, rate: stored, replaced, scheduled, snapshotComesBack}} = await this.priceImpact(async () => await setOperatorRate(await this.store(), valid, today))
    const message = `${dryRun ? 'dry run: would set ' : ''}${stored.currency} = ${stored.rate} per 1 USD from ${stored.date} (${stored.source})${scheduled ? ', scheduled: not used before that day' : ''}`
    this.log(message)
    if (scheduled) {
      const now = current ? `${current.rate} dated ${current.date} (${current.source})` : 'no rate at all (prices in it fail until then)'
      this.note(`warning: ${stored.date} is after today (${today}): this rate is kept but not used before that day; until then ${stored.currency} is priced at ${now}`)
    }
    if (replaced && (replaced.rate !== stored.rate || replaced.source !== stored.source)) {
      const back = snapshotComesBack ? `; deleting this rate ("pricectl fx delete ${stored.currency} --date ${stored.date}") brings the bundled snapshot's back` : ''
      this.note(`replaced ${replaced.rate} (${replaced.source}) of ${replaced.date}${back}`)
    }
    return {current: current ?? null, dry_run: dryRun, impact, message, rate: stored, replaced: replaced ?? null, scheduled, success: true as const}
  }
}
