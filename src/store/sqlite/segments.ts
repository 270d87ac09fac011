import type {DB} from '../db.js'
import type {SegmentsRepository} from '../port/segments.js'

/** SQLite adapter of the segments repository: every statement prepared once per store. */
export class SqliteSegments implements SegmentsRepository {
  constructor(private readonly db: DB) {}
}
