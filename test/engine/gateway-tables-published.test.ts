import {describe, expect, it} from 'vitest'

import {GATEWAY_TABLES, gatewayRule, type GatewayId} from '../../src/money/gateway-tables.js'
import {acceptsCurrency, DEFAULT_GATEWAY_SETTINGS} from '../../src/pricing/gateways.js'
import {GATEWAYS} from '../../src/schemas/common.js'

/**
 * Every entry of every gateway's table pinned against the gateway's published lists, written
 * out here as the sources publish them (docs/money.md, "Gateway tables"), never derived from
 * src/money/gateway-tables.ts: dropping, adding or changing one currency of a list, one
 * minimum or one exponent fails a row of its own.
 */

// ---------------------------------------------------------------------------------------
// gateway_a: Stripe (docs.stripe.com/currencies)

/** "Supported presentment currencies", the three-decimal ones included. */
const STRIPE_PRESENTMENT = `
  AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BWP BYN BZD CAD CDF CHF CLP CNY
  COP CRC CVE CZK DJF DKK DOP DZD EGP ETB EUR FJD FKP GBP GEL GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR ISK JMD
  JOD JPY KES KGS KHR KMF KRW KWD KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MUR MVR MWK MXN MYR MZN NAD
  NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SEK SGD SHP SLE SOS SRD STD SZL
  THB TJS TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VND VUV WST XAF XCD XOF XPF YER ZAR ZMW`

/** "Zero-decimal currencies" (UGX is listed there too, but is a special case: below). */
const STRIPE_ZERO_DECIMAL = 'BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF VND VUV XAF XOF XPF'

/** "Three-decimal currencies": the last digit must be 0. */
const STRIPE_THREE_DECIMAL = 'BHD JOD KWD OMR TND'

/** "Special cases": two decimals that must be 00 (ISK, UGX); two-decimal charges (HUF, TWD). */
const STRIPE_DIVISIBLE_BY_100 = 'ISK UGX'
const STRIPE_TWO_DECIMAL_CHARGES = 'HUF TWD'

/** "Minimum and maximum charge amounts", in Stripe's units (USD $0.50 is 50, JPY ¥50 is 50). */
const STRIPE_MINIMUMS: Record<string, number> = {
  AED: 200, AUD: 50, BGN: 100, BRL: 50, CAD: 50, CHF: 50, CZK: 1500, DKK: 250, EUR: 50, GBP: 30, HKD: 400, HUF: 17_500,
  INR: 50, JPY: 50, MXN: 1000, MYR: 200, NOK: 300, NZD: 50, PLN: 200, RON: 200, SEK: 300, SGD: 50, THB: 1000, USD: 50,
}

/** "up to twelve digits for IDR ... and up to eight digits for all other currencies". */
const STRIPE_MAX_IDR = 999_999_999_999
const STRIPE_MAX = 99_999_999

// ---------------------------------------------------------------------------------------
// gateway_b: PayPal (developer.paypal.com/api/rest/reference/currency-codes/)

const PAYPAL_CURRENCIES = 'AUD BRL CAD CHF CNY CZK DKK EUR GBP HKD HUF ILS JPY MXN MYR NOK NZD PHP PLN RUB SEK SGD THB TWD USD'
/** "This currency does not support decimals. If you pass a decimal amount, an error occurs." */
const PAYPAL_NO_DECIMALS = 'HUF JPY TWD'

// ---------------------------------------------------------------------------------------
// gateway_c: Chargebee (apidocs.chargebee.com/docs/api/currencies): no published list.

/** ISO has three decimals, Chargebee takes at most two (without multi-decimal pricing). */
const CHARGEBEE_TWO_DECIMALS = 'BHD IQD JOD KWD LYD OMR TND'

// ---------------------------------------------------------------------------------------
// gateway_d: Paddle (developer.paddle.com/concepts/sell/supported-currencies)

const PADDLE_CURRENCIES = 'ARS AUD BRL CAD CHF CNY COP CZK DKK EUR GBP HKD HUF ILS INR JPY KRW MXN NOK NZD PLN RUB SEK SGD THB TRY TWD UAH USD ZAR'
/** decimal_places 0 in Paddle's currencies; every other listed currency has 2. */
const PADDLE_ZERO_DECIMAL = 'JPY KRW'

// ---------------------------------------------------------------------------------------

const codes = (text: string): string[] => text.trim().split(/\s+/)
const sorted = (list: readonly string[]): string[] => [...list].sort()

type Row = [gateway: GatewayId, currency: string, exponent: number, divisible_by: number, min: null | number, max: null | number, source: 'default' | 'table']

/** The rule every currency on a gateway's published list must resolve to, from the published lists above. */
function stripeRow(c: string): Row {
  const zero = codes(STRIPE_ZERO_DECIMAL).includes(c)
  const three = codes(STRIPE_THREE_DECIMAL).includes(c)
  const special = [...codes(STRIPE_DIVISIBLE_BY_100), ...codes(STRIPE_TWO_DECIMAL_CHARGES), 'IDR'].includes(c)
  const min = STRIPE_MINIMUMS[c] ?? null
  const inTable = zero || three || special || min !== null
  return [
    'gateway_a',
    c,
    zero ? 0 : three ? 3 : 2,
    three ? 10 : codes(STRIPE_DIVISIBLE_BY_100).includes(c) ? 100 : 1,
    min,
    c === 'IDR' ? STRIPE_MAX_IDR : STRIPE_MAX,
    inTable ? 'table' : 'default',
  ]
}

const paypalRow = (c: string): Row => {
  const none = codes(PAYPAL_NO_DECIMALS).includes(c)
  return ['gateway_b', c, none ? 0 : 2, 1, null, null, none ? 'table' : 'default']
}

const paddleRow = (c: string): Row => ['gateway_d', c, codes(PADDLE_ZERO_DECIMAL).includes(c) ? 0 : 2, 1, null, null, 'default']

describe('each gateway\'s published currency list, entry by entry', () => {
  it.each([
    ['gateway_a', codes(STRIPE_PRESENTMENT)],
    ['gateway_b', codes(PAYPAL_CURRENCIES)],
    ['gateway_c', null],
    ['gateway_d', codes(PADDLE_CURRENCIES)],
  ] as const)('%s lists exactly the published currencies', (gateway, published) => {
    const listed = GATEWAY_TABLES[gateway].currencies
    if (published === null) {
      expect(listed).toBeUndefined()
      return
    }
    expect(new Set(listed).size).toBe(listed?.length)
    expect(sorted(listed ?? [])).toEqual(sorted(published))
  })

  it('the published lists above are what they say (no code twice, sorted, three letters)', () => {
    for (const list of [STRIPE_PRESENTMENT, PAYPAL_CURRENCIES, PADDLE_CURRENCIES]) {
      expect(codes(list)).toEqual([...new Set(codes(list))].sort())
      for (const c of codes(list)) expect(c).toMatch(/^[A-Z]{3}$/)
    }
    expect(codes(STRIPE_PRESENTMENT)).toHaveLength(139)
    expect(codes(PAYPAL_CURRENCIES)).toHaveLength(25)
    expect(codes(PADDLE_CURRENCIES)).toHaveLength(30)
  })

  it.each(codes(STRIPE_PRESENTMENT).map((c) => ['gateway_a', c] as const))('%s is sent %s by default', (gateway, currency) => {
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS[gateway], currency)).toBe(true)
  })

  it.each(codes(PAYPAL_CURRENCIES).map((c) => ['gateway_b', c] as const))('%s is sent %s by default', (gateway, currency) => {
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS[gateway], currency)).toBe(true)
  })

  it.each(codes(PADDLE_CURRENCIES).map((c) => ['gateway_d', c] as const))('%s is sent %s by default', (gateway, currency) => {
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS[gateway], currency)).toBe(true)
  })

  it('a currency off a published list goes in the fallback; gateway_c, with no list, takes any', () => {
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS.gateway_a, 'IQD')).toBe(false)
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS.gateway_b, 'INR')).toBe(false)
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS.gateway_c, 'IQD')).toBe(true)
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS.gateway_d, 'KWD')).toBe(false)
  })
})

describe('each gateway\'s table entries, against the published rules', () => {
  it.each([
    ['gateway_a', [...codes(STRIPE_ZERO_DECIMAL), ...codes(STRIPE_THREE_DECIMAL), ...codes(STRIPE_DIVISIBLE_BY_100), ...codes(STRIPE_TWO_DECIMAL_CHARGES), 'IDR', ...Object.keys(STRIPE_MINIMUMS)]],
    ['gateway_b', codes(PAYPAL_NO_DECIMALS)],
    ['gateway_c', codes(CHARGEBEE_TWO_DECIMALS)],
    ['gateway_d', []],
  ] as const)('%s has an entry for exactly the currencies its rules name', (gateway, named) => {
    expect(sorted(Object.keys(GATEWAY_TABLES[gateway].entries))).toEqual(sorted([...new Set(named)]))
  })

  const rows: Row[] = [
    ...codes(STRIPE_PRESENTMENT).map((c) => stripeRow(c)),
    ...codes(PAYPAL_CURRENCIES).map((c) => paypalRow(c)),
    // PayPal's default is the ISO exponent: three decimals for a currency like KWD or TND.
    ['gateway_b', 'KWD', 3, 1, null, null, 'default'],
    ['gateway_b', 'TND', 3, 1, null, null, 'default'],
    ['gateway_b', 'CLP', 0, 1, null, null, 'default'],
    ...codes(CHARGEBEE_TWO_DECIMALS).map((c): Row => ['gateway_c', c, 2, 1, null, null, 'table']),
    // Chargebee's default: zero-decimal currencies in the major unit, others "in cents".
    ...codes('BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF').map((c): Row => ['gateway_c', c, 0, 1, null, null, 'default']),
    ...codes('EUR HUF IDR TWD USD').map((c): Row => ['gateway_c', c, 2, 1, null, null, 'default']),
    ...codes(PADDLE_CURRENCIES).map((c) => paddleRow(c)),
    // Stripe's default for a currency off its list: two decimals, eight digits.
    ['gateway_a', 'IQD', 2, 1, null, STRIPE_MAX, 'default'],
  ]

  it.each(rows)('%s %s: exponent %i, divisible by %i, min %s, max %s (%s)', (gateway, currency, exponent, divisible_by, min_amount, max_amount, source) => {
    expect(gatewayRule(gateway, currency)).toMatchObject({divisible_by, exponent, max_amount, min_amount, source})
  })

  it('every table entry says why it is there', () => {
    for (const g of GATEWAYS) {
      for (const [c, entry] of Object.entries(GATEWAY_TABLES[g].entries)) {
        // Stripe's minimum-only entries carry no note; every other entry cites its rule.
        if (g === 'gateway_a' && Object.keys(entry).join() === 'min_amount') continue
        expect(entry.note, `${g} ${c}`).toMatch(/\w/)
      }
    }
    for (const c of codes(STRIPE_ZERO_DECIMAL)) expect(gatewayRule('gateway_a', c).note).toBe('zero-decimal currency')
    for (const c of codes(STRIPE_THREE_DECIMAL)) expect(gatewayRule('gateway_a', c).note).toMatch(/^three-decimal currency/)
  })
})
