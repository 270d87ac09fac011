import {BaseCommand} from '../../src/cli/base.js'
import {importArgs, importFlags, runImportCommand} from '../../src/cli/import/command.js'
import {ImportSummary} from '../../src/schemas/revenue.js'

export default class SubscriptionsImport extends BaseCommand<typeof SubscriptionsImport> {
  static override args = importArgs
  static override summary = 'Import gateway subscriptions exports: a file, several, or a folder'
  static override description =
    'Import a subscriptions export (gateway_a or gateway_c layout detected from the header, or --mapping FILE): streaming, validated, batched; rejected rows go to a CSV with their line and reason (exit 1). Several files, or a folder of monthly exports (every *.csv in it, by name), are read and validated at once (--jobs) and written as one import with one summary and one rejects file. Re-running changes nothing; an interrupted run resumes'
  static override examples = [
    '<%= config.bin %> subscriptions import subscriptions.csv',
    '<%= config.bin %> subscriptions import export.csv --preset gateway_c_subscriptions --dry-run',
    '<%= config.bin %> subscriptions import exports/subscriptions/',
    '<%= config.bin %> subscriptions import custom.csv --mapping layout.json --product pro_monthly --json',
  ]
  static override flags = importFlags
  static override get outputSchema() {
    return ImportSummary
  }

  async run() {
    return runImportCommand(await this.store(), 'subscriptions', this.args.file, this.flags, {json: this.jsonEnabled(), log: (s) => this.log(s)})
  }
}
