import {beforeAll, describe, expect, it} from 'vitest'

import {barChart} from '../../src/revenue/report.js'
import {runArgs, seedCatalog, withStore} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * A hand-computed store (FX: EUR 0.8 per USD). Window 2026-01-01 .. 2026-03-31.
 *   s1 u1 DE pro_monthly    9.99 USD monthly   active, created 01-10       -> 9.99 / month
 *   s2 u2 FR pro_yearly     120 EUR yearly     active, created 2025-12-01  -> 150 USD / 12 = 12.50
 *   s3 u3 DE team_quarterly 30 USD / 3 months  active, created 02-01       -> 10.00
 *   s4 u4 US weekly         7 USD weekly       active, created 03-01       -> 7 x 52 / 12 = 30.33
 *   s5 u1 DE pro_monthly    50 USD             canceled, ends 2026-05-01   -> 50.00 (still live)
 *   s6 u6 -- pro_monthly    20 USD             canceled, ended 2026-02-15  -> churned in February
 *   s7 u7 trialing, s8 u8 pending: not in MRR
 * MRR at the end (04-01) = 9.99 + 12.50 + 10.00 + 30.33 + 50.00 = 112.82 over 5 subscriptions
 * of 4 users: ARPU 28.21.
 * Charges: c1 9.99 USD (January), c2 120 EUR with 30 EUR refunded (February: 150 - 37.50),
 * c3 failed, c4 pending, c5 before the window. Net revenue 9.99 + 112.50 = 122.49.
 *
 * MRR movements per customer (user): u1 pays 50 (s5) and adds 9.99 on 01-10 (expansion);
 * u2 12.50 throughout; u3 new 10 in February; u4 new 30.33 in March; u6 churns 20 on 02-15.
 * Jan: start 82.50 (u1 u2 u6), +9.99 -> 92.49; NRR 92.49 / 82.50 = 112.11%.
 * Feb: start 92.49, new 10, churned 20 -> 82.49; logo churn 1/3 = 33.33%, revenue churn
 *      20 / 92.49 = 21.62%, NRR 72.49 / 92.49 = 78.38%; LTV = ARPU (82.49 / 3) / (1/3) = 82.49
 *      (exact: ARPU is not rounded to 27.50 before the division).
 * Mar: start 82.49, new 30.33 -> 112.82; no churn: NRR 100%, no LTV.
 * Total (the months pooled): logo churn 1 / (3 + 3 + 3) = 11.11%, revenue churn 20 / (82.50
 * + 92.49 + 82.49) = 7.77%, NRR (92.49 + 72.49 + 82.49) / 257.48 = 96.11%, LTV (112.82 / 4)
 * / (1/9) = 253.845 -> 253.85.
 * By country: DE u1 50 + 9.99 and u3 new 10; US u4 new (nothing at the start: no rates);
 * FR u2 unchanged; unknown u6 churned (100%).
 */
const NONE = {free_subscriptions: 0, tax: 0, churned_customers: 0, churned_mrr: 0, contraction_mrr: 0, expansion_mrr: 0, new_customers: 0, new_mrr: 0, reactivated_customers: 0, reactivation_mrr: 0}
let db: string

async function sub(id: string, user: string, product: string, amount: string, currency: string, created: string, status: string, extra: string[] = []) {
  const r = await runArgs(db, ['subscriptions', 'create', '--user-id', user, '--origin', 'gateway_b', '--origin-id', id, '--product', product, '--amount', amount, '--currency', currency, '--created', created, '--status', status, ...extra])
  expect(r.code, r.stderr).toBe(0)
}

async function charge(id: string, user: string, amount: string, currency: string, created: string, status: string, extra: string[] = []) {
  const r = await runArgs(db, ['charges', 'create', '--user-id', user, '--origin', 'gateway_b', '--origin-id', id, '--product', 'lifetime', '--amount', amount, '--currency', currency, '--created', created, '--status', status, ...extra])
  expect(r.code, r.stderr).toBe(0)
}

beforeAll(async () => {
  process.env.PRICECTL_NOW = '2026-03-15'
  db = tempStore()
  await withStore(db, seedCatalog)
  await sub('s1', 'u1', 'pro_monthly', '9.99', 'USD', '2026-01-10', 'active', ['--country', 'DE'])
  await sub('s2', 'u2', 'pro_yearly', '120', 'EUR', '2025-12-01', 'active', ['--country', 'FR'])
  await sub('s3', 'u3', '{"type":"gateway_a_with_interval","gateway_a_product_id":"prod_team","interval":"month","interval_count":3}', '30', 'USD', '2026-02-01', 'active', ['--country', 'DE'])
  await sub('s4', 'u4', 'weekly', '7', 'USD', '2026-03-01', 'active', ['--country', 'US'])
  await sub('s5', 'u1', 'pro_monthly', '50', 'USD', '2025-11-01', 'canceled', ['--country', 'DE', '--cancel-at', '2026-05-01', '--canceled-at', '2026-03-01'])
  await sub('s6', 'u6', 'pro_monthly', '20', 'USD', '2025-10-01', 'canceled', ['--cancel-at', '2026-02-15'])
  await sub('s7', 'u7', 'pro_monthly', '15', 'USD', '2026-03-05', 'trialing', ['--trial-start', '2026-03-05', '--trial-end', '2026-03-19'])
  await sub('s8', 'u8', 'pro_monthly', '10', 'USD', '2026-03-06', 'pending')
  await charge('c1', 'u1', '9.99', 'USD', '2026-01-10', 'succeeded', ['--country', 'DE'])
  await charge('c2', 'u2', '120', 'EUR', '2026-02-10', 'succeeded', ['--country', 'FR', '--amount-refunded', '30'])
  await charge('c3', 'u3', '30', 'USD', '2026-02-11', 'failed')
  await charge('c4', 'u4', '7', 'USD', '2026-03-02', 'pending')
  await charge('c5', 'u5', '100', 'USD', '2025-12-31', 'succeeded')
})

const WINDOW = ['--since', '2026-01-01', '--until', '2026-03-31']

describe('revenue report', () => {
  it('MRR, active, new, churned, net revenue and ARPU by month equal the hand-computed figures', async () => {
    const r = await runArgs(db, ['revenue', 'report', ...WINDOW, '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({by: 'month', currency: 'USD', since: '2026-01-01', success: true, until: '2026-03-31'})
    expect(r.json.rows).toEqual([
      {...NONE, active_subscriptions: 4, arpu: 30.83, churned_subscriptions: 0, customers: 3, expansion_mrr: 9.99, key: '2026-01', logo_churn_rate: 0, ltv: null, mrr: 92.49, net_new_mrr: 9.99, net_revenue: 9.99, gross_revenue: 9.99, net_revenue_retention: 112.11, new_subscriptions: 1, revenue_churn_rate: 0, starting_customers: 3, starting_mrr: 82.5},
      {...NONE, active_subscriptions: 4, arpu: 27.5, churned_customers: 1, churned_mrr: 20, churned_subscriptions: 1, customers: 3, key: '2026-02', logo_churn_rate: 33.33, ltv: 82.49, mrr: 82.49, net_new_mrr: -10, net_revenue: 112.5, gross_revenue: 112.5, net_revenue_retention: 78.38, new_customers: 1, new_mrr: 10, new_subscriptions: 1, revenue_churn_rate: 21.62, starting_customers: 3, starting_mrr: 92.49},
      {...NONE, active_subscriptions: 5, arpu: 28.21, churned_subscriptions: 0, customers: 4, key: '2026-03', logo_churn_rate: 0, ltv: null, mrr: 112.82, net_new_mrr: 30.33, net_revenue: 0, gross_revenue: 0, net_revenue_retention: 100, new_customers: 1, new_mrr: 30.33, new_subscriptions: 1, revenue_churn_rate: 0, starting_customers: 3, starting_mrr: 82.49},
    ])
    expect(r.json.totals).toEqual({
      ...NONE,
      active_subscriptions: 5,
      arpu: 28.21,
      churned_customers: 1,
      churned_mrr: 20,
      churned_subscriptions: 1,
      customers: 4,
      expansion_mrr: 9.99,
      key: 'total',
      logo_churn_rate: 11.11,
      ltv: 253.85,
      mrr: 112.82,
      net_new_mrr: 30.32,
      net_revenue: 122.49,
      gross_revenue: 122.49,
      net_revenue_retention: 96.11,
      new_customers: 2,
      new_mrr: 40.33,
      new_subscriptions: 3,
      revenue_churn_rate: 7.77,
      starting_customers: 3,
      starting_mrr: 82.5,
    })
  })

  it('groups by country and by product over the window', async () => {
    const byCountry = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'country', '--json'])
    expect(byCountry.json.rows).toEqual([
      {...NONE, active_subscriptions: 3, arpu: 35, churned_subscriptions: 0, customers: 2, expansion_mrr: 9.99, key: 'DE', logo_churn_rate: 0, ltv: null, mrr: 69.99, net_new_mrr: 19.99, net_revenue: 9.99, gross_revenue: 9.99, net_revenue_retention: 119.98, new_customers: 1, new_mrr: 10, new_subscriptions: 2, revenue_churn_rate: 0, starting_customers: 1, starting_mrr: 50},
      {...NONE, active_subscriptions: 1, arpu: 30.33, churned_subscriptions: 0, customers: 1, key: 'US', logo_churn_rate: null, ltv: null, mrr: 30.33, net_new_mrr: 30.33, net_revenue: 0, gross_revenue: 0, net_revenue_retention: null, new_customers: 1, new_mrr: 30.33, new_subscriptions: 1, revenue_churn_rate: null, starting_customers: 0, starting_mrr: 0},
      {...NONE, active_subscriptions: 1, arpu: 12.5, churned_subscriptions: 0, customers: 1, key: 'FR', logo_churn_rate: 0, ltv: null, mrr: 12.5, net_new_mrr: 0, net_revenue: 112.5, gross_revenue: 112.5, net_revenue_retention: 100, new_subscriptions: 0, revenue_churn_rate: 0, starting_customers: 1, starting_mrr: 12.5},
      {...NONE, active_subscriptions: 0, arpu: null, churned_customers: 1, churned_mrr: 20, churned_subscriptions: 1, customers: 0, key: 'unknown', logo_churn_rate: 100, ltv: null, mrr: 0, net_new_mrr: -20, net_revenue: 0, gross_revenue: 0, net_revenue_retention: 0, new_subscriptions: 0, revenue_churn_rate: 100, starting_customers: 1, starting_mrr: 20},
    ])
    const byProduct = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'product', '--json'])
    expect(byProduct.json.rows.map((x: {key: string; mrr: number}) => [x.key, x.mrr])).toEqual([
      ['pro_monthly', 59.99],
      ['weekly', 30.33],
      ['pro_yearly', 12.5],
      ['team_quarterly', 10],
      ['lifetime', 0],
    ])
  })

  it('prints a table with a bar chart, or CSV', async () => {
    const table = await runArgs(db, ['revenue', 'report', ...WINDOW])
    expect(table.stdout).toContain('│ total')
    expect(table.stdout).toContain('MRR (USD) by month')
    expect(table.stdout).toMatch(/2026-03 │█{40} +112\.82/)
    expect(table.stdout).toContain('revenue 2026-01-01 to 2026-03-31 by month: MRR $112.82, ')
    const csv = await runArgs(db, ['revenue', 'report', ...WINDOW, '--output', 'csv'])
    expect(csv.stdout.trim().split('\n')).toEqual([
      'month,mrr,active_subscriptions,new_subscriptions,churned_subscriptions,net_revenue,arpu,starting_mrr,new_mrr,expansion_mrr,contraction_mrr,churned_mrr,reactivation_mrr,net_new_mrr,starting_customers,customers,new_customers,reactivated_customers,churned_customers,logo_churn_rate,revenue_churn_rate,net_revenue_retention,ltv,free_subscriptions,tax,gross_revenue',
      '2026-01,92.49,4,1,0,9.99,30.83,82.5,0,9.99,0,0,0,9.99,3,3,0,0,0,0,0,112.11,,0,0,9.99',
      '2026-02,82.49,4,1,1,112.5,27.5,92.49,10,0,0,20,0,-10,3,3,1,0,1,33.33,21.62,78.38,82.49,0,0,112.5',
      '2026-03,112.82,5,1,0,0,28.21,82.49,30.33,0,0,0,0,30.33,3,4,1,0,0,0,0,100,,0,0,0',
    ])
    const defaults = await runArgs(db, ['revenue', 'report', '--json'])
    expect(defaults.json).toMatchObject({since: '2025-04-01', until: '2026-03-31'})
    expect(defaults.json.rows).toHaveLength(12)
    const bad = await runArgs(db, ['revenue', 'report', '--since', '2026-03-01', '--until', '2026-01-01', '--json'])
    expect(bad.code).toBe(2)
  })

  it('draws bars in eighths of a block', () => {
    const chart = barChart('t', [
      {label: 'a', value: 8},
      {label: 'bb', value: 1},
      {label: 'c', value: 0},
    ], 2)
    expect(chart.split('\n')).toEqual(['t', 'a  │██  8.00', 'bb │▎   1.00', 'c  │    0.00'])
  })
})
