import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import type {NewApiKey} from '../../src/store/port/keys.js'
import {ADAPTERS} from '../helpers/adapters.js'

const key = (n: number, over: Partial<NewApiKey> = {}): NewApiKey => ({
  created_at: `2026-01-0${n}T00:00:00.000Z`,
  hash: `hash-${n}`,
  name: `key ${n}`,
  prefix: `pk_prefix${n}`,
  ...over,
})

describe.each(ADAPTERS)('keys repository contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  it('stores keys and reads them back by id, hash and prefix, in order; never the hash', async () => {
    const rows = await store.keys.insert([key(1), key(2)])
    expect(rows.map((r) => r?.name)).toEqual(['key 1', 'key 2'])
    expect(rows[0]).toEqual({created_at: '2026-01-01T00:00:00.000Z', id: rows[0]!.id, last_used_at: null, name: 'key 1', prefix: 'pk_prefix1', revoked_at: null})
    expect(JSON.stringify(await store.keys.list())).not.toContain('hash-')
    const found = await store.keys.find([{id: rows[1]!.id}, {hash: 'hash-1'}, {prefix: 'pk_prefix2'}, {prefix: 'pk_nothing'}])
    expect(found.map((r) => r?.name)).toEqual(['key 2', 'key 1', 'key 2', undefined])
  })

  it('a key whose prefix or hash is taken is not stored; the rest of the chunk is', async () => {
    await store.keys.insert([key(1)])
    const rows = await store.keys.insert([key(2, {prefix: 'pk_prefix1'}), key(3), key(4, {hash: 'hash-1'})])
    expect(rows.map((r) => r?.name)).toEqual([undefined, 'key 3', undefined])
    expect((await store.keys.list()).map((r) => r.name)).toEqual(['key 1', 'key 3'])
  })

  it('a chunk of one is a single insert', async () => {
    const [a] = await store.keys.insert([key(1)])
    const [b] = await store.keys.insert([key(2)])
    expect(await store.keys.list()).toEqual([a, b])
  })

  it('revokes once, filters by status, and a revoked key no longer authenticates', async () => {
    const [a, b] = await store.keys.insert([key(1), key(2)])
    expect(await store.keys.activeByHash('hash-1')).toEqual({id: a!.id, name: 'key 1', prefix: 'pk_prefix1'})
    expect(await store.keys.revoke([a!.id], '2026-02-01T00:00:00.000Z')).toBe(1)
    expect(await store.keys.revoke([a!.id, b!.id], '2026-03-01T00:00:00.000Z')).toBe(1)
    expect((await store.keys.find([{id: a!.id}]))[0]!.revoked_at).toBe('2026-02-01T00:00:00.000Z')
    expect(await store.keys.activeByHash('hash-1')).toBeUndefined()
    expect(await store.keys.list('active')).toEqual([])
    expect((await store.keys.list('revoked')).map((r) => r.id)).toEqual([a!.id, b!.id])
    expect(await store.keys.activeCount()).toBe(0)
  })

  it('records last use of several keys at once', async () => {
    const [a, b] = await store.keys.insert([key(1), key(2)])
    expect(await store.keys.recordUse([[a!.id, '2026-04-01T00:00:00.000Z'], [b!.id, '2026-04-02T00:00:00.000Z']])).toBe(true)
    expect((await store.keys.list()).map((r) => r.last_used_at)).toEqual(['2026-04-01T00:00:00.000Z', '2026-04-02T00:00:00.000Z'])
    expect(await store.keys.activeCount()).toBe(2)
  })
})
