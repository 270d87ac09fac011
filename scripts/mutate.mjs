/**
 * `npm run mutate`: StrykerJS once per group (scripts/mutate-groups.mjs; all groups, or those
 * PRICECTL_MUTATE_GROUP names), each run with its own incremental file and report, so a group
 * run alone keeps its results for the next full run; then the score of each group, as Stryker
 * counts it (killed or timed out, over those plus survived and not covered). Exits 1 when a
 * group is under the break threshold (stryker.config.mjs) or its run failed.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {chosenGroups} from './mutate-groups.mjs'

let failed = false
const scores = []
for (const group of chosenGroups()) {
  const env = {...process.env, PRICECTL_MUTATE_GROUP: group}
  const run = spawnSync('npx', ['stryker', 'run', ...process.argv.slice(2)], {env, stdio: 'inherit'})
  if (run.status !== 0) failed = true
  const file = `reports/mutation/${group}.json`
  if (!existsSync(file)) continue
  const n = {detected: 0, missed: 0}
  for (const {mutants} of Object.values(JSON.parse(readFileSync(file, 'utf8')).files)) {
    for (const m of mutants) {
      if (m.status === 'Killed' || m.status === 'Timeout') n.detected++
      else if (m.status === 'Survived' || m.status === 'NoCoverage') n.missed++
    }
  }
  scores.push(`${group.padEnd(12)} ${((100 * n.detected) / (n.detected + n.missed)).toFixed(2).padStart(6)}%  ${n.detected} detected, ${n.missed} survived or not covered${run.status === 0 ? '' : '  (failed)'}`)
}
console.log(`\nmutation score by group:\n${scores.join('\n')}`)
process.exitCode = failed ? 1 : 0
