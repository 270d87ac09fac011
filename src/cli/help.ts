// The help entry point only: the package index would load all of oclif (~40 ms) for --help.
import {CommandHelp, Help} from '@oclif/core/help'

/**
 * oclif compiles every text of a help page as an EJS template; only texts with `<%` need it,
 * and the compiles were a tenth of `--help` (docs/performance.md "Cold start").
 */
function renderTemplatesOnly(formatter: {render: (input: string) => string}): void {
  const render = formatter.render
  formatter.render = (input) => (input.includes('<%') ? render(input) : input)
}

/** DESCRIPTION holds the longer description only: oclif would repeat the summary above it. */
class PricectlCommandHelp extends CommandHelp {
  constructor(...args: ConstructorParameters<typeof CommandHelp>) {
    super(...args)
    renderTemplatesOnly(this)
  }

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

  constructor(...args: ConstructorParameters<typeof Help>) {
    super(...args)
    renderTemplatesOnly(this)
  }
}
