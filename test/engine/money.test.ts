import Database from 'better-sqlite3'
import fc from 'fast-check'
import {afterEach, describe, expect, it} from 'vitest'

import {getProduct} from '../../src/catalog/products.js'
import {convertMinor, displayDigits, fromMinor, minorDigits, minorToDecimalString, mulDivHalfUp, scaleMinor, toMinor} from '../../src/currency.js'
import {GATEWAY_TABLES, type GatewayId, gatewayRule} from '../../src/money/gateway-tables.js'
import {representablePrice, toGatewayUnits} from '../../src/money/representable.js'
import {formatMoneyInLocale} from '../../src/pricing/display.js'
import {gatewayPrice, type GatewaySettings} from '../../src/pricing/gateways.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {MIGRATIONS} from '../../src/store/migrations.js'
import {tempStore} from '../helpers/run.js'

const GATEWAYS = Object.keys(GATEWAY_TABLES) as GatewayId[]
const CURRENCIES = Intl.supportedValuesOf('currency')

/** The number a formatted price shows, as a canonical decimal string ("6,500 Ft" -> "6500"). */
function shownNumber(text: string): string {
  const number = text.slice(text.search(/\d/), text.length - [...text].reverse().join('').search(/\d/))
  return canonical(number.replace(/[^\d.]/g, ''))
}

function canonical(decimal: string): string {
  return decimal.includes('.') ? decimal.replace(/0+$/, '').replace(/\.$/, '') : decimal
}

describe('the displayed price is the charged price, for every currency and gateway', () => {
  it('amount / 10^exponent equals the displayed price, and the gateway rules hold (fast-check)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CURRENCIES), fc.constantFrom(...GATEWAYS), fc.integer({max: 5_000_000_000, min: 0}), fc.constantFrom('minor', 'decimal'), (currency, gateway, raw, format) => {
        const rule = gatewayRule(gateway, currency)
        let point: number
        try {
          point = representablePrice(raw, currency, [{gateway, rule}]).minor
        } catch {
          // Above the gateway's maximum: refused with a message, never charged otherwise.
          expect(rule.max_amount).not.toBeNull()
          return
        }
        const settings: GatewaySettings = {accepted_currencies: '*', amount_format: format as 'decimal' | 'minor', fallback_currency: 'USD', gateway}
        const g = gatewayPrice({country: 'US', currency, priceMinor: point, rateOf: () => 1, settings})
        const units = format === 'minor' ? g.amount : Math.round(g.amount * 10 ** rule.exponent)
        expect(Number.isSafeInteger(units)).toBe(true)
        expect(units % rule.divisible_by).toBe(0)
        if (rule.min_amount !== null && point > 0) expect(units).toBeGreaterThanOrEqual(rule.min_amount)
        if (rule.max_amount !== null) expect(units).toBeLessThanOrEqual(rule.max_amount)
        const charged = canonical(minorToDecimalString(units, rule.exponent))
        expect(charged).toBe(canonical(minorToDecimalString(point, minorDigits(currency))))
        expect(shownNumber(formatMoneyInLocale(point, currency, 'en-US'))).toBe(charged)
        expect(g.formatted).toBe(formatMoneyInLocale(point, currency, 'en-US'))
      }),
      {numRuns: 2000},
    )
  })

  it.each([
    // [gateway, currency, price as shown, gateway amount]
    ['gateway_a', 'ISK', 2400, 240_000],
    ['gateway_a', 'HUF', 6500, 650_000],
    ['gateway_a', 'IDR', 360_000, 36_000_000],
    ['gateway_a', 'JPY', 3100, 3100],
    ['gateway_a', 'KWD', 19.99, 19_990],
    ['gateway_a', 'USD', 9.99, 999],
    ['gateway_d', 'HUF', 6500, 650_000],
    ['gateway_b', 'HUF', 6500, 6500],
  ] as const)('%s %s %d is sent as %i', (gateway, currency, shown, amount) => {
    const minor = toMinor(shown, currency)
    expect(toGatewayUnits(minor, currency, gatewayRule(gateway, currency))).toBe(amount)
  })

  it('moves a point the gateway cannot charge to the nearest one, ties up, and says why', () => {
    const rule = gatewayRule('gateway_a', 'KWD')
    expect(representablePrice(19_995, 'KWD', [{gateway: 'gateway_a', rule}])).toEqual({minor: 20_000, moves: [{from: 19_995, reason: 'gateway_a cannot charge 19.995 KWD exactly', to: 20_000}]})
    expect(representablePrice(19_994, 'KWD', [{gateway: 'gateway_a', rule}]).minor).toBe(19_990)
    // HUF is shown in whole forints: a price in fillér moves for the display alone.
    expect(representablePrice(650_050, 'HUF', []).minor).toBe(650_100)
    // Below Stripe's minimum charge: moved up to it.
    expect(representablePrice(30, 'USD', [{gateway: 'gateway_a', rule: gatewayRule('gateway_a', 'USD')}]).minor).toBe(50)
  })
})

describe('three exponents, each from its source of truth', () => {
  it('storage is ISO 4217, display is CLDR, gateways their own tables', () => {
    expect([minorDigits('HUF'), displayDigits('HUF'), gatewayRule('gateway_a', 'HUF').exponent, gatewayRule('gateway_b', 'HUF').exponent]).toEqual([2, 0, 2, 0])
    expect([minorDigits('ISK'), displayDigits('ISK'), gatewayRule('gateway_a', 'ISK').exponent]).toEqual([0, 0, 2])
    expect([minorDigits('KWD'), displayDigits('KWD'), gatewayRule('gateway_a', 'KWD').divisible_by]).toEqual([3, 3, 10])
    expect([minorDigits('JPY'), gatewayRule('gateway_a', 'JPY').exponent]).toEqual([0, 0])
  })
})

describe('exact arithmetic at every magnitude a gateway accepts', () => {
  it('converts 1.00 USD at 1.005 to 1.01 EUR (the rate as written, not the nearest double)', () => {
    expect(convertMinor(100, 'USD', 1, 'EUR', 1.005)).toBe(101)
    expect(scaleMinor(100, 1.005)).toBe(101)
  })

  it('does not drift by one unit from 5e11 minor units on (fast-check against BigInt)', () => {
    expect(scaleMinor(500_000_000_001, 1)).toBe(500_000_000_001)
    expect(convertMinor(999_999_999_999, 'IDR', 1, 'IDR', 1)).toBe(999_999_999_999)
    fc.assert(
      fc.property(fc.integer({max: 999_999_999_999, min: 0}), fc.integer({max: 10_000_000, min: 10_000}), fc.integer({max: 10_000_000, min: 1}), (minor, a, b) => {
        const from = a / 1000
        const to = b / 1000
        // (minor * to/from), half up, in exact integers: rates are a/1000 and b/1000.
        const exact = (2n * BigInt(minor) * BigInt(b) + BigInt(a)) / (2n * BigInt(a))
        expect(convertMinor(minor, 'EUR', from, 'GBP', to)).toBe(Number(exact))
      }),
    )
    fc.assert(
      fc.property(fc.integer({max: 2 ** 42, min: -(2 ** 42)}), fc.integer({max: 1000, min: 1}), fc.integer({max: 1e6, min: 1}), (m, n, d) => {
        const num = BigInt(m) * BigInt(n)
        const neg = num < 0n
        const abs = neg ? -num : num
        const q = (2n * abs + BigInt(d)) / (2n * BigInt(d))
        expect(mulDivHalfUp(m, BigInt(n), BigInt(d))).toBe(Number(neg ? -q : q))
      }),
    )
  })

  it('refuses amounts beyond what it computes exactly with a clear error', () => {
    expect(() => toMinor(1e16, 'USD', 'base_px')).toThrow(/base_px: 10000000000000000 USD is out of range/)
    // The limit in the currency's own decimals, exactly: 2^53 - 1 minor units, not its nearest double.
    expect(() => toMinor(1e14, 'EUR')).toThrow('amount: 100000000000000 EUR is out of range (at most 90071992547409.91)')
    expect(() => toMinor(1e13, 'KWD')).toThrow('(at most 9007199254740.991)')
    expect(() => toMinor(1e16, 'JPY')).toThrow('(at most 9007199254740991)')
    // A conversion beyond the limit names the amount exactly too.
    expect(() => convertMinor(9_007_199_254_740_991, 'EUR', 1, 'JPY', 160)).toThrow('90071992547409.91 EUR in JPY is out of range')
    expect(() => toMinor(Number.POSITIVE_INFINITY, 'USD', 'amount')).toThrow(/out of range/)
    expect(() => mulDivHalfUp(2 ** 52, 10n, 1n)).toThrow(/out of range/)
  })
})

describe('a store means the same under any runtime', () => {
  let store: Store | undefined
  const realResolved = Intl.NumberFormat.prototype.resolvedOptions
  afterEach(async () => {
    Intl.NumberFormat.prototype.resolvedOptions = realResolved
    await store?.close()
    store = undefined
  })

  /** Simulate a runtime whose ICU/CLDR data gives HUF, IDR and COP two digits (older Node). */
  function olderIcu(): void {
    Intl.NumberFormat.prototype.resolvedOptions = function (this: Intl.NumberFormat) {
      const o = realResolved.call(this)
      return ['HUF', 'IDR', 'COP'].includes(o.currency ?? '') ? {...o, maximumFractionDigits: 2, minimumFractionDigits: 2} : o
    }
  }

  it('a HUF country price reads 6500 Ft, not 65, whatever ICU says', async () => {
    const path = tempStore()
    store = openStore(path)
    store.db.prepare("INSERT INTO products (id, api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES (1, 'p', 'P', 1999, 'month', 1, 'x', 'x')").run()
    store.db.prepare("INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (1, 'HU', 'HUF', ?, 0)").run(toMinor(6500, 'HUF'))
    await store.close()
    olderIcu()
    store = openStore(path)
    expect((await getProduct(store, 'p'))!.country_prices).toEqual([{amount_minor: 650_000, country: 'HU', currency: 'HUF'}])
    expect(fromMinor(650_000, 'HUF')).toBe(6500)
    expect(formatMoneyInLocale(650_000, 'HUF', 'hu-HU')).toBe('6500\u00A0Ft')
  })

  it('migration 2 moves what schema 1 wrote with ICU digits to ISO exponents, amounts unchanged', () => {
    const path = tempStore()
    const db = new Database(path)
    MIGRATIONS[0].up(db)
    db.pragma('user_version = 1')
    db.prepare("INSERT INTO products (id, api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES (1, 'p', 'P', 1999, 'month', 1, 'x', 'x')").run()
    // Schema 1 under this runtime's ICU: HUF with no minor digits, EUR with two.
    db.prepare("INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (1, 'HU', 'HUF', 6500, 0), (1, 'DE', 'EUR', 899, 1)").run()
    db.prepare(
      "INSERT INTO locks (lock_key, country, currency, quote_json, created_at, updated_at) VALUES ('u1', 'HU', 'HUF', ?, 'x', 'x')",
    ).run(JSON.stringify({country_source: '', currency_source: '', products: {p: {interval: 'month', interval_count: 1, layer: 'country_price', price_minor: 6500}}}))
    db.close()
    store = openStore(path)
    const rows = store.db.prepare('SELECT country, amount_minor FROM country_prices ORDER BY country').all()
    expect(rows).toEqual([
      {amount_minor: 899, country: 'DE'},
      {amount_minor: 650_000, country: 'HU'},
    ])
    const lock = JSON.parse((store.db.prepare("SELECT quote_json FROM locks WHERE lock_key = 'u1'").get() as {quote_json: string}).quote_json)
    expect(lock.products.p.price_minor).toBe(650_000)
    expect(store.db.prepare("SELECT exponent FROM currency_exponents WHERE currency = 'HUF'").pluck().get()).toBe(2)
  })
})
