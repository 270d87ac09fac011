import type {DB} from '../db.js'
import type {ExperimentsRepository} from '../port/experiments.js'

/** SQLite adapter of the experiments repository: every statement prepared once per store. */
export class SqliteExperiments implements ExperimentsRepository {
  constructor(private readonly db: DB) {}
}
