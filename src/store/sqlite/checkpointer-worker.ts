import Database from 'better-sqlite3'
import {workerData} from 'node:worker_threads'

/**
 * The checkpointer's thread (checkpointer.ts): PASSIVE WAL checkpoints on a connection of
 * its own, one each time the caller asks, until it is told to stop.
 */

/** What Checkpointer hands this worker: the store's file, and the flags both threads share (3 x Int32). */
export type CheckpointerData = {path: string; signal: SharedArrayBuffer}

const data = workerData as CheckpointerData
const flag = new Int32Array(data.signal)
// flag[0]: checkpoints asked (this thread waits for it to change); flag[1]: 1 = stop; flag[2]: 1 = stopped.
let db: Database.Database | undefined
try {
  db = new Database(data.path, {fileMustExist: true})
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
