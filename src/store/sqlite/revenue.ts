import type {DB} from '../db.js'
import type {RevenueRepository} from '../port/revenue.js'

/** SQLite adapter of the revenue repository: every statement prepared once per store. */
export class SqliteRevenue implements RevenueRepository {
  constructor(private readonly db: DB) {}
}
