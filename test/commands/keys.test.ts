import {describe, expect, it} from 'vitest'

import {dump} from '../helpers/dump.js'
import {initStore, run, tempStore} from '../helpers/run.js'

describe('keys create | list | revoke', () => {
  it('create prints the key once on stdout; list never shows it', async () => {
    const db = tempStore()
    const text = await run(db, ['keys', 'create', '--name', 'checkout'])
    expect(text.code).toBe(0)
    const key = text.stdout.trim()
    expect(key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/)
    expect(text.stderr).toContain('not shown again')

    const json = await run(db, ['keys', 'create', '--name', 'ci', '--json'])
    expect(json.code).toBe(0)
    expect(json.json).toEqual({
      api_key: expect.stringMatching(/^pk_/),
      key: {created_at: expect.any(String), id: 2, last_used_at: null, name: 'ci', prefix: json.json.api_key.slice(0, 11), revoked_at: null, status: 'active'},
      message: expect.stringContaining('created API key 2 (ci)'),
      success: true,
    })

    const list = await run(db, ['keys', 'list', '--json'])
    expect(list.code).toBe(0)
    expect(list.json.keys.map((k: {name: string}) => k.name)).toEqual(['checkout', 'ci'])
    expect(list.stdout).not.toContain(key)
    expect(list.stdout).not.toContain(json.json.api_key)
    const table = await run(db, ['keys', 'list'])
    expect(table.stdout).toContain(key.slice(0, 11))
    expect(table.stdout).not.toContain(key)
  })

  it('create without --name and without a terminal exits 2 naming the flag, writing nothing', async () => {
    const db = tempStore()
    await run(db, ['db', 'migrate'])
    const before = dump(db)
    const r = await run(db, ['keys', 'create', '--json'])
    expect(r.code).toBe(2)
    expect(r.json).toEqual({message: expect.stringContaining('--name'), success: false})
    expect(dump(db)).toEqual(before)
  })

  it('revoke by prefix needs --yes without a terminal, then marks the key revoked', async () => {
    const db = tempStore()
    const created = await run(db, ['keys', 'create', '--name', 'old', '--json'])
    const prefix = created.json.key.prefix
    const refused = await run(db, ['keys', 'revoke', prefix, '--json'])
    expect(refused.code).toBe(2)
    expect(refused.json.message).toContain('without --yes')
    expect((await run(db, ['keys', 'list', '--status', 'active', '--json'])).json.keys).toHaveLength(1)

    const r = await run(db, ['keys', 'revoke', prefix, '--yes', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({key: {id: 1, revoked_at: expect.any(String), status: 'revoked'}, message: `revoked API key 1 (old, ${prefix})`, success: true})
    expect((await run(db, ['keys', 'list', '--status', 'active', '--json'])).json.keys).toEqual([])
    expect((await run(db, ['keys', 'list', '--status', 'revoked', '--json'])).json.keys).toHaveLength(1)

    const again = await run(db, ['keys', 'revoke', '1', '--json'])
    expect(again.code).toBe(0)
    expect(again.json.message).toContain('already revoked')
  })

  it('revoking an unknown key exits 1 and says where to look', async () => {
    const db = await initStore()
    const r = await run(db, ['keys', 'revoke', '42', '--yes', '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toEqual({message: 'no API key "42" (see "pricectl keys list")', success: false})
    const bad = await run(db, ['keys', 'revoke', 'checkout', '--yes'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('expected a key id, a prefix')
  })
})
