import type {Hook} from '@oclif/core'
import {toConfiguredId} from '@oclif/core/util/ids'

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
  let best: {distance: number; id: string} | undefined
  const names = [...config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases]), ...config.topics.filter((t) => !t.hidden).map((t) => t.name)]
  for (const candidate of names) {
    const distance = editDistance(id, candidate)
    if (!best || distance < best.distance) best = {distance, id: candidate}
  }
  // More edits than half the typed length is a different word, not a typo.
  return best && best.distance <= Math.max(2, Math.ceil(id.length / 2)) ? best.id : undefined
}

/** Levenshtein distance (two rows). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = row
  }
  return prev[b.length]
}
