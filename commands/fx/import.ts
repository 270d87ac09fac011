import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {readDataFile} from '../../src/fx/files.js'
import {importRates, parseFxFile} from '../../src/fx/import.js'
import {FX_FORMATS, FxImportOutput, FxSource} from '../../src/schemas/fx.js'
import {validate} from '../../src/schemas/validate.js'

export default class FxImport extends BaseCommand<typeof FxImport> {
  static override args = {file: Args.string({description: 'Rate file (.csv, .json, or a .zip holding one), or - for stdin', required: true})}
  static override summary = 'Import FX rates (ECB, CSV or JSON)'
  static override description = `Import FX rates: the ECB eurofxref CSV (latest or full history, also zipped), a currency,rate[,date] CSV, or {"date", "usd": {...}} JSON

The layout is detected from the content (--format forces it). ECB rates are per 1 EUR and are
stored per 1 USD. Everything is written in one transaction, or nothing when a row is bad.
Imported rates outrank the bundled snapshot whatever their dates; a rate dated after today
is kept but not used before its date.`
  static override examples = [
    '<%= config.bin %> fx import eurofxref-hist.zip',
    '<%= config.bin %> fx import eurofxref.csv --dry-run',
    '<%= config.bin %> fx import rates.csv --date 2026-04-01',
  ]
  static override flags = {
    date: Flags.string({description: 'Day for rows without one (csv without a date column, json without "date"); default today'}),
    ...impactFlags,
    format: Flags.string({description: 'Layout of FILE instead of detecting it', options: [...FX_FORMATS]}),
    source: Flags.string({description: 'Source label stored with the rates (default: the layout and file name)'}),
  }
  static override get outputSchema() {
    return FxImportOutput
  }

  async run() {
    const source = this.flags.source === undefined ? undefined : validate(FxSource, this.flags.source, '--source')
    const file = readDataFile(this.args.file)
    const parsed = parseFxFile(file.bytes, {date: this.flags.date, format: this.flags.format as (typeof FX_FORMATS)[number] | undefined, name: file.name})
    if (parsed.skippedCodes.length > 0) {
      const n = parsed.skippedCodes.length
      const codes = `${parsed.skippedCodes.slice(0, 12).join(', ')}${n > 12 ? ', ...' : ''}`
      this.note(`skipped ${n} ${n === 1 ? 'code that is' : 'codes that are'} not ISO 4217 (${parsed.skippedValues} ${parsed.skippedValues === 1 ? 'value' : 'values'}): ${codes}`)
    }
    const {dryRun, impact, result} = await this.priceImpact(async () => await importRates(await this.store(), parsed, {source}))
    const s = {...result, dryRun}
    const span = s.dates.count === 0 ? 'no dates' : s.dates.count === 1 ? `date ${s.dates.from}` : `${s.dates.count} dates ${s.dates.from}..${s.dates.to}`
    const message = `${s.dryRun ? 'dry run: would write' : 'wrote'} ${plural(s.ratesWritten, 'rate')} (${s.ratesUnchanged} unchanged) for ${s.currencies} ${s.currencies === 1 ? 'currency' : 'currencies'}, ${span}, from ${plural(s.rowsRead, 'row')} read (${s.format})`
    this.log(message)
    if (s.scheduled > 0) {
      this.note(`warning: ${plural(s.scheduled, 'rate')} ${s.scheduled === 1 ? 'is' : 'are'} dated after today: kept, but not used before ${s.scheduled === 1 ? 'its date' : 'their dates'} (see "pricectl fx list")`)
    }
    if (s.newerOnFile.count > 0) {
      this.note(
        `note: ${s.newerOnFile.count} of these currencies keep a later-dated rate of yours already on file (e.g. ${s.newerOnFile.currencies.slice(0, 5).join(', ')}), which prices today; see "pricectl fx list"`,
      )
    }
    return {
      currencies: s.currencies,
      dates: s.dates,
      dry_run: s.dryRun,
      format: s.format,
      impact,
      message,
      newer_on_file: s.newerOnFile.currencies,
      rates_unchanged: s.ratesUnchanged,
      rates_written: s.ratesWritten,
      rows_read: s.rowsRead,
      scheduled: s.scheduled,
      skipped: {codes: s.skippedCodes, values: s.skippedValues},
      source: s.source,
      success: true as const,
    }
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}
