import {Worker} from 'node:worker_threads'

import {workerUrl} from '../../workers.js'
import type {DB} from '../db.js'
import type {CheckpointerData} from './checkpointer-worker.js'

/**
 * WAL checkpoints of a bulk run (batch pricing) done on a second thread with its own
 * connection, while this one goes on writing: the run's last close otherwise copies the
 * whole WAL into the file (tens of MB for 100,000 new users) on the main thread, at the
 * end, with nothing to overlap it (docs/performance.md "New users: write-behind").
 *
 * The checkpoints are PASSIVE: they copy what is committed and never wait for, nor block,
 * the writer. Durability is unchanged: the same WAL, the same synchronous level, the same
 * final checkpoint at close (of what is left). The worker is unref'd: a process that
 * forgets to stop it still exits (as after a crash, SQLite recovers from the WAL). Its code is
 * checkpointer-worker.ts.
 */
export class Checkpointer {
  private readonly flag = new Int32Array(new SharedArrayBuffer(12))
  private readonly worker: Worker
  private stopped = false

  private constructor(path: string) {
    this.worker = new Worker(workerUrl('store/sqlite/checkpointer-worker'), {
      // A plain .js module: none of this process's flags (a loader such as tsx's) is of use to it.
      execArgv: [],
      resourceLimits: {maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4},
      workerData: {path, signal: this.flag.buffer} satisfies CheckpointerData,
    })
    this.worker.unref()
    this.worker.on('error', () => {
      this.stopped = true
    })
  }

  /** A checkpointer for a file store in WAL mode that this connection may write; undefined otherwise. */
  static start(db: DB): Checkpointer | undefined {
    if (db.memory || db.readonly || !db.name) return undefined
    if (String(db.pragma('journal_mode', {simple: true})).toLowerCase() !== 'wal') return undefined
    return new Checkpointer(db.name)
  }

  /** Ask for a checkpoint of what is committed (a no-op while one runs: the next one takes it all). */
  request(): void {
    if (this.stopped) return
    Atomics.add(this.flag, 0, 1)
    Atomics.notify(this.flag, 0)
  }

  /**
   * Stop the worker and wait until its connection is closed (at most a second: a checkpoint
   * in progress finishes first), so this connection's close is the last one and checkpoints
   * what is left and removes the WAL, as without the worker.
   */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    Atomics.store(this.flag, 1, 1)
    Atomics.add(this.flag, 0, 1)
    Atomics.notify(this.flag, 0)
    Atomics.wait(this.flag, 2, 0, 1000)
  }
}
