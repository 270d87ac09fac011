import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {displayDigits, isCurrency, minorDigits, minorToDecimalString} from '../../src/currency.js'
import {InvalidInputError} from '../../src/errors.js'
import {GATEWAY_TABLES, gatewayRule} from '../../src/money/gateway-tables.js'
import {formatMoney} from '../../src/pricing/display.js'
import {acceptsCurrency, DEFAULT_GATEWAY_SETTINGS, gatewayAmountMinor, gatewayPrice, type GatewaySettings} from '../../src/pricing/gateways.js'
import {GATEWAYS} from '../../src/schemas/common.js'

/**
 * Issue 29, items 1 and 4: every gateway's table pinned (what a gateway is sent, per
 * currency), and a property over every currency x gateway: a gateway object's amount is
 * exactly the price it shows, an integer wherever the gateway takes minor units.
 */

describe('the gateway tables (docs/money.md, "Gateway tables")', () => {
  it('each follows a real gateway, takes the amount format of its API, and lists its published currencies', () => {
    const summary = Object.fromEntries(
      GATEWAYS.map((g) => {
        const t = GATEWAY_TABLES[g]
        return [g, {amount_format: t.amount_format, currencies: t.currencies?.length ?? null, default: t.default, models: t.models}]
      }),
    )
    expect(summary).toEqual({
      gateway_a: {amount_format: 'minor', currencies: 139, default: {divisible_by: 1, exponent: 2, max_amount: 99_999_999, min_amount: null}, models: 'Stripe'},
      gateway_b: {amount_format: 'decimal', currencies: 25, default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null}, models: 'PayPal'},
      gateway_c: {amount_format: 'minor', currencies: null, default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null}, models: 'Chargebee'},
      gateway_d: {amount_format: 'minor', currencies: 30, default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null}, models: 'Paddle'},
    })
    // The default settings are what the real gateways take: their format, their lists, USD otherwise.
    for (const g of GATEWAYS) expect(DEFAULT_GATEWAY_SETTINGS[g]).toEqual({accepted_currencies: 'listed', amount_format: GATEWAY_TABLES[g].amount_format, fallback_currency: 'USD', gateway: g})
  })

  it.each([
    // [gateway, currency, accepted by default]
    ['gateway_a', 'KWD', true],
    ['gateway_a', 'ISK', true],
    ['gateway_a', 'VND', true],
    ['gateway_a', 'IQD', false],
    ['gateway_b', 'KWD', false],
    ['gateway_b', 'ISK', false],
    ['gateway_b', 'VND', false],
    ['gateway_b', 'INR', false],
    ['gateway_b', 'TWD', true],
    ['gateway_b', 'USD', true],
    ['gateway_c', 'KWD', true],
    ['gateway_c', 'IQD', true],
    ['gateway_d', 'KWD', false],
    ['gateway_d', 'INR', true],
    ['gateway_d', 'USD', true],
  ] as const)('%s is sent %s by default: %s', (gateway, currency, accepted) => {
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS[gateway], currency)).toBe(accepted)
    // Every fallback is accepted: a gateway never falls back to a currency it refuses.
    expect(acceptsCurrency(DEFAULT_GATEWAY_SETTINGS[gateway], DEFAULT_GATEWAY_SETTINGS[gateway].fallback_currency)).toBe(true)
  })

  it.each([
    // [gateway, currency, exponent, divisible_by, min_amount, max_amount (gateway units), source]
    ['gateway_a', 'AED', 2, 1, 200, 99_999_999, 'table'],
    ['gateway_a', 'AUD', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'BGN', 2, 1, 100, 99_999_999, 'table'],
    ['gateway_a', 'BHD', 3, 10, null, 99_999_999, 'table'],
    ['gateway_a', 'BIF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'BRL', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'CAD', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'CHF', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'CLP', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'COP', 2, 1, null, 99_999_999, 'default'],
    ['gateway_a', 'CZK', 2, 1, 1500, 99_999_999, 'table'],
    ['gateway_a', 'DJF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'DKK', 2, 1, 250, 99_999_999, 'table'],
    ['gateway_a', 'EUR', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'GBP', 2, 1, 30, 99_999_999, 'table'],
    ['gateway_a', 'GNF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'HKD', 2, 1, 400, 99_999_999, 'table'],
    ['gateway_a', 'HUF', 2, 1, 17_500, 99_999_999, 'table'],
    ['gateway_a', 'IDR', 2, 1, null, 999999_999_999, 'table'],
    ['gateway_a', 'INR', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'ISK', 2, 100, null, 99_999_999, 'table'],
    ['gateway_a', 'JOD', 3, 10, null, 99_999_999, 'table'],
    ['gateway_a', 'JPY', 0, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'KMF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'KRW', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'KWD', 3, 10, null, 99_999_999, 'table'],
    ['gateway_a', 'MGA', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'MXN', 2, 1, 1000, 99_999_999, 'table'],
    ['gateway_a', 'MYR', 2, 1, 200, 99_999_999, 'table'],
    ['gateway_a', 'NGN', 2, 1, null, 99_999_999, 'default'],
    ['gateway_a', 'NOK', 2, 1, 300, 99_999_999, 'table'],
    ['gateway_a', 'NZD', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'OMR', 3, 10, null, 99_999_999, 'table'],
    ['gateway_a', 'PLN', 2, 1, 200, 99_999_999, 'table'],
    ['gateway_a', 'PYG', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'RON', 2, 1, 200, 99_999_999, 'table'],
    ['gateway_a', 'RWF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'SEK', 2, 1, 300, 99_999_999, 'table'],
    ['gateway_a', 'SGD', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'THB', 2, 1, 1000, 99_999_999, 'table'],
    ['gateway_a', 'TND', 3, 10, null, 99_999_999, 'table'],
    ['gateway_a', 'TWD', 2, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'UGX', 2, 100, null, 99_999_999, 'table'],
    ['gateway_a', 'USD', 2, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'VND', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'VUV', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'XAF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'XOF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_a', 'XPF', 0, 1, null, 99_999_999, 'table'],
    ['gateway_b', 'EUR', 2, 1, null, null, 'default'],
    ['gateway_b', 'HUF', 0, 1, null, null, 'table'],
    ['gateway_b', 'JPY', 0, 1, null, null, 'table'],
    ['gateway_b', 'KWD', 3, 1, null, null, 'default'],
    ['gateway_b', 'TWD', 0, 1, null, null, 'table'],
    ['gateway_b', 'USD', 2, 1, null, null, 'default'],
    ['gateway_c', 'BHD', 2, 1, null, null, 'table'],
    ['gateway_c', 'HUF', 2, 1, null, null, 'default'],
    ['gateway_c', 'IQD', 2, 1, null, null, 'table'],
    ['gateway_c', 'ISK', 0, 1, null, null, 'default'],
    ['gateway_c', 'JOD', 2, 1, null, null, 'table'],
    ['gateway_c', 'JPY', 0, 1, null, null, 'default'],
    ['gateway_c', 'KWD', 2, 1, null, null, 'table'],
    ['gateway_c', 'LYD', 2, 1, null, null, 'table'],
    ['gateway_c', 'OMR', 2, 1, null, null, 'table'],
    ['gateway_c', 'TND', 2, 1, null, null, 'table'],
    ['gateway_c', 'USD', 2, 1, null, null, 'default'],
    ['gateway_d', 'HUF', 2, 1, null, null, 'default'],
    ['gateway_d', 'JPY', 0, 1, null, null, 'default'],
    ['gateway_d', 'KWD', 3, 1, null, null, 'default'],
    ['gateway_d', 'USD', 2, 1, null, null, 'default'],
  ] as const)('%s %s: exponent %i, divisible by %i, min %s, max %s', (gateway, currency, exponent, divisible, min, max, source) => {
    expect(gatewayRule(gateway, currency)).toMatchObject({divisible_by: divisible, exponent, max_amount: max, min_amount: min, source})
  })
})

/** Every ISO 4217 currency the runtime knows, and every currency a table names. */
const CURRENCIES = [...new Set([...Intl.supportedValuesOf('currency').filter((c) => isCurrency(c)), ...GATEWAYS.flatMap((g) => [...Object.keys(GATEWAY_TABLES[g].entries), ...(GATEWAY_TABLES[g].currencies ?? [])])])].sort()

/** An exact decimal string without trailing zeros ("3.100" and "3.1" are the same price). */
function plain(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text
}

/** Decimal places of a number's shortest text (9.99 -> 2). */
function places(n: number): number {
  const text = String(n)
  return text.includes('.') ? text.split('.')[1].length : 0
}

describe('every currency x gateway: the amount is exactly the price the object shows (property)', () => {
  const settingsOf = (gateway: (typeof GATEWAYS)[number], accept: 'all' | 'listed'): GatewaySettings => ({...DEFAULT_GATEWAY_SETTINGS[gateway], accepted_currencies: accept === 'all' ? '*' : 'listed'})

  it('amount / 10^exponent is the price formatted shows, an integer in minor units; adjusted_from marks a move', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CURRENCIES),
        fc.constantFrom(...GATEWAYS),
        fc.constantFrom('all' as const, 'listed' as const),
        fc.oneof(fc.integer({max: 10_000, min: 0}), fc.integer({max: 1e12, min: 0})),
        (currency, gateway, accept, units) => {
          // A locked price sits on a step the display shows (the lock's own rule).
          const step = 10 ** Math.max(0, minorDigits(currency) - displayDigits(currency))
          const priceMinor = units * step
          const settings = settingsOf(gateway, accept)
          const input = {country: 'US', currency, priceMinor, rateOf: () => 1, settings}
          let object
          try {
            object = gatewayPrice(input)
          } catch (error) {
            // Only a price above the gateway's maximum cannot be sent.
            expect(error).toBeInstanceOf(InvalidInputError)
            expect((error as Error).message).toMatch(/maximum charge/)
            return
          }
          const charged = gatewayAmountMinor(input)
          const rule = gatewayRule(gateway, object.currency)
          expect(object.currency).toBe(charged.currency)
          if (settings.amount_format === 'minor') {
            expect(Number.isSafeInteger(object.amount)).toBe(true)
            expect(plain(minorToDecimalString(object.amount, rule.exponent))).toBe(plain(minorToDecimalString(charged.minor, minorDigits(object.currency))))
            expect(object.amount % rule.divisible_by).toBe(0)
            if (rule.min_amount !== null && object.amount > 0) expect(object.amount).toBeGreaterThanOrEqual(rule.min_amount)
            if (rule.max_amount !== null) expect(object.amount).toBeLessThanOrEqual(rule.max_amount)
          } else {
            expect(places(object.amount)).toBeLessThanOrEqual(rule.exponent)
            expect(plain(String(object.amount))).toBe(plain(minorToDecimalString(charged.minor, minorDigits(object.currency))))
          }
          // The text shows the amount sent, whatever moved it.
          expect(object.formatted).toBe(formatMoney(charged.minor, object.currency, 'US'))
          if (object.currency === currency) {
            // Unmoved, the amount is the locked price itself; moved, the object says from what.
            if (charged.minor === priceMinor) expect(object.adjusted_from).toBeUndefined()
            else expect(object.adjusted_from).toBe(Number(minorToDecimalString(priceMinor, minorDigits(currency))))
          } else {
            expect(acceptsCurrency(settings, currency)).toBe(false)
            expect(object.currency).toBe('USD')
          }
        },
      ),
      {numRuns: 3000},
    )
  })
})
