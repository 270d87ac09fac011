import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {connectPg} from '../../src/store/postgres/client.js'
import type {PgDatabase} from '../helpers/postgres.js'
import {run} from '../helpers/run.js'
import {paymentsCsv} from './generate.js'
import {fixtureExpected, startBin, tempDir, write} from './helpers.js'
import {pgRevenueDump, pgStoreWithProducts} from './pg-helpers.js'

/**
 * Issue 18: a `charges import` into PostgreSQL (COPY into a staging table, merged per chunk,
 * a transaction per batch) killed with SIGKILL, then run again, ends in the store of one
 * uninterrupted import, with the same rejects file. It is killed once at each of its distinct
 * points, watched on the store: before its first commit (its stage files made, nothing
 * committed), between commits (after the first) and in its last batch (all but that batch
 * in); 1,000 rows in batches of 100. Records are compared by key: the `id` of a row is a
 * sequence's, and a sequence does not roll back with a killed batch. Only the killed run is
 * a process: the uninterrupted run and the re-runs run in-process.
 */

const NOW = fixtureExpected().now
const ROWS = 1000
const BATCH = 100
const ARGS = (file: string) => ['charges', 'import', file, '--batch-size', String(BATCH)]

/** `total`: the charges an uninterrupted run stores. */
type KillPoint = {name: string; now: (w: {charges(): Promise<number>; staged(): boolean}, total: number) => boolean | Promise<boolean>}

const POINTS: KillPoint[] = [
  {name: 'before the first commit', now: (w) => w.staged()},
  // The first commit seen: a poll of the server lags a few batches behind, so a later mark
  // (half the rows) can come too late.
  {name: 'between commits', now: async (w) => (await w.charges()) > 0},
  // At least total - BATCH charges in: every batch but the last committed (no earlier batch gets there).
  {name: 'in the last batch', now: async (w, total) => (await w.charges()) >= total - BATCH},
]

/** Poll `point` (every few ms) while a run writes to `url`, and kill the run when it holds; returns a stop. */
function killAt(url: string, stages: string, point: KillPoint, total: number, kill: () => void): () => void {
  const pg = connectPg(url)
  const w = {
    charges: async () => (await pg.query<{n: number}>('SELECT count(*)::int AS n FROM charges'))[0].n,
    staged: () => readdirSync(stages).some((name) => name.startsWith('pricectl-import-')),
  }
  // One poll at a time: a poll waits for its answer before the next one is sent.
  let polling = false
  const poll = async () => {
    try {
      if (await point.now(w, total)) {
        clearInterval(timer)
        kill()
      }
    } catch {
    } finally {
      polling = false
    }
  }
  const timer = setInterval(() => {
    if (polling) return
    polling = true
    void poll()
  }, 5)
  return () => {
    clearInterval(timer)
    void pg.close()
  }
}

describe('PostgreSQL: SIGKILL a charges import at each kind of point, then the same import again', () => {
  it('every re-run converges to the store (and rejects) of an uninterrupted import', async () => {
    // Bad rows in the first batch, in the middle and in the last one.
    const content = paymentsCsv(ROWS, {bad: [17, 499, 801, ROWS - 2]})
    process.env.PRICECTL_NOW = NOW
    const dbs: PgDatabase[] = []
    try {
      const baseDb = await pgStoreWithProducts()
      dbs.push(baseDb)
      const baseDir = tempDir('pricectl-pgkill-base-')
      const baseFile = write(baseDir, 'payments.csv', content)
      const baseResult = await run(baseDb.url, ARGS(baseFile))
      expect(baseResult.code, baseResult.stderr).toBe(1) // the bad rows are rejected
      const expected = await pgRevenueDump(baseDb.url)
      expect(expected.counts.charges).toBe(ROWS - 4)
      const expectedRejects = readFileSync(`${baseFile}.rejects.csv`, 'utf8')

      let killedMidway = 0
      let partial = 0
      for (const point of POINTS) {
        const db = await pgStoreWithProducts()
        dbs.push(db)
        const file = write(tempDir('pricectl-pgkill-run-'), 'payments.csv', content)
        // The run's own temp folder, where its stage files show.
        const stages = tempDir('pricectl-pgkill-tmp-')
        const job = startBin(ARGS(file), {env: {PRICECTL_DB: db.url, PRICECTL_NOW: NOW, TMPDIR: stages}})
        const stop = killAt(db.url, stages, point, expected.counts.charges, () => job.child.kill('SIGKILL'))
        const killed = await job.done
        stop()
        if (killed.signal === 'SIGKILL') killedMidway++
        const left = (await pgRevenueDump(db.url)).counts.charges
        if (left > 0 && left < expected.counts.charges) partial++
        const context = `killed ${point.name} (${killed.signal ?? `exit ${killed.code}`}), ${left} of ${expected.counts.charges} charges then`
        if (process.env.CRASH_DEBUG) process.stderr.write(`${context}\n`)

        const again = await run(db.url, ARGS(file))
        expect(again.code, `${context}: ${again.stderr}`).toBe(baseResult.code)
        const after = await pgRevenueDump(db.url)
        expect(after.counts, context).toEqual(expected.counts)
        expect(after.charges, context).toEqual(expected.charges)
        expect(existsSync(`${file}.rejects.csv`), context).toBe(true)
        expect(readFileSync(`${file}.rejects.csv`, 'utf8'), context).toBe(expectedRejects.replaceAll(baseFile, file))
      }
      // Most kills really interrupted the import (the last point may come after its end).
      expect(killedMidway).toBeGreaterThanOrEqual(Math.ceil(POINTS.length / 2))
      // And at least one left committed batches behind: the re-run resumed, it did not start over.
      expect(partial).toBeGreaterThanOrEqual(1)
    } finally {
      for (const db of dbs) await db.drop()
    }
  }, 240_000)
})
