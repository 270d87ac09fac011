import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {isCountry, isCurrency, upperCode} from '../../src/currency.js'
import {toCountry} from '../../src/localization/countries.js'
import {parseRuleText} from '../../src/segments/rules.js'

/**
 * Codes typed in any case are upper-cased, but only as ASCII: Unicode case mapping turns
 * other letters into codes ("ß" → "SS", South Sudan; "ı" → "I"; "ſ" → "S"), which would
 * store a country or currency nobody typed.
 */
describe('upperCode', () => {
  it('a code comes out only of a text that spells it in ASCII letters of either case', () => {
    fc.assert(
      fc.property(fc.string({maxLength: 4, unit: 'grapheme'}), (text) => {
        const code = upperCode(text)
        if (isCountry(code) || isCurrency(code)) expect(text).toMatch(/^[A-Za-z]+$/)
        if (/^[\x00-\x7f]*$/.test(text)) expect(code).toBe(text.toUpperCase())
      }),
      {numRuns: 5000},
    )
  })

  it('letters whose upper case is ASCII do not make codes', () => {
    for (const [text, wouldBe] of [['ß', 'SS'], ['ıt', 'IT'], ['uſd', 'USD'], ['ﬀ', 'FF']]) {
      expect(text.toUpperCase()).toBe(wouldBe)
      expect(upperCode(text)).toBe(text)
      expect(isCountry(upperCode(text)) || isCurrency(upperCode(text))).toBe(false)
    }
    expect(upperCode('de')).toBe('DE')
    expect(upperCode('eur')).toBe('EUR')
  })

  it('data files and audience rules go through it', () => {
    expect(toCountry('ß')).toBeUndefined()
    expect(toCountry('deu')).toBe('DE')
    expect(parseRuleText('country in de,ß')).toEqual({operator: 'in', type: 'country', values: ['DE', 'ß']})
  })
})
