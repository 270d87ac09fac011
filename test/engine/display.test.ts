import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {
  currencySymbol,
  discountToBaseline,
  formatMoney,
  formatMoneyInLocale,
  localeForCountry,
  minorToDecimalString,
  priceWithBaselineStrike,
  referenceIntervalMinor,
  strike,
} from '../../src/pricing/display.js'

// The separators ICU puts in prices, named so a test says which one it expects.
const NBSP = '\u00A0' // no-break space
const NNBSP = '\u202F' // narrow no-break space
const RLM = '\u200F' // right-to-left mark
const STROKE = '\u0336' // combining long stroke overlay

describe('localeForCountry', () => {
  it.each([
    ['DE', 'de-DE'],
    ['FR', 'fr-FR'],
    ['IN', 'en-IN'], // ICU says hi-IN; the override picks what Indian shops use
    ['JP', 'ja-JP'],
    ['BR', 'pt-BR'],
    ['US', 'en-US'],
    ['CH', 'de-CH'],
    ['KW', 'ar-KW'],
    ['AS', 'en-AS'], // ICU's likely language (Samoan) has no number data: English of the region
  ])('%s -> %s', (country, locale) => {
    expect(localeForCountry(country)).toBe(locale)
  })
})

describe('formatMoneyInLocale: what Node 20 ICU prints, separators named', () => {
  it('de-DE: comma decimals, no-break space before €', () => {
    expect(formatMoneyInLocale(999, 'EUR', 'de-DE')).toBe(`9,99${NBSP}€`)
    expect(formatMoneyInLocale(123_456, 'EUR', 'de-DE')).toBe(`1.234,56${NBSP}€`)
  })

  it('de-DE: whole amounts show no minor digits, others all of them', () => {
    expect(formatMoneyInLocale(900, 'EUR', 'de-DE')).toBe(`9${NBSP}€`)
    expect(formatMoneyInLocale(990, 'EUR', 'de-DE')).toBe(`9,90${NBSP}€`)
  })

  it('fr-FR: narrow no-break space groups thousands, no-break space before €', () => {
    expect(formatMoneyInLocale(999, 'EUR', 'fr-FR')).toBe(`9,99${NBSP}€`)
    expect(formatMoneyInLocale(123_456, 'EUR', 'fr-FR')).toBe(`1${NNBSP}234,56${NBSP}€`)
    expect(formatMoneyInLocale(100_000_000, 'EUR', 'fr-FR')).toBe(`1${NNBSP}000${NNBSP}000${NBSP}€`)
  })

  it('en-IN: lakh and crore grouping', () => {
    expect(formatMoneyInLocale(12_345_678, 'INR', 'en-IN')).toBe('₹1,23,456.78')
    expect(formatMoneyInLocale(1_234_567_800, 'INR', 'en-IN')).toBe('₹1,23,45,678')
  })

  it('ja-JP: fullwidth yen sign, no minor digits', () => {
    expect(formatMoneyInLocale(1200, 'JPY', 'ja-JP')).toBe('\uFFE51,200')
    expect(formatMoneyInLocale(980, 'JPY', 'ja-JP')).toBe('￥980')
  })

  it('pt-BR: no-break space after R$', () => {
    expect(formatMoneyInLocale(999, 'BRL', 'pt-BR')).toBe(`R$${NBSP}9,99`)
    expect(formatMoneyInLocale(123_456, 'BRL', 'pt-BR')).toBe(`R$${NBSP}1.234,56`)
    expect(formatMoneyInLocale(999, 'USD', 'pt-BR')).toBe(`US$${NBSP}9,99`)
  })

  it('3-decimal currencies show three digits, or none when whole', () => {
    expect(formatMoneyInLocale(4500, 'KWD', 'en-US')).toBe(`KWD${NBSP}4.500`)
    expect(formatMoneyInLocale(4000, 'BHD', 'en-US')).toBe(`BHD${NBSP}4`)
  })

  it('is exact for amounts beyond float precision of the decimal', () => {
    expect(formatMoneyInLocale(9_007_199_254_740_991, 'USD', 'en-US')).toBe('$90,071,992,547,409.91')
  })

  it('prints negative amounts with a sign', () => {
    expect(formatMoneyInLocale(-999, 'USD', 'en-US')).toBe('-$9.99')
  })
})

describe('formatMoney by country', () => {
  it.each([
    ['DE', 'EUR', 999, `9,99${NBSP}€`],
    ['DE', 'EUR', 900, `9${NBSP}€`],
    ['FR', 'EUR', 123_456, `1${NNBSP}234,56${NBSP}€`],
    ['IN', 'INR', 12_345_678, '₹1,23,456.78'],
    ['JP', 'JPY', 1200, '￥1,200'],
    ['BR', 'BRL', 999, `R$${NBSP}9,99`],
    ['US', 'USD', 999, '$9.99'],
    ['US', 'USD', 900, '$9'],
    ['JP', 'USD', 800, '$8'],
    ['KW', 'KWD', 4500, `${RLM}4.500${NBSP}د.ك.${RLM}`],
  ])('%s %s %i -> %s', (country, currency, minor, text) => {
    expect(formatMoney(minor, currency, country)).toBe(text)
  })

  it('always prints Latin digits, also where the locale defaults to others', () => {
    for (const [country, currency] of [
      ['EG', 'EGP'],
      ['SA', 'SAR'],
      ['IR', 'IRR'],
      ['BD', 'BDT'],
      ['AF', 'AFN'],
    ]) {
      const text = formatMoney(123_456, currency, country)
      expect(text, `${country} ${text}`).toMatch(/1.?23/)
      expect(text).not.toMatch(/[\u0660-\u0669\u06F0-\u06F9\u09E6-\u09EF]/)
    }
  })
})

describe('minorToDecimalString', () => {
  it('places the decimal point by the currency exponent', () => {
    expect(minorToDecimalString(999, 'USD')).toBe('9.99')
    expect(minorToDecimalString(5, 'USD')).toBe('0.05')
    expect(minorToDecimalString(1200, 'JPY')).toBe('1200')
    expect(minorToDecimalString(4500, 'KWD')).toBe('4.500')
    expect(minorToDecimalString(-7, 'KWD')).toBe('-0.007')
  })
})

describe('currencySymbol', () => {
  it.each([
    ['EUR', 'DE', '€'],
    ['EUR', 'FR', '€'],
    ['BRL', 'BR', 'R$'],
    ['USD', 'BR', 'US$'],
    ['JPY', 'JP', '￥'],
    ['INR', 'IN', '₹'],
    ['USD', 'US', '$'],
    ['KWD', 'US', 'KWD'],
  ])('%s in %s -> %s', (currency, country, symbol) => {
    expect(currencySymbol(currency, country)).toBe(symbol)
  })

  it('is the currency part of what formatMoney prints', () => {
    for (const [currency, country] of [
      ['EUR', 'DE'],
      ['BRL', 'BR'],
      ['JPY', 'JP'],
      ['KWD', 'KW'],
      ['CHF', 'CH'],
    ]) {
      expect(formatMoney(12_345, currency, country)).toContain(currencySymbol(currency, country))
    }
  })
})

describe('strike and price_with_baseline_strike', () => {
  it('puts U+0336 after every character, spaces included', () => {
    expect(strike('9,99 €')).toBe(`9${STROKE},${STROKE}9${STROKE}9${STROKE} ${STROKE}€${STROKE}`)
    expect(strike(`R$${NBSP}9`)).toBe(`R${STROKE}$${STROKE}${NBSP}${STROKE}9${STROKE}`)
  })

  it('strikes whole code points and leaves bidi marks alone', () => {
    expect(strike('￥1')).toBe(`￥${STROKE}1${STROKE}`)
    expect(strike(`${RLM}4${RLM}`)).toBe(`${RLM}4${STROKE}${RLM}`)
  })

  it('is the struck baseline, a space, then the price', () => {
    expect(priceWithBaselineStrike('$12', '$9.99')).toBe(`$${STROKE}1${STROKE}2${STROKE} $9.99`)
    expect(priceWithBaselineStrike(undefined, '$9.99')).toBe('$9.99')
    expect(priceWithBaselineStrike('', '$9.99')).toBe('$9.99')
  })
})

describe('discountToBaseline', () => {
  it('is (1 - price/baseline) x 100 rounded half-up to 2 decimals', () => {
    expect(discountToBaseline(799, 999)).toBe(20.02)
    expect(discountToBaseline(500, 1000)).toBe(50)
    expect(discountToBaseline(3999, 4000)).toBe(0.03) // exactly 0.025: half-up
    expect(discountToBaseline(1, 3)).toBe(66.67)
    expect(discountToBaseline(0, 999)).toBe(100)
  })

  it('is 0 without a baseline or when equal, negative above the baseline', () => {
    expect(discountToBaseline(999, null)).toBe(0)
    expect(discountToBaseline(999, undefined)).toBe(0)
    expect(discountToBaseline(999, 0)).toBe(0)
    expect(discountToBaseline(999, 999)).toBe(0)
    expect(discountToBaseline(1200, 1000)).toBe(-20)
  })

  it('is the exact percentage to within half a hundredth (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({max: 1e12, min: 0}), fc.integer({max: 1e12, min: 1}), (price, baseline) => {
        const d = discountToBaseline(price, baseline)
        // |d*100*baseline - (baseline-price)*10000| <= baseline/2, in exact integers.
        const err = BigInt(Math.round(d * 100)) * BigInt(baseline) - BigInt(baseline - price) * 10_000n
        expect(2n * (err < 0n ? -err : err) <= BigInt(baseline)).toBe(true)
      }),
    )
  })
})

describe('referenceIntervalMinor', () => {
  it.each([
    [11_988, 'year', 1, 999], // 119.88 a year -> 9.99 a month
    [10_000, 'year', 1, 833], // 8.333 -> 8.33
    [999, 'week', 1, 4329], // 9.99 x 52/12 = 43.29
    [100, 'day', 1, 3042], // 1.00 x 365/12 = 30.4166 -> 30.42
    [2999, 'month', 3, 1000], // 29.99 every 3 months -> 9.9967 -> 10.00
    [999, 'month', 1, 999],
    [6, 'year', 1, 1], // 0.5 of a minor unit: half-up
    [4999, 'one_time', 1, 4999],
    [1200, 'year', 1, 100], // JPY
    [4500, 'week', 2, 9750], // KWD 4.500 every two weeks -> 9.750 a month
  ] as const)('%i per %i %s -> %i a month', (price, interval, count, monthly) => {
    expect(referenceIntervalMinor(price, interval, count)).toBe(monthly)
  })

  it('is the closest minor unit to the exact monthly price, ties up (fast-check)', () => {
    const factor = {day: [365n, 12n], month: [1n, 1n], week: [52n, 12n], year: [1n, 12n]} as const
    fc.assert(
      fc.property(fc.integer({max: 1e13, min: 0}), fc.constantFrom('day', 'week', 'month', 'year' as const), fc.integer({max: 24, min: 1}), (price, interval, count) => {
        const r = BigInt(referenceIntervalMinor(price, interval, count))
        const [num, den] = factor[interval]
        const d = den * BigInt(count)
        // r is within half a unit of price*num/d, and an exact half rounds up.
        const twice = 2n * (r * d - BigInt(price) * num)
        expect(twice <= d && twice > -d).toBe(true)
      }),
    )
  })

  it('refuses unknown intervals and counts below 1', () => {
    expect(() => referenceIntervalMinor(999, 'fortnight', 1)).toThrow(/unknown interval "fortnight"/)
    expect(() => referenceIntervalMinor(999, 'month', 0)).toThrow(/interval_count/)
  })
})
