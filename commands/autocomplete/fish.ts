import {Command} from '@oclif/core'

import {fishCompletion} from '../../src/cli/completion.js'

/** Fish, which @oclif/plugin-autocomplete (bash, zsh, PowerShell) does not cover. */
export default class AutocompleteFish extends Command {
  static override summary = 'Print the fish completion script'
  static override description = `Fish loads completions from ~/.config/fish/completions by itself: write the script there,
and run the command again after upgrading pricectl. Bash and zsh: "pricectl autocomplete bash|zsh".`
  static override examples = ['<%= config.bin %> autocomplete fish > ~/.config/fish/completions/<%= config.bin %>.fish']

  async run(): Promise<void> {
    process.stdout.write(fishCompletion(this.config.bin, this.config.commands, this.config.topics))
  }
}
