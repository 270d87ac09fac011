import {describe, expect, it} from 'vitest'

import {batchSizeFrom, DEFAULT_BATCH} from '../../src/import/importer.js'
import {PgImports} from '../../src/store/postgres/imports.js'
import {withEnv} from '../helpers/run.js'

describe('rows per import transaction', () => {
  it('--batch-size, else PRICECTL_IMPORT_BATCH, else the adapter\'s (100,000 on PostgreSQL), else 250,000', async () => {
    const pg = new PgImports(undefined as never, undefined as never).batchRows
    expect(pg).toBe(100_000)
    expect(DEFAULT_BATCH).toBe(250_000)
    expect(batchSizeFrom(undefined)).toBe(250_000)
    expect(batchSizeFrom(undefined, pg)).toBe(100_000)
    expect(batchSizeFrom(5, pg)).toBe(5)
    await withEnv({PRICECTL_IMPORT_BATCH: '7'}, async () => {
      expect(batchSizeFrom(undefined, pg)).toBe(7)
      expect(batchSizeFrom(5, pg)).toBe(5)
    })
    expect(() => batchSizeFrom(0)).toThrow(/batch size: expected a whole number from 1 to 1000000, got 0/)
  })
})
