import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {fastPriceRequest, validatePriceRequest} from '../../src/pricing/request.js'
import {PriceRequest} from '../../src/schemas/price.js'
import {validate} from '../../src/schemas/validate.js'

/** The schema's answer: the request, or the error message. */
function bySchema(input: unknown): unknown {
  try {
    return {ok: validate(PriceRequest, input, 'price request')}
  } catch (error) {
    return {error: (error as Error).message}
  }
}

function byFastPath(input: unknown): unknown {
  try {
    return {ok: validatePriceRequest(input)}
  } catch (error) {
    return {error: (error as Error).message}
  }
}

const values = fc.oneof(
  fc.constantFrom('US', 'de', 'XX', 'EUR', 'usd', 'gateway_a', 'gateway_z', 'pro', ' ', '', 'a\u0001b', '\uD800', '1.2.3.4', '::1', 'x'.repeat(256)),
  fc.boolean(),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.constantFrom('gateway_a', 'gateway_b', 'pro_monthly', '', ' ', 7, null), {maxLength: 3}),
  fc.string(),
)
const keys = fc.constantFrom('country', 'currency', 'get_ip_from_request', 'integrations', 'ip', 'override', 'override_currency', 'package_id', 'products', 'run_experiment', 'user_id', 'coupons', 'features', 'extra', '__proto__')

describe('the price request fast path', () => {
  it('gives what the schema gives, key order included, for the common shape and around it', () => {
    fc.assert(
      fc.property(fc.dictionary(keys, values, {maxKeys: 6}), (input) => {
        const fast = byFastPath(input)
        const schema = bySchema(input)
        expect(fast).toEqual(schema)
        if ('ok' in (fast as object)) expect(Object.keys((fast as {ok: object}).ok)).toEqual(Object.keys((schema as {ok: object}).ok))
      }),
      {numRuns: 3000},
    )
  })

  it('takes the batch shape itself, with new arrays', () => {
    const input = {country: 'US', integrations: ['gateway_a'], products: ['pro_monthly', 'pro_yearly'], user_id: 'user-1'}
    const r = fastPriceRequest(input)
    expect(r).toEqual((bySchema(input) as {ok: unknown}).ok)
    expect(r!.products).not.toBe(input.products)
    expect(r!.integrations).not.toBe(input.integrations)
  })

  it('leaves what it does not check to the schema (coupons, features, a JSON __proto__ key, a class instance)', () => {
    expect(fastPriceRequest({coupons: {pro: 'A'}, user_id: 'u'})).toBeUndefined()
    expect(fastPriceRequest({features: {a: 1}, user_id: 'u'})).toBeUndefined()
    expect(fastPriceRequest(JSON.parse('{"user_id":"u","__proto__":{"x":1}}'))).toBeUndefined()
    expect(fastPriceRequest(new (class {
      user_id = 'u'
    })())).toBeUndefined()
    expect(fastPriceRequest({user_id: 'u', country: undefined})).toBeUndefined()
  })
})
