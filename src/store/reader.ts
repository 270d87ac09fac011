import {loadExponents} from './exponents.js'
import {openReadOnly} from './identify.js'
import type {StorePort} from './port.js'
import {isPostgresUrl} from './postgres/client.js'
import {openPgStore} from './postgres/open.js'
import {ImportStages} from './import-stages.js'
import {ImportCheckpoints} from './sqlite/imports.js'
import {SqliteStore} from './sqlite/store.js'

/** WAL checkpoints on request, through a connection of their own (src/store/sqlite/imports.ts, ImportCheckpoints). */
export type WalCheckpoints = {close(): void; run(): void}

/**
 * For the import's reading thread: checkpoints of the store at `location` (the main store's
 * StorePort.location), or undefined when it has none to run from here (PostgreSQL, a store
 * not in WAL mode or that cannot be written).
 */
export function openImportCheckpoints(location: string): undefined | WalCheckpoints {
  return isPostgresUrl(location) ? undefined : ImportCheckpoints.open(location)
}

/** The filling side of an import writer's stages (src/store/import-stages.ts, ImportStages). */
export type ExternalStages = {close(): void; complete(stage: number): void; insert(stage: number, row: readonly unknown[]): void; start(stage: number): void}

/**
 * For the import's reading thread: the stages at `paths` (ImportWriter.externalStages of the
 * main thread's writer), each with a page cache of `cacheKb` (default STAGE_CACHE_KB).
 */
export function openImportStages(paths: readonly string[], cacheKb?: number): ExternalStages {
  return new ImportStages(paths, cacheKb)
}

/**
 * A read-only store over its own connection, for a reader beside the main one (the import
 * worker thread): nothing is created or migrated, and amounts are read with the exponents
 * the store recorded, as in the main thread. Works on read-only media too. Kept apart from
 * db.ts so a worker does not load the SQLite migrations. `location` is the main store's
 * (StorePort.location): a file path, or a postgres:// URL (a read-only session there).
 */
export function openReaderStore(location: string): StorePort {
  if (isPostgresUrl(location)) return openPgStore(location, {readOnly: true})
  const {db} = openReadOnly(location)
  try {
    loadExponents(db, {readonly: true})
  } catch (error) {
    db.close()
    throw error
  }
  return new SqliteStore(db, location, 'it is opened for reading only')
}
