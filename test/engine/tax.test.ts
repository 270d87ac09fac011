import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {knownCurrencies, minorDigits} from '../../src/currency.js'
import {type Lock, packQuote, packQuoteNow, unpackQuote} from '../../src/pricing/locks.js'
import {applyRounding, defaultRuleText} from '../../src/pricing/rounding.js'
import {
  type OperatorTaxRate,
  type TaxSettings,
  grossOfNet,
  percentToBp,
  rateFor,
  resolveBehavior,
  splitShown,
  taxWords,
} from '../../src/tax/tax.js'
import {lock as contractLock, lockedProduct} from '../helpers/contract-fixtures.js'

/** Tax in prices (docs/tax.md): the bundled rates, operator rates, behaviour precedence and the exact split. */

const DAY = '2026-06-01'

describe('rates', () => {
  it.each([
    ['DE', 1900],
    ['HU', 2700],
    ['JP', 1000],
    ['IN', 1800],
    ['FI', 2550],
    ['CM', 1925],
  ])('bundles the standard rate of %s', (country, bp) => {
    expect(rateFor([], country, 'standard', DAY)).toMatchObject({bp, category: 'standard'})
  })

  it('has no rate for the US (sales tax is per state) until the operator sets one', () => {
    expect(rateFor([], 'US', 'standard', DAY).bp).toBe(0)
    const own: OperatorTaxRate[] = [{bp: 887, category: '', country: 'US', from: '2026-01-01', source: 'manual'}]
    expect(rateFor(own, 'US', 'standard', DAY)).toMatchObject({bp: 887, source: 'manual'})
  })

  it('lets an operator rate outrank the bundled one, and keeps a future one scheduled', () => {
    const own: OperatorTaxRate[] = [
      {bp: 2000, category: '', country: 'DE', from: '2026-01-01', source: 'manual'},
      {bp: 2100, category: '', country: 'DE', from: '2026-07-01', source: 'manual'},
    ]
    expect(rateFor(own, 'DE', 'standard', DAY)).toMatchObject({bp: 2000, from: '2026-01-01'})
    expect(rateFor(own, 'DE', 'standard', '2026-07-01').bp).toBe(2100)
    // Only future rates: the bundled one applies until then.
    expect(rateFor(own.slice(1), 'DE', 'standard', DAY).bp).toBe(1900)
  })

  it('applies reduced rates by category where a country has them, and the standard rate elsewhere', () => {
    expect(rateFor([], 'DE', 'ebook', DAY)).toMatchObject({bp: 700, category: 'ebook'})
    expect(rateFor([], 'GB', 'ebook', DAY).bp).toBe(0)
    expect(rateFor([], 'HU', 'ebook', DAY)).toMatchObject({bp: 2700, category: 'standard'})
    // An operator's standard rate does not replace a bundled reduced one; its own category rate does.
    const own: OperatorTaxRate[] = [{bp: 2000, category: '', country: 'DE', from: '2026-01-01', source: 'manual'}]
    expect(rateFor(own, 'DE', 'ebook', DAY).bp).toBe(700)
    expect(rateFor(own, 'HU', 'ebook', DAY).bp).toBe(2700)
    own.push({bp: 500, category: 'ebook', country: 'DE', from: '2026-01-01', source: 'manual'})
    expect(rateFor(own, 'DE', 'ebook', DAY)).toMatchObject({bp: 500, category: 'ebook'})
  })

  it('reads percents with at most two decimals below 100', () => {
    expect(percentToBp(19)).toBe(1900)
    expect(percentToBp(19.25)).toBe(1925)
    expect(percentToBp(8.1)).toBe(810)
    expect(() => percentToBp(19.125)).toThrow(/two decimals/)
    expect(() => percentToBp(100)).toThrow(/not a tax rate/)
    expect(() => percentToBp(-1)).toThrow(/not a tax rate/)
  })
})

describe('behaviour', () => {
  const settings = (s: Partial<TaxSettings>): TaxSettings => ({countries: new Map(), products: new Map(), store: 'exclusive', ...s})

  it('is exclusive by default', () => {
    expect(resolveBehavior(settings({}), 'DE', 'pro').behavior).toBe('exclusive')
  })

  it('takes the first match: country > US/CA exclusive > product > store', () => {
    const s = settings({countries: new Map([['US', 'inclusive'], ['FR', 'exclusive']]), products: new Map([['ebook', 'exclusive']]), store: 'inclusive'})
    expect(resolveBehavior(s, 'DE', 'pro')).toEqual({behavior: 'inclusive', source: 'the store setting'})
    expect(resolveBehavior(s, 'DE', 'ebook').behavior).toBe('exclusive')
    expect(resolveBehavior(s, 'CA', 'pro').behavior).toBe('exclusive')
    expect(resolveBehavior(s, 'US', 'pro').behavior).toBe('inclusive')
    expect(resolveBehavior(settings({products: new Map([['pro', 'inclusive']])}), 'FR', 'pro').behavior).toBe('inclusive')
    expect(resolveBehavior(s, 'FR', 'pro').behavior).toBe('exclusive')
  })
})

describe('the calculation', () => {
  it('splits an inclusive DE price: 9.99 EUR = 8.39 net + 1.60 VAT', () => {
    expect(splitShown(999, 1900, 'inclusive')).toEqual({gross: 999, net: 839, tax: 160})
  })

  it('adds tax to an exclusive price: 10 USD + 8.875% = 10.89', () => {
    expect(splitShown(1000, 888, 'exclusive')).toEqual({gross: 1089, net: 1000, tax: 89})
  })

  it('splits JPY and INR in their minor units: 1100 JPY = 1000 + 100; 999 INR incl. 18% GST', () => {
    expect(splitShown(1100, 1000, 'inclusive')).toEqual({gross: 1100, net: 1000, tax: 100})
    expect(splitShown(99_900, 1800, 'inclusive')).toEqual({gross: 99_900, net: 84_661, tax: 15_239})
  })

  it('keeps a .99 charm price gross under inclusive: the rounding rule rounds the gross', () => {
    // 8.37 EUR net x 1.19 = 9.96, rounded by the default EUR rule to 9.99 incl. VAT.
    const gross = applyRounding(defaultRuleText('EUR'), grossOfNet(837, 1900), 'EUR')
    expect(gross).toBe(999)
    expect(splitShown(gross, 1900, 'inclusive').gross).toBe(999)
    // HU: 27% on 3,150 HUF net = 4,000.50, rounded to a whole 4,000 HUF shown.
    const huf = applyRounding(defaultRuleText('HUF'), grossOfNet(315_000, 2700), 'HUF')
    expect(huf % 100).toBe(0)
    expect(splitShown(huf, 2700, 'inclusive').gross).toBe(huf)
  })

  it('under inclusive the shown price is a price point of the rule at every rate: .99 below 100 EUR survives the tax', () => {
    fc.assert(
      fc.property(fc.integer({max: 8000, min: 50}), fc.integer({max: 2700, min: 0}), (net, bp) => {
        const shown = applyRounding(defaultRuleText('EUR'), grossOfNet(net, bp), 'EUR')
        if (shown < 10_000) expect(shown % 100).toBe(99)
        const s = splitShown(shown, bp, 'inclusive')
        expect(s.gross).toBe(shown)
        expect(s.net + s.tax).toBe(shown)
      }),
      {numRuns: 1000},
    )
  })

  it('net + tax = gross to the minor unit in every currency, at every rate, both behaviours', () => {
    const currencies = [...knownCurrencies()]
    fc.assert(
      fc.property(
        fc.constantFrom(...currencies),
        fc.integer({max: 9999, min: 0}),
        fc.integer({max: 1_000_000_000_000, min: 0}),
        fc.constantFrom('inclusive' as const, 'exclusive' as const),
        (currency, bp, minor, behavior) => {
          const s = splitShown(minor, bp, behavior)
          expect(s.net + s.tax).toBe(s.gross)
          expect(Number.isSafeInteger(s.tax) && s.tax >= 0).toBe(true)
          expect(behavior === 'inclusive' ? s.gross : s.net).toBe(minor)
          expect(s.tax <= s.gross).toBe(true)
          // Half up within one minor unit of the exact tax (an integer of the currency's exponent).
          const exact = behavior === 'inclusive' ? (minor * bp) / (10_000 + bp) : (minor * bp) / 10_000
          expect(Math.abs(s.tax - exact)).toBeLessThanOrEqual(0.5 + 1e-6 * Math.max(1, exact))
          expect(minorDigits(currency)).toBeGreaterThanOrEqual(0)
        },
      ),
      {numRuns: 2000},
    )
  })
})

describe('words', () => {
  it('says incl. or + in the locale words where the table has them', () => {
    expect(taxWords('inclusive', 'DE', 'de-DE')).toBe('inkl. MwSt.')
    expect(taxWords('exclusive', 'FR', 'fr-FR')).toBe('HT')
    expect(taxWords('inclusive', 'JP', 'ja-JP')).toBe('税込')
    expect(taxWords('inclusive', 'IN', 'hi-IN')).toBe('incl. GST')
    expect(taxWords('exclusive', 'US', 'en-US')).toBe('+ sales tax')
  })
})

describe('locks', () => {
  const lock = (tax?: {behavior: 'exclusive' | 'inclusive'; bp: number}): Lock => {
    const base = contractLock('u')
    return {...base, quote: {...base.quote, products: {pro: lockedProduct(999, tax ? {tax} : {})}}}
  }

  it('stores the tax a price was shown with compactly and reads it back', () => {
    const l = lock({behavior: 'inclusive', bp: 1925})
    const text = packQuote(l)
    expect(text).toContain('"tax":"inclusive 19.25"')
    expect(text).toBe(packQuoteNow(l))
    expect(unpackQuote(text, 'EUR').products.pro.tax).toEqual({behavior: 'inclusive', bp: 1925})
    // The remembered text of one tax is not handed out for another.
    expect(packQuote(lock({behavior: 'exclusive', bp: 1925}))).toContain('"tax":"exclusive 19.25"')
    expect(packQuote(lock({behavior: 'inclusive', bp: 2000}))).toContain('"tax":"inclusive 20"')
  })

  it('a lock made before tax in prices has none (it reads as exclusive at today\'s rate when rendered)', () => {
    const text = packQuote(lock())
    expect(text).not.toContain('tax')
    expect(unpackQuote(text, 'EUR').products.pro.tax).toBeUndefined()
  })
})
