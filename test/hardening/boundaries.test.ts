import {describe, expect, it} from 'vitest'

import {type Coupon, inWindow, isCouponActive} from '../../src/catalog/coupons.js'
import {convertMinor} from '../../src/currency.js'
import {clampToBounds, withinBounds} from '../../src/experiments/bounds.js'
import {seededRng} from '../../src/experiments/random.js'
import {type ArmOutcome, probabilityBest, thompsonChoice} from '../../src/experiments/stats.js'
import {inactiveReason} from '../../src/pricing/coupons.js'
import {roundWithDetail} from '../../src/pricing/rounding.js'
import {RuleInput} from '../../src/schemas/segments.js'
import {validate} from '../../src/schemas/validate.js'
import {type FeatureValues, ruleMatches} from '../../src/segments/rules.js'
import {createProducts} from '../helpers/catalog.js'
import {experimentStore, insertSubscription, withDb} from '../helpers/experiment-fixtures.js'
import {runArgs, seedCatalog, setRates, withStore} from '../helpers/revenue-fixtures.js'
import {run, tempStore} from '../helpers/run.js'
import {at, coupon, must, segCatalog, steps} from '../helpers/segments-fixtures.js'

/**
 * Fixed examples at the exact boundaries of the core (docs/hardening.md, "Boundaries"). The
 * property tests beside each part draw random values and meet a boundary only by chance
 * (a `gte` read as `gt` fails only when a draw gives two equal numbers); these examples put
 * every boundary in every run. Each was checked by planting the one-line bug it names.
 */

describe('audience rules: every operator at its exact boundary', () => {
  const rule = (text: string) => validate(RuleInput, text, 'rule')
  // [rule, feature value, matches]; the value exactly at the boundary comes first.
  const cases: [string, FeatureValues[string] | undefined, boolean][] = [
    ['feature n gte 10', 10, true],
    ['feature n gte 10', '10', true],
    ['feature n gte 10', '10.0', true],
    ['feature n gte 10', 9.99, false],
    ['feature n gte 10', 11, true],
    ['feature n gte -2.5', -2.5, true],
    ['feature n gte -2.5', -2.51, false],
    ['feature n gt 10', 10, false],
    ['feature n gt 10', '10', false],
    ['feature n gt 10', 10.01, true],
    ['feature n gt 10', 9, false],
    ['feature n lte 10', 10, true],
    ['feature n lte 10', '10', true],
    ['feature n lte 10', 10.01, false],
    ['feature n lte 10', 9, true],
    ['feature n lt 10', 10, false],
    ['feature n lt 10', '10', false],
    ['feature n lt 10', 9.99, true],
    ['feature n lt 10', 11, false],
    ['feature n eq 10', 10, true],
    ['feature n eq 10', '10.0', true],
    ['feature n eq 10', 10.01, false],
    ['feature n eq 10', 9.99, false],
    ['feature n eq pro', 'pro', true],
    ['feature n eq pro', 'Pro', false],
    ['feature n neq 10', 10, false],
    ['feature n neq 10', '10', false],
    ['feature n neq 10', '10.0', false],
    ['feature n neq 10', 10.01, true],
    ['feature n neq 10', 9.99, true],
    ['feature n neq pro', 'pro', false],
    ['feature n in 1,10', 1, true],
    ['feature n in 1,10', 10, true],
    ['feature n in 1,10', '10', true],
    ['feature n in 1,10', 5, false],
    ['feature n in 1,10', 11, false],
    ['feature n in gold,silver', 'silver', true],
    ['feature n in gold,silver', 'bronze', false],
    ['feature n exists', '', true],
    ['feature n exists', 0, true],
    ['feature n exists', false, true],
    ['feature n exists', undefined, false],
    ['feature n gte 0', undefined, false],
    ['feature n neq 10', undefined, false],
  ]
  it.each(cases)('%s with n = %j matches: %s', (text, value, expected) => {
    const features: FeatureValues = value === undefined ? {} : {n: value}
    expect(ruleMatches(rule(text), 'US', features)).toBe(expected)
  })

  it.each([
    ['country in DE,AT', 'DE', true],
    ['country in DE,AT', 'AT', true],
    ['country in DE,AT', 'CH', false],
    ['country not in DE,AT', 'DE', false],
    ['country not in DE,AT', 'AT', false],
    ['country not in DE,AT', 'CH', true],
  ])('%s for %s: %s', (text, country, expected) => {
    expect(ruleMatches(rule(text), country, {})).toBe(expected)
  })

  it('an audience with "seats gte 10" takes a user with exactly 10 seats (price)', async () => {
    const db = tempStore()
    await segCatalog(db)
    await must(db, ['audiences', 'create'], {api_id: 'teams', name: 'Teams', priority: 1, rules: ['feature seats gte 10']})
    const ten = await run(db, ['price', '-u', 'ten', '-p', 'lifetime', '--country', 'US', '--feature', 'seats=10', '--json'])
    expect(ten.json.audience).toEqual({api_id: 'teams', name: 'Teams'})
    const nine = await run(db, ['price', '-u', 'nine', '-p', 'lifetime', '--country', 'US', '--feature', 'seats=9', '--json'])
    expect(nine.json.audience).toEqual({api_id: 'default', name: 'default'})
  })
})

describe('coupon and campaign windows: both ends are inside, to the second', () => {
  const FROM = '2026-03-10T12:00:00Z'
  const TILL = '2026-03-20T12:00:00Z'
  const s = (iso: string) => Date.parse(iso) / 1000
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString()
  // Each moment around the window and whether it is inside.
  const MOMENTS: [string, boolean][] = [
    [iso(s(FROM) - 1), false],
    [FROM, true],
    [TILL, true],
    [iso(s(TILL) + 1), false],
  ]

  it('one rule for coupons, campaigns and locked coupons (the pure functions)', () => {
    const c = {active_from_s: s(FROM), active_till_s: s(TILL), api_id: 'W', status: 'ACTIVE'} as Coupon
    for (const [moment, inside] of MOMENTS) {
      const at = s(moment)
      expect(inWindow(c, at) === 'inside', moment).toBe(inside)
      expect(isCouponActive(c, at), moment).toBe(inside)
      expect(inactiveReason(c, at) === undefined, moment).toBe(inside)
    }
    expect(inactiveReason(c, s(TILL) + 1)).toBe('W has expired: it ended 2026-03-20 12:00:00 UTC')
    expect(inactiveReason(c, s(FROM) - 1)).toBe('W is not active yet: it starts 2026-03-10 12:00:00 UTC')
  })

  it.each(MOMENTS)('a requested coupon at %s applies: %s', async (moment, inside) => {
    const db = tempStore()
    await segCatalog(db)
    await must(db, ['coupons', 'create'], coupon('WIN', {active_from: FROM, active_till: TILL, coupon_type: 'percentage', value: 10}))
    const r = await at(moment, () => run(db, ['price', '-u', 'u1', '-p', 'basic', '--country', 'US', '--coupon', 'basic=WIN', '--json']))
    expect(r.code).toBe(0)
    expect(r.json.products.basic.coupon?.display.price_numeric).toBe(inside ? 9 : undefined)
  })

  it.each(MOMENTS)('a campaign at %s applies its coupon: %s; its state agrees', async (moment, inside) => {
    const db = tempStore()
    await segCatalog(db)
    await must(db, ['coupons', 'create'], coupon('PLAIN', {coupon_type: 'percentage', value: 10}))
    await must(db, ['campaigns', 'create'], {active_from: FROM, active_till: TILL, api_id: 'sale', coupon: 'PLAIN', name: 'Sale'})
    const r = await at(moment, () => run(db, ['price', '-u', 'u1', '-p', 'basic', '--country', 'US', '--json']))
    expect(r.json.products.basic.coupon?.api_id).toBe(inside ? 'PLAIN' : undefined)
    const state = (await at(moment, () => run(db, ['campaigns', 'get', 'sale', '--json']))).json.campaign.state
    expect(state).toBe(inside ? 'active' : moment < FROM ? 'scheduled' : 'ended')
  })

  it('a campaign whose coupon ends at a second: applied at that second, not after', async () => {
    const db = tempStore()
    await segCatalog(db)
    await must(db, ['coupons', 'create'], coupon('ENDS', {active_till: TILL, coupon_type: 'percentage', value: 10}))
    await must(db, ['campaigns', 'create'], {api_id: 'open', coupon: 'ENDS', name: 'Open'})
    const last = await at(TILL, () => run(db, ['price', '-u', 'u1', '-p', 'basic', '--country', 'US', '--json']))
    expect(last.json.products.basic.coupon?.api_id).toBe('ENDS')
    expect((await at(TILL, () => run(db, ['campaigns', 'get', 'open', '--json']))).json.campaign.state).toBe('active')
    const after = await at(iso(s(TILL) + 1), () => run(db, ['price', '-u', 'u2', '-p', 'basic', '--country', 'US', '--json']))
    expect(after.json.products.basic.coupon).toBeUndefined()
    expect((await at(iso(s(TILL) + 1), () => run(db, ['campaigns', 'get', 'open', '--json']))).json.campaign.state).toBe('coupon_not_active')
  })

  it('a bare active_till date lasts through 23:59:59 UTC of that day', async () => {
    const db = tempStore()
    await segCatalog(db)
    await must(db, ['coupons', 'create'], coupon('DAY', {active_till: '2026-03-20', coupon_type: 'percentage', value: 10}))
    const last = await at('2026-03-20T23:59:59Z', () => run(db, ['price', '-u', 'u1', '-p', 'basic', '--country', 'US', '--coupon', 'basic=DAY', '--json']))
    expect(last.json.products.basic.coupon).toMatchObject({api_id: 'DAY', valid_till: '2026-03-20 23:59:59'})
    const next = await at('2026-03-21T00:00:00Z', () => run(db, ['price', 'explain', '-u', 'u2', '-p', 'basic', '--country', 'US', '--coupon', 'basic=DAY', '--json']))
    expect(steps(next)).toContain('DAY (request) not applied: DAY has expired: it ended 2026-03-20 23:59:59 UTC')
  })

  it('a locked coupon is shown through its valid_till second and not after', async () => {
    const db = tempStore()
    await segCatalog(db)
    await must(db, ['coupons', 'create'], coupon('WIN', {active_from: FROM, active_till: TILL, coupon_type: 'percentage', value: 10}))
    await at('2026-03-15T00:00:00Z', () => run(db, ['price', '-u', 'u1', '-p', 'basic', '--country', 'US', '--coupon', 'basic=WIN', '--json']))
    const last = await at(TILL, () => run(db, ['price', '-u', 'u1', '-p', 'basic', '--json']))
    expect(last.json.products.basic.coupon).toMatchObject({api_id: 'WIN', valid_till: '2026-03-20 12:00:00'})
    const after = await at(iso(s(TILL) + 1), () => run(db, ['price', '-u', 'u1', '-p', 'basic', '--json']))
    expect(after.json.products.basic.coupon).toBeUndefined()
  })
})

describe('conversions round a half cent up (1.00 USD at 1.005 is 1.01 EUR)', () => {
  it('convertMinor', () => {
    // 1.00 x 1.005 = 100.49999999999999 cents in binary floating point; the decimal is 100.5.
    expect(convertMinor(100, 'USD', 1, 'EUR', 1.005)).toBe(101)
    // 2.01 EUR at 2 EUR per USD: 1.005 USD.
    expect(convertMinor(201, 'EUR', 2, 'USD', 1)).toBe(101)
    // Half a yen up, a thousandth of a dinar up.
    expect(convertMinor(1, 'USD', 1, 'JPY', 150.5)).toBe(2)
    expect(convertMinor(1, 'USD', 1, 'KWD', 0.305)).toBe(3)
    expect(convertMinor(100, 'USD', 1, 'EUR', 1.004)).toBe(100)
  })

  it('a 1.00 USD coupon on a EUR price at 1.005 EUR per USD takes 1.01 EUR off', async () => {
    const db = tempStore()
    await createProducts(db, [{api_id: 'eur10', base_px: 10, country_prices: [{amount: 10, country: 'DE', currency: 'EUR'}], interval: 'one_time', interval_count: 1, name: 'Ten euros'}])
    // Dated before the quote's moment: a rate dated later is not in effect then (since the FX dates work).
    expect((await run(db, ['fx', 'set', 'EUR', '1.005', '--date', '2026-01-01', '--json'])).code).toBe(0)
    await must(db, ['coupons', 'create'], coupon('ONEUSD', {coupon_type: 'fixed_amount', currency: 'USD', value: 1}))
    const r = await at('2026-03-01T00:00:00Z', () => run(db, ['price', '-u', 'u1', '-p', 'eur10', '--country', 'DE', '--coupon', 'eur10=ONEUSD', '--json']))
    expect(r.json.products.eur10.price).toBe(10)
    expect(r.json.products.eur10.coupon.display.price_numeric).toBe(8.99)
  })

  it('a charge of 2.01 EUR at 2 EUR per USD is 1.01 USD', async () => {
    const db = tempStore()
    await withStore(db, (d) => {
      seedCatalog(d)
      setRates(d, '2020-01-01', {EUR: 2, USD: 1})
    })
    const r = await runArgs(db, ['charges', 'create', '--user-id', 'u1', '--origin', 'gateway_a', '--origin-id', 'ch_1', '--product', 'lifetime', '--amount', '2.01', '--currency', 'EUR', '--created', '1767225600', '--status', 'succeeded', '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json.record.amount_usd).toBe(1.01)
  })
})

describe('experiment results rank arms by revenue per visitor, not conversion rate', () => {
  // The baseline sells to 10% of visitors at 30 USD a month (3.00 per visitor); arm 1, at
  // twice the price, to 7.5% (4.50 per visitor). By conversion rate the baseline would win.
  const outcome = (arm_id: string, conversions: number, usd: number): ArmOutcome => ({arm_id, conversions, nominal_minor: usd * 100, revenue_minor: conversions * usd * 100, visitors: 2000})
  const ARMS = [outcome('baseline', 200, 30), outcome('1', 150, 60)]

  it('probability of being best and Thompson choice favour the arm worth more per visitor', () => {
    const p = probabilityBest(ARMS, seededRng(1), 20_000)
    expect(p[1]).toBeGreaterThan(0.99)
    let second = 0
    for (let i = 0; i < 2000; i++) second += thompsonChoice(ARMS, seededRng(2, `v${i}`))
    expect(second / 2000).toBeGreaterThan(0.95)
  })

  it('experiments results names the lower-converting, higher-value arm best', async () => {
    const db = tempStore()
    await experimentStore(db)
    const created = await run(db, ['experiments', 'create', '--name', 'value', '-p', 'team_monthly', '--arm', 'x2', '--allocation', 'uniform', '--seed', '3', '--start', '--json'])
    expect(created.code, created.stdout).toBe(0)
    withDb(db, (d) => {
      const expose = d.prepare("INSERT INTO exposures (experiment_id, user_id, anonymous, arm_id, exposed_at) VALUES (1, ?, 0, ?, 1)")
      d.transaction(() => {
        for (const [arm, conversions, usd] of [['baseline', 200, 30], ['1', 150, 60]] as const) {
          for (let i = 0; i < 2000; i++) {
            const user = `${arm}-${i}`
            expose.run(user, arm)
            if (i < conversions) insertSubscription(d, {amount_usd: usd, created: 2, product: 'team_monthly', user_id: user})
          }
        }
      })()
    })
    const r = await run(db, ['experiments', 'results', '1', '--json'])
    expect(r.code, r.stdout).toBe(0)
    const [baseline, double] = r.json.arms
    expect(baseline).toMatchObject({arm_id: 'baseline', conversion_rate: 0.1, conversions: 200, revenue_per_visitor: 3, visitors: 2000})
    expect(double).toMatchObject({arm_id: 1, conversion_rate: 0.075, conversions: 150, revenue_per_visitor: 4.5, visitors: 2000})
    expect(double.probability_best).toBeGreaterThan(0.99)
    expect(r.json.best_arm).toBe(1)
    expect((await run(db, ['experiments', 'results', '1'])).stdout).toContain('best so far: arm 1')
  })
})

describe('price bounds and rounding ranges at their exact ends', () => {
  it('an experimental price exactly at min_px or max_px is inside and left alone; one cent out is brought back', () => {
    expect(clampToBounds(700, 'USD', 1, 700, 1400)).toEqual({clamped: null, minor: 700})
    expect(clampToBounds(1400, 'USD', 1, 700, 1400)).toEqual({clamped: null, minor: 1400})
    expect(clampToBounds(699, 'USD', 1, 700, 1400)).toEqual({clamped: 'min', minor: 700})
    expect(clampToBounds(1401, 'USD', 1, 700, 1400)).toEqual({clamped: 'max', minor: 1400})
    expect(withinBounds(700, 'USD', 1, 700, 1400)).toBe(true)
    expect(withinBounds(1400, 'USD', 1, 700, 1400)).toBe(true)
    expect(withinBounds(1401, 'USD', 1, 700, 1400)).toBe(false)
    // 7.00 EUR at 0.5 EUR per USD is exactly 14.00 USD.
    expect(clampToBounds(700, 'EUR', 0.5, 700, 1400)).toEqual({clamped: null, minor: 700})
    expect(clampToBounds(701, 'EUR', 0.5, 700, 1400)).toEqual({clamped: 'max', minor: 700})
  })

  it('an amount exactly at a range bound belongs to the range that starts there', () => {
    const rule = '0-10: end .99 up; 10+: multiple 5 down'
    expect(roundWithDetail(rule, 999, 'USD')).toEqual({action: 'end .99 up', range: '0-10', rounded: 999})
    expect(roundWithDetail(rule, 1000, 'USD')).toEqual({action: 'multiple 5 down', range: '10+', rounded: 1000})
  })
})
