import {describe, expect, it} from 'vitest'

import {type Coupon, inWindow, isCouponActive} from '../../src/catalog/coupons.js'
import {
  assertCountry,
  assertCurrency,
  convertMinor,
  countryCurrency,
  decimalPlaces,
  displayDigits,
  divHalfUp,
  fromMinor,
  minorDigits,
  mulDivHalfUp,
  toMinor,
  toRational,
  useRecordedExponents,
} from '../../src/currency.js'
import {InvalidInputError} from '../../src/errors.js'
import {clampToBounds, withinBounds} from '../../src/experiments/bounds.js'
import type {GatewayRule} from '../../src/money/gateway-tables.js'
import {fromGatewayUnits, gatewayStep, nearestPoints, priceStep, representablePrice, toGatewayUnits} from '../../src/money/representable.js'
import {PricingContext} from '../../src/pricing/context.js'
import {amountOff, inactiveReason, parseMapping, percentOff} from '../../src/pricing/coupons.js'
import {calculatePrice} from '../../src/pricing/price.js'
import {openStore} from '../../src/store/db.js'
import {tempStore} from '../helpers/run.js'
import {at, coupon, must, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * Fixed examples at the edges of the money core, one per behaviour a mutant of
 * `npm run mutate` showed untested (docs/hardening.md, "Mutation testing").
 */

const MAX = Number.MAX_SAFE_INTEGER
const rule = (r: Partial<GatewayRule>): GatewayRule => ({divisible_by: 1, exponent: 2, max_amount: null, min_amount: null, ...r})

describe('decimals as written', () => {
  it('counts the decimals of exponent forms', () => {
    expect(decimalPlaces(1e-7)).toBe(7)
    expect(decimalPlaces(1.5e-7)).toBe(8)
    expect(decimalPlaces(1e21)).toBe(0)
    expect(decimalPlaces(1.5e21)).toBe(0)
    expect(decimalPlaces(12.345)).toBe(3)
    expect(decimalPlaces(5)).toBe(0)
  })

  it('reads a number as the fraction of its shortest decimal form, sign and exponent included', () => {
    expect(toRational(-1.005)).toEqual([-1005n, 1000n])
    expect(toRational(1e-7)).toEqual([1n, 10_000_000n])
    expect(toRational(-2.5e-7)).toEqual([-25n, 100_000_000n])
    expect(toRational(1.5e21)).toEqual([15n * 10n ** 21n, 10n])
    expect(() => toRational(Infinity)).toThrow(RangeError)
    expect(() => toRational(Number.NaN)).toThrow(RangeError)
    expect(() => toRational(-Infinity)).toThrow(/^-Infinity is not a finite number$/)
  })
})

describe('half away from zero, exactly', () => {
  it('divHalfUp in every sign combination', () => {
    expect(divHalfUp(5n, 2n)).toBe(3n)
    expect(divHalfUp(-5n, 2n)).toBe(-3n)
    expect(divHalfUp(5n, -2n)).toBe(-3n)
    expect(divHalfUp(-5n, -2n)).toBe(3n)
    expect(divHalfUp(7n, -3n)).toBe(-2n)
    expect(divHalfUp(-7n, 3n)).toBe(-2n)
  })

  it('mulDivHalfUp: signs, a negative denominator and a product beyond 2^53', () => {
    expect(mulDivHalfUp(-1, 5n, 2n)).toBe(-3)
    expect(mulDivHalfUp(3, -1n, 2n)).toBe(-2)
    expect(mulDivHalfUp(-3, -1n, 2n)).toBe(2)
    expect(Object.is(mulDivHalfUp(0, -1n, 3n), 0)).toBe(true)
    expect(mulDivHalfUp(5, 1n, -2n)).toBe(-3)
    // (2^52 + 1) x 3 / 2 = 6755399441055745.5: the float product would lose the last unit.
    expect(mulDivHalfUp(2 ** 52 + 1, 3n, 2n)).toBe(6_755_399_441_055_746)
  })

  it('mulDivHalfUp refuses results beyond MAX_SAFE_INTEGER, and takes the largest', () => {
    expect(mulDivHalfUp(MAX, 1n, 1n)).toBe(MAX)
    expect(mulDivHalfUp(MAX, 2n, 2n)).toBe(MAX)
    expect(mulDivHalfUp(-MAX, 2n, 2n)).toBe(-MAX)
    expect(() => mulDivHalfUp(MAX, 3n, 2n)).toThrow(/^amount is out of range: 13510798882111487 minor units/)
    expect(() => mulDivHalfUp(-MAX, 3n, 2n, 'the price')).toThrow(/^the price is out of range/)
    expect(() => mulDivHalfUp(MAX, 3n, 2n)).toThrow(InvalidInputError)
  })
})

describe('exponents', () => {
  it('storage is ISO 4217 unless the store recorded otherwise; display is CLDR', () => {
    useRecordedExponents(undefined)
    expect(minorDigits('HUF')).toBe(2)
    expect(displayDigits('HUF')).toBe(0)
    expect(displayDigits('USD')).toBe(2)
    useRecordedExponents(new Map([['HUF', 0]]))
    try {
      expect(minorDigits('HUF')).toBe(0)
    } finally {
      useRecordedExponents(undefined)
    }
  })

  it('a code the data package does not know takes ICU\'s digits (SLL: 0)', () => {
    useRecordedExponents(undefined)
    expect(minorDigits('SLL')).toBe(0)
  })

  it('a code neither the data package nor ICU knows has 2 digits', () => {
    expect(minorDigits('ZZZ')).toBe(2)
    expect(minorDigits('no')).toBe(2)
  })

  it('countries, currencies and their assertions', () => {
    expect(countryCurrency('DE')).toBe('EUR')
    expect(countryCurrency('ZZ')).toBeUndefined()
    expect(assertCurrency('USD')).toBe('USD')
    expect(() => assertCurrency('usd')).toThrow(/^currency: unknown currency "usd" \(expected an ISO 4217 code such as USD\)$/)
    expect(() => assertCurrency('XXQ', 'to')).toThrow(/^to: unknown currency "XXQ"/)
    expect(assertCountry('US')).toBe('US')
    expect(() => assertCountry('ZZ')).toThrow(/^country: unknown country "ZZ" \(expected a two-letter ISO 3166 code such as US\)$/)
    expect(() => assertCountry('de', 'geo')).toThrow(/^geo: unknown country "de"/)
  })
})

describe('toMinor and fromMinor at their edges', () => {
  it('takes negatives and exponent forms exactly, refuses a decimal too many', () => {
    expect(toMinor(-1.5, 'USD')).toBe(-150)
    expect(toMinor(9.99, 'USD')).toBe(999)
    expect(toMinor(1e-3, 'KWD')).toBe(1)
    expect(() => toMinor(9.999, 'USD')).toThrow(/^amount: 9\.999 has more decimals than USD allows \(2\)$/)
    expect(() => toMinor(1e-7, 'USD', 'price')).toThrow(/^price: 1e-7 has more decimals/)
  })

  it('takes the largest amount and refuses one minor unit more, either sign', () => {
    expect(toMinor(MAX, 'JPY')).toBe(MAX)
    expect(toMinor(-MAX, 'JPY')).toBe(-MAX)
    expect(() => toMinor(2 ** 53, 'JPY')).toThrow(/^amount: 9007199254740992 JPY is out of range \(at most 9007199254740991\)$/)
    expect(() => toMinor(-(2 ** 53), 'JPY')).toThrow(/out of range/)
  })

  it('refuses a non-finite amount as input, not as a crash', () => {
    expect(() => toMinor(Infinity, 'USD')).toThrow(InvalidInputError)
    expect(() => toMinor(Number.NaN, 'USD', 'price')).toThrow(/^price: NaN is out of range \(expected a finite amount\)$/)
  })

  it('fromMinor divides by the storage exponent', () => {
    expect(fromMinor(500, 'JPY')).toBe(500)
    expect(fromMinor(999, 'USD')).toBe(9.99)
    expect(fromMinor(1234, 'KWD')).toBe(1.234)
  })
})

describe('convertMinor on the exact path', () => {
  it('the same currency is never converted, whatever the rates say', () => {
    expect(convertMinor(100, 'USD', 1, 'USD', 2)).toBe(100)
  })

  it('half a minor unit rounds away from zero towards more and fewer digits', () => {
    // 1 yen at 200 per USD is half a cent; 3 yen one and a half.
    expect(convertMinor(1, 'JPY', 200, 'USD', 1)).toBe(1)
    expect(convertMinor(3, 'JPY', 200, 'USD', 1)).toBe(2)
    // 0.50 USD at 1 JPY per USD is half a yen.
    expect(convertMinor(50, 'USD', 1, 'JPY', 1)).toBe(1)
    expect(convertMinor(150, 'USD', 1, 'JPY', 1)).toBe(2)
    expect(convertMinor(-50, 'USD', 1, 'JPY', 1)).toBe(-1)
    // 0.05 USD at 0.01 KWD per USD: half a fils.
    expect(convertMinor(5, 'USD', 1, 'KWD', 0.01)).toBe(1)
  })

  it('names the amount and both currencies when the result is out of range', () => {
    expect(() => convertMinor(MAX, 'USD', 1, 'EUR', 2)).toThrow(/^90071992547409\.9\d* USD in EUR is out of range/)
  })
})

describe('representable price points', () => {
  it('gateway steps and units in both directions of exponent', () => {
    // JPY (storage 0) at a gateway in hundredths: 50 hundredths is no step, 300 is 3 yen.
    expect(gatewayStep('JPY', rule({divisible_by: 50, exponent: 2}))).toBe(1)
    expect(gatewayStep('JPY', rule({divisible_by: 300, exponent: 2}))).toBe(3)
    expect(gatewayStep('USD', rule({exponent: 0}))).toBe(100)
    expect(gatewayStep('USD', rule({divisible_by: 5}))).toBe(5)
    expect(toGatewayUnits(1200, 'USD', rule({exponent: 0}))).toBe(12)
    expect(toGatewayUnits(1234, 'USD', rule({exponent: 0}))).toBeUndefined()
    expect(toGatewayUnits(12, 'JPY', rule({exponent: 2}))).toBe(1200)
    expect(fromGatewayUnits(1234, 'USD', {exponent: 2})).toBe(1234)
    expect(fromGatewayUnits(1200, 'JPY', {exponent: 2})).toBe(12)
    expect(fromGatewayUnits(1234, 'JPY', {exponent: 2})).toBeUndefined()
    expect(fromGatewayUnits(12, 'USD', {exponent: 0})).toBe(1200)
  })

  it('the common step is the least common multiple; the nearest points around an amount', () => {
    const two = {gateway: 'gateway_a' as const, rule: rule({divisible_by: 2})}
    const five = {gateway: 'gateway_b' as const, rule: rule({divisible_by: 5})}
    expect(priceStep('USD', [two, five])).toBe(10)
    expect(priceStep('USD', [])).toBe(1)
    expect(nearestPoints(101, 'USD', [two, five])).toEqual([100, 110])
    expect(nearestPoints(109, 'USD', [two, five])).toEqual([100, 110])
    expect(nearestPoints(110, 'USD', [two, five])).toEqual([110, 110])
    // Steps with a common factor: lcm(4, 6) is 12, not 24.
    const four = {gateway: 'gateway_c' as const, rule: rule({divisible_by: 4})}
    const six = {gateway: 'gateway_d' as const, rule: rule({divisible_by: 6})}
    expect(priceStep('USD', [four, six])).toBe(12)
  })

  it('says which party moved a price, and why', () => {
    expect(representablePrice(65_050, 'HUF', [])).toEqual({minor: 65_100, moves: [{from: 65_050, reason: 'the display shows HUF in steps of 1.00', to: 65_100}]})
    expect(representablePrice(65_049, 'HUF', []).minor).toBe(65_000)
    const whole = [{gateway: 'gateway_c' as const, rule: rule({exponent: 0})}, {gateway: 'gateway_a' as const, rule: rule({})}]
    expect(representablePrice(1234, 'USD', whole)).toEqual({minor: 1200, moves: [{from: 1234, reason: 'gateway_c cannot charge 12.34 USD exactly', to: 1200}]})
    expect(representablePrice(1200, 'USD', whole)).toEqual({minor: 1200, moves: []})
    expect(representablePrice(1234, 'USD', whole, 'up').minor).toBe(1300)
  })

  it('a minimum in finer gateway units rounds up to the next point; zero stays zero; the minimum itself is kept', () => {
    const a = [{gateway: 'gateway_a' as const, rule: rule({exponent: 2, min_amount: 5050})}]
    expect(representablePrice(10, 'JPY', a)).toEqual({minor: 51, moves: [{from: 10, reason: "below gateway_a's minimum charge of 50.50 JPY", to: 51}]})
    expect(representablePrice(51, 'JPY', a)).toEqual({minor: 51, moves: []})
    expect(representablePrice(0, 'JPY', a)).toEqual({minor: 0, moves: []})
    const usd = [{gateway: 'gateway_b' as const, rule: rule({exponent: 0, min_amount: 1})}]
    expect(representablePrice(50, 'USD', usd, 'up').minor).toBe(100)
    // A minimum of 0.52 in steps of 0.05 is 0.55: the first point at or above it.
    const fives = [{gateway: 'gateway_a' as const, rule: rule({divisible_by: 5, min_amount: 52})}]
    expect(representablePrice(10, 'USD', fives).minor).toBe(55)
  })

  it('a maximum in finer gateway units rounds down; the maximum itself is allowed, one step more is refused', () => {
    const a = [{gateway: 'gateway_a' as const, rule: rule({exponent: 2, max_amount: 1_000_050})}]
    expect(representablePrice(10_000, 'JPY', a)).toEqual({minor: 10_000, moves: []})
    expect(() => representablePrice(10_001, 'JPY', a)).toThrow(
      /^10001 JPY is above gateway_a's maximum charge of 10000\.50 JPY: lower the price or see "pricectl gateways show gateway_a JPY"$/,
    )
    const usd = [{gateway: 'gateway_d' as const, rule: rule({exponent: 0, max_amount: 10})}]
    expect(representablePrice(1000, 'USD', usd).minor).toBe(1000)
    expect(() => representablePrice(1001, 'USD', usd, 'up')).toThrow(/above gateway_d's maximum charge of 10 USD/)
    // A maximum of 10.03 in steps of 0.05 is 10.00: the last point at or below it.
    const fives = [{gateway: 'gateway_a' as const, rule: rule({divisible_by: 5, max_amount: 1003})}]
    expect(representablePrice(1000, 'USD', fives).minor).toBe(1000)
    expect(() => representablePrice(1005, 'USD', fives)).toThrow(/above gateway_a's maximum charge of 10\.03 USD/)
  })
})

describe('experiment price bounds at their edges', () => {
  it('withinBounds: both bounds are inside, either may be missing', () => {
    expect(withinBounds(100, 'USD', 1, 100, null)).toBe(true)
    expect(withinBounds(99, 'USD', 1, 100, null)).toBe(false)
    expect(withinBounds(100, 'USD', 1, null, 100)).toBe(true)
    expect(withinBounds(101, 'USD', 1, null, 100)).toBe(false)
    expect(withinBounds(5, 'USD', 1, null, null)).toBe(true)
    // 2.00 EUR at 2 EUR per USD is 1.00 USD.
    expect(withinBounds(200, 'EUR', 2, 100, 100)).toBe(true)
    expect(withinBounds(202, 'EUR', 2, 100, 100)).toBe(false)
  })

  it('clampToBounds: inside stays, a single bound clamps, equal bounds are one point', () => {
    expect(clampToBounds(100, 'USD', 1, 50, 150)).toEqual({clamped: null, minor: 100})
    expect(clampToBounds(100, 'USD', 1, 100, 100)).toEqual({clamped: null, minor: 100})
    expect(clampToBounds(150, 'USD', 1, null, 100)).toEqual({clamped: 'max', minor: 100})
    expect(clampToBounds(50, 'USD', 1, 100, null)).toEqual({clamped: 'min', minor: 100})
    expect(clampToBounds(0, 'USD', 1, 100, null)).toEqual({clamped: 'min', minor: 100})
    expect(clampToBounds(1, 'USD', 1, 1000, null)).toEqual({clamped: 'min', minor: 1000})
    expect(clampToBounds(100, 'USD', 1, 101, 100)).toBeUndefined()
    // Equal bounds reached from either side.
    expect(clampToBounds(150, 'USD', 1, 100, 100)).toEqual({clamped: 'max', minor: 100})
    expect(clampToBounds(50, 'USD', 1, 100, 100)).toEqual({clamped: 'min', minor: 100})
    // A minimum no safe amount reaches.
    expect(clampToBounds(1, 'USD', 1, 4 * MAX, null)).toBeUndefined()
    // EUR at 2 per USD: 2.01 EUR is 1.005 USD, which rounds to 1.01: the largest amount at most 1.00 USD is 2.00 EUR.
    expect(clampToBounds(300, 'EUR', 2, null, 100)).toEqual({clamped: 'max', minor: 200})
    expect(clampToBounds(100, 'EUR', 2, 100, null)).toEqual({clamped: 'min', minor: 199})
  })

  it('no minimum means any amount, even below zero; a maximum below zero leaves none', () => {
    expect(withinBounds(-5, 'USD', 1, null, 100)).toBe(true)
    expect(clampToBounds(-5, 'USD', 1, null, 100)).toEqual({clamped: null, minor: -5})
    expect(clampToBounds(100, 'USD', 1, null, -5)).toBeUndefined()
  })

  it('clampToBounds: no amount fits when the one below max is under min, or the one above min is over max', () => {
    // JPY at 0.5 per USD: one yen is 2.00 USD; nothing lands in [1.01, 1.99] USD.
    expect(clampToBounds(5, 'JPY', 0.5, 101, 199)).toBeUndefined()
    expect(clampToBounds(0, 'JPY', 0.5, 101, 199)).toBeUndefined()
  })
})

describe('coupon arithmetic and windows at their edges', () => {
  const c = (over: Partial<Coupon>): Coupon => ({active_from_s: null, active_till_s: null, api_id: 'C', status: 'ACTIVE', ...over}) as Coupon

  it('a discount over the price leaves zero, never a negative price', () => {
    expect(percentOff(100, 150)).toBe(0)
    expect(percentOff(100, 100)).toBe(0)
    expect(amountOff(100, 150)).toBe(0)
  })

  it('parseMapping drops empty names', () => {
    expect(parseMapping({p: 'A,, B ,A, '})).toEqual(new Map([['p', ['A', 'B']]]))
    expect(parseMapping(undefined)).toEqual(new Map())
  })

  it('an unbounded window is always inside; a coupon not ACTIVE is never applied', () => {
    expect(inWindow({active_from_s: null, active_till_s: null}, 100)).toBe('inside')
    expect(inWindow({active_from_s: null, active_till_s: null}, -1)).toBe('inside')
    expect(inWindow({active_from_s: 100, active_till_s: 100}, 100)).toBe('inside')
    expect(isCouponActive(c({status: 'NOT_ACTIVE'}), 100)).toBe(false)
    expect(isCouponActive(c({}), 100)).toBe(true)
    expect(inactiveReason(c({status: 'NOT_ACTIVE'}), 100)).toBe('C is NOT_ACTIVE')
    expect(inactiveReason(c({}), 100)).toBeUndefined()
    expect(inactiveReason(c({active_from_s: 101}), 100)).toBe('C is not active yet: it starts 1970-01-01 00:01:41 UTC')
    expect(inactiveReason(c({active_till_s: 99}), 100)).toBe('C has expired: it ended 1970-01-01 00:01:39 UTC')
  })
})

describe('a locked coupon through the engine (src, not the build)', () => {
  it('is shown through the last second of its valid_till and not after', async () => {
    const path = tempStore()
    await segCatalog(path)
    await must(path, ['coupons', 'create'], coupon('WIN', {active_from: '2026-03-10T12:00:00Z', active_till: '2026-03-20T12:00:00Z', coupon_type: 'percentage', value: 10}))
    const store = openStore(path)
    try {
      const quote = (now: string, coupons?: Record<string, string>) =>
        at(now, async () => calculatePrice(await PricingContext.open(store), {country: 'US', ...(coupons ? {coupons} : {}), products: ['basic'], user_id: 'u1'}))
      await quote('2026-03-15T00:00:00Z', {basic: 'WIN'})
      const last = await quote('2026-03-20T12:00:00Z')
      expect(last.products.basic.coupon).toMatchObject({api_id: 'WIN', valid_till: '2026-03-20 12:00:00'})
      const after = await quote('2026-03-20T12:00:01Z')
      expect(after.products.basic.coupon).toBeUndefined()
    } finally {
      await store.close()
    }
  })
})
