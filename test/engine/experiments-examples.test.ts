import {describe, expect, it} from 'vitest'

import {beta, gamma, normal, seededRng} from '../../src/experiments/random.js'
import {type ArmOutcome, betaCdf, betaQuantile, conversionInterval, conversionValue, logGamma, posterior, probabilityBest, thompsonChoice} from '../../src/experiments/stats.js'

/**
 * Fixed examples of the experiments' numbers (docs/experiments.md) at the edges mutation
 * testing (`npm run mutate`, docs/hardening.md) showed no other test pinned.
 */

describe('seeded randomness is the same in every version', () => {
  // A visitor's arm is drawn from (seed, experiment, visitor): the draws must not change with
  // an upgrade, or a visitor who comes back after it would meet another arm.
  it('the first draws of a seed', () => {
    const r = seededRng(42, 'visitors')
    expect([r(), r(), r()]).toEqual([0.5597725403495133, 0.927368076518178, 0.38077397155575454])
    const q = seededRng('a')
    expect([q(), q()]).toEqual([0.5359695900697261, 0.9221943290904164])
  })

  it('normal, gamma (below and above shape 1) and beta draws of a seed', () => {
    expect(normal(seededRng(1))).toBe(-1.316481835014875)
    expect(gamma(seededRng(2), 0.5)).toBe(0.6768689501921898)
    expect(gamma(seededRng(3), 3)).toBe(3.0928903971154527)
    expect(beta(seededRng(4), 2, 5)).toBe(0.11552475456288919)
  })
})

describe('the Beta posterior', () => {
  const arm = (visitors: number, conversions: number, revenue = 0, nominal = 0): ArmOutcome => ({arm_id: 'a', conversions, nominal_minor: nominal, revenue_minor: revenue, visitors})

  it('is Beta(1 + conversions, 1 + visitors - conversions), conversions at most the visitors', () => {
    expect(posterior(arm(10, 3))).toEqual({a: 4, b: 8})
    expect(posterior(arm(0, 0))).toEqual({a: 1, b: 1})
    expect(posterior(arm(3, 5))).toEqual({a: 4, b: 1})
  })

  it('values a conversion at the observed revenue and the nominal price, as one more conversion', () => {
    expect(conversionValue(arm(100, 3, 3000, 1000))).toBe(1000)
    expect(conversionValue(arm(100, 1, 3000, 1000))).toBe(2000)
    expect(conversionValue(arm(0, 0, 0, 999))).toBe(999)
  })

  it('log Gamma at known points, both sides of 1/2', () => {
    expect(logGamma(0.1)).toBeCloseTo(2.252712651734206, 12)
    expect(logGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12)
    expect(logGamma(1)).toBeCloseTo(0, 12)
    expect(logGamma(2)).toBeCloseTo(0, 12)
    expect(logGamma(10)).toBeCloseTo(Math.log(362_880), 12)
  })

  it('the CDF of Beta(2, 5) on both sides of its mean, and its quantile', () => {
    // I_x(2, 5) = sum over j = 2..6 of C(6, j) x^j (1 - x)^(6 - j).
    expect(betaCdf(0.5, 2, 5)).toBeCloseTo(57 / 64, 12)
    expect(betaCdf(0.1, 2, 5)).toBeCloseTo(0.114_265, 12)
    expect(betaCdf(0, 2, 5)).toBe(0)
    expect(betaCdf(-1, 2, 5)).toBe(0)
    expect(betaCdf(1, 2, 5)).toBe(1)
    expect(betaCdf(2, 2, 5)).toBe(1)
    expect(betaQuantile(57 / 64, 2, 5)).toBeCloseTo(0.5, 10)
    expect(betaQuantile(0.114_265, 2, 5)).toBeCloseTo(0.1, 10)
    expect(betaQuantile(0, 2, 5)).toBe(0)
    expect(betaQuantile(-0.1, 2, 5)).toBe(0)
    expect(betaQuantile(1, 2, 5)).toBe(1)
  })

  it('a credible interval of any level: equal tails of the posterior', () => {
    // Beta(1, 1) is uniform: the 50% interval is [0.25, 0.75], the 95% one [0.025, 0.975].
    const [lo, hi] = conversionInterval(arm(0, 0), 0.5)
    expect(lo).toBeCloseTo(0.25, 10)
    expect(hi).toBeCloseTo(0.75, 10)
    const [lo95, hi95] = conversionInterval(arm(0, 0))
    expect(lo95).toBeCloseTo(0.025, 10)
    expect(hi95).toBeCloseTo(0.975, 10)
  })
})

describe('choosing and ranking arms', () => {
  const arm = (arm_id: string, visitors: number, conversions: number, price: number): ArmOutcome => ({arm_id, conversions, nominal_minor: price * 100, revenue_minor: conversions * price * 100, visitors})

  it('no arm: no probabilities', () => {
    expect(probabilityBest([], seededRng(1), 100)).toEqual([])
  })

  it('a sure winner wins every draw and every choice', () => {
    const arms = [arm('low', 10_000, 10, 10), arm('high', 10_000, 5000, 10)]
    expect(probabilityBest(arms, seededRng(1), 200)).toEqual([0, 1])
    const rng = seededRng(2)
    for (let i = 0; i < 50; i++) expect(thompsonChoice(arms, rng)).toBe(1)
  })

  it('the value of a sale counts: the same conversion at ten times the price wins', () => {
    const arms = [arm('cheap', 10_000, 1000, 1), arm('dear', 10_000, 1000, 10)]
    expect(probabilityBest(arms, seededRng(3), 200)).toEqual([0, 1])
    expect(thompsonChoice(arms, seededRng(4))).toBe(1)
  })
})
