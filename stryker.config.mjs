import {chosenGroups, GROUPS} from './scripts/mutate-groups.mjs'

/**
 * StrykerJS (docs/hardening.md, "Mutation testing"): the code of the groups chosen with
 * PRICECTL_MUTATE_GROUP (all when unset), with an incremental file and report named after
 * them. `npm run mutate` (scripts/mutate.mjs) runs one group at a time.
 */
const groups = chosenGroups()
const name = groups.join('-')

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  vitest: {configFile: 'vitest.mutate.config.ts', related: false},
  checkers: [],
  coverageAnalysis: 'perTest',
  mutate: [...new Set(groups.flatMap((g) => GROUPS[g].mutate))],
  ignorePatterns: ['coverage', 'bench', 'fixtures/stores', 'reports', '/tmp'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  concurrency: 2,
  timeoutMS: 10_000,
  timeoutFactor: 2,
  incremental: true,
  incrementalFile: `reports/stryker-incremental-${name}.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: {fileName: `reports/mutation/${name}.html`},
  jsonReporter: {fileName: `reports/mutation/${name}.json`},
  thresholds: {high: 95, low: 90, break: 90},
  ignoreStatic: true,
}
