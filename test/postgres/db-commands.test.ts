import {afterEach, describe, expect, it} from 'vitest'

import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {connectPg} from '../../src/store/postgres/client.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'
import {run} from '../helpers/run.js'

/** `db info | check | migrate` on a PostgreSQL store (docs/postgres.md), in-process: what is tested is the commands' output. */

const made: PgDatabase[] = []
afterEach(async () => {
  for (const d of made.splice(0)) await d.drop()
})
async function database(options?: {empty?: boolean}): Promise<PgDatabase> {
  const d = await freshPgDatabase(options)
  made.push(d)
  return d
}

describe('db commands on PostgreSQL', () => {
  it('db migrate creates the store in an empty database (opening it does, as on SQLite), then has nothing to do', async () => {
    const {url} = await database({empty: true})
    const first = await run(url, ['db', 'migrate', '--json'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.json).toMatchObject({success: true, to: SCHEMA_VERSION})
    const pg = connectPg(url)
    try {
      expect(await pg.query(`SELECT value FROM pricectl_meta WHERE key = 'schema_version'`)).toEqual([{value: String(SCHEMA_VERSION)}])
    } finally {
      await pg.close()
    }
    const again = await run(undefined, ['db', 'migrate', '--json', '--db', url])
    expect(again.json).toMatchObject({from: SCHEMA_VERSION, message: `store is at schema version ${SCHEMA_VERSION}; nothing to do`, to: SCHEMA_VERSION})
  })

  it('db info: the URL without password, server version, database and schema, schema version, counts', async () => {
    const d = await database()
    const r = await run(d.url, ['db', 'info', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({
      counts: {charges: 0, coupons: 0, experiments: 0, locks: 0, products: 0, subscriptions: 0, users: 0},
      database: d.name,
      journal_mode: 'postgresql',
      latest_schema_version: SCHEMA_VERSION,
      path: d.url,
      read_only: null,
      schema: 'public',
      schema_version: SCHEMA_VERSION,
      success: true,
    })
    expect(r.json.counts.fx_rates).toBeGreaterThan(100)
    expect(r.json.server_version).toMatch(/^\d+/)
    expect(r.json.size_bytes).toBeGreaterThan(0)
    const table = await run(d.url, ['db', 'info'])
    expect(table.stdout).toMatch(/server\s+│ PostgreSQL \d+/)
  })

  it('db check: ok on a sound store; a broken foreign key, a charge of a product that is gone and a sequence behind its ids fail it (exit 1) with what to do', async () => {
    const d = await database()
    const ok = await run(d.url, ['db', 'check', '--json'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.json).toEqual({foreign_key_violations: 0, integrity: 'ok', ok: true, schema_version: SCHEMA_VERSION, success: true})
    const pg = connectPg(d.url)
    try {
      await pg.exec(`INSERT INTO products (id, api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES (7, 'p', 'P', 100, 'month', 1, 'x', 'x');
        SET session_replication_role = replica;
        INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (999, 'DE', 'EUR', 1, 0);
        SET session_replication_role = origin;
        INSERT INTO charges (user_id, origin, origin_id, product_id, status, latest_event_timestamp, latest_event_id) VALUES ('u1', 'gateway_a', 'ch_1', 7, 'succeeded', 1, 'e1'), ('u1', 'gateway_a', 'ch_2', 998, 'succeeded', 1, 'e2')`)
    } finally {
      await pg.close()
    }
    const bad = await run(d.url, ['db', 'check'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('1 row(s) of country_prices break country_prices_product_id_fkey')
    expect(bad.stderr).toContain('the id sequence of products is behind its largest id')
    // The product of a charge is checked although no constraint keeps it (schema version 8).
    expect(bad.stderr).toContain('1 row(s) of charges break charges.product_id -> products.id')
    expect(bad.stderr).toContain('2 foreign key violations')
  })
})
