import Database from 'better-sqlite3'
import {chmodSync, closeSync, mkdirSync, openSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, join, resolve} from 'node:path'

import {useRecordedExponents} from '../currency.js'
import {OperationalError} from '../errors.js'
import {noteOpenedStore} from './disk-full.js'
import {loadExponents} from './exponents.js'
import {APPLICATION_ID, identifyStore, openReadOnly, whyReadOnly} from './identify.js'
import {MIGRATIONS, SCHEMA_VERSION} from './migrations.js'
import type {StorePort} from './port.js'
import type {migratePg} from './postgres/migrations.js'
import type {openPgStore} from './postgres/open.js'
import type {PgStore} from './postgres/store.js'
import {SqliteStore} from './sqlite/store.js'
import {isPostgresUrl} from './url.js'
export {isPostgresUrl, redactUrl} from './url.js'

export type DB = Database.Database

/** An open store: the port (./port.ts), whichever adapter holds it. */
export type Store = StorePort

/**
 * `--db` > `PRICECTL_DB` > `$XDG_DATA_HOME/pricectl/pricectl.db` (~/.local/share when unset).
 * A postgres:// (or postgresql://) URL is kept as given: it selects the PostgreSQL adapter.
 */
export function resolveStorePath(flag?: string): string {
  if (flag) return isPostgresUrl(flag) ? flag : resolve(flag)
  if (process.env.PRICECTL_DB) return isPostgresUrl(process.env.PRICECTL_DB) ? process.env.PRICECTL_DB : resolve(process.env.PRICECTL_DB)
  return defaultStorePath()
}

/** The built-in default store: `$XDG_DATA_HOME/pricectl/pricectl.db` (~/.local/share when unset). */
export function defaultStorePath(): string {
  const data = process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share')
  return join(data, 'pricectl', 'pricectl.db')
}

/** Nothing is at this SQLite path yet (openStore would make a store there); false for a postgres:// URL. */
export function isMissingStore(location: string): boolean {
  return !isPostgresUrl(location) && location !== ':memory:' && identifyStore(location).kind === 'missing'
}

export type OpenOptions = {
  /** Apply pending migrations (default true). `db info` opens without. */
  migrate?: boolean
  /**
   * Told when a SQLite store was made (it did not exist), for a note. Whether a missing store
   * may be made at all is the command line's rule (src/cli/base.ts): here it always is,
   * folders included.
   */
  onCreate?: (path: string) => void
  /**
   * PostgreSQL: the session's statement_timeout in ms unless the URL sets `statement_timeout`
   * (`serve`: SERVE_STATEMENT_TIMEOUT_MS); none by default. SQLite has no such thing.
   */
  statementTimeoutMs?: number
  /** PostgreSQL: how many transactions may be open at once, each on its own connections (default 1). SQLite has one connection. */
  poolSize?: number
}

/**
 * Open the store `--db` (or PRICECTL_DB) names, creating and migrating it: a SQLite file,
 * or the PostgreSQL database of a postgres:// URL (./postgres/open.ts, docs/postgres.md).
 */
export function openStore(flag?: string, options: OpenOptions = {}): Store {
  const location = resolveStorePath(flag)
  // A full disk's message names the folder that filled up (disk-full.ts): it needs to know where the store is.
  if (isPostgresUrl(location)) {
    noteOpenedStore({kind: 'postgres'})
    return postgresAdapter().openPgStore(location, options)
  }
  noteOpenedStore({kind: 'sqlite', path: location})
  return openSqliteStore(location, options)
}

/** What this module uses of the PostgreSQL adapter (./postgres/). */
type PostgresAdapter = {migratePg: typeof migratePg; openPgStore: typeof openPgStore; PgStore: typeof PgStore}

async function importPostgresAdapter(): Promise<PostgresAdapter> {
  const [{migratePg}, {openPgStore}, {PgStore}] = await Promise.all([import('./postgres/migrations.js'), import('./postgres/open.js'), import('./postgres/store.js')])
  return {migratePg, openPgStore, PgStore}
}

/**
 * True only in the `price` command's bundle (scripts/build.mjs bundlePrice defines it), where
 * a SQLite store's start must not load the PostgreSQL adapter (95 kB; docs/performance.md
 * "Cold start"): there it is loaded by loadPostgresAdapter, which BaseCommand.init awaits for
 * a postgres:// store. Everywhere else this module loads the adapter with itself, so a
 * synchronous openStore of a postgres:// URL works without that step.
 */
declare const PRICECTL_POSTGRES_ON_FIRST_USE: boolean | undefined
let postgres: PostgresAdapter | undefined = typeof PRICECTL_POSTGRES_ON_FIRST_USE === 'boolean' && PRICECTL_POSTGRES_ON_FIRST_USE ? undefined : await importPostgresAdapter()

/** Load the PostgreSQL adapter, for a synchronous `openStore` of a postgres:// URL after it; loaded already but in the price bundle. */
export async function loadPostgresAdapter(): Promise<void> {
  postgres ??= await importPostgresAdapter()
}

function postgresAdapter(): PostgresAdapter {
  if (!postgres) throw new OperationalError('the PostgreSQL adapter is not loaded: await loadPostgresAdapter() (src/store/db.ts) before opening a postgres:// store')
  return postgres
}

/** The SQLite adapter of a store, for what only a file has (backup, restore, VACUUM INTO); throws on PostgreSQL. */
export function sqliteOf(store: StorePort, what: string): SqliteStore {
  if (store instanceof SqliteStore) return store
  throw new OperationalError(`${what} works on a SQLite store only, and ${store.path} is a PostgreSQL database: see docs/postgres.md`)
}

/** The PostgreSQL adapter of a store, undefined for SQLite (maintenance commands pick their meaning). */
export function postgresOf(store: StorePort): PgStore | undefined {
  // Without the adapter loaded there is no PostgreSQL store.
  return postgres && store instanceof postgres.PgStore ? store : undefined
}

/**
 * Open (creating with owner-only permissions when missing) and migrate the SQLite store.
 * WAL lets price calls read while an import writes; the busy timeout makes concurrent
 * writers wait instead of failing.
 *
 * Only an empty file or a pricectl store is opened (identify.ts): anything else is refused
 * before SQLite touches it. A store this process cannot write (read-only file system,
 * permissions) is opened read-only: reads work, writes fail with SQLITE_READONLY, which the
 * commands report as "the store is read-only".
 */
export function openSqliteStore(flag?: string, options: OpenOptions = {}): SqliteStore {
  const path = resolveStorePath(flag)
  if (path === ':memory:') return configure(new Database(path), path, options, true)
  let found = identifyStore(path)
  let created = false
  if (found.kind === 'missing') {
    try {
      mkdirSync(dirname(path), {mode: 0o700, recursive: true})
      closeSync(openSync(path, 'wx', 0o600))
      created = true
      chmodSync(path, 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new OperationalError(`cannot create the store at ${path}: ${(error as Error).message} (pass --db PATH)`)
      }
    }
    // Created by this process, or a moment ago by another one.
    found = created ? {kind: 'empty'} : identifyStore(path)
    if (created) options.onCreate?.(path)
  }
  const readOnly = whyReadOnly(path)
  if (readOnly) {
    if (found.kind === 'empty') throw new OperationalError(`cannot create a store in ${path}: ${readOnly} (pass --db PATH)`)
    const {db} = openReadOnly(path)
    db.pragma('busy_timeout = 10000')
    const version = schemaVersion(db)
    checkNotNewer(version, path)
    if (version < SCHEMA_VERSION && (options.migrate ?? true)) {
      db.close()
      throw new OperationalError(
        `${path} has schema version ${version}, older than this pricectl (${SCHEMA_VERSION}), and cannot be upgraded because ${readOnly}: copy it somewhere writable and pass --db COPY`,
      )
    }
    useExponentsOf(db, true)
    return new SqliteStore(db, path, readOnly)
  }
  let db: DB
  try {
    db = new Database(path, {fileMustExist: true})
  } catch (error) {
    throw new OperationalError(`cannot open the store at ${path}: ${(error as Error).message}`)
  }
  return configure(db, path, options, found.kind === 'empty', found.kind !== 'pricectl')
}

function configure(db: DB, path: string, options: OpenOptions, empty: boolean, mark = false): SqliteStore {
  db.pragma('busy_timeout = 10000')
  // The mark goes in before WAL is switched on, so the main file's header carries it from
  // the first write; a store of an earlier release gets it on its first open.
  if (mark) db.pragma(`application_id = ${APPLICATION_ID}`)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  if (options.migrate ?? true) migrate(db, path)
  else if (empty) migrate(db, path) // a new store is never left empty
  useExponentsOf(db)
  return new SqliteStore(db, path)
}

/** Read amounts with the exponents the store recorded (schema 2 on; an older store is only opened to be migrated). */
function useExponentsOf(db: DB, readonly = false): void {
  if (schemaVersion(db) >= 2) loadExponents(db, {readonly})
  else useRecordedExponents(undefined)
}

export function schemaVersion(db: DB): number {
  return db.pragma('user_version', {simple: true}) as number
}

function checkNotNewer(version: number, path: string): void {
  if (version > SCHEMA_VERSION) {
    throw new OperationalError(`${path} has schema version ${version}, newer than this pricectl understands (${SCHEMA_VERSION}): upgrade pricectl`)
  }
}

/** `db migrate`: apply every pending migration of an open store, whichever adapter holds it. */
export async function migrateStore(store: StorePort): Promise<{from: number; to: number}> {
  const pg = postgresOf(store)
  return pg ? await postgresAdapter().migratePg(pg.pg, store.path) : migrate(sqliteOf(store, 'db migrate').db, store.path)
}

/** Apply every migration newer than the store, each in its own transaction. */
export function migrate(db: DB, path = 'the store'): {from: number; to: number} {
  const from = schemaVersion(db)
  checkNotNewer(from, path)
  if (from === SCHEMA_VERSION) return {from, to: from}
  // BEGIN IMMEDIATE: two processes opening a new store at once must not both migrate.
  const run = db.transaction(() => {
    const current = schemaVersion(db)
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue
      m.up(db)
      db.pragma(`user_version = ${m.version}`)
    }
  })
  run.immediate()
  return {from, to: SCHEMA_VERSION}
}

/** The SQLite adapter's type, for tests and tools that work on a file's handle (`db`). */
export type {SqliteStore} from './sqlite/store.js'
