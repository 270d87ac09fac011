import {createRequire} from 'node:module'
import {Worker} from 'node:worker_threads'

import type {DB} from '../db.js'

/**
 * WAL checkpoints of a bulk run (batch pricing) done on a second thread with its own
 * connection, while this one goes on writing: the run's last close otherwise copies the
 * whole WAL into the file (tens of MB for 100,000 new users) on the main thread, at the
 * end, with nothing to overlap it (docs/performance.md "New users: write-behind").
 *
 * The checkpoints are PASSIVE: they copy what is committed and never wait for, nor block,
 * the writer. Durability is unchanged: the same WAL, the same synchronous level, the same
 * final checkpoint at close (of what is left). The worker is unref'd: a process that
 * forgets to stop it still exits (as after a crash, SQLite recovers from the WAL).
 */
const WORKER_SOURCE = String.raw`
const {workerData} = require('node:worker_threads')
const Database = require(workerData.driver)
const flag = new Int32Array(workerData.signal)
// flag[0]: checkpoints asked (this thread waits for it to change); flag[1]: 1 = stop; flag[2]: 1 = stopped.
let db
try {
  db = new Database(workerData.path, {fileMustExist: true})
  db.pragma('busy_timeout = 0')
} catch {}
let seen = 0
while (db && Atomics.load(flag, 1) === 0) {
  Atomics.wait(flag, 0, seen)
  seen = Atomics.load(flag, 0)
  if (Atomics.load(flag, 1) !== 0) break
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch {}
}
try {
  db?.close()
} catch {}
Atomics.store(flag, 2, 1)
Atomics.notify(flag, 2)
`

export class Checkpointer {
  private readonly flag = new Int32Array(new SharedArrayBuffer(12))
  private readonly worker: Worker
  private stopped = false

  private constructor(path: string) {
    const require = createRequire(import.meta.url)
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // CommonJS code: flags of this process such as --input-type=module must not apply to it.
      execArgv: [],
      resourceLimits: {maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4},
      workerData: {driver: require.resolve('better-sqlite3'), path, signal: this.flag.buffer},
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
