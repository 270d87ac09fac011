import {defineConfig} from 'vitest/config'
import {chosenGroups, GROUPS} from './scripts/mutate-groups.mjs'

/**
 * The tests `npm run mutate` (StrykerJS, stryker.config.mjs) runs against each mutant: the
 * engine, store-contract (SQLite) and in-process command tests of the mutated files, by group
 * (scripts/mutate-groups.mjs; docs/hardening.md, "Mutation testing"). No global setup: none of
 * these run bin/run.js, so dist/ is not needed. PRICECTL_MUTATE_GROUP=revenue (or a comma
 * list) runs those groups' tests against those groups' code only.
 */
export default defineConfig({
  test: {
    include: [...new Set(chosenGroups().flatMap((g) => GROUPS[g].tests))],
    // Leaves out the slow whole-path property test of experiments-bounds.test.ts and the
    // many-seed acceptance runs of simulation.test.ts.
    env: {PRICECTL_MUTATE: '1'},
    setupFiles: ['test/helpers/test-env.ts', 'test/helpers/mutate-preload.ts'],
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
