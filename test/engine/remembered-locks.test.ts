import {describe, expect, it} from 'vitest'

import {RememberedLocks} from '../../src/store/remembered-locks.js'
import type {LockRow} from '../../src/store/rows.js'

const row = (key: string, price = 100): LockRow => [key, null, 'US', price, 'USD', '{}', null, 1, 'q', '2026-01-01', '2026-01-01', 'x']

describe('RememberedLocks (the lock rows a server answers from memory)', () => {
  it('answers what it kept, and drops the oldest row when full', () => {
    const r = new RememberedLocks(2)
    r.keep(row('a'))
    r.keep(row('b'))
    r.keep(row('c'))
    expect(r.get('a')).toBeUndefined()
    expect(r.get('b')?.[0]).toBe('b')
    expect(r.get('c')?.[0]).toBe('c')
    // A key kept again replaces its row and drops nothing else.
    r.keep(row('c', 200))
    expect(r.get('b')?.[0]).toBe('b')
    expect(r.get('c')?.[3]).toBe(200)
  })

  it('drops every row when the catalog version moves, none while it stays', () => {
    const r = new RememberedLocks(10)
    r.seen(1)
    r.keep(row('a'))
    r.seen(1)
    expect(r.get('a')).toBeDefined()
    r.seen(2)
    expect(r.get('a')).toBeUndefined()
  })

  it("forgets the keys this store writes, and a read that started before a drop keeps nothing", () => {
    const r = new RememberedLocks(10)
    r.keep(row('a'))
    r.keep(row('b'))
    const before = r.epoch
    r.forget(['a'])
    expect(r.get('a')).toBeUndefined()
    expect(r.get('b')).toBeDefined()
    // A read in flight across the drop may hold the row as it was before the write.
    r.keep(row('a', 1), before)
    expect(r.get('a')).toBeUndefined()
    const version = r.epoch
    r.seen(7)
    r.keep(row('c'), version)
    expect(r.get('c')).toBeUndefined()
    r.keep(row('c'), r.epoch)
    expect(r.get('c')).toBeDefined()
  })
})
