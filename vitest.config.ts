import {defineConfig} from 'vitest/config'

/**
 * Three projects, one run (`npm test`):
 * - quick (`npm run test:quick`, the inner loop): the engine, the server through fastify's
 *   inject, the store contracts on SQLite and the commands in-process from the TypeScript
 *   sources (test/helpers/run.ts). No build, no PostgreSQL.
 * - hardening: bad input, boundaries and identities, in-process like quick (no build).
 * - process: what needs the build or a process of its own (bin/run.js end to end, signals,
 *   TTY, kills, upgrades, the library's dist/ entry point, the PostgreSQL-only suites).
 * - postgres: the store contracts and the end-to-end suites again on PostgreSQL
 *   (PRICECTL_TEST_ADAPTER=postgres; docs/postgres.md#tests).
 * test/helpers/global-setup.ts builds dist/ and starts PostgreSQL once per run, and only when
 * a project other than quick runs.
 */
const QUICK = [
  'test/*.test.ts',
  'test/engine/**/*.test.ts',
  'test/server/**/*.test.ts',
  'test/store-contract/**/*.test.ts',
  'test/commands/**/*.test.ts',
]
/** The hardening suites that run their commands in-process: no build either, but not the inner loop. */
const HARDENING = ['test/hardening/{boundaries,fuzz,identity,input-rules,json-depth}.test.ts']
/** Files in the quick folders that need the build or PostgreSQL. */
const NOT_QUICK = [
  'test/docs-commands.test.ts',
  'test/commands/db-copy-postgres.test.ts',
  'test/commands/gateways.test.ts',
  'test/commands/price-preview.test.ts',
  'test/commands/rounding.test.ts',
]
const PROCESS = ['test/e2e/**/*.test.ts', 'test/hardening/{concurrency,crash,files,fuzz-bin,history-kill,pg-concurrency,pg-kill,security,upgrade}.test.ts', 'test/postgres/**/*.test.ts', 'test/library/**/*.test.ts', ...NOT_QUICK]
/** Per project, not at the root: the root's would run as a project of its own. */
const globalSetup = ['test/helpers/global-setup.ts']

export default defineConfig({
  test: {
    // oclif prints through console.log; let @oclif/test capture it instead of vitest.
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: ['test/helpers/test-env.ts'],
    // vitest's default on 2 cores is one worker; the process suites mostly wait on children.
    maxWorkers: 2,
    projects: [
      // One module graph per worker, not per file: the engine and the commands load once
      // (test/helpers/test-env.ts ends the environment changes of a file with the file).
      {extends: true, test: {exclude: NOT_QUICK, globalSetup, include: QUICK, isolate: false, name: 'quick'}},
      {extends: true, test: {globalSetup, include: HARDENING, isolate: false, name: 'hardening'}},
      {extends: true, test: {globalSetup, include: PROCESS, isolate: false, name: 'process'}},
      {extends: true, test: {env: {PRICECTL_TEST_ADAPTER: 'postgres'}, globalSetup, include: ['test/e2e/**/*.test.ts', 'test/store-contract/**/*.test.ts'], isolate: false, name: 'postgres'}},
    ],
  },
})
