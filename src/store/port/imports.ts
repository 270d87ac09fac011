import type {RevenueTable, Resolve} from './revenue.js'

/**
 * The imports part of the storage port: rows streamed into the revenue tables a chunk at a
 * time, in batches that commit whole. A row is a full-record event in the table's column
 * order and keeps the event rules of single writes (docs/architecture.md, "The storage port's
 * contracts"), which is what makes an import resumable and idempotent.
 */

/** What the rows written so far did. */
export type ImportWriteCounts = {inserted: number; stale: number; unchanged: number; updated: number}

/**
 * A batch the import's reading thread staged (ImportWriter.externalStages): which stage, its
 * rows, and the products they refer to.
 */
export type StagedBatch = {products: readonly number[]; rows: number; stage: number}

/**
 * A writer of import rows. The import's reading thread writes rows into the writer's stages
 * (externalStages: two scratch SQLite files it fills in turn) and each stage is committed as
 * one batch (commitStaged). writeChunk writes rows given here under the same rules (what
 * commitStaged does with a stage's rows when the kind has deletes or pending partial updates,
 * or on PostgreSQL; the store-contract tests hold both stores to the rules through it).
 */
export interface ImportWriter {
  /**
   * What the rows written so far did (committed or not), as of the last flush() or commit:
   * a plain read (SQLite: rows still staged are counted when they are flushed).
   */
  readonly counts: ImportWriteCounts
  /**
   * Write rows [from, to) of a chunk (default: all of it) into the open batch, which the
   * first row begins. A dry run writes nothing and counts what the rows would do.
   */
  writeChunk(rows: readonly (readonly unknown[])[], from?: number, to?: number): Promise<void>
  /** Write what was written so far into the table, inside the open batch, so that `counts` covers every row. */
  flush(): Promise<void>
  /**
   * Commit the open batch (nothing open: nothing to do). False when a product the batch's
   * rows refer to was deleted while they were prepared: nothing is committed, and close()
   * rolls the batch back.
   */
  commit(): Promise<boolean>
  /**
   * The stages the import's reading threads fill with rows (ImportsRepository.fillStages of
   * their own store), two for each of `readers` threads (default 1) that read a file at once,
   * one batch each, taking turns: scratch files in a private temp folder, with a table of the
   * import's columns. Made once, before any row is written; they go at close().
   */
  externalStages(readers?: number): readonly string[]
  /**
   * Write one complete stage as one batch and commit it (nothing else may be open): the same
   * rules and counts as its rows written through writeChunk and committed (a dry run: counted
   * only). False as commit() (a product was deleted: nothing of it is committed). The stage
   * may be refilled once this returns.
   */
  commitStaged(batch: StagedBatch): Promise<boolean>
  /**
   * Rows of the batches commit() and commitStaged() reported that the writer holds back,
   * uncommitted, until it commits them with a later batch or finish() (only with
   * ImportWriterOptions.hold: a PostgreSQL first load, docs/postgres.md); 0 when none.
   */
  readonly held: number
  /** Commit what the writer holds back (nothing held: nothing to do). False as commit(). */
  finish(): Promise<boolean>
  /** Finish: roll back a batch not committed, remove the stages, and restore what the writer tuned for bulk work. */
  close(): Promise<void>
}

export type ImportWriterOptions<T extends RevenueTable> = {
  dryRun?: boolean
  /**
   * The caller calls finish() after the last batch and keeps what depends on a batch being
   * durable (its rejects) until `held` is 0: the writer may hold batches back and commit
   * them together (a PostgreSQL first load builds the target's indexes once, at the end).
   */
  hold?: boolean
  /**
   * With `hold`: how many rows the writer may have written before a hold commits (default
   * 1M, the PostgreSQL adapter's HOLD_ROWS: what a kill may lose; tests give fewer).
   */
  holdRows?: number
  /**
   * The engine's merge of newer partial-update fields onto a row (see above); without it a
   * row that needs one is an error (tests that never meet partial updates may leave it out).
   */
  resolve?: Resolve<T>
}

/** The filling side of an import writer's stages (ImportsRepository.fillStages): a stage is started, filled and completed, in turns. */
export type ExternalStages = {close(): void; complete(stage: number): void; insert(stage: number, row: readonly unknown[]): void; start(stage: number): void}

/** Checkpoints of a store's write-ahead log on request, through a connection of their own (ImportsRepository.checkpoints). */
export type WalCheckpoints = {close(): void; run(): void}

export interface ImportsRepository {
  /**
   * Rows per transaction when neither --batch-size nor PRICECTL_IMPORT_BATCH says; DEFAULT_BATCH
   * (src/import/importer.ts) when the adapter leaves it out.
   */
  readonly batchRows?: number
  /**
   * Rows per batch once what is left of a file is less than a batch (its last batch is written
   * after the file is read, with the reading thread idle); batchRows throughout when left out.
   */
  readonly tailBatchRows?: number
  /**
   * Threads that read one large file at once, each its own chunks of it (src/import/pipeline.ts);
   * 1 when left out. Worth more than one where the reading thread, not the writer, is the
   * import's critical path (PostgreSQL, whose server does most of the writing).
   */
  readonly readersPerFile?: number
  /**
   * A writer of import rows into `table`. The store is tuned for bulk writes until close()
   * (SQLite: a larger page cache, fewer checkpoints, product references checked per batch).
   */
  writer<T extends RevenueTable>(table: T, options?: ImportWriterOptions<T>): ImportWriter
  /**
   * For the import's reading thread, on its own store (openReaderStore): the stages at `paths`
   * (ImportWriter.externalStages of the writer), each filled through a connection of its own
   * with a page cache of `cacheKb` (default STAGE_CACHE_KB, src/store/import-stages.ts).
   */
  fillStages(paths: readonly string[], cacheKb?: number): ExternalStages
  /**
   * For the import's reading thread: checkpoints of the store's write-ahead log, run through a
   * connection of their own while the writer commits (docs/performance.md, "Import"); undefined
   * when the store has none to run (SQLite: not in WAL mode, or it cannot be written). An
   * adapter without a log to checkpoint from there leaves the method out (PostgreSQL).
   */
  checkpoints?(): undefined | WalCheckpoints
}
