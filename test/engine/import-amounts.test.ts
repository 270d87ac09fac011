import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {MAX_MINOR, minorToDecimalString} from '../../src/currency.js'
import {type AmountFormat, amountCodes, amountProblem, DECIMAL_SEPARATORS, describeFormat, parseUnits, THOUSANDS_SEPARATORS} from '../../src/import/amounts.js'
import {PRESETS} from '../../src/import/presets.js'

/**
 * Amount cells of exports read under the separators their layout declares, straight into
 * minor units: nothing is guessed, and a refused cell gets a reason naming the form expected.
 */

const PLAIN: AmountFormat = {decimal: '.', thousands: null}
const US: AmountFormat = {decimal: '.', thousands: ','}
const DE: AmountFormat = {decimal: ',', thousands: '.'}

const read = (cell: string, format: AmountFormat, exponent: number) => parseUnits(cell, amountCodes(format), exponent)

/** Minor units written in a format: grouped in thousands when the format has a separator and `group` is set. */
function write(minor: number, exponent: number, format: AmountFormat, group: boolean): string {
  const text = minorToDecimalString(minor, exponent)
  const neg = text.startsWith('-')
  const [int, frac] = (neg ? text.slice(1) : text).split('.')
  const grouped = group && format.thousands !== null ? int.replace(/\B(?=(\d{3})+$)/g, format.thousands) : int
  return (neg ? '-' : '') + grouped + (frac === undefined ? '' : format.decimal + frac)
}

describe('amount cells under declared separators', () => {
  it('every preset declares the separators of its gateway: plain numbers, "." before decimals, never grouped', () => {
    for (const p of PRESETS) expect([p.name, p.decimal_separator, p.thousands_separator]).toEqual([p.name, '.', null])
  })

  it('"19,999" KWD is refused where no thousands separator is declared, with the reason and the expected form', () => {
    // Before: the comma was taken for a thousands separator and the cell read as 19,999 KWD.
    expect(read('19,999', PLAIN, 3)).toBeNaN()
    expect(amountProblem('19,999', PLAIN, false, 'KWD', 3, 'ISO 4217')).toBe(
      'has ",", which is not a separator of this layout, so the amount is ambiguous (expected "." before decimals and no thousands separator, such as 1234.56; a --mapping file declares other separators with decimal_separator and thousands_separator)',
    )
    expect(read('19.999', PLAIN, 3)).toBe(19_999)
    expect(read('19999', PLAIN, 3)).toBe(19_999_000)
  })

  it('reads exactly what the separators allow and nothing else', () => {
    const cases: [string, AmountFormat, number, number][] = [
      ['6500.50', PLAIN, 2, 650_050], // HUF as charged: two ISO decimals
      ['1500', PLAIN, 0, 1500],
      ['1500.00', PLAIN, 0, 1500], // zeros beyond the exponent are exact
      ['0.00', PLAIN, 2, 0],
      ['-5.00', PLAIN, 2, -500],
      ['1,234.56', US, 2, 123_456],
      ['1234.56', US, 2, 123_456], // grouping is optional
      ['12,345,678', US, 0, 12_345_678],
      ['1.234,56', DE, 2, 123_456],
      ['1,5', DE, 2, 150],
      ['1 234,5', {decimal: ',', thousands: ' '}, 2, 123_450],
      ["1'234.50", {decimal: '.', thousands: "'"}, 2, 123_450],
    ]
    for (const [cell, format, exponent, minor] of cases) expect(read(cell, format, exponent), cell).toBe(minor)
    const refused: [string, AmountFormat, number][] = [
      ['1,234,5', US, 2], // misplaced group
      ['1,23', US, 2],
      [',123', US, 2],
      ['1234,567', US, 2],
      ['1,234.', US, 2],
      ['1.5', DE, 2], // a "." of DE groups thousands
      ['1.234.5', DE, 2],
      ['1,200.00', PLAIN, 2],
      ['9,99', PLAIN, 2],
      ['9.999', PLAIN, 2], // more decimals than USD has
      ['.5', PLAIN, 2],
      ['5.', PLAIN, 2],
      ['', PLAIN, 2],
      ['-', PLAIN, 2],
      ['+5', PLAIN, 2],
      ['$5.00', PLAIN, 2],
      ['5e3', PLAIN, 2],
      ['1.2.3', PLAIN, 2],
      ['99999999999999999999', PLAIN, 2], // beyond exact integers
    ]
    for (const [cell, format, exponent] of refused) expect(read(cell, format, exponent), cell).toBeNaN()
  })

  it('says why a cell was refused', () => {
    expect(amountProblem('1,234,5', US, false, 'USD', 2, 'ISO 4217')).toMatch(/^has "," where no thousands separator can be, so the amount is ambiguous \(expected "\." before decimals and "," between thousands, such as 1234\.56 or 1,234\.56\)$/)
    expect(amountProblem('1.5', DE, false, 'EUR', 2, 'ISO 4217')).toContain('has "." where no thousands separator can be')
    expect(amountProblem('19.9995', PLAIN, false, 'KWD', 3, 'ISO 4217')).toBe('has 4 decimals, more than KWD has (3, ISO 4217); amounts are kept as charged, never rounded')
    expect(amountProblem('$5', PLAIN, false, 'USD', 2, 'ISO 4217')).toMatch(/^is not a number \(expected/)
    expect(amountProblem('', PLAIN, false, 'USD', 2, 'ISO 4217')).toMatch(/^is empty/)
    expect(amountProblem('2400.00', PLAIN, true, 'ISK', 0, '')).toMatch(/^has a decimal separator, but the layout's amounts are whole minor units/)
    expect(read('2400.00', PLAIN, 0)).toBe(2400)
    expect(parseUnits('2400.00', amountCodes(PLAIN, true), 0)).toBeNaN()
    expect(amountProblem('1 234', {decimal: ',', thousands: '\u00A0'}, false, 'EUR', 2, 'ISO 4217')).toContain('has space, which is not a separator of this layout')
  })

  it('reads at the edges of the loop: a second group of other than 3 digits, a letter among the decimals, the largest exact amount, no negative zero', () => {
    expect(read('1,23,456', US, 2)).toBeNaN()
    expect(read('1,2345,678', US, 2)).toBeNaN()
    expect(read('1.5a', PLAIN, 2)).toBeNaN()
    expect(read('1.0x', PLAIN, 2)).toBeNaN()
    expect(read('9007199254740991', PLAIN, 0)).toBe(MAX_MINOR)
    expect(read('9007199254740992', PLAIN, 0)).toBeNaN()
    // -0 would print as "-0.00" in a JSON summary's decimal amounts.
    expect(read('-0', PLAIN, 2)).toBe(0)
    expect(read('-0.00', PLAIN, 2)).toBe(0)
    // A control character is no separator, whatever a layout declares (none: code -1).
    expect(parseUnits('1\u0001000', amountCodes(PLAIN, true), 0)).toBeNaN()
    expect(parseUnits('5\u00010', amountCodes(PLAIN, true), 0)).toBeNaN()
  })

  it('names the form a layout expects: major units, and whole minor units with and without grouping', () => {
    expect(describeFormat(US)).toBe('"." before decimals and "," between thousands, such as 1234.56 or 1,234.56')
    expect(describeFormat({decimal: ',', thousands: '\u00A0'})).toBe('"," before decimals and no-break space between thousands, such as 1234,56 or 1\u00A0234,56')
    expect(describeFormat(PLAIN, true)).toBe('a whole number of minor units such as 123456, no separators')
    expect(describeFormat(US, true)).toBe('a whole number of minor units such as 123456 or 123,456, no decimal separator')
  })

  it('says why, case by case: the sign is not the problem, misplaced groups, a separator without digits, too many decimals, out of range', () => {
    const why = (cell: string, format: AmountFormat, exponent = 2, whole = false) => amountProblem(cell, format, whole, whole ? 'ISK' : 'USD', exponent, whole ? '' : 'ISO 4217')
    const ambiguous = (sep: string, format: AmountFormat, whole = false) => `has ${sep} where no thousands separator can be, so the amount is ambiguous (expected ${describeFormat(format, whole)})`
    const notNumber = (format: AmountFormat, whole = false) => `is not a number (expected ${describeFormat(format, whole)})`
    const outOfRange = 'is out of range (more than 9007199254740991 minor units)'
    // A leading minus is read (the schema refuses it with its value): the reason is the rest.
    expect(why('-19,999', PLAIN, 3)).toBe(amountProblem('19,999', PLAIN, false, 'USD', 3, 'ISO 4217'))
    expect(why('-19,999', PLAIN, 3)).toMatch(/^has ",", which is not a separator of this layout/)
    expect(why('12a', PLAIN)).toBe(notNumber(PLAIN))
    expect(why('abc', US)).toBe(notNumber(US))
    // Whole minor units: a comma the layout does not declare is no decimal separator either.
    expect(why('1,5', PLAIN, 0, true)).toBe(`has ",", which is not a separator of this layout, so the amount is ambiguous (expected ${describeFormat(PLAIN, true)}; a --mapping file declares other separators with decimal_separator and thousands_separator)`)
    expect(why('2400.00', US, 0, true)).toBe(`has a decimal separator, but the layout's amounts are whole minor units (amount_unit "minor"; expected ${describeFormat(US, true)})`)
    expect(why('1,2345', US, 0, true)).toBe(ambiguous('","', US, true))
    expect(why('99999999999999999999', US, 0, true)).toBe(outOfRange)
    // Thousands groups: the first of 1 to 3 digits, every later one of 3, before the decimals only.
    expect(why('1,2345', US)).toBe(ambiguous('","', US))
    expect(why(',123', US)).toBe(ambiguous('","', US))
    expect(why('1234,567', US)).toBe(ambiguous('","', US))
    expect(why('1,23.45', US)).toBe(ambiguous('","', US))
    expect(why('123,456.789', US)).toBe('has 3 decimals, more than USD has (2, ISO 4217); amounts are kept as charged, never rounded')
    expect(why('1,234.567', US)).toBe('has 3 decimals, more than USD has (2, ISO 4217); amounts are kept as charged, never rounded')
    // A separator without digits on one side, a second decimal separator, a group among the decimals.
    for (const cell of ['.5', '5.', '-', '1.2.3']) expect(why(cell, PLAIN), cell).toBe(notNumber(PLAIN))
    expect(why('1.5,0', US)).toBe(notNumber(US))
    expect(why('1,5.0', DE)).toBe(notNumber(DE))
    // Decimals are counted without trailing zeros, never their leading ones.
    expect(amountProblem('1.020500', PLAIN, false, 'KWD', 3, 'ISO 4217')).toBe('has 4 decimals, more than KWD has (3, ISO 4217); amounts are kept as charged, never rounded')
    // Beyond exact integers, whatever the separators.
    const SPACED: AmountFormat = {decimal: ',', thousands: ' '}
    for (const format of [PLAIN, US, SPACED]) expect(why('99999999999999999999', format), JSON.stringify(format)).toBe(outOfRange)
    expect(why('9,999,999,999,999,999,999', US)).toBe(outOfRange)
    expect(why('99999999999999999999.5', PLAIN)).toBe(outOfRange)
    expect(why('99 999 999 999 999 999 999,50', SPACED)).toBe(outOfRange)
  })

  it('property: an amount written with the declared separators reads back as the same minor units', () => {
    const formats = DECIMAL_SEPARATORS.flatMap((decimal) => [null, ...THOUSANDS_SEPARATORS].filter((t) => t !== decimal).map((thousands): AmountFormat => ({decimal, thousands})))
    fc.assert(
      fc.property(
        fc.constantFrom(...formats),
        fc.integer({max: 4, min: 0}),
        fc.oneof(fc.integer({max: 100_000, min: 0}), fc.integer({max: MAX_MINOR, min: 0}), fc.integer({max: 0, min: -1_000_000})),
        fc.boolean(),
        (format, exponent, minor, group) => {
          const cell = write(minor, exponent, format, group)
          expect(read(cell, format, exponent)).toBe(minor)
          // The same digits with the decimals padded by zeros are the same amount.
          if (exponent > 0) expect(read(`${cell}00`, format, exponent)).toBe(minor)
        },
      ),
      {numRuns: 2000},
    )
  })

  it('property: a cell is read only when its separators are the declared ones, and then as the number it spells', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^-?[0-9.,' ]{1,12}$/), fc.constantFrom(PLAIN, US, DE), (cell, format) => {
        const v = read(cell, format, 2)
        if (Number.isNaN(v)) return
        // What was read is the cell without its thousands separators, decimal point normalised.
        const canonical = (format.thousands === null ? cell : cell.split(format.thousands).join('')).replace(format.decimal, '.')
        expect(canonical).toMatch(/^-?\d+(\.\d+)?$/)
        expect(minorToDecimalString(v, 2)).toBe(minorToDecimalString(Math.round(Number(canonical) * 100), 2))
      }),
      {numRuns: 2000},
    )
  })
})
