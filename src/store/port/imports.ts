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
 * A batch another thread staged (ImportWriter.externalStages): which stage, its rows, and
 * the products they refer to.
 */
export type StagedBatch = {products: readonly number[]; rows: number; stage: number}

/** How far the commit of an ended batch got (ImportWriter.commitStep). */
export type CommitProgress = 'committed' | 'pending' | 'refused'

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
  writeChunk(rows: readonly (readonly unknown[])[], from?: number, to?: number): void
  /**
   * Write what was written so far into the table, inside the open batch, so that `counts`
   * covers every row (the importer calls it at the end of each file). A batch ended and not
   * yet committed (endBatch) must be finished first (finishCommit).
   */
  flush(): void
  /**
   * End the open batch: rows written from now on begin the next one, while the ended batch
   * is committed a step at a time (commitStep) or at once (finishCommit); a kill or close()
   * before that leaves it uncommitted, whole. One batch at a time: the one ended before must
   * be finished first. (SQLite: its staged rows are sorted into the table in one step, and
   * COMMIT is the next; PostgreSQL commits at once.)
   */
  endBatch(): void
  /**
   * Carry the ended batch's commit on by a step: 'pending' while it is not done, then
   * 'committed', or 'refused' as commit() answers false (nothing of it is committed).
   * 'committed' when no batch was ended.
   */
  commitStep(): CommitProgress
  /** Finish the ended batch's commit (none: true); false as commit() (refused). */
  finishCommit(): boolean
  /**
   * Commit the open batch, after a batch ended before it (nothing open: nothing to do).
   * False when a product the batch's rows refer to was deleted while they were prepared:
   * nothing is committed, and close() rolls the batch back.
   */
  commit(): boolean
  /**
   * Stages another thread fills with rows (the import's reading worker, through
   * src/store/reader.ts openImportStages), one batch each, taking turns: the places to pass
   * it, or undefined when this writer takes rows through writeChunk only (a dry run,
   * PostgreSQL, a kind with deletes or pending partial updates). Asked before any row is
   * written; the stages go at close().
   */
  externalStages(): readonly string[] | undefined
  /**
   * Write one complete external stage as one batch and commit it (nothing else may be open):
   * the same rules and counts as its rows written through writeChunk and committed. False as
   * commit() (a product was deleted: nothing of it is committed). The stage may be refilled
   * once this returns.
   */
  commitStaged(batch: StagedBatch): boolean
  /** Finish: roll back a batch not committed and restore what the writer tuned for bulk work. */
  close(): void
}

export type ImportWriterOptions<T extends RevenueTable> = {
  dryRun?: boolean
  /**
   * The engine's merge of newer partial-update fields onto a row (see above); without it a
   * row that needs one is an error (tests that never meet partial updates may leave it out).
   */
  resolve?: Resolve<T>
}

export interface ImportsRepository {
  /**
   * A writer of import rows into `table`. The store is tuned for bulk writes until close()
   * (SQLite: a larger page cache, fewer checkpoints, product references checked per batch).
   */
  writer<T extends RevenueTable>(table: T, options?: ImportWriterOptions<T>): ImportWriter
}
