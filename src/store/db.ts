import {OperationalError} from '../errors.js'
import type {StorePort} from './port.js'
import {isPostgresUrl} from './postgres/client.js'
export {isPostgresUrl, redactUrl} from './postgres/client.js'
import {migratePg} from './postgres/migrations.js'
import {openPgStore} from './postgres/open.js'
import {PgStore} from './postgres/store.js'
import {migrate, type OpenOptions, openSqliteStore, resolveStorePath} from './sqlite/open.js'
import {SqliteStore} from './sqlite/store.js'

// Opening a SQLite store lives in ./sqlite/open.ts (a command on a SQLite store loads no
// PostgreSQL code); it is re-exported here, where every store of either kind is opened.
export {type DB, migrate, type OpenOptions, openSqliteStore, resolveStorePath, schemaVersion} from './sqlite/open.js'

/** An open store: the port (./port.ts), whichever adapter holds it. */
export type Store = StorePort

/**
 * Open the store `--db` (or PRICECTL_DB) names, creating and migrating it: a SQLite file,
 * or the PostgreSQL database of a postgres:// URL (./postgres/open.ts, docs/postgres.md).
 */
export function openStore(flag?: string, options: OpenOptions = {}): Store {
  const location = resolveStorePath(flag)
  if (isPostgresUrl(location)) return openPgStore(location, options)
  return openSqliteStore(location, options)
}

/** The SQLite adapter of a store, for what only a file has (backup, restore, VACUUM INTO); throws on PostgreSQL. */
export function sqliteOf(store: StorePort, what: string): SqliteStore {
  if (store instanceof SqliteStore) return store
  throw new OperationalError(`${what} works on a SQLite store only, and ${store.path} is a PostgreSQL database: see docs/postgres.md`)
}

/** The PostgreSQL adapter of a store, undefined for SQLite (maintenance commands pick their meaning). */
export function postgresOf(store: StorePort): PgStore | undefined {
  return store instanceof PgStore ? store : undefined
}

/** `db migrate`: apply every pending migration of an open store, whichever adapter holds it. */
export function migrateStore(store: StorePort): {from: number; to: number} {
  const pg = postgresOf(store)
  return pg ? migratePg(pg.pg, store.path) : migrate(sqliteOf(store, 'db migrate').db, store.path)
}

/** The SQLite adapter's type, for tests and tools that work on a file's handle (`db`). */
export type {SqliteStore} from './sqlite/store.js'
