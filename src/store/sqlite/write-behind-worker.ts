import {parentPort, workerData} from 'node:worker_threads'

import {runWriter, type WriterData} from './write-behind-thread.js'

/** The write-behind writer's thread (write-behind.ts): runWriter on the port to its caller. */
runWriter(workerData as WriterData, parentPort!)
