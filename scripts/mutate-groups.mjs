/**
 * Mutation testing by group (docs/hardening.md, "Mutation testing"): each group names the
 * code Stryker mutates and the test files that run against its mutants. stryker.config.mjs
 * and vitest.mutate.config.ts read this one map; PRICECTL_MUTATE_GROUP=revenue (or a comma
 * list) limits a run to those groups, with its own incremental file and report.
 */
export const GROUPS = {
  money: {
    mutate: [
      'src/currency.ts',
      'src/money/representable.ts',
      'src/experiments/bounds.ts',
      'src/pricing/display.ts',
      'src/segments/rules.ts',
      'src/pricing/rounding.ts:124-224',
      'src/pricing/rounding.ts:405-520',
      'src/pricing/coupons.ts:16-61',
      'src/catalog/coupons.ts:76-85',
      'src/store/sqlite/write-behind-thread.ts',
    ],
    tests: [
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
  },
  revenue: {
    mutate: ['src/revenue/money.ts', 'src/revenue/metrics.ts', 'src/revenue/periods.ts', 'src/revenue/events.ts', 'src/revenue/order.ts', 'src/revenue/cohorts.ts'],
    tests: [
      'test/engine/revenue-money.test.ts',
      'test/engine/revenue-metrics.test.ts',
      'test/engine/revenue-events.test.ts',
      'test/engine/revenue-order.test.ts',
      'test/engine/revenue-order-merge.test.ts',
      'test/engine/revenue-edges.test.ts',
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
  },
  import: {
    mutate: ['src/import/amounts.ts', 'src/import/reasons.ts', 'src/import/intervals.ts', 'src/import/rows.ts'],
    // The in-process imports too: a file up to IN_THREAD_MAX_BYTES (src/import/pipeline.ts) is
    // read in the test's own thread, where the mutants are; a worker thread or bin/run.js
    // loads the unmutated code, so the tests that need those stay out.
    tests: [
      'test/engine/import-amounts.test.ts',
      'test/engine/import-reasons.test.ts',
      'test/engine/import-rows-shortcut.test.ts',
      'test/engine/import-rows-examples.test.ts',
      'test/engine/import-rows-mapping.test.ts',
      'test/engine/import-staged.test.ts',
      'test/engine/revenue-tax.test.ts',
      'test/commands/import.test.ts',
      'test/commands/import-files.test.ts',
      'test/commands/import-reader.test.ts',
      'test/commands/charges.test.ts',
      'test/commands/revenue-tax.test.ts',
    ],
  },
  experiments: {
    mutate: ['src/experiments/stats.ts', 'src/experiments/random.ts', 'src/experiments/results.ts', 'src/experiments/conclude.ts', 'src/experiments/arm-prices.ts'],
    tests: [
      'test/engine/bandit.test.ts',
      'test/engine/experiments-assign.test.ts',
      'test/engine/experiments-attribution.test.ts',
      'test/engine/experiments-bounds.test.ts',
      'test/engine/experiments-conclude.test.ts',
      'test/engine/experiments-conclude-pinned.test.ts',
      'test/engine/experiments-examples.test.ts',
      'test/engine/simulation.test.ts',
      'test/commands/experiments.test.ts',
      'test/commands/experiments-conclude.test.ts',
      'test/store-contract/experiments.test.ts',
      'test/store-contract/experiments-attribution.test.ts',
      'test/engine/experiments-results-pinned.test.ts',
      'test/engine/experiments-arm-prices-pinned.test.ts',
      'test/engine/experiments-stats-pinned.test.ts',
    ],
  },
  store: {
    mutate: ['src/fx/rates.ts', 'src/fx/prune.ts', 'src/store/sqlite/fx.ts'],
    tests: [
      'test/store-contract/fx.test.ts',
      'test/store-contract/revenue.test.ts',
      'test/store-contract/revenue-order.test.ts',
      'test/store-contract/revenue-rules.test.ts',
      'test/store-contract/experiments.test.ts',
      'test/store-contract/experiments-attribution.test.ts',
      'test/engine/fx-rates.test.ts',
      'test/engine/fx-prune.test.ts',
      'test/engine/fx-prune-pinned.test.ts',
      'test/engine/fx-rates-pinned.test.ts',
      'test/store-contract/fx-pinned.test.ts',
      'test/commands/fx.test.ts',
    ],
  },
}

/** The groups PRICECTL_MUTATE_GROUP names (all when unset), checked. */
export function chosenGroups(env = process.env) {
  const chosen = env.PRICECTL_MUTATE_GROUP?.split(',').map((g) => g.trim()) ?? Object.keys(GROUPS)
  for (const g of chosen) if (!GROUPS[g]) throw new Error(`PRICECTL_MUTATE_GROUP: no group ${JSON.stringify(g)} (${Object.keys(GROUPS).join(', ')})`)
  return chosen
}
