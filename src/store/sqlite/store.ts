import type {Statement} from 'better-sqlite3'
import type {DB} from '../db.js'
import {TxGate} from '../tx-gate.js'
import type {StorePort} from '../port.js'
import {SqliteCatalog} from './catalog.js'
import {SqliteConfig} from './config.js'
import {SqliteExperiments} from './experiments.js'
import {SqliteHistory} from './history.js'
import {SqliteImports} from './imports.js'
import {SqliteKeys} from './keys.js'
import {SqlitePricing} from './pricing.js'
import {SqliteRevenue} from './revenue.js'
import {SqliteSegments} from './segments.js'
import {SqliteTables} from './tables.js'
import {WriteBehindLink} from './write-behind.js'

/**
 * The SQLite adapter: the port over one better-sqlite3 connection. Repositories are made
 * on first use, so a command that touches one part of the store prepares only its statements.
 * `db` is the adapter's own handle: adapters and tests may use it, the engine may not.
 */
export class SqliteStore implements StorePort {
  readonly kind = 'sqlite'
  readonly poolSize = 1
  private repos = new Map<string, unknown>()
  /** A batch's write-behind: the pricing adapter runs it, the experiments adapter sends its exposures through it. */
  private readonly behind = new WriteBehindLink()
  private readonly gate = new TxGate()
  private readonly statements: Record<'begin' | 'beginImmediate' | 'commit' | 'release' | 'rollback' | 'rollbackTo' | 'savepoint', Statement>

  constructor(
    readonly db: DB,
    readonly path: string,
    readonly readOnly?: string,
  ) {
    this.statements = {
      begin: db.prepare('BEGIN'),
      beginImmediate: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      release: db.prepare('RELEASE pricectl_nested'),
      rollback: db.prepare('ROLLBACK'),
      rollbackTo: db.prepare('ROLLBACK TO pricectl_nested'),
      savepoint: db.prepare('SAVEPOINT pricectl_nested'),
    }
  }

  /** The file path (what opens the store again). */
  get location(): string {
    return this.path
  }

  async close(): Promise<void> {
    // A batch's checkpoint thread stops first: this connection's close is then the last one.
    const pricing = this.repos.get('pricing') as SqlitePricing | undefined
    pricing?.endBulk()
    if (this.db.open) this.db.close()
  }

  async transaction<T>(fn: (tx: StorePort) => Promise<T> | T, options?: {write?: boolean}): Promise<T> {
    const db = this.db
    if (this.gate.nested(db.inTransaction)) {
      // One name for every level: RELEASE and ROLLBACK TO act on the innermost savepoint of that name.
      this.statements.savepoint.run()
      try {
        const result = await fn(this)
        this.statements.release.run()
        return result
      } catch (error) {
        if (db.inTransaction) {
          this.statements.rollbackTo.run()
          this.statements.release.run()
        }
        throw error
      }
    }
    return this.gate.run(async () => {
      ;(options?.write && !db.readonly ? this.statements.beginImmediate : this.statements.begin).run()
      try {
        const result = await fn(this)
        this.statements.commit.run()
        return result
      } catch (error) {
        if (db.inTransaction) this.statements.rollback.run()
        throw error
      }
    })
  }

  private repo<R>(name: string, make: () => R): R {
    let r = this.repos.get(name) as R | undefined
    if (r === undefined) {
      r = make()
      this.repos.set(name, r)
    }
    return r
  }

  // ---- SQLite extras (not part of the port): the server and the commands that manage a file

  /** How long a statement waits for another writer's lock, in ms (0: fail busy at once). */
  setBusyTimeout(ms: number): void {
    const timeout = Math.max(0, Math.floor(ms))
    this.db.pragma(`busy_timeout = ${timeout}`)
  }

  /** A read that proves the store answers (the server's health check), with its schema version. */
  async health(): Promise<{schemaVersion: number}> {
    this.db.prepare('SELECT 1').get()
    return {schemaVersion: this.db.pragma('user_version', {simple: true}) as number}
  }

  /** Write a consistent copy of the store to a new file (VACUUM INTO; the path is a bound parameter). */
  copyTo(path: string): void {
    this.db.prepare('VACUUM INTO ?').run(path)
  }

  get catalog(): SqliteCatalog {
    return this.repo('catalog', () => new SqliteCatalog(this.db))
  }

  get config(): SqliteConfig {
    return this.repo('config', () => new SqliteConfig(this.db))
  }

  get experiments(): SqliteExperiments {
    return this.repo('experiments', () => new SqliteExperiments(this.db, this.behind))
  }

  get history(): SqliteHistory {
    return this.repo('history', () => new SqliteHistory(this.db))
  }

  get imports(): SqliteImports {
    return this.repo('imports', () => new SqliteImports(this.db, () => this.revenue, this.location))
  }

  get keys(): SqliteKeys {
    return this.repo('keys', () => new SqliteKeys(this.db))
  }

  get pricing(): SqlitePricing {
    return this.repo('pricing', () => new SqlitePricing(this.db, this.behind))
  }

  get revenue(): SqliteRevenue {
    return this.repo('revenue', () => new SqliteRevenue(this.db))
  }

  get segments(): SqliteSegments {
    return this.repo('segments', () => new SqliteSegments(this.db))
  }

  get tables(): SqliteTables {
    return this.repo('tables', () => new SqliteTables(this.db, async (fn, options) => await this.transaction(fn, options)))
  }
}
