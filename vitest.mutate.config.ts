import {defineConfig} from 'vitest/config'

/**
 * The tests `npm run mutate` (StrykerJS, stryker.config.json) runs against each mutant:
 * the pure engine and boundary tests of the mutated files, in process. No global setup:
 * none of these run bin/run.js, so dist/ is not needed (docs/hardening.md, "Mutation testing").
 */
export default defineConfig({
  test: {
    include: [
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
    // Leaves out the slow whole-path property test of experiments-bounds.test.ts.
    env: {PRICECTL_MUTATE: '1'},
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
