import {afterEach, describe, expect, it, vi} from 'vitest'

import {freshSeed, gamma, normal, type Rng, seededRng} from '../../src/experiments/random.js'
import {type ArmOutcome, betaCdf, logGamma, probabilityBest, thompsonChoice} from '../../src/experiments/stats.js'

/**
 * The experiments' numbers (src/experiments/stats.ts, random.ts) at the edges mutation testing
 * (docs/hardening.md) showed no other test pinned: free arms next to paid ones, the tails of the
 * Beta CDF, draws that land on the rejection edges of the samplers, and the draw sequences of a
 * seed (the bandit's arms and the results' probabilities are reproducible from it in every
 * version).
 */

const arm = (arm_id: string, visitors: number, conversions: number, price: number): ArmOutcome => ({arm_id, conversions, nominal_minor: price * 100, revenue_minor: conversions * price * 100, visitors})

/** A generator that returns `first` and then what `rest` returns. */
function startingWith(first: number[], rest: Rng): Rng {
  const queue = [...first]
  return () => (queue.length > 0 ? queue.shift()! : rest())
}

describe('free arms (no revenue, no price)', () => {
  // A free arm converts far better, but a visitor there is worth nothing: revenue per visitor decides.
  const free = arm('free', 100, 90, 0)
  const paid = arm('paid', 100, 10, 10)

  it('the bandit sends the visitor to the paid arm whenever any arm has a value', () => {
    for (let i = 0; i < 20; i++) {
      expect(thompsonChoice([free, paid], seededRng('free', i))).toBe(1)
      expect(thompsonChoice([paid, free], seededRng('free', i))).toBe(0)
    }
  })

  it('the probability of being best: the paid arm always; among free arms only, the better converting one', () => {
    expect(probabilityBest([free, paid], seededRng('pb'), 500)).toEqual([0, 1])
    const p = probabilityBest([arm('a', 100, 10, 0), arm('b', 100, 90, 0)], seededRng('pb'), 500)
    expect(p).toEqual([0, 1])
  })
})

describe('ties', () => {
  // A generator that repeats itself gives two arms with the same data the same score.
  const flat: Rng = () => 0.3
  const same = [arm('baseline', 50, 5, 10), arm('1', 50, 5, 10), arm('2', 50, 5, 10)]

  it('the bandit and the probability of being best give a tie to the first arm in order', () => {
    expect(thompsonChoice(same, flat)).toBe(0)
    expect(probabilityBest(same, flat, 10)).toEqual([1, 0, 0])
  })
})

describe('the Beta CDF and log Gamma keep their precision', () => {
  it('log Gamma near 0 (Gamma(x) = Gamma(x + 1) / x)', () => {
    for (const x of [1e-6, 1e-3, 0.25]) expect(logGamma(x)).toBeCloseTo(logGamma(x + 1) - Math.log(x), 12)
  })

  it('far in the lower tail: I_x(1, 1) = x and I_x(1, b) = 1 - (1 - x)^b, to the last digits', () => {
    expect(betaCdf(1e-12, 1, 1) / 1e-12).toBeCloseTo(1, 9)
    const tail = -Math.expm1(50 * Math.log1p(-1e-9))
    expect(betaCdf(1e-9, 1, 50) / tail).toBeCloseTo(1, 9)
  })

  it('in the upper tail: I_x(a, 2) = x^a (a + 1 - a x)', () => {
    for (const [x, a] of [
      [0.9999, 50],
      [0.999, 20],
    ]) {
      expect(betaCdf(x, a, 2)).toBeCloseTo(x ** a * (a + 1 - a * x), 13)
    }
  })
})

describe('the samplers at their rejection edges', () => {
  it('a pair of uniform draws at the centre is drawn again, not turned into NaN', () => {
    const z = normal(startingWith([0.5, 0.5], seededRng(1)))
    expect(z).toBe(normal(seededRng(1)))
    expect(Number.isNaN(z)).toBe(false)
  })

  it('a Gamma draw of shape under 1 whose boost draw is 0 is still above 0 (a Beta of two such draws would be 0 / 0)', () => {
    const g = gamma(startingWith([0], seededRng('boost')), 0.999_999_9)
    expect(g).toBeGreaterThan(0)
  })
})

describe('the draws of a seed are the same in every version', () => {
  // Shape 1 (an arm without conversions: Beta(1, n) is drawn from Gamma(1) and Gamma(n)) meets
  // every branch of Marsaglia and Tsang's sampler in 2,000 draws: the squeeze, the log test,
  // their rejections and the redraw of a normal under -1/c.
  it.each([
    [1, 1970.1092791479462, 0.009935593334813779],
    [2.5, 5146.762744816414, 2.4762423846144963],
    [0.5, 1023.6301145951032, 0.2080343582898136],
  ])('2,000 Gamma(%s) draws', (shape, sum, last) => {
    const rng = seededRng('gamma', shape)
    const draws = Array.from({length: 2000}, () => gamma(rng, shape))
    expect(draws.reduce((s, x) => s + x, 0)).toBe(sum)
    expect(draws.at(-1)).toBe(last)
  })
})

describe('freshSeed', () => {
  afterEach(() => vi.restoreAllMocks())

  it('a 31-bit seed from Math.random', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    expect(freshSeed()).toBe(1_073_741_823)
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999_999_9)
    expect(freshSeed()).toBe(2_147_483_646)
    vi.spyOn(Math, 'random').mockReturnValue(0)
    expect(freshSeed()).toBe(0)
  })
})
