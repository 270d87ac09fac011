import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'

/**
 * Every adapter of the storage port, for the contract tests in test/store-contract/:
 * each contract runs once per adapter, on a real store (a SQLite file in a temp folder).
 * A new adapter (PostgreSQL) adds itself here and must pass every contract.
 */
export const ADAPTERS: {name: string; open(): {cleanup(): void; store: StorePort}}[] = [
  {
    name: 'sqlite',
    open() {
      const dir = mkdtempSync(join(tmpdir(), 'pricectl-contract-'))
      const store = openStore(join(dir, 'store.db'))
      return {
        cleanup() {
          store.close()
          rmSync(dir, {force: true, recursive: true})
        },
        store,
      }
    },
  },
]
