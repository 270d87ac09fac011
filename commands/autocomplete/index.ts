import {Args, Flags} from '@oclif/core'
import {z} from 'zod'

import {BaseCommand, InvalidInputError, noStoreFlags} from '../../src/cli/base.js'

/**
 * @oclif/plugin-autocomplete's `autocomplete`, run as it is, with the --json every command
 * takes: it prints setup instructions for a person, which have no JSON form, so --json is
 * refused (exit 2) with where the data is. Decision: a refusal rather than a made-up shape.
 */
export default class Autocomplete extends BaseCommand<typeof Autocomplete> {
  static override args = {shell: Args.string({description: 'Shell type', options: ['zsh', 'bash', 'powershell'], required: false})}
  // No store is opened: --db and --profile are accepted (as by every command) but not shown.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Display autocomplete installation instructions'
  static override description = `Bash, zsh and PowerShell (fish: "pricectl autocomplete fish"). The instructions are text for a
person: --json is refused (exit 2); "pricectl autocomplete fish --json" gives the fish script
as JSON, "pricectl help --json" the commands and flags.`
  static override examples = ['<%= config.bin %> autocomplete', '<%= config.bin %> autocomplete bash', '<%= config.bin %> autocomplete zsh', '<%= config.bin %> autocomplete powershell', '<%= config.bin %> autocomplete --refresh-cache']
  static override flags = {
    'refresh-cache': Flags.boolean({char: 'r', description: 'Refresh cache (ignores displaying instructions)'}),
  }
  static override get outputSchema() {
    // Never printed: --json is refused.
    return z.never()
  }

  async run() {
    if (this.jsonEnabled()) {
      throw new InvalidInputError(`--json: "${this.config.bin} autocomplete" prints setup instructions for a person, which have no JSON form; "${this.config.bin} autocomplete fish --json" gives the fish script, "${this.config.bin} help --json" the commands and flags`)
    }
    const plugin = this.config.plugins.get('@oclif/plugin-autocomplete')
    if (!plugin) throw new InvalidInputError('autocomplete: @oclif/plugin-autocomplete is not installed')
    const command = await plugin.findCommand('autocomplete', {must: true})
    await command.run([...(this.args.shell ? [this.args.shell] : []), ...(this.flags['refresh-cache'] ? ['--refresh-cache'] : [])], this.config)
  }
}
