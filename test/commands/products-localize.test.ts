import {beforeEach, describe, expect, it} from 'vitest'

import {CATALOG, createProducts} from '../helpers/catalog.js'
import {dump} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

describe('products localize', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await createProducts(db, CATALOG)
    await run(db, ['fx', 'set', 'INR', '80', '--date', '2020-01-01'])
    await run(db, ['localization', 'set', 'IN', '0.3', '--yes'])
    await run(db, ['localization', 'set', 'DE', '0.9', '--yes'])
  })

  it('--dry-run shows the parity prices and writes nothing', async () => {
    const before = dump(db)
    const r = await run(db, ['products', 'localize', 'pro_yearly', '--dry-run', '--json'])
    expect(r.code).toBe(0)
    // 99 USD x 80 INR/USD x 0.3 = 2,376 INR, then the INR rounding rule.
    const inr = r.json.changes.find((c: {country: string}) => c.country === 'IN')
    expect(inr).toMatchObject({before: null, currency: 'INR', factor: 0.3})
    expect(Math.abs(inr.after - 2376)).toBeLessThan(25)
    expect(r.json.dry_run).toBe(true)
    expect(dump(db)).toEqual(before)
  })

  it('writes country prices that the price command then uses as given', async () => {
    const r = await run(db, ['products', 'localize', 'pro_yearly', '--json'])
    expect(r.code).toBe(0)
    const inr = r.json.changes.find((c: {country: string}) => c.country === 'IN').after
    const got = await run(db, ['products', 'get', 'pro_yearly', '--json'])
    expect(got.json.country_prices).toContainEqual({country: 'IN', currency: 'INR', local_price: inr})
    const price = await run(db, ['price', '-u', 'in-user', '-p', 'pro_yearly', '--country', 'IN', '--json'])
    expect(price.json.products.pro_yearly.price).toBe(inr)
    const again = await run(db, ['products', 'localize', 'pro_yearly', '--json'])
    expect(again.json.changes).toEqual([])
    expect(again.json.unchanged).toBe(2)
  })

  it('keeps other country prices and refuses a country without a factor', async () => {
    await run(db, ['products', 'localize', 'pro_monthly', '--country', 'IN'])
    const got = await run(db, ['products', 'get', 'pro_monthly', '--json'])
    expect(got.json.country_prices.map((c: {country: string}) => c.country).sort()).toEqual(['DE', 'IN', 'JP', 'KW'])
    const bad = await run(db, ['products', 'localize', 'pro_monthly', '--country', 'FR', '--json'])
    expect(bad.code).toBe(2)
    expect(bad.json.message).toContain('no localization factor for FR')
  })
})
