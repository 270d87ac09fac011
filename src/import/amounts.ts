/**
 * Amount cells of gateway exports, read without guessing (docs/revenue.md, "Amounts").
 * A layout declares the separators its gateway writes; a cell is read under those alone,
 * straight into integer minor units (no float on the way), and anything else is refused
 * with the reason: "19,999" is 19.999 in one locale and 19999 in another, so where the
 * layout declares no thousands separator it is no number at all.
 */

/** The largest amount in minor units the engine handles exactly (currency.ts MAX_MINOR). */
const MAX_MINOR = Number.MAX_SAFE_INTEGER

/** Decimal separators a layout may declare. */
export const DECIMAL_SEPARATORS = ['.', ','] as const
/** Thousands separators a layout may declare (spaces as exports write them: plain, no-break, narrow no-break). */
export const THOUSANDS_SEPARATORS = [',', '.', ' ', '\u00A0', '\u202F', "'", '\u2019'] as const

export type DecimalSeparator = (typeof DECIMAL_SEPARATORS)[number]
export type ThousandsSeparator = (typeof THOUSANDS_SEPARATORS)[number]

/** How a layout writes numbers. `thousands: null`: digits are never grouped. */
export type AmountFormat = {decimal: DecimalSeparator; thousands: null | ThousandsSeparator}

/** What the loop needs: the separators as char codes (-1: none, so it never matches). */
export type AmountCodes = {decimal: number; thousands: number}

export function amountCodes(format: AmountFormat, wholeUnits = false): AmountCodes {
  return {decimal: wholeUnits ? -1 : format.decimal.charCodeAt(0), thousands: format.thousands === null ? -1 : format.thousands.charCodeAt(0)}
}

/**
 * A cell as integer units of 10^-exponent, or NaN when it is not a number under the
 * separators, has non-zero digits beyond `exponent` decimals, or is out of the exact
 * range. An optional leading "-" is read (the schemas reject negative amounts with their
 * value). Trailing zeros beyond the exponent are exact and accepted ("1500.00" JPY).
 * A hand-written loop: it runs once or twice per imported row.
 */
export function parseUnits(s: string, codes: AmountCodes, exponent: number): number {
  const n = s.length
  let i = 0
  let neg = false
  // charCodeAt of an empty cell is NaN: no sign.
  if (s.charCodeAt(0) === 45) {
    neg = true
    i = 1
  }
  const sep = codes.thousands
  let v = 0
  let group = 0
  let grouped = false
  for (; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      v = v * 10 + (c - 48)
      group++
    } else if (c === sep) {
      // The first group has 1-3 digits, every later one exactly 3.
      if (grouped ? group !== 3 : group === 0 || group > 3) return Number.NaN
      grouped = true
      group = 0
    } else break
  }
  // No digit (an empty cell, a lone sign or separator) or a group that ends short.
  if (group === 0 || (grouped && group !== 3)) return Number.NaN
  let frac = 0
  if (i < n) {
    if (s.charCodeAt(i) !== codes.decimal) return Number.NaN
    const fracStart = ++i
    for (; i < n; i++) {
      const d = s.charCodeAt(i) - 48
      if (d < 0 || d > 9) return Number.NaN
      if (frac < exponent) {
        v = v * 10 + d
        frac++
      } else if (d !== 0) return Number.NaN
    }
    if (i === fracStart) return Number.NaN
  }
  for (; frac < exponent; frac++) v *= 10
  if (v > MAX_MINOR) return Number.NaN
  return neg && v !== 0 ? -v : v
}

const SEPARATOR_NAMES: Record<string, string> = {' ': 'space', '\u00A0': 'no-break space', '\u202F': 'narrow no-break space'}

function separatorName(s: string): string {
  return SEPARATOR_NAMES[s] ?? JSON.stringify(s)
}

/** The numbers a format reads, in words and with an example: for reasons and docs. */
export function describeFormat(format: AmountFormat, wholeUnits = false): string {
  if (wholeUnits) {
    return format.thousands === null ? 'a whole number of minor units such as 123456, no separators' : `a whole number of minor units such as 123456 or 123${format.thousands}456, no decimal separator`
  }
  const example = format.thousands === null ? `1234${format.decimal}56` : `1234${format.decimal}56 or 1${format.thousands}234${format.decimal}56`
  return `${separatorName(format.decimal)} before decimals and ${format.thousands === null ? 'no thousands separator' : `${separatorName(format.thousands)} between thousands`}, such as ${example}`
}

/**
 * Why parseUnits refused a cell (called for refused cells only). `currency` and
 * `exponent` name the decimals the cell may carry; `unitNote` says where they come from.
 */
export function amountProblem(s: string, format: AmountFormat, wholeUnits: boolean, currency: string, exponent: number, unitNote: string): string {
  const codes = amountCodes(format, wholeUnits)
  const expected = `expected ${describeFormat(format, wholeUnits)}`
  if (s === '') return `is empty (${expected})`
  const body = s.charCodeAt(0) === 45 ? s.slice(1) : s
  const foreign = [...body].find((ch) => !(ch >= '0' && ch <= '9') && ch.charCodeAt(0) !== codes.decimal && ch.charCodeAt(0) !== codes.thousands)
  if (foreign !== undefined) {
    if (wholeUnits && foreign === format.decimal) return `has a decimal separator, but the layout's amounts are whole minor units (amount_unit "minor"; ${expected})`
    if ((DECIMAL_SEPARATORS as readonly string[]).includes(foreign) || (THOUSANDS_SEPARATORS as readonly string[]).includes(foreign)) {
      return `has ${separatorName(foreign)}, which is not a separator of this layout, so the amount is ambiguous (${expected}; a --mapping file declares other separators with decimal_separator and thousands_separator)`
    }
    return `is not a number (${expected})`
  }
  const dec = wholeUnits ? -1 : body.indexOf(format.decimal)
  const intPart = dec === -1 ? body : body.slice(0, dec)
  const fracPart = dec === -1 ? '' : body.slice(dec + 1)
  if (format.thousands !== null && intPart.includes(format.thousands)) {
    const groups = intPart.split(format.thousands)
    if (groups[0].length === 0 || groups[0].length > 3 || groups.slice(1).some((g) => g.length !== 3)) {
      return `has ${separatorName(format.thousands)} where no thousands separator can be, so the amount is ambiguous (${expected})`
    }
  }
  if (intPart === '' || (dec !== -1 && fracPart === '') || fracPart.includes(format.decimal) || (format.thousands !== null && fracPart.includes(format.thousands))) {
    return `is not a number (${expected})`
  }
  if (/[1-9]/.test(fracPart.slice(exponent))) {
    return `has ${fracPart.replace(/0+$/, '').length} decimals, more than ${currency} has (${exponent}, ${unitNote}); amounts are kept as charged, never rounded`
  }
  return `is out of range (more than ${MAX_MINOR} minor units)`
}
