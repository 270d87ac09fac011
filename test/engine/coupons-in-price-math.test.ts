import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {amountOff, parseMapping, percentOff, utcText} from '../../src/pricing/coupons.js'

/** Reference: price x (1 - p/100) with the discount rounded half up, in exact rationals. */
function reference(priceMinor: number, hundredthsOfPercent: number): number {
  const discountTimes10000 = priceMinor * hundredthsOfPercent // exact for these ranges
  const discount = Math.floor(discountTimes10000 / 10_000) + (discountTimes10000 % 10_000 >= 5000 ? 1 : 0)
  return Math.max(0, priceMinor - discount)
}

describe('coupon arithmetic', () => {
  it('a percentage coupon takes the discount rounded half up to the minor unit, exactly', () => {
    fc.assert(
      fc.property(fc.integer({max: 100_000_000, min: 0}), fc.integer({max: 10_000, min: 1}), (price, hundredths) => {
        const after = percentOff(price, hundredths / 100)
        expect(after).toBe(reference(price, hundredths))
        expect(Number.isInteger(after)).toBe(true)
        expect(after).toBeGreaterThanOrEqual(0)
        expect(after).toBeLessThanOrEqual(price)
      }),
    )
    expect(percentOff(999, 10)).toBe(899) // 99.9 off -> 100
    expect(percentOff(1005, 50)).toBe(502) // 502.5 off -> 503
    expect(percentOff(999, 100)).toBe(0)
  })

  it('a larger percentage never gives a higher price', () => {
    fc.assert(
      fc.property(fc.integer({max: 10_000_000, min: 0}), fc.integer({max: 10_000, min: 1}), fc.integer({max: 10_000, min: 1}), (price, a, b) => {
        const [lo, hi] = a < b ? [a, b] : [b, a]
        expect(percentOff(price, hi / 100)).toBeLessThanOrEqual(percentOff(price, lo / 100))
      }),
    )
  })

  it('a fixed amount is subtracted and the price never goes below zero', () => {
    fc.assert(
      fc.property(fc.integer({max: 100_000_000, min: 0}), fc.integer({max: 100_000_000, min: 1}), (price, off) => {
        const after = amountOff(price, off)
        expect(after).toBe(Math.max(0, price - off))
        expect(after).toBeGreaterThanOrEqual(0)
      }),
    )
  })

  it('reads the coupons mapping in order, without repeats', () => {
    expect([...parseMapping({a: 'X, Y,X', b: 'Z'})]).toEqual([
      ['a', ['X', 'Y']],
      ['b', ['Z']],
    ])
  })

  it('writes valid_till as YYYY-MM-DD HH:MM:SS UTC', () => {
    expect(utcText(Date.UTC(2026, 0, 31, 23, 59, 59) / 1000)).toBe('2026-01-31 23:59:59')
  })
})
