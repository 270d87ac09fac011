import {Worker} from 'node:worker_threads'

import {workerUrl} from '../../workers.js'
import type {DB} from '../db.js'
import type {Exposure, ExposureChange} from '../port/experiments.js'
import type {WriterData, WriterMessage, WriterSql} from './write-behind-thread.js'

/**
 * The lock and user upserts of a batch, and the exposures of its running experiments,
 * written by a second thread with its own connection while this one prices the next group
 * (docs/performance.md "New users: write-behind").
 *
 * The writer writes each group in one transaction (BEGIN IMMEDIATE at its first rows,
 * COMMIT with its last), then checkpoints (PASSIVE). This thread read the group's locks
 * while the writer still wrote earlier groups, so another connection's commit in between
 * could make those reads stale: after each BEGIN the writer compares its `data_version`
 * with the one of its previous BEGIN (or its start, before this thread's first read), and
 * if another connection committed in between, that group and every later one are not
 * written and reported failed (the batch prices them again the usual way, in its own write
 * transactions). A group the writer cannot write (any SQLite error) is reported the same
 * way. Durability is the store's: the same WAL and synchronous level, one commit per group.
 *
 * Shared status (Int32Array): [0] 1 ready, -1 could not start; [1] last committed
 * sequence number; [2] first failed sequence number (0: none); [3] 1 once stopped; [4] 1
 * once the store's version was taken (begin). The writer's code is write-behind-thread.ts
 * (its thread's entry: write-behind-worker.ts).
 */
export class WriteBehindWriter {
  private readonly status = new Int32Array(new SharedArrayBuffer(20))
  private readonly worker: Worker
  /** Sequence number of the last group sent. */
  sent = 0
  private stopped = false

  constructor(path: string, sql: WriterSql) {
    this.worker = new Worker(workerUrl('store/sqlite/write-behind-worker'), {
      // A plain .js module: none of this process's flags (a loader such as tsx's) is of use to
      // it, and one that failed it would leave begin() waiting for a writer that never starts.
      execArgv: [],
      workerData: {path, signal: this.status.buffer, sql} satisfies WriterData,
    })
    this.worker.unref()
    this.worker.on('error', () => {
      // A writer that died writes nothing more: what it did not commit is priced again.
      if (Atomics.load(this.status, 0) === 0) Atomics.store(this.status, 0, -1)
      if (Atomics.load(this.status, 2) === 0) Atomics.store(this.status, 2, Atomics.load(this.status, 1) + 1)
      Atomics.store(this.status, 3, 1)
    })
  }

  /**
   * A writer for a file store in WAL mode that this connection may write; undefined
   * otherwise. It may start inside the caller's transaction (its thread boots while the
   * first group is priced); begin() is called outside any.
   */
  static start(db: DB, sql: WriterSql): undefined | WriteBehindWriter {
    if (db.memory || db.readonly || !db.name) return undefined
    if (String(db.pragma('journal_mode', {simple: true})).toLowerCase() !== 'wal') return undefined
    return new WriteBehindWriter(db.name, sql)
  }

  /**
   * Take the store's version as the writer's reference (after this thread's last write of
   * its own, before its first read for write-behind); false when the writer could not start.
   */
  begin(): boolean {
    while (Atomics.load(this.status, 0) === 0 && Atomics.load(this.status, 3) === 0) Atomics.wait(this.status, 0, 0, 100)
    if (Atomics.load(this.status, 0) !== 1) return false
    this.post({begin: true})
    while (Atomics.load(this.status, 4) === 0 && Atomics.load(this.status, 3) === 0) Atomics.wait(this.status, 4, 0, 100)
    return Atomics.load(this.status, 4) === 1 && Atomics.load(this.status, 2) === 0
  }

  /** Send rows of the group being priced (flat, one row after the other; see the writer's `rows` and `exposures`). */
  rows(rows: unknown[], exposures?: unknown[]): void {
    this.post(exposures?.length ? {exposures, rows} : {rows})
  }

  /** Send the group's last rows and commit it; its sequence number. */
  commit(rows: unknown[], exposures?: unknown[]): number {
    this.sent++
    this.post(exposures?.length ? {exposures, rows, seq: this.sent} : {rows, seq: this.sent})
    return this.sent
  }

  /** The last sequence number committed (without waiting). */
  get committed(): number {
    return Atomics.load(this.status, 1)
  }

  /** The first sequence number that was not written (0: none). */
  get failedFrom(): number {
    return Atomics.load(this.status, 2)
  }

  /** Wait until `seq` is committed or failed: whether it was committed (false too for a writer silent for 60 s). */
  wait(seq: number): boolean {
    const until = Date.now() + 60_000
    for (;;) {
      if (Date.now() > until) return false
      const committed = Atomics.load(this.status, 1)
      if (committed >= seq) return true
      const failed = Atomics.load(this.status, 2)
      if (failed !== 0 && failed <= seq) return false
      if (Atomics.load(this.status, 3) !== 0) return false
      Atomics.wait(this.status, 1, committed, 100)
    }
  }

  private post(m: WriterMessage): void {
    this.worker.postMessage(m)
  }

  /** Close the writer's connection (what it has not committed is rolled back) and wait for it. */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.post({stop: true})
    // The writer may be waiting for another connection's write lock (busy_timeout, 10 s);
    // a writer that does not answer well after that is terminated (SQLite rolls its
    // transaction back as after a crash).
    const until = Date.now() + 30_000
    while (Atomics.load(this.status, 3) === 0 && Date.now() < until) Atomics.wait(this.status, 3, 0, 100)
    if (Atomics.load(this.status, 3) === 0) void this.worker.terminate()
  }
}

/**
 * Write-behind's side of the experiments adapter: while a batch writes behind, an exposure
 * goes to the writer with its group's lock rows and commits in the same transaction (a
 * quote's exposure is stored iff its quote is; docs/performance.md "New users: write-behind"). SqlitePricing sets it from begin() to end().
 */
export type ExposuresBehind = {
  /**
   * Record an exposure in the group being priced: what it changes is the visitor's arm in
   * this group, else the stored one, read by `stored` once the groups that wrote the
   * visitor are committed (waited for), in a read transaction of write-behind's.
   */
  record(x: Exposure, stored: (experimentId: number, visitor: string) => string | undefined): ExposureChange
  /**
   * Before arm counts are read: every group sent is committed (waited for; WriteBehindAbort
   * when one was not written). The visitors the group being priced adds (or moves away, a
   * negative count) per arm of this experiment.
   */
  pending(experimentId: number): Map<string, number>
}

/** What the adapters of one store share while write-behind runs (SqliteStore makes one). */
export class WriteBehindLink {
  exposures?: ExposuresBehind
}
