import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {parse} from 'csv-parse/sync'
import {beforeAll, describe, expect, it} from 'vitest'

import {productByApiId} from '../../src/catalog/lookup.js'
import {importFiles} from '../../src/import/importer.js'
import {type Need, RowMiss} from '../../src/import/loads.js'
import type {Preset} from '../../src/import/presets.js'
import {loadPricingEngine} from '../../src/import/products.js'
import {RowMapper} from '../../src/import/rows.js'
import type {ChargeValues} from '../../src/revenue/store.js'
import {openSqliteStore} from '../../src/store/db.js'
import {recordedStore} from '../helpers/recorded-store.js'
import {seededStores, tempDir, writeTemp} from '../helpers/revenue-fixtures.js'

/**
 * RowMapper.map never reads the store (src/import/rows.ts, "Loads"): what a row needs (the
 * gateway's table overrides, a currency's FX rates, the products a cell names, the prices
 * telling several apart) is read by load() when a row misses it, once per import, and the
 * row is mapped again. A real store's repositories record every call: none is made inside
 * map(), over a file of several products and currencies; and the import's reading loop,
 * which holds a missed record and those after it until the load, ends with every row where
 * mapping each row alone puts it, in batches of any size.
 */

const store = seededStores()

beforeAll(async () => {
  await loadPricingEngine()
})

/** The revenue fixtures' catalog (seedCatalog): prod_pro names pro_monthly, prod_team names pro_yearly (100 USD) and team_quarterly (25 USD); weekly is an api_id. */
const HEADER = ['id', 'Created date (UTC)', 'Amount', 'Amount Refunded', 'Currency', 'Status', 'Customer ID', 'product (metadata)']

type Row = {amount: string; currency: string; product: string}

/** Products and currencies, each first seen somewhere in the file and seen again after; an unknown product and a currency without a rate. */
const ROWS: Row[] = [
  {amount: '10.00', currency: 'usd', product: 'prod_pro'},
  {amount: '10.00', currency: 'usd', product: 'prod_pro'},
  {amount: '8.00', currency: 'eur', product: 'prod_pro'},
  {amount: '25.00', currency: 'usd', product: 'prod_team'},
  {amount: '100.00', currency: 'usd', product: 'prod_team'},
  {amount: '3.00', currency: 'usd', product: 'weekly'},
  {amount: '1000', currency: 'jpy', product: 'weekly'},
  {amount: '9.00', currency: 'chf', product: 'prod_pro'},
  {amount: '5.00', currency: 'gbp', product: 'nope'},
  {amount: '5.00', currency: 'gbp', product: 'prod_pro'},
  {amount: '30.00', currency: 'usd', product: 'prod_team'},
  {amount: '80.00', currency: 'eur', product: 'prod_team'},
  {amount: '8.00', currency: 'eur', product: 'prod_pro'},
  {amount: '100.00', currency: 'usd', product: 'prod_team'},
]

/** A row's cells; in gateway units (amount_unit minor), its amounts' digits without the separator (gateway_a's exponents are ISO 4217's here). */
function cellsOf(r: Row, i: number, unit: 'major' | 'minor' = 'major'): string[] {
  const day = String(1 + (i % 28)).padStart(2, '0')
  const amount = (a: string) => (unit === 'minor' ? a.replace('.', '') : a)
  return [`ch_${i}`, `2026-01-${day} 10:00:00`, amount(r.amount), amount('0.00'), r.currency, 'Paid', `cus_${i % 5}`, r.product]
}

const LAYOUT = (): Preset => ({
  amount_unit: 'major',
  columns: {amount: 'Amount', amount_refunded: 'Amount Refunded', created: 'Created date (UTC)', currency: 'Currency', origin_id: 'id', product: 'product (metadata)', status: 'Status', user_id: 'Customer ID'},
  decimal_separator: '.',
  detect: [],
  kind: 'charges',
  name: 'test layout',
  origin: 'gateway_a',
  product_types: ['gateway_a', 'gateway_a_with_interval'],
  statuses: {paid: 'succeeded'},
  thousands_separator: null,
})

/** What a need names, for the list of loads. */
function named(n: Need): string {
  if (n.kind === 'fx') return `fx ${n.currency}`
  if (n.kind === 'product') return `product ${n.ref}`
  if (n.kind === 'prices') return `prices ${n.several.candidates.products.map((p) => p.api_id).join('/')}`
  return n.kind
}

describe('mapping an import row reads nothing from the store', () => {
  it('map() makes no repository call; each product cell, currency and set of prices is loaded once, outside it', async () => {
    const real = openSqliteStore(store())
    const {calls, store: recorded} = recordedStore(real)
    try {
      // Gateway units (minor): the gateway's table overrides are a load too.
      for (const unit of ['major', 'minor'] as const) {
        calls.length = 0
        const m = new RowMapper<ChargeValues>(recorded, 'charges', {...LAYOUT(), amount_unit: unit}, HEADER, undefined)
        expect(calls, 'the constructor reads nothing').toEqual([])
        const duringMap: string[] = []
        const loads: string[] = []
        const results: Exclude<ReturnType<typeof m.map>, RowMiss>[] = []
        for (const [i, r] of ROWS.entries()) {
          const cells = cellsOf(r, i, unit)
          for (;;) {
            const before = calls.length
            const out = m.map(cells)
            duringMap.push(...calls.slice(before).map((c) => c.method))
            if (!(out instanceof RowMiss)) {
              results.push(out)
              break
            }
            loads.push(named(out.need))
            const reads = calls.length
            await m.load(out)
            expect(calls.length, `the load of ${named(out.need)} reads`).toBeGreaterThan(reads)
          }
        }
        expect(duringMap).toEqual([])
        expect(loads).toEqual([
          ...(unit === 'minor' ? ['rules'] : []),
          'product prod_pro',
          'fx EUR',
          'product prod_team',
          'prices pro_yearly/team_quarterly',
          'product weekly',
          'fx JPY',
          'fx CHF',
          'product nope',
          'fx GBP',
        ])
        const id = async (api: string) => (await productByApiId(real, api))!.id
        // The values: products matched by cell (and by price among several: the store prices in USD only), USD at the fixtures' rates (EUR 0.8, GBP 0.5, JPY 100).
        const seen = results.map((r) => (typeof r === 'string' ? r : [r.product_id, r.amount_usd_minor]))
        expect(seen).toEqual([
          [await id('pro_monthly'), 1000],
          [await id('pro_monthly'), 1000],
          [await id('pro_monthly'), 1000],
          [await id('team_quarterly'), 2500],
          [await id('pro_yearly'), 10_000],
          [await id('weekly'), 300],
          [await id('weekly'), 1000],
          'no FX rate for CHF (add one with "pricectl fx set CHF RATE")',
          'unknown product "nope" in product (metadata) (no gateway_a/gateway_a_with_interval integration or api_id matches; add the integration to the product with "pricectl products update")',
          [await id('pro_monthly'), 1000],
          expect.stringMatching(/^no price matches product "prod_team" in product \(metadata\): .* 30\.00 USD is no price of theirs \(pro_yearly: 100\.00 USD; team_quarterly: 25\.00 USD;/),
          expect.stringMatching(/^no price matches product "prod_team" in product \(metadata\): .* 80\.00 EUR is no price of theirs/),
          [await id('pro_monthly'), 1000],
          [await id('pro_yearly'), 10_000],
        ])
        // The same rows mapped again: nothing left to load.
        const before = calls.length
        for (const [i, r] of ROWS.entries()) expect(m.map(cellsOf(r, i, unit))).not.toBeInstanceOf(RowMiss)
        expect(calls.length).toBe(before)
      }
    } finally {
      await real.close()
    }
  })

  it('the import loads a missed row\'s needs and maps it again, in file order, whatever the batch size', async () => {
    // The file's rows again and again: misses fall at a batch's start, its end and inside it.
    const rows = Array.from({length: 60}, (_, i) => ROWS[(i * 5) % ROWS.length])
    const csv = [HEADER.join(','), ...rows.map((r, i) => cellsOf(r, i).join(','))].join('\n') + '\n'
    const dir = tempDir()
    const file = writeTemp('payments.csv', csv, dir)
    const mapping = writeTemp('layout.json', JSON.stringify({...LAYOUT(), detect: undefined, kind: undefined, name: undefined}), dir)
    const expected = await (async () => {
      const s = openSqliteStore(store())
      try {
        const m = new RowMapper<ChargeValues>(s, 'charges', LAYOUT(), HEADER, undefined)
        const out = []
        for (const [i, r] of rows.entries()) out.push(await m.mapLoading(cellsOf(r, i)))
        return out
      } finally {
        await s.close()
      }
    })()
    const wantRejects = expected.flatMap((r, i) => (typeof r === 'string' ? [[String(i + 2), r]] : []))
    expect(wantRejects.length).toBeGreaterThan(5)
    for (const batchSize of [1, 3, 7, 1000]) {
      const path = store()
      const s = openSqliteStore(path)
      const rejects = join(dir, `rejects-${batchSize}.csv`)
      try {
        const r = await importFiles(s, {batchSize, force: true, kind: 'charges', mapping, paths: [file], rejects})
        expect({batchSize, inserted: r.inserted, read: r.read, rejected: r.rejected}).toEqual({batchSize, inserted: rows.length - wantRejects.length, read: rows.length, rejected: wantRejects.length})
        const stored = new Map((s.db.prepare('SELECT origin_id, product_id, amount_usd_minor, currency FROM charges').all() as {amount_usd_minor: number; currency: string; origin_id: string; product_id: number}[]).map((c) => [c.origin_id, c]))
        for (const [i, v] of expected.entries()) {
          if (typeof v === 'string') expect(stored.has(`ch_${i}`), `ch_${i}`).toBe(false)
          else expect(stored.get(`ch_${i}`), `ch_${i}`).toEqual({amount_usd_minor: v.amount_usd_minor, currency: v.currency, origin_id: v.origin_id, product_id: v.product_id})
        }
        const lines = (parse(readFileSync(rejects, 'utf8')) as string[][]).slice(1).map((l) => l.slice(0, 2))
        expect(lines, `batch ${batchSize}`).toEqual(wantRejects)
      } finally {
        await s.close()
      }
    }
  })
})
