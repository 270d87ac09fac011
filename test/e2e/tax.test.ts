import {describe, expect, it} from 'vitest'

import {e2eSeeded} from '../helpers/e2e.js'
import {seedCatalog, withStore} from '../helpers/revenue-fixtures.js'
import {runBin} from '../helpers/run.js'

/**
 * Tax in prices end to end through bin/run.js (docs/tax.md), on each adapter (the postgres
 * project runs this file again on PostgreSQL). The catalog's FX rates: EUR 0.8 per USD
 * (test/helpers/revenue-fixtures.ts seedCatalog): pro_monthly's 10 USD is 8.00 EUR net.
 */

const seeded = () => e2eSeeded('revenue catalog', async (file) => await withStore(file, seedCatalog))

function ok(db: string, args: string[]): any {
  const r = runBin(db, [...args, '--json'])
  expect(r.code, `${args.join(' ')}: ${r.stdout} ${r.stderr}`).toBe(0)
  return JSON.parse(r.stdout)
}

describe('tax in prices, end to end (bin/run.js)', () => {
  it('tax set and a DE inclusive price: the quote carries the tax object and gateway_a its tax_behavior', async () => {
    const db = await seeded()
    // Exclusive (the default): a rate change moves no shown price.
    const set = ok(db, ['tax', 'set', 'DE', '20', '--from', '2020-01-01'])
    expect(set).toMatchObject({impact: {changed: 0}, rate: {country: 'DE', rate: 20, status: 'current'}})
    const net = ok(db, ['price', '-u', 'ex', '-p', 'pro_monthly', '--country', 'DE', '--integration', 'gateway_a']).products.pro_monthly
    expect(net.price).toBe(7.99)
    expect(net.tax).toEqual({behavior: 'exclusive', country: 'DE', display: 'zzgl. MwSt.', gross: 9.59, label: 'VAT', net: 7.99, rate: 20, tax: 1.6})
    // DE inclusive: 8.00 net x 1.20 = 9.60 gross, rounded to 9.99 incl. VAT (+25% shown: --yes).
    expect(runBin(db, ['tax', 'behavior', 'inclusive', '--country', 'DE', '--json']).code).toBe(2)
    const behavior = ok(db, ['tax', 'behavior', 'inclusive', '--country', 'DE', '--yes'])
    expect(behavior.impact.changes).toContainEqual(expect.objectContaining({after: expect.objectContaining({price: 9.99}), country: 'DE', product: 'pro_monthly'}))
    const r = ok(db, ['price', '-u', 'in', '-p', 'pro_monthly', '--country', 'DE', '--integration', 'gateway_a'])
    const p = r.products.pro_monthly
    expect(p.price).toBe(9.99)
    expect(p.tax).toEqual({behavior: 'inclusive', country: 'DE', display: 'inkl. MwSt.', gross: 9.99, label: 'VAT', net: 8.32, rate: 20, tax: 1.67})
    expect(p.integrations.gateway_a).toEqual({amount: 999, currency: 'EUR', formatted: '9,99\u00A0€', tax_behavior: 'inclusive'})
    // The earlier user's lock keeps what it was shown.
    expect(ok(db, ['price', '-u', 'ex', '-p', 'pro_monthly']).products.pro_monthly.tax).toEqual(net.tax)
  })
})
