import {Args, Flags} from '@oclif/core'

import {numberish} from '../../src/catalog/shortforms.js'
import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {overlay, readBody, requireFields} from '../../src/cli/input.js'
import {InvalidInputError} from '../../src/errors.js'
import {setFactor} from '../../src/localization/factors.js'
import {FactorInput, LocalizationSetOutput} from '../../src/schemas/localization.js'
import {validate} from '../../src/schemas/validate.js'

export default class LocalizationSet extends BaseCommand<typeof LocalizationSet> {
  static override args = {
    country: Args.string({description: 'ISO 3166 alpha-2 code, e.g. IN'}),
    factor: Args.string({description: 'Price level ratio, e.g. 0.35 (1 = US prices; 0.05..10)'}),
  }
  static override summary = "Set a country's localization factor"
  static override description = "Set a country's localization factor (replacing the one on file)"
  static override examples = ['<%= config.bin %> localization set IN 0.35', '<%= config.bin %> localization set CH 1.4 --year 2024 --source "own survey"']
  static override flags = {
    ...impactFlags,
    body: Flags.string({description: 'JSON body {"country", "factor", "year", "source"} from FILE, or - for stdin'}),
    source: Flags.string({description: 'Where the factor comes from (default "manual")'}),
    year: Flags.integer({description: 'Year the factor describes'}),
  }
  static override get outputSchema() {
    return LocalizationSetOutput
  }

  async run() {
    // Decimal notation only (Number() would also take hex such as 0x1).
    const factor = this.args.factor === undefined ? undefined : numberish(this.args.factor)
    if (this.args.factor !== undefined && typeof factor !== 'number') {
      throw new InvalidInputError(`FACTOR: expected a number such as 0.85, got ${JSON.stringify(this.args.factor)}`)
    }
    let input = overlay(readBody(this.flags.body), {country: this.args.country, factor, source: this.flags.source, year: this.flags.year})
    input = await requireFields(input, [
      {field: 'country', flag: 'COUNTRY', message: 'Country (ISO 3166 alpha-2)'},
      {field: 'factor', flag: 'FACTOR', message: 'Factor (1 = US prices)', parse: numberish},
    ])
    if (typeof input.country === 'string') input.country = input.country.trim().toUpperCase()
    const valid = validate(FactorInput, input, 'localization factor')
    const {dryRun, impact, result: stored} = await this.priceImpact(async () => await setFactor(await this.store(), valid))
    const message = `${dryRun ? 'dry run: would set ' : ''}${stored.country}: localization factor ${stored.factor}${stored.year === null ? '' : ` for ${stored.year}`} (source: ${stored.source})`
    this.log(message)
    return {dry_run: dryRun, factor: stored, impact, message, success: true as const}
  }
}
