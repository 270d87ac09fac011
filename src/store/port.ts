import type {CatalogRepository} from './port/catalog.js'
import type {ConfigRepository} from './port/config.js'
import type {ExperimentsRepository} from './port/experiments.js'
import type {HistoryRepository} from './port/history.js'
import type {ImportsRepository} from './port/imports.js'
import type {KeysRepository} from './port/keys.js'
import type {PricingRepository} from './port/pricing.js'
import type {RevenueRepository} from './port/revenue.js'
import type {SegmentsRepository} from './port/segments.js'
import type {TablesRepository} from './port/tables.js'

/**
 * The storage port: everything the engine asks of a store. The engine holds a StorePort,
 * never a database handle, and no SQL lives outside the adapters (src/store/sqlite/ today;
 * PostgreSQL later implements the same interfaces, and test/store-contract/ is what any
 * adapter must pass).
 *
 * Methods are synchronous and shaped for bulk work (the locks of a chunk of requests in one
 * call, a chunk of quotes saved in one call, import rows written a chunk at a time, a
 * catalog snapshot read once): better-sqlite3 is synchronous, and that is what keeps batch
 * pricing free of a promise per request. A network adapter pays one round trip per chunk.
 */
export interface StorePort {
  /** Which adapter holds the store. */
  readonly kind: 'postgres' | 'sqlite'
  /** Where the store lives, for messages: a file path (SQLite), a URL without its password (PostgreSQL). */
  readonly path: string
  /**
   * What opens this same store again (`openStore`, `openReaderStore`): the file path, or the
   * postgres:// URL as given (password included: never print it, print `path`).
   */
  readonly location: string
  /** Why the store cannot be written (read-only file system, permissions); unset when it can. */
  readonly readOnly?: string
  close(): void
  /**
   * Run `fn` in one transaction: everything it writes lands together or not at all.
   * A call inside another joins it (a savepoint). `write: true` takes the write lock when
   * the transaction starts (SQLite: BEGIN IMMEDIATE), so what it read cannot change
   * before it writes and it never has to upgrade a read lock; on a read-only store it is
   * a plain transaction (reads work, writes fail).
   *
   * `locksOnly` (with `write`): `fn` prices requests (it writes locks, user countries and
   * exposures, nothing else) and may run twice: it has no effect outside the store before it
   * returns. An adapter may run it first without excluding other lock writers (PostgreSQL:
   * new locks claimed by their unique key, docs/postgres.md) and, when it needs more (a lock
   * that changes, an exposure, a new lock another writer made first), roll it back and run
   * it again as a plain write transaction. SQLite: a write transaction.
   */
  transaction<T>(fn: () => T, options?: {locksOnly?: boolean; write?: boolean}): T
  /**
   * How long a write waits for another writer's lock, in ms (0: fail busy at once; the
   * server retries from its write queue). Busy is SQLITE_BUSY on SQLite, SQLSTATE 55P03
   * (or 40001, 40P01) on PostgreSQL: src/store/busy.ts tells them apart from failures.
   */
  setBusyTimeout(ms: number): void
  /** A read that proves the store answers (the server's health check), with its schema version. */
  health(): {schemaVersion: number}

  readonly catalog: CatalogRepository
  readonly config: ConfigRepository
  readonly experiments: ExperimentsRepository
  readonly history: HistoryRepository
  readonly imports: ImportsRepository
  readonly keys: KeysRepository
  readonly pricing: PricingRepository
  readonly revenue: RevenueRepository
  readonly segments: SegmentsRepository
  /** The whole store table by table, for moving it between adapters (db copy). */
  readonly tables: TablesRepository
}
