import {beforeEach, describe, expect, it} from 'vitest'

import {rates} from '../../src/revenue/metrics.js'
import {noMovements} from '../../src/revenue/metrics.js'
import {runArgs, seedCatalog, tempDir, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * Revenue by the definitions analysts use (issue 29, items 8 to 14; docs/revenue.md,
 * "Subscription history" and "Metrics"): each item as a gateway export imports it and
 * `revenue report` reads it. seedCatalog: prod_pro (gateway_a) and pro-monthly-plan
 * (gateway_c) are pro_monthly; FX EUR 0.8 per USD.
 */

const csv = (header: readonly string[], rows: readonly (readonly string[])[]) => [header.join(','), ...rows.map((r) => r.join(','))].join('\n') + '\n'

const A_SUBS = ['id', 'Customer ID', 'Status', 'Amount', 'Currency', 'Interval', 'Product', 'Created (UTC)', 'Current Period Start (UTC)', 'Trial Start (UTC)', 'Trial End (UTC)', 'Canceled At (UTC)', 'Ended At (UTC)']
const C_SUBS = [
  'subscriptions.id',
  'subscriptions.plan_id',
  'subscriptions.plan_quantity',
  'subscriptions.plan_unit_price',
  'subscriptions.currency_code',
  'subscriptions.status',
  'subscriptions.current_term_start',
  'subscriptions.created_at',
  'subscriptions.cancelled_at',
  'customers.id',
]

/** A gateway_a subscriptions row. */
function aRow(o: {amount?: string; canceled?: string; created: string; ended?: string; id?: string; period: string; status: string; trialEnd?: string; trialStart?: string}): string[] {
  return [o.id ?? 'sub_1', 'cus_1', o.status, o.amount ?? '49.00', 'usd', 'month', 'prod_pro', o.created, o.period, o.trialStart ?? '', o.trialEnd ?? '', o.canceled ?? '', o.ended ?? '']
}

let db: string
let dir: string

beforeEach(async () => {
  process.env.PRICECTL_NOW = '2026-09-15'
  db = tempStore()
  dir = tempDir()
  await withStore(db, seedCatalog)
})

/** Import one file; exit 0 unless rows are rejected (then 1). */
async function importFile(kind: 'charges' | 'subscriptions', name: string, text: string, code = 0) {
  const r = await runArgs(db, [kind, 'import', writeTemp(name, text, dir), '--json'])
  expect(r.code, r.stderr).toBe(code)
  return r.json
}

type Row = Record<string, number | string | null>

async function report(since = '2026-01-01', until = '2026-08-31'): Promise<Record<string, Row>> {
  const r = await runArgs(db, ['revenue', 'report', '--since', since, '--until', until, '--json'])
  expect(r.code, r.stderr).toBe(0)
  return Object.fromEntries((r.json.rows as Row[]).map((row) => [row.key as string, row]))
}

describe('revenue definitions (issue 29)', () => {
  it('8: a scheduled cancel date is not the row\'s event time: non_renewing then cancelled, in either order, is one cancellation', async () => {
    const row = (status: string) => ['cb_1', 'pro-monthly-plan', '1', '49.00', 'USD', status, '2026-06-05T00:00:00Z', '2026-01-05T00:00:00Z', '2026-07-05T00:00:00Z', 'u1']
    const results: unknown[] = []
    for (const order of [
      ['non_renewing', 'cancelled'],
      ['cancelled', 'non_renewing'],
    ]) {
      db = tempStore()
      await withStore(db, seedCatalog)
      for (const [i, status] of order.entries()) await importFile('subscriptions', `c-${order[0]}-${i}.csv`, csv(C_SUBS, [row(status)]))
      const list = await runArgs(db, ['subscriptions', 'list', '--json'])
      expect(list.json.subscriptions).toMatchObject([{cancel_at: Date.UTC(2026, 6, 5) / 1000, status: 'canceled'}])
      const months = await report()
      expect(months['2026-06']).toMatchObject({active_subscriptions: 1, mrr: 49})
      expect(months['2026-07']).toMatchObject({churned_customers: 1, churned_mrr: 49, churned_subscriptions: 1, mrr: 0})
      results.push({list: list.json.subscriptions, months})
    }
    expect(results[1]).toEqual(results[0])
  })

  it('9: a trial that ends without payment never enters MRR, churn or cohorts; a converted trial counts from its end', async () => {
    const json = await importFile(
      'subscriptions',
      'trials.csv',
      csv(A_SUBS, [
        // Never converted: canceled, Trial Start = Created, Trial End = Ended At.
        aRow({canceled: '2026-01-20 00:00:00', created: '2026-01-10 00:00:00', ended: '2026-01-24 00:00:00', id: 'sub_lapsed', period: '2026-01-10 00:00:00', status: 'canceled', trialEnd: '2026-01-24 00:00:00', trialStart: '2026-01-10 00:00:00'}),
        // Converted on 2026-02-03: paying from then, not from its created date.
        ['sub_paid', 'cus_2', 'active', '49.00', 'usd', 'month', 'prod_pro', '2026-01-20 00:00:00', '2026-02-03 00:00:00', '2026-01-20 00:00:00', '2026-02-03 00:00:00', '', ''],
      ]),
    )
    expect(json).toMatchObject({inserted: 2, rejected: 0})
    const months = await report('2026-01-01', '2026-03-31')
    expect(months['2026-01']).toMatchObject({active_subscriptions: 0, churned_customers: 0, churned_subscriptions: 0, mrr: 0, new_customers: 0, new_subscriptions: 0})
    expect(months['2026-02']).toMatchObject({active_subscriptions: 1, churned_customers: 0, mrr: 49, new_customers: 1, new_subscriptions: 1})
    const cohorts = await runArgs(db, ['revenue', 'cohorts', '--since', '2026-01-01', '--until', '2026-03-31', '--json'])
    expect(cohorts.json.cohorts.map((c: {cohort: string; customers: number}) => [c.cohort, c.customers])).toEqual([['2026-02', 1]])
  })

  it('10: unpaid takes effect from its event: the months before keep their MRR, the churn falls in the month it happened', async () => {
    await importFile('subscriptions', 'jan.csv', csv(A_SUBS, [aRow({created: '2026-01-05 00:00:00', period: '2026-01-05 00:00:00', status: 'active'})]))
    await importFile('subscriptions', 'jun.csv', csv(A_SUBS, [aRow({created: '2026-01-05 00:00:00', period: '2026-06-05 00:00:00', status: 'unpaid'})]))
    const months = await report('2026-01-01', '2026-07-31')
    for (const m of ['2026-01', '2026-02', '2026-03', '2026-04', '2026-05']) expect(months[m], m).toMatchObject({active_subscriptions: 1, mrr: 49})
    expect(months['2026-06']).toMatchObject({active_subscriptions: 0, churned_customers: 1, churned_mrr: 49, churned_subscriptions: 1, logo_churn_rate: 100, mrr: 0})
    expect(months['2026-07']).toMatchObject({churned_customers: 0, mrr: 0})
  })

  it('11: a plan change in place (same id, new amount) is an expansion in the month it happens, a contraction back', async () => {
    await importFile(
      'subscriptions',
      'changes.csv',
      csv(A_SUBS, [
        aRow({created: '2026-01-05 00:00:00', period: '2026-01-05 00:00:00', status: 'active'}),
        aRow({amount: '99.00', created: '2026-01-05 00:00:00', period: '2026-04-05 00:00:00', status: 'active'}),
        aRow({amount: '19.00', created: '2026-01-05 00:00:00', period: '2026-06-05 00:00:00', status: 'active'}),
      ]),
    )
    const months = await report('2026-01-01', '2026-07-31')
    expect(months['2026-03']).toMatchObject({expansion_mrr: 0, mrr: 49})
    expect(months['2026-04']).toMatchObject({expansion_mrr: 50, mrr: 99, net_new_mrr: 50, starting_mrr: 49})
    expect(months['2026-06']).toMatchObject({contraction_mrr: 80, mrr: 19, revenue_churn_rate: 80.81})
  })

  it('12: LTV is exact: ARPA is not rounded to the cent before the division', () => {
    // 82.49 of MRR over 3 paying customers (ARPA 27.4966...), 1 of 3 churned: 82.49, not 27.50 x 3 = 82.50.
    const m = {...noMovements(), churned_customers: 1, starting_customers: 3}
    expect(rates(m, 8249, 3, [1n, 1n]).ltv).toBe(8249)
    // A week is 12/52 of a month: 1000 x 12/52 / (1/4) = 923.08 cents.
    expect(rates({...m, starting_customers: 4}, 1000, 1, [12n, 52n]).ltv).toBe(923)
  })

  it('13: a charge whose status moved forward (paid, then lost in a dispute) wins over the same timestamp, in either order', async () => {
    const header = ['id', 'Created date (UTC)', 'Amount', 'Amount Refunded', 'Currency', 'Status', 'Customer ID', 'product (metadata)']
    const paid = ['ch_1', '2026-02-03 10:00:00', '19.00', '0.00', 'usd', 'Paid', 'cus_1', 'pro_monthly']
    const lost = ['ch_1', '2026-02-03 10:00:00', '19.00', '0.00', 'usd', 'Dispute lost', 'cus_1', 'pro_monthly']
    for (const order of [
      [paid, lost],
      [lost, paid],
    ]) {
      db = tempStore()
      await withStore(db, seedCatalog)
      for (const [i, row] of order.entries()) await importFile('charges', `p-${row[5]}-${i}.csv`, csv(header, [row]))
      const list = await runArgs(db, ['charges', 'list', '--json'])
      expect(list.json.charges).toMatchObject([{amount: 19, amount_refunded: 19, status: 'succeeded'}])
      expect((await report('2026-02-01', '2026-02-28'))['2026-02']).toMatchObject({net_revenue: 0})
    }
  })

  it('14: reject reasons name the problem (cancel before created), and the summary groups them by it', async () => {
    const json = await importFile(
      'subscriptions',
      'bad.csv',
      csv(A_SUBS, [
        aRow({canceled: '2026-01-01 00:00:00', created: '2026-02-01 00:00:00', ended: '2026-01-15 00:00:00', id: 'sub_bad1', period: '2026-02-01 00:00:00', status: 'canceled'}),
        aRow({canceled: '2026-02-01 00:00:00', created: '2026-03-01 00:00:00', ended: '2026-02-15 00:00:00', id: 'sub_bad2', period: '2026-03-01 00:00:00', status: 'canceled'}),
      ]),
      1,
    )
    expect(json).toMatchObject({inserted: 0, rejected: 2})
    expect(json.rejected_by_reason).toEqual({'cancel before created': 2})
  })
})
