import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'

import {dump} from '../helpers/dump.js'
import {runArgs, seedCatalog, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * Tax in the revenue commands (docs/revenue.md, "Tax"): `charges` and `subscriptions` take
 * the tax part of their amount (`--tax`, body field `tax`, default 0); records show gross,
 * tax and net; `revenue report` counts revenue and MRR net of tax and shows the tax collected
 * (`--tax`, per country with `--by country`); imports read a tax column. The catalog's rates:
 * EUR 0.8, GBP 0.5, JPY 100 per USD (seedCatalog).
 */

const BASE: Record<string, string> = {amount: '11.90', created: '2026-01-10', currency: 'EUR', origin: 'gateway_a', 'origin-id': 'ch_1', product: 'lifetime', status: 'succeeded', 'user-id': 'u1'}

function charge(over: Record<string, string> = {}, extra: string[] = []): string[] {
  return ['charges', 'create', ...Object.entries({...BASE, ...over}).flatMap(([k, v]) => [`--${k}`, v]), ...extra]
}

const WINDOW = ['--since', '2026-01-01', '--until', '2026-02-28']

describe('charges and subscriptions with tax', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '2026-02-15'
  })

  it('charges create --tax: the record keeps gross, tax and net, in the currency and in USD', async () => {
    // 11.90 EUR incl. 1.90 VAT (DE 19%): 14.88 USD at 0.8, of which 1.90/11.90 is tax: 2.38 (2.3756...), net 12.50.
    const r = await runArgs(db, [...charge({country: 'DE', tax: '1.90'}), '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.record).toMatchObject({amount: 11.9, amount_usd: 14.88, currency: 'EUR', net: 10, net_usd: 12.5, tax: 1.9, tax_usd: 2.38})
    const get = await runArgs(db, ['charges', 'get', 'u1', 'gateway_a', 'ch_1', '--json'])
    expect(get.json.charge).toEqual(r.json.record)
    const table = await runArgs(db, ['charges', 'list'])
    expect(table.stdout).toMatch(/│ tax +│/)
    expect(table.stdout).toMatch(/│ 11\.9 EUR +│ 1\.9 +│/)
    const csv = await runArgs(db, ['charges', 'list', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toMatch(/,tax,net,tax_usd,net_usd$/)
    expect(csv.stdout.split('\n')[1]).toMatch(/,1\.9,10,2\.38,12\.5$/)
  })

  it('without --tax a charge has none: net is the amount (what every record written before tax reads as)', async () => {
    const r = await runArgs(db, [...charge(), '--json'])
    expect(r.json.record).toMatchObject({amount: 11.9, net: 11.9, net_usd: 14.88, tax: 0, tax_usd: 0})
  })

  it('refuses a tax above the amount, negative, or with more decimals than the currency has; nothing is written', async () => {
    const before = dump(db)
    const above = await runArgs(db, [...charge({tax: '11.91'}), '--json'])
    expect(above.code).toBe(2)
    expect(above.json.message).toContain('tax: 11.91 is more than the amount 11.9 (amount is what the customer paid, tax included; tax is the part of it that is tax)')
    const negative = await runArgs(db, [...charge({tax: '-1'}), '--json'])
    expect(negative.code).toBe(2)
    expect(negative.json.message).toMatch(/tax: must not be negative, got -1/)
    const decimals = await runArgs(db, [...charge({amount: '1100', currency: 'JPY', tax: '99.5'}), '--json'])
    expect(decimals.code).toBe(2)
    expect(decimals.json.message).toContain('tax: 99.5 has more decimals than JPY allows (0)')
    expect(dump(db)).toEqual(before)
  })

  it('charges update: --tax alone, --amount with --tax; an amount below the stored tax is refused; a new currency re-expresses the tax', async () => {
    await runArgs(db, [...charge({tax: '1.90'}), '--event-timestamp', '2026-01-10'])
    const tax = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--tax', '2.00', '--event-timestamp', '2026-01-11', '--json'])
    expect(tax.code, tax.stdout).toBe(0)
    expect(tax.json.record).toMatchObject({amount: 11.9, net: 9.9, tax: 2, tax_usd: 2.5})
    const below = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--amount', '1.99', '--event-timestamp', '2026-01-12', '--json'])
    expect(below.code).toBe(2)
    expect(below.json.message).toBe('invalid charge update: amount: 1.99 is less than the tax it includes (2); give the tax with the amount (--tax)')
    const both = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--amount', '1.99', '--tax', '0.32', '--event-timestamp', '2026-01-12', '--json'])
    expect(both.code, both.stdout).toBe(0)
    expect(both.json.record).toMatchObject({amount: 1.99, net: 1.67, tax: 0.32})
    const above = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--tax', '2', '--event-timestamp', '2026-01-13', '--json'])
    expect(above.code).toBe(2)
    expect(above.json.message).toBe('invalid charge update: tax: 2 is more than the amount 1.99 (amount is what the customer paid, tax included; tax is the part of it that is tax)')
    // The number stays, read in the new currency (as the amount's does): 0.32 EUR of tax is 0.32 GBP.
    const gbp = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--currency', 'GBP', '--event-timestamp', '2026-01-14', '--json'])
    expect(gbp.json.record).toMatchObject({amount: 1.99, amount_usd: 3.98, currency: 'GBP', tax: 0.32, tax_usd: 0.64})
  })

  it('a refund returns tax in proportion: the report counts neither the refunded part nor its tax', async () => {
    await runArgs(db, [...charge({country: 'DE', tax: '1.90'}), '--event-timestamp', '2026-01-10'])
    // The charge again with half refunded and a newer event: 7.44 USD refunded, 1.19 of it tax.
    const r = await runArgs(db, [...charge({'amount-refunded': '5.95', country: 'DE', tax: '1.90'}), '--event-timestamp', '2026-01-20', '--json'])
    expect(r.code, r.stdout).toBe(0)
    const report = await runArgs(db, ['revenue', 'report', ...WINDOW, '--json'])
    const jan = report.json.rows[0]
    // Net: 14.88 - 2.38 - (7.44 - 1.19) = 6.25; tax: 2.38 - 1.19 = 1.19; together the gross net of refunds (7.44).
    expect(jan).toMatchObject({gross_revenue: 7.44, key: '2026-01', net_revenue: 6.25, tax: 1.19})
  })

  it('subscriptions create --tax: MRR counts the amount net of its tax', async () => {
    // pro_yearly, 119.00 EUR a year incl. 19.00 VAT: 148.75 USD a year, 12.40 a month gross, 10.42 net.
    const r = await runArgs(db, ['subscriptions', 'create', '--user-id', 'u1', '--origin', 'gateway_a', '--origin-id', 'sub_1', '--product', 'pro_yearly', '--amount', '119', '--tax', '19', '--currency', 'EUR', '--created', '2026-01-05', '--status', 'active', '--country', 'DE', '--event-timestamp', '2026-01-05', '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json.record).toMatchObject({amount: 119, amount_usd: 148.75, amount_usd_monthly: 12.4, net: 100, net_usd_monthly: 10.42, tax: 19})
    const report = await runArgs(db, ['revenue', 'report', ...WINDOW, '--json'])
    expect(report.json.rows.map((x: {mrr: number}) => x.mrr)).toEqual([10.42, 10.42])
    expect(report.json.totals).toMatchObject({arpu: 10.42, mrr: 10.42})
    // An update of the tax alone moves MRR from its event on (the history keeps both).
    const u = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--tax', '0', '--event-timestamp', '2026-02-01', '--json'])
    expect(u.code, u.stdout).toBe(0)
    const after = await runArgs(db, ['revenue', 'report', ...WINDOW, '--json'])
    expect(after.json.rows.map((x: {expansion_mrr: number; key: string; mrr: number}) => [x.key, x.mrr, x.expansion_mrr])).toEqual([
      ['2026-01', 10.42, 0],
      ['2026-02', 12.4, 1.98],
    ])
    const below = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--tax', '119.01', '--event-timestamp', '2026-02-02', '--json'])
    expect(below.code).toBe(2)
    expect(below.json.message).toContain('invalid subscription update: tax: 119.01 is more than the amount 119')
  })

  it('revenue report --tax: gross revenue and tax collected beside net revenue; per country with --by country', async () => {
    await runArgs(db, [...charge({country: 'DE', tax: '1.90'})])
    // JP 10%: 1100 yen incl. 100, 11.00 USD of which 1.00 is tax.
    await runArgs(db, [...charge({amount: '1100', country: 'JP', currency: 'JPY', 'origin-id': 'ch_2', tax: '100', 'user-id': 'u2'})])
    // US, no tax: 5.00 USD.
    await runArgs(db, [...charge({amount: '5', country: 'US', created: '2026-02-03', currency: 'USD', 'origin-id': 'ch_3', 'user-id': 'u3'})])
    const byCountry = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'country', '--json'])
    expect(byCountry.json.rows.map((x: {gross_revenue: number; key: string; net_revenue: number; tax: number}) => [x.key, x.gross_revenue, x.tax, x.net_revenue])).toEqual([
      ['DE', 14.88, 2.38, 12.5],
      ['JP', 11, 1, 10],
      ['US', 5, 0, 5],
    ])
    expect(byCountry.json.totals).toMatchObject({gross_revenue: 30.88, net_revenue: 27.5, tax: 3.38})
    expect(byCountry.json.message).toContain('net charge revenue $27.50 (tax collected $3.38 not included)')
    const table = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'country', '--tax'])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/│ country +│ mrr +│ active_subscriptions +│ new_subscriptions +│ churned_subscriptions +│ gross_revenue +│ tax +│ net_revenue +│ arpu +│/)
    expect(table.stdout).toMatch(/│ DE +│ \$0\.00 +│ 0 +│ 0 +│ 0 +│ \$14\.88 +│ \$2\.38 +│ \$12\.50 +│ - +│/)
    expect(table.stdout).toMatch(/│ total +│ \$0\.00 +│ 0 +│ 0 +│ 0 +│ \$30\.88 +│ \$3\.38 +│ \$27\.50 +│ - +│/)
    // Without --tax the table is as it was: no tax columns.
    const plain = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'country'])
    expect(plain.stdout).not.toContain('gross_revenue')
    const byMonth = await runArgs(db, ['revenue', 'report', ...WINDOW, '--output', 'csv'])
    const [head, jan, feb] = byMonth.stdout.trim().split('\n')
    expect(head).toMatch(/,tax,gross_revenue$/)
    expect(jan).toMatch(/^2026-01,0,0,0,0,22\.5,.*,3\.38,25\.88$/)
    expect(feb).toMatch(/^2026-02,0,0,0,0,5,.*,0,5$/)
  })
})

describe('charges import with a tax column (gateway_a payments export)', () => {
  it('reads the tax of each row from its tax metadata column; revenue is net of it; "Taxes On Fee" is not tax the customer paid', async () => {
    const db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '2026-02-15'
    const header = 'id,Created date (UTC),Amount,Amount Refunded,Currency,Fee,Taxes On Fee,Status,Customer ID,product (metadata),country (metadata),tax (metadata)'
    const rows = [
      'ch_de,2026-01-05 10:00:00,11.90,0.00,eur,0.47,0.09,Paid,cus_A,prod_pro,DE,1.90',
      'ch_jp,2026-01-06 10:00:00,1100,0,jpy,40,4,Paid,cus_B,prod_pro,JP,100',
      'ch_us,2026-01-07 10:00:00,10.00,0.00,usd,0.59,0.00,Paid,cus_C,prod_pro,US,',
      'ch_bad,2026-01-08 10:00:00,5.00,0.00,usd,0.45,0.00,Paid,cus_D,prod_pro,US,5.01',
    ]
    const file = join(tempDir(), 'payments.csv')
    writeFileSync(file, [header, ...rows].join('\n') + '\n')
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.code).toBe(1) // one row rejected
    expect(r.json.summary ?? r.json).toMatchObject({inserted: 3, rejected: 1, rejected_by_reason: {'tax larger than the amount': 1}})
    const de = await runArgs(db, ['charges', 'get', 'cus_A', 'gateway_a', 'ch_de', '--json'])
    expect(de.json.charge).toMatchObject({amount: 11.9, net: 10, tax: 1.9})
    const report = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'country', '--json'])
    expect(report.json.rows.map((x: {key: string; net_revenue: number; tax: number}) => [x.key, x.net_revenue, x.tax])).toEqual([
      ['DE', 12.5, 2.38],
      // Equal net revenue: the one with more tax first.
      ['JP', 10, 1],
      ['US', 10, 0],
    ])
    // The same file again changes nothing.
    const again = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(again.json.summary ?? again.json).toMatchObject({inserted: 0, unchanged: 3, updated: 0})
  })
})

describe('charges import of an invoices export through a mapping (fixtures/imports/gateway-a-invoices.mapping.json)', () => {
  it('Total is the gross, Tax its tax: revenue is net of it; an open invoice is pending and counts for nothing', async () => {
    const db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '2026-02-15'
    const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'imports')
    const r = await runArgs(db, ['charges', 'import', join(fixtures, 'gateway-a-invoices.csv'), '--mapping', join(fixtures, 'gateway-a-invoices.mapping.json'), '--rejects', join(tempDir(), 'rejects.csv'), '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json).toMatchObject({inserted: 4, rejected: 0})
    const de = await runArgs(db, ['charges', 'get', 'in_de1', '--json'])
    expect(de.json.charge).toMatchObject({amount: 11.9, net: 10, status: 'succeeded', tax: 1.9, user_id: 'cus_A'})
    expect((await runArgs(db, ['charges', 'get', 'in_de2', '--json'])).json.charge).toMatchObject({status: 'pending', tax: 1.9})
    const report = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'country', '--json'])
    expect(report.json.rows.map((x: {key: string; net_revenue: number; tax: number}) => [x.key, x.net_revenue, x.tax])).toEqual([
      ['DE', 12.5, 2.38],
      ['JP', 10, 1],
      ['US', 10, 0],
    ])
  })
})
