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
 * The storage port: everything the engine asks of a store, so the engine holds no database
 * handle and no SQL lives outside the adapters (docs/architecture.md, "The storage port's
 * contracts"; test/store-contract/ is what an adapter must pass). Synchronous and chunk-shaped:
 * no promise per request in batch pricing, one round trip per chunk on a network adapter.
 */
export interface StorePort {
  /** Which adapter holds the store. */
  readonly kind: 'postgres' | 'sqlite'
  /** How many transactions it may have open at once (SQLite: one connection, 1; PostgreSQL: its pool's slots). */
  readonly poolSize: number
  /** Where the store lives, for messages: a file path (SQLite), a URL without its password (PostgreSQL). */
  readonly path: string
  /**
   * What opens this same store again (`openStore`, `openReaderStore`): the file path, or the
   * postgres:// URL as given (password included: never print it, print `path`).
   */
  readonly location: string
  /** Why the store cannot be written (read-only file system, permissions); unset when it can. */
  readonly readOnly?: string
  close(): Promise<void>
  /**
   * Run `fn` in one transaction (a savepoint inside another). `write` takes the write lock at
   * the start, so what it read cannot change before it writes. `locksOnly`: `fn` only prices
   * and may run more than once (each run first takes back what an earlier one handed out), so
   * an adapter may run it beside other lock writers (docs/postgres.md, "serve on PostgreSQL").
   */
  transaction<T>(fn: (tx: StorePort) => Promise<T> | T, options?: {locksOnly?: boolean; write?: boolean}): Promise<T>
  /**
   * How long a write waits for another writer's lock, in ms (0: fail busy at once; the
   * server retries from its write queue). Busy is SQLITE_BUSY on SQLite, SQLSTATE 55P03
   * (or 40001, 40P01) on PostgreSQL: src/store/busy.ts tells them apart from failures.
   */
  setBusyTimeout(ms: number): void
  /** A read that proves the store answers (the server's health check), with its schema version. */
  health(): Promise<{schemaVersion: number}>

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
