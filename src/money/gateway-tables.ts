import {minorDigits} from '../currency.js'
import type {GATEWAYS} from '../schemas/common.js'
import type {Expect, GatewayId, GatewayRule, RuleOverride, SameType} from '../domain.js'

/**
 * Per-gateway currency tables, shipped as data (docs/money.md, "Gateway tables"): how
 * each gateway wants an amount in a currency. Gateways disagree with ISO 4217 and with
 * each other (Stripe reads ISK with two decimals that must be 00, PayPal refuses HUF
 * decimals), so each table states its own rules and where they come from.
 * `gateways set GATEWAY --currency CODE ...` stores an override of any entry.
 */

export type {GatewayId, GatewayRule}
type _GatewaysChecked = Expect<SameType<(typeof GATEWAYS)[number], GatewayId>>

type Entry = Partial<GatewayRule> & {note?: string}

export type GatewayTable = {
  /**
   * The amounts the real gateway's API takes, the default of `gateways set --amount-format`:
   * `minor`, an integer in its units (10^-exponent: Stripe, Chargebee, Paddle); `decimal`,
   * the decimal number (PayPal).
   */
  amount_format: 'decimal' | 'minor'
  /**
   * The model's published list of the currencies it charges in, when it publishes one.
   * Informational only: `gateways show` says whether a currency is on it; pricing never
   * reads it (which currencies a gateway is sent is `gateways set --accept`).
   */
  currencies?: readonly string[]
  /** Every currency not listed: `exponent: 'iso'` is the ISO 4217 exponent. */
  default: Omit<GatewayRule, 'exponent'> & {exponent: 'iso' | number}
  entries: Readonly<Record<string, Entry>>
  gateway: GatewayId
  /** The real gateway whose published rules the table follows. */
  models: string
  /** Where the rules come from, "URL (what it says)" (also in docs/money.md). */
  sources: readonly string[]
}

const zero = (codes: string[], extra: Entry = {}): Record<string, Entry> => Object.fromEntries(codes.map((c) => [c, {exponent: 0, ...extra}]))

/**
 * Stripe's minimum charge amounts, in its units (docs.stripe.com/currencies, "Minimum and
 * maximum charge amounts"). Stripe states them per settlement currency; the table applies
 * each to charges in that currency, which is exact for a charge settled in its own currency.
 */
const STRIPE_MINIMUMS: Record<string, number> = {
  AED: 200, AUD: 50, BGN: 100, BRL: 50, CAD: 50, CHF: 50, CZK: 1500, DKK: 250, EUR: 50, GBP: 30, HKD: 400, HUF: 17_500,
  INR: 50, JPY: 50, MXN: 1000, MYR: 200, NOK: 300, NZD: 50, PLN: 200, RON: 200, SEK: 300, SGD: 50, THB: 1000, USD: 50,
}

/** Stripe's presentment currencies (docs.stripe.com/currencies, "Supported presentment currencies"). */
const STRIPE_CURRENCIES = [
  'USD', 'AED', 'AFN', 'ALL', 'AMD', 'ANG', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BIF', 'BMD', 'BND', 'BOB', 'BRL',
  'BSD', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHF', 'CLP', 'CNY', 'COP', 'CRC', 'CVE', 'CZK', 'DJF', 'DKK', 'DOP', 'DZD', 'EGP', 'ETB', 'EUR',
  'FJD', 'FKP', 'GBP', 'GEL', 'GIP', 'GMD', 'GNF', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'ISK', 'JMD', 'JPY', 'KES',
  'KGS', 'KHR', 'KMF', 'KRW', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MUR', 'MVR',
  'MWK', 'MXN', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG', 'QAR', 'RON', 'RSD',
  'RUB', 'RWF', 'SAR', 'SBD', 'SCR', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'STD', 'SZL', 'THB', 'TJS', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS',
  'UAH', 'UGX', 'UYU', 'UZS', 'VND', 'VUV', 'WST', 'XAF', 'XCD', 'XOF', 'XPF', 'YER', 'ZAR', 'ZMW',
  // Three-decimal currencies Stripe takes (same page, "Three-decimal currencies").
  'BHD', 'JOD', 'KWD', 'OMR', 'TND',
]

function withMinimums(entries: Record<string, Entry>, minimums: Record<string, number>): Record<string, Entry> {
  const out: Record<string, Entry> = {...entries}
  for (const [c, min] of Object.entries(minimums)) out[c] = {...out[c], min_amount: min}
  return out
}

export const GATEWAY_TABLES: Readonly<Record<GatewayId, GatewayTable>> = {
  gateway_a: {
    // "provide an amount value of 500" for 500 JPY, 1000 for USD 10.00: the smallest unit.
    amount_format: 'minor',
    currencies: STRIPE_CURRENCIES,
    // Two decimals unless listed; "up to eight digits for all other currencies" than IDR.
    default: {divisible_by: 1, exponent: 2, max_amount: 99_999_999, min_amount: null},
    entries: withMinimums(
      {
        // Stripe's zero-decimal list, less UGX (a special case, below).
        ...zero(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'], {note: 'zero-decimal currency'}),
        ...Object.fromEntries(['BHD', 'JOD', 'KWD', 'OMR', 'TND'].map((c) => [c, {divisible_by: 10, exponent: 3, note: 'three-decimal currency: the last digit must be 0 (5.124 KWD is sent as 5120 or 5130)'}])),
        HUF: {exponent: 2, note: 'two decimals in charges (payouts are whole forints)'},
        IDR: {max_amount: 999_999_999_999, note: 'two decimals; up to twelve digits (9,999,999,999.99 IDR)'},
        ISK: {divisible_by: 100, exponent: 2, note: 'two decimals that must be 00: whole krónur since 2023-04-14 (5 ISK is sent as 500)'},
        TWD: {exponent: 2, note: 'two decimals in charges (payouts are whole dollars)'},
        UGX: {divisible_by: 100, exponent: 2, note: 'two decimals that must be 00 (5 UGX is sent as 500), although Stripe also lists UGX as zero-decimal'},
      },
      STRIPE_MINIMUMS,
    ),
    gateway: 'gateway_a',
    models: 'Stripe',
    sources: [
      'https://docs.stripe.com/currencies#zero-decimal (BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF: the amount is the charge, "to charge 500 JPY, provide an amount value of 500")',
      'https://docs.stripe.com/currencies#three-decimal (BHD JOD KWD OMR TND: "the least-significant (last) digit to be 0 ... 5.124 KWD must be rounded to 5120 or 5130")',
      'https://docs.stripe.com/currencies#special-cases (ISK and UGX: "pass in amounts with two decimals ... evenly divisible by 100"; HUF and TWD: zero-decimal for payouts only, "you can charge two-decimal amounts")',
      'https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts (minimum charge per settlement currency, USD $0.50 ... THB ฿10; "up to twelve digits for IDR ... and up to eight digits for all other currencies")',
      'https://support.stripe.com/questions/deprecation-of-fractional-isk-charges-and-refunds (fractional ISK charges end on 2023-04-14)',
      'https://github.com/woocommerce/woocommerce-gateway-stripe/issues/2674 (Stripe refuses a UGX amount of 5: "Currency UGX has become effectively zero-decimal and charged amounts must be evenly divisible by 100")',
    ],
  },
  gateway_b: {
    // The Money object's value is a decimal string ("10.00", "1200" for JPY).
    amount_format: 'decimal',
    currencies: ['AUD', 'BRL', 'CAD', 'CNY', 'CZK', 'DKK', 'EUR', 'HKD', 'HUF', 'ILS', 'JPY', 'MYR', 'MXN', 'TWD', 'NZD', 'NOK', 'PHP', 'PLN', 'GBP', 'RUB', 'SGD', 'SEK', 'CHF', 'THB', 'USD'],
    // Decimal amounts with the currency's ISO digits ("an integer for currencies like JPY ... a decimal fraction for currencies like TND").
    default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null},
    entries: zero(['HUF', 'JPY', 'TWD'], {note: 'no decimals: a decimal amount is an error (DECIMALS_NOT_SUPPORTED)'}),
    gateway: 'gateway_b',
    models: 'PayPal',
    sources: [
      'https://developer.paypal.com/api/rest/reference/currency-codes/ (the currencies of the REST APIs; HUF, JPY and TWD: "This currency does not support decimals. If you pass a decimal amount, an error occurs."; BRL, CNY, MYR for in-country accounts only)',
      'https://developer.paypal.com/api/payments/v2/errors/decimals_not_supported (DECIMALS_NOT_SUPPORTED: "Currency does not support decimals.")',
      'https://developer.paypal.com/api/orders/v2/definitions/discount_with_breakdown (the Money object value: "An integer for currencies like JPY that are not typically fractional. A decimal fraction for currencies like TND that are subdivided into thousandths."; no per-currency minimum or maximum is published)',
    ],
  },
  gateway_c: {
    // Integers in the smallest unit: USD 10.00 is 1000, zero-decimal currencies unmultiplied (JPY 1200 is 1200).
    amount_format: 'minor',
    // Whole numbers "in cents"; two decimals at most for every currency that is not zero-decimal.
    default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null},
    entries: Object.fromEntries(
      ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((c) => [c, {exponent: 2, note: 'at most two decimals unless multi-decimal pricing is enabled (ISO has more)'}]),
    ),
    gateway: 'gateway_c',
    models: 'Chargebee',
    sources: [
      'https://apidocs.chargebee.com/docs/api/currencies (amounts are whole numbers "in cents": zero-decimal currencies such as JPY in the major unit, "for currencies that are not zero-decimal, Chargebee supports values up to two decimal places in the major unit", multiplied by 100; more decimals only with multi-decimal pricing and the *_in_decimal fields)',
      'https://www.chargebee.com/docs/2.0/supported-currencies.html (100+ billing currencies, zero-decimal ones marked with an asterisk)',
      'https://www.chargebee.com/docs/2.0/support-for-hvc.html (largest amount 90,071,992,547,409.91 on the Leap UI, 21,474,836.47 before; "check with your respective Payment Gateway for the exact currency value limitations")',
    ],
  },
  gateway_d: {
    // "a string in the lowest denomination for a currency" (USD 10.00 is "1000").
    amount_format: 'minor',
    currencies: ['USD', 'EUR', 'GBP', 'JPY', 'AUD', 'CAD', 'CHF', 'HKD', 'SGD', 'SEK', 'ARS', 'BRL', 'CNY', 'COP', 'CZK', 'DKK', 'HUF', 'ILS', 'INR', 'KRW', 'MXN', 'NOK', 'NZD', 'PLN', 'RUB', 'THB', 'TRY', 'TWD', 'UAH', 'ZAR'],
    // Strings in the lowest denomination of the currency, with its decimal_places.
    default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null},
    entries: {},
    gateway: 'gateway_d',
    models: 'Paddle',
    sources: [
      'https://developer.paddle.com/concepts/sell/supported-currencies ("Price items in over 30 different currencies")',
      'https://developer.paddle.com/api-reference/currencies ("Paddle handles money as a string in the lowest denomination for a currency"; each currency has decimal_places and minimum_payment_amount, the smallest amount Paddle can charge: copy one with "pricectl gateways set gateway_d --currency CODE --min AMOUNT")',
      'https://github.com/PaddleHQ/paddle-php-sdk/blob/main/src/Entities/Shared/CurrencyCode.php (the 30 currency codes of the Billing API)',
    ],
  },
}

export type RuleSource = 'default' | 'store' | 'table'

export type ResolvedRule = GatewayRule & {note?: string; source: RuleSource; source_text: string}

/** A stored override of one entry (`gateways set --currency`), fields left null keep the table's. */
export type {RuleOverride}

/** The rule a gateway applies to a currency: a stored override, else the table's entry, else its default. */
export function gatewayRule(gateway: GatewayId, currency: string, override?: RuleOverride): ResolvedRule {
  const table = GATEWAY_TABLES[gateway]
  const entry = table.entries[currency]
  const base: GatewayRule = {
    divisible_by: entry?.divisible_by ?? table.default.divisible_by,
    exponent: entry?.exponent ?? (table.default.exponent === 'iso' ? minorDigits(currency) : table.default.exponent),
    max_amount: entry?.max_amount === undefined ? table.default.max_amount : entry.max_amount,
    min_amount: entry?.min_amount === undefined ? table.default.min_amount : entry.min_amount,
  }
  const from = entry ? `${table.models} table entry for ${currency}` : `${table.models} table default`
  // Literals, not {...base, source}: on Node 20 a spread that adds keys costs ~20 µs, and a
  // price-impact snapshot resolves ~600 rules (4 gateways x every currency) per context.
  if (override) {
    return {
      divisible_by: override.divisible_by ?? base.divisible_by,
      exponent: override.exponent ?? base.exponent,
      max_amount: override.max_amount === undefined ? base.max_amount : override.max_amount,
      min_amount: override.min_amount === undefined ? base.min_amount : override.min_amount,
      source: 'store',
      source_text: `override stored with "pricectl gateways set ${gateway} --currency ${currency}" (over the ${from})`,
    }
  }
  return {divisible_by: base.divisible_by, exponent: base.exponent, max_amount: base.max_amount, min_amount: base.min_amount, note: entry?.note, source: entry ? 'table' : 'default', source_text: from}
}
