import {parentPort, workerData} from 'node:worker_threads'

import {readExport, type WorkerInput} from './worker.js'

/** The import worker's entry (pipeline.ts): the reading half of worker.ts, in its own thread. */
readExport(workerData as WorkerInput, parentPort!)
