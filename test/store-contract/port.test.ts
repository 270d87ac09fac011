import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'

describe.each(ADAPTERS)('store port contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  it('rolls a failed transaction back whole and returns what a committed one returns', async () => {
    expect(await store.transaction(() => 42)).toBe(42)
    await expect(async () =>
      await store.transaction(() => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
  })

  it('a write transaction commits, rolls back whole, and a nested one joins it', async () => {
    expect(await store.transaction(async () => await store.transaction(async () => (await store.keys.insert([{created_at: 'x', hash: 'h1', name: 'a', prefix: 'p1'}])).length, {write: true}), {write: true})).toBe(1)
    await expect(async () =>
      await store.transaction(async () => {
        await store.keys.insert([{created_at: 'x', hash: 'h2', name: 'b', prefix: 'p2'}])
        throw new Error('boom')
      }, {write: true}),
    ).rejects.toThrow('boom')
    expect((await store.keys.list()).map((k) => k.name)).toEqual(['a'])
  })
})
