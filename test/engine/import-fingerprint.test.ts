import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {chargeFingerprint, fingerprint, subscriptionFingerprint} from '../../src/import/rows.js'
import type {ChargeValues, SubscriptionValues} from '../../src/store/port/revenue.js'

/** The event id's hash as first defined: FNV-1a (32-bit) of the values' text, each followed by \u0001, then the tax when not 0. */
function reference(values: readonly unknown[], taxMinor: number): string {
  const text = values.map((v) => (v === null || v === undefined ? '\u0001' : `${v as number | string}\u0001`)).join('') + (taxMinor === 0 ? '' : `tax:${taxMinor}\u0001`)
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(16).padStart(8, '0')
}

/**
 * An export row's event id ends with this hash, and a re-run recognises a row it imported
 * before by it ("unchanged"): it must never change for the same values.
 */
describe('the fingerprint of an import row', () => {
  it('is the FNV-1a of its values as text, whatever the values', () => {
    const value = fc.oneof(fc.constant(null), fc.constant(undefined), fc.string(), fc.string({unit: 'binary'}), fc.integer(), fc.maxSafeNat(), fc.double({noNaN: true}))
    fc.assert(
      fc.property(fc.array(value, {maxLength: 16}), fc.oneof(fc.constant(0), fc.maxSafeInteger()), (values, tax) => {
        expect(fingerprint(values, tax)).toBe(reference(values, tax))
      }),
      {numRuns: 2000},
    )
  })

  const text = fc.oneof(fc.string(), fc.string({unit: 'binary'}), fc.constantFrom('US', 'succeeded', 'USD', '{"a":"b"}'))
  const whole = fc.oneof(fc.maxSafeNat(), fc.integer({max: 10_000, min: 0}))
  const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, {nil: null})

  it('of a charge hashes its values in their order', () => {
    const charge = fc.record({
      amount_minor: maybe(whole), amount_refunded_minor: whole, amount_refunded_usd_minor: whole, amount_usd_minor: maybe(whole), country: maybe(text),
      created: maybe(whole), currency: maybe(text), metadata_json: maybe(text), product_id: maybe(whole), status: text, tax_minor: fc.oneof(fc.constant(0), whole),
    })
    fc.assert(
      fc.property(charge, (v) => {
        const values = [v.product_id, v.country, v.created, v.status, v.currency, v.amount_minor, v.amount_refunded_minor, v.amount_usd_minor, v.amount_refunded_usd_minor, v.metadata_json]
        expect(chargeFingerprint(v as unknown as ChargeValues)).toBe(reference(values, v.tax_minor))
      }),
      {numRuns: 2000},
    )
  })

  it('of a subscription hashes its values and the trial dates seen in their order', () => {
    const sub = fc.record({
      amount_minor: maybe(whole), amount_usd_minor: maybe(whole), cancel_at: maybe(whole), canceled_at: maybe(whole), country: maybe(text), created: maybe(whole),
      currency: maybe(text), interval: maybe(text), interval_count: maybe(whole), product_id: maybe(whole), status: text, tax_minor: fc.oneof(fc.constant(0), whole),
    })
    fc.assert(
      fc.property(sub, fc.option(whole, {nil: undefined}), fc.option(whole, {nil: undefined}), (v, start, end) => {
        const values = [v.product_id, v.country, v.created, v.interval, v.interval_count, v.status, v.cancel_at, v.canceled_at, start, end, v.currency, v.amount_minor, v.amount_usd_minor]
        expect(subscriptionFingerprint(v as unknown as SubscriptionValues, start, end)).toBe(reference(values, v.tax_minor))
      }),
      {numRuns: 1000},
    )
  })
})
