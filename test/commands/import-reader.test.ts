import {statSync} from 'node:fs'
import {expect, it} from 'vitest'

import {IN_THREAD_MAX_BYTES} from '../../src/import/pipeline.js'
import {dumpTable, PAYMENTS_HEADER, paymentsCsv, runArgs, seedCatalog, tempDir, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * The import reads a small file in the writer's thread and a large one in a worker
 * (pipeline.ts): the same rows end the same way either way.
 */
it('a file above the in-thread limit (a worker reads it) lands as the same rows split into seven small files (read in-thread)', async () => {
  const rows = 7000
  const whole = writeTemp('whole.csv', paymentsCsv(rows))
  expect(statSync(whole).size).toBeGreaterThan(IN_THREAD_MAX_BYTES)
  const dir = tempDir()
  const lines = paymentsCsv(rows).trimEnd().split('\n').slice(1)
  const parts = Array.from({length: 7}, (_, i) => writeTemp(`part-${i}.csv`, [PAYMENTS_HEADER.join(','), ...lines.slice(i * 1000, (i + 1) * 1000)].join('\n') + '\n', dir))
  for (const part of parts) expect(statSync(part).size).toBeLessThanOrEqual(IN_THREAD_MAX_BYTES)

  const one = tempStore()
  await withStore(one, seedCatalog)
  const big = await runArgs(one, ['charges', 'import', whole, '--json'])
  const split = tempStore()
  await withStore(split, seedCatalog)
  for (const part of parts) expect((await runArgs(split, ['charges', 'import', part, '--json'])).code).toBe(big.code)
  expect(big.json).toMatchObject({inserted: rows - big.json.rejected, read: rows})
  expect(await withStore(split, (db) => dumpTable(db, 'charges'))).toEqual(await withStore(one, (db) => dumpTable(db, 'charges')))
})
