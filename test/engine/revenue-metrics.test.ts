import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {cohortTable} from '../../src/revenue/cohorts.js'
import {changes, movements, noMovements, rates} from '../../src/revenue/metrics.js'
import {bucketKey, buckets, bucketStart} from '../../src/revenue/periods.js'
import type {Span} from '../../src/store/port/revenue.js'

const t = (iso: string) => Date.parse(iso.length === 10 ? `${iso}T00:00:00Z` : iso) / 1000
const span = (user: string, mrr: number, start: string, end: null | string = null): Span => ({end: end === null ? null : t(end), key: 'all', mrr, start: t(start), user_id: user})

/**
 * The metrics fixture (USD cents per month), the same as test/commands/revenue-metrics.test.ts:
 *   A  100.00 from 2025-12-10, running
 *   B   50.00 2025-12-05 .. 2026-02-10 10:00:00, then 80.00 from 2026-02-10 10:00:30 (upgrade, same day)
 *   C   60.00 2025-11-20 .. 2026-03-15, then 20.00 from 2026-03-15 (downgrade, same second)
 *   D   40.00 from 2026-01-15 (new)
 *   E   30.00 2025-12-01 .. 2026-01-20 (churn), then 35.00 from 2026-03-05 (reactivation)
 *   F   25.00 2026-02-03 .. 2026-04-10 (new, then churn)
 *   H   10.00 from 2026-04-02 (new)
 */
const SPANS: Span[] = [
  span('A', 10_000, '2025-12-10'),
  span('B', 5000, '2025-12-05', '2026-02-10T10:00:00Z'),
  span('B', 8000, '2026-02-10T10:00:30Z'),
  span('C', 6000, '2025-11-20', '2026-03-15'),
  span('C', 2000, '2026-03-15'),
  span('D', 4000, '2026-01-15'),
  span('E', 3000, '2025-12-01', '2026-01-20'),
  span('E', 3500, '2026-03-05'),
  span('F', 2500, '2026-02-03', '2026-04-10'),
  span('H', 1000, '2026-04-02'),
]

const MONTHS = buckets('month', t('2026-01-01'), t('2026-05-01'))

describe('MRR movements per customer', () => {
  it('equal the hand computation, month by month', () => {
    const [jan, feb, mar, apr] = movements(SPANS, MONTHS)
    // January: start A 100 + B 50 + C 60 + E 30 = 240 (4 customers); D new 40; E churns 30 -> 250.
    expect(jan).toEqual({...noMovements(), churned: 3000, churned_customers: 1, customers: 4, ending_mrr: 25_000, new: 4000, new_customers: 1, starting_customers: 4, starting_mrr: 24_000})
    // February: 250; F new 25; B 50 -> 80 on one day (ends 10:00:00, restarts 10:00:30): expansion 30 -> 305.
    expect(feb).toEqual({...noMovements(), customers: 5, ending_mrr: 30_500, expansion: 3000, new: 2500, new_customers: 1, starting_customers: 4, starting_mrr: 25_000})
    // March: 305; E comes back with 35 (reactivation, not new); C 60 -> 20 (contraction 40) -> 300.
    expect(mar).toEqual({...noMovements(), contraction: 4000, customers: 6, ending_mrr: 30_000, reactivated_customers: 1, reactivation: 3500, starting_customers: 5, starting_mrr: 30_500})
    // April: 300; H new 10; F churns 25 -> 285.
    expect(apr).toEqual({...noMovements(), churned: 2500, churned_customers: 1, customers: 6, ending_mrr: 28_500, new: 1000, new_customers: 1, starting_customers: 6, starting_mrr: 30_000})
  })

  it('the starting MRR plus the movements is the ending MRR, for any periods', () => {
    for (const bucket of ['week', 'month', 'quarter'] as const) {
      for (const m of movements(SPANS, buckets(bucket, t('2025-10-01'), t('2026-06-01')))) {
        expect(m.starting_mrr + m.new + m.expansion + m.reactivation - m.contraction - m.churned).toBe(m.ending_mrr)
        expect(m.starting_customers + m.new_customers + m.reactivated_customers - m.churned_customers).toBe(m.customers)
      }
    }
  })

  it('over the whole window: E churned and came back, so it counts in both', () => {
    const [all] = movements(SPANS, [{end: t('2026-05-01'), start: t('2026-01-01')}])
    // 240 + new (40 + 25 + 10) + expansion 30 + reactivation 35 - contraction 40 - churn (30 + 25) = 285
    expect(all).toEqual({churned: 5500, churned_customers: 2, contraction: 4000, customers: 6, ending_mrr: 28_500, expansion: 3000, new: 7500, new_customers: 3, reactivated_customers: 1, reactivation: 3500, starting_customers: 4, starting_mrr: 24_000})
  })

  it('changes a day apart are a churn and a reactivation; changes of one second are summed', () => {
    const cs = changes([span('X', 100, '2026-01-01', '2026-01-10'), span('X', 300, '2026-01-11'), span('X', 50, '2026-01-10', '2026-01-12')])
    expect(cs).toEqual([
      {after: 100, before: 0, t: t('2026-01-01')},
      {after: 50, before: 100, t: t('2026-01-10')},
      {after: 350, before: 50, t: t('2026-01-11')},
      {after: 300, before: 350, t: t('2026-01-12')},
    ])
    const [jan] = movements([span('X', 100, '2026-01-01', '2026-01-10'), span('X', 100, '2026-01-11')], [{end: t('2026-02-01'), start: t('2026-01-01')}])
    expect(jan).toMatchObject({churned: 100, new: 100, reactivation: 100})
  })

  it('a change at the first second of a period belongs to it; one before the window only to history', () => {
    const [dec, jan] = movements([span('Y', 700, '2025-12-31T23:59:59Z', '2026-01-01')], buckets('month', t('2025-12-01'), t('2026-02-01')))
    expect(dec).toMatchObject({ending_mrr: 700, new: 700})
    expect(jan).toMatchObject({churned: 700, ending_mrr: 0, starting_mrr: 700})
    const [feb] = movements([span('Z', 100, '2025-06-01', '2025-07-01'), span('Z', 200, '2026-02-02')], buckets('month', t('2026-02-01'), t('2026-03-01')))
    expect(feb).toMatchObject({reactivated_customers: 1, reactivation: 200})
  })
})

describe('movements of any history (property)', () => {
  const DAY = 86_400
  const base = t('2025-06-01')
  const spanArb = fc
    .record({
      end: fc.option(fc.integer({max: 400 * DAY, min: 1}), {nil: null}),
      mrr: fc.integer({max: 50_000, min: 1}),
      start: fc.integer({max: 360 * DAY, min: 0}),
      user: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    })
    .map((r): Span => ({end: r.end === null ? null : base + r.start + r.end, key: 'all', mrr: r.mrr, start: base + r.start, user_id: r.user}))

  it('each period adds up, and the periods add up to the whole window', () => {
    fc.assert(
      fc.property(fc.array(spanArb, {maxLength: 25}), fc.constantFrom('week' as const, 'month' as const, 'quarter' as const), fc.integer({max: 200 * DAY, min: 0}), (spans, bucket, offset) => {
        const since = base + offset
        const until = since + 200 * DAY
        const rows = movements(spans, buckets(bucket, since, until))
        const [all] = movements(spans, [{end: until, start: since}])
        const sum = noMovements()
        for (const m of rows) {
          expect(m.starting_mrr + m.new + m.expansion + m.reactivation - m.contraction - m.churned).toBe(m.ending_mrr)
          expect(m.starting_customers + m.new_customers + m.reactivated_customers - m.churned_customers).toBe(m.customers)
          for (const k of ['churned', 'churned_customers', 'contraction', 'expansion', 'new', 'new_customers', 'reactivated_customers', 'reactivation'] as const) sum[k] += m[k]
        }
        expect({...all, customers: 0, ending_mrr: 0, starting_customers: 0, starting_mrr: 0}).toEqual(sum)
        expect(all.starting_mrr).toBe(rows[0].starting_mrr)
        expect(all.ending_mrr).toBe(rows.at(-1)!.ending_mrr)
      }),
      {numRuns: 300},
    )
  })
})

describe('rates', () => {
  it('logo and revenue churn, NRR and LTV of January, March and the window', () => {
    const [jan, , mar] = movements(SPANS, MONTHS)
    // January: 1 of 4 customers churned: 25%; 30 of 240 lost: 12.5%; NRR (240 - 30) / 240 = 87.5%;
    // ARPU 62.50 (250 / 4 users) / 25% = 250.00.
    expect(rates(jan, 6250, 1, [1n, 1n])).toEqual({logo_churn_rate: 25, ltv: 25_000, net_revenue_retention: 87.5, revenue_churn_rate: 12.5})
    // March: no customer lost: LTV has no finite value; 40 / 305 = 13.11%; (305 - 40) / 305 = 86.89%.
    expect(rates(mar, 5000, 1, [1n, 1n])).toEqual({logo_churn_rate: 0, ltv: null, net_revenue_retention: 86.89, revenue_churn_rate: 13.11})
    // A quarter's churn rate is per quarter: ARPU 50.00 x 3 months / 25% = 600.00.
    expect(rates({...noMovements(), churned_customers: 1, starting_customers: 4, starting_mrr: 1}, 5000, 1, [3n, 1n]).ltv).toBe(60_000)
    // Nothing paying at the start: no rate.
    expect(rates(noMovements(), 0, 0, [1n, 1n])).toEqual({logo_churn_rate: null, ltv: null, net_revenue_retention: null, revenue_churn_rate: null})
  })
})

describe('periods', () => {
  it('ISO weeks start on Monday, quarters on Jan, Apr, Jul, Oct; the window clips the first and last', () => {
    expect(bucketStart('week', t('2026-02-15T23:00:00Z'))).toBe(t('2026-02-09'))
    expect(bucketStart('week', t('2026-02-09'))).toBe(t('2026-02-09'))
    expect(bucketKey('quarter', bucketStart('quarter', t('2026-05-20')))).toBe('2026-Q2')
    expect(buckets('quarter', t('2026-02-01'), t('2026-05-01'))).toEqual([
      {end: t('2026-04-01'), key: '2026-Q1', start: t('2026-02-01')},
      {end: t('2026-05-01'), key: '2026-Q2', start: t('2026-04-01')},
    ])
    expect(buckets('week', t('2026-01-01'), t('2026-01-13')).map((b) => b.key)).toEqual(['2025-12-29', '2026-01-05', '2026-01-12'])
  })
})

describe('cohorts by signup month', () => {
  it('equal the hand computation', () => {
    const cohorts = cohortTable(SPANS, t('2025-11-01'), t('2026-05-01'))
    const view = cohorts.map((c) => [c.cohort, c.customers, c.mrr, c.months.map((m) => [m.logo_retention, m.revenue_retention])])
    expect(view).toEqual([
      // C alone: 60 until March 15, then 20 (contraction): 33.33% of its MRR from month 4 (March).
      ['2025-11', 1, 60, [[100, 100], [100, 100], [100, 100], [100, 100], [100, 33.33], [100, 33.33]]],
      // A 100, B 50, E 30 = 180. End of January: E gone (2 of 3, 150 / 180); February: B at 80 (180 / 180);
      // March and April: E back with 35 (215 / 180 = 119.44%).
      ['2025-12', 3, 180, [[100, 100], [66.67, 83.33], [66.67, 100], [100, 119.44], [100, 119.44]]],
      ['2026-01', 1, 40, [[100, 100], [100, 100], [100, 100], [100, 100]]],
      // F ends April 10.
      ['2026-02', 1, 25, [[100, 100], [100, 100], [0, 0]]],
      // E's return in March is no signup.
      ['2026-04', 1, 10, [[100, 100]]],
    ])
    expect(cohorts[1].months[3]).toEqual({customers: 3, logo_retention: 100, month: 3, mrr: 215, revenue_retention: 119.44})
  })
})
