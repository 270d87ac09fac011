import {minorDigits} from '../currency.js'

/**
 * Per-gateway currency tables, shipped as data (docs/money.md, "Gateway tables"): how
 * each gateway wants an amount in a currency. Gateways disagree with ISO 4217 and with
 * each other (Stripe reads ISK with two decimals that must be 00, PayPal refuses HUF
 * decimals), so each table states its own rules and where they come from.
 * `gateways set GATEWAY --currency CODE ...` stores an override of any entry.
 */

export type GatewayId = 'gateway_a' | 'gateway_b' | 'gateway_c' | 'gateway_d'

/** How a gateway takes amounts in one currency. Amounts are in the gateway's units (10^-exponent). */
export type GatewayRule = {
  /** Amounts must be whole multiples of this many gateway units (Stripe ISK: 100, KWD: 10). */
  divisible_by: number
  /** Decimal places of the gateway's amounts (Stripe JPY 0, ISK 2, KWD 3). */
  exponent: number
  /** Largest amount it charges, in its units; null when it publishes none. */
  max_amount: null | number
  /** Smallest amount it charges, in its units; null when it publishes none. */
  min_amount: null | number
}

type Entry = Partial<GatewayRule> & {note?: string}

export type GatewayTable = {
  /** Every currency not listed: `exponent: 'iso'` is the ISO 4217 exponent. */
  default: Omit<GatewayRule, 'exponent'> & {exponent: 'iso' | number}
  entries: Readonly<Record<string, Entry>>
  gateway: GatewayId
  /** The real gateway whose published rules the table follows. */
  models: string
  /** Where the rules come from (also in docs/money.md). */
  sources: readonly string[]
}

const zero = (codes: string[], extra: Entry = {}): Record<string, Entry> => Object.fromEntries(codes.map((c) => [c, {exponent: 0, ...extra}]))

/** Stripe's minimum charge amounts, in its units (docs.stripe.com/currencies, "Minimum and maximum charge amounts"). */
const STRIPE_MINIMUMS: Record<string, number> = {
  AED: 200, AUD: 50, BGN: 100, BRL: 50, CAD: 50, CHF: 50, CZK: 1500, DKK: 250, EUR: 50, GBP: 30, HKD: 400, HUF: 17_500,
  INR: 50, JPY: 50, MXN: 1000, MYR: 200, NOK: 300, NZD: 50, PLN: 200, RON: 200, SEK: 300, SGD: 50, THB: 1000, USD: 50,
}

function withMinimums(entries: Record<string, Entry>, minimums: Record<string, number>): Record<string, Entry> {
  const out: Record<string, Entry> = {...entries}
  for (const [c, min] of Object.entries(minimums)) out[c] = {...out[c], min_amount: min}
  return out
}

export const GATEWAY_TABLES: Readonly<Record<GatewayId, GatewayTable>> = {
  gateway_a: {
    default: {divisible_by: 1, exponent: 2, max_amount: 99_999_999, min_amount: null},
    entries: withMinimums(
      {
        ...zero(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'], {note: 'zero-decimal currency'}),
        ...Object.fromEntries(['BHD', 'JOD', 'KWD', 'OMR', 'TND'].map((c) => [c, {divisible_by: 10, exponent: 3, note: 'three-decimal currency: the last digit must be 0'}])),
        HUF: {exponent: 2, note: 'two decimals in charges (payouts are whole forints)'},
        IDR: {max_amount: 999_999_999_999, note: 'two decimals; up to twelve digits'},
        ISK: {divisible_by: 100, exponent: 2, note: 'two decimals that must be 00 (whole krónur since 2023-04-14)'},
        TWD: {exponent: 2, note: 'two decimals in charges (payouts are whole dollars)'},
      },
      STRIPE_MINIMUMS,
    ),
    gateway: 'gateway_a',
    models: 'Stripe',
    sources: [
      'https://docs.stripe.com/currencies (zero-decimal, three-decimal and special-case currencies; minimum and maximum charge amounts)',
      'https://support.stripe.com/questions/deprecation-of-fractional-isk-charges-and-refunds',
    ],
  },
  gateway_b: {
    default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null},
    entries: zero(['HUF', 'JPY', 'TWD'], {note: 'no decimals: a decimal amount is an error'}),
    gateway: 'gateway_b',
    models: 'PayPal',
    sources: ['https://developer.paypal.com/api/rest/reference/currency-codes/ (HUF, JPY and TWD do not support decimals)'],
  },
  gateway_c: {
    default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null},
    entries: {},
    gateway: 'gateway_c',
    models: 'Chargebee',
    sources: ['https://apidocs.chargebee.com/docs/api (amounts in the currency\'s ISO 4217 minor unit)'],
  },
  gateway_d: {
    default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null},
    entries: {},
    gateway: 'gateway_d',
    models: 'Paddle',
    sources: ['https://developer.paddle.com/concepts/sell/supported-currencies (amounts in the lowest denomination of the currency)'],
  },
}

export type RuleSource = 'default' | 'store' | 'table'

export type ResolvedRule = GatewayRule & {note?: string; source: RuleSource; source_text: string}

/** A stored override of one entry (`gateways set --currency`), fields left null keep the table's. */
export type RuleOverride = Partial<GatewayRule> & {currency: string; gateway: GatewayId}

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
  if (override) {
    const rule = {
      divisible_by: override.divisible_by ?? base.divisible_by,
      exponent: override.exponent ?? base.exponent,
      max_amount: override.max_amount === undefined ? base.max_amount : override.max_amount,
      min_amount: override.min_amount === undefined ? base.min_amount : override.min_amount,
    }
    return {...rule, source: 'store', source_text: `override stored with "pricectl gateways set ${gateway} --currency ${currency}" (over the ${from})`}
  }
  return {...base, note: entry?.note, source: entry ? 'table' : 'default', source_text: from}
}
