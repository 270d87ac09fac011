import {beforeAll, describe, expect, it} from 'vitest'

import {runArgs, seedCatalog, withStore} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * The metrics fixture, written through `subscriptions create` (pro_monthly, USD, so each
 * amount is its MRR). The engine test (test/engine/revenue-metrics.test.ts) has the same
 * spans; the hand computation:
 *
 *   A  100.00 from 2025-12-10, active
 *   B   50.00 from 2025-12-05, canceled at 2026-02-10 10:00:00; 80.00 from 2026-02-10 10:00:30 (upgrade)
 *   C   60.00 from 2025-11-20, canceled at 2026-03-15; 20.00 from 2026-03-15 (downgrade)
 *   D   40.00 from 2026-01-15 (new)
 *   E   30.00 from 2025-12-01, canceled at 2026-01-20 (churn); 35.00 from 2026-03-05 (reactivation)
 *   F   25.00 from 2026-02-03, canceled_at 2026-03-25, cancel_at 2026-04-10 (churns in April, at the end of access)
 *   G   15.00 trialing since 2026-01-05: not in MRR
 *   H   10.00 from 2026-04-02 (new)
 *
 * month | start MRR (customers) | new        | expansion | contraction | churned    | reactivation | end MRR (customers)
 * Jan   | 240 (A B C E: 4)      | D 40       |           |             | E 30       |              | 250 (4)
 * Feb   | 250 (4)               | F 25       | B +30     |             |            |              | 305 (5)
 * Mar   | 305 (5)               |            |           | C -40       |            | E 35         | 300 (6)
 * Apr   | 300 (6)               | H 10       |           |             | F 25       |              | 285 (6)
 *
 * logo churn = churned customers / customers at the start; revenue churn = (churned +
 * contraction) / start MRR; NRR = (start + expansion - contraction - churned) / start;
 * ARPU = MRR / users at the end; LTV = ARPU / logo churn (a month's):
 * Jan 1/4 = 25%, 30/240 = 12.5%, 210/240 = 87.5%, ARPU 250/4 = 62.50, LTV 62.50/0.25 = 250.00
 * Feb 0%, 0%, 280/250 = 112%, ARPU 305/5 = 61.00, LTV none (no churn)
 * Mar 0%, 40/305 = 13.11%, 265/305 = 86.89%, ARPU 300/6 = 50.00, LTV none
 * Apr 1/6 = 16.67%, 25/300 = 8.33%, 275/300 = 91.67%, ARPU 285/6 = 47.50, LTV 47.50 x 6 = 285.00
 * Total (the months pooled, docs/revenue.md "Rates"): logo churn (1 + 0 + 0 + 1) / (4 + 4 + 5
 * + 6) = 2/19 = 10.53%, revenue churn (30 + 40 + 25) / (240 + 250 + 305 + 300) = 95/1095 =
 * 8.68%, NRR (210 + 280 + 265 + 275) / 1095 = 94.06%, LTV 47.50 / (2/19) = 451.25.
 */
let db: string

async function sub(id: string, user: string, amount: string, created: string, status = 'active', extra: string[] = []) {
  const r = await runArgs(db, ['subscriptions', 'create', '--user-id', user, '--origin', 'gateway_b', '--origin-id', id, '--product', 'pro_monthly', '--amount', amount, '--currency', 'USD', '--created', created, '--status', status, ...extra])
  expect(r.code, r.stderr).toBe(0)
}

beforeAll(async () => {
  process.env.PRICECTL_NOW = '2026-04-20'
  db = tempStore()
  await withStore(db, seedCatalog)
  await sub('a1', 'A', '100', '2025-12-10')
  await sub('b1', 'B', '50', '2025-12-05', 'canceled', ['--cancel-at', '2026-02-10T10:00:00Z'])
  await sub('b2', 'B', '80', '2026-02-10T10:00:30Z')
  await sub('c1', 'C', '60', '2025-11-20', 'canceled', ['--cancel-at', '2026-03-15'])
  await sub('c2', 'C', '20', '2026-03-15')
  await sub('d1', 'D', '40', '2026-01-15')
  await sub('e1', 'E', '30', '2025-12-01', 'canceled', ['--cancel-at', '2026-01-20'])
  await sub('e2', 'E', '35', '2026-03-05')
  await sub('f1', 'F', '25', '2026-02-03', 'canceled', ['--canceled-at', '2026-03-25', '--cancel-at', '2026-04-10'])
  await sub('g1', 'G', '15', '2026-01-05', 'trialing', ['--trial-start', '2026-01-05', '--trial-end', '2026-02-05'])
  await sub('h1', 'H', '10', '2026-04-02')
})

const WINDOW = ['--since', '2026-01-01', '--until', '2026-04-30']
const ZERO = {contraction_mrr: 0, free_subscriptions: 0, churned_customers: 0, churned_mrr: 0, expansion_mrr: 0, gross_revenue: 0, net_revenue: 0, tax: 0, new_customers: 0, new_mrr: 0, reactivated_customers: 0, reactivation_mrr: 0}

describe('revenue report: MRR movements, churn, retention, LTV', () => {
  it('by month and over the window equal the hand computation', async () => {
    const r = await runArgs(db, ['revenue', 'report', ...WINDOW, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.rows).toEqual([
      {...ZERO, active_subscriptions: 4, arpu: 62.5, churned_customers: 1, churned_mrr: 30, churned_subscriptions: 1, customers: 4, key: '2026-01', logo_churn_rate: 25, ltv: 250, mrr: 250, net_new_mrr: 10, net_revenue_retention: 87.5, new_customers: 1, new_mrr: 40, new_subscriptions: 1, revenue_churn_rate: 12.5, starting_customers: 4, starting_mrr: 240},
      {...ZERO, active_subscriptions: 5, arpu: 61, churned_subscriptions: 1, customers: 5, expansion_mrr: 30, key: '2026-02', logo_churn_rate: 0, ltv: null, mrr: 305, net_new_mrr: 55, net_revenue_retention: 112, new_customers: 1, new_mrr: 25, new_subscriptions: 2, revenue_churn_rate: 0, starting_customers: 4, starting_mrr: 250},
      {...ZERO, active_subscriptions: 6, arpu: 50, churned_subscriptions: 1, contraction_mrr: 40, customers: 6, key: '2026-03', logo_churn_rate: 0, ltv: null, mrr: 300, net_new_mrr: -5, net_revenue_retention: 86.89, new_subscriptions: 2, reactivated_customers: 1, reactivation_mrr: 35, revenue_churn_rate: 13.11, starting_customers: 5, starting_mrr: 305},
      {...ZERO, active_subscriptions: 6, arpu: 47.5, churned_customers: 1, churned_mrr: 25, churned_subscriptions: 1, customers: 6, key: '2026-04', logo_churn_rate: 16.67, ltv: 285, mrr: 285, net_new_mrr: -15, net_revenue_retention: 91.67, new_customers: 1, new_mrr: 10, new_subscriptions: 1, revenue_churn_rate: 8.33, starting_customers: 6, starting_mrr: 300},
    ])
    expect(r.json.totals).toEqual({
      active_subscriptions: 6,
      arpu: 47.5,
      churned_customers: 2,
      churned_mrr: 55,
      churned_subscriptions: 4,
      contraction_mrr: 40,
      customers: 6,
      expansion_mrr: 30,
      free_subscriptions: 0,
      gross_revenue: 0,
      key: 'total',
      logo_churn_rate: 10.53,
      ltv: 451.25,
      mrr: 285,
      net_new_mrr: 45,
      net_revenue: 0,
      net_revenue_retention: 94.06,
      new_customers: 3,
      new_mrr: 75,
      new_subscriptions: 6,
      reactivated_customers: 1,
      reactivation_mrr: 35,
      revenue_churn_rate: 8.68,
      starting_customers: 4,
      starting_mrr: 240,
      tax: 0,
    })
  })

  it('by quarter (--period) and by ISO week', async () => {
    // Q1: 240 + new 65 + expansion 30 + reactivation 35 - contraction 40 - churned 30 = 300;
    // logo 1/4, revenue 70/240 = 29.17%, NRR 200/240 = 83.33%, LTV 50.00 x 3 months / 0.25 = 600.00.
    const q = await runArgs(db, ['revenue', 'report', '--period', 'quarter', '--since', '2026-01-01', '--until', '2026-03-31', '--json'])
    expect(q.code, q.stderr).toBe(0)
    expect(q.json.by).toBe('quarter')
    expect(q.json.rows).toHaveLength(1)
    expect(q.json.rows[0]).toMatchObject({contraction_mrr: 40, churned_mrr: 30, expansion_mrr: 30, key: '2026-Q1', logo_churn_rate: 25, ltv: 600, mrr: 300, net_revenue_retention: 83.33, new_mrr: 65, reactivation_mrr: 35, revenue_churn_rate: 29.17, starting_mrr: 240})
    // The week of B's upgrade (Monday 2026-02-09): A 100 + B 50 + C 60 + D 40 + F 25 = 275, +30 -> 305, NRR 305/275.
    const w = await runArgs(db, ['revenue', 'report', '--by', 'week', '--since', '2026-02-09', '--until', '2026-02-15', '--json'])
    expect(w.json.rows).toEqual([expect.objectContaining({expansion_mrr: 30, key: '2026-02-09', mrr: 305, net_revenue_retention: 110.91, starting_mrr: 275})])
  })

  it('groups carry the movements of their own subscriptions', async () => {
    const r = await runArgs(db, ['revenue', 'report', ...WINDOW, '--by', 'product', '--json'])
    const {key: _k, ...totals} = r.json.totals
    expect(r.json.rows).toEqual([{...totals, key: 'pro_monthly'}])
  })

  it('tables show formatted currency and percentages; CSV keeps numbers, every field', async () => {
    const r = await runArgs(db, ['revenue', 'report', ...WINDOW])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('MRR movements (USD per month)')
    expect(r.stdout).toMatch(/│ 2026-03 +│ \$300\.00 +│ 6 +│ 2 +│ 1 +│ \$0\.00 +│ \$50\.00 +│/)
    expect(r.stdout).toMatch(/│ 2026-03 +│ \$305\.00 +│ \$0\.00 +│ \$0\.00 +│ -\$40\.00 +│ \$0\.00 +│ \$35\.00 +│ -\$5\.00 +│/)
    expect(r.stdout).toMatch(/│ 2026-01 +│ 4 +│ 1 +│ 0 +│ 1 +│ 4 +│/)
    expect(r.stdout).toMatch(/│ 2026-01 +│ 25% +│ 12\.5% +│ 87\.5% +│ \$62\.50 +│ \$250\.00 +│/)
    expect(r.stdout).toMatch(/│ 2026-02 +│ 0% +│ 0% +│ 112% +│ \$61\.00 +│ - +│/)
    expect(r.stdout).toMatch(/│ total +│ 10\.53% +│ 8\.68% +│ 94\.06% +│ \$47\.50 +│ \$451\.25 +│/)
    expect(r.stdout).not.toContain('MRR trend') // not a terminal
    const csv = await runArgs(db, ['revenue', 'report', ...WINDOW, '--output', 'csv'])
    const [head, jan] = csv.stdout.trim().split('\n')
    expect(head).toBe(
      'month,mrr,active_subscriptions,new_subscriptions,churned_subscriptions,net_revenue,arpu,starting_mrr,new_mrr,expansion_mrr,contraction_mrr,churned_mrr,reactivation_mrr,net_new_mrr,starting_customers,customers,new_customers,reactivated_customers,churned_customers,logo_churn_rate,revenue_churn_rate,net_revenue_retention,ltv,free_subscriptions,tax,gross_revenue',
    )
    expect(jan).toBe('2026-01,250,4,1,1,0,62.5,240,40,0,0,30,0,10,4,4,1,0,1,25,12.5,87.5,250,0,0,0')
  })
})

describe('revenue cohorts', () => {
  const COHORT_WINDOW = ['--since', '2025-11-01', '--until', '2026-04-30']

  it('--json: logo and revenue retention per month since signup, as computed by hand', async () => {
    const r = await runArgs(db, ['revenue', 'cohorts', ...COHORT_WINDOW, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({currency: 'USD', since: '2025-11-01', success: true, until: '2026-04-30'})
    const view = r.json.cohorts.map((c: {cohort: string; customers: number; months: {logo_retention: number; revenue_retention: number}[]; mrr: number}) => [c.cohort, c.customers, c.mrr, c.months.map((m) => [m.logo_retention, m.revenue_retention])])
    expect(view).toEqual([
      // C: 60, then 20 from March 15.
      ['2025-11', 1, 60, [[100, 100], [100, 100], [100, 100], [100, 100], [100, 33.33], [100, 33.33]]],
      // A 100 + B 50 + E 30 = 180; January: E gone (150); February: B 80 (180); March on: E back at 35 (215 = 119.44%).
      ['2025-12', 3, 180, [[100, 100], [66.67, 83.33], [66.67, 100], [100, 119.44], [100, 119.44]]],
      ['2026-01', 1, 40, [[100, 100], [100, 100], [100, 100], [100, 100]]],
      ['2026-02', 1, 25, [[100, 100], [100, 100], [0, 0]]],
      ['2026-04', 1, 10, [[100, 100]]],
    ])
    expect(r.json.cohorts[1].months[1]).toEqual({customers: 2, logo_retention: 66.67, month: 1, mrr: 150, revenue_retention: 83.33})
  })

  it('prints two tables with formatted currency, or CSV', async () => {
    const r = await runArgs(db, ['revenue', 'cohorts', ...COHORT_WINDOW])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('logo retention')
    expect(r.stdout).toContain('revenue retention')
    expect(r.stdout).toMatch(/│ 2025-12 +│ 3 +│ \$180\.00 +│ 100% +│ 66\.67% +│ 66\.67% +│ 100% +│ 100% +│/)
    expect(r.stdout).toMatch(/│ 2025-12 +│ 3 +│ \$180\.00 +│ 100% +│ 83\.33% +│ 100% +│ 119\.44% +│ 119\.44% +│/)
    expect(r.stdout).toContain('5 cohorts of 7 customers')
    const csv = await runArgs(db, ['revenue', 'cohorts', ...COHORT_WINDOW, '--output', 'csv'])
    const lines = csv.stdout.trim().split('\n')
    expect(lines[0]).toBe('cohort,cohort_customers,starting_mrr,month,customers,mrr,logo_retention,revenue_retention')
    expect(lines).toContain('2025-12,3,180,1,2,150,66.67,83.33')
    const bad = await runArgs(db, ['revenue', 'cohorts', '--since', '2026-03-01', '--until', '2026-01-01'])
    expect(bad.code).toBe(2)
  })
})
