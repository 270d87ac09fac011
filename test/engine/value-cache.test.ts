import {describe, expect, it} from 'vitest'

import {ValueCache} from '../../src/pricing/value-cache.js'

describe('ValueCache (batch pricing caches found without a key string)', () => {
  it('finds a value only when the first key, every part and the list are the same', () => {
    const c = new ValueCache<string>()
    const plans: string[] = []
    expect(c.set('US', ['USD', 999, null, plans], ['gateway_a'], 'a')).toBe(true)
    expect(c.get('US', ['USD', 999, null, plans], ['gateway_a'])).toBe('a')
    expect(c.get('DE', ['USD', 999, null, plans], ['gateway_a'])).toBeUndefined()
    expect(c.get('US', ['USD', 999, 0, plans], ['gateway_a'])).toBeUndefined()
    expect(c.get('US', ['USD', '999', null, plans], ['gateway_a'])).toBeUndefined()
    expect(c.get('US', ['USD', 999, null, []], ['gateway_a'])).toBeUndefined()
    expect(c.get('US', ['USD', 999, null, plans], ['gateway_a', 'gateway_b'])).toBeUndefined()
    expect(c.get('US', ['USD', 999, null, plans], undefined)).toBeUndefined()
    expect(c.get('US', ['USD', 999, null], ['gateway_a'])).toBeUndefined()
    expect(c.get('US', ['USD', 999, null, plans, 'more'], ['gateway_a'])).toBeUndefined()
  })

  it('keeps its own copy of the parts and the list', () => {
    const c = new ValueCache<string>()
    const parts = ['USD', 1]
    const list = ['gateway_a']
    c.set('US', parts, list, 'a')
    parts[1] = 2
    list[0] = 'gateway_b'
    expect(c.get('US', ['USD', 1], ['gateway_a'])).toBe('a')
    expect(c.get('US', ['USD', 2], ['gateway_b'])).toBeUndefined()
  })

  it('says when it has no room, per first key and for first keys', () => {
    const c = new ValueCache<number>(2, 2)
    expect(c.set('US', [1], undefined, 1)).toBe(true)
    expect(c.set('US', [2], undefined, 2)).toBe(true)
    expect(c.set('US', [3], undefined, 3)).toBe(false)
    expect(c.set('DE', [1], undefined, 4)).toBe(true)
    expect(c.set('FR', [1], undefined, 5)).toBe(false)
    expect(c.get('US', [2], undefined)).toBe(2)
    expect(c.get('US', [3], undefined)).toBeUndefined()
  })
})
