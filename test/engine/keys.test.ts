import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {InvalidInputError, NotFoundError, UnavailableError} from '../../src/errors.js'
import {createKey, findKey, hashKey, KeyChecker, listKeys, presentedKey, revokeKey} from '../../src/server/keys.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {tempStore} from '../helpers/run.js'

let store: Store
beforeEach(() => {
  store = openStore(tempStore())
})
afterEach(() => store.close())

describe('API keys', () => {
  it('stores only the hash and the visible prefix, never the key', () => {
    const {key, record} = createKey(store, {name: 'checkout'})
    expect(key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/)
    expect(record).toMatchObject({id: 1, last_used_at: null, name: 'checkout', prefix: key.slice(0, 11), revoked_at: null, status: 'active'})
    const rows = store.db.prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[]
    expect(rows).toHaveLength(1)
    expect(rows[0].hash).toBe(hashKey(key))
    expect(JSON.stringify(rows)).not.toContain(key)
  })

  it('two keys are different and each authenticates as itself', () => {
    const a = createKey(store, {name: 'a'})
    const b = createKey(store, {name: 'b'})
    expect(a.key).not.toBe(b.key)
    const checker = new KeyChecker(store)
    expect(checker.check(a.key)?.name).toBe('a')
    expect(checker.check(b.key)?.name).toBe('b')
  })

  it('a key differing in any one character is refused', () => {
    const {key} = createKey(store, {name: 'a'})
    const checker = new KeyChecker(store)
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    fc.assert(
      fc.property(fc.integer({max: key.length - 1, min: 0}), fc.constantFrom(...alphabet), (i, c) => {
        fc.pre(key[i] !== c)
        const other = key.slice(0, i) + c + key.slice(i + 1)
        expect(checker.check(other)).toBeUndefined()
      }),
    )
    expect(checker.check(undefined)).toBeUndefined()
    expect(checker.check('')).toBeUndefined()
    expect(checker.check(key + 'x')).toBeUndefined()
  })

  it('a revoked key stops working on the next check, also when revoked through another connection', () => {
    const {key, record} = createKey(store, {name: 'ci'})
    const checker = new KeyChecker(store)
    expect(checker.check(key)).toBeDefined()
    const other = openStore(store.path)
    try {
      const r = revokeKey(other, record.prefix)
      expect(r.changed).toBe(true)
      expect(r.record.status).toBe('revoked')
    } finally {
      other.close()
    }
    expect(checker.check(key)).toBeUndefined()
    // Revoking again changes nothing and says so.
    expect(revokeKey(store, String(record.id)).changed).toBe(false)
  })

  it('finds a key by id, prefix or the key itself; names what to pass otherwise', () => {
    const {key, record} = createKey(store, {name: 'x'})
    expect(findKey(store, '1').id).toBe(record.id)
    expect(findKey(store, record.prefix).id).toBe(record.id)
    expect(findKey(store, key).id).toBe(record.id)
    expect(() => findKey(store, '99')).toThrow(NotFoundError)
    expect(() => findKey(store, 'pk_zzzzzzzz')).toThrow(NotFoundError)
    expect(() => findKey(store, 'pk_ab')).toThrow(/a prefix has 11 characters/)
    expect(() => findKey(store, 'checkout')).toThrow(InvalidInputError)
  })

  it('a key needs a name', () => {
    expect(() => createKey(store, {})).toThrow(/name: is required/)
    expect(() => createKey(store, {name: '  '})).toThrow(/name: must not be empty/)
    expect(listKeys(store)).toEqual([])
  })

  it('last use is kept in memory and written by flush()', () => {
    const {key} = createKey(store, {name: 'x'})
    const checker = new KeyChecker(store)
    checker.check(key)
    expect(listKeys(store)[0].last_used_at).toBeNull()
    checker.flush()
    expect(listKeys(store)[0].last_used_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
  })

  it('flush() never throws: a store that cannot be reached keeps the times (one warning) until it answers; the final flush drops them, saying so', () => {
    const {key} = createKey(store, {name: 'x'})
    const warnings: string[] = []
    // The keys repository of a PostgreSQL store that is down: every write fails as the client's do.
    let down = true
    const recordUse = store.keys.recordUse.bind(store.keys)
    const keys = Object.assign(Object.create(store.keys), {
      recordUse(uses: readonly (readonly [number, string])[]) {
        if (down) throw new UnavailableError('the connection to the PostgreSQL store postgres://db/p was lost (connect ECONNREFUSED) and no new connection could be made')
        return recordUse(uses)
      },
    })
    const checker = new KeyChecker({keys} as unknown as Store, {warn: (m) => warnings.push(m)})
    checker.check(key)
    expect(checker.flush()).toBe(false)
    checker.check(key)
    expect(checker.flush()).toBe(false)
    expect(warnings).toEqual([
      'key use times of 1 key not written (the connection to the PostgreSQL store postgres://db/p was lost (connect ECONNREFUSED) and no new connection could be made): kept, and written when the store answers again',
    ])
    expect(listKeys(store)[0].last_used_at).toBeNull()
    down = false
    expect(checker.flush()).toBe(true)
    const written = listKeys(store)[0].last_used_at
    expect(written).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    // Down again: a new outage warns again; the server's last flush drops what it cannot write.
    down = true
    checker.check(key)
    expect(checker.flush()).toBe(false)
    expect(checker.flush({final: true})).toBe(false)
    expect(warnings).toHaveLength(3)
    expect(warnings[2]).toMatch(/^key use times of 1 key not written: the connection .* \(dropped: the server stops\)$/)
    down = false
    expect(checker.flush()).toBe(true)
    expect(listKeys(store)[0].last_used_at).toBe(written)
  })

  it('reads the key from Authorization: Bearer or X-Api-Key', () => {
    expect(presentedKey({authorization: 'Bearer pk_abc'})).toBe('pk_abc')
    expect(presentedKey({authorization: 'bearer   pk_abc  '})).toBe('pk_abc')
    expect(presentedKey({'x-api-key': 'pk_abc'})).toBe('pk_abc')
    expect(presentedKey({authorization: 'Basic dXNlcjpwYXNz'})).toBeUndefined()
    expect(presentedKey({})).toBeUndefined()
  })
})
