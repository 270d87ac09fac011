import countryToCurrency from 'country-to-currency'
import {createRequire} from 'node:module'

import {InvalidInputError} from './errors.js'

/**
 * Currencies, countries and exact money arithmetic (docs/money.md). Three exponents, never
 * confused: storage (ISO 4217, recorded per store), display (CLDR, the snapshot below) and
 * gateway (src/money/gateway-tables.ts). Amounts are integer minor units; rates and factors
 * are exact rationals of their shortest decimal form, so 1.005 is 1005/1000.
 */

/**
 * ISO 4217 digits from the data package, read on first use: an open store has recorded its
 * exponents, so a single command usually never needs it (docs/performance.md "Cold start").
 */
let isoDigits: Map<string, number> | undefined
function isoDigitsOf(currency: string): number | undefined {
  if (!isoDigits) {
    const data = createRequire(import.meta.url)('currency-codes/data.js') as {code: string; digits: number}[]
    isoDigits = new Map(data.map((c) => [c.code, c.digits]))
  }
  return isoDigits.get(currency)
}
const INTL_CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
const COUNTRY_CURRENCY = countryToCurrency as Record<string, string>

/**
 * CLDR 48 (ICU 78) digits where they differ from ISO 4217: the currencies people pay in
 * whole units although ISO keeps a minor unit (HUF, IDR, COP, ...). A snapshot, so default
 * rounding rules and price points do not move when a runtime ships other CLDR data.
 */
const CLDR_DIGITS: Readonly<Record<string, number>> = {
  AFN: 0, ALL: 0, COP: 0, HUF: 0, IDR: 0, IQD: 0, IRR: 0, KPW: 0, LAK: 0, LBP: 0,
  MGA: 0, MMK: 0, PKR: 0, SOS: 0, SYP: 0, YER: 0,
}

/** Exponents a store recorded; they win over the data package (see src/store/exponents.ts). */
let recorded: ReadonlyMap<string, number> | undefined

export function useRecordedExponents(map: ReadonlyMap<string, number> | undefined): void {
  recorded = map
}

/** A currency pricectl prices in: one the runtime can format (ISO codes of funds and metals are not). */
export function isCurrency(code: string): boolean {
  return INTL_CURRENCIES.has(code)
}

/**
 * A typed country or currency code upper-cased: ASCII only. Unicode case mapping makes codes
 * of other letters ("ß" is "SS", South Sudan; "ıt" is "IT"), so a text with any non-ASCII
 * character is left as it is and fails the code check with the value the user typed.
 */
export function upperCode(text: string): string {
  return NON_ASCII.test(text) ? text : text.toUpperCase()
}

const NON_ASCII = /[^\x00-\x7f]/

export function isCountry(code: string): boolean {
  return Object.hasOwn(COUNTRY_CURRENCY, code)
}

/** Currency normally used in a country (ISO 3166 alpha-2), or undefined. */
export function countryCurrency(country: string): string | undefined {
  const c = COUNTRY_CURRENCY[country]
  return c && isCurrency(c) ? c : undefined
}

/** The runtime's ICU digits: for codes the data package does not know yet, and what schema 1 stored with. */
export function icuDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', {currency, style: 'currency'}).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/** Storage exponent: what the store recorded, else ISO 4217 (USD 2, JPY 0, KWD 3, HUF 2). */
export function minorDigits(currency: string): number {
  return recorded?.get(currency) ?? isoDigitsOf(currency) ?? icuDigits(currency)
}

/** Codes this runtime knows (a store records an exponent for each). */
export function knownCurrencies(): ReadonlySet<string> {
  return INTL_CURRENCIES
}

/** The storage exponent of every currency this runtime knows, for a store to record. */
export function packageExponents(): Map<string, number> {
  const out = new Map<string, number>()
  for (const c of INTL_CURRENCIES) out.set(c, isoDigitsOf(c) ?? icuDigits(c))
  return out
}

/** Display exponent: CLDR's digits (HUF 0, USD 2), what buyers see. */
export function displayDigits(currency: string): number {
  return CLDR_DIGITS[currency] ?? minorDigits(currency)
}

// ---------------------------------------------------------------------------------------
// Exact decimals

/** Largest amount in minor units the engine handles exactly (every gateway's maximum is far below). */
export const MAX_MINOR = Number.MAX_SAFE_INTEGER

/** Decimal places of a number as written in its shortest round-trip form. */
export function decimalPlaces(n: number): number {
  const s = String(n)
  const e = s.indexOf('e')
  if (e >= 0) {
    const exp = Number(s.slice(e + 1))
    const mantissa = s.slice(0, e)
    const dot = mantissa.indexOf('.')
    const frac = dot >= 0 ? mantissa.length - dot - 1 : 0
    return Math.max(0, frac - exp)
  }
  const dot = s.indexOf('.')
  return dot >= 0 ? s.length - dot - 1 : 0
}

const rationals = new Map<number, readonly [bigint, bigint]>()

/** The shortest decimal form of a finite number as a fraction: 1.005 -> [1005n, 1000n]. */
export function toRational(x: number): readonly [bigint, bigint] {
  let r = rationals.get(x)
  if (r) return r
  if (!Number.isFinite(x)) throw new RangeError(`${x} is not a finite number`)
  const s = String(Math.abs(x))
  const [mantissa, expText] = s.split('e')
  const [int, frac = ''] = mantissa.split('.')
  let num = BigInt(int + frac) * (x < 0 ? -1n : 1n)
  let den = 10n ** BigInt(frac.length)
  const exp = Number(expText ?? 0)
  if (exp > 0) num *= 10n ** BigInt(exp)
  else if (exp < 0) den *= 10n ** BigInt(-exp)
  r = [num, den] as const
  if (rationals.size > 10_000) rationals.clear()
  rationals.set(x, r)
  return r
}

/** num / den rounded half away from zero, exactly. */
export function divHalfUp(num: bigint, den: bigint): bigint {
  const neg = num < 0n !== den < 0n
  const n = num < 0n ? -num : num
  const d = den < 0n ? -den : den
  const q = (2n * n + d) / (2n * d)
  return neg ? -q : q
}

function toSafe(v: bigint, what: string): number {
  if (v > BigInt(MAX_MINOR) || v < -BigInt(MAX_MINOR)) {
    throw new InvalidInputError(`${what} is out of range: ${v} minor units is more than pricectl computes exactly (${MAX_MINOR})`)
  }
  return Number(v)
}

/** minor x num / den, rounded half away from zero, exactly (integers while they stay exact, else BigInt). */
export function mulDivHalfUp(minor: number, num: bigint, den: bigint, what = 'amount'): number {
  const n = Number(num)
  const d = Number(den)
  const p = Math.abs(minor * n)
  if (d > 0 && p + d < 2 ** 52 && Number.isSafeInteger(n)) {
    // floor((2p + d) / 2d), with the float quotient corrected to the exact integer one.
    const a = 2 * p + d
    const b = 2 * d
    let q = Math.floor(a / b)
    if (q * b > a) q--
    else if ((q + 1) * b <= a) q++
    return (minor < 0) !== (n < 0) && q !== 0 ? -q : q
  }
  return toSafe(divHalfUp(BigInt(minor) * num, den), what)
}

/** minor x factor (a multiplier, a localization factor), rounded half up to the minor unit, exactly. */
export function scaleMinor(minor: number, factor: number): number {
  const [n, d] = toRational(factor)
  return mulDivHalfUp(minor, n, d)
}

/** Round half away from zero to an integer (the cash convention); for exact work see mulDivHalfUp. */
export function roundHalfUp(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x))
}

/**
 * A decimal amount in a currency to integer minor units, refusing amounts with more
 * decimals than the currency has (9.999 USD is an input error, not a rounding). Exact: the
 * digits as written are used, not the nearest double times a power of ten.
 */
export function toMinor(amount: number, currency: string, field = 'amount'): number {
  if (!Number.isFinite(amount)) throw new InvalidInputError(`${field}: ${amount} is out of range (expected a finite amount)`)
  const d = minorDigits(currency)
  if (decimalPlaces(amount) > d) {
    throw new InvalidInputError(`${field}: ${amount} has more decimals than ${currency} allows (${d})`)
  }
  const [n, den] = toRational(amount)
  const minor = (n * 10n ** BigInt(d)) / den
  if (minor > BigInt(MAX_MINOR) || minor < -BigInt(MAX_MINOR)) {
    throw new InvalidInputError(`${field}: ${amount} ${currency} is out of range (at most ${minorToDecimalString(MAX_MINOR, d)})`)
  }
  return Number(minor)
}

/** Integer minor units back to the decimal number the spec's JSON carries. */
export function fromMinor(minor: number, currency: string): number {
  const d = minorDigits(currency)
  return d === 0 ? minor : minor / 10 ** d
}

/** Integer minor units as an exact decimal string in `digits` places ("999", 2 -> "9.99"). */
export function minorToDecimalString(minor: number, digits: number): string {
  const sign = minor < 0 ? '-' : ''
  const abs = String(Math.abs(minor))
  if (digits === 0) return sign + abs
  const padded = abs.padStart(digits + 1, '0')
  return `${sign}${padded.slice(0, -digits)}.${padded.slice(-digits)}`
}

/**
 * Convert minor units between currencies with rates expressed as units per 1 USD, rounded
 * half up to the target's minor unit. Exact on the rates' decimal forms: a float result is
 * used only when it is provably on the same side of every rounding boundary.
 */
export function convertMinor(minor: number, from: string, fromRate: number, to: string, toRate: number): number {
  if (from === to) return minor
  const shift = minorDigits(to) - minorDigits(from)
  const x = minor * (toRate / fromRate) * 10 ** shift
  const ax = Math.abs(x)
  // The float product is within a few ulps of the exact value: when the fraction is far
  // from .5 (and the magnitude small), rounding it gives the exact answer.
  if (ax < 2 ** 40 && Math.abs((ax % 1) - 0.5) > ax * 4e-15 + 1e-9) return roundHalfUp(x)
  const [tn, td] = toRational(toRate)
  const [fn, fd] = toRational(fromRate)
  let num = tn * fd
  let den = td * fn
  if (shift > 0) num *= 10n ** BigInt(shift)
  else if (shift < 0) den *= 10n ** BigInt(-shift)
  return mulDivHalfUp(minor, num, den, `${minorToDecimalString(minor, minorDigits(from))} ${from} in ${to}`)
}

export function assertCurrency(code: string, field = 'currency'): string {
  if (!isCurrency(code)) throw new InvalidInputError(`${field}: unknown currency "${code}" (expected an ISO 4217 code such as USD)`)
  return code
}

export function assertCountry(code: string, field = 'country'): string {
  if (!isCountry(code)) throw new InvalidInputError(`${field}: unknown country "${code}" (expected a two-letter ISO 3166 code such as US)`)
  return code
}
