import Database from 'better-sqlite3'
import {copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {ROOT, run, tempStore} from '../helpers/run.js'

describe('db commands', () => {
  it('creates a migrated, owner-only store and reports it', async () => {
    const db = tempStore()
    expect((await run(db, ['db', 'init'])).code).toBe(0)
    const r = await run(db, ['db', 'info', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.schema_version).toBe(r.json.latest_schema_version)
    expect(r.json.journal_mode).toBe('wal')
    expect(statSync(db).mode & 0o777).toBe(0o600)
  })

  it('checks and backs up', async () => {
    const db = tempStore()
    expect((await run(db, ['db', 'init'])).code).toBe(0)
    expect((await run(db, ['db', 'check'])).code).toBe(0)
    const copy = db + '.bak'
    const b = await run(db, ['db', 'backup', copy, '--json'])
    expect(b.code).toBe(0)
    expect(statSync(copy).mode & 0o777).toBe(0o600)
    const again = await run(db, ['db', 'backup', copy, '--json'])
    expect(again.code).toBe(2)
    expect(again.json).toEqual({message: expect.stringContaining('--force'), success: false})
  })

  it('rejects an unknown flag with exit 2 and the JSON error shape', async () => {
    const r = await run(tempStore(), ['db', 'info', '--bogus', '--json'])
    expect(r.code).toBe(2)
    expect(r.json).toEqual({message: 'Nonexistent flag: --bogus', success: false})
  })
})

describe('db restore', () => {
  const productIds = async (db: string) => (await run(db, ['products', 'list', '--json'])).json.products.map((p: {api_id: string}) => p.api_id)

  it('round trip: backup, change, restore --yes brings the backup back; owner-only, no temp or -wal left', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    const copy = join(dirname(db), 'backup.db')
    await run(db, ['db', 'backup', copy])
    const before = await productIds(db)
    await run(db, ['products', 'delete', 'lifetime', '--yes'])
    expect(await productIds(db)).not.toContain('lifetime')
    const ask = await run(db, ['db', 'restore', copy, '--json'])
    expect(ask.code).toBe(2)
    expect(ask.json.message).toBe(`refusing to replace the store ${db} (products 6, coupons 4, tax_settings 1) with ${copy} without --yes (no terminal to confirm on)`)
    const r = await run(db, ['db', 'restore', copy, '--yes', '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json).toMatchObject({backup: copy, backup_schema_version: SCHEMA_VERSION, foreign_key_violations: 0, integrity: 'ok', path: db, replaced: true, schema_version: SCHEMA_VERSION, success: true})
    expect(await productIds(db)).toEqual(before)
    expect(statSync(db).mode & 0o777).toBe(0o600)
    expect(readdirSync(dirname(db)).sort()).toEqual(['backup.db', 'store.db'])
    expect((await run(db, ['db', 'check'])).code).toBe(0)
  })

  it('restores into a new path without asking, and migrates an older backup', async () => {
    const db = join(tempStore(), '..', 'sub', 'new.db')
    const r = await run(db, ['db', 'restore', join(ROOT, 'fixtures', 'stores', 'v1.db'), '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json).toMatchObject({backup_schema_version: 1, replaced: false, schema_version: SCHEMA_VERSION})
    expect(r.json.message).toContain(`migrated from schema version 1 to ${SCHEMA_VERSION}`)
    const info = await run(db, ['db', 'info', '--json'])
    expect(info.json).toMatchObject({journal_mode: 'wal', schema_version: SCHEMA_VERSION})
    expect(info.json.counts.products).toBeGreaterThan(0)
  })

  it('refuses a file that is not a pricectl store, and a store of a newer schema; the store stays as it was', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    const bytes = readFileSync(db)
    const text = join(dirname(db), 'notes.txt')
    writeFileSync(text, 'hello')
    const foreign = await run(db, ['db', 'restore', text, '--yes', '--json'])
    expect(foreign.code).toBe(1)
    expect(foreign.json.message).toBe(`${text} is not a pricectl store (not an SQLite database); the store was left untouched: give a file "pricectl db backup FILE" wrote`)
    const other = join(dirname(db), 'other.sqlite')
    const o = new Database(other)
    o.exec('CREATE TABLE t (x)')
    o.close()
    expect((await run(db, ['db', 'restore', other, '--yes'])).stderr).toContain('is not a pricectl store (an SQLite database of another application')
    const newer = join(dirname(db), 'newer.db')
    await run(db, ['db', 'backup', newer])
    const n = new Database(newer)
    n.pragma('user_version = 99')
    n.close()
    const r = await run(db, ['db', 'restore', newer, '--yes', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.message).toBe(`${newer} has schema version 99, newer than this pricectl understands (${SCHEMA_VERSION}): upgrade pricectl, then restore it; the store was left untouched`)
    expect(readFileSync(db).equals(bytes)).toBe(true)
    const self = await run(db, ['db', 'restore', db, '--yes', '--json'])
    expect(self.code).toBe(2)
    expect(self.json.message).toBe(`db restore: ${db} is the store; give a backup file, or pass --db with the store to replace`)
    expect(readdirSync(dirname(db)).filter((f) => f.includes('.tmp'))).toEqual([])
  })

  it('refuses while another process holds the store open (its -wal would be replayed onto the restored file)', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    const copy = join(dirname(db), 'backup.db')
    await run(db, ['db', 'backup', copy])
    const other = new Database(db)
    try {
      other.prepare('SELECT count(*) FROM products').get()
      const r = await run(db, ['db', 'restore', copy, '--yes', '--json'])
      expect(r.code).toBe(1)
      expect(r.json.message).toContain(`the store ${db} is in use by another process`)
      expect(existsSync(`${db}-wal`)).toBe(true)
    } finally {
      other.close()
    }
    expect(readdirSync(dirname(db)).filter((f) => f.includes('.tmp'))).toEqual([])
    expect((await run(db, ['db', 'restore', copy, '--yes'])).code).toBe(0)
  })

  it('refuses a backup with a -wal file holding changes beside it', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    const copy = join(dirname(db), 'copy.db')
    copyFileSync(db, copy)
    writeFileSync(`${copy}-wal`, Buffer.alloc(4096, 1))
    const r = await run(db, ['db', 'restore', copy, '--yes', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.message).toContain(`${copy} has a -wal file beside it holding changes`)
  })
})

describe('a PostgreSQL URL in messages', () => {
  it('masks a password given as a query parameter, as user:pass@ is', async () => {
    for (const args of [['db', 'info'], ['db', 'check']]) {
      const r = await run('postgres://app@127.0.0.1:1/pricing?sslmode=disable&password=s3cret&sslpassword=k3y', args)
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr).toContain('postgres://app@127.0.0.1:1/pricing?sslmode=disable&password=***&sslpassword=***')
      expect(r.stdout + r.stderr).not.toMatch(/s3cret|k3y/)
    }
  })
})
