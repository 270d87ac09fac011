import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {freshPgDatabase} from './postgres.js'

/**
 * Every adapter of the storage port, for the contract tests in test/store-contract/:
 * each contract runs once per adapter (one per vitest project, below), on a real store (a SQLite file in a temp folder; a
 * fresh database on the test run's PostgreSQL, test/helpers/postgres.ts).
 */
const ALL: {name: string; open(): Promise<{cleanup(): Promise<void>; store: StorePort}>}[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'pricectl-contract-'))
      const store = openStore(join(dir, 'store.db'))
      return {
        async cleanup() {
          await store.close()
          rmSync(dir, {force: true, recursive: true})
        },
        store,
      }
    },
  },
  {
    name: 'postgres',
    async open() {
      const database = await freshPgDatabase()
      const store = openStore(database.url)
      return {
        async cleanup() {
          await store.close()
          await database.drop()
        },
        store,
      }
    },
  },
]

/**
 * The adapters this project tests: PostgreSQL in the project that runs with
 * PRICECTL_TEST_ADAPTER=postgres (vitest.config.ts), SQLite in the others.
 */
export const ADAPTERS = ALL.filter((a) => a.name === (process.env.PRICECTL_TEST_ADAPTER === 'postgres' ? 'postgres' : 'sqlite'))
