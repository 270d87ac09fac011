import {existsSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {run, withEnv} from '../helpers/run.js'

/** Every command that only reads the store, with the arguments it needs. */
const READS: string[][] = [
  ['audiences', 'list'],
  ['audiences', 'get', 'a'],
  ['campaigns', 'list'],
  ['charges', 'list'],
  ['coupons', 'list'],
  ['db', 'info'],
  ['db', 'check'],
  ['experiments', 'list'],
  ['experiments', 'show', '1'],
  ['fx', 'list'],
  ['gateways', 'list'],
  ['history'],
  ['keys', 'list'],
  ['localization', 'list'],
  ['packages', 'list'],
  ['price', 'preview'],
  ['products', 'list'],
  ['products', 'get', 'pro_monthly'],
  ['products', 'export'],
  ['revenue', 'report'],
  ['rounding', 'list'],
  ['rounding', 'test', 'EUR', '9.5'],
  ['subscriptions', 'list'],
  ['user', 'get', 'u1'],
]

/**
 * Every command that changes or removes what must already exist, with the arguments it needs
 * (each would answer "not found" on an empty store). Charges and subscriptions are not among
 * them: their update and delete are events, recorded even before the create arrives.
 */
const CHANGES: string[][] = [
  ['audiences', 'delete', 'a', '--yes'],
  ['audiences', 'update', 'a', '--name', 'A'],
  ['campaigns', 'delete', 'c', '--yes'],
  ['coupons', 'delete', 'c', '--yes'],
  ['coupons', 'update', 'c', '--name', 'C'],
  ['experiments', 'conclude', '1', 'A', '--yes'],
  ['experiments', 'delete', '1', '--yes'],
  ['experiments', 'start', '1'],
  ['experiments', 'stop', '1'],
  ['experiments', 'update', '1', '--name', 'E'],
  ['fx', 'delete', 'EUR', '--yes'],
  ['fx', 'prune', '--before', '2020-01-01', '--yes'],
  ['keys', 'revoke', 'pk_1', '--yes'],
  ['localization', 'clear', '--yes'],
  ['packages', 'delete', 'p', '--yes'],
  ['packages', 'update', 'p', '--name', 'P'],
  ['products', 'delete', 'pro_monthly', '--yes'],
  ['products', 'update', 'pro_monthly', '--name', 'Pro'],
  ['revert', '1', '--yes'],
]

describe('a typo never makes a new store', () => {
  it.each([...READS, ...CHANGES].map((args) => [args.join(' '), args]))('%s on a --db that names no store: exit 1 naming the path, nothing made', async (_name, args) => {
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-typo-'))
    const typo = join(dir, 'typo.db')
    const r = await run(typo, args as string[])
    expect(r.code, r.stdout + r.stderr).toBe(1)
    expect(r.stderr).toContain(`no store at ${typo}: check the path (a typo?), or make one: pricectl db init --db ${typo}\n`)
    expect(existsSync(typo)).toBe(false)
  })

  it('a write makes a missing store with a note; never its missing folders', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-typo-'))
    const db = join(dir, 'new.db')
    const made = await run(db, ['fx', 'set', 'EUR', '0.9'])
    expect(made.code, made.stderr).toBe(0)
    expect(made.stderr).toContain(`pricectl: created a new store at ${db}`)
    expect(existsSync(db)).toBe(true)
    const again = await run(db, ['fx', 'set', 'EUR', '0.91'])
    expect(again.stderr).not.toContain('created a new store')

    const nested = join(dir, 'no', 'such', 'folder', 'x.db')
    const refused = await run(nested, ['fx', 'set', 'EUR', '0.9'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`folder ${join(dir, 'no', 'such', 'folder')} does not exist`)
    expect(existsSync(join(dir, 'no'))).toBe(false)
  })

  it('db init makes the store (folders included), then says it exists; reads then work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-typo-'))
    const db = join(dir, 'team', 'pricing.db')
    const init = await run(db, ['db', 'init', '--json'])
    expect(init.code, init.stderr).toBe(0)
    expect(init.json).toMatchObject({created: true, path: db, success: true})
    expect(init.json.schema_version).toBeGreaterThan(0)
    const again = await run(db, ['db', 'init', '--json'])
    expect(again.json).toMatchObject({created: false, success: true})
    expect(again.json.message).toContain('already a pricectl store')
    const list = await run(db, ['products', 'list', '--json'])
    expect(list.code, list.stderr).toBe(0)
  })

  it('PRICECTL_DB that names no store is refused by a read as --db is', async () => {
    const typo = join(mkdtempSync(join(tmpdir(), 'pricectl-typo-')), 'typo.db')
    const r = await withEnv({PRICECTL_DB: typo}, () => run(undefined, ['products', 'list']))
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`no store at ${typo}`)
    expect(existsSync(typo)).toBe(false)
  })

  it('the default store (no --db, no PRICECTL_DB) is still made by its first command, read or write, folder included', async () => {
    const data = mkdtempSync(join(tmpdir(), 'pricectl-data-'))
    const r = await withEnv({XDG_DATA_HOME: data}, async () => {
      const saved = process.env.PRICECTL_DB
      delete process.env.PRICECTL_DB
      try {
        return await run(undefined, ['products', 'list', '--json'])
      } finally {
        if (saved !== undefined) process.env.PRICECTL_DB = saved
      }
    })
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(join(data, 'pricectl', 'pricectl.db'))).toBe(true)
  })

  it('serve makes a missing store as the writing commands do, never a missing folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-typo-'))
    const r = await run(join(dir, 'no', 'such', 'x.db'), ['serve', '--port', '0'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`folder ${join(dir, 'no', 'such')} does not exist`)
    expect(existsSync(join(dir, 'no'))).toBe(false)
  })
})
