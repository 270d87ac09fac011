import Database from 'better-sqlite3'
import {spawn} from 'node:child_process'
import {copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {beingWritten, identifyStore} from '../../src/store/identify.js'

/**
 * An unmarked store (made before stores carried pricectl's mark) is recognised from its raw
 * bytes, read with no lock. Another process migrating it rewrites its pages in place, so one
 * read can mix two states: identification must read again, not call the store foreign.
 */
describe('identifyStore and a store written meanwhile', () => {
  let dir: string
  afterEach(() => rmSync(dir, {force: true, recursive: true}))

  /** An unmarked store (user_version 1, pricectl's tables, no mark) and a copy of it whose schema page is damaged, as a torn read sees it. */
  function stores(): {good: string; torn: string} {
    dir = mkdtempSync(join(tmpdir(), 'pricectl-identify-'))
    const good = join(dir, 'good.db')
    const db = new Database(good)
    for (const t of ['settings', 'products', 'coupons', 'users', 'fx_rates', 'locks', 'subscriptions', 'charges', 'events', 'experiments', 'arms', 'exposures']) db.exec(`CREATE TABLE ${t} (x)`)
    db.pragma('user_version = 1')
    db.close()
    const torn = join(dir, 'store.db')
    const bytes = readFileSync(good)
    bytes.fill(0xff, 100, 600)
    writeFileSync(torn, bytes)
    return {good, torn}
  }

  it('a damaged read while a transaction is in flight (a journal beside the file) is read again once it ends', async () => {
    const {good, torn} = stores()
    expect(identifyStore(good)).toEqual({kind: 'unmarked'})
    writeFileSync(`${torn}-journal`, Buffer.alloc(512, 1))
    const next = join(dir, 'next.db')
    copyFileSync(good, next)
    // The writer's transaction ends 300 ms from now: the file as it commits it, the journal gone.
    const writer = spawn('sh', ['-c', `sleep 0.3; mv "${next}" "${torn}"; rm -f "${torn}-journal"`])
    const ended = new Promise((resolve) => writer.once('close', resolve))
    expect(identifyStore(torn)).toEqual({kind: 'unmarked'})
    await ended
  })

  it('a damaged read begun while a journal was there is read again though the transaction ended before the check', () => {
    // The read got the header as the commit leaves it (the writer had already written page 1)
    // and torn pages; the commit ended and the journal went before the check: only the journal
    // seen as the read began tells.
    const {good, torn} = stores()
    const header = readFileSync(good).subarray(0, 100)
    expect(beingWritten(torn, {header, journal: true})).toBe(true)
    expect(beingWritten(torn, {header, journal: false})).toBe(false)
  })

  it('a damaged file nothing is writing is refused at once', () => {
    const {torn} = stores()
    const started = performance.now()
    expect(() => identifyStore(torn)).toThrow(/is not a pricectl store \(an SQLite database SQLite cannot read \(SQLITE_CORRUPT/)
    // Not waited for: neither the header moved nor is a journal there.
    expect(performance.now() - started).toBeLessThan(1000)
  })
})
