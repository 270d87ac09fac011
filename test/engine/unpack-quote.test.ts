import {describe, expect, it} from 'vitest'

import {unpackQuote} from '../../src/pricing/locks.js'

const STORED = '{"country_source":"request","currency_source":"currency of US","products":{"pro":{"interval":"month","interval_count":1,"layer":"base","price_minor":999}},"matching_audiences":[{"api_id":"a","name":"A"}]}'

describe('unpackQuote of a stored quote read more than once', () => {
  it('gives an equal quote that shares no object with the one before, keys in stored order', () => {
    const first = unpackQuote(STORED, 'USD')
    const second = unpackQuote(STORED, 'USD')
    const third = unpackQuote(STORED, 'USD')
    expect(second).toEqual(first)
    expect(JSON.stringify(second)).toBe(JSON.stringify(first))
    first.products.pro.price_minor = 1
    second.products.pro.coupon = {api_id: 'X'} as never
    second.matching_audiences[0].name = 'changed'
    second.products_to_select.push('pro')
    second.audience.name = 'changed'
    expect(third.products.pro).toEqual({baseline_minor: null, control_minor: 999, currency: 'USD', interval: 'month', interval_count: 1, layer: 'base', price_minor: 999})
    expect(third.matching_audiences).toEqual([{api_id: 'a', name: 'A'}])
    expect(third.products_to_select).toEqual([])
    expect(third.audience).toEqual({api_id: 'default', name: 'default'})
  })

  it('fills the defaults from the lock currency of each read', () => {
    unpackQuote(STORED, 'USD')
    expect(unpackQuote(STORED, 'EUR').products.pro.currency).toBe('EUR')
  })

  it('parses a quote with a coupon every time (its objects are copied by parsing)', () => {
    const withCoupon = '{"country_source":"request","currency_source":"request","products":{"pro":{"interval":"month","interval_count":1,"layer":"base","price_minor":999,"coupon":{"api_id":"TEN","coupon_source":["GATEWAY_A"]}}}}'
    const a = unpackQuote(withCoupon, 'USD')
    const b = unpackQuote(withCoupon, 'USD')
    expect(b).toEqual(a)
    expect(b.products.pro.coupon).not.toBe(a.products.pro.coupon)
    expect(b.products.pro.coupon!.coupon_source).not.toBe(a.products.pro.coupon!.coupon_source)
  })
})
