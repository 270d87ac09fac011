import {describe, expect, it} from 'vitest'

import {ImportKeys} from '../../src/store/postgres/import-keys.js'

describe('ImportKeys (the keys a PostgreSQL import wrote, as hashes)', () => {
  it('says a key is new once, and not again, across growth', () => {
    const keys = new ImportKeys()
    const n = 200_000
    let fresh = 0
    for (let i = 0; i < n; i++) if (keys.add(`user_${i % 5000}`, 'gateway_a', `ch_${i}`)) fresh++
    expect(fresh).toBe(n)
    for (let i = 0; i < n; i += 7) expect(keys.add(`user_${i % 5000}`, 'gateway_a', `ch_${i}`)).toBe(false)
    expect(keys.full).toBe(false)
  })

  it('tells the parts of a key apart', () => {
    const keys = new ImportKeys()
    expect(keys.add('ab', 'gateway_a', 'c')).toBe(true)
    expect(keys.add('a', 'gateway_a', 'bc')).toBe(true)
    expect(keys.add('a', 'gateway_ab', 'c')).toBe(true)
    expect(keys.add('ab', 'gateway_a', 'c')).toBe(false)
  })

  it('past its limit it is full and calls no key new', () => {
    const keys = new ImportKeys(3)
    expect([1, 2, 3].map((i) => keys.add(`u${i}`, 'gateway_b', `x${i}`))).toEqual([true, true, true])
    expect(keys.add('u4', 'gateway_b', 'x4')).toBe(false)
    expect(keys.full).toBe(true)
    expect(keys.add('u5', 'gateway_b', 'x5')).toBe(false)
  })
})
