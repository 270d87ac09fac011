import {chmodSync, closeSync, existsSync, openSync, readSync, renameSync, statSync} from 'node:fs'
import {resolve} from 'node:path'

import {type DB, postgresOf, schemaVersion, sqliteOf, type Store} from './db.js'
import {SCHEMA_VERSION} from './migrations.js'
import {backupFailed, checkOutput, placeOutput, removeStaleTemps, removeTemp, tempPathFor} from './output-file.js'
import {checkPgStore, pgStoreInfo} from './postgres/maintenance.js'

export type StoreInfo = {
  counts: Record<string, number>
  /** PostgreSQL only: the database and schema the store is in, and the server's version. */
  database?: string
  schema?: string
  server_version?: string
  journal_mode: string
  latest_schema_version: number
  path: string
  /** Why the store cannot be written (read-only file system, permissions), null when it can. */
  read_only: null | string
  schema_version: number
  size_bytes: number
}

const COUNTED = ['products', 'coupons', 'users', 'locks', 'subscriptions', 'charges', 'experiments', 'fx_rates'] as const

export async function storeInfo(store: Store): Promise<StoreInfo> {
  const pg = postgresOf(store)
  if (pg) {
    const info = await pgStoreInfo(pg, COUNTED)
    return {
      counts: info.counts,
      database: info.database,
      journal_mode: 'postgresql',
      latest_schema_version: SCHEMA_VERSION,
      path: store.path,
      read_only: store.readOnly ?? null,
      schema: info.schema,
      schema_version: info.version,
      server_version: info.server_version,
      size_bytes: info.size_bytes,
    }
  }
  const {db, path} = sqliteOf(store, 'db info')
  const version = schemaVersion(db)
  const counts: Record<string, number> = {}
  if (version > 0) {
    for (const t of COUNTED) counts[t] = (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as {n: number}).n
  }
  return {
    counts,
    journal_mode: journalMode(store),
    latest_schema_version: SCHEMA_VERSION,
    path,
    read_only: store.readOnly ?? null,
    schema_version: version,
    size_bytes: existsSync(path) ? statSync(path).size : 0,
  }
}

/** The store file's mode, also when a read-only store was read into memory (identify.ts openReadOnly). */
function journalMode(port: Store): string {
  const store = sqliteOf(port, 'db info')
  if (store.db.memory && store.path !== ':memory:' && existsSync(store.path)) {
    const fd = openSync(store.path, 'r')
    try {
      const header = Buffer.alloc(20)
      readSync(fd, header, 0, 20, 0)
      return header[18] === 2 ? 'wal' : 'delete'
    } finally {
      closeSync(fd)
    }
  }
  return String(store.db.pragma('journal_mode', {simple: true}))
}

export type CheckResult = {foreign_key_violations: number; integrity: string; ok: boolean; schema_version: number}

/** `db check`, whichever adapter holds the store (PostgreSQL: ./postgres/maintenance.ts). */
export async function checkAnyStore(store: Store): Promise<CheckResult> {
  const pg = postgresOf(store)
  return pg ? await checkPgStore(pg) : checkStore(sqliteOf(store, 'db check').db)
}

/** SQLite's own integrity check plus foreign keys; what `db check` and the crash tests rely on. */
export function checkStore(db: DB): CheckResult {
  const integrity = (db.pragma('integrity_check') as {integrity_check: string}[]).map((r) => r.integrity_check).join('; ')
  const fk = db.pragma('foreign_key_check') as unknown[]
  const version = schemaVersion(db)
  return {
    foreign_key_violations: fk.length,
    integrity,
    ok: integrity === 'ok' && fk.length === 0 && version === SCHEMA_VERSION,
    schema_version: version,
  }
}

/**
 * Consistent copy through SQLite's online backup API (docs/hardening.md, "Backups"), owner-only
 * from its first byte. All pages in one step, which reads one snapshot: smaller steps restart
 * whenever another process commits, so under a steady writer they never finish. Written to
 * `FILE.PID.tmp` and renamed when complete, so a failure leaves an existing FILE as it was.
 */
export async function backupStore(store: Store, file: string, overwrite: boolean): Promise<{bytes: number; path: string}> {
  const shown = resolve(file)
  const {path: dest} = checkOutput(file, {force: overwrite, label: 'backup', store: store.path})
  removeStaleTemps(dest)
  const tmp = tempPathFor(dest)
  let bytes: number
  try {
    closeSync(openSync(tmp, 'wx', 0o600))
    chmodSync(tmp, 0o600) // whatever the umask
    await sqliteOf(store, 'db backup').db.backup(tmp, {progress: () => 0x7fffffff})
    chmodSync(tmp, 0o600)
    bytes = placeOutput(tmp, dest)
  } catch (error) {
    removeTemp(tmp)
    throw backupFailed(error, shown)
  }
  return {bytes, path: shown}
}
