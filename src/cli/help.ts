// The help entry point only: the package index would load all of oclif (~40 ms) for --help.
import {CommandHelp, Help} from '@oclif/core/help'

/**
 * A command's help opens with its one-line summary; the DESCRIPTION section then holds the
 * longer description only, without the summary again (oclif repeats it) and without a
 * first line that only restates the summary.
 */
class PricectlCommandHelp extends CommandHelp {
  protected override description(): string | undefined {
    const {description, summary} = this.command
    const lines = (description ?? '').split(/\r?\n/)
    if (summary && lines[0]?.trim() === summary.trim()) lines.shift()
    const text = lines.join('\n').trim()
    return text ? this.wrap(text) : undefined
  }
}

export default class PricectlHelp extends Help {
  protected override CommandHelpClass = PricectlCommandHelp
}
