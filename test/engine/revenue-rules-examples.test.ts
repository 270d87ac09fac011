import {describe, expect, it} from 'vitest'

import {cohortTable, revenueCohorts} from '../../src/revenue/cohorts.js'
import {changes, movements, noMovements, rates} from '../../src/revenue/metrics.js'
import {centsToUsd, monthlyMinor} from '../../src/revenue/money.js'
import {bucketStart, buckets} from '../../src/revenue/periods.js'
import {figures, noFigures, paying, stretches} from '../../src/revenue/timeline.js'
import {openStore} from '../../src/store/db.js'
import type {HistoryEvent, Span} from '../../src/store/port/revenue.js'
import {addProduct, subscription} from '../helpers/contract-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * Fixed examples of the revenue rules (docs/revenue.md) at the edges the broader tests do not
 * reach: what mutation testing (`npm run mutate`, docs/hardening.md) showed no test pinned.
 * Each states a rule of the definitions, not the code's shape.
 */

const t = (iso: string) => Date.parse(iso.length === 10 ? `${iso}T00:00:00Z` : iso) / 1000
const span = (user: string, mrr: number, start: string, end: null | string = null): Span => ({end: end === null ? null : t(end), key: 'all', mrr, start: t(start), user_id: user})

describe('monthly amounts', () => {
  it('an interval count of none, 0 or below is one interval', () => {
    for (const count of [null, undefined, 0, -2]) {
      expect(monthlyMinor(1200, 'month', count)).toBe(1200)
      expect(monthlyMinor(12_000, 'year', count)).toBe(1000)
      expect(monthlyMinor(1200, 'week', count)).toBe(5200)
    }
    expect(monthlyMinor(1200, 'month', 3)).toBe(400)
    expect(monthlyMinor(100, 'day', 2)).toBe(1521)
    expect(monthlyMinor(1200, null, 1)).toBeNull()
    expect(monthlyMinor(1200, 'one_time', 1)).toBeNull()
  })

  it('cents to USD: none stays none', () => {
    expect(centsToUsd(null)).toBeNull()
    expect(centsToUsd(1234)).toBe(12.34)
    expect(centsToUsd(0)).toBe(0)
  })

  it('a quarter starts on the first day of its first month, whatever day inside it', () => {
    expect(bucketStart('quarter', t('2026-05-17T13:00:00Z'))).toBe(t('2026-04-01'))
    expect(bucketStart('quarter', t('2026-03-31T23:59:59Z'))).toBe(t('2026-01-01'))
    expect(buckets('quarter', t('2026-02-10'), t('2026-08-01')).map((b) => b.key)).toEqual(['2026-Q1', '2026-Q2', '2026-Q3'])
  })
})

describe('MRR changes and movements', () => {
  it('a span handed over to one with the same MRR at the same second is no change', () => {
    expect(changes([span('A', 100, '2026-01-01', '2026-02-01'), span('A', 100, '2026-02-01')])).toEqual([{after: 100, before: 0, t: t('2026-01-01')}])
    expect(changes([span('A', 100, '2026-01-01', '2026-02-01'), span('A', 150, '2026-02-01')])).toEqual([
      {after: 100, before: 0, t: t('2026-01-01')},
      {after: 150, before: 100, t: t('2026-02-01')},
    ])
  })

  it('changes on one UTC day are one movement per period: a period boundary inside the day splits them', () => {
    const noon = t('2026-03-10T12:00:00Z')
    const periods = [
      {end: noon, start: t('2026-03-10')},
      {end: t('2026-03-11'), start: noon},
    ]
    const spans = [span('A', 100, '2026-03-10T09:00:00Z', '2026-03-10T15:00:00Z'), span('A', 150, '2026-03-10T15:00:00Z')]
    const [morning, afternoon] = movements(spans, periods)
    expect(morning).toEqual({...noMovements(), customers: 1, ending_mrr: 100, new: 100, new_customers: 1})
    expect(afternoon).toEqual({...noMovements(), customers: 1, ending_mrr: 150, expansion: 50, starting_customers: 1, starting_mrr: 100})
  })

  it('a customer who started and stopped on one day never paid: their later start is new, not a reactivation', () => {
    const spans = [span('A', 100, '2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z'), span('A', 100, '2026-02-10')]
    const [jan, feb] = movements(spans, buckets('month', t('2026-01-01'), t('2026-03-01')))
    expect(jan).toEqual(noMovements())
    expect(feb).toEqual({...noMovements(), customers: 1, ending_mrr: 100, new: 100, new_customers: 1})
    // Paid for a day before: the comeback is a reactivation.
    const [, feb2] = movements([span('A', 100, '2026-01-05', '2026-01-06'), span('A', 100, '2026-02-10')], buckets('month', t('2026-01-01'), t('2026-03-01')))
    expect(feb2).toMatchObject({new: 0, reactivated_customers: 1, reactivation: 100})
  })

  it('LTV needs customers at the start who churned; with two churned of four it is ARPA over a 50% churn', () => {
    const m = {...noMovements(), churned: 200, churned_customers: 2, starting_customers: 4, starting_mrr: 400}
    // ARPA 1000 / 3 cents a month, churn 2 / 4 a month: LTV 2000 / 3 = 666.67 -> 667 cents.
    expect(rates(m, 1000, 3, [1n, 1n]).ltv).toBe(667)
    expect(rates({...m, starting_customers: 0, starting_mrr: 0}, 1000, 3, [1n, 1n])).toEqual({logo_churn_rate: null, ltv: null, net_revenue_retention: null, revenue_churn_rate: null})
    expect(rates({...m, churned_customers: 0}, 1000, 3, [1n, 1n]).ltv).toBeNull()
    expect(rates(m, 1000, 0, [1n, 1n]).ltv).toBeNull()
  })
})

describe('cohorts', () => {
  const window = (since: string, until: string) => [t(since), t(until)] as const

  it('a customer belongs to the window of their signup: from since, before until', () => {
    const spans = [span('early', 100, '2025-12-31T23:59:59Z'), span('first', 100, '2026-01-01'), span('last', 100, '2026-02-28T23:59:59Z'), span('late', 100, '2026-03-01')]
    const cohorts = cohortTable(spans, ...window('2026-01-01', '2026-03-01'))
    expect(cohorts.map((c) => [c.cohort, c.customers])).toEqual([
      ['2026-01', 1],
      ['2026-02', 1],
    ])
  })

  it('the signup is the first day that ends paying: a start and stop on one day is none, a same-day upgrade counts at its end', () => {
    const spans = [
      span('A', 100, '2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z'),
      span('A', 300, '2026-02-10'),
      span('B', 100, '2026-01-07T09:00:00Z', '2026-01-07T18:00:00Z'),
      span('B', 250, '2026-01-07T18:00:00Z'),
      // Never paying for a whole day: no cohort.
      span('C', 100, '2026-01-09T09:00:00Z', '2026-01-09T10:00:00Z'),
    ]
    const cohorts = cohortTable(spans, ...window('2026-01-01', '2026-03-01'))
    expect(cohorts.map((c) => [c.cohort, c.customers, c.mrr])).toEqual([
      ['2026-01', 1, 2.5],
      ['2026-02', 1, 3],
    ])
  })

  it('revenue cohorts: the window as given (until after since, at most 100 years), the counts in words', async () => {
    const store = openStore(tempStore())
    try {
      const product = await addProduct(store, 'pro_monthly')
      await store.revenue.save('subscriptions', [subscription({amount_usd_monthly_minor: 1000, created: t('2026-01-10'), product_id: product})])
      const r = await revenueCohorts(store, {since: t('2026-01-01'), until: t('2026-03-01')})
      expect(r).toMatchObject({message: 'cohorts by signup month 2026-01-01 to 2026-02-28: 1 cohort of 1 customer', since: '2026-01-01', until: '2026-02-28'})
      expect(r.cohorts.map((c) => [c.cohort, c.customers, c.mrr])).toEqual([['2026-01', 1, 10]])
      await store.revenue.save('subscriptions', [subscription({amount_usd_monthly_minor: 500, created: t('2026-02-10'), origin_id: 'sub_2', product_id: product, user_id: 'u2'})])
      expect((await revenueCohorts(store, {since: t('2026-01-01'), until: t('2026-03-01')})).message).toBe('cohorts by signup month 2026-01-01 to 2026-02-28: 2 cohorts of 2 customers')
      await expect(async () => await revenueCohorts(store, {since: t('2026-03-01'), until: t('2026-03-01')})).rejects.toThrow('--until (2026-03-01) must be after --since (2026-03-01)')
      const century = 100 * 366 * 86_400
      expect((await revenueCohorts(store, {since: t('2026-03-01') - century, until: t('2026-03-01')})).cohorts).toHaveLength(2)
      await expect(async () => await revenueCohorts(store, {since: t('2026-03-01') - century - 1, until: t('2026-03-01')})).rejects.toThrow('the cohorts cover more than 100 years')
    } finally {
      await store.close()
    }
  })

  it('month k is measured just before the end of the month: a customer who stops at midnight still counts for it', () => {
    const [c] = cohortTable([span('A', 100, '2026-01-10', '2026-02-01')], ...window('2026-01-01', '2026-03-01'))
    expect(c.months.map((m) => [m.month, m.customers, m.mrr])).toEqual([
      [0, 1, 1],
      [1, 0, 0],
    ])
  })
})

/** A subscription event as the history reads it. */
function event(over: Partial<HistoryEvent> & {event_id: string; event_timestamp: number}): HistoryEvent {
  return {
    amount_minor: 1000,
    amount_usd_monthly_minor: 1000,
    cancel_at: null,
    canceled_at: null,
    country: 'US',
    created: t('2026-01-01'),
    currency: 'USD',
    interval: 'month',
    interval_count: 1,
    key: 'all',
    origin: 'gateway_a',
    origin_id: 'sub_1',
    product_id: 1,
    tax_minor: 0,
    record: false,
    status: 'active',
    trial_end: null,
    trial_start: null,
    user_id: 'u1',
    ...over,
  }
}

const view = (all: ReturnType<typeof stretches>) => all.map((s) => ({end: s.end, key: s.key, mrr: s.mrr, start: s.start}))

describe('subscription stretches (docs/revenue.md, "Subscription history")', () => {
  it('events are read in (timestamp, id) order whatever order they come in', () => {
    const a = event({amount_usd_monthly_minor: 1000, event_id: 'a', event_timestamp: t('2026-01-01')})
    const b = event({amount_usd_monthly_minor: 2000, event_id: 'b', event_timestamp: t('2026-02-01')})
    const c = event({amount_usd_monthly_minor: 3000, event_id: 'c', event_timestamp: t('2026-02-01')})
    const expected = [
      {end: t('2026-02-01'), key: 'all', mrr: 1000, start: t('2026-01-01')},
      {end: null, key: 'all', mrr: 3000, start: t('2026-02-01')},
    ]
    expect(view(stretches([c, b, a]))).toEqual(expected)
    expect(view(stretches([b, a, c]))).toEqual(expected)
    expect(view(stretches([a, c, b]))).toEqual(expected)
  })

  it('the record read as an event is the latest; where a stored event has its id, the stored one (with the trial it showed) is read', () => {
    const trialEnd = t('2026-01-15')
    // The first event: it describes the subscription from its beginning, live from the trial's end.
    const stored = event({event_id: 'e1', event_timestamp: t('2026-01-20'), trial_end: trialEnd, trial_start: t('2026-01-01')})
    // The record keeps no trial dates once active.
    const record = {...stored, record: true, trial_end: null, trial_start: null}
    const expected = [{end: null, key: 'all', mrr: 1000, start: trialEnd}]
    expect(view(stretches([stored, record]))).toEqual(expected)
    expect(view(stretches([record, stored]))).toEqual(expected)
    // A record whose latest event is not stored is read after the stored events, in order.
    const second = event({amount_usd_monthly_minor: 2000, event_id: 'e2', event_timestamp: t('2026-02-01')})
    const newer = {...event({amount_usd_monthly_minor: 3000, event_id: 'e3', event_timestamp: t('2026-03-01')}), record: true}
    expect(view(stretches([newer, second, stored]))).toEqual([
      {end: t('2026-02-01'), key: 'all', mrr: 1000, start: trialEnd},
      {end: t('2026-03-01'), key: 'all', mrr: 2000, start: t('2026-02-01')},
      {end: null, key: 'all', mrr: 3000, start: t('2026-03-01')},
    ])
  })

  it('an event without a created date shows nothing live', () => {
    expect(stretches([event({created: null, event_id: 'a', event_timestamp: t('2026-01-01')})])).toEqual([])
  })

  it('one stretch while the MRR and the group stay; a gap or a new group starts another', () => {
    const e = (id: string, at: string, over: Partial<HistoryEvent> = {}) => event({event_id: id, event_timestamp: t(at), ...over})
    expect(view(stretches([e('a', '2026-01-01'), e('b', '2026-02-01'), e('c', '2026-03-01')]))).toEqual([{end: null, key: 'all', mrr: 1000, start: t('2026-01-01')}])
    // Pending in February: live again from March, a stretch of its own.
    expect(view(stretches([e('a', '2026-01-01'), e('b', '2026-02-01', {status: 'pending'}), e('c', '2026-03-01')]))).toEqual([
      {end: t('2026-02-01'), key: 'all', mrr: 1000, start: t('2026-01-01')},
      {end: null, key: 'all', mrr: 1000, start: t('2026-03-01')},
    ])
    // Moved to another country (grouped by country): two groups.
    expect(view(stretches([e('a', '2026-01-01', {key: 'US'}), e('b', '2026-02-01', {key: 'DE'})]))).toEqual([
      {end: t('2026-02-01'), key: 'US', mrr: 1000, start: t('2026-01-01')},
      {end: null, key: 'DE', mrr: 1000, start: t('2026-02-01')},
    ])
  })
})

describe('subscription figures per period', () => {
  const sub = (s: Partial<ReturnType<typeof stretches>[number]> & {start: number}) => ({end: null, key: 'all', mrr: 1000, sub: 's1', user_id: 'u1', ...s})
  const jan = {end: t('2026-02-01'), start: t('2026-01-01')}
  const feb = {end: t('2026-03-01'), start: t('2026-02-01')}
  const both = {end: t('2026-03-01'), start: t('2026-01-01')}

  it('a run of touching stretches begins once and ends once, whatever the periods are listed in', () => {
    const all = [sub({end: t('2026-01-20'), start: t('2026-01-10')}), sub({end: t('2026-02-10'), mrr: 1500, start: t('2026-01-20')})]
    const [w, a, b] = figures(all, [both, jan, feb])
    expect(a.get('all')).toEqual({active: 1, churned: 0, free: 0, mrr: 1500, new: 1, paying_users: 1})
    expect(b.get('all')).toEqual({...noFigures(), churned: 1})
    expect(w.get('all')).toEqual({...noFigures(), churned: 1, new: 1})
  })

  it('live at a period end e when start < e <= end; a churn at a period start counts there, one at its end does not', () => {
    const endsAtJanEnd = sub({end: jan.end, start: t('2026-01-10'), sub: 's1'})
    const startsAtFeb = sub({end: feb.end, start: feb.start, sub: 's2', user_id: 'u2'})
    const [a, b] = figures([endsAtJanEnd, startsAtFeb], [jan, feb])
    expect(a.get('all')).toEqual({active: 1, churned: 0, free: 0, mrr: 1000, new: 1, paying_users: 1})
    expect(b.get('all')).toEqual({active: 1, churned: 1, free: 0, mrr: 1000, new: 1, paying_users: 1})
  })

  it('two subscriptions are counted apart; a free one is active and free, no paying user', () => {
    const all = [sub({start: t('2026-01-05'), sub: 's1'}), sub({start: t('2026-01-06'), sub: 's2'}), sub({mrr: 0, start: t('2026-01-07'), sub: 's3', user_id: 'u3'})]
    const [a] = figures(all, [jan])
    expect(a.get('all')).toEqual({active: 3, churned: 0, free: 1, mrr: 2000, new: 3, paying_users: 1})
    expect(paying(all).map((s) => s.sub)).toEqual(['s1', 's2'])
  })
})
