import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {readDataFile} from '../../src/fx/files.js'
import {writeFactors} from '../../src/localization/factors.js'
import {parseLocalizationFile, resolveFactors} from '../../src/localization/import.js'
import {LOCALIZATION_FORMATS, type LocalizationFormat, LocalizationImportOutput} from '../../src/schemas/localization.js'

export default class LocalizationImport extends BaseCommand<typeof LocalizationImport> {
  static override args = {file: Args.string({description: 'World Bank CSV (wide or long layout) or a country,factor CSV; - for stdin', required: true})}
  static override summary = 'Import per-country localization factors'
  static override description = `Import per-country localization factors (price level ratios, 1 = US prices)

Layouts (detected from the content, or --format):
  wide  World Bank API_PA.NUS.PPPC.RF_DS2_*.csv (preamble lines, ISO3 codes, one column per year);
        the value is the price level ratio, i.e. the factor
  long  Country,Country ID,Year,PPP (PPP conversion factor, local currency per international $);
        factor = PPP / market rate of the country's currency per USD (that year's mean on file, else the latest)
  csv   country,factor[,year]
The latest year with a value wins per country; regions and income groups (WLD, EUU, HIC, ...)
are skipped and counted. Countries not in the file keep their factor unless --replace.
--dry-run reports each price the factors would move (docs/change-control.md).`
  static override examples = [
    '<%= config.bin %> localization import API_PA.NUS.PPPC.RF_DS2_en_csv_v2.csv',
    '<%= config.bin %> localization import ppp-gdp.csv --dry-run',
    '<%= config.bin %> localization import factors.csv --replace',
  ]
  static override flags = {
    ...impactFlags,
    format: Flags.string({description: 'Layout of FILE instead of detecting it', options: [...LOCALIZATION_FORMATS]}),
    replace: Flags.boolean({description: 'Also remove the factors of countries the file does not give'}),
    source: Flags.string({description: 'Source label stored with the factors (default: the layout and file name)'}),
  }
  static override get outputSchema() {
    return LocalizationImportOutput
  }

  async run() {
    const file = readDataFile(this.args.file)
    const parsed = parseLocalizationFile(file.bytes, {format: this.flags.format as LocalizationFormat | undefined, name: file.name})
    const source = this.flags.source?.trim() || parsed.source
    const resolved = await resolveFactors(await this.store(), parsed, source)
    const {impact, result: written} = await this.priceImpact(async () => await writeFactors(await this.store(), resolved.factors, {replace: this.flags.replace}))
    const years = resolved.factors.map((f) => f.year).filter((y): y is number => y !== null)
    const skippedCount = parsed.aggregates.length + parsed.noValue.length + resolved.noFxRate.length + resolved.implausible.length
    const message =
      `${this.flags['dry-run'] ? 'dry run: would write' : 'wrote'} ${plural(written.written, 'factor')} (${written.unchanged} unchanged${written.removed ? `, ${written.removed} removed` : ''}) ` +
      `from ${plural(parsed.rowsRead, 'row')} (${parsed.format}); skipped ${skippedCount}: ${plural(parsed.aggregates.length, 'aggregate')}, ${parsed.noValue.length} without a value` +
      (parsed.kind === 'ppp' ? `, ${resolved.noFxRate.length} without an FX rate` : '') +
      `, ${resolved.implausible.length} implausible`
    this.log(message)
    if (resolved.implausible.length > 0) {
      this.note(`implausible factors (outside 0.05..10, often a PPP in a redenominated currency) skipped: ${resolved.implausible.join(', ')}; set them with "pricectl localization set COUNTRY FACTOR"`)
    }
    if (resolved.noFxRate.length > 0) this.note(`no FX rate for the currency of: ${resolved.noFxRate.join(', ')} (add with "pricectl fx set CURRENCY RATE")`)
    if (resolved.fx.latest > 0) {
      this.note(`${resolved.fx.latest} PPP values converted at the latest FX rate (no rates on file for their year); "pricectl fx import eurofxref-hist.zip" adds history for year averages`)
    }
    return {
      dry_run: Boolean(this.flags['dry-run']),
      factors_unchanged: written.unchanged,
      factors_written: written.written,
      format: parsed.format,
      impact,
      fx: {latest: resolved.fx.latest, year_average: resolved.fx.yearAverage},
      message,
      removed: written.removed,
      rows_read: parsed.rowsRead,
      skipped: {aggregates: parsed.aggregates, implausible: resolved.implausible, no_fx_rate: resolved.noFxRate, no_value: parsed.noValue},
      source,
      success: true as const,
      years: {from: years.length ? Math.min(...years) : null, to: years.length ? Math.max(...years) : null},
    }
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}
