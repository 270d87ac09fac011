import {OperationalError} from '../../errors.js'
import {SCHEMA_VERSION} from '../migrations.js'
import type {PgConn} from './client.js'
import {PG_META_SQL, PG_V1_SQL, PG_V2_SQL, PG_V3_SQL, PG_V4_SQL, PG_V5_SQL, PG_V6_SQL, PG_V7_SQL, PG_V8_SQL} from './schema.js'
import {recordExponentsPg, seedDefaultsPg} from './seed.js'

export type PgMigration = {name: string; up: (pg: PgConn) => Promise<void>; version: number}

/**
 * Versioned migrations of the PostgreSQL adapter, with SQLite's version numbers
 * (../migrations.ts): a store at version N has the same tables whichever adapter holds it.
 * Never edit a released migration: add the next version (test/store/postgres-migrations
 * checks both lists end at the same version).
 */
export const PG_MIGRATIONS: PgMigration[] = [
  {
    name: 'initial schema',
    async up(pg) {
      await pg.exec(PG_V1_SQL)
      await seedDefaultsPg(pg)
    },
    version: 1,
  },
  {
    name: 'currency exponents recorded per store; gateway currency rule overrides',
    async up(pg) {
      await pg.exec(PG_V2_SQL)
      await recordExponentsPg(pg)
    },
    version: 2,
  },
  {
    name: 'change history: changes and change_rows (docs/history.md)',
    async up(pg) {
      await pg.exec(PG_V3_SQL)
    },
    version: 3,
  },
  {
    name: 'revenue events in any order: field order per record, pending partial updates (docs/revenue.md)',
    async up(pg) {
      await pg.exec(PG_V4_SQL)
    },
    version: 4,
  },
  {
    name: 'subscription history: one row per event a subscription took (docs/revenue.md)',
    async up(pg) {
      await pg.exec(PG_V5_SQL)
    },
    version: 5,
  },
  {
    name: 'tax: charges keep gross, tax and net; subscriptions and their history keep their tax (docs/revenue.md)',
    async up(pg) {
      await pg.exec(PG_V6_SQL)
    },
    version: 6,
  },
  {
    name: 'tax in prices: operator tax rates, tax behaviour of the store, countries and products (docs/tax.md)',
    async up(pg) {
      await pg.exec(PG_V7_SQL)
    },
    version: 7,
  },
  {
    name: 'no foreign key from charges and subscriptions to products; products delete clears their product_id (docs/postgres.md)',
    async up(pg) {
      await pg.exec(PG_V8_SQL)
    },
    version: 8,
  },
]

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.at(-1)!.version

/** Advisory-lock class of the migration runner (the second key is the schema's hash). */
const MIGRATE_LOCK = 0x7063_6d67 // "pcmg"

/** The schema version of the store on this connection: 0 before the first migration. */
export async function pgSchemaVersion(pg: PgConn): Promise<number> {
  return Number(await pgMeta(pg, 'schema_version') ?? 0)
}

/** A value of pricectl_meta; undefined when the table or the key is missing (a database pricectl never opened). */
export async function pgMeta(pg: PgConn, key: string): Promise<string | undefined> {
  const [{exists}] = await pg.query<{exists: boolean}>(`SELECT to_regclass('pricectl_meta') IS NOT NULL AS exists`)
  if (!exists) return undefined
  return (await pg.query<{value: string}>('SELECT value FROM pricectl_meta WHERE key = $1', [key]))[0]?.value
}

export function checkNotNewerPg(version: number, shown: string): void {
  if (version > SCHEMA_VERSION) {
    throw new OperationalError(`${shown} has schema version ${version}, newer than this pricectl understands (${SCHEMA_VERSION}): upgrade pricectl`)
  }
}

/**
 * Apply every migration newer than the store, each in its own transaction. Safe when
 * several processes open a new store at once: the runner holds a session advisory lock
 * (per schema), and reads the version again once it has it, so the others find the work done.
 */
export async function migratePg(pg: PgConn, shown = 'the store'): Promise<{from: number; to: number}> {
  const from = await pgSchemaVersion(pg)
  checkNotNewerPg(from, shown)
  if (from === SCHEMA_VERSION) return {from, to: from}
  // Wait as long as another process's migration takes (the connection's lock_timeout is for writers).
  const [{timeout}] = await pg.query<{timeout: string}>(`SELECT current_setting('lock_timeout') AS timeout`)
  await pg.exec('SET lock_timeout = 0')
  await pg.query('SELECT pg_advisory_lock($1, hashtext(current_schema()))', [MIGRATE_LOCK])
  try {
    await pg.exec('BEGIN', 'begin')
    await pg.exec(PG_META_SQL)
    await pg.exec(`INSERT INTO pricectl_meta (key, value) VALUES ('store', 'pricectl'), ('schema_version', '0') ON CONFLICT (key) DO NOTHING`)
    await pg.exec('COMMIT', 'commit')
    const current = await pgSchemaVersion(pg)
    checkNotNewerPg(current, shown)
    for (const m of PG_MIGRATIONS) {
      if (m.version <= current) continue
      await pg.exec('BEGIN', 'begin')
      try {
        await m.up(pg)
        await pg.run(`UPDATE pricectl_meta SET value = $1 WHERE key = 'schema_version'`, [String(m.version)])
        await pg.exec('COMMIT', 'commit')
      } catch (error) {
        try {
          await pg.exec('ROLLBACK', 'rollback')
        } catch {}
        throw new OperationalError(`migrating ${shown} to schema version ${m.version} (${m.name}) failed: ${(error as Error).message}; nothing of that version was applied`)
      }
    }
  } finally {
    await pg.query('SELECT pg_advisory_unlock($1, hashtext(current_schema()))', [MIGRATE_LOCK])
    await pg.query(`SELECT set_config('lock_timeout', $1, false)`, [timeout])
  }
  return {from, to: SCHEMA_VERSION}
}
