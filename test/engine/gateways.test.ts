import fc from 'fast-check'
import {afterEach, describe, expect, it} from 'vitest'

import {fromMinor, isCurrency, minorDigits, toMinor} from '../../src/currency.js'
import {InvalidInputError} from '../../src/errors.js'
import {GATEWAY_TABLES, gatewayRule} from '../../src/money/gateway-tables.js'
import {gatewayStep, representablePrice} from '../../src/money/representable.js'
import {configureGateway} from '../../src/pricing/gateway-settings.js'
import {
  configureRuleFromFlags,
  DEFAULT_GATEWAY_SETTINGS,
  gatewayPrice,
  type GatewaySettings,
  gatewaySettings,
  gatewaySettingsMap,
  listGatewaySettings,
  pickRule,
  showRule,
  showTable,
} from '../../src/pricing/gateways.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {tempStore} from '../helpers/run.js'

const NBSP = '\u00A0'

/** Rates in units per 1 USD, fixed for the tests (no network, no shipped snapshot). */
const RATES: Record<string, number> = {BHD: 0.376, BRL: 5, EUR: 0.9, JPY: 150, KRW: 1350, KWD: 0.307, USD: 1}
const rateOf = (c: string) => RATES[c]

// gateway_d's table (Paddle) follows ISO 4217 exponents with no further rule (docs/money.md): amounts are storage minor units.
// (gateway_c's, Chargebee, takes at most two decimals, so it cannot carry BHD 4.125.)
const minorAny: GatewaySettings = {accepted_currencies: '*', amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_d'}
const decimalAny: GatewaySettings = {...minorAny, amount_format: 'decimal'}
const usdOnly: GatewaySettings = {accepted_currencies: ['USD', 'EUR'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_c'}

describe('gatewayPrice: minor units are never off by a factor of ten or a hundred', () => {
  it.each([
    // [currency, country, price in currency units, minor amount, decimal amount, formatted]
    ['USD', 'US', 9.99, 999, 9.99, '$9.99'],
    ['EUR', 'DE', 9.99, 999, 9.99, `9,99${NBSP}€`],
    ['JPY', 'JP', 1200, 1200, 1200, '￥1,200'],
    ['KRW', 'KR', 12_000, 12_000, 12_000, '₩12,000'],
    ['CLP', 'CL', 9990, 9990, 9990, '$9.990'],
    ['KWD', 'KW', 4.5, 4500, 4.5, '\u200F4.500\u00A0د.ك.\u200F'],
    ['BHD', 'BH', 4.5, 4500, 4.5, '\u200F4.500\u00A0د.ب.\u200F'],
    ['BHD', 'BH', 4.125, 4125, 4.125, '\u200F4.125\u00A0د.ب.\u200F'],
  ] as const)('%s %s %d -> %i minor, %d decimal', (currency, country, units, minor, decimal, formatted) => {
    const priceMinor = toMinor(units, currency)
    expect(priceMinor).toBe(minor)
    expect(gatewayPrice({country, currency, priceMinor, rateOf, settings: minorAny})).toEqual({amount: minor, currency, formatted})
    expect(gatewayPrice({country, currency, priceMinor, rateOf, settings: decimalAny})).toEqual({amount: decimal, currency, formatted})
  })

  it('minor and decimal amounts agree for every ICU currency (fast-check)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Intl.supportedValuesOf('currency')), fc.integer({max: 1e12, min: 0}), (currency, priceMinor) => {
        const minor = gatewayPrice({country: 'US', currency, priceMinor, rateOf, settings: minorAny}).amount
        const decimal = gatewayPrice({country: 'US', currency, priceMinor, rateOf, settings: decimalAny}).amount
        expect(Number.isInteger(minor)).toBe(true)
        expect(minor).toBe(priceMinor)
        expect(toMinor(decimal, currency)).toBe(priceMinor)
        expect(decimal).toBe(fromMinor(priceMinor, currency))
      }),
    )
  })
})

describe('gatewayPrice: fallback currency', () => {
  it('falls back to USD, converted by FX, in USD cents', () => {
    // 1200 JPY / 150 per USD = 8.00 USD
    expect(gatewayPrice({country: 'JP', currency: 'JPY', priceMinor: 1200, rateOf, settings: usdOnly})).toEqual({amount: 800, currency: 'USD', formatted: '$8'})
    // 4.500 KWD / 0.307 per USD = 14.6579... USD -> 14.66
    expect(gatewayPrice({country: 'KW', currency: 'KWD', priceMinor: 4500, rateOf, settings: usdOnly})).toEqual({
      amount: 1466,
      currency: 'USD',
      formatted: `\u200F14.66${NBSP}US$`, // ar-KW: a leading RLM only for US$
    })
    // 49.90 BRL / 5 = 9.98 USD, decimal gateway
    expect(gatewayPrice({country: 'BR', currency: 'BRL', priceMinor: 4990, rateOf, settings: {...usdOnly, amount_format: 'decimal'}})).toEqual({
      amount: 9.98,
      currency: 'USD',
      formatted: `US$${NBSP}9,98`,
    })
  })

  it('keeps an accepted local currency as it is', () => {
    expect(gatewayPrice({country: 'DE', currency: 'EUR', priceMinor: 999, rateOf, settings: usdOnly})).toEqual({amount: 999, currency: 'EUR', formatted: `9,99${NBSP}€`})
  })

  it('rounds a conversion to the fallback currency minor unit (0 and 3 digits too)', () => {
    // 9.99 USD x 150 = 1498.5 JPY -> 1499 (half-up)
    const jpy: GatewaySettings = {accepted_currencies: ['JPY'], amount_format: 'minor', fallback_currency: 'JPY', gateway: 'gateway_d'}
    expect(gatewayPrice({country: 'US', currency: 'USD', priceMinor: 999, rateOf, settings: jpy})).toMatchObject({amount: 1499, currency: 'JPY'})
    // 9.99 USD x 0.307 = 3.06693 KWD -> 3.067
    const kwd: GatewaySettings = {accepted_currencies: ['KWD'], amount_format: 'decimal', fallback_currency: 'KWD', gateway: 'gateway_d'}
    expect(gatewayPrice({country: 'US', currency: 'USD', priceMinor: 999, rateOf, settings: kwd})).toMatchObject({amount: 3.067, currency: 'KWD'})
  })

  it('names the currency without an FX rate', () => {
    expect(() => gatewayPrice({country: 'TH', currency: 'THB', priceMinor: 9900, rateOf, settings: usdOnly})).toThrow(InvalidInputError)
    expect(() => gatewayPrice({country: 'TH', currency: 'THB', priceMinor: 9900, rateOf, settings: usdOnly})).toThrow(
      'gateway_c does not accept THB and falls back to USD, but there is no FX rate for THB: add one with "pricectl fx set THB RATE"',
    )
  })

  it('converted amounts stay whole minor units of the fallback (fast-check)', () => {
    fc.assert(
      fc.property(fc.constantFrom('JPY', 'KRW', 'KWD', 'BHD', 'BRL', 'EUR'), fc.integer({max: 1e10, min: 0}), (currency, priceMinor) => {
        const {amount, currency: c} = gatewayPrice({country: 'US', currency, priceMinor, rateOf, settings: {...usdOnly, accepted_currencies: ['USD']}})
        expect(c).toBe('USD')
        expect(Number.isSafeInteger(amount)).toBe(true)
        // Within half a cent of the exact conversion.
        const exact = (priceMinor / 10 ** minorDigits(currency) / RATES[currency]) * 100
        expect(Math.abs(amount - exact)).toBeLessThanOrEqual(0.5 + exact * 1e-9)
      }),
    )
  })
})

describe('gateway settings in the store', () => {
  let store: Store | undefined
  afterEach(async () => await store?.close())

  it('returns the defaults until something is stored', async () => {
    store = openStore(tempStore())
    expect(await listGatewaySettings(store)).toEqual(Object.values(DEFAULT_GATEWAY_SETTINGS).map((s) => ({...s, source: 'default'})))
    expect(await gatewaySettings(store!, 'gateway_b')).toEqual({...DEFAULT_GATEWAY_SETTINGS.gateway_b, source: 'default'})
  })

  it('merges changes over the current settings, and --default drops them', async () => {
    store = openStore(tempStore())
    await configureGateway(store!, 'gateway_b', {accepted_currencies: 'eur, usd,EUR'})
    expect(await gatewaySettings(store!, 'gateway_b')).toEqual({accepted_currencies: ['EUR', 'USD'], amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_b', source: 'store'})
    await configureGateway(store!, 'gateway_b', {amount_format: 'minor'})
    expect((await gatewaySettingsMap(store)).gateway_b).toEqual({accepted_currencies: ['EUR', 'USD'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_b'})
    await configureGateway(store!, 'gateway_b', {accepted_currencies: ['*']})
    expect((await gatewaySettings(store!, 'gateway_b')).accepted_currencies).toBe('*')
    expect((await configureGateway(store!, 'gateway_b', 'default')).settings.source).toBe('default')
    expect(await gatewaySettings(store!, 'gateway_b')).toEqual({...DEFAULT_GATEWAY_SETTINGS.gateway_b, source: 'default'})
  })

  it('refuses bad settings and writes nothing', async () => {
    store = openStore(tempStore())
    const db = store.db
    await expect(async () => await configureGateway(store!, 'gateway_x', {amount_format: 'minor'})).rejects.toThrow('unknown gateway "gateway_x" (expected one of gateway_a, gateway_b, gateway_c, gateway_d)')
    await expect(async () => await configureGateway(store!, 'gateway_a', {accepted_currencies: 'EUR'})).rejects.toThrow(
      'fallback_currency: USD is not among the accepted currencies EUR: add it to --accept or pick another --fallback',
    )
    await expect(async () => await configureGateway(store!, 'gateway_a', {accepted_currencies: 'EUR,XYZ'})).rejects.toThrow('unknown currency "XYZ"')
    await expect(async () => await configureGateway(store!, 'gateway_a', {amount_format: 'cents'})).rejects.toThrow('unknown amount format "cents" (expected minor or decimal)')
    await expect(async () => await configureGateway(store!, 'gateway_a', {fallback_currency: 'usdx'})).rejects.toThrow('unknown currency "USDX"')
    await expect(async () => await configureGateway(store!, 'gateway_a', {accept: 'EUR'})).rejects.toThrow('unknown field "accept"')
    expect((db.prepare('SELECT count(*) AS n FROM gateways').get() as {n: number}).n).toBe(0)
  })
})

describe('gateway currency tables: the published rules of the gateways they follow', () => {
  it('gateway_a follows Stripe: ISK and UGX take two decimals that must be 00, KWD three ending in 0, JPY none, HUF two', () => {
    expect(pickRule(gatewayRule('gateway_a', 'ISK'))).toEqual({divisible_by: 100, exponent: 2, max_amount: 99_999_999, min_amount: null})
    expect(pickRule(gatewayRule('gateway_a', 'UGX'))).toEqual({divisible_by: 100, exponent: 2, max_amount: 99_999_999, min_amount: null})
    expect(pickRule(gatewayRule('gateway_a', 'KWD'))).toEqual({divisible_by: 10, exponent: 3, max_amount: 99_999_999, min_amount: null})
    expect(pickRule(gatewayRule('gateway_a', 'JPY'))).toEqual({divisible_by: 1, exponent: 0, max_amount: 99_999_999, min_amount: 50})
    expect(pickRule(gatewayRule('gateway_a', 'HUF'))).toEqual({divisible_by: 1, exponent: 2, max_amount: 99_999_999, min_amount: 17_500})
    expect(pickRule(gatewayRule('gateway_a', 'IDR'))).toMatchObject({exponent: 2, max_amount: 999_999_999_999})
    expect(gatewayRule('gateway_a', 'USD')).toMatchObject({min_amount: 50, source: 'table'})
    expect(gatewayRule('gateway_a', 'NGN')).toMatchObject({divisible_by: 1, exponent: 2, max_amount: 99_999_999, min_amount: null, source: 'default'})
  })

  it('ISK 2400 kr is sent to gateway_a as 240000, and 2400 to a gateway with ISO exponents', () => {
    const stripe: GatewaySettings = {...minorAny, gateway: 'gateway_a'}
    expect(gatewayPrice({country: 'IS', currency: 'ISK', priceMinor: 2400, rateOf, settings: stripe}).amount).toBe(240_000)
    expect(gatewayPrice({country: 'IS', currency: 'ISK', priceMinor: 2400, rateOf, settings: minorAny}).amount).toBe(2400)
    expect(gatewayPrice({country: 'UG', currency: 'UGX', priceMinor: 5, rateOf, settings: stripe}).amount).toBe(500)
    expect(gatewayPrice({country: 'JP', currency: 'JPY', priceMinor: 1200, rateOf, settings: stripe}).amount).toBe(1200)
  })

  it('KWD 19.995 is not a price gateway_a can charge: price points move in steps of 0.010', () => {
    const rule = gatewayRule('gateway_a', 'KWD')
    expect(gatewayStep('KWD', rule)).toBe(10)
    expect(representablePrice(19_995, 'KWD', [{gateway: 'gateway_a', rule}]).minor).toBe(20_000)
    expect(representablePrice(19_990, 'KWD', [{gateway: 'gateway_a', rule}]).minor).toBe(19_990)
  })

  it('gateway_b follows PayPal: HUF, JPY and TWD without decimals, the rest with ISO digits', () => {
    expect(gatewayRule('gateway_b', 'HUF')).toMatchObject({divisible_by: 1, exponent: 0, source: 'table'})
    expect(gatewayRule('gateway_b', 'TWD')).toMatchObject({exponent: 0, source: 'table'})
    expect(gatewayRule('gateway_b', 'EUR')).toMatchObject({exponent: 2, max_amount: null, min_amount: null, source: 'default'})
    // 12 990 Ft stored as 1299000 minor units is sent as the whole number 12990.
    expect(gatewayPrice({country: 'HU', currency: 'HUF', priceMinor: 1_299_000, rateOf, settings: {...decimalAny, gateway: 'gateway_b'}}).amount).toBe(12_990)
  })

  it('gateway_c follows Chargebee: at most two decimals, so three-decimal currencies move in steps of 0.010', () => {
    expect(gatewayRule('gateway_c', 'KWD')).toMatchObject({exponent: 2, source: 'table'})
    expect(gatewayRule('gateway_c', 'JPY')).toMatchObject({exponent: 0, source: 'default'})
    expect(gatewayStep('KWD', gatewayRule('gateway_c', 'KWD'))).toBe(10)
  })

  it('gateway_d follows Paddle: ISO exponents, no entries', () => {
    expect(GATEWAY_TABLES.gateway_d.entries).toEqual({})
    expect(gatewayRule('gateway_d', 'KWD')).toMatchObject({divisible_by: 1, exponent: 3, source: 'default'})
  })

  it('every table names its sources, and every entry is a currency pricectl knows', () => {
    for (const t of Object.values(GATEWAY_TABLES)) {
      expect(t.sources.length).toBeGreaterThan(0)
      for (const s of t.sources) expect(s).toMatch(/^https:\/\/\S+ \(.+\)$/)
      for (const code of Object.keys(t.entries)) expect(isCurrency(code), `${t.gateway} ${code}`).toBe(true)
      // Published lists are kept as published (Stripe still lists STD, which ISO replaced by STN).
      for (const code of t.currencies ?? []) expect(code).toMatch(/^[A-Z]{3}$/)
    }
  })
})

describe('currency rule overrides in the store (gateways set --currency)', () => {
  let store: Store | undefined
  afterEach(async () => await store?.close())
  const rows = (db: Store['db']) => db.prepare('SELECT gateway, currency, exponent, divisible_by, min_amount, max_amount FROM gateway_currency_rules').all()

  it('stores a whole rule over the table, shows where it comes from, and --default drops it', async () => {
    store = openStore(tempStore())
    const db = store.db
    expect(await showRule(store!, 'gateway_a', 'ISK')).toMatchObject({exponent: 2, divisible_by: 100, source: 'table', source_text: 'Stripe table entry for ISK'})
    const set = await configureRuleFromFlags(store!, 'gateway_a', 'ISK', {divisible_by: '1', exponent: '0'})
    expect(set).toMatchObject({reset: false, rule: {divisible_by: 1, exponent: 0, max: '999999', max_amount: 999_999, source: 'store', table: {divisible_by: 100, exponent: 2}}})
    expect(rows(db)).toEqual([{currency: 'ISK', divisible_by: 1, exponent: 0, gateway: 'gateway_a', max_amount: 999_999, min_amount: null}])
    expect(await showTable(store!, 'gateway_a')).toMatchObject({model: 'Stripe', overrides: 1})
    expect(await configureRuleFromFlags(store!, 'gateway_a', 'ISK', 'default')).toMatchObject({reset: true, rule: {exponent: 2, source: 'table'}})
    expect((await configureRuleFromFlags(store!, 'gateway_a', 'ISK', 'default')).reset).toBe(false)
    expect(rows(db)).toEqual([])
  })

  it('takes bounds as amounts of the currency in the rule\'s exponent; none clears one', async () => {
    store = openStore(tempStore())
    const db = store.db
    expect((await configureRuleFromFlags(store!, 'gateway_d', 'USD', {max: '5000', min: '0.70'})).rule).toMatchObject({max: '5000.00', max_amount: 500_000, min: '0.70', min_amount: 70})
    expect((await configureRuleFromFlags(store!, 'gateway_d', 'USD', {exponent: '3'})).rule).toMatchObject({exponent: 3, max_amount: 5_000_000, min_amount: 700})
    expect((await configureRuleFromFlags(store!, 'gateway_d', 'USD', {min: 'none'})).rule).toMatchObject({max_amount: 5_000_000, min: null, min_amount: null})
    expect((await configureRuleFromFlags(store!, 'gateway_d', 'JPY', {min: '50', exponent: '2'})).rule).toMatchObject({exponent: 2, min_amount: 5000})
  })

  it('refuses bad values and leaves the stored rule as it was', async () => {
    store = openStore(tempStore())
    const db = store.db
    await configureRuleFromFlags(store!, 'gateway_a', 'USD', {min: '1'})
    const before = rows(db)
    for (const [flags, message] of [
      [{exponent: '7'}, '--exponent: expected a whole number from 0 to 6'],
      [{exponent: '1.5'}, '--exponent: expected a whole number from 0 to 6'],
      [{divisible_by: '0'}, '--divisible-by: expected a whole number of gateway units >= 1'],
      [{min: '0.505'}, '--min 0.505: Stripe amounts in USD have 2 decimals'],
      [{min: 'abc'}, '--min: expected an amount of the currency such as 0.50, or none to clear it, got "abc"'],
      [{max: '0'}, 'max_amount: expected a whole number >= 1 of gateway_a units (or none), got 0'],
      [{max: '0.50'}, 'min_amount 100 is above max_amount 50'],
    ] as const) {
      await expect(async () => await configureRuleFromFlags(store!, 'gateway_a', 'USD', flags)).rejects.toThrow(message)
    }
    expect(rows(db)).toEqual(before)
  })
})
