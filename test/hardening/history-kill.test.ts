import Database from 'better-sqlite3'
import {copyFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {ROOT, run} from '../helpers/run.js'
import {copyFixtureStore, fixtureExpected, startBin, tempDir, write} from './helpers.js'

/**
 * Issue 15: a change and its history entry land together or not at all. A `products import`
 * of 2,000 products through bin/run.js is killed with SIGKILL at each of its distinct points,
 * watched on the store: as its write transaction takes the write lock, once the transaction
 * spills pages into the WAL, deep into it (512 KB of WAL), and after its commit. The two WAL
 * points are the process's own kill from inside the transaction (test/helpers/
 * kill-in-transaction.mjs): the whole transaction is a few milliseconds on a fast disk, too
 * short for a watcher outside the process to land in. Afterwards
 * `db check` passes, every change has its rows, and the products the store holds beyond the
 * fixture are exactly the ones the history says were inserted, with their country prices.
 * The last point also stands for the uninterrupted run (it is one, as far as the store can
 * tell): the whole import, recorded as one change. The checks run in-process.
 */

const NOW = fixtureExpected(`v${SCHEMA_VERSION}`).now

function catalog(n: number): string {
  return JSON.stringify(
    Array.from({length: n}, (_, i) => ({
      api_id: `kill_${String(i).padStart(5, '0')}`,
      base_px: 5 + (i % 50),
      country_prices: [{amount: 4 + (i % 40), country: 'DE', currency: 'EUR'}, {amount: 600 + i, country: 'JP', currency: 'JPY'}],
      integrations: [{gateway_c_plan_id: `kill-plan-${i}`, type: 'gateway_c'}],
      interval: ['month', 'year', 'week'][i % 3],
      interval_count: 1,
      name: `Kill product ${i}`,
    })),
  )
}

type State = {changeRows: number; changes: number; countryPrices: number; products: number}

function state(db: string): State {
  const d = new Database(db, {fileMustExist: true})
  try {
    const n = (sql: string) => (d.prepare(sql).get() as {n: number}).n
    return {
      changeRows: n('SELECT count(*) AS n FROM change_rows'),
      changes: n('SELECT count(*) AS n FROM changes'),
      countryPrices: n('SELECT count(*) AS n FROM country_prices'),
      products: n('SELECT count(*) AS n FROM products'),
    }
  } finally {
    d.close()
  }
}

/** Every change has rows; every product beyond the fixture's has its inserted row in the history, and no other. */
function expectConsistent(db: string, fixture: State, context: string): 'absent' | 'present' {
  const d = new Database(db, {fileMustExist: true})
  try {
    expect(d.prepare('SELECT id FROM changes WHERE NOT EXISTS (SELECT 1 FROM change_rows r WHERE r.change_id = changes.id)').all(), `${context}: changes without rows`).toEqual([])
    expect(d.pragma('foreign_key_check'), context).toEqual([])
    const stored = (d.prepare("SELECT api_id FROM products WHERE api_id LIKE 'kill_%' ORDER BY api_id").pluck().all() as string[])
    const recorded = d
      .prepare(`SELECT json_extract(after, '$.api_id') FROM change_rows WHERE table_name = 'products' AND before IS NULL AND json_extract(after, '$.api_id') LIKE 'kill_%' ORDER BY 1`)
      .pluck()
      .all() as string[]
    expect(recorded, `${context}: products in the history = products in the store`).toEqual(stored)
    const prices = (d.prepare("SELECT count(*) FROM country_prices WHERE product_id IN (SELECT id FROM products WHERE api_id LIKE 'kill_%')").pluck().get() as number)
    const recordedPrices = d.prepare("SELECT count(*) FROM change_rows WHERE table_name = 'country_prices' AND change_id > ? AND before IS NULL").pluck().get(fixture.changes) as number
    expect(recordedPrices, `${context}: country prices in the history = in the store`).toBe(prices)
    if (stored.length === 0) {
      expect(state(db), `${context}: nothing of the import`).toEqual(fixture)
      return 'absent'
    }
    expect(stored, context).toHaveLength(2000)
    expect(state(db).changes, context).toBe(fixture.changes + 1)
    return 'present'
  } finally {
    d.close()
  }
}

/** `db check` in-process: the kill is what needs a process, not the check. */
async function dbCheck(db: string, context: string): Promise<void> {
  const r = await run(db, ['db', 'check', '--json'])
  expect(r.code, `${context}: ${r.stdout}${r.stderr}`).toBe(0)
  expect(r.json, context).toMatchObject({foreign_key_violations: 0, integrity: 'ok', ok: true})
}

/** Whether another connection holds the store's write lock (a BEGIN IMMEDIATE of `probe` is busy). */
function locked(probe: Database.Database): boolean {
  try {
    probe.exec('BEGIN IMMEDIATE')
    probe.exec('ROLLBACK')
    return false
  } catch {
    return true
  }
}

describe('SIGKILL while a recorded write runs', () => {
  it('products import: each change and its history rows are both present or both absent', async () => {
    const dir = tempDir('pricectl-history-kill-')
    const fresh = copyFixtureStore(dir, `v${SCHEMA_VERSION}.db`)
    // Checked (so marked) once: the write lock a kill point watches is the import's.
    await dbCheck(fresh, 'the fixture')
    const fixture = state(fresh)
    const file = write(dir, 'catalog.json', catalog(2000))
    const env = {PRICECTL_DB: '', PRICECTL_NOW: NOW}

    /** Watched from the test (`probe`: a connection of the test's to the store the run writes), or the run's own kill at `walBytes` of its transaction in the WAL. */
    type Point = {name: string; now?: (probe: Database.Database) => boolean; walBytes?: number}
    const products = (probe: Database.Database) => probe.prepare('SELECT count(*) FROM products').pluck().get() as number
    const points: Point[] = [
      {name: 'as the transaction takes the write lock', now: (probe) => locked(probe)},
      {name: 'once the transaction spills pages into the WAL', walBytes: 0},
      {name: 'with 512 KB of the transaction in the WAL', walBytes: 512 * 1024},
      {name: 'after the commit', now: (probe) => products(probe) > fixture.products},
    ]
    const selfKill = (walBytes: number) => ({NODE_OPTIONS: `--import ${join(ROOT, 'test', 'helpers', 'kill-in-transaction.mjs')}`, PRICECTL_KILL_AT_WAL_BYTES: String(walBytes)})
    const outcomes: string[] = []
    let killedMidway = 0
    for (const [k, point] of points.entries()) {
      const db = join(dir, `run-${k}.db`)
      copyFileSync(fresh, db)
      const probe = new Database(db, {fileMustExist: true, timeout: 0})
      const job = startBin(['products', 'import', file], {env: {...env, PRICECTL_DB: db, ...(point.walBytes === undefined ? {} : selfKill(point.walBytes))}})
      const timer = setInterval(() => {
        try {
          if (point.now?.(probe)) {
            clearInterval(timer)
            job.child.kill('SIGKILL')
          }
        } catch {}
      }, 2)
      const r = await job.done
      clearInterval(timer)
      probe.close()
      if (r.signal === 'SIGKILL') killedMidway++
      else expect(r.code, r.stderr).toBe(0)
      const context = `kill ${point.name} (${r.signal ?? `exit ${r.code}`})`
      await dbCheck(db, context)
      outcomes.push(`${context}: ${expectConsistent(db, fixture, context)}`)
    }
    // The last point may come after the end of the run.
    expect(killedMidway, outcomes.join('; ')).toBeGreaterThanOrEqual(3)
    // The kills that watched the WAL landed inside the write transaction: nothing committed.
    expect(outcomes.slice(1, 3).every((o) => o.endsWith('absent')), outcomes.join('; ')).toBe(true)
    // After the commit (killed or run to its end): the import is there, recorded as one change.
    expect(outcomes[3], outcomes.join('; ')).toMatch(/present$/)
    if (process.env.CRASH_DEBUG) process.stderr.write(`${outcomes.join('\n')}\n`)
  }, 180_000)
})
