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
afterEach(async () => await store.close())

describe('API keys', () => {
  it('stores only the hash and the visible prefix, never the key', async () => {
    const {key, record} = await createKey(store, {name: 'checkout'})
    expect(key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/)
    expect(record).toMatchObject({id: 1, last_used_at: null, name: 'checkout', prefix: key.slice(0, 11), revoked_at: null, status: 'active'})
    const rows = store.db.prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[]
    expect(rows).toHaveLength(1)
    expect(rows[0].hash).toBe(hashKey(key))
    expect(JSON.stringify(rows)).not.toContain(key)
  })

  it('two keys are different and each authenticates as itself', async () => {
    const a = await createKey(store, {name: 'a'})
    const b = await createKey(store, {name: 'b'})
    expect(a.key).not.toBe(b.key)
    const checker = new KeyChecker(store)
    expect((await checker.check(a.key))?.name).toBe('a')
    expect((await checker.check(b.key))?.name).toBe('b')
  })

  it('a key differing in any one character is refused', async () => {
    const {key} = await createKey(store, {name: 'a'})
    const checker = new KeyChecker(store)
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    await fc.assert(
      fc.asyncProperty(fc.integer({max: key.length - 1, min: 0}), fc.constantFrom(...alphabet), async (i, c) => {
        fc.pre(key[i] !== c)
        const other = key.slice(0, i) + c + key.slice(i + 1)
        expect(await checker.check(other)).toBeUndefined()
      }),
    )
    expect(await checker.check(undefined)).toBeUndefined()
    expect(await checker.check('')).toBeUndefined()
    expect(await checker.check(key + 'x')).toBeUndefined()
  })

  it('a revoked key stops working on the next check, also when revoked through another connection', async () => {
    const {key, record} = await createKey(store, {name: 'ci'})
    const checker = new KeyChecker(store)
    expect(await checker.check(key)).toBeDefined()
    const other = openStore(store.path)
    try {
      const r = await revokeKey(other, record.prefix)
      expect(r.changed).toBe(true)
      expect(r.record.status).toBe('revoked')
    } finally {
      await other.close()
    }
    expect(await checker.check(key)).toBeUndefined()
    // Revoking again changes nothing and says so.
    expect((await revokeKey(store, String(record.id))).changed).toBe(false)
  })

  it('finds a key by id, prefix or the key itself; names what to pass otherwise', async () => {
    const {key, record} = await createKey(store, {name: 'x'})
    expect((await findKey(store, '1')).id).toBe(record.id)
    expect((await findKey(store, record.prefix)).id).toBe(record.id)
    expect((await findKey(store, key)).id).toBe(record.id)
    await expect(async () => await findKey(store, '99')).rejects.toThrow(NotFoundError)
    await expect(async () => await findKey(store, 'pk_zzzzzzzz')).rejects.toThrow(NotFoundError)
    await expect(async () => await findKey(store, 'pk_ab')).rejects.toThrow(/a prefix has 11 characters/)
    await expect(async () => await findKey(store, 'checkout')).rejects.toThrow(InvalidInputError)
  })

  it('a key needs a name', async () => {
    await expect(async () => await createKey(store, {})).rejects.toThrow(/name: is required/)
    await expect(async () => await createKey(store, {name: '  '})).rejects.toThrow(/name: must not be empty/)
    expect(await listKeys(store)).toEqual([])
  })

  it('last use is kept in memory and written by flush()', async () => {
    const {key} = await createKey(store, {name: 'x'})
    const checker = new KeyChecker(store)
    await checker.check(key)
    expect((await listKeys(store))[0].last_used_at).toBeNull()
    await checker.flush()
    expect((await listKeys(store))[0].last_used_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
  })

  it('flush() never throws: a store that cannot be reached keeps the times (one warning) until it answers; the final flush drops them, saying so', async () => {
    const {key} = await createKey(store, {name: 'x'})
    const warnings: string[] = []
    // The keys repository of a PostgreSQL store that is down: every write fails as the client's do.
    let down = true
    const recordUse = store.keys.recordUse.bind(store.keys)
    const keys = Object.assign(Object.create(store.keys), {
      async recordUse(uses: readonly (readonly [number, string])[]) {
        if (down) throw new UnavailableError('the connection to the PostgreSQL store postgres://db/p was lost (connect ECONNREFUSED) and no new connection could be made')
        return await recordUse(uses)
      },
    })
    const checker = new KeyChecker({keys} as unknown as Store, {warn: (m) => warnings.push(m)})
    await checker.check(key)
    expect(await checker.flush()).toBe(false)
    await checker.check(key)
    expect(await checker.flush()).toBe(false)
    expect(warnings).toEqual([
      'key use times of 1 key not written (the connection to the PostgreSQL store postgres://db/p was lost (connect ECONNREFUSED) and no new connection could be made): kept, and written when the store answers again',
    ])
    expect((await listKeys(store))[0].last_used_at).toBeNull()
    down = false
    expect(await checker.flush()).toBe(true)
    const written = (await listKeys(store))[0].last_used_at
    expect(written).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    // Down again: a new outage warns again; the server's last flush drops what it cannot write.
    down = true
    await checker.check(key)
    expect(await checker.flush()).toBe(false)
    expect(await checker.flush({final: true})).toBe(false)
    expect(warnings).toHaveLength(3)
    expect(warnings[2]).toMatch(/^key use times of 1 key not written: the connection .* \(dropped: the server stops\)$/)
    down = false
    expect(await checker.flush()).toBe(true)
    expect((await listKeys(store))[0].last_used_at).toBe(written)
  })

  it('reads the key from Authorization: Bearer or X-Api-Key', () => {
    expect(presentedKey({authorization: 'Bearer pk_abc'})).toBe('pk_abc')
    expect(presentedKey({authorization: 'bearer   pk_abc  '})).toBe('pk_abc')
    expect(presentedKey({'x-api-key': 'pk_abc'})).toBe('pk_abc')
    expect(presentedKey({authorization: 'Basic dXNlcjpwYXNz'})).toBeUndefined()
    expect(presentedKey({})).toBeUndefined()
  })
})
