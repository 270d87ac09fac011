import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {type Lock, type LockedProduct, packedQuote, packQuote, packQuoteNow, unpackQuote} from '../../src/pricing/locks.js'

// Shared references, as the segments give them: packedQuote compares audiences by identity.
const AUDIENCES = [
  {api_id: 'default', name: 'default'},
  {api_id: 'default', name: 'default'},
  {api_id: 'students', name: 'Students'},
  {api_id: 'pros', name: 'Pros "quoted"'},
]
const small = <T>(...xs: T[]) => fc.constantFrom(...xs)

const coupon = fc.record({
  api_id: small('SAVE10', 'HALF'),
  campaign: small(null, 'spring'),
  coupon_source: fc.constant(null).map(() => ['GATEWAY_A']),
  currency_code: small(null, 'EUR'),
  external_coupon_id: small(null, 'x1'),
  id: small(1, 2),
  price_minor: small(100, 450),
  service_external_coupon_id: small(null, 3),
  source: small('campaign' as const, 'request' as const),
  type: small('percentage' as const, 'fixed_amount' as const),
  valid_till_s: small(null, 1_900_000_000),
  value: small(10, 50),
})

// The amounts before an override_currency relabelling (issue 29 item 3).
const relabelledFrom = fc.record({baseline_minor: small(null, 999), control_minor: small(999), currency: small('EUR', 'KWD'), price_minor: small(999, 9990)})

const product: fc.Arbitrary<LockedProduct> = fc
  .record({
    baseline_minor: small(null, 999, 1000),
    control_minor: small(899, 999),
    coupon: fc.option(coupon, {freq: 4, nil: undefined}),
    currency: small('EUR', 'USD', 'JPY'),
    interval: small('month' as const, 'year' as const),
    interval_count: small(1, 3),
    layer: small('base', 'country_price', 'experiment'),
    price_minor: small(899, 999, 0),
    relabelled_from: fc.option(relabelledFrom, {freq: 4, nil: undefined}),
  })
  .map((p) => {
    const out: LockedProduct = {...p}
    if (p.coupon === undefined) delete out.coupon
    if (p.relabelled_from === undefined) delete out.relabelled_from
    return out
  })

const lock: fc.Arbitrary<Lock> = fc
  .record({
    audience: fc.nat(AUDIENCES.length - 1),
    countrySource: small('request', 'user', 'default'),
    currency: small('EUR', 'USD', 'JPY'),
    currencySource: small('country', 'request'),
    experimentType: small(null, 'price' as const, 'packaging' as const),
    matching: fc.array(fc.nat(AUDIENCES.length - 1), {maxLength: 2}),
    products: fc.array(fc.tuple(small('pro_monthly', 'pro_yearly', 'team'), product), {maxLength: 3}),
    toSelect: fc.array(small('pro_monthly', 'team'), {maxLength: 2}),
  })
  .map((r) => ({
    anonymous: false,
    arm_id: 0,
    country: 'DE',
    created_at: '2026-01-01T00:00:00.000Z',
    currency: r.currency,
    experiment_id: 0,
    ip: null,
    lock_key: 'u',
    package_id: null,
    quote: {
      audience: AUDIENCES[r.audience],
      country_source: r.countrySource,
      currency_source: r.currencySource,
      experiment_type: r.experimentType,
      matching_audiences: r.matching.map((i) => AUDIENCES[i]),
      products: Object.fromEntries(r.products),
      products_to_select: r.toSelect,
    },
    updated_at: '2026-01-01T00:00:00.000Z',
    user_id: 'u',
  }))

describe('packed quotes remembered (packedQuote)', () => {
  it('give the text packQuote builds, for quotes met again and quotes that differ in one value', () => {
    // Few values per field: the same quotes come back often, and near misses too.
    fc.assert(
      fc.property(fc.array(lock, {maxLength: 40}), (locks) => {
        for (const l of [...locks, ...locks]) {
          const expected = packQuoteNow(l)
          expect(packQuote(l)).toBe(expected)
          const known = packedQuote(l)
          expect(typeof known === 'string' ? known : known.text).toBe(expected)
          // A quote with a coupon or relabelled amounts is never remembered (those blocks are written whole).
          if (Object.values(l.quote.products).some((p) => p.coupon || p.relabelled_from)) expect(typeof known).toBe('string')
          // The text still reads back as the quote.
          expect(unpackQuote(expected, l.currency).products).toEqual(l.quote.products)
        }
      }),
      {numRuns: 300},
    )
  })

  it('give one number per text, and a changed quote is not taken for the one remembered', () => {
    const base = fc.sample(lock, {numRuns: 1, seed: 7})[0]
    // A currency of its own: the first test may have filled the others' room.
    const l: Lock = {...base, currency: 'CHF', quote: {...base.quote, products: {pro: {baseline_minor: null, control_minor: 999, currency: 'CHF', interval: 'month', interval_count: 1, layer: 'base', price_minor: 999}}}}
    const first = packedQuote(l)
    expect(typeof first).toBe('object')
    expect(packedQuote({...l, quote: {...l.quote, products: {pro: {...l.quote.products.pro}}}})).toBe(first)
    const changed = {...l, quote: {...l.quote, products: {pro: {...l.quote.products.pro, price_minor: 998}}}}
    const other = packedQuote(changed)
    expect(typeof other === 'string' ? other : other.text).toBe(packQuoteNow(changed))
    expect(typeof other === 'object' && typeof first === 'object' && other.id !== first.id).toBe(true)
    // Same values in another order of products is another text.
    const two = {...l, quote: {...l.quote, products: {a: l.quote.products.pro, b: {...l.quote.products.pro, layer: 'country_price'}}}}
    const swapped = {...l, quote: {...l.quote, products: {b: two.quote.products.b, a: two.quote.products.a}}}
    expect(packQuote(two)).toBe(packQuoteNow(two))
    expect(packQuote(swapped)).toBe(packQuoteNow(swapped))
    expect(packQuote(two)).not.toBe(packQuote(swapped))
  })

  it('keeps numbering new quotes once a currency has met more than its room of them (the oldest give way)', () => {
    const base = fc.sample(lock, {numRuns: 1, seed: 11})[0]
    const at = (price: number): Lock => ({...base, currency: 'SEK', quote: {...base.quote, products: {pro: {baseline_minor: null, control_minor: 999, currency: 'SEK', interval: 'month', interval_count: 1, layer: 'base', price_minor: price}}}})
    // More distinct quotes than one currency remembers, as a long-running process meets.
    for (let price = 100; price < 200; price++) packedQuote(at(price))
    const late = packedQuote(at(500))
    expect(typeof late).toBe('object')
    expect(packedQuote(at(500))).toBe(late)
  })
})
