import {describe, expect, it} from 'vitest'

import {e2eSeeded} from '../helpers/e2e.js'
import {seedCatalog, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {runBin} from '../helpers/run.js'

/**
 * Issue 33, what must hold: "A gateway_a payments export with a tax column imports with net
 * revenue excluding tax." End to end through bin/run.js, on each adapter (the postgres
 * project runs this file again on PostgreSQL). The catalog's FX rates: EUR 0.8, JPY 100 per
 * USD (test/helpers/revenue-fixtures.ts seedCatalog). docs/revenue.md, "Tax".
 */

const seeded = () => e2eSeeded('revenue catalog', async (file) => await withStore(file, seedCatalog))

/** The dashboard's payments export (fixtures/imports/payments-new.csv's columns), with the seller's tax metadata column. */
const NEW_HEADER =
  'id,Created date (UTC),Amount,Amount Refunded,Currency,Captured,Converted Amount,Converted Amount Refunded,Converted Currency,Decline Reason,Description,Fee,Refunded date (UTC),Statement Descriptor,Status,Seller Message,Taxes On Fee,Card ID,Customer ID,Customer Description,Customer Email,Invoice ID,Transfer,user_id (metadata),product (metadata),country (metadata),tax (metadata)'

const NEW_ROWS = [
  // DE, 19% VAT included: 11.90 EUR with 1.90 tax (14.88 USD, 2.38 of it tax).
  'ch_de,2026-01-05 10:00:00,11.90,0.00,eur,true,,,,,Pro plan,0.47,,ACME,Paid,Payment complete.,0.09,card_1,cus_A,,a@example.com,in_1,,u_de,prod_pro,DE,1.90',
  // JP, 10% consumption tax included: 1100 yen with 100 tax (11.00 USD, 1.00 of it tax).
  'ch_jp,2026-01-06 10:00:00,1100,0,jpy,true,,,,,Pro plan,40,,ACME,Paid,Payment complete.,4,card_2,cus_B,,b@example.com,in_2,,u_jp,prod_pro,JP,100',
  // HU, 27% VAT, half refunded: 20.00 EUR with 4.25 tax (25.00 USD, 5.31 tax); refunded 10.00 (12.50 USD, 2.66 tax).
  'ch_hu,2026-01-07 10:00:00,20.00,10.00,eur,true,,,,,Pro plan,0.60,2026-01-20 09:00:00,ACME,Partially refunded,Payment complete.,0.00,card_3,cus_C,,c@example.com,in_3,,u_hu,prod_pro,HU,4.25',
  // US, no tax collected: the cell is empty.
  'ch_us,2026-01-08 10:00:00,10.00,0.00,usd,true,10.00,0.00,usd,,Pro plan,0.59,,ACME,Paid,Payment complete.,0.00,card_4,cus_D,,d@example.com,in_4,,u_us,prod_pro,US,',
]

/** An older layout ("Created (UTC)"), whose "Tax" column is the tax on the gateway's fee, not tax the customer paid. */
const OLD_HEADER = 'id,Description,Seller Message,Created (UTC),Amount,Amount Refunded,Currency,Converted Amount,Converted Amount Refunded,Fee,Tax,Converted Currency,Mode,Status,Statement Descriptor,Customer ID,Customer Email,Captured,product (metadata),country (metadata)'
const OLD_ROWS = ['ch_old,Pro plan,Payment complete.,2026-02-02 10:00,10.00,0.00,usd,10.00,0.00,0.59,0.11,usd,Live,Paid,ACME,cus_E,e@example.com,true,prod_pro,FR']

describe('revenue net of tax, end to end (bin/run.js)', () => {
  it('a gateway_a payments export with a tax column imports with net revenue excluding tax', async () => {
    const db = await seeded()
    const file = writeTemp('payments-tax.csv', [NEW_HEADER, ...NEW_ROWS].join('\n') + '\n')
    const imported = runBin(db, ['charges', 'import', file, '--json'])
    expect(imported.code, imported.stdout + imported.stderr).toBe(0)
    expect(imported.json).toMatchObject({inserted: 4, preset: 'gateway_a_payments', rejected: 0})

    const de = runBin(db, ['charges', 'get', 'ch_de', '--json'])
    expect(de.json.charge).toMatchObject({amount: 11.9, amount_usd: 14.88, currency: 'EUR', net: 10, net_usd: 12.5, tax: 1.9, tax_usd: 2.38})

    const report = runBin(db, ['revenue', 'report', '--since', '2026-01-01', '--until', '2026-01-31', '--by', 'country', '--json'])
    expect(report.code, report.stderr).toBe(0)
    const rows = Object.fromEntries(report.json.rows.map((r: {gross_revenue: number; key: string; net_revenue: number; tax: number}) => [r.key, [r.gross_revenue, r.tax, r.net_revenue]]))
    expect(rows).toEqual({
      DE: [14.88, 2.38, 12.5],
      HU: [12.5, 2.65, 9.85], // 25.00 - 12.50 refunded; tax 5.31 - 2.66 returned by the refund
      JP: [11, 1, 10],
      US: [10, 0, 10],
    })
    // Net revenue excludes the tax: the gross (net of refunds) minus the tax collected, to the cent.
    expect(report.json.totals).toMatchObject({gross_revenue: 48.38, net_revenue: 42.35, tax: 6.03})
    expect(report.json.message).toContain('net charge revenue $42.35 (tax collected $6.03 not included)')

    // The table with --tax shows the tax collected per country.
    const table = runBin(db, ['revenue', 'report', '--since', '2026-01-01', '--until', '2026-01-31', '--by', 'country', '--tax'], {env: {CI: '1'}})
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/│ HU +│ \$0\.00 +│ 0 +│ 0 +│ 0 +│ \$12\.50 +│ \$2\.65 +│ \$9\.85 +│/)

    // Imported again: nothing changes.
    const again = runBin(db, ['charges', 'import', file, '--json'])
    expect(again.json).toMatchObject({inserted: 0, unchanged: 4, updated: 0})
  })

  it("an older payments layout's \"Tax\" column (tax on the gateway's fee) is not read as tax the customer paid", async () => {
    const db = await seeded()
    const file = writeTemp('payments-old.csv', [OLD_HEADER, ...OLD_ROWS].join('\n') + '\n')
    const imported = runBin(db, ['charges', 'import', file, '--json'])
    expect(imported.code, imported.stdout + imported.stderr).toBe(0)
    expect(runBin(db, ['charges', 'get', 'ch_old', '--json']).json.charge).toMatchObject({amount: 10, net: 10, tax: 0})
    const report = runBin(db, ['revenue', 'report', '--since', '2026-02-01', '--until', '2026-02-28', '--json'])
    expect(report.json.totals).toMatchObject({gross_revenue: 10, net_revenue: 10, tax: 0})
  })
})
