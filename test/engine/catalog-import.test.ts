import fc from 'fast-check'
import {copyFileSync} from 'node:fs'
import {afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {csvItems, jsonItems, productsCsv, productsJson} from '../../src/catalog/files.js'
import {createProduct, exportProducts, getProduct, upsertProducts} from '../../src/catalog/products.js'
import {InvalidInputError} from '../../src/errors.js'
import {openStore, type Store} from '../../src/store/db.js'
import {dump} from '../helpers/dump.js'
import {tempStore} from '../helpers/run.js'

let template: string
beforeAll(async () => {
  template = tempStore()
  await openStore(template).close()
})

/** A new store: a copy of one created (and migrated) once. */
function newStore(): string {
  const copy = tempStore()
  copyFileSync(template, copy)
  return copy
}

let store: Store
let path: string
beforeEach(() => {
  path = newStore()
  store = openStore(path)
})
afterEach(async () => await store.close())

const CSV = `api_id,name,base_px,interval,interval_count,min_px,max_px,baseline,country_prices,integrations,features,product_trials
yearly,Yearly,99.99,year,1,,,,DE=89.99:EUR;JP=12000:JPY,gateway_a_with_interval:prod_pro:year:1,,day:14
intro,Yearly intro,79.99,year,1,69.99,99.99,yearly,GB=59.99,gateway_c:intro-plan;gateway_d:intro_d:EUR,"[{""api_id"":""sso"",""name"":""SSO"",""type"":""boolean""}]",
`

async function thrown(fn: () => unknown): Promise<Error> {
  try {
    await fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

describe('products import', () => {
  it('reads the CSV layout: compact country prices, integrations and trials, JSON features, baseline further down the file', async () => {
    const r = await upsertProducts(store, csvItems(CSV))
    expect(r).toEqual({inserted: ['yearly', 'intro'], unchanged: [], updated: []})
    const intro = (await getProduct(store, 'intro'))!
    expect(intro.baseline_api_id).toBe('yearly')
    // GB=59.99 without a currency takes the country's (GBP).
    expect(intro.country_prices).toEqual([{amount_minor: 5999, country: 'GB', currency: 'GBP'}])
    expect(intro.integrations).toEqual([
      {gateway_c_plan_id: 'intro-plan', type: 'gateway_c'},
      {currency: 'EUR', gateway_d_plan_id: 'intro_d', type: 'gateway_d'},
    ])
    expect(intro.features[0]).toMatchObject({api_id: 'sso', status: 'active', type: 'boolean', unit: null, value: 0})
    expect((await getProduct(store, 'yearly'))!.product_trials).toEqual([{interval: 'day', interval_count: 14}])
  })

  it('validates every row first, lists every failing row and writes nothing', async () => {
    await createProduct(store, {api_id: 'taken', base_px: 1, interval: 'month', interval_count: 1, name: 'Taken name'})
    const before = dump(path)
    const csv = `api_id,name,base_px,interval,interval_count,country_prices,integrations
good,Good,5,month,1,DE=4.99:EUR,
bad_interval,Bad 1,5,monthly,1,,
bad_country,Bad 2,5,month,1,DEU=4.99:EUR,
dup_name,Taken name,5,month,1,,
neg,Bad 4,-5,month,1,,
no_id,Bad 5,5,month,1,,gateway_a
bad_json,Bad 6,5,month,1,,"[{""type"":"
good,Good again,5,month,1,,
`
    const err = await thrown(async () => await upsertProducts(store, csvItems(csv)))
    expect(err).toBeInstanceOf(InvalidInputError)
    const lines = err.message.split('\n')
    expect(lines[0]).toBe('7 of 8 rows are invalid; nothing was written:')
    expect(err.message).toContain('row 2 (line 3, api_id "bad_interval"): interval: unknown interval "monthly"')
    expect(err.message).toContain('row 3 (line 4, api_id "bad_country"): country_prices[0].country: unknown country "DEU"')
    expect(err.message).toContain('row 4 (line 5, api_id "dup_name"): name: "Taken name" is already used by product "taken"')
    expect(err.message).toContain('row 5 (line 6, api_id "neg"): base_px: must not be negative, got -5')
    expect(err.message).toContain('row 6 (line 7, api_id "no_id"): integrations[0].gateway_a_product_id: is required')
    expect(err.message).toMatch(/row 7 \(line 8, api_id "bad_json"\): integrations: malformed JSON/)
    expect(err.message).toContain('row 8 (line 9, api_id "good"): api_id: "good" is already in row 1')
    expect(dump(path)).toEqual(before)
  })

  it('checks names and gateway ids across the file and the store, allowing swaps within one import', async () => {
    await upsertProducts(store, jsonItems(JSON.stringify([
      {api_id: 'a', base_px: 1, integrations: [{gateway_a_product_id: 'ga', type: 'gateway_a'}], interval: 'month', interval_count: 1, name: 'Alpha'},
      {api_id: 'b', base_px: 2, interval: 'month', interval_count: 1, name: 'Beta'},
    ])))
    // Swapping names (and moving a gateway id) in one file is fine: rules hold on the result.
    const r = await upsertProducts(store, jsonItems(JSON.stringify({products: [
      {api_id: 'a', base_px: 1, interval: 'month', interval_count: 1, name: 'Beta'},
      {api_id: 'b', base_px: 2, integrations: [{gateway_a_product_id: 'ga', type: 'gateway_a'}], interval: 'month', interval_count: 1, name: 'Alpha'},
    ]})))
    expect(r.updated).toEqual(['a', 'b'])
    expect((await getProduct(store, 'a'))!.name).toBe('Beta')
    expect((await getProduct(store, 'b'))!.integrations).toEqual([{gateway_a_product_id: 'ga', type: 'gateway_a'}])
    const before = dump(path)
    const err = await thrown(async () => await upsertProducts(store, jsonItems(JSON.stringify([{api_id: 'c', base_px: 1, integrations: [{gateway_a_product_id: 'ga', type: 'gateway_a'}], interval: 'day', interval_count: 1, name: 'Beta'}]))))
    expect(err.message).toContain('row 1 (api_id "c"): name: "Beta" is already used by product "a"')
    expect(err.message).toContain('row 1 (api_id "c"): integrations[0]: gateway_a:ga already belongs to product "b"')
    expect(dump(path)).toEqual(before)
  })

  it('export then import changes nothing (JSON and CSV), for any catalog', async () => {
    const chars = ['a', 'Z', ' ', '=', '+', '-', '@', "'", ';', ':', ',', '"', 'é', '1', '.', '[', '{']
    const text = fc.string({maxLength: 12, minLength: 1, unit: fc.constantFrom(...chars, '\n')}).filter((s) => s.trim() === s && s.length > 0)
    // Ids made only of whitespace are refused (docs/hardening.md): the generator makes valid ones.
    const id = fc.string({maxLength: 12, minLength: 1, unit: fc.constantFrom(...chars)}).filter((s) => s.trim().length > 0)
    const product = fc.record({
      // Free, or at least gateway_a's minimum charge (0.50 EUR, 50 JPY): the products charge through it.
      base: fc.oneof(fc.constant(0), fc.integer({max: 1_000_000, min: 50})),
      count: fc.integer({max: 12, min: 1}),
      features: fc.boolean(),
      gateway: id,
      interval: fc.constantFrom('day', 'week', 'month', 'year', 'one_time'),
      jpy: fc.oneof(fc.constant(0), fc.integer({max: 10_000_000, min: 50})),
      name: text,
    })
    let run = 0
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(product, {maxLength: 5, minLength: 1, selector: (p) => p.name}), async (list) => {
        const dbPath = newStore()
        const s = openStore(dbPath)
        try {
          const items = list
            .filter((p, i) => list.findIndex((q) => q.gateway === p.gateway) === i)
            .map((p, i) => ({
              api_id: `p${i}`,
              base_px: p.base / 100,
              baseline: i > 0 ? 'p0' : null,
              country_prices: [{amount: p.jpy, country: 'JP', currency: 'JPY'}, {amount: p.base / 100, country: 'DE', currency: 'EUR'}],
              features: p.features ? [{api_id: `f${i}`, description: p.name, feature_group: {api_id: 'g', name: 'G'}, name: p.name, type: 'numeric', unit: p.name, value: p.count / 4}] : [],
              integrations: [{gateway_c_plan_id: p.gateway, type: 'gateway_c'}, {gateway_a_product_id: p.gateway, interval: 'week', interval_count: p.count, type: 'gateway_a_with_interval'}],
              interval: p.interval,
              interval_count: p.interval === 'one_time' ? 1 : p.count,
              max_px: p.features ? null : (p.base + 1) / 100,
              min_px: null,
              name: p.name,
              product_trials: p.features ? [{interval: 'week', interval_count: p.count}] : [],
            }))
          await upsertProducts(s, jsonItems(JSON.stringify(items)))
          const before = dump(dbPath)
          const exported = await exportProducts(s)
          const format = run++ % 2 === 0 ? 'csv' : 'json'
          const file = format === 'csv' ? productsCsv(exported) : productsJson(exported)
          const r = await upsertProducts(s, format === 'csv' ? csvItems(file) : jsonItems(file))
          expect(r.unchanged.length).toBe(items.length)
          expect(dump(dbPath)).toEqual(before)
        } finally {
          await s.close()
        }
      }),
      {numRuns: 40},
    )
  })

  it('neutralises spreadsheet formulas in CSV cells, and reads them back as written', async () => {
    const names = ['=HYPERLINK("http://x","y")', '+1+1', '-2+3', '@SUM(A1)', "'=already quoted", '\tTab']
    for (const [i, name] of names.entries()) await createProduct(store, {api_id: `p${i}`, base_px: 1, interval: 'month', interval_count: 1, name})
    const file = productsCsv(await exportProducts(store))
    expect(file).toContain(`'=HYPERLINK`)
    expect(file).toContain(`'+1+1`)
    expect(file).toContain(`'@SUM(A1)`)
    expect(file).toContain(`''=already quoted`)
    for (const line of file.split('\n').slice(1)) expect(line).not.toMatch(/(^|,)"?[=+@]/)
    const before = dump(path)
    expect((await upsertProducts(store, csvItems(file))).unchanged.length).toBe(names.length)
    expect(dump(path)).toEqual(before)
  })

  it('rejects files it cannot read as products', () => {
    expect(() => csvItems('api_id,name,price\nx,y,1\n')).toThrow(/unknown column "price"/)
    expect(() => csvItems('api_id,name\nx,y\n')).toThrow(/missing columns base_px, interval, interval_count/)
    expect(() => jsonItems('{"items": []}')).toThrow(/expected a JSON array of products/)
    expect(() => jsonItems('[{')).toThrow(/malformed JSON/)
  })

  it('dry run counts without writing', async () => {
    const before = dump(path)
    expect(await upsertProducts(store, csvItems(CSV), {dryRun: true})).toEqual({inserted: ['yearly', 'intro'], unchanged: [], updated: []})
    expect(dump(path)).toEqual(before)
  })
})
