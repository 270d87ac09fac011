import {statSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {run, tempStore} from '../helpers/run.js'

describe('db commands', () => {
  it('creates a migrated, owner-only store and reports it', async () => {
    const db = tempStore()
    const r = await run(db, ['db', 'info', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.schema_version).toBe(r.json.latest_schema_version)
    expect(r.json.journal_mode).toBe('wal')
    expect(statSync(db).mode & 0o777).toBe(0o600)
  })

  it('checks and backs up', async () => {
    const db = tempStore()
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
