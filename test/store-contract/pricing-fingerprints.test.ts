import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Lock} from '../../src/pricing/locks.js'
import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {lock, lockedProduct as product} from '../helpers/contract-fixtures.js'

/**
 * loadLockFingerprints (batch pricing of locked users prints a line again by it): one text
 * per key, in the order asked, undefined without a lock; equal texts exactly when the lock's
 * country, currency, package, experiment, arm and quote are equal, whatever the key, user,
 * IP and dates.
 */
describe.each(ADAPTERS)('pricing repository contract, lock fingerprints: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  const save = async (locks: Lock[]) => await store.transaction(async () => await store.pricing.saveQuotes(locks), {write: true})

  it('one text per key in the order asked; undefined where no lock is stored; equal for locks that differ only in key, user, IP, anonymity and dates', async () => {
    expect(await store.pricing.loadLockFingerprints([])).toEqual([])
    await save([
      lock('alice'),
      lock('bob', {created_at: '2026-02-01T00:00:00.000Z', ip: '203.0.113.9', updated_at: '2026-02-02T00:00:00.000Z'}),
      lock('203.0.113.7', {anonymous: true, ip: '203.0.113.7'}),
    ])
    const [a, none, b, anon, again] = await store.pricing.loadLockFingerprints(['alice', 'nobody', 'bob', '203.0.113.7', 'alice'])
    expect(typeof a).toBe('string')
    expect(none).toBeUndefined()
    expect(b).toBe(a)
    expect(anon).toBe(a)
    expect(again).toBe(a)
    expect(await store.pricing.loadLockFingerprints(['bob'])).toEqual([a])
  })

  it('differs when any value a reused lock is printed from differs', async () => {
    const variants: Partial<Lock>[] = [
      {},
      {country: 'AT'},
      {currency: 'USD'},
      {package_id: 'pro'},
      {package_id: "o'neil"},
      {experiment_id: 7},
      {arm_id: 2},
      {arm_id: '2'},
      {arm_id: 'b-arm', experiment_id: 3},
      {arm_id: "a','b", experiment_id: 3},
      {quote: {...lock('x').quote, products: {basic: product(1000)}}},
      {quote: {...lock('x').quote, products: {basic: product(999, {currency: 'USD'})}}},
      {quote: {...lock('x').quote, audience: {api_id: 'students', name: 'Students'}}},
      {quote: {...lock('x').quote, products_to_select: ['basic']}},
    ]
    await save(variants.map((v, i) => lock(`k${i}`, v)))
    const prints = await store.pricing.loadLockFingerprints(variants.map((_, i) => `k${i}`))
    // arm_id 2 and '2' are one stored value (the column is text), so one fingerprint.
    expect(prints[6]).toBe(prints[7])
    const distinct = prints.filter((_, i) => i !== 7)
    expect(new Set(distinct).size).toBe(distinct.length)
    for (const p of prints) expect(typeof p).toBe('string')
  })

  it('follows the writes of the transaction it runs in', async () => {
    await save([lock('alice')])
    const before = (await store.pricing.loadLockFingerprints(['alice']))[0]
    await store.transaction(
      async () => {
        await store.pricing.saveQuotes([lock('alice', {country: 'FR'})])
        expect((await store.pricing.loadLockFingerprints(['alice']))[0]).not.toBe(before)
        await store.pricing.deleteLocks(['alice'])
        expect(await store.pricing.loadLockFingerprints(['alice'])).toEqual([undefined])
      },
      {write: true},
    )
  })
})
