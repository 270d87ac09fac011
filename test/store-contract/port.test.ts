import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'

describe.each(ADAPTERS)('store port contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(() => {
    ;({cleanup, store} = adapter.open())
  })
  afterEach(() => cleanup())

  it('rolls a failed transaction back whole and returns what a committed one returns', () => {
    expect(store.transaction(() => 42)).toBe(42)
    expect(() =>
      store.transaction(() => {
        throw new Error('boom')
      }),
    ).toThrow('boom')
  })
})
