import type {DB} from '../db.js'
import type {ConfigRepository} from '../port/config.js'

/** SQLite adapter of the config repository: every statement prepared once per store. */
export class SqliteConfig implements ConfigRepository {
  constructor(private readonly db: DB) {}
}
