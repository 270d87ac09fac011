import {Args, Flags, loadHelpClass} from '@oclif/core'

import {BaseCommand, noStoreFlags} from '../src/cli/base.js'
import {HelpOutput, helpJson} from '../src/cli/help-json.js'

/** oclif's help command (@oclif/plugin-help), with --json: the commands and flags as data. */
export default class Help extends BaseCommand<typeof Help> {
  static override args = {command: Args.string({description: 'Command or topic to show help for (words separated by spaces)', required: false})}
  // No store is opened: --db and --profile are accepted (as by every command) but not shown.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Display help for pricectl'
  static override description = `Without --json, the help pages (the same as --help). With --json: the commands and topics
({name, version, topics, commands}), a topic's ({topic, topics, commands}) or a command's
({command: {id, summary, description, aliases, args, flags, examples}}). A command or topic that
does not exist exits 1.`
  static override examples = ['<%= config.bin %> help products', '<%= config.bin %> help price preview', '<%= config.bin %> help --json', '<%= config.bin %> help products list --json']
  static override flags = {
    'nested-commands': Flags.boolean({char: 'n', description: 'Include all nested commands in the output'}),
  }
  static override strict = false
  static override get outputSchema() {
    return HelpOutput
  }

  async run() {
    const {argv, flags} = await this.parse(Help)
    const words = (argv as string[]).flatMap((w) => w.split(/[\s:]+/)).filter(Boolean)
    // Checked first, so the text and --json agree on what does not exist.
    const result = helpJson(this.config, words)
    if (!this.jsonEnabled()) {
      const HelpClass = await loadHelpClass(this.config)
      await new HelpClass(this.config, {all: flags['nested-commands']}).showHelp(words)
    }
    return result
  }
}
