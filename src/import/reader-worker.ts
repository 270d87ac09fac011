import {parentPort, workerData} from 'node:worker_threads'

import {type MainMessage, readExport, type WorkerInput} from './worker.js'

/** The import worker's entry (pipeline.ts): the reading half of worker.ts, in its own thread. */
readExport(workerData as WorkerInput, parentPort!)

// The writer stops the reader early (an interrupted or failed import) with a message, not
// worker.terminate(): terminating while a better-sqlite3 statement runs (a stage insert)
// aborts the whole process (FATAL ERROR in Database::ThrowSqliteError). A message is handled
// only between two statements, where ending the thread is safe; the stage files it leaves
// are swept by the next import.
parentPort!.on('message', (m: MainMessage) => {
  if (m.type === 'stop') process.exit(0)
})
