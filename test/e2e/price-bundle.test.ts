import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {WORKERS} from '../../src/workers.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {e2eDir, e2eSeeded, e2eStore, itWithoutStore, onPostgres} from '../helpers/e2e.js'
import {ROOT, type Run, runBin} from '../helpers/run.js'

/** The files a file of the price bundle imports when it loads (its static imports, followed). */
function startFiles(entry = join(ROOT, 'dist', 'commands', 'price', 'index.js')): Set<string> {
  const imported = new Set<string>()
  const walk = (file: string) => {
    if (imported.has(file)) return
    imported.add(file)
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|[;\s}])import\s*(?:[\w{},\s$*]*from\s*)?"(\.{1,2}\/[^"]+)"/g)) walk(join(file, '..', m[1]))
  }
  walk(entry)
  return imported
}

// docs/performance.md "Cold start": a cold `price` validates by hand, so zod and the price schemas load on first use.
describe('the price bundle', () => {
  itWithoutStore('loads no zod at start: the schemas are an entry of their own, sharing the bundle\'s modules', () => {
    const files = startFiles()
    expect(files.size).toBeGreaterThan(1)
    for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toContain('"ZodObject"')
    const schemas = startFiles(join(ROOT, 'dist', 'bundle', 'price-schemas.js'))
    expect([...schemas].filter((file) => readFileSync(file, 'utf8').includes('"ZodObject"'))).toHaveLength(1)
    // One copy of a module per process: what the schemas import of the engine is the command's own chunks.
    expect([...schemas].filter((file) => files.has(file)).length).toBeGreaterThan(0)
  })

  it.each([
    ['loaded on first use', {}],
    ['loaded at start by a node without require(esm)', {NODE_OPTIONS: '--no-experimental-require-module'}],
  ])('gives the schema errors of a request the fast path does not take (%s)', async (_, env) => {
    const r = runBin(await e2eStore(), ['price', '-u', 'u1', '-p', 'pro_monthly', '--coupon', 'pro_monthly= bad', '--json'], {env})
    expect(r.code).toBe(2)
    expect(r.json).toMatchObject({success: false})
    expect(r.json.message).toContain('coupons.pro_monthly: expected "coupon1,coupon2"')
  })
})

type RecordedWorker = {errors: string[]; file: string; signal?: number[]}

/**
 * `price --input` on a store with one product, through bin/run.js, with the worker threads
 * it starts recorded (test/helpers/record-workers.mjs): the file each ran and its shared flags at exit.
 */
async function batchWithWorkers(userIds: string[]): Promise<{run: Run; workers: RecordedWorker[]}> {
  // The store with the product is made once and copied (test/helpers/e2e.ts e2eSeeded): the batch is the process here.
  const db = await e2eSeeded('pro_monthly', (file) => createProducts(file, [CATALOG.find((p) => p.api_id === 'pro_monthly')!]))
  const dir = e2eDir()
  const countries = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP']
  writeFileSync(join(dir, 'requests.jsonl'), userIds.map((id, i) => JSON.stringify({country: countries[i % countries.length], products: ['pro_monthly'], user_id: id}) + '\n').join(''))
  const record = join(dir, 'workers.jsonl')
  writeFileSync(record, '')
  const run = runBin(db, ['price', '--input', join(dir, 'requests.jsonl')], {
    env: {NODE_OPTIONS: `--import ${join(ROOT, 'test', 'helpers', 'record-workers.mjs')}`, PRICECTL_RECORD_WORKERS: record},
  })
  const workers = readFileSync(record, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as RecordedWorker)
  return {run, workers}
}

const priced = (run: Run) => run.stdout.trim().split('\n').filter((line) => (JSON.parse(line) as {success?: boolean}).success === true).length

// The workers' code is modules of src/ (src/workers.ts): built, dist/src/NAME.js, which the
// price bundle (a file elsewhere in dist/) must find.
describe('the price bundle runs its workers from dist/src/', () => {
  itWithoutStore('every worker module is built', () => {
    for (const name of WORKERS) expect(existsSync(join(ROOT, 'dist', 'src', `${name}.js`)), name).toBe(true)
  })

  it.skipIf(onPostgres)('a batch of new users writes behind (groups 2 and 3 committed by the writer thread)', async () => {
    const {run, workers} = await batchWithWorkers(Array.from({length: 15_000}, (_, i) => `u-${i}`))
    expect(run.code).toBe(0)
    expect(priced(run)).toBe(15_000)
    expect(workers).toEqual([{errors: [], file: expect.stringMatching(/\/dist\/src\/store\/sqlite\/write-behind-worker\.js$/), signal: [1, 2, 0, 1, 1]}])
  })

  it.skipIf(onPostgres)('a batch whose write-behind ends (a user twice in a group) checkpoints on the checkpointer thread', async () => {
    const {run, workers} = await batchWithWorkers(Array.from({length: 15_000}, (_, i) => `u-${i === 7000 ? 6000 : i}`))
    expect(run.code).toBe(0)
    expect(priced(run)).toBe(15_000)
    expect(workers.map((w) => w.file.slice(w.file.lastIndexOf('/dist/')))).toEqual(['/dist/src/store/sqlite/write-behind-worker.js', '/dist/src/store/sqlite/checkpointer-worker.js'])
    expect(workers.map((w) => w.errors)).toEqual([[], []])
    // The writer started and committed nothing; the checkpointer was asked for checkpoints, and stopped.
    expect(workers[0].signal).toEqual([1, 0, 0, 1, 1])
    expect(workers[1].signal?.[0]).toBeGreaterThan(0)
    expect(workers[1].signal?.slice(1)).toEqual([1, 1])
  })

  it.runIf(onPostgres)('the PostgreSQL client does not load fetch (undici) for pg\'s Cloudflare check', async () => {
    // The built client (dist/src/store/postgres/client.ts) connected and answering: the modules Node loaded.
    const script = `
      const {connectPg} = await import(${JSON.stringify(join(ROOT, 'dist', 'src', 'store', 'postgres', 'client.js'))})
      const pg = connectPg(${JSON.stringify(await e2eStore())})
      await pg.query('SELECT 1')
      await pg.close()
      console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))))`
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {cwd: ROOT, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('[]')
  })

  it.runIf(onPostgres)('a batch on PostgreSQL starts no thread for its queries', async () => {
    const {run, workers} = await batchWithWorkers(Array.from({length: 200}, (_, i) => `u-${i}`))
    expect(run.code).toBe(0)
    expect(priced(run)).toBe(200)
    expect(workers.filter((w) => w.file.includes('/store/postgres/'))).toEqual([])
  })
})
