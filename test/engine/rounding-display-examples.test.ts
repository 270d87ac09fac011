import {describe, expect, it} from 'vitest'

import {currencySymbol, discountToBaseline, localeForCountry, referenceIntervalMinor} from '../../src/pricing/display.js'
import {applyRounding, isPricePoint, parseRule, rangeOf, roundWithDetail} from '../../src/pricing/rounding.js'

/**
 * Fixed examples of price points and display helpers, one per behaviour a mutant of
 * `npm run mutate` showed untested (docs/hardening.md, "Mutation testing").
 */

describe('price points of each action', () => {
  it('endings, multiples, significant figures and keep know their own points, and 0 is none', () => {
    const end = parseRule('0+: end .49,.99 nearest', 'USD')
    expect([49, 99, 149, 199].every((v) => isPricePoint(end, v))).toBe(true)
    expect([0, 50, 100, 150].some((v) => isPricePoint(end, v))).toBe(false)
    expect(rangeOf(end, 0).points.has(0)).toBe(false)
    const multiple = parseRule('0+: multiple 10 up', 'USD')
    expect(isPricePoint(multiple, 1000)).toBe(true)
    expect(isPricePoint(multiple, 1001)).toBe(false)
    expect(rangeOf(multiple, 0).points.has(0)).toBe(false)
    const sigfig = parseRule('0+: sigfig 2 nearest', 'USD')
    expect(isPricePoint(sigfig, 1200)).toBe(true)
    expect(isPricePoint(sigfig, 1250)).toBe(false)
    expect(isPricePoint(sigfig, 7)).toBe(true)
    expect(rangeOf(sigfig, 0).points.has(0)).toBe(false)
    const keep = parseRule('0+: keep', 'USD')
    expect(isPricePoint(keep, 1)).toBe(true)
    expect(isPricePoint(keep, 0)).toBe(false)
    expect(rangeOf(keep, 0).points.has(0)).toBe(false)
  })

  it('keep leaves every amount as it is', () => {
    for (const amount of [0, 1, 123, 99_999]) expect(applyRounding('0+: keep', amount, 'USD')).toBe(amount)
    expect(roundWithDetail('0+: keep', 5, 'USD')).toEqual({action: 'keep', range: '0+', rounded: 5})
  })

  it('down never takes a point of a lower range above its end, nor one below its start', () => {
    // 10.50: the 7s of 10+ start at 14.00, so down is the last whole dollar under 10.00.
    const rule = '0-10: multiple 1 down; 10+: multiple 7 down'
    expect(applyRounding(rule, 1050, 'USD')).toBe(900)
    expect(applyRounding(rule, 1450, 'USD')).toBe(1400)
    expect(applyRounding(rule, 1000, 'USD')).toBe(900)
  })

  it('rule text works as well as a compiled rule, in the rule\'s own currency', () => {
    expect(applyRounding('0+: multiple 1 up', 150, 'USD')).toBe(200)
    const usd = parseRule('0+: multiple 1 up', 'USD')
    // A rule compiled for USD used for JPY is read again in yen.
    expect(applyRounding(usd, 150, 'JPY')).toBe(150)
  })

  it('refuses amounts it cannot round', () => {
    expect(() => roundWithDetail('0+: keep', -1, 'USD')).toThrow(/^cannot round -1: expected a non-negative whole number of minor units$/)
    expect(() => roundWithDetail('0+: keep', 1.5, 'USD')).toThrow(/^cannot round 1\.5:/)
    expect(() => applyRounding('0+: multiple 1 up', Number.MAX_SAFE_INTEGER, 'USD')).toThrow(/^cannot round 9007199254740991: the result is too large$/)
  })
})

describe('display helpers', () => {
  it('locales: the override, the likely language, English when the region is unknown or malformed', () => {
    expect(localeForCountry('IN')).toBe('en-IN')
    expect(localeForCountry('DE')).toBe('de-DE')
    expect(localeForCountry('!!')).toBe('en')
    // ICU has no number data for Guarani (gn-PY): English of the region.
    expect(localeForCountry('PY')).toBe('en-PY')
  })

  it('the currency symbol is the currency part only', () => {
    expect(currencySymbol('EUR', 'DE')).toBe('€')
    expect(currencySymbol('USD', 'US')).toBe('$')
  })

  it('discount to the baseline: half a hundredth of a percent away from zero, either sign', () => {
    // 1/32 = 3.125 %.
    expect(discountToBaseline(31, 32)).toBe(3.13)
    expect(discountToBaseline(33, 32)).toBe(-3.13)
    expect(discountToBaseline(32, 32)).toBe(0)
    expect(discountToBaseline(10, 0)).toBe(0)
    expect(discountToBaseline(10, null)).toBe(0)
  })

  it('per month: year / 12, week x 52/12, day x 365/12, month as is, divided by the count', () => {
    expect(referenceIntervalMinor(1200, 'year')).toBe(100)
    expect(referenceIntervalMinor(1206, 'year')).toBe(101)
    expect(referenceIntervalMinor(100, 'week')).toBe(433)
    expect(referenceIntervalMinor(10, 'day')).toBe(304)
    expect(referenceIntervalMinor(500, 'month')).toBe(500)
    expect(referenceIntervalMinor(500, 'month', 2)).toBe(250)
    expect(referenceIntervalMinor(999, 'one_time')).toBe(999)
    expect(() => referenceIntervalMinor(1, 'fortnight')).toThrow(/^unknown interval "fortnight"/)
    expect(() => referenceIntervalMinor(1, 'month', 0)).toThrow(/^interval_count must be a whole number >= 1, got 0$/)
  })
})
