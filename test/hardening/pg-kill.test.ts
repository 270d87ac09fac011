import {existsSync, readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {connectPg} from '../../src/store/postgres/client.js'
import type {PgDatabase} from '../helpers/postgres.js'
import {paymentsCsv, rng} from './generate.js'
import {type ChildResult, fixtureExpected, startBin, tempDir, write} from './helpers.js'
import {pgRevenueDump, pgStoreWithProducts} from './pg-helpers.js'

/**
 * Issue 18: a `charges import` into PostgreSQL (COPY into a staging table, merged per chunk,
 * a transaction per batch) killed with SIGKILL while it copies, then run again, ends in
 * the store of one uninterrupted import, with the same rejects file. Kill points are seeded
 * and spread over the rows the import commits (the k-th kill lands once the store holds a
 * k-th slice of them, whatever the machine's speed), between the batch's COPY and merge of
 * the next chunk. Records are compared by key: the `id` of a
 * row is a sequence's, and a sequence does not roll back with a killed batch.
 */

const KILLS = Number(process.env.PG_KILLS ?? 3)
const NOW = fixtureExpected().now
const ARGS = (file: string) => ['charges', 'import', file, '--batch-size', '200']

function run(url: string, file: string): {done: Promise<ChildResult>; kill: () => void} {
  const job = startBin(ARGS(file), {env: {PRICECTL_DB: url, PRICECTL_NOW: NOW}})
  return {done: job.done, kill: () => job.child.kill('SIGKILL')}
}

/** Kill once the store holds more than `rows` charges (polled every few ms); returns a stop. */
function killAfterRows(url: string, rows: number, kill: () => void): () => void {
  const pg = connectPg(url)
  const timer = setInterval(() => {
    try {
      if (pg.query<{n: number}>('SELECT count(*)::int AS n FROM charges')[0].n > rows) kill()
    } catch {}
  }, 5)
  return () => {
    clearInterval(timer)
    pg.close()
  }
}

describe('PostgreSQL: SIGKILL a charges import mid-COPY, then the same import again', () => {
  it('every re-run converges to the store (and rejects) of an uninterrupted import', async () => {
    const content = paymentsCsv(4_000, {bad: [17, 999, 2_501, 3_998]})
    const dbs: PgDatabase[] = []
    try {
      const baseDb = pgStoreWithProducts()
      dbs.push(baseDb)
      const baseDir = tempDir('pricectl-pgkill-base-')
      const baseFile = write(baseDir, 'payments.csv', content)
      const baseResult = await run(baseDb.url, baseFile).done
      expect(baseResult.code, baseResult.stderr).toBe(1) // the bad rows are rejected
      const expected = pgRevenueDump(baseDb.url)
      expect(expected.counts.charges).toBe(4_000 - 4)
      const expectedRejects = readFileSync(`${baseFile}.rejects.csv`, 'utf8')

      const next = rng(18)
      let killedMidway = 0
      let partial = 0
      for (let k = 0; k < KILLS; k++) {
        const db = pgStoreWithProducts()
        dbs.push(db)
        const file = write(tempDir('pricectl-pgkill-run-'), 'payments.csv', content)
        const at = Math.round(((k + next()) / KILLS) * expected.counts.charges)
        const job = run(db.url, file)
        const stop = killAfterRows(db.url, at, job.kill)
        const killed = await job.done
        stop()
        if (killed.signal === 'SIGKILL') killedMidway++
        const left = pgRevenueDump(db.url).counts.charges
        if (left > 0 && left < expected.counts.charges) partial++
        const context = `kill ${k + 1} after ${at} of ${expected.counts.charges} charges (${killed.signal ?? `exit ${killed.code}`}), ${left} charges then`

        const again = await run(db.url, file).done
        expect(again.code, `${context}: ${again.stderr}`).toBe(baseResult.code)
        const after = pgRevenueDump(db.url)
        expect(after.counts, context).toEqual(expected.counts)
        expect(after.charges, context).toEqual(expected.charges)
        expect(existsSync(`${file}.rejects.csv`), context).toBe(true)
        expect(readFileSync(`${file}.rejects.csv`, 'utf8'), context).toBe(expectedRejects.replaceAll(baseFile, file))
      }
      // Most kills really interrupted the import (a slice may fall after its end).
      expect(killedMidway).toBeGreaterThanOrEqual(Math.ceil(KILLS / 2))
      // And at least one left committed batches behind: the re-run resumed, it did not start over.
      expect(partial).toBeGreaterThanOrEqual(1)
    } finally {
      for (const db of dbs) db.drop()
    }
  }, 240_000)
})
