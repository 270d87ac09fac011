import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Lock} from '../../src/pricing/locks.js'
import {openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {lock, lockedProduct as product} from '../helpers/contract-fixtures.js'

describe.each(ADAPTERS)('pricing repository contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  const save = async (locks: Lock[]) => await store.transaction(async () => await store.pricing.saveQuotes(locks), {write: true})

  it('an empty chunk reads nothing and writes nothing', async () => {
    expect(await store.pricing.loadLocks([])).toEqual([])
    expect(await store.pricing.loadAnonymousLocks([])).toEqual([])
    expect(await store.pricing.userCountries([])).toEqual([])
    await save([])
    await store.pricing.deleteLocks([])
    await store.pricing.saveUserCountries([])
    expect(await store.pricing.loadLocks(['a'])).toEqual([undefined])
  })

  it('saves a chunk of quotes and loads them back as saved, in the order asked, one entry per key', async () => {
    const a = lock('alice')
    const b = lock('bob', {
      arm_id: 2,
      country: 'JP',
      currency: 'JPY',
      experiment_id: 7,
      ip: '203.0.113.9',
      package_id: 'pro',
      quote: {
        audience: {api_id: 'students', name: 'Students'},
        country_source: 'IP 203.0.113.9',
        currency_source: 'request',
        experiment_type: 'price',
        matching_audiences: [{api_id: 'students', name: 'Students'}],
        products: {
          basic: product(1200, {baseline_minor: 1500, control_minor: 1300, currency: 'JPY', layer: 'experiment'}),
          lifetime: product(90, {currency: 'USD', interval: 'one_time'}),
        },
        products_to_select: ['basic'],
      },
    })
    const c = lock('carol', {arm_id: 'b-arm', experiment_id: 3})
    await save([a, b, c])
    expect(await store.pricing.loadLocks(['carol', 'nobody', 'alice', 'bob', 'alice'])).toEqual([c, undefined, a, b, a])
  })

  it('a chunk of one is the single call: the same lock as in a bigger chunk', async () => {
    await save([lock('alice'), lock('bob')])
    expect(await store.pricing.loadLocks(['bob'])).toEqual([(await store.pricing.loadLocks(['alice', 'bob']))[1]])
  })

  it('saving an existing key keeps its created_at and replaces everything else; the last save of a key in a chunk wins', async () => {
    await save([lock('alice')])
    const later = lock('alice', {country: 'FR', created_at: '2026-03-01T00:00:00.000Z', updated_at: '2026-03-01T00:00:00.000Z'})
    const last = {...later, country: 'IT'}
    await save([later, last])
    expect((await store.pricing.loadLocks(['alice']))[0]).toEqual({...last, created_at: '2026-01-01T00:00:00.000Z'})
  })

  it('a chunk of many writes (more than one multi-row statement, and a remainder) is the same as its writes one by one', async () => {
    // 75 locks and 75 countries: keys repeat within the chunk (the last wins), an existing key keeps its created_at.
    await save([lock('k-3', {country: 'FR'})])
    const locks = Array.from({length: 75}, (_, i) => lock(`k-${i % 70}`, {country: i >= 70 ? 'IT' : 'DE', updated_at: `2026-02-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`}))
    await save(locks)
    const keys = Array.from({length: 71}, (_, i) => `k-${i}`)
    const expected = keys.map((key, i) => {
      if (i === 70) return undefined
      const last = locks.findLast((l) => l.lock_key === key)!
      return key === 'k-3' ? {...last, created_at: lock('k-3').created_at} : last
    })
    expect(await store.pricing.loadLocks(keys)).toEqual(expected)

    const rows = Array.from({length: 75}, (_, i) => ({at: `2026-03-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`, country: i >= 70 ? 'JP' : i % 2 ? 'DE' : 'US', userId: `u-${i % 70}`}))
    await store.transaction(async () => await store.pricing.saveUserCountries(rows), {write: true})
    expect(await store.pricing.userCountries(rows.slice(0, 70).map((r) => r.userId))).toEqual(rows.slice(0, 70).map((r, i) => (i < 5 ? 'JP' : r.country)))
    // u-0 got US then JP (moved), u-1 got DE then JP (moved); created_at is the first save's.
    expect(await store.pricing.user('u-1')).toEqual({country: 'JP', created_at: rows[1].at, updated_at: rows[71].at, user_id: 'u-1'})
    expect(await store.pricing.user('u-69')).toEqual({country: 'DE', created_at: rows[69].at, updated_at: rows[69].at, user_id: 'u-69'})
  })

  it('deletes a chunk of locks, ignoring unknown keys', async () => {
    await save([lock('alice'), lock('bob'), lock('carol')])
    await store.transaction(async () => await store.pricing.deleteLocks(['alice', 'nobody', 'carol']), {write: true})
    expect((await store.pricing.loadLocks(['alice', 'bob', 'carol'])).map((l) => l?.lock_key)).toEqual([undefined, 'bob', undefined])
  })

  it("loads per IP the earliest anonymous lock made from it; a user's lock with that IP is not one", async () => {
    const ip = '198.51.100.7'
    await save([
      lock('bob', {ip}),
      lock(ip, {anonymous: true, created_at: '2026-02-01T00:00:00.000Z', ip}),
      lock('other-key', {anonymous: true, created_at: '2026-01-15T00:00:00.000Z', ip}),
    ])
    const [first, none] = await store.pricing.loadAnonymousLocks([ip, '192.0.2.1'])
    expect(first?.lock_key).toBe('other-key')
    expect(first?.anonymous).toBe(true)
    expect(none).toBeUndefined()
  })

  it("stores users' countries a chunk at a time: the same country changes nothing, another one moves updated_at", async () => {
    await store.transaction(
      async () =>
        await store.pricing.saveUserCountries([
          {at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: 'alice'},
          {at: '2026-01-01T00:00:00.000Z', country: 'JP', userId: 'bob'},
        ]),
      {write: true},
    )
    expect(await store.pricing.userCountries(['bob', 'nobody', 'alice'])).toEqual(['JP', undefined, 'DE'])
    await store.transaction(
      async () =>
        await store.pricing.saveUserCountries([
          {at: '2026-02-01T00:00:00.000Z', country: 'DE', userId: 'alice'},
          {at: '2026-02-01T00:00:00.000Z', country: 'FR', userId: 'bob'},
          {at: '2026-03-01T00:00:00.000Z', country: 'IT', userId: 'bob'},
        ]),
      {write: true},
    )
    expect(await store.pricing.user('alice')).toEqual({country: 'DE', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', user_id: 'alice'})
    expect(await store.pricing.user('bob')).toEqual({country: 'IT', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-03-01T00:00:00.000Z', user_id: 'bob'})
  })

  it("a user is an anonymous visitor's lock first, else the users row; unknown ids have no user and no revenue", async () => {
    const ip = '198.51.100.8'
    await save([lock(ip, {anonymous: true, country: 'BR', ip})])
    await store.transaction(async () => await store.pricing.saveUserCountries([{at: '2026-01-02T00:00:00.000Z', country: 'US', userId: ip}]), {write: true})
    expect(await store.pricing.user(ip)).toEqual({country: 'BR', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', user_id: ip})
    expect(await store.pricing.user('nobody')).toBeUndefined()
    expect(await store.pricing.userHasRevenue('nobody')).toBe(false)
  })

  it('rolls back a failed transaction whole: no quote, no country, no deletion', async () => {
    await save([lock('alice')])
    await expect(async () =>
      await store.transaction(
        async () => {
          await store.pricing.saveQuotes([lock('bob')])
          await store.pricing.deleteLocks(['alice'])
          await store.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: 'bob'}])
          throw new Error('boom')
        },
        {write: true},
      ),
    ).rejects.toThrow('boom')
    expect((await store.pricing.loadLocks(['alice', 'bob'])).map((l) => l?.lock_key)).toEqual(['alice', undefined])
    expect(await store.pricing.userCountries(['bob'])).toEqual([undefined])
  })

  it('a write transaction returns what its function returns; a nested one joins it', async () => {
    expect(await store.transaction(async () => await store.transaction(() => 7, {write: true}) + 1, {write: true})).toBe(8)
  })

  it("the catalog version does not move for the store's own commits", async () => {
    const v = await store.pricing.catalogVersion()
    expect(typeof v).toBe('number')
    await save([lock('alice')])
    expect(await store.pricing.catalogVersion()).toBe(v)
  })

  it("commitVersion, where the adapter offers it, is the catalog version and moves on every other connection's commit, whatever it wrote", async () => {
    if (!store.pricing.commitVersion) return
    const v = store.pricing.commitVersion()
    expect(v).toBe(await store.pricing.catalogVersion())
    const other = openStore(store.location)
    try {
      await other.keys.insert([{created_at: 'x', hash: 'h-other', name: 'other', prefix: 'p-other'}])
    } finally {
      await other.close()
    }
    expect(store.pricing.commitVersion()).not.toBe(v)
  })

  it('a new store has no products to price', async () => {
    expect(await store.pricing.catalogSnapshot()).toEqual([])
    expect(await store.pricing.product('basic')).toBeUndefined()
    expect(await store.pricing.productApiId(1)).toBeUndefined()
    expect(await store.pricing.productRow('basic')).toBeUndefined()
    expect(await store.pricing.productRowById(1)).toBeUndefined()
    expect(await store.pricing.integrationMatches([], 'prod_x')).toEqual([])
    expect(await store.pricing.integrationMatches(['gateway_a', 'gateway_a_with_interval'], 'prod_x')).toEqual([])
    expect(await store.pricing.productApiIds()).toEqual([])
    expect(await store.pricing.pricedCountries()).toEqual([])
  })
})
