import type {Hook} from '@oclif/core'
import {toConfiguredId} from '@oclif/core/util/ids'

import {nearest} from '../nearest.js'
import {isInteractive} from '../tty.js'

/**
 * An unknown command. On a terminal, @oclif/plugin-not-found asks "Did you mean ...?" and
 * runs the answer; without one (scripts, CI) nobody can answer, so the closest command is
 * named in the error instead. Either way an unknown command exits 127, as a shell does.
 * Loaded only when a command is not found: start-up pays nothing for it.
 */
const hook: Hook.CommandNotFound = async function (opts) {
  if (isInteractive()) {
    const {default: prompt} = await import('@oclif/plugin-not-found')
    return prompt.call(this, opts)
  }
  const {config} = opts
  const typed = toConfiguredId(opts.id, config)
  const suggestion = closestCommand(opts.id, config)
  const mean = suggestion ? ` Did you mean "${config.bin} ${toConfiguredId(suggestion, config)}"?` : ''
  const message = `"${typed}" is not a ${config.bin} command.${mean} See "${config.bin} --help" for the list of commands.`
  // The same shapes as a command's errors: one line on stderr, or the JSON error body.
  if (opts.argv?.includes('--json')) process.stdout.write(JSON.stringify({message, success: false}, null, 2) + '\n')
  else process.stderr.write(`Error: ${message}\n`)
  this.exit(127)
}

export default hook

type Known = {commands: {aliases: string[]; hidden: boolean; id: string}[]; topics: {hidden?: boolean; name: string}[]}

/** The visible command, alias or topic nearest to `id` by edit distance; none when nothing is close. */
export function closestCommand(id: string, config: Known): string | undefined {
  const names = [...config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases]), ...config.topics.filter((t) => !t.hidden).map((t) => t.name)]
  return nearest(id, names)
}
