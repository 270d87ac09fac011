import type {DB} from '../db.js'
import type {ImportsRepository} from '../port/imports.js'

/** SQLite adapter of the imports repository: every statement prepared once per store. */
export class SqliteImports implements ImportsRepository {
  constructor(private readonly db: DB) {}
}
