import {afterEach, describe, expect, it} from 'vitest'

import {connectPg} from '../../src/store/postgres/client.js'
import {LOAD_LOCKS, USER_COUNTRIES} from '../../src/store/postgres/pricing.js'
import {RECORDS_OF_KEYS, REMOVE_RECORDS} from '../../src/store/postgres/revenue.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'

const made: PgDatabase[] = []
afterEach(async () => {
  for (const d of made.splice(0)) await d.drop()
})

const ROWS = 1000

/**
 * The store prepares its statements by name, and after a few runs the server keeps a generic
 * plan: one made without the keys' count, kept while the table grows. Joined to the keys, such a
 * plan for a table of a thousand rows hashes the keys and scans the whole table (the locks of
 * `serve`'s new users: a sequential scan per request, its cost growing with the table). Each
 * read by key must probe the unique index once per key whatever plan it gets.
 */
describe('reads by key on PostgreSQL', () => {
  it('probe the unique index once per key under a generic plan, never scan the table', async () => {
    const db = await freshPgDatabase()
    made.push(db)
    // One connection: the session's plan_cache_mode and prepared statements stay on it.
    const client = connectPg(db.url)
    try {
      const at = "'2026-01-01T00:00:00Z'"
      await client.exec(`INSERT INTO locks (lock_key, user_id, country, currency, quote_json, created_at, updated_at)
          SELECT 'u' || i, 'u' || i, 'US', 'USD', repeat('x', 300), ${at}, ${at} FROM generate_series(1, ${ROWS}) i;
        INSERT INTO users (user_id, country, created_at, updated_at) SELECT 'u' || i, 'US', ${at}, ${at} FROM generate_series(1, ${ROWS}) i;
        INSERT INTO charges (user_id, origin, origin_id, status, latest_event_timestamp, latest_event_id)
          SELECT 'u' || i, 'gateway_a', 'ch_' || i, 'succeeded', 1, 'e' || i FROM generate_series(1, ${ROWS}) i;
        INSERT INTO subscriptions (user_id, origin, origin_id, status, latest_event_timestamp, latest_event_id)
          SELECT 'u' || i, 'gateway_a', 'sub_' || i, 'active', 1, 'e' || i FROM generate_series(1, ${ROWS}) i;
        ANALYZE;
        SET plan_cache_mode = force_generic_plan`)
      const key = (id: string) => `'${JSON.stringify([{origin: 'gateway_a', origin_id: id, user_id: 'u1'}])}'`
      const reads: [string, string, string, string][] = [
        ['locks', LOAD_LOCKS, "'{u1,u2}'", 'locks_pkey'],
        ['users', USER_COUNTRIES, "'{u1,u2}'", 'users_pkey'],
        ['charges', RECORDS_OF_KEYS('charges', 't.*'), key('ch_1'), 'charges_user_id_origin_origin_id_key'],
        ['subscriptions', RECORDS_OF_KEYS('subscriptions', 't.field_events'), key('sub_1'), 'subscriptions_user_id_origin_origin_id_key'],
        ['charges', REMOVE_RECORDS('charges'), key('ch_1'), 'charges_user_id_origin_origin_id_key'],
      ]
      for (const [i, [table, sql, value, index]] of reads.entries()) {
        await client.exec(`PREPARE q${i} AS ${sql}`)
        const plan = (await client.query<{'QUERY PLAN': string}>(`EXPLAIN EXECUTE q${i}(${value})`)).map((r) => r['QUERY PLAN']).join('\n')
        expect(plan, sql).not.toContain(`Seq Scan on ${table}`)
        expect(plan, sql).toContain(`Index Scan using ${index}`)
      }
    } finally {
      await client.close()
    }
  })
})
