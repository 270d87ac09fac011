import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {demoDir, loadDemo} from '../../src/demo.js'
import {
  ConflictError,
  importCharges,
  importSubscriptions,
  InvalidInputError,
  NotFoundError,
  OperationalError,
  openStore,
  previewPrices,
  price,
  type PriceOutcome,
  type PriceRequest,
  priceMany,
  PricectlError,
  revenueReport,
  type Store,
} from '../../src/index.js'
import {openSqliteStore as openEngineStore} from '../../src/store/db.js'
import {seedCatalog} from '../helpers/revenue-fixtures.js'
import {ROOT} from '../helpers/run.js'

/**
 * The library entry (src/index.ts) in-process, against a real SQLite store in a temp folder:
 * every exported function, its spec-shaped result, its typed errors, and that nothing is
 * written to stdout or stderr (the library never prints).
 */

const FIXTURES = join(ROOT, 'fixtures', 'imports')

let dir: string
let path: string
let store: Store
const written: string[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pricectl-library-'))
  path = join(dir, 'store.db')
  const seed = openEngineStore(path)
  await loadDemo(seed, demoDir(ROOT))
  await seed.close()
  store = openStore(path)
})

afterAll(async () => await store.close())

// The library never prints: every write to stdout or stderr during a test is a failure.
beforeEach(() => {
  written.length = 0
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk))
      return true
    })
  }
})
afterEach(() => {
  vi.restoreAllMocks()
  expect(written).toEqual([])
})

describe('openStore', () => {
  it('opens (creating) a store and refuses a closed handle', async () => {
    const other = openStore(join(dir, 'new', 'other.db'))
    expect(other.path).toBe(join(dir, 'new', 'other.db'))
    expect(other.closed).toBe(false)
    expect(other.readOnly).toBeUndefined()
    await other.close()
    await other.close() // twice is fine
    expect(other.closed).toBe(true)
    await expect(price(other, {products: ['x'], user_id: 'u'})).rejects.toThrow(/is closed: open it again with openStore/)
    await expect(async () => await revenueReport(other)).rejects.toThrow(OperationalError)
  })

  it('refuses a path that is not a string, and a file that is not a store', () => {
    expect(() => openStore('')).toThrow(InvalidInputError)
    const notStore = join(dir, 'notes.txt')
    writeFileSync(notStore, 'hello, not SQLite\n'.repeat(10))
    const error = catchError(() => openStore(notStore))
    expect(error).toBeInstanceOf(PricectlError)
    expect((error as PricectlError).exitCode).toBe(1)
  })
})

describe('price', () => {
  it('prices and locks a quote, spec-shaped', async () => {
    const r = await price(store, {country: 'DE', products: ['pro_monthly'], user_id: 'lib_u1'})
    expect(r.success).toBe(true)
    expect(r).toMatchObject({country: 'DE', currency: 'EUR', user_id: 'lib_u1'})
    expect(Object.keys(r.products)).toEqual(['pro_monthly'])
    // Locked: asking for another country returns the same quote.
    const again = await price(store, {country: 'FR', products: ['pro_monthly'], user_id: 'lib_u1'})
    expect(again).toEqual(r)
  })

  it('throws typed errors with their exit code meaning', async () => {
    const bad = await price(store, {products: ['pro_monthly']} as PriceRequest).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(InvalidInputError)
    expect((bad as InvalidInputError).exitCode).toBe(2)
    expect((bad as Error).message).toMatch(/user_id/)
    const unknown = await price(store, {products: ['no_such_product'], user_id: 'lib_u2'}).catch((e: unknown) => e)
    expect(unknown).toBeInstanceOf(NotFoundError)
    expect((unknown as NotFoundError).exitCode).toBe(1)
    expect((unknown as Error).message).toMatch(/no_such_product/)
    expect([NotFoundError, ConflictError, OperationalError].every((c) => c.prototype instanceof PricectlError)).toBe(true)
  })
})

describe('priceMany', () => {
  const requests: PriceRequest[] = [
    {country: 'IN', products: ['basic_monthly'], user_id: 'lib_b1'},
    {products: ['basic_monthly']} as PriceRequest,
    {country: 'JP', products: ['basic_monthly', 'pro_monthly'], user_id: 'lib_b2'},
  ]

  it('prices an array with the batch pricer: one outcome per request, in order, failures in their slot', async () => {
    const r = await priceMany(store, requests)
    expect({failed: r.failed, priced: r.priced, read: r.read}).toEqual({failed: 1, priced: 2, read: 3})
    expect(r.results.map((o) => o.success)).toEqual([true, false, true])
    expect(r.results[1]).toMatchObject({index: 1, success: false})
    expect((r.results[1] as {message: string}).message).toMatch(/user_id/)
    const [first, , third] = r.results as [Extract<PriceOutcome, {success: true}>, unknown, Extract<PriceOutcome, {success: true}>]
    expect(first).toMatchObject({country: 'IN', currency: 'INR', user_id: 'lib_b1'})
    expect(Object.keys(third.products)).toEqual(['basic_monthly', 'pro_monthly'])
    // The quotes are locked: a single price returns the same.
    expect(await price(store, requests[0]!)).toEqual(first)
  })

  it('takes an async iterable and streams outcomes to onResult (awaited) instead of gathering them', async () => {
    async function* generate() {
      for (let i = 0; i < 7; i++) yield {country: 'BR', products: ['basic_monthly'], user_id: `lib_s${i}`}
    }
    const seen: number[] = []
    const r = await priceMany(store, generate(), {
      batchSize: 3,
      async onResult(outcome, index) {
        await new Promise((resolve) => setTimeout(resolve, 1))
        expect(outcome.success).toBe(true)
        seen.push(index)
      },
    })
    expect(r).toMatchObject({failed: 0, priced: 7, read: 7, results: []})
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6])
  })

  it('refuses what is not a list of requests and a bad batch size', async () => {
    await expect(priceMany(store, 42 as unknown as PriceRequest[])).rejects.toThrow(InvalidInputError)
    await expect(priceMany(store, [], {batchSize: 0})).rejects.toThrow(/batchSize/)
    expect(await priceMany(store, [])).toEqual({failed: 0, priced: 0, read: 0, results: []})
  })
})

describe('previewPrices', () => {
  it('prices products x countries without writing, and compares with a snapshot', async () => {
    const r = await previewPrices(store, {countries: ['de', 'US'], products: ['basic_monthly', 'pro_monthly']})
    expect(r.success).toBe(true)
    expect(r.comparison).toBeUndefined()
    expect(r.rows.map((row) => `${row.product} ${row.country}`)).toEqual(['basic_monthly DE', 'basic_monthly US', 'pro_monthly DE', 'pro_monthly US'])

    const snapshot = join(dir, 'prices.json')
    writeFileSync(snapshot, JSON.stringify({rows: r.rows}))
    const same = await previewPrices(store, {against: snapshot, countries: ['DE', 'US'], products: ['basic_monthly', 'pro_monthly']})
    expect(same.comparison).toMatchObject({against: snapshot, changes: [], failed: 0, passed: true, tolerance: '0'})

    const moved = r.rows.map((row) => (row.product === 'basic_monthly' && row.country === 'DE' ? {...row, price: row.price + 1} : row))
    writeFileSync(snapshot, JSON.stringify({rows: moved}))
    const diff = await previewPrices(store, {against: snapshot, countries: ['DE', 'US'], products: ['basic_monthly', 'pro_monthly']})
    expect(diff.comparison).toMatchObject({failed: 1, passed: false})
    expect(diff.success).toBe(false)
    expect(diff.comparison!.changes).toEqual([expect.objectContaining({change: 'changed', country: 'DE', product: 'basic_monthly'})])
    // Within a tolerance of 2 currency units the move passes.
    expect((await previewPrices(store, {against: snapshot, countries: ['DE', 'US'], products: ['basic_monthly', 'pro_monthly'], tolerance: '2'})).comparison!.passed).toBe(true)
  })

  it('throws InvalidInputError for a tolerance without a snapshot, or an unreadable snapshot', async () => {
    await expect(async () => await previewPrices(store, {tolerance: '1%'})).rejects.toThrow(InvalidInputError)
    await expect(async () => await previewPrices(store, {against: join(dir, 'missing.json')})).rejects.toThrow(/cannot read it/)
  })
})

describe('importCharges, importSubscriptions and revenueReport', () => {
  // The catalog the import fixtures name (gateway product ids prod_pro, prod_life, ...).
  let rev: Store
  beforeAll(async () => {
    const revPath = join(dir, 'revenue.db')
    const seed = openEngineStore(revPath)
    seedCatalog(seed.db)
    await seed.close()
    rev = openStore(revPath)
  })
  afterAll(async () => await rev.close())

  it('import exports and return the summary the CLI prints as --json; a re-run changes nothing', async () => {
    const payments = clean('payments-new.csv', 3)
    const progress: number[] = []
    const charges = await importCharges(rev, payments, {onProgress: (rows) => progress.push(rows)})
    expect(charges).toMatchObject({dry_run: false, file: payments, inserted: 3, read: 3, rejected: 0, success: true})
    expect(charges.message).toMatch(/^charges imported: /)
    expect(progress.length).toBeGreaterThan(0)
    const again = await importCharges(rev, payments)
    expect(again).toMatchObject({inserted: 0, unchanged: charges.inserted, updated: 0})

    const subscriptions = await importSubscriptions(rev, clean('subscriptions-gateway-a.csv', 2), {dryRun: true})
    expect(subscriptions).toMatchObject({dry_run: true, inserted: 2, read: 2, rejected: 0, success: true})
    expect(subscriptions.message).toMatch(/^subscriptions dry run \(nothing written\)/)
    const real = await importSubscriptions(rev, clean('subscriptions-gateway-a.csv', 2))
    expect(real).toMatchObject({dry_run: false, inserted: 2, rejected: 0, success: true})
  })

  it('reports rejected rows in the summary (success false) instead of throwing', async () => {
    const file = join(dir, 'bad-payments.csv')
    const [header, row] = readFileSync(join(FIXTURES, 'payments-new.csv'), 'utf8').split('\n')
    writeFileSync(file, `${header}\n${row!.replace('ch_1001', 'ch_bad').replace('9.99', 'not-a-number')}\n`)
    const r = await importCharges(rev, file)
    expect(r).toMatchObject({read: 1, rejected: 1, rejects_file: `${file}.rejects.csv`, success: false})
    expect(r.message).toMatch(/1 of 1 rows rejected; see /)
    expect(existsSync(`${file}.rejects.csv`)).toBe(true)
  })

  it('throws InvalidInputError for a missing file, NotFoundError for an unknown product', async () => {
    await expect(importCharges(rev, join(dir, 'none.csv'))).rejects.toThrow(InvalidInputError)
    const unknown = importSubscriptions(rev, clean('subscriptions-gateway-a.csv', 2), {product: 'no_such'})
    await expect(unknown).rejects.toThrow(NotFoundError)
    await expect(unknown).rejects.toThrow(/unknown product "no_such"/)
  })

  it('revenueReport: the spec body, by month, country or product, with Date, seconds or text bounds', async () => {
    const byMonth = await revenueReport(rev, {since: '2026-01-01', until: '2026-06-30'})
    expect(byMonth).toMatchObject({by: 'month', currency: 'USD', since: '2026-01-01', success: true})
    expect(byMonth.rows.map((r) => r.key)).toEqual(['2026-01', '2026-02', '2026-03', '2026-04', '2026-05', '2026-06'])
    expect(byMonth.totals.net_revenue).toBeGreaterThan(0)
    const asDates = await revenueReport(rev, {since: new Date('2026-01-01T00:00:00Z'), until: Date.UTC(2026, 6, 1) / 1000 - 1})
    expect(asDates.rows).toEqual(byMonth.rows)
    const byCountry = await revenueReport(rev, {by: 'country', since: '2026-01-01', until: '2026-06-30'})
    expect(byCountry.totals.net_revenue).toBe(byMonth.totals.net_revenue)
    await expect(async () => await revenueReport(rev, {by: 'day' as 'month'})).rejects.toThrow(InvalidInputError)
    const byQuarter = await revenueReport(rev, {by: 'quarter', since: '2026-01-01', until: '2026-06-30'})
    expect(byQuarter.rows.map((r) => r.key)).toEqual(['2026-Q1', '2026-Q2'])
    expect(byQuarter.totals).toEqual(byMonth.totals)
    await expect(async () => await revenueReport(rev, {since: '2026-06-01', until: '2026-01-01'})).rejects.toThrow(/before since/)
    await expect(async () => await revenueReport(rev, {since: 'yesterday-ish'})).rejects.toThrow(InvalidInputError)
  })
})

/**
 * Packages and front-end modules the library must not load when it is imported
 * (`engine file -> offender`): there must be none.
 */
const CLI_PACKAGES = /^(@oclif\/|cli-table3$|cli-progress$|@inquirer\/|fastify$|string-width$)/
const CLI_FILES = /^(src\/cli\/|src\/server\/|commands\/)/

describe('the entry graph', () => {
  it('loads no CLI or server module at import time', () => {
    const log = join(mkdtempSync(join(tmpdir(), 'pricectl-loads-')), 'loads.jsonl')
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', join(import.meta.dirname, 'record-loads.mjs'), '--input-type=module', '-e', `await import(${JSON.stringify(join(ROOT, 'src', 'index.ts'))})`], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {...process.env, PRICECTL_RECORD_LOADS: log},
    })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const loads = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {from?: string; url: string})
    expect(loads.some((l) => l.url.endsWith('/src/pricing/batch.ts'))).toBe(true) // it records
    const name = (url?: string) => {
      if (!url?.startsWith('file:')) return url ?? ''
      const file = fileURLToPath(url)
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
      return pkg ? pkg[1]! : relative(ROOT, file).replace(/\.js$/, '.ts')
    }
    const offending = (n: string) => CLI_PACKAGES.test(n) || CLI_FILES.test(n)
    const edges = new Set<string>()
    for (const l of loads) {
      const from = name(l.from)
      const to = name(l.url)
      if (offending(to) && from.startsWith('src/') && !offending(from)) edges.add(`${from} -> ${to}`)
    }
    expect([...edges].sort()).toEqual([])
  })
})

/** The header and the first `rows` rows of a fixture export (its later rows are rejected on purpose). */
function clean(name: string, rows: number): string {
  const target = join(mkdtempSync(join(dir, 'export-')), name)
  writeFileSync(target, readFileSync(join(FIXTURES, name), 'utf8').split('\n').slice(0, rows + 1).join('\n') + '\n')
  return target
}

function catchError(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected an error')
}
