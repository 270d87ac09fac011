import {MessageChannel, Worker} from 'node:worker_threads'
import {describe, expect, it} from 'vitest'

import {receiveAnswer} from '../../src/store/postgres/client.js'

// The synchronous PostgreSQL client blocks its caller until the worker's answer arrives
// (src/store/postgres/client.ts). Under load, 3 serve instances once saw the worker's
// signal with nothing yet readable on the port, and the request failed with HTTP 500.
describe('PostgreSQL client: the caller waits for the answer to its own call', () => {
  it('a signal that comes before its answer is readable: the caller waits for the answer', async () => {
    const {port1, port2} = new MessageChannel()
    const flag = new Int32Array(new SharedArrayBuffer(4))
    const worker = new Worker(
      `const {workerData} = require('node:worker_threads')
      const flag = new Int32Array(workerData.signal)
      Atomics.add(flag, 0, 1)
      Atomics.notify(flag, 0)
      setTimeout(() => workerData.port.postMessage({id: 1, rows: ['late']}), 50)`,
      {eval: true, execArgv: [], transferList: [port2], workerData: {port: port2, signal: flag.buffer}},
    )
    try {
      expect(receiveAnswer(port1, flag, 1, 0)).toEqual({id: 1, rows: ['late']})
    } finally {
      await worker.terminate()
      port1.close()
    }
  })

  it('an answer to an earlier call still on the port is not taken for this call\'s', () => {
    const {port1, port2} = new MessageChannel()
    const flag = new Int32Array(new SharedArrayBuffer(4))
    port2.postMessage({error: {message: 'an uncaught driver error'}, id: 6})
    port2.postMessage({id: 7, rows: [{n: 1}]})
    Atomics.add(flag, 0, 2)
    expect(receiveAnswer(port1, flag, 7, 0)).toEqual({id: 7, rows: [{n: 1}]})
    port1.close()
  })
})
