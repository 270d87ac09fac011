import {loadExponents} from './exponents.js'
import {openReadOnly} from './identify.js'
import {SqliteStore} from './sqlite/store.js'

/**
 * A read-only store over its own connection, for a reader beside the main one (the import
 * worker thread): nothing is created or migrated, and amounts are read with the exponents
 * the store recorded, as in the main thread. Works on read-only media too. Kept apart from
 * db.ts so a worker does not load the migrations.
 */
export function openReaderStore(path: string): SqliteStore {
  const {db} = openReadOnly(path)
  try {
    loadExponents(db, {readonly: true})
  } catch (error) {
    db.close()
    throw error
  }
  return new SqliteStore(db, path, 'it is opened for reading only')
}
