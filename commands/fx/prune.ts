import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {assertCurrency} from '../../src/currency.js'
import {InvalidInputError} from '../../src/errors.js'
import {describeRemoval, removalJson, removeRates} from '../../src/fx/prune.js'
import {describeFilter, parseSourceFilter} from '../../src/fx/sources.js'
import {FxDay, FxRemoveOutput, FxSourceText} from '../../src/schemas/fx.js'
import {validate} from '../../src/schemas/validate.js'

export default class FxPrune extends BaseCommand<typeof FxPrune> {
  static override changesExisting = true
  static override summary = 'Remove rates by source and/or age'
  static override description = `Remove rates by source and/or age

--source takes a kind (snapshot: the bundled default; manual: fx set and custom labels;
import: fx import with its default label) or a source label as "fx list" shows it, where *
matches any text ("ECB eurofxref*"). --before removes rates dated before a day. Where a
removed rate of yours had replaced the bundled snapshot's rate of the same day, the
snapshot's comes back. Refused when a currency the store prices with would be left without
a rate usable today (--force overrides); other currencies left without a rate are listed.`
  static override examples = [
    '<%= config.bin %> fx prune --source import --dry-run',
    '<%= config.bin %> fx prune --source "ECB eurofxref*" --before 2020-01-01 --yes',
    '<%= config.bin %> fx prune --source snapshot --currency VES --yes',
  ]
  static override flags = {
    ...impactFlags,
    before: Flags.string({description: 'Only rates dated before this day (YYYY-MM-DD)'}),
    currency: Flags.string({description: 'Only this currency (repeatable)', multiple: true}),
    'dry-run': Flags.boolean({description: 'Report what would be removed, remove nothing'}),
    force: Flags.boolean({description: 'Remove even if a currency in use is left without a rate usable today'}),
    source: Flags.string({description: 'snapshot | manual | import | a source label (* matches any text)'}),
    yes: Flags.boolean({description: 'Do not ask for confirmation (needed without a terminal)'}),
  }
  static override get outputSchema() {
    return FxRemoveOutput
  }

  async run() {
    if (this.flags.source === undefined && this.flags.before === undefined) {
      throw new InvalidInputError('fx prune needs --source or --before (or both); to delete your rates of one currency, run "pricectl fx delete CURRENCY"')
    }
    const source = this.flags.source === undefined ? undefined : parseSourceFilter(validate(FxSourceText, this.flags.source, '--source'))
    const before = this.flags.before === undefined ? undefined : validate(FxDay, this.flags.before, '--before')
    const currencies = this.flags.currency?.map((c) => assertCurrency(c.trim().toUpperCase(), '--currency'))
    const filter = {before, currencies, source}
    const scope = [source && describeFilter(source), before && `dated before ${before}`, currencies?.length && `of ${currencies.join(', ')}`].filter(Boolean).join(', ')
    const options = {dryRun: this.flags['dry-run'], force: this.flags.force}
    if (!options.dryRun && !this.flags.yes) {
      if (!this.interactive) await confirmDestructive(false, `prune rates (${scope})`)
      const preview = await removeRates(await this.store(), filter, {...options, dryRun: true})
      if (preview.removed > 0) await confirmDestructive(false, describeRemoval(preview).message.replace(/^dry run: would /, ''))
    }
    const {impact, result} = await this.priceImpact(async () => await removeRates(await this.store(), filter, {...options, dryRun: false}), undefined, {confirmed: !this.flags.yes})
    const summary = {...result, dryRun: Boolean(options.dryRun)}
    const {message, notes} = describeRemoval(summary)
    this.log(message)
    for (const n of notes) this.note(n)
    return {...removalJson(summary, message), impact}
  }
}
