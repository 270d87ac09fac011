import {once} from 'node:events'
import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {Worker} from 'node:worker_threads'
import {afterAll, describe, expect, it} from 'vitest'

import type {WorkerInput, WorkerMessage} from '../../src/import/worker.js'
import {workerUrl} from '../../src/workers.js'
import {paymentsCsv, tempDir, writeTemp} from '../helpers/revenue-fixtures.js'

/**
 * An interrupted import stops its reader thread by asking it ({type: 'stop'}), never with
 * worker.terminate(): terminating a thread while a better-sqlite3 statement runs aborts the
 * whole process (FATAL ERROR in Database::ThrowSqliteError), which killed `charges import`
 * on SIGTERM now and then. The reader ends itself between two statements, with exit code 0
 * (a terminated thread exits 1).
 */
describe('the import reader thread', () => {
  const dir = tempDir()
  afterAll(() => rmSync(dir, {force: true, recursive: true}))

  it('ends itself, exit code 0, when the writer asks it to stop', async () => {
    const file = writeTemp('payments.csv', paymentsCsv(50), dir)
    const input: WorkerInput = {batch: 10, db: join(dir, 'no-store.db'), file, kind: 'charges', maxRejects: 10, progressRows: 10, stages: []}
    const worker = new Worker(workerUrl('import/reader-worker'), {workerData: input})
    const exit = once(worker, 'exit') as Promise<[number]>
    // It has read the header and waits for the layout: alive, idle.
    const [first] = (await once(worker, 'message')) as [WorkerMessage]
    expect(first.type).toBe('header')
    worker.postMessage({type: 'stop'})
    // A reader that ignores the request is terminated after 10 s, and exits 1.
    const late = setTimeout(() => void worker.terminate(), 10_000)
    const [code] = await exit
    clearTimeout(late)
    expect(code).toBe(0)
  })
})
