import {BaseCommand} from '../../src/cli/base.js'
import {importArgs, importFlags, runImportCommand} from '../../src/cli/import/command.js'
import {ImportSummary} from '../../src/schemas/revenue.js'

export default class ChargesImport extends BaseCommand<typeof ChargesImport> {
  static override args = importArgs
  static override summary = 'Import gateway payments exports: a file, several, or a folder'
  static override description =
    'Import a payments export (gateway_a payments layout detected from the header, or --mapping FILE): streaming, validated, batched; rejected rows go to a CSV with their line and reason (exit 1). Several files, or a folder of monthly exports (every *.csv in it, by name), are read and validated at once (--jobs) and written as one import with one summary and one rejects file. Re-running changes nothing; an interrupted run resumes'
  static override examples = [
    '<%= config.bin %> charges import payments.csv',
    '<%= config.bin %> charges import payments.csv --dry-run --rejects bad.csv',
    '<%= config.bin %> charges import exports/ --jobs 2',
    '<%= config.bin %> charges import 2026-01.csv 2026-02.csv 2026-03.csv --json',
    '<%= config.bin %> charges import custom.csv --mapping layout.json --product lifetime --json',
  ]
  static override flags = importFlags
  static override get outputSchema() {
    return ImportSummary
  }

  async run() {
    return runImportCommand(await this.store(), 'charges', this.args.file, this.flags, {json: this.jsonEnabled(), log: (s) => this.log(s)})
  }
}
