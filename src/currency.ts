import countryToCurrency from 'country-to-currency'

import {InvalidInputError} from './errors.js'

/**
 * Currencies and countries. Minor units come from ICU (the same data Intl formats
 * with), so a price is always stored as an integer count of the currency's smallest unit.
 */

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
const COUNTRY_CURRENCY = countryToCurrency as Record<string, string>
const digitsCache = new Map<string, number>()

export function isCurrency(code: string): boolean {
  return CURRENCIES.has(code)
}

export function isCountry(code: string): boolean {
  return Object.hasOwn(COUNTRY_CURRENCY, code)
}

/** Currency normally used in a country (ISO 3166 alpha-2), or undefined. */
export function countryCurrency(country: string): string | undefined {
  const c = COUNTRY_CURRENCY[country]
  return c && isCurrency(c) ? c : undefined
}

/** Number of minor digits of a currency: USD 2, JPY 0, KWD 3. */
export function minorDigits(currency: string): number {
  let d = digitsCache.get(currency)
  if (d === undefined) {
    d = new Intl.NumberFormat('en', {currency, style: 'currency'}).resolvedOptions().maximumFractionDigits ?? 2
    digitsCache.set(currency, d)
  }
  return d
}

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

/**
 * A decimal amount in a currency to integer minor units, refusing amounts with more
 * decimals than the currency has (9.999 USD is an input error, not a rounding).
 */
export function toMinor(amount: number, currency: string, field = 'amount'): number {
  if (!Number.isFinite(amount)) throw new InvalidInputError(`${field}: ${amount} is not a finite number`)
  const d = minorDigits(currency)
  if (decimalPlaces(amount) > d) {
    throw new InvalidInputError(`${field}: ${amount} has more decimals than ${currency} allows (${d})`)
  }
  const minor = Math.round(amount * 10 ** d)
  if (!Number.isSafeInteger(minor)) throw new InvalidInputError(`${field}: ${amount} is too large`)
  return minor
}

/** Integer minor units back to the decimal number the spec's JSON carries. */
export function fromMinor(minor: number, currency: string): number {
  const d = minorDigits(currency)
  return d === 0 ? minor : minor / 10 ** d
}

/** Round half away from zero to an integer (the cash convention for money). */
export function roundHalfUp(x: number): number {
  // Nudge by a relative epsilon so 1.005 * 100 (= 100.49999...) rounds as the decimal would.
  const nudged = x + Math.sign(x) * Math.abs(x) * 1e-12
  return Math.sign(nudged) * Math.round(Math.abs(nudged))
}

/**
 * Convert minor units between currencies with rates expressed as units per 1 USD.
 * Result is rounded to the target currency's minor unit.
 */
export function convertMinor(minor: number, from: string, fromRate: number, to: string, toRate: number): number {
  if (from === to) return minor
  const value = (minor / 10 ** minorDigits(from)) * (toRate / fromRate)
  return roundHalfUp(value * 10 ** minorDigits(to))
}

export function assertCurrency(code: string, field = 'currency'): string {
  if (!isCurrency(code)) throw new InvalidInputError(`${field}: unknown currency "${code}" (expected an ISO 4217 code such as USD)`)
  return code
}

export function assertCountry(code: string, field = 'country'): string {
  if (!isCountry(code)) throw new InvalidInputError(`${field}: unknown country "${code}" (expected a two-letter ISO 3166 code such as US)`)
  return code
}
