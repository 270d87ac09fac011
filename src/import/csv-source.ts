import {createRequire} from 'node:module'
import {Worker} from 'node:worker_threads'

/**
 * Streaming CSV for imports: csv-parse runs in a worker thread that reads the file in
 * 1 MB chunks and posts records in batches, so parsing overlaps the validation and the
 * SQLite writes of the main thread. At most MAX_IN_FLIGHT batches wait unacknowledged,
 * so memory stays flat whatever the file size.
 *
 * The worker calls the parser's transform API (`parser.api.parse`) rather than the
 * stream so it can read the line number (`info.lines`) as each record is emitted;
 * asking csv-parse for an info object per record costs about a third more time.
 */

export type CsvBatch = {
  /** Bytes of the file read so far. */
  bytes: number
  /** Cells of every record, flattened; counts[i] cells belong to record i. */
  cells: string[]
  counts: number[]
  /** Line on which each record ends (1-based, the header is line 1). */
  lines: number[]
  /** Records csv-parse could not read (bad quoting): their line and why. */
  skipped: {line: number; raw: string; reason: string}[]
}

export type CsvMessage = ({type: 'batch'} & CsvBatch) | {bytes: number; type: 'end'} | {header: string[]; type: 'header'} | {message: string; type: 'error'}

const MAX_IN_FLIGHT = 4

const WORKER_SOURCE = `
const {parentPort, workerData} = require('node:worker_threads')
const {closeSync, openSync, readSync} = require('node:fs')
const {parse} = require(workerData.csvParse)
const {file, batchSize, maxInFlight} = workerData
let inFlight = 0
let wake = null
parentPort.on('message', (m) => {
  if (m === 'ack') {
    inFlight--
    if (wake) { const w = wake; wake = null; w() }
  }
})
let cells = [], counts = [], lines = [], skipped = [], bytes = 0, header = null
const parser = parse({
  bom: true,
  relax_column_count: true,
  relax_quotes: true,
  skip_empty_lines: true,
  skip_records_with_error: true,
  on_skip: (err, raw) => {
    // One broken record can raise several errors: report it once.
    const line = (err && err.lines) || api.info.lines
    if (skipped.length > 0 && skipped[skipped.length - 1].line === line) return
    skipped.push({line, raw: raw === undefined ? '' : String(raw), reason: err ? err.message : 'unreadable record'}) },
})
const api = parser.api
const push = (record) => {
  if (header === null) { header = record; parentPort.postMessage({type: 'header', header}); return }
  for (let i = 0; i < record.length; i++) cells.push(record[i])
  counts.push(record.length)
  lines.push(api.info.lines)
}
const post = () => {
  if (counts.length === 0 && skipped.length === 0) return
  parentPort.postMessage({type: 'batch', bytes, cells, counts, lines, skipped})
  inFlight++
  cells = []; counts = []; lines = []; skipped = []
}
const noop = () => {}
async function main() {
  const fd = openSync(file, 'r')
  const buf = Buffer.allocUnsafe(1 << 20)
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null)
      if (n === 0) break
      bytes += n
      const err = api.parse(Buffer.from(buf.subarray(0, n)), false, push, noop)
      if (err) throw err
      if (counts.length >= batchSize) post()
      while (inFlight >= maxInFlight) await new Promise((r) => { wake = r })
    }
    const err = api.parse(undefined, true, push, noop)
    if (err) throw err
    post()
    parentPort.postMessage({type: 'end', bytes})
  } finally {
    closeSync(fd)
  }
}
main().catch((e) => parentPort.postMessage({type: 'error', message: (e && e.message) || String(e)}))
`

/**
 * Read a CSV file as a stream of messages: the header first, then batches of records,
 * then the end. Call `ack()` once a batch is consumed; `close()` stops the worker.
 */
export function openCsv(file: string, batchSize: number): {ack(): void; close(): Promise<void>; messages: AsyncGenerator<CsvMessage>} {
  const require = createRequire(import.meta.url)
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // The worker holds a few batches at a time; a small heap keeps the import's RSS flat.
    resourceLimits: {maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8},
    workerData: {batchSize, csvParse: require.resolve('csv-parse'), file, maxInFlight: MAX_IN_FLIGHT},
  })
  const queue: CsvMessage[] = []
  let waiting: (() => void) | undefined
  let failure: Error | undefined
  let exited = false
  const wakeUp = () => {
    const w = waiting
    waiting = undefined
    w?.()
  }
  worker.on('message', (m: CsvMessage) => {
    queue.push(m)
    wakeUp()
  })
  worker.on('error', (error) => {
    failure = error
    wakeUp()
  })
  worker.on('exit', () => {
    exited = true
    wakeUp()
  })
  async function* messages(): AsyncGenerator<CsvMessage> {
    for (;;) {
      if (queue.length > 0) {
        const m = queue.shift()!
        yield m
        if (m.type === 'end' || m.type === 'error') return
        continue
      }
      if (failure) throw failure
      if (exited) throw new Error('the CSV reader stopped unexpectedly')
      await new Promise<void>((r) => {
        waiting = r
      })
    }
  }
  return {
    ack: () => worker.postMessage('ack'),
    close: async () => {
      if (!exited) await worker.terminate()
    },
    messages: messages(),
  }
}
