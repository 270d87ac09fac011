import {defineConfig} from 'vitest/config'

/**
 * The tests `npm run mutate` (StrykerJS, stryker.config.json) runs against each mutant: the
 * engine, store-contract (SQLite) and in-process command tests of the mutated files, by group
 * (docs/hardening.md, "Mutation testing"). No global setup: none of these run bin/run.js, so
 * dist/ is not needed. PRICECTL_MUTATE_GROUP=revenue (or a comma list) runs one group's tests
 * only, for a run with `--mutate` limited to that group's files: the dry run then takes
 * seconds instead of minutes.
 */
const GROUPS: Record<string, string[]> = {
  money: [
    'test/engine/money.test.ts',
    'test/engine/gateways.test.ts',
    'test/engine/display.test.ts',
    'test/engine/rounding.test.ts',
    'test/engine/revenue-money.test.ts',
    'test/engine/segments-rules.test.ts',
    'test/engine/coupons-in-price-math.test.ts',
    'test/engine/experiments-bounds.test.ts',
    'test/hardening/boundaries.test.ts',
    'test/engine/money-core-examples.test.ts',
    'test/engine/segments-rules-examples.test.ts',
    'test/engine/rounding-display-examples.test.ts',
    'test/engine/write-behind-writer.test.ts',
  ],
  revenue: [
    'test/engine/revenue-money.test.ts',
    'test/engine/revenue-metrics.test.ts',
    'test/engine/revenue-events.test.ts',
    'test/engine/revenue-order.test.ts',
    'test/engine/revenue-definitions.test.ts',
    'test/engine/revenue-rules-examples.test.ts',
    'test/commands/revenue-metrics.test.ts',
    'test/commands/revenue-report.test.ts',
    'test/commands/revenue-human.test.ts',
    'test/commands/subscriptions.test.ts',
    'test/commands/charges.test.ts',
    'test/store-contract/revenue.test.ts',
    'test/store-contract/revenue-order.test.ts',
    'test/store-contract/revenue-rules.test.ts',
    'test/store-contract/fx.test.ts',
  ],
  import: ['test/engine/import-amounts.test.ts', 'test/engine/import-reasons.test.ts', 'test/engine/import-rows-shortcut.test.ts', 'test/engine/import-rows-examples.test.ts'],
  experiments: [
    'test/engine/bandit.test.ts',
    'test/engine/experiments-assign.test.ts',
    'test/engine/experiments-attribution.test.ts',
    'test/engine/experiments-bounds.test.ts',
    'test/engine/experiments-conclude.test.ts',
    'test/engine/experiments-examples.test.ts',
    'test/engine/simulation.test.ts',
    'test/commands/experiments.test.ts',
    'test/commands/experiments-conclude.test.ts',
    'test/store-contract/experiments.test.ts',
    'test/store-contract/experiments-attribution.test.ts',
  ],
  store: [
    'test/store-contract/fx.test.ts',
    'test/store-contract/revenue.test.ts',
    'test/store-contract/revenue-order.test.ts',
    'test/store-contract/revenue-rules.test.ts',
    'test/store-contract/experiments.test.ts',
    'test/store-contract/experiments-attribution.test.ts',
    'test/engine/fx-rates.test.ts',
    'test/engine/fx-prune.test.ts',
  ],
}

const chosen = process.env.PRICECTL_MUTATE_GROUP?.split(',').map((g) => g.trim()) ?? Object.keys(GROUPS)
for (const g of chosen) if (!GROUPS[g]) throw new Error(`PRICECTL_MUTATE_GROUP: no group ${JSON.stringify(g)} (${Object.keys(GROUPS).join(', ')})`)

export default defineConfig({
  test: {
    include: [...new Set(chosen.flatMap((g) => GROUPS[g]))],
    // Leaves out the slow whole-path property test of experiments-bounds.test.ts and the
    // many-seed acceptance runs of simulation.test.ts.
    env: {PRICECTL_MUTATE: '1'},
    setupFiles: ['test/helpers/test-env.ts'],
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
