import Database from 'better-sqlite3'
import {copyFileSync, existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {dump, type StoreDump} from '../helpers/dump.js'
import {run} from '../helpers/run.js'
import {copyFixtureStore, fixtureExpected, paymentsCsv, startBin, subscriptionsCsv, tempDir, write} from './helpers.js'

/**
 * Crash safety (issue 7, item 3): an import killed with SIGKILL leaves a store that passes
 * `db check`, and running the same import again ends in exactly the store (and rejects file)
 * of an uninterrupted run. Each importer is killed once at each of its distinct points,
 * watched on the store rather than timed: a batched import (600 rows in batches of 100, six
 * commits) before its first commit (its stage files made, nothing committed), between commits
 * (half its rows in) and in its last batch (all but that batch in); `products import`, one
 * transaction, inside it (holding the write lock) and after its commit (not yet checkpointed).
 * Only the killed run is a process: the uninterrupted run, the check and the re-run run
 * in-process.
 */

const NOW = fixtureExpected().now
const ROWS = 600
const BATCH = 100

/** What a kill point watches, polled every few ms while the import runs. */
type Watch = {
  /** Another connection holds the store's write lock (a BEGIN IMMEDIATE here is busy). */
  locked(): boolean
  /** Rows of the importer's table committed by the run so far. */
  rows(): number
  /** The run has made its stage files (in its own temp folder). */
  staged(): boolean
}

/** `total`: the rows the uninterrupted run adds to the table. */
type KillPoint = {name: string; now: (w: Watch, total: number) => boolean}

type Importer = {
  args: (file: string) => string[]
  /** The file to import (a few bad rows where the importer keeps going). */
  content: () => string
  ext: string
  name: string
  points: KillPoint[]
  /** Rejects file written beside the input (gateway exports). */
  rejects: boolean
  table: 'charges' | 'products' | 'subscriptions'
}

/** A batched import's points: before its first commit, between two commits, in its last batch. */
const BATCHED: KillPoint[] = [
  {name: 'before the first commit', now: (w) => w.staged()},
  {name: 'between commits', now: (w, total) => w.rows() >= total / 2},
  // At least total - BATCH rows in: every batch but the last committed (no earlier batch gets there).
  {name: 'in the last batch', now: (w, total) => w.rows() >= total - BATCH},
]

function catalog(n: number): string {
  const products = Array.from({length: n}, (_, i) => ({
    api_id: `crash_${String(i).padStart(5, '0')}`,
    base_px: 5 + (i % 50),
    country_prices: [{amount: 4 + (i % 40), country: 'DE', currency: 'EUR'}, {amount: 600 + i, country: 'JP', currency: 'JPY'}],
    features: [{api_id: 'seats', feature_group: {api_id: `grp_${i % 7}`, description: 'group', name: `Group ${i % 7}`}, name: 'Seats', type: 'numeric', unit: 'seats', value: i % 9}],
    integrations: [{gateway_c_plan_id: `crash-plan-${i}`, type: 'gateway_c'}],
    interval: ['month', 'year', 'week'][i % 3],
    interval_count: 1,
    name: `Crash product ${i}`,
  }))
  return JSON.stringify(products)
}

const IMPORTERS: Importer[] = [
  // Bad rows in the first batch, in the middle and in the last one.
  {args: (f) => ['charges', 'import', f, '--batch-size', String(BATCH)], content: () => paymentsCsv(ROWS, {bad: [17, 250, 401, ROWS - 2]}), ext: 'csv', name: 'charges import', points: BATCHED, rejects: true, table: 'charges'},
  {args: (f) => ['subscriptions', 'import', f, '--batch-size', String(BATCH)], content: () => subscriptionsCsv(ROWS, {bad: [3, 300, ROWS - 1]}), ext: 'csv', name: 'subscriptions import', points: BATCHED, rejects: true, table: 'subscriptions'},
  {
    args: (f) => ['products', 'import', f],
    content: () => catalog(300),
    ext: 'json',
    name: 'products import',
    points: [
      {name: 'inside its transaction', now: (w) => w.locked()},
      {name: 'after its commit', now: (w) => w.rows() > 0},
    ],
    rejects: false,
    table: 'products',
  },
]

function count(db: string, table: string): number {
  const d = new Database(db, {readonly: true})
  try {
    return d.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number
  } finally {
    d.close()
  }
}

/** Poll `point` on the store (every 3 ms) while a run writes to it, and kill the run when it holds; returns a stop. */
function killAt(db: string, table: string, stages: string, point: KillPoint, total: number, kill: () => void): () => void {
  const start = count(db, table)
  const reader = new Database(db, {fileMustExist: true, readonly: true})
  const rows = reader.prepare(`SELECT count(*) FROM ${table}`).pluck()
  const writer = new Database(db, {fileMustExist: true, timeout: 0})
  const w: Watch = {
    locked() {
      try {
        writer.exec('BEGIN IMMEDIATE')
        writer.exec('ROLLBACK')
        return false
      } catch {
        return true
      }
    },
    rows: () => (rows.get() as number) - start,
    staged: () => readdirSync(stages).some((name) => name.startsWith('pricectl-import-')),
  }
  const timer = setInterval(() => {
    try {
      if (point.now(w, total)) {
        clearInterval(timer)
        kill()
      }
    } catch {}
  }, 3)
  return () => {
    clearInterval(timer)
    reader.close()
    writer.close()
  }
}

/** `db check` in-process: the kill is what needs a process, not the check. */
async function dbCheck(db: string): Promise<void> {
  const r = await run(db, ['db', 'check', '--json'])
  expect(r.code, r.stdout + r.stderr).toBe(0)
  expect(JSON.parse(r.stdout)).toMatchObject({foreign_key_violations: 0, integrity: 'ok', ok: true})
}

let fresh: string

beforeAll(async () => {
  // Set for the file (test/helpers/test-env.ts puts it back): the in-process runs read it.
  process.env.PRICECTL_NOW = NOW
  // The current schema, checked (so marked) once: a kill point that watches the write lock
  // sees the import's transaction, not an upgrade of the store.
  fresh = copyFixtureStore(tempDir('pricectl-crash-'), `v${SCHEMA_VERSION}.db`)
  await dbCheck(fresh)
})

describe('SIGKILL at each kind of point of an import, then the same import again', () => {
  for (const imp of IMPORTERS) {
    it(`${imp.name}: db check passes after each kill and the re-run ends in the uninterrupted store`, async () => {
      const content = imp.content()

      // The uninterrupted run: what every interrupted-then-resumed run must end in.
      const baseDir = tempDir('pricectl-crash-base-')
      const baseDb = join(baseDir, 'store.db')
      copyFileSync(fresh, baseDb)
      const baseFile = write(baseDir, `input.${imp.ext}`, content)
      const base = await run(baseDb, imp.args(baseFile))
      expect([0, 1], base.stderr).toContain(base.code)
      const expected: StoreDump = dump(baseDb)
      const expectedRejects = imp.rejects ? readFileSync(`${baseFile}.rejects.csv`, 'utf8') : undefined
      const total = count(baseDb, imp.table) - count(fresh, imp.table)
      expect(total).toBeGreaterThan(BATCH)

      let killedMidway = 0
      for (const point of imp.points) {
        const runDir = tempDir('pricectl-crash-run-')
        const db = join(runDir, 'store.db')
        copyFileSync(fresh, db)
        const file = write(runDir, `input.${imp.ext}`, content)
        // The run's own temp folder, where its stage files show.
        const stages = tempDir('pricectl-crash-tmp-')
        const job = startBin(imp.args(file), {env: {PRICECTL_DB: db, PRICECTL_NOW: NOW, TMPDIR: stages}})
        const stop = killAt(db, imp.table, stages, point, total, () => job.child.kill('SIGKILL'))
        const killed = await job.done
        stop()
        if (killed.signal === 'SIGKILL') killedMidway++
        const context = `${imp.name}, killed ${point.name} (${killed.signal ?? `exit ${killed.code}`})`
        if (process.env.CRASH_DEBUG) process.stderr.write(`${context}: ${count(db, imp.table) - count(fresh, imp.table)} of ${total} rows in\n`)

        await dbCheck(db).catch((error: Error) => {
          throw new Error(`${context}: ${error.message}`)
        })
        const again = await run(db, imp.args(file))
        expect(again.code, `${context}: ${again.stderr}`).toBe(base.code)
        const after = dump(db)
        // The history names the command line, and with it this run's input file.
        const expectedHere: StoreDump = {...expected, tables: {...expected.tables, changes: expected.tables.changes.map((c) => ({...c, command: String(c.command).replaceAll(baseFile, file)}))}}
        for (const t of Object.keys(expectedHere.tables)) expect(after.tables[t], `${context}: table ${t}`).toEqual(expectedHere.tables[t])
        expect(after, context).toEqual(expectedHere)
        if (expectedRejects !== undefined) {
          expect(existsSync(`${file}.rejects.csv`), context).toBe(true)
          expect(readFileSync(`${file}.rejects.csv`, 'utf8'), context).toBe(expectedRejects.replaceAll(baseFile, file))
        }
      }
      // Most kills really interrupted the import (the last point may come after its end).
      expect(killedMidway).toBeGreaterThanOrEqual(Math.ceil(imp.points.length / 2))
    }, 120_000)
  }
})
