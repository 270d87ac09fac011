import type {DB} from '../db.js'
import type {KeysRepository} from '../port/keys.js'

/** SQLite adapter of the keys repository: every statement prepared once per store. */
export class SqliteKeys implements KeysRepository {
  constructor(private readonly db: DB) {}
}
