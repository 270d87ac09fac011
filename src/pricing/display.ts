import {displayDigits, minorDigits, minorToDecimalString as decimalText} from '../currency.js'

/**
 * Localized display of prices (DESIGN "The price calculation", step 9). Pure; formatters
 * are cached because building an Intl.NumberFormat costs far more than using one.
 */

/**
 * Where ICU's likely language is not what shops in that country use. India: ICU says
 * hi-IN; storefronts use en-IN, and with Latin digits both print the same numbers.
 */
const LOCALE_OVERRIDES: Readonly<Record<string, string>> = {IN: 'en-IN'}

const localeCache = new Map<string, string>()

/**
 * The country's likely locale as language-region (DE -> de-DE, JP -> ja-JP, BR -> pt-BR,
 * IN -> en-IN), from ICU's likely subtags. When ICU has no number data for that language
 * (a few small territories) English of the region is used, then plain "en".
 */
export function localeForCountry(country: string): string {
  let tag = localeCache.get(country)
  if (tag) return tag
  tag = LOCALE_OVERRIDES[country]
  if (!tag) {
    try {
      const l = new Intl.Locale('und-' + country).maximize()
      tag = `${l.language}-${l.region ?? country}`
    } catch {
      tag = 'en'
    }
    if (Intl.NumberFormat.supportedLocalesOf(tag).length === 0) {
      const english = `en-${country}`
      tag = safeSupported(english) ? english : 'en'
    }
  }
  localeCache.set(country, tag)
  return tag
}

function safeSupported(tag: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf(tag).length > 0
  } catch {
    return false
  }
}

const formatters = new Map<string, Intl.NumberFormat>()

/** Currency formatter in a locale, Latin digits, with exactly `digits` minor digits. */
export function moneyFormatter(currency: string, locale: string, digits: number): Intl.NumberFormat {
  const key = `${locale}|${currency}|${digits}`
  let f = formatters.get(key)
  if (!f) {
    f = new Intl.NumberFormat(`${locale}-u-nu-latn`, {currency, maximumFractionDigits: digits, minimumFractionDigits: digits, style: 'currency'})
    formatters.set(key, f)
  }
  return f
}

/** Integer minor units as an exact decimal string ("999" USD -> "9.99"): no float on the way to Intl. */
export function minorToDecimalString(minor: number, currency: string): string {
  return decimalText(minor, minorDigits(currency))
}

/**
 * Minor digits to show: none for a whole amount (9.00 EUR -> "9 €"), else the display
 * exponent (CLDR), or more when the amount has more (HUF 6500.50 shows its fillér): the
 * text never rounds what is charged.
 */
function shownDigits(minor: number, currency: string): number {
  const digits = minorDigits(currency)
  let needed = digits
  let m = Math.abs(minor)
  while (needed > 0 && m % 10 === 0) {
    m /= 10
    needed--
  }
  return needed === 0 ? 0 : Math.max(needed, displayDigits(currency))
}

/**
 * A price in a locale: whole amounts show no minor digits (9.00 EUR in de-DE -> "9 €"),
 * others the currency's display digits ("9,90 €"). Exact for any safe integer.
 */
export function formatMoneyInLocale(minor: number, currency: string, locale: string): string {
  return moneyFormatter(currency, locale, shownDigits(minor, currency)).format(minorToDecimalString(minor, currency) as Intl.StringNumericLiteral)
}

/** A price as shown to a buyer in a country (its likely locale). */
export function formatMoney(minor: number, currency: string, country: string): string {
  return formatMoneyInLocale(minor, currency, localeForCountry(country))
}

/** currencySymbol's answers by country and currency (a country's locale does not change). */
const symbols = new Map<string, Map<string, string>>()

/** The currency part of what formatMoney prints in that country ("€", "R$", "￥", "KWD"). */
export function currencySymbol(currency: string, country: string): string {
  // By country, then currency: a batch asks once per request, and a key string made per
  // call was a new text to hash each time (docs/performance.md "Batch pricing").
  let byCurrency = symbols.get(country)
  let s = byCurrency?.get(currency)
  if (s !== undefined) return s
  s = moneyFormatter(currency, localeForCountry(country), 0)
    .formatToParts(1)
    .filter((p) => p.type === 'currency')
    .map((p) => p.value)
    .join('')
  if (byCurrency === undefined) symbols.set(country, (byCurrency = new Map()))
  byCurrency.set(currency, s)
  return s
}

/**
 * Struck-through text: U+0336 after each character. Invisible format characters (the
 * bidi marks some locales put around prices) get none: there is nothing to strike.
 */
export function strike(text: string): string {
  let out = ''
  for (const ch of text) out += isFormatChar(ch) ? ch : ch + '\u0336'
  return out
}

const FORMAT_CHAR = /\p{Cf}/u
/**
 * Whether a character is a format character (\p{Cf}), remembered per character: V8 drops a
 * regex's compiled code at a GC, and compiling \p{Cf} again costs 0.1-2 ms, a strike per
 * price between GCs (experiments-bounds.test.ts's property: strike was 30% of its pricing).
 * Prices use few characters; at most 4,096 are kept.
 */
const formatChars = new Map<string, boolean>()
function isFormatChar(ch: string): boolean {
  let f = formatChars.get(ch)
  if (f === undefined) {
    f = FORMAT_CHAR.test(ch)
    // Stryker disable next-line all: the cap bounds memory only; no answer depends on it.
    if (formatChars.size < 4096) formatChars.set(ch, f)
  }
  return f
}

/** The baseline struck out, a space, then the price; just the price when there is no baseline. */
export function priceWithBaselineStrike(baselineText: string | null | undefined, priceText: string): string {
  return baselineText ? `${strike(baselineText)} ${priceText}` : priceText
}

/** Integer division rounded half away from zero, exact (BigInt). */
function divHalfUp(num: bigint, den: bigint): bigint {
  const neg = num < 0n !== den < 0n
  const n = num < 0n ? -num : num
  const d = den < 0n ? -den : den
  const q = (2n * n + d) / (2n * d)
  return neg ? -q : q
}

/**
 * (1 - price/baseline) x 100, rounded half-up to 2 decimals. 0 without a baseline
 * (none, or 0) and when equal; negative when the price is above the baseline.
 */
export function discountToBaseline(priceMinor: number, baselineMinor: number | null | undefined): number {
  if (!baselineMinor || baselineMinor === priceMinor) return 0
  // Hundredths of a percent: (baseline - price) * 10000 / baseline.
  const hundredths = divHalfUp(BigInt(baselineMinor - priceMinor) * 10_000n, BigInt(baselineMinor))
  return Number(hundredths) / 100
}

export type Interval = 'day' | 'month' | 'one_time' | 'week' | 'year'

/** Months per interval as a fraction [numerator, denominator]: a week is 12/52 of a month. */
const PER_MONTH: Readonly<Record<string, readonly [bigint, bigint]>> = {day: [365n, 12n], month: [1n, 1n], week: [52n, 12n], year: [1n, 12n]}

/**
 * The price per month of a recurring product (year / 12, week x 52/12, day x 365/12,
 * divided by interval_count); the whole price for one-time products. Rounded half-up to
 * the minor unit, in integer arithmetic.
 */
export function referenceIntervalMinor(priceMinor: number, interval: Interval | string, intervalCount = 1): number {
  if (interval === 'one_time') return priceMinor
  const factor = PER_MONTH[interval]
  if (!factor) throw new RangeError(`unknown interval ${JSON.stringify(interval)} (expected day, week, month, year or one_time)`)
  if (!Number.isSafeInteger(intervalCount) || intervalCount < 1) throw new RangeError(`interval_count must be a whole number >= 1, got ${intervalCount}`)
  const [num, den] = factor
  return Number(divHalfUp(BigInt(priceMinor) * num, den * BigInt(intervalCount)))
}
