import {closeSync, openSync, readSync} from 'node:fs'
import {parentPort, workerData} from 'node:worker_threads'

import {productById} from '../catalog/lookup.js'
import {CHARGE_COLUMNS, type ChargeValues, SUBSCRIPTION_COLUMNS, type SubscriptionValues} from '../revenue/store.js'
import type {StorePort} from '../store/port.js'
import {openReaderStore} from '../store/reader.js'
import {CsvReader} from './csv-reader.js'
import type {ImportKind, Preset} from './presets.js'
import {RowMapper} from './rows.js'

/**
 * The import's reading half, in a worker thread: stream the file through csv-parse,
 * map and validate each row (RowMapper, reading products and FX rates through its own
 * read-only store, openReaderStore), and post batches of ready rows to the main thread, which only
 * writes. At most MAX_IN_FLIGHT batches wait unacknowledged, so memory stays flat.
 *
 * Records come from CsvReader (csv-reader.ts): csv-parse, with a shorter road for lines
 * without quotes.
 */

export type WorkerInput = {batchRows: number; db: string; file: string; kind: ImportKind; maxInFlight: number}

/** Rows as arrays in *_COLUMNS order; rejects with the line where the record starts. */
export type RowBatch = {
  bytes: number
  read: number
  rejects: [number, string, string[]][]
  rows: unknown[][]
  /** Rows of the batch whose USD amount is the gateway's converted amount, and its difference to the store's FX (minor units). */
  settled: {difference_minor: number; rows: number}
  type: 'batch'
}

export type WorkerMessage = RowBatch | {bytes: number; type: 'end'} | {header: string[]; type: 'header'} | {message: string; type: 'error'}

/** What the main thread sends: the layout once the header is known, then acknowledgements. */
export type MainMessage = 'ack' | {fallbackProductId: null | number; layout: Preset; type: 'layout'}

const input = workerData as WorkerInput
const port = parentPort!

let inFlight = 0
let wake: (() => void) | undefined
let layoutReady: ((m: Extract<MainMessage, {type: 'layout'}>) => void) | undefined
port.on('message', (m: MainMessage) => {
  if (m === 'ack') {
    inFlight--
    const w = wake
    wake = undefined
    w?.()
  } else if (m.type === 'layout') layoutReady?.(m)
})

/** The largest record an export row may be; larger is a broken file, not a payment. */
export const MAX_RECORD_CHARS = 1024 * 1024

/**
 * Problems of the record itself: bytes that are not UTF-8 (decoded as U+FFFD, e.g. a
 * latin-1 export) or an oversized record.
 */
function recordProblem(record: string[], mayHaveReplacement: boolean): string | undefined {
  let size = 0
  for (const cell of record) {
    size += cell.length
    if (mayHaveReplacement && cell.includes('\uFFFD')) return 'not valid UTF-8 text (convert the file first: iconv -f latin1 -t utf-8 FILE > FILE.utf8.csv)'
  }
  if (size > MAX_RECORD_CHARS) return `record is longer than ${MAX_RECORD_CHARS} characters (the limit for one row)`
  return undefined
}

/**
 * Rows in index order, so the writer's inserts land near each other in the unique index;
 * the sort is stable, so one record's events stay in file order.
 */
function sortByKey(rows: unknown[][]): unknown[][] {
  // By user id, the key's first column: that is what places a row in the index, and a stable
  // sort keeps equal keys in file order. The joined string is flat, so comparisons are fast.
  const keyed = rows.map((r) => [`${r[0] as string}\u0000`, r] as const)
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return keyed.map((k) => k[1])
}

/** Records end on `endLine`; a quoted cell with line breaks started it earlier. */
function startLine(endLine: number, cells: string[]): number {
  let breaks = 0
  for (const c of cells) {
    for (let i = c.indexOf('\n'); i !== -1; i = c.indexOf('\n', i + 1)) breaks++
  }
  return endLine - breaks
}

/** Values as positional parameters in CHARGE_COLUMNS order. */
function chargeRow(v: ChargeValues | SubscriptionValues): unknown[] {
  const c = v as ChargeValues
  return [c.user_id, c.origin, c.origin_id, c.product_id, c.country, c.created, c.status, c.currency, c.amount_minor, c.amount_refunded_minor, c.amount_usd_minor, c.amount_refunded_usd_minor, c.metadata_json, c.latest_event_timestamp, c.latest_event_id]
}

/** Values as positional parameters in SUBSCRIPTION_COLUMNS order. */
function subscriptionRow(v: ChargeValues | SubscriptionValues): unknown[] {
  const s = v as SubscriptionValues
  return [
    s.user_id, s.origin, s.origin_id, s.product_id, s.country, s.created, s.interval, s.interval_count, s.status, s.cancel_at, s.canceled_at,
    s.trial_start, s.trial_end, s.currency, s.amount_minor, s.amount_usd_minor, s.amount_usd_monthly_minor, s.latest_event_timestamp, s.latest_event_id,
  ]
}

// The literal orders above must be the column lists': checked once at start.
for (const [cols, fn] of [[CHARGE_COLUMNS, chargeRow], [SUBSCRIPTION_COLUMNS, subscriptionRow]] as const) {
  const probe = Object.fromEntries(cols.map((c) => [c, c])) as unknown as ChargeValues & SubscriptionValues
  if (fn(probe).join() !== cols.join()) throw new Error('import worker: row order differs from the column list')
}

async function main(): Promise<void> {
  const toRow = input.kind === 'charges' ? chargeRow : subscriptionRow
  let header: string[] | undefined
  let mapper: RowMapper<ChargeValues | SubscriptionValues> | undefined
  let store: StorePort | undefined
  // Records of the current chunk (and the line each ends on) until they are mapped.
  let records: string[][] = []
  let lines: number[] = []
  let rows: unknown[][] = []
  let rejects: [number, string, string[]][] = []
  let read = 0
  let bytes = 0

  const reader = new CsvReader({
    record(record, endLine) {
      if (header === undefined) {
        header = record
        port.postMessage({header, type: 'header'} satisfies WorkerMessage)
        return
      }
      records.push(record)
      lines.push(endLine)
    },
    unreadable(line, reason) {
      // One broken record can raise several errors: report it once.
      if (rejects.length > 0 && rejects.at(-1)![0] === line && rejects.at(-1)![1].startsWith('unreadable')) return
      read++
      rejects.push([line, `unreadable CSV record: ${reason}`, []])
    },
  })

  /** Map the records collected so far. */
  // Text with U+FFFD read in this chunk or the one before (whose unfinished line this one ends).
  let replacementBefore = false
  const mapAll = () => {
    const width = header!.length
    const seen = reader.takeReplacementSeen()
    const mayHaveReplacement = seen || replacementBefore
    replacementBefore = seen
    for (let i = 0; i < records.length; i++) {
      const record = records[i]
      read++
      const problem = recordProblem(record, mayHaveReplacement)
      if (problem) {
        // An oversized record goes to the rejects file shortened, cell by cell.
        rejects.push([startLine(lines[i], record), problem, record.map((c) => (c.length > 200 ? `${c.slice(0, 200)}…` : c))])
        continue
      }
      const r = record.length === width ? mapper!.map(record) : `expected ${width} columns, got ${record.length}`
      if (typeof r === 'string') rejects.push([startLine(lines[i], record), r, record])
      else rows.push(toRow(r))
    }
    records = []
    lines = []
  }

  const post = () => {
    if (rows.length === 0 && rejects.length === 0) return
    // In key order the writer's inserts land near each other in the unique index
    // instead of all over it; the sort runs here, beside the writing thread.
    port.postMessage({bytes, read, rejects, rows: sortByKey(rows), settled: mapper?.takeSettled() ?? {difference_minor: 0, rows: 0}, type: 'batch'} satisfies WorkerMessage)
    inFlight++
    rows = []
    rejects = []
  }

  /** The main thread picks the layout from the header (or refuses the file and stops us). */
  const makeMapper = async () => {
    const m = await new Promise<Extract<MainMessage, {type: 'layout'}>>((resolve) => {
      layoutReady = resolve
    })
    // As the main thread opened it: on read-only media too (a dry run on a read-only store).
    // This thread's storage exponents are the store's record, as in the main thread.
    store = openReaderStore(input.db)
    const fallback = m.fallbackProductId === null ? undefined : productById(store, m.fallbackProductId)
    mapper = new RowMapper(store, input.kind, m.layout, header!, fallback)
  }

  const fd = openSync(input.file, 'r')
  const buf = Buffer.allocUnsafe(1 << 20)
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null)
      if (n === 0) break
      bytes += n
      reader.write(buf.subarray(0, n))
      if (header !== undefined && mapper === undefined) await makeMapper()
      if (mapper) {
        mapAll()
        if (rows.length + rejects.length >= input.batchRows) post()
      }
      while (inFlight >= input.maxInFlight) {
        await new Promise<void>((resolve) => {
          wake = resolve
        })
      }
    }
    reader.end()
    if (header !== undefined && mapper === undefined) await makeMapper()
    if (mapper) mapAll()
    post()
    port.postMessage({bytes, type: 'end'} satisfies WorkerMessage)
  } finally {
    closeSync(fd)
    store?.close()
  }
}

main().catch((error: Error) => port.postMessage({message: error?.message ?? String(error), type: 'error'} satisfies WorkerMessage))
