import Database from 'better-sqlite3'
import {chmodSync, closeSync, existsSync, mkdirSync, openSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, join, resolve} from 'node:path'

import {useRecordedExponents} from '../currency.js'
import {OperationalError} from '../errors.js'
import {loadExponents} from './exponents.js'
import {MIGRATIONS, SCHEMA_VERSION} from './migrations.js'

export type DB = Database.Database

/** An open store: the SQLite handle plus where it lives. */
export type Store = {
  close(): void
  db: DB
  path: string
}

/** `--db` > `PRICECTL_DB` > `$XDG_DATA_HOME/pricectl/pricectl.db` (~/.local/share when unset). */
export function resolveStorePath(flag?: string): string {
  if (flag) return resolve(flag)
  if (process.env.PRICECTL_DB) return resolve(process.env.PRICECTL_DB)
  const data = process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share')
  return join(data, 'pricectl', 'pricectl.db')
}

export type OpenOptions = {
  /** Apply pending migrations (default true). `db info` opens without. */
  migrate?: boolean
}

/**
 * Open (creating with owner-only permissions when missing) and migrate the store.
 * WAL lets price calls read while an import writes; the busy timeout makes concurrent
 * writers wait instead of failing.
 */
export function openStore(flag?: string, options: OpenOptions = {}): Store {
  const path = resolveStorePath(flag)
  const created = path !== ':memory:' && !existsSync(path)
  if (created) {
    mkdirSync(dirname(path), {mode: 0o700, recursive: true})
    try {
      closeSync(openSync(path, 'wx', 0o600))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new OperationalError(`cannot create the store at ${path}: ${(error as Error).message} (pass --db PATH)`)
      }
    }
    chmodSync(path, 0o600)
  }
  let db: DB
  try {
    db = new Database(path)
  } catch (error) {
    throw new OperationalError(`cannot open the store at ${path}: ${(error as Error).message}`)
  }
  db.pragma('busy_timeout = 10000')
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  if (options.migrate ?? true) migrate(db, path)
  else if (created) migrate(db, path) // a new store is never left empty
  if (schemaVersion(db) >= 2) loadExponents(db)
  else useRecordedExponents(undefined)
  return {close: () => db.open && db.close(), db, path}
}

export function schemaVersion(db: DB): number {
  return db.pragma('user_version', {simple: true}) as number
}

/** Apply every migration newer than the store, each in its own transaction. */
export function migrate(db: DB, path = 'the store'): {from: number; to: number} {
  const from = schemaVersion(db)
  if (from > SCHEMA_VERSION) {
    throw new OperationalError(`${path} has schema version ${from}, newer than this pricectl understands (${SCHEMA_VERSION}): upgrade pricectl`)
  }
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
