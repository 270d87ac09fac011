import type {DB} from '../db.js'
import type {CatalogRepository} from '../port/catalog.js'

/** SQLite adapter of the catalog repository: every statement prepared once per store. */
export class SqliteCatalog implements CatalogRepository {
  constructor(private readonly db: DB) {}
}
