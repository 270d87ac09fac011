import Database from 'better-sqlite3'
import {copyFileSync, existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {dump, type StoreDump} from '../helpers/dump.js'
import {run as runInProcess} from '../helpers/run.js'
import {type ChildResult, copyFixtureStore, fixtureExpected, paymentsCsv, rng, startBin, subscriptionsCsv, tempDir, write} from './helpers.js'

/**
 * Crash safety (issue 7, item 3): an import killed with SIGKILL at a random point leaves
 * a store that passes `db check`, and running the same import again ends in exactly the
 * store (and rejects file) of an uninterrupted run. Kill points are seeded and spread
 * over the run's duration. Small batches give the kills about forty commits to fall between
 * (what the test is about) without importing tens of thousands of rows each time.
 */

const KILLS = Number(process.env.CRASH_KILLS ?? 4)
const NOW = fixtureExpected().now

type Importer = {
  args: (file: string) => string[]
  /** The file to import (a few bad rows where the importer keeps going). */
  content: () => string
  ext: string
  name: string
  /** Rejects file written beside the input (gateway exports). */
  rejects: boolean
  /** The table a batch commits rows to: the k-th kill lands after the k-th slice of them (else after a slice of the run's time). */
  table?: 'charges' | 'subscriptions'
}

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
  {args: (f) => ['charges', 'import', f, '--batch-size', '100'], content: () => paymentsCsv(4_000, {bad: [17, 999, 2_501, 3_998]}), ext: 'csv', name: 'charges import', rejects: true, table: 'charges'},
  {args: (f) => ['subscriptions', 'import', f, '--batch-size', '100'], content: () => subscriptionsCsv(4_000, {bad: [3, 2_000, 3_999]}), ext: 'csv', name: 'subscriptions import', rejects: true, table: 'subscriptions'},
  {args: (f) => ['products', 'import', f], content: () => catalog(2000), ext: 'json', name: 'products import', rejects: false},
]

function run(db: string, args: string[]): {done: Promise<ChildResult>; kill: () => void; started: number} {
  const job = startBin(args, {env: {PRICECTL_DB: db, PRICECTL_NOW: NOW}})
  return {done: job.done, kill: () => job.child.kill('SIGKILL'), started: Date.now()}
}

function committed(db: string, table: string): number {
  const d = new Database(db, {readonly: true})
  try {
    return (d.prepare(`SELECT count(*) AS n FROM ${table}`).get() as {n: number}).n
  } finally {
    d.close()
  }
}

/** Kill once the store holds more than `rows` rows of `table` beyond what it held (polled every few ms); returns a stop. */
function killAfterRows(db: string, table: string, rows: number, kill: () => void): () => void {
  const start = committed(db, table)
  const reader = new Database(db, {fileMustExist: true, readonly: true})
  const count = reader.prepare(`SELECT count(*) AS n FROM ${table}`).pluck()
  const timer = setInterval(() => {
    try {
      if ((count.get() as number) - start > rows) kill()
    } catch {}
  }, 3)
  return () => {
    clearInterval(timer)
    reader.close()
  }
}

/** `db check` in-process: the kill is what needs a process, not the check. */
async function dbCheck(db: string): Promise<void> {
  const r = await runInProcess(db, ['db', 'check', '--json'])
  expect(r.code, r.stdout + r.stderr).toBe(0)
  expect(JSON.parse(r.stdout)).toMatchObject({foreign_key_violations: 0, integrity: 'ok', ok: true})
}

describe('SIGKILL at random points of an import, then the same import again', () => {
  for (const imp of IMPORTERS) {
    it(`${imp.name}: db check passes after each kill and the re-run ends in the uninterrupted store`, async () => {
      const dir = tempDir('pricectl-crash-')
      // The current schema: a migration in every run would take the time the kills should land in.
      const fresh = copyFixtureStore(dir, `v${SCHEMA_VERSION}.db`)
      const content = imp.content()

      // The uninterrupted run: what every interrupted-then-resumed run must end in.
      const baseDir = tempDir('pricectl-crash-base-')
      const baseDb = join(baseDir, 'store.db')
      copyFileSync(fresh, baseDb)
      const baseFile = write(baseDir, `input.${imp.ext}`, content)
      const base = run(baseDb, imp.args(baseFile))
      const baseResult = await base.done
      const duration = Date.now() - base.started
      expect([0, 1], baseResult.stderr).toContain(baseResult.code)
      const expected: StoreDump = dump(baseDb)
      const expectedRejects = imp.rejects ? readFileSync(`${baseFile}.rejects.csv`, 'utf8') : undefined

      // Start-up (node, oclif, opening the store) takes a good part of a run: timed kill
      // points are spread over the time after it, where the import reads and writes.
      let boot = 0
      if (!imp.table) {
        const probe = Date.now()
        await startBin(['db', 'info', '--json'], {env: {PRICECTL_DB: baseDb}}).done
        boot = Math.min(Date.now() - probe, duration * 0.5)
      }

      const next = rng(imp.name.length * 7919)
      let killedMidway = 0
      for (let k = 0; k < KILLS; k++) {
        const runDir = tempDir('pricectl-crash-run-')
        const db = join(runDir, 'store.db')
        copyFileSync(fresh, db)
        const file = write(runDir, `input.${imp.ext}`, content)
        // The k-th kill lands in the k-th slice of the work after start-up: of the rows a
        // batched import commits (whatever the machine's speed), else of the run's time.
        const share = (k + next()) / KILLS
        const at = Math.round(boot + share * (duration - boot) * 0.97)
        const job = run(db, imp.args(file))
        const timer = imp.table ? undefined : setTimeout(job.kill, at)
        const stop = imp.table ? killAfterRows(db, imp.table, Math.round(share * (committed(baseDb, imp.table) - committed(fresh, imp.table))), job.kill) : undefined
        const killed = await job.done
        clearTimeout(timer)
        stop?.()
        if (killed.signal === "SIGKILL") killedMidway++
        if (process.env.CRASH_DEBUG) process.stderr.write(`${imp.name}: kill at ${at}/${duration} ms -> ${killed.signal ?? killed.code}, store rows ${JSON.stringify(Object.fromEntries(Object.entries(dump(db).tables).filter(([t]) => ["charges", "subscriptions", "products"].includes(t)).map(([t, r]) => [t, r.length])))}\n`)
        const context = `${imp.name}, kill ${k + 1} at ${at} ms of ${duration} ms (${killed.signal ?? `exit ${killed.code}`})`

        await dbCheck(db).catch((error: Error) => {
          throw new Error(`${context}: ${error.message}`)
        })
        const again = await run(db, imp.args(file)).done
        expect(again.code, `${context}: ${again.stderr}`).toBe(baseResult.code)
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
      // Most kills really interrupted the import (not all can: a slice may fall after its end).
      expect(killedMidway).toBeGreaterThanOrEqual(Math.ceil(KILLS / 2))
    }, 180_000)
  }
})
