import {z} from 'zod'

import {BaseCommand, noStoreFlags} from '../../src/cli/base.js'
import {fishCompletion} from '../../src/cli/completion.js'

/** Fish, which @oclif/plugin-autocomplete (bash, zsh, PowerShell) does not cover. */
export default class AutocompleteFish extends BaseCommand<typeof AutocompleteFish> {
  // No store is opened: --db and --profile are accepted (as by every command) but not shown.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Print the fish completion script'
  static override description = `Fish loads completions from ~/.config/fish/completions by itself: write the script there,
and run the command again after upgrading pricectl. Bash and zsh: "pricectl autocomplete bash|zsh".`
  static override examples = ['<%= config.bin %> autocomplete fish > ~/.config/fish/completions/<%= config.bin %>.fish']
  static override get outputSchema() {
    return z.object({message: z.string(), script: z.string(), success: z.literal(true)})
  }

  async run() {
    const script = fishCompletion(this.config.bin, this.config.commands, this.config.topics)
    if (!this.jsonEnabled()) process.stdout.write(script)
    return {message: `fish completion for ${this.config.bin}`, script, success: true as const}
  }
}
