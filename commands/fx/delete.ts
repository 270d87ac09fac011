import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {assertCurrency} from '../../src/currency.js'
import {InvalidInputError} from '../../src/errors.js'
import {deleteRates, describeRemoval, removalJson} from '../../src/fx/prune.js'
import {FxDay, FxRemoveOutput} from '../../src/schemas/fx.js'
import {validate} from '../../src/schemas/validate.js'

export default class FxDelete extends BaseCommand<typeof FxDelete> {
  static override args = {currency: Args.string({description: 'ISO 4217 code, e.g. EUR', required: true})}
  static override changesExisting = true
  static override summary = 'Delete your rates of a currency'
  static override description = `Delete your rates of a currency (manual or imported): every one, or the one of --date

The bundled snapshot stays (remove it with "pricectl fx prune --source snapshot"); where a
deleted rate had replaced the snapshot's rate of the same day, the snapshot's comes back.
Refused when a currency the store prices with would be left without a rate usable today
(--force overrides).`
  static override examples = [
    '<%= config.bin %> fx delete EUR --date 2031-01-01 --yes',
    '<%= config.bin %> fx delete JPY --dry-run',
  ]
  static override flags = {
    ...impactFlags,
    date: Flags.string({description: 'Only the rate of this day (YYYY-MM-DD)'}),
    'dry-run': Flags.boolean({description: 'Report what would be removed, remove nothing'}),
    force: Flags.boolean({description: 'Delete even if a currency in use is left without a rate usable today'}),
    yes: Flags.boolean({description: 'Do not ask for confirmation (needed without a terminal)'}),
  }
  static override get outputSchema() {
    return FxRemoveOutput
  }

  async run() {
    const currency = assertCurrency(this.args.currency.trim().toUpperCase(), 'CURRENCY')
    if (currency === 'USD') throw new InvalidInputError('CURRENCY: USD is the base of every rate (always 1); it has no rate to delete')
    const date = this.flags.date === undefined ? undefined : validate(FxDay, this.flags.date, '--date')
    const what = `delete ${date ? `the ${currency} rate of ${date}` : `every rate of yours for ${currency}`}`
    const options = {dryRun: this.flags['dry-run'], force: this.flags.force}
    if (!options.dryRun && !this.flags.yes) {
      if (!this.interactive) await confirmDestructive(false, what)
      const preview = await deleteRates(await this.store(), currency, date, {...options, dryRun: true})
      await confirmDestructive(false, describeRemoval(preview).message.replace(/^dry run: would /, ''))
    }
    const {impact, result} = await this.priceImpact(async () => await deleteRates(await this.store(), currency, date, {...options, dryRun: false}), undefined, {confirmed: !this.flags.yes})
    const summary = {...result, dryRun: Boolean(options.dryRun)}
    const {message, notes} = describeRemoval(summary)
    this.log(message)
    for (const n of notes) this.note(n)
    return {...removalJson(summary, message), impact}
  }
}
