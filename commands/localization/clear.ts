import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {assertCountry} from '../../src/currency.js'
import {clearFactors} from '../../src/localization/factors.js'
import {LocalizationClearOutput} from '../../src/schemas/localization.js'

export default class LocalizationClear extends BaseCommand<typeof LocalizationClear> {
  static override changesExisting = true
  static override summary = 'Delete localization factors'
  static override description = 'Delete localization factors (all, or of the given countries); prices then use FX and rounding only'
  static override examples = ['<%= config.bin %> localization clear --yes', '<%= config.bin %> localization clear --country BG --country VE --yes']
  static override flags = {
    ...impactFlags,
    country: Flags.string({description: 'Only this country (repeatable)', multiple: true}),
    yes: Flags.boolean({description: 'Do not ask for confirmation (needed without a terminal)'}),
  }
  static override get outputSchema() {
    return LocalizationClearOutput
  }

  async run() {
    const countries = this.flags.country?.map((c) => assertCountry(c.trim().toUpperCase(), '--country'))
    if (!this.flags['dry-run']) await confirmDestructive(this.flags.yes, countries?.length ? `delete the localization factors of ${countries.join(', ')}` : 'delete every localization factor')
    const {dryRun, impact, result: deleted} = await this.priceImpact(async () => await clearFactors(await this.store(), countries), undefined, {confirmed: !this.flags.yes})
    const message = `${dryRun ? 'dry run: would delete' : 'deleted'} ${deleted} localization ${deleted === 1 ? 'factor' : 'factors'}`
    this.log(message)
    return {deleted, dry_run: dryRun, impact, message, success: true as const}
  }
}
