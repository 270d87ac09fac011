import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {describeError} from '../../src/error-format.js'
import {diskFullHint, type DiskProbe, LOW_SPACE_BYTES, noteOpenedStore} from '../../src/store/disk-full.js'

/**
 * docs/hardening.md "A full disk": "database or disk is full" names the folder that filled up,
 * the temp folder (TMPDIR, where SQLite and imports write temporary data) when it is that one
 * (#32.21: a full TMPDIR read as the store's disk).
 */

const full = () => Object.assign(new Error('database or disk is full'), {code: 'SQLITE_FULL'})
const TEMP_FULL = (temp: string) => `the temp folder TMPDIR (${temp}) is full; free space there or point TMPDIR elsewhere`

describe('a full disk names the folder (#32.21)', () => {
  const savedTmp = process.env.TMPDIR
  afterEach(() => {
    if (savedTmp === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = savedTmp
  })

  it('SQLITE_FULL names the temp folder TMPDIR, with its path', () => {
    const temp = mkdtempSync(join(tmpdir(), 'pricectl-tmpdir-'))
    process.env.TMPDIR = temp
    noteOpenedStore({kind: 'sqlite', path: join(tmpdir(), 'shop.db')})
    const d = describeError(full())
    expect(d.code).toBe(1)
    expect(d.message).toMatch(/^store error SQLITE_FULL: database or disk is full \(/)
    expect(d.message).toContain(`TMPDIR (${temp})`)
    expect(d.message).toContain('point TMPDIR elsewhere')
  })

  it('a PostgreSQL store: SQLite writes only temp and stage files, so the temp folder is full', () => {
    noteOpenedStore({kind: 'postgres'})
    expect(describeError(full()).message).toBe(`store error SQLITE_FULL: database or disk is full (${TEMP_FULL(tmpdir())} (SQLite and imports write temporary data there))`)
  })

  it('ENOSPC on a file in the temp folder (an import\'s stage folder) names it', () => {
    noteOpenedStore({kind: 'sqlite', path: '/data/shop.db'})
    const path = join(tmpdir(), 'pricectl-import-1-x', 'stage0.db')
    const error = Object.assign(new Error(`ENOSPC: no space left on device, write`), {code: 'ENOSPC', path})
    expect(describeError(error).message).toBe(`ENOSPC: no space left on device, write (${TEMP_FULL(tmpdir())} (SQLite and imports write temporary data there))`)
  })

  it('a SQLite store: the temp folder when the store\'s disk is another with room, the store\'s folder when its disk is low, else both', () => {
    const store = {kind: 'sqlite' as const, path: '/data/shop.db'}
    const probe = (o: {free: number; sameDevice: boolean}): DiskProbe => ({device: (p) => (o.sameDevice || p === '/data' ? 1 : 2), free: () => o.free})
    expect(diskFullHint({probe: probe({free: 10 * LOW_SPACE_BYTES, sameDevice: false}), store})).toMatch(/^the temp folder TMPDIR \(.+\) is full; free space there or point TMPDIR elsewhere/)
    expect(diskFullHint({probe: probe({free: 1024, sameDevice: false}), store})).toBe("the store's folder (/data) is full; free space there")
    const both = diskFullHint({probe: probe({free: 10 * LOW_SPACE_BYTES, sameDevice: true}), store})
    expect(both).toBe(`check free space in the store's folder and in the temp folder TMPDIR (${tmpdir()}), where SQLite and imports write temporary data; free space there or point TMPDIR elsewhere`)
    // A folder that cannot be measured: both.
    expect(diskFullHint({probe: {device: () => 1, free: () => { throw new Error('EACCES') }}, store})).toBe(both)
  })
})
