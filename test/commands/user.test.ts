import Database from 'better-sqlite3'
import {describe, expect, it} from 'vitest'

import {dump} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

describe('user get', () => {
  it('prints exactly {"user": {"country": ...}} for a stored user', async () => {
    const db = tempStore()
    await run(db, ['db', 'migrate'])
    // Users are written by the price command; here the row is put in directly.
    const sqlite = new Database(db)
    sqlite.prepare("INSERT INTO users (user_id, country, created_at, updated_at) VALUES ('u 1', 'DE', 'x', 'x')").run()
    sqlite.close()
    const r = await run(db, ['user', 'get', 'u 1', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({user: {country: 'DE'}})
    const text = await run(db, ['user', 'get', 'u 1'])
    expect(text.stdout.trim()).toBe('user u 1: country DE')
  })

  it('an unknown user exits 1 with success false, message and error_message, and writes nothing', async () => {
    const db = tempStore()
    await run(db, ['db', 'migrate'])
    const before = dump(db)
    const r = await run(db, ['user', 'get', 'ghost', '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toEqual({
      error_message: expect.stringContaining('no user "ghost"'),
      message: expect.stringContaining('no user "ghost"'),
      success: false,
    })
    expect(r.json.error_message).toBe(r.json.message)
    expect(dump(db)).toEqual(before)
    const text = await run(db, ['user', 'get', 'ghost'])
    expect(text.code).toBe(1)
    expect(text.stderr).toContain('Error: no user "ghost"')
  })
})
