import {defineConfig} from 'vitest/config'

/**
 * Two projects, one run (`npm test`): every test on the default adapter, SQLite (the
 * store-contract tests run each contract on every adapter themselves), and the end-to-end
 * suites once more on PostgreSQL (test/helpers/e2e.ts hands each test a new database instead
 * of a new file; docs/postgres.md#tests). `--project sqlite` or `--project e2e-postgres` runs one.
 */
export default defineConfig({
  test: {
    // oclif prints through console.log; let @oclif/test capture it instead of vitest.
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/test-env.ts'],
    projects: [
      {extends: true, test: {include: ['test/**/*.test.ts'], name: 'sqlite'}},
      {extends: true, test: {env: {PRICECTL_TEST_ADAPTER: 'postgres'}, include: ['test/e2e/**/*.test.ts'], name: 'e2e-postgres'}},
    ],
  },
})
