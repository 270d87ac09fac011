import {spawn} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {afterEach, describe, expect, it} from 'vitest'

import {openStore} from '../../src/store/db.js'
import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {connectPg, PgError} from '../../src/store/postgres/client.js'
import {PG_MIGRATIONS, PG_SCHEMA_VERSION} from '../../src/store/postgres/migrations.js'
import {PG_META_SQL} from '../../src/store/postgres/schema.js'
import type {PgStore} from '../../src/store/postgres/store.js'
import {openReaderStore} from '../../src/store/reader.js'
import type {StorePort} from '../../src/store/port.js'
import {lock} from '../helpers/contract-fixtures.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'
import {ROOT, run} from '../helpers/run.js'

const made: PgDatabase[] = []
const opened: {close(): Promise<void>}[] = []
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close()
  for (const d of made.splice(0)) await d.drop()
})
async function database(options?: {empty?: boolean}): Promise<PgDatabase> {
  const d = await freshPgDatabase(options)
  made.push(d)
  return d
}
function open(url: string): StorePort {
  const s = openStore(url)
  opened.push(s)
  return s
}

/** A new database migrated to `version` by the released migrations, and a client of it. */
async function storeOfSchema(version: number) {
  const {url} = await database({empty: true})
  const pg = connectPg(url)
  opened.push(pg)
  await pg.exec(PG_META_SQL)
  await pg.exec(`INSERT INTO pricectl_meta (key, value) VALUES ('store', 'pricectl'), ('schema_version', '0')`)
  for (const m of PG_MIGRATIONS.filter((x) => x.version <= version)) {
    await pg.exec('BEGIN')
    await m.up(pg)
    await pg.run(`UPDATE pricectl_meta SET value = $1 WHERE key = 'schema_version'`, [String(m.version)])
    await pg.exec('COMMIT')
  }
  return {pg, url}
}

describe('the PostgreSQL client', () => {
  it('runs statements with parameters, BIGINT as numbers, several statements at once, COPY, and reports errors with their SQLSTATE', async () => {
    const pg = connectPg((await database({empty: true})).url)
    opened.push(pg)
    expect(await pg.query('SELECT $1::bigint AS n, $2::text AS t, NULL::text AS z', [9_007_199_254_740_991, 'x'])).toEqual([{n: 9_007_199_254_740_991, t: 'x', z: null}])
    expect(await pg.exec('CREATE TABLE t (a bigint, b text); SELECT 1 AS one')).toEqual([[], [{one: 1}]])
    expect(await pg.copyFrom('COPY t (a, b) FROM STDIN', '1\tone\n2\ttwo\n')).toBe(2)
    expect(await pg.queryArrays('SELECT a, b FROM t ORDER BY a')).toEqual([
      [1, 'one'],
      [2, 'two'],
    ])
    expect(await pg.run('UPDATE t SET b = $1', ['x'])).toBe(2)
    let caught: unknown
    try {
      await pg.query('SELECT * FROM missing_table')
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(PgError)
    expect((caught as PgError).code).toBe('42P01')
    // The connection is still usable after an error.
    expect(await pg.query('SELECT count(*) AS n FROM t')).toEqual([{n: 2}])
    await pg.close()
    await expect(pg.query('SELECT 1')).rejects.toThrow(/closed/)
  })

  it('works from the built dist/ as from the sources: a child process imports the compiled client', async () => {
    const url = (await database({empty: true})).url
    const client = pathToFileURL(join(ROOT, 'dist', 'src', 'store', 'postgres', 'client.js')).href
    const script = join(mkdtempSync(join(tmpdir(), 'pricectl-dist-')), 'query.mjs')
    writeFileSync(script, `import {connectPg} from ${JSON.stringify(client)}\nconst pg = connectPg(process.argv[2])\nconsole.log(JSON.stringify(await pg.query('SELECT 40 + 2 AS n')))\nawait pg.close()\n`)
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [script, url], {stdio: ['ignore', 'pipe', 'inherit']})
      let text = ''
      child.stdout.on('data', (d) => (text += d))
      child.on('error', reject)
      child.on('exit', () => resolve(text))
    })
    expect(JSON.parse(out)).toEqual([{n: 42}])
  })
})

describe('opening a PostgreSQL store', () => {
  it('has the same schema versions as SQLite', () => {
    expect(PG_SCHEMA_VERSION).toBe(SCHEMA_VERSION)
    expect(PG_MIGRATIONS.map((m) => m.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1))
  })

  it('creates a store in an empty database: marked, migrated, seeded as SQLite is', async () => {
    const store = open((await database({empty: true})).url)
    expect(store.kind).toBe('postgres')
    expect(await store.health()).toEqual({schemaVersion: SCHEMA_VERSION})
    expect(await store.config.setting('default_country')).toBe('US')
    expect(await store.config.setting('org_id')).toBe('1')
    expect((await store.config.ratesOn('2030-01-01', '2030-01-01')).length).toBeGreaterThan(100)
  })

  it('a store of schema 6 migrates to 7: the tax tables are made and their writes recorded in the history', async () => {
    // Schema 6 as its migrations left it (the history's triggers made before the tax tables existed).
    const {pg, url} = await storeOfSchema(6)
    expect(await pg.query(`SELECT to_regclass('tax_rates') IS NULL AS missing`)).toEqual([{missing: true}])
    const store = open(url)
    expect(await store.health()).toEqual({schemaVersion: SCHEMA_VERSION})
    const at = '2026-03-15T12:00:00.000Z'
    await store.history.begin({actor: 'alice', at, command: 'pricectl tax set DE 20'})
    await store.transaction(async () => {
      await store.config.saveTaxRate({bp: 2000, category: '', country: 'DE', from: '2026-01-01', source: 'manual'}, at)
      await store.config.saveTaxSetting({behavior: 'inclusive', category: null, scope: 'store', subject: ''}, at)
    }, {write: true})
    const change = (await store.history.currentChange())!
    await store.history.end()
    expect((await store.history.rows(change)).map((r) => [r.table, r.action, r.key])).toEqual([
      ['tax_rates', 'inserted', ['DE', '', '2026-01-01']],
      ['tax_settings', 'inserted', ['store', '']],
    ])
  })

  it('a store of schema 7 migrates to 8: charges and subscriptions keep their rows and lose the foreign key to products', async () => {
    const {pg, url} = await storeOfSchema(7)
    const productKeys = `SELECT conrelid::regclass::text AS t FROM pg_constraint WHERE contype = 'f' AND confrelid = 'products'::regclass AND conrelid IN ('charges'::regclass, 'subscriptions'::regclass) ORDER BY 1`
    expect(await pg.query(productKeys)).toEqual([{t: 'charges'}, {t: 'subscriptions'}])
    const [{id: product}] = await pg.query<{id: number}>(
      `INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES ('pro', 'Pro', 999, 'month', 1, '2026-01-01', '2026-01-01') RETURNING id`,
    )
    await pg.run(`INSERT INTO charges (user_id, origin, origin_id, product_id, status, latest_event_timestamp, latest_event_id) VALUES ('u1', 'gateway_a', 'ch_1', $1, 'succeeded', 1, 'e1')`, [product])
    const store = open(url)
    expect(await store.health()).toEqual({schemaVersion: 8})
    expect(await pg.query(productKeys)).toEqual([])
    expect(await pg.query('SELECT origin_id, product_id FROM charges')).toEqual([{origin_id: 'ch_1', product_id: product}])
  })

  it('several processes opening a new store at once: one migrates, all succeed', async () => {
    const {url} = await database({empty: true})
    const runs = Array.from({length: 4}, () => spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'db', 'migrate', '--json', '--db', url], {stdio: ['ignore', 'pipe', 'pipe']}))
    return Promise.all(
      runs.map(
        (child) =>
          new Promise<{code: null | number; out: string}>((resolve) => {
            let out = ''
            child.stdout.on('data', (d) => (out += d))
            child.stderr.on('data', (d) => (out += d))
            child.on('exit', (code) => resolve({code, out}))
          }),
      ),
    ).then(async (results) => {
      for (const r of results) expect(r.code, r.out).toBe(0)
      for (const r of results) expect(JSON.parse(r.out).to).toBe(SCHEMA_VERSION)
      const store = open(url)
      expect((await store.health()).schemaVersion).toBe(SCHEMA_VERSION)
      expect((await store.config.ratesOn('2030-01-01', '2030-01-01')).filter((r) => r.currency === 'EUR')).toHaveLength(1)
    })
  })

  it('refuses a database that holds other tables, and writes nothing to it', async () => {
    const d = await database({empty: true})
    const pg = connectPg(d.url)
    opened.push(pg)
    await pg.exec('CREATE TABLE customers (id bigint)')
    // The store opens without a round trip; its first statement makes the checks and fails with them.
    const store = open(d.url)
    await expect(store.health()).rejects.toThrow(/holds 1 table\(s\) and no pricectl store/)
    await expect(store.config.setting('default_country')).rejects.toThrow(/holds 1 table\(s\) and no pricectl store/)
    expect(await pg.queryArrays(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).toEqual([['customers']])
  })

  it('a store in its own schema of a shared database (search_path in the URL)', async () => {
    const d = await database({empty: true})
    const pg = connectPg(d.url)
    opened.push(pg)
    await pg.exec('CREATE TABLE customers (id bigint); CREATE SCHEMA shop')
    const url = `${d.url}?options=${encodeURIComponent('-c search_path=shop')}`
    const store = open(url)
    expect((await store.health()).schemaVersion).toBe(SCHEMA_VERSION)
    expect(await pg.query(`SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'shop' AND tablename = 'products'`)).toEqual([{n: 1}])
  })

  it('says what is wrong with a URL that reaches no database', async () => {
    const u = new URL((await database({empty: true})).url)
    u.pathname = '/no_such_database'
    await expect(open(u.toString()).health()).rejects.toThrow(/cannot open the PostgreSQL store .*no_such_database.*create it first/)
    const r = await run(undefined, ['db', 'info', '--db', 'postgres://nobody:secret@127.0.0.1:1/x'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/cannot open the PostgreSQL store postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/x/)
    expect(r.stderr).not.toContain('secret')
  })

  it('a reader store is a read-only session of the same store', async () => {
    const d = await database()
    const store = open(d.url)
    await store.transaction(async () => await store.config.saveSetting('default_country', 'DE'), {write: true})
    const reader = openReaderStore(store.location)
    opened.push(reader)
    expect(reader.readOnly).toBeTruthy()
    expect(await reader.config.setting('default_country')).toBe('DE')
    await expect(async () => await reader.transaction(async () => await reader.config.saveSetting('x', 'y'), {write: true})).rejects.toThrow(/read-only/)
  })
})

describe('PostgreSQL transactions mean what SQLite transactions mean', () => {
  it('write transactions serialize on the store write lock; with busy timeout 0 a taken lock fails at once as busy (55P03)', async () => {
    const d = await database()
    const a = open(d.url)
    const b = open(d.url)
    b.setBusyTimeout(0)
    let inner: unknown
    await a.transaction(async () => {
      await a.config.saveSetting('holder', 'a')
      try {
        await b.transaction(async () => await b.config.saveSetting('holder', 'b'), {write: true})
      } catch (error) {
        inner = error
      }
    }, {write: true})
    expect((inner as PgError).code).toBe('55P03')
    expect(await b.config.setting('holder')).toBe('a')
    // Once a has committed, b writes.
    await b.transaction(async () => await b.config.saveSetting('holder', 'b'), {write: true})
    expect(await a.config.setting('holder')).toBe('b')
  })

  it('a read transaction reads one snapshot; the catalog version moves for other connections commits only', async () => {
    const d = await database()
    const a = open(d.url)
    const b = open(d.url)
    const v = await a.pricing.catalogVersion()
    await a.transaction(async () => await a.config.saveSetting('k', '1'), {write: true})
    expect(await a.pricing.catalogVersion()).toBe(v)
    const seen = await a.transaction(async () => {
      const first = await a.config.setting('k')
      await b.transaction(async () => await b.config.saveSetting('k', '2'), {write: true})
      return [first, await a.config.setting('k')]
    })
    expect(seen).toEqual(['1', '1'])
    expect(await a.config.setting('k')).toBe('2')
    expect(await a.pricing.catalogVersion()).not.toBe(v)
    // A transaction that wrote nothing moves nothing.
    const w = await b.pricing.catalogVersion()
    await a.transaction(async () => await a.config.setting('k'), {write: true})
    expect(await b.pricing.catalogVersion()).toBe(w)
  })

  it('the catalog version moves for catalog and configuration writes and for a lock changed or deleted: not for new locks or user countries', async () => {
    const d = await database()
    const a = open(d.url)
    const b = open(d.url)
    const v = await a.pricing.catalogVersion()
    await b.transaction(async () => {
      await b.pricing.saveQuotes([lock('carol')])
      await b.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: 'carol'}])
    }, {write: true})
    expect(await a.pricing.catalogVersion()).toBe(v)
    // A server remembers the lock rows it read while the version stays: a change or a delete moves it.
    await b.transaction(async () => await b.pricing.saveQuotes([lock('carol', {country: 'FR'})]), {write: true})
    const changed = await a.pricing.catalogVersion()
    expect(changed).toBeGreaterThan(v)
    await b.pricing.deleteLocks(['carol'])
    const deleted = await a.pricing.catalogVersion()
    expect(deleted).toBeGreaterThan(changed)
    await b.transaction(async () => await b.config.saveSetting('default_country', 'FR'), {write: true})
    expect(await a.pricing.catalogVersion()).toBeGreaterThan(deleted)
  })

  it("a server's first attempt reads no lock it does not remember (memoryOnly); a lock-writing transaction's read remembers the locks others made, never its own claims", async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    a.pricing.rememberLocks!(100)
    await b.transaction(async () => {
      await b.pricing.loadLocks(['made'])
      await b.pricing.saveQuotes([lock('made')])
    }, {write: true})
    // Not remembered: answered as absent without a read; the server prices the request again
    // in a lock-writing transaction. Its first run claims blind (reads nothing); asking again
    // for a key it claimed itself makes it run again reading first, and that read finds it.
    expect(await a.pricing.loadLocks(['made'], {memoryOnly: true})).toEqual([undefined])
    const runs: unknown[][] = []
    await expect(
      a.transaction(
        async () => {
          runs.push((await a.pricing.loadLocks(['made', 'mine'])).map((l) => l?.lock_key))
          await a.pricing.saveQuotes([lock('mine')])
          // Its own claim, read back (sent with this read): visible here, gone with a rollback.
          expect((await a.pricing.loadLocks(['mine']))[0]?.lock_key).toBe('mine')
          throw new Error('rolled back')
        },
        {locksOnly: true, write: true},
      ),
    ).rejects.toThrow('rolled back')
    expect(runs).toEqual([[undefined, undefined], ['made', undefined]])
    expect([a.readFirstRetries, a.lostClaimRetries]).toEqual([1, 0])
    expect((await a.pricing.loadLocks(['made'], {memoryOnly: true}))[0]?.lock_key).toBe('made')
    expect(await a.pricing.loadLocks(['mine'], {memoryOnly: true})).toEqual([undefined])
    expect(await a.pricing.loadLocks(['mine'])).toEqual([undefined])
  })

  it("a server's lock-writing run claims what it does not remember without reading it: the locks it makes are remembered; one that exists loses and the run goes again reading first; claims that cannot go alone make it do so too; a server whose runs keep meeting locks it does not remember reads first", async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    a.pricing.rememberLocks!(100)
    const locksOnly = {locksOnly: true, write: true}
    const country = (userId: string) => ({at: '2026-01-01T00:00:00.000Z', country: 'DE', userId})
    // Two chunks of new users: their claims and countries join one statement, the commit.
    const runs: unknown[][] = []
    await a.transaction(async () => {
      runs.push(await a.pricing.loadLocks(['n1', 'n2']))
      await a.pricing.saveQuotes([lock('n1'), lock('n2')])
      await a.pricing.saveUserCountries([country('n1'), country('n2')])
      runs.push(await a.pricing.loadLocks(['n3']))
      await a.pricing.saveQuotes([lock('n3')])
      await a.pricing.saveUserCountries([country('n3')])
    }, locksOnly)
    expect(runs).toEqual([[undefined, undefined], [undefined]])
    expect([a.readFirstRetries, a.lostClaimRetries, a.lockWriteRetries]).toEqual([0, 0, 0])
    expect(await b.pricing.userCountries(['n1', 'n2', 'n3'])).toEqual(['DE', 'DE', 'DE'])
    // Committed, so remembered: the user's next request is answered without a transaction.
    expect((await a.pricing.loadLocks(['n1', 'n2', 'n3'], {memoryOnly: true})).map((l) => l?.lock_key)).toEqual(['n1', 'n2', 'n3'])

    // A lock another writer made, which a does not remember: its blind claim loses, the new
    // user's beside it is made (and its country), and the run again reads the one that won.
    await claimElsewhere(b, 'old')
    const seen: unknown[][] = []
    await a.transaction(async () => {
      const found = await a.pricing.loadLocks(['old', 'new'])
      seen.push(found.map((l) => l?.country))
      const absent = ['old', 'new'].filter((_, i) => !found[i])
      await a.pricing.saveQuotes(absent.map((u) => lock(u, {country: 'US'})))
      await a.pricing.saveUserCountries(absent.map(country))
    }, locksOnly)
    expect(seen).toEqual([[undefined, undefined], ['KW', 'US']])
    expect([a.readFirstRetries, a.lostClaimRetries]).toEqual([0, 1])
    expect((await b.pricing.loadLocks(['old', 'new'])).map((l) => l?.country)).toEqual(['KW', 'US'])
    expect(await b.pricing.userCountries(['old', 'new'])).toEqual([undefined, 'DE'])

    // Runs that keep meeting locks the server does not remember (after a restart, users going
    // back and forth between instances) make it read first; runs of new users, blind again.
    const firstRuns: unknown[] = []
    const price = async (user: string) => {
      let first = true
      await a.transaction(async () => {
        const [found] = await a.pricing.loadLocks([user])
        if (first) firstRuns.push(found?.country)
        first = false
        if (!found) await a.pricing.saveQuotes([lock(user)])
      }, locksOnly)
    }
    for (let i = 0; i < 20; i++) {
      await claimElsewhere(b, `cold-${i}`)
      await price(`cold-${i}`)
    }
    const switched = firstRuns.indexOf('KW')
    expect(switched).toBeGreaterThan(0)
    expect(firstRuns.slice(0, switched).every((c) => c === undefined) && firstRuns.slice(switched).every((c) => c === 'KW')).toBe(true)
    expect(a.lostClaimRetries).toBe(1 + switched)
    firstRuns.length = 0
    for (let i = 0; i < 40; i++) await price(`fresh-${i}`)
    await claimElsewhere(b, 'cold-again')
    await price('cold-again')
    expect(firstRuns.at(-1)).toBeUndefined()
    expect(a.lostClaimRetries).toBe(2 + switched)

    // Claims with another write (a read after them would do as well) cannot go alone: the run
    // goes again reading first, and so do the runs after it for a while.
    const c = open(d.url) as PgStore
    c.pricing.rememberLocks!(100)
    const [id] = await c.experiments.insert(
      [{allocation: 'thompson', arms: [{id: 'baseline', multiplier: null, products: null, usd_price_minor: null}, {id: '1', multiplier: 0.8, products: null, usd_price_minor: null}], audience_id: null, countries: [], name: 'e', product_ids: [], seed: 1, type: 'price'}],
      '2026-01-01T00:00:00.000Z',
    )
    const exposed: unknown[][] = []
    await claimElsewhere(b, 'seen-by-b')
    await c.transaction(async () => {
      exposed.push((await c.pricing.loadLocks(['vis', 'seen-by-b'])).map((l) => l?.country))
      await c.pricing.saveQuotes([lock('vis')])
      await c.experiments.recordExposures([{anonymous: false, armId: '1', at: 10, experimentId: id, visitor: 'vis'}])
    }, locksOnly)
    expect(exposed).toEqual([[undefined, undefined], [undefined, 'KW']])
    expect([c.readFirstRetries, c.lostClaimRetries]).toEqual([1, 0])
    expect(await b.experiments.exposuresOf(id, ['vis'])).toEqual(['1'])
    await claimElsewhere(b, 'later')
    const later: unknown[] = []
    await c.transaction(async () => {
      later.push((await c.pricing.loadLocks(['later']))[0]?.country)
    }, locksOnly)
    expect(later).toEqual(['KW'])
    expect(c.lostClaimRetries).toBe(0)
  })

  it("the locks a server's claim made are remembered as they are stored, for a group of a few (VALUES rows) and a larger one (arrays)", async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    a.pricing.rememberLocks!(100)
    const shapes = (prefix: string, n: number) =>
      Array.from({length: n}, (_, i) => {
        const key = `${prefix}-${i}`
        if (i % 4 === 1) return lock(key, {anonymous: true, country: 'US', currency: 'USD', ip: `10.0.0.${i}`})
        if (i % 4 === 2) return lock(key, {arm_id: 'x0.8', experiment_id: 7, package_id: 'team', updated_at: '2026-01-02T00:00:00.000Z'})
        if (i % 4 === 3) return lock(key, {arm_id: 2, country: 'JP', currency: 'JPY', experiment_id: 7})
        return lock(key)
      })
    for (const group of [shapes('few', 4), shapes('many', 17)]) {
      const keys = group.map((l) => l.lock_key)
      await a.transaction(async () => {
        expect(await a.pricing.loadLocks(keys)).toEqual(keys.map(() => undefined))
        await a.pricing.saveQuotes(group)
        await a.pricing.saveUserCountries(group.map((l) => ({at: l.created_at, country: l.country, userId: l.lock_key})))
      }, {locksOnly: true, write: true})
      const stored = await b.pricing.loadLocks(keys)
      expect(stored).toEqual(group)
      expect(await a.pricing.loadLocks(keys, {memoryOnly: true})).toEqual(stored)
      expect(await b.pricing.userCountries(keys)).toEqual(group.map((l) => l.country))
    }
    expect([a.readFirstRetries, a.lostClaimRetries]).toEqual([0, 0])
  })

  it("a lock-writing transaction's claims and users' countries are written together or not at all (one statement, no BEGIN)", async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const admin = connectPg(d.url)
    opened.push(admin)
    await admin.exec(`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.user_id = 'boom' THEN RAISE EXCEPTION 'no boom'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse_boom()`)
    const price = async (user: string) =>
      await a.transaction(
        async () => {
          expect(await a.pricing.loadLocks([user])).toEqual([undefined])
          await a.pricing.saveQuotes([lock(user)])
          await a.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: user}])
        },
        {locksOnly: true, write: true},
      )
    await expect(price('boom')).rejects.toThrow('no boom')
    expect(await a.pricing.loadLocks(['boom'])).toEqual([undefined])
    await price('fine')
    expect((await a.pricing.loadLocks(['fine']))[0]?.lock_key).toBe('fine')
    expect(await a.pricing.userCountries(['fine'])).toEqual(['DE'])
    expect([a.lockWriteRetries, a.lostClaimRetries]).toEqual([0, 0])
  })

  it('lock-writing transactions (locksOnly): new locks claimed without the write lock; a lost claim runs again so and reads the winner, any other write runs again with the write lock', async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    const locksOnly = {locksOnly: true, write: true}
    // Two writers of locks at once: b writes while a's transaction is open.
    await a.transaction(async () => {
      expect(await a.pricing.loadLocks(["o'neil\\x"])).toEqual([undefined])
      await b.transaction(async () => {
        expect(await b.pricing.loadLocks(['dora'])).toEqual([undefined])
        await b.pricing.saveQuotes([lock('dora')])
        await b.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: 'dora'}])
      }, locksOnly)
      await a.pricing.saveQuotes([lock("o'neil\\x")])
      await a.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'JP', userId: "o'neil\\x"}])
    }, locksOnly)
    expect((await a.pricing.loadLocks(["o'neil\\x", 'dora'])).map((l) => l?.lock_key)).toEqual(["o'neil\\x", 'dora'])
    expect(await a.pricing.userCountries(["o'neil\\x", 'dora'])).toEqual(['JP', 'DE'])
    expect([a.lockWriteRetries, b.lockWriteRetries]).toEqual([0, 0])

    // A claim that loses (b made the lock after a read none) writes nothing; a runs again, still
    // without the write lock, and its read finds b's lock (the quote it answers is the one stored).
    const seen: unknown[] = []
    await a.transaction(async () => {
      const [found] = await a.pricing.loadLocks(['erin'])
      seen.push(found?.country)
      if (found) return
      await b.transaction(async () => {
        await b.pricing.loadLocks(['erin'])
        await b.pricing.saveQuotes([lock('erin', {country: 'KW'})])
      }, locksOnly)
      await a.pricing.saveQuotes([lock('erin', {country: 'US'})])
      await a.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'US', userId: 'erin'}])
    }, locksOnly)
    expect(seen).toEqual([undefined, 'KW'])
    expect([a.lostClaimRetries, a.lockWriteRetries]).toEqual([1, 0])
    expect((await a.pricing.loadLocks(['erin']))[0]?.country).toBe('KW')
    expect(await a.pricing.userCountries(['erin'])).toEqual([undefined])

    // A lock that exists changes, a lock deleted, another table written: run again with the write lock.
    const attempts: string[] = []
    await a.transaction(async () => {
      attempts.push('change')
      await a.pricing.loadLocks(['dora'])
      await a.pricing.saveQuotes([lock('dora', {country: 'FR'})])
    }, locksOnly)
    await a.transaction(async () => {
      attempts.push('delete')
      await a.pricing.deleteLocks(['erin'])
    }, locksOnly)
    await a.transaction(async () => {
      attempts.push('setting')
      await a.config.saveSetting('k', 'v')
    }, locksOnly)
    expect(attempts).toEqual(['change', 'change', 'delete', 'delete', 'setting', 'setting'])
    expect(a.lockWriteRetries).toBe(3)
    expect((await a.pricing.loadLocks(['dora', 'erin'])).map((l) => l?.country)).toEqual(['FR', undefined])
    expect(await a.config.setting('k')).toBe('v')
  })

  it('lock writers take no store-wide lock: they claim new locks while another process holds the write lock', async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    await b.setBusyTimeout(0) // as serve: a taken write lock would fail at once (55P03)
    await a.transaction(async () => {
      await a.config.saveSetting('holder', 'a')
      await b.transaction(async () => {
        await b.pricing.loadLocks(['gus'])
        await b.pricing.saveQuotes([lock('gus', {country: 'JP'})])
        await b.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'JP', userId: 'gus'}])
      }, {locksOnly: true, write: true})
      // Committed while a still holds the write lock.
      expect((await a.pricing.loadLocks(['gus']))[0]?.country).toBe('JP')
    }, {write: true})
    expect([b.lockWriteRetries, b.lostClaimRetries]).toEqual([0, 0])
  })

  /** Another server's price request claims `user`'s new lock (in KW) in a transaction of its own. */
  const claimElsewhere = async (b: PgStore, user: string) =>
    await b.transaction(async () => {
      await b.pricing.loadLocks([user])
      await b.pricing.saveQuotes([lock(user, {country: 'KW'})])
    }, {locksOnly: true, write: true})

  it("a lock-writing transaction writes the exposures of the visitors whose new lock it claims without the write lock; a lost claim takes them with it; any other exposure runs again with the write lock", async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    await b.setBusyTimeout(0) // as serve: a taken write lock would fail at once (55P03)
    const [id] = await a.experiments.insert(
      [{allocation: 'thompson', arms: [{id: 'baseline', multiplier: null, products: null, usd_price_minor: null}, {id: '1', multiplier: 0.8, products: null, usd_price_minor: null}], audience_id: null, countries: [], name: 'e', product_ids: [], seed: 1, type: 'price'}],
      '2026-01-01T00:00:00.000Z',
    )
    const x = (visitor: string, armId = '1') => ({anonymous: false, armId, at: 10, experimentId: id, visitor})
    const locksOnly = {locksOnly: true, write: true}
    // New users with their exposures, committed while another process holds the write lock.
    await a.transaction(async () => {
      await a.config.saveSetting('holder', 'a')
      await b.transaction(async () => {
        expect(await b.pricing.loadLocks(['kim', 'lou'])).toEqual([undefined, undefined])
        await b.pricing.saveQuotes([lock('kim'), lock('lou')])
        await b.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: 'kim'}, {at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: 'lou'}])
        expect(await b.experiments.recordExposures([x('kim'), x('lou', 'baseline')])).toEqual([{change: 'new'}, {change: 'new'}])
      }, locksOnly)
    }, {write: true})
    expect([b.lockWriteRetries, b.lostClaimRetries]).toEqual([0, 0])
    expect(await a.experiments.exposuresOf(id, ['lou', 'kim'])).toEqual(['baseline', '1'])

    // A claim that loses: its exposure goes with it; the run again finds the winner's lock.
    const seen: unknown[] = []
    await a.transaction(async () => {
      const [found] = await a.pricing.loadLocks(['max'])
      seen.push(found?.country)
      if (found) return
      await claimElsewhere(b, 'max')
      await a.pricing.saveQuotes([lock('max')])
      await a.experiments.recordExposures([x('max')])
    }, locksOnly)
    expect(seen).toEqual([undefined, 'KW'])
    expect([a.lostClaimRetries, a.lockWriteRetries]).toEqual([1, 0])
    expect(await a.experiments.exposuresOf(id, ['max'])).toEqual([undefined])

    // The exposure of a visitor whose lock the transaction did not claim: run again with the write lock.
    let runs = 0
    await a.transaction(async () => {
      runs++
      expect(await a.experiments.recordExposures([x('kim', 'baseline')])).toEqual([{change: 'moved', previous: '1'}])
    }, locksOnly)
    expect([runs, a.lockWriteRetries]).toEqual([2, 1])
    expect(await a.experiments.exposuresOf(id, ['kim'])).toEqual(['baseline'])
  })

  it('a write transaction claims the locks it read as absent: one that loses to a lock writer fails busy (plain) or runs again (locksOnly) and never overwrites the stored lock', async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    // A plain write transaction (a command): busy (40001), nothing written, the winner's lock kept.
    let failed: unknown
    try {
      await a.transaction(async () => {
        expect(await a.pricing.loadLocks(['hal'])).toEqual([undefined])
        await claimElsewhere(b, 'hal')
        await a.pricing.saveQuotes([lock('hal', {country: 'US'})])
        await a.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'US', userId: 'hal'}])
      }, {write: true})
    } catch (error) {
      failed = error
    }
    expect((failed as PgError).code).toBe('40001')
    expect((await a.pricing.loadLocks(['hal']))[0]?.country).toBe('KW')
    expect(await a.pricing.userCountries(['hal'])).toEqual([undefined])

    // A lock-writing transaction run again with the write lock (it also changes a lock) claims
    // as well: it loses to b's new lock, runs again and reads it.
    await a.transaction(async () => await a.pricing.saveQuotes([lock('ivy')]), {write: true})
    const seen: unknown[] = []
    await a.transaction(async () => {
      const [ivy, jo] = await a.pricing.loadLocks(['ivy', 'jo'])
      seen.push(jo?.country)
      if (seen.length === 2) await claimElsewhere(b, 'jo')
      await a.pricing.saveQuotes([{...ivy!, country: 'FR'}, ...(jo ? [] : [lock('jo', {country: 'US'})])])
    }, {locksOnly: true, write: true})
    // Locks only, then with the write lock (ivy changes) losing jo, then again finding it.
    expect(seen).toEqual([undefined, undefined, 'KW'])
    expect([a.lockWriteRetries, a.lostClaimRetries]).toEqual([1, 1])
    expect((await a.pricing.loadLocks(['ivy', 'jo'])).map((l) => l?.country)).toEqual(['FR', 'KW'])
  })

  it('a lock-writing group that servers keep beating runs again as long as each run loses new keys (a batch group of many new users), and fails busy only when it keeps losing the same ones', async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    /** a prices `users` while b makes the lock of the first one absent in each run; `readAfter`: a read after the claims. The runs it took. */
    const beaten = async (users: string[], readAfter: boolean) => {
      let runs = 0
      await a.transaction(async () => {
        const found = await a.pricing.loadLocks(users)
        const absent = users.filter((_, i) => !found[i])
        runs++
        if (absent.length > 0) await claimElsewhere(b, absent[0])
        await a.pricing.saveQuotes(absent.map((u) => lock(u, {country: 'US'})))
        if (readAfter) await a.pricing.loadLocks(['after'])
      }, {locksOnly: true, write: true})
      return runs
    }
    // 30 users, more runs than the limit on runs that make no progress: each run of a's group
    // loses the claim of the next user to b, and the next run finds that lock stored.
    // (A read after the claims sends them inside the transaction: a lost one takes the others with it.)
    const users = Array.from({length: 30}, (_, i) => `grp-${i}`)
    expect(await beaten(users, true)).toBe(31)
    expect(a.lostClaimRetries).toBe(30)
    expect(new Set((await a.pricing.loadLocks(users)).map((l) => l?.country))).toEqual(new Set(['KW']))

    // Claims that are the run's lone statement (its commit) make the locks they can: a lost one
    // costs one more run, which finds it stored.
    const more = Array.from({length: 30}, (_, i) => `lone-${i}`)
    expect(await beaten(more, false)).toBe(2)
    expect(a.lostClaimRetries).toBe(31)
    expect((await a.pricing.loadLocks(more)).map((l) => l?.country)).toEqual(['KW', ...more.slice(1).map(() => 'US')])

    // Losing the same key again and again (a lock deleted and made anew by another writer every
    // run) is no progress: busy after 20 runs.
    let failed: unknown
    let runs = 0
    try {
      await a.transaction(async () => {
        runs++
        await b.transaction(async () => await b.pricing.deleteLocks(['same']), {write: true})
        await a.pricing.loadLocks(['same'])
        await claimElsewhere(b, 'same')
        await a.pricing.saveQuotes([lock('same', {country: 'US'})])
      }, {locksOnly: true, write: true})
    } catch (error) {
      failed = error
    }
    expect((failed as PgError).code).toBe('40001')
    expect(runs).toBe(21)
  })

  it('a lock claimed in a nested transaction that rolls back is claimed anew when saved again: never over a lock another writer made meanwhile', async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    let failed: unknown
    try {
      await a.transaction(async () => {
        await expect(async () =>
          await a.transaction(async () => {
            await a.pricing.loadLocks(['max'])
            await a.pricing.saveQuotes([lock('max', {country: 'US'})])
            throw new Error('this request fails after its lock was written')
          }),
        ).rejects.toThrow('this request fails')
        await claimElsewhere(b, 'max')
        await a.pricing.saveQuotes([lock('max', {country: 'US'})])
      }, {write: true})
    } catch (error) {
      failed = error
    }
    expect((failed as PgError).code).toBe('40001')
    expect((await a.pricing.loadLocks(['max']))[0]?.country).toBe('KW')
  })

  it('the catalog version another store reads stays for new locks, user and key-use writes (as serve makes them); a changed or deleted lock and a catalog write move it', async () => {
    const d = await database()
    const a = open(d.url) as PgStore
    const b = open(d.url) as PgStore
    const v = await b.pricing.catalogVersion()
    // As serve writes: new locks and countries, in lock-writing transactions.
    await a.transaction(async () => {
      await a.pricing.loadLocks(['kim', 'lee'])
      await a.pricing.saveQuotes([lock('kim'), lock('lee')])
      await a.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'DE', userId: 'kim'}])
    }, {locksOnly: true, write: true})
    expect(await b.pricing.catalogVersion()).toBe(v)
    // A changed lock (with the write lock), a deleted one: another server may remember them.
    await a.transaction(async () => {
      await a.pricing.loadLocks(['kim'])
      await a.pricing.saveQuotes([lock('kim', {country: 'FR'})])
    }, {locksOnly: true, write: true})
    const changed = await b.pricing.catalogVersion()
    expect(changed).toBeGreaterThan(v)
    await a.transaction(async () => await a.pricing.deleteLocks(['lee']), {write: true})
    const deleted = await b.pricing.catalogVersion()
    expect(deleted).toBeGreaterThan(changed)
    // The server's key-use flush.
    const [key] = await a.keys.insert([{created_at: '2026-01-01T00:00:00.000Z', hash: 'h'.repeat(64), name: 'k', prefix: 'pk_test'}])
    const w = await b.pricing.catalogVersion()
    expect(w).toBeGreaterThan(deleted) // a new key is configuration
    expect(await a.keys.recordUse([[key!.id, '2026-01-02T00:00:00.000Z']])).toBe(true)
    expect((await a.keys.find([{id: key!.id}]))[0]?.last_used_at).toBe('2026-01-02T00:00:00.000Z')
    expect(await b.pricing.catalogVersion()).toBe(w)
    await a.transaction(async () => await a.config.saveSetting('default_country', 'FR'), {write: true})
    expect(await b.pricing.catalogVersion()).not.toBe(w)
  })

  it('a locked read on its own is outside the transaction; what follows it reads one snapshot', async () => {
    const d = await database()
    const a = open(d.url)
    const b = open(d.url)
    await a.transaction(async () => await a.pricing.saveQuotes([lock('fay')]), {write: true})
    const seen = await a.transaction(async () => {
      const first = (await a.pricing.loadLocks(['fay']))[0]?.country
      await b.transaction(async () => await b.config.saveSetting('k', '1'), {write: true})
      const second = await a.config.setting('k')
      await b.transaction(async () => await b.config.saveSetting('k', '2'), {write: true})
      return [first, second, await a.config.setting('k')]
    })
    expect(seen).toEqual(['DE', '1', '1'])
  })

  it('a pool (serve --pool-size): transactions open side by side, each on its own connections with its own claims and savepoints; one more waits for a slot', async () => {
    const d = await database()
    const s = openStore(d.url, {poolSize: 2}) as PgStore
    opened.push(s)
    expect(s.poolSize).toBe(2)
    // Each step waits for the other transaction's: with one connection the second never begins.
    const step = () => {
      let go!: () => void
      const reached = new Promise<void>((r) => (go = r))
      const bounded = Promise.race([reached, new Promise<never>((_, no) => setTimeout(() => no(new Error('the other transaction never got that far: they ran one at a time')), 3000))])
      return {bounded, go}
    }
    const [aRead, bRead, aSaved] = [step(), step(), step()]
    const price = (user: string, mine: () => void, theirs: Promise<void>, after?: () => void) =>
      s.transaction(
        async () => {
          expect(await s.pricing.loadLocks([user])).toEqual([undefined])
          mine()
          await theirs
          await s.pricing.saveQuotes([lock(user)])
          after?.()
          // A nested transaction is a savepoint of its own slot's transaction.
          await s.transaction(async () => await s.pricing.saveUserCountries([{at: '2026-01-01T00:00:00.000Z', country: 'FR', userId: user}]))
          return [...s.claimed]
        },
        {locksOnly: true, write: true},
      )
    const [a, b] = await Promise.all([price('ann', aRead.go, bRead.bounded, aSaved.go), (async () => {
      await aRead.bounded
      return await price('bob', bRead.go, aSaved.bounded)
    })()])
    expect([a, b]).toEqual([['ann'], ['bob']])
    expect((await s.pricing.loadLocks(['ann', 'bob'])).map((l) => l?.lock_key)).toEqual(['ann', 'bob'])
    expect(await s.pricing.userCountries(['ann', 'bob'])).toEqual(['FR', 'FR'])
    expect([s.lockWriteRetries, s.lostClaimRetries]).toEqual([0, 0])

    // Both slots held: a third transaction begins when one of them ends.
    const order: string[] = []
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const hold = (name: string) => s.transaction(async () => {
      await s.config.setting('k')
      order.push(`${name} open`)
      await held
      order.push(`${name} ends`)
    })
    const one = hold('one')
    const two = hold('two')
    const third = s.transaction(async () => {
      order.push('third')
      return await s.config.setting('k')
    })
    await new Promise((r) => setTimeout(r, 200))
    // The two held transactions run side by side, so either may open first.
    expect([...order].sort()).toEqual(['one open', 'two open'])
    release()
    await Promise.all([one, two, third])
    expect(order.indexOf('third')).toBeGreaterThan(order.indexOf('one ends'))
  })

  it('a nested transaction that fails rolls back its own writes only', async () => {
    const store = open((await database()).url)
    await store.transaction(async () => {
      await store.config.saveSetting('outer', '1')
      await expect(async () =>
        await store.transaction(async () => {
          await store.config.saveSetting('inner', '1')
          await store.config.saveSetting('bad', null as unknown as string) // NOT NULL
        }),
      ).rejects.toThrow()
      await store.config.saveSetting('after', '1')
    }, {write: true})
    expect([await store.config.setting('outer'), await store.config.setting('inner'), await store.config.setting('after')]).toEqual(['1', undefined, '1'])
  })
})

describe('a write transaction that cannot get the write lock in time', () => {
  it('fails busy (lock_timeout, 55P03) and leaves the connection usable', async () => {
    const d = await database()
    const a = open(d.url)
    const b = open(d.url)
    b.setBusyTimeout(50)
    let failed: unknown
    await a.transaction(async () => {
      await a.config.saveSetting('holder', 'a')
      try {
        await b.transaction(async () => await b.config.saveSetting('holder', 'b'), {write: true})
      } catch (error) {
        failed = error
      }
      // b's failed BEGIN left no transaction open: it reads (the committed state) at once.
      expect(await b.config.setting('holder')).toBeUndefined()
    }, {write: true})
    expect((failed as PgError).code).toBe('55P03')
    await b.transaction(async () => await b.config.saveSetting('holder', 'b'), {write: true})
    expect(await a.config.setting('holder')).toBe('b')
  })
})
