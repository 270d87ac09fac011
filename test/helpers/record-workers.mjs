/**
 * `node --import ./record-workers.mjs` (NODE_OPTIONS): append each worker thread the process
 * started to the JSONL file $PRICECTL_RECORD_WORKERS when it exits: its file, the errors it
 * reported, and the Int32 flags it shares with its caller (workerData.signal) as they are at
 * exit: write-behind.ts's status ([0] 1 ready, [1] last group committed, [2] first failed),
 * checkpointer.ts's flags ([2] 1 stopped), client.ts's answer count ([0]).
 * test/e2e/price-bundle.test.ts checks the price bundle's workers with it.
 */
import {appendFileSync} from 'node:fs'
import {createRequire, syncBuiltinESMExports} from 'node:module'

const threads = createRequire(import.meta.url)('node:worker_threads')

if (threads.isMainThread) {
  const made = []
  const Worker = threads.Worker
  threads.Worker = class extends Worker {
    constructor(file, options) {
      super(file, options)
      const record = {errors: [], file: String(file)}
      made.push({record, signal: options?.workerData?.signal})
      this.on('error', (error) => record.errors.push(String(error)))
    }
  }
  // The ES module `node:worker_threads` the bundle imports Worker from gets the wrapper too.
  syncBuiltinESMExports()
  process.on('exit', () => {
    for (const {record, signal} of made) {
      appendFileSync(process.env.PRICECTL_RECORD_WORKERS, JSON.stringify({...record, signal: signal ? [...new Int32Array(signal)] : undefined}) + '\n')
    }
  })
}
