import {loadExponents} from './exponents.js'
import {openReadOnly} from './identify.js'
import type {StorePort} from './port.js'
import {isPostgresUrl} from './postgres/client.js'
import {openPgStore} from './postgres/open.js'
import {SqliteStore} from './sqlite/store.js'

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
