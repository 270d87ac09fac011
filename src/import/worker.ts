import {closeSync, fstatSync, openSync, readSync} from 'node:fs'

import {productById} from '../catalog/lookup.js'
import {CHARGE_COLUMNS, type ChargeValues, type SubscriptionValues} from '../revenue/store.js'
import {SUBSCRIPTION_IMPORT_COLUMNS} from '../store/port/revenue.js'
import type {SubscriptionImportValues} from './rows.js'
import type {StorePort} from '../store/port.js'
import type {ExternalStages, WalCheckpoints} from '../store/port/imports.js'
import {diskFullHint} from '../store/disk-full.js'
import {openReaderStore} from '../store/reader.js'
import {isPostgresUrl} from '../store/url.js'
import {CsvReader, type RecordSink} from './csv-reader.js'
import type {ImportKind, Preset} from './presets.js'
import {RowMiss} from './loads.js'
import {loadPricingEngine} from './products.js'
import {RowMapper} from './rows.js'

/**
 * The import's reading half, in a worker thread (or, for a small file, in the writer's
 * thread: pipeline.ts): stream the file through CsvReader (csv-parse, with a shorter road for
 * lines without quotes), map and validate each row (RowMapper, with products and FX rates
 * read through its own read-only store, openReaderStore, when a row first needs them: drain),
 * and write the rows into the writer's stages (two scratch SQLite files,
 * ImportsRepository.fillStages), a batch each, taking turns. What
 * crosses to the writer are counts: StagedMessage when a stage holds a whole batch (its rows,
 * products and rejects), ProgressMessage in between. A stage is filled again only once the
 * writer sent {type: 'free'} for it (its batch committed), so memory and scratch space stay
 * bounded; the writer frees both when it reaches this file (docs/performance.md, "Import").
 */

export type WorkerInput = {
  /** Rows and rejects per batch (a stage), and rejects at most (a stage ends earlier with more). */
  batch: number
  /**
   * Rows per batch once what is left of the file is less than a batch (ImportsRepository.tailBatchRows):
   * the last batch is written after the file is read, with this thread idle, so a smaller one
   * shortens that tail.
   */
  tailBatch?: number
  maxRejects: number
  db: string
  file: string
  kind: ImportKind
  /** Rows between two progress messages. */
  progressRows: number
  /** The writer's stages (ImportWriter.externalStages). */
  stages: readonly string[]
  /** The page cache of this thread's stage connections (KB; default STAGE_CACHE_KB). */
  stageCacheKb?: number
  /** This thread's chunks when several threads read the file (pipeline.ts); undefined: the whole file. */
  chunks?: Chunks
}

/**
 * Chunks of a file read by `readers` threads at once: chunk k begins at the first line after
 * byte k × `bytes` (chunkStart) and ends where chunk k + 1 begins; this thread reads chunks
 * `index`, `index` + `readers`, ... Chunk 0 holds the header; the others are read with
 * `header` and the file's record delimiter (`crlf`) known.
 */
export type Chunks = {bytes: number; crlf: boolean; header: string[]; index: number; readers: number}

/**
 * Where chunk `at` / bytes begins: just after the first line feed at or after byte `at` - 1
 * (the file's size when there is none; 0 for 0). Whether that is a record's start, and not a
 * line break inside a quoted field, is known only once the chunk before is read up to it.
 */
export function chunkStart(fd: number, size: number, at: number): number {
  if (at <= 0) return 0
  const buf = Buffer.allocUnsafe(READ_BYTES)
  for (let pos = at - 1; pos < size; ) {
    const n = readSync(fd, buf, 0, buf.length, pos)
    if (n === 0) break
    const lf = buf.subarray(0, n).indexOf(10)
    if (lf !== -1) return pos + lf + 1
    pos += n
  }
  return size
}

/**
 * A batch written into stage `stage` and committed there (rows and the products they refer
 * to), its rejects, and the file's progress; the stage is the writer's until it sends
 * {type: 'free'} back. A batch of rejects only (rows 0) hands over no stage: none is freed.
 */
export type StagedMessage = {
  bytes: number
  products: number[]
  read: number
  rejects: [number, string, string[]][]
  rows: number
  settled: Settled
  stage: number
  type: 'staged'
}

/** Rows of a batch whose USD amount is the gateway's converted amount, and its difference to the store's FX (minor units). */
export type Settled = {difference_minor: number; rows: number}

/** Progress of the file between two staged batches. */
export type ProgressMessage = {bytes: number; read: number; settled: Settled; type: 'progress'}

/**
 * A chunk read to its end, which is the end of a record (Chunks): its lines, rows and bytes, to
 * which the messages of the next chunk count theirs (pipeline.ts).
 */
export type ChunkMessage = {bytes: number; lines: number; read: number; type: 'chunk'}

/**
 * The chunk being read does not end at a record's end (a quoted field with line breaks spans
 * its end, or csv-parse's stream reads it): this thread reads on to the end of the file, and
 * what the other threads read from there on is dropped (pipeline.ts).
 */
export type TakeoverMessage = {type: 'takeover'}

export type WorkerMessage =
  | ChunkMessage
  | ProgressMessage
  | StagedMessage
  | TakeoverMessage
  | {bytes: number; type: 'end'}
  | {header: string[]; type: 'header'}
  | {message: string; type: 'error'}

/**
 * What the writer sends: the layout once the header is known; a stage freed (its batch
 * committed, or this file's turn come); and after each batch it committed into a SQLite
 * store, a request to checkpoint the WAL (run when this thread would otherwise wait;
 * ImportCheckpoints).
 */
export type MainMessage = {fallbackProductId: null | number; layout: Preset; type: 'layout'} | {stage: number; type: 'free'} | {type: 'checkpoint'} | {type: 'stop'}

/** The largest record an export row may be; larger is a broken file, not a payment. */
export const MAX_RECORD_CHARS = 1024 * 1024

/**
 * Problems of the record itself: bytes that are not UTF-8 (decoded as U+FFFD, e.g. a
 * latin-1 export) or an oversized record.
 */
function recordProblem(record: string[], size: number, mayHaveReplacement: boolean): string | undefined {
  if (mayHaveReplacement) {
    for (const cell of record) {
      if (cell.includes('\uFFFD')) return 'not valid UTF-8 text (convert the file first: iconv -f latin1 -t utf-8 FILE > FILE.utf8.csv)'
    }
  }
  if (size > MAX_RECORD_CHARS) return `record is longer than ${MAX_RECORD_CHARS} characters (the limit for one row)`
  return undefined
}

/** Records end on `endLine`; a quoted cell with line breaks started it earlier. */
function startLine(endLine: number, cells: string[]): number {
  let breaks = 0
  for (const c of cells) {
    for (let i = c.indexOf('\n'); i !== -1; i = c.indexOf('\n', i + 1)) breaks++
  }
  return endLine - breaks
}

/** Values as positional parameters in CHARGE_COLUMNS order, written into `r` (reused: the stage copies them). */
function chargeRow(v: ChargeValues | SubscriptionValues, r: unknown[] = new Array(CHARGE_COLUMNS.length)): unknown[] {
  const c = v as ChargeValues
  r[0] = c.user_id
  r[1] = c.origin
  r[2] = c.origin_id
  r[3] = c.product_id
  r[4] = c.country
  r[5] = c.created
  r[6] = c.status
  r[7] = c.currency
  r[8] = c.amount_minor
  r[9] = c.amount_refunded_minor
  r[10] = c.amount_usd_minor
  r[11] = c.amount_refunded_usd_minor
  r[12] = c.tax_minor
  r[13] = c.tax_usd_minor
  r[14] = c.tax_refunded_usd_minor
  r[15] = c.metadata_json
  r[16] = c.latest_event_timestamp
  r[17] = c.latest_event_id
  return r
}

/** Values as positional parameters in SUBSCRIPTION_IMPORT_COLUMNS order, written into `r`. */
function subscriptionRow(v: ChargeValues | SubscriptionValues, r: unknown[] = new Array(SUBSCRIPTION_IMPORT_COLUMNS.length)): unknown[] {
  const s = v as SubscriptionImportValues
  r[0] = s.user_id
  r[1] = s.origin
  r[2] = s.origin_id
  r[3] = s.product_id
  r[4] = s.country
  r[5] = s.created
  r[6] = s.interval
  r[7] = s.interval_count
  r[8] = s.status
  r[9] = s.cancel_at
  r[10] = s.canceled_at
  r[11] = s.trial_start
  r[12] = s.trial_end
  r[13] = s.currency
  r[14] = s.amount_minor
  r[15] = s.amount_usd_minor
  r[16] = s.amount_usd_monthly_minor
  r[17] = s.tax_minor
  r[18] = s.latest_event_timestamp
  r[19] = s.latest_event_id
  r[20] = s.seen_trial_start ?? null
  r[21] = s.seen_trial_end ?? null
  return r
}

// The literal orders above must be the column lists': checked once at start.
for (const [cols, fn] of [[CHARGE_COLUMNS, chargeRow], [SUBSCRIPTION_IMPORT_COLUMNS, subscriptionRow]] as const) {
  const probe = Object.fromEntries(cols.map((c) => [c, c])) as unknown as ChargeValues & SubscriptionValues
  const row = fn(probe)
  if (row.length !== cols.length || row.join() !== cols.join()) throw new Error('import worker: row order differs from the column list')
}

/**
 * Bytes read (and decoded) at a time. The decoded text must stay below V8's large-object
 * size (128 KB): a larger string is allocated straight in the old generation, where only a
 * full mark-compact frees it, and with 1 MB reads the worker's heap grew by the file's
 * size between two of them (docs/performance.md, "Import"). Cells are slices of this text.
 */
export const READ_BYTES = 64 * 1024


/** What the reader talks to the writer through: a worker's parentPort, or one end of a MessageChannel in the writer's thread. */
export type ReaderPort = {
  on(event: 'message', listener: (m: MainMessage) => void): unknown
  postMessage(m: WorkerMessage): void
}

/** Read input.file into the writer's stages, telling it over `port` (see the top of this file). */
export function readExport(input: WorkerInput, port: ReaderPort): void {
  let wake: (() => void) | undefined
  let layoutReady: ((m: Extract<MainMessage, {type: 'layout'}>) => void) | undefined
  /** The writer committed a batch since the last checkpoint this thread ran. */
  let checkpointWanted = false
  /** Stages this thread may fill: none until the writer reaches this file. */
  const stageFree = [false, false]
  port.on('message', (m: MainMessage) => {
    if (m.type === 'layout') {
      layoutReady?.(m)
      return
    }
    if (m.type === 'stop') return
    if (m.type === 'free') stageFree[m.stage] = true
    else checkpointWanted = true
    const w = wake
    wake = undefined
    w?.()
  })

  async function main(): Promise<void> {
    const toRow = input.kind === 'charges' ? chargeRow : subscriptionRow
    const columns = input.kind === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_IMPORT_COLUMNS
    const scratch = new Array<unknown>(columns.length)
    let header: string[] | undefined = input.chunks && input.chunks.index > 0 ? input.chunks.header : undefined
    let mapper: RowMapper<ChargeValues | SubscriptionValues> | undefined
    let store: StorePort | undefined
    /** Opened at the first checkpoint asked for (null: the store cannot be checkpointed from here). */
    let checkpoints: null | undefined | WalCheckpoints
    let rejects: [number, string, string[]][] = []
    // Rows and bytes of the chunk being read (the whole file when it is one chunk), and of this thread's chunks before it.
    let read = 0
    let bytes = 0
    let readBefore = 0
    let bytesBefore = 0
    // Text with U+FFFD read in the chunk before (whose unfinished line the current one ends).
    let replacementBefore = false

    // Rows go into stage `cur` (begun: `started`) until the batch is full, then it is completed
    // and handed to the writer, and the other one takes the rows once the writer has committed
    // what it held (stageFree). Until then (`blocked`) records wait in `held`, in order; so do
    // the records read before the mapper exists (the layout arrives after the header), and a
    // record the mapper missed on (`miss`: it needs a read) and those after it, until drain
    // has loaded what it needs.
    let stages: ExternalStages | undefined
    let cur = 0
    let started = false
    let blocked = true
    /** Records (and unreadable ones) waiting, in order; each returns false when the mapper missed on it (mapped again after the load). */
    let held: (() => boolean)[] = []
    let miss: RowMiss | undefined
    let inBatch = 0
    /** Rows per batch: input.batch, then input.tailBatch near the file's end. */
    let batchRows = input.batch
    /** The stage handed over last (with rows). */
    let handed: number | undefined
    let stagedRows = 0
    let sinceProgress = 0
    const stageProducts = new Set<number>()
    const takeSettled = () => mapper?.takeSettled() ?? {difference_minor: 0, rows: 0}

    /** The batch in stage `cur` is full (or the file ended): committed there, and handed over. */
    const completeStage = () => {
      if (started) stages!.complete(cur)
      port.postMessage({bytes, products: [...stageProducts], read, rejects, rows: stagedRows, settled: takeSettled(), stage: cur, type: 'staged'} satisfies WorkerMessage)
      if (started) {
        stageFree[cur] = false
        handed = cur
        cur = 1 - cur
      }
      started = false
      stagedRows = 0
      stageProducts.clear()
      rejects = []
      inBatch = 0
      sinceProgress = 0
      if (!stageFree[cur]) blocked = true
    }

    /** A row or reject counted into the batch. */
    const counted = () => {
      if (++inBatch >= batchRows || rejects.length >= input.maxRejects) completeStage()
      else if (++sinceProgress >= input.progressRows) {
        sinceProgress = 0
        port.postMessage({bytes, read, settled: takeSettled(), type: 'progress'} satisfies WorkerMessage)
      }
    }

    /**
     * Map the records held while the next stage was not free, waiting for it (and checkpointing
     * meanwhile), or held since the mapper missed, loading what it missed first.
     */
    const drain = async () => {
      while (blocked || miss || held.length > 0) {
        while (blocked) {
          // The writer's messages (a stage freed) are taken only while this thread waits.
          if (!stageFree[cur]) await new Promise<void>((resolve) => setImmediate(resolve))
          if (stageFree[cur]) {
            blocked = false
            break
          }
          await waitForWriter()
        }
        if (miss) {
          // The one read of a miss (a currency's rates, a product cell); its record is held[0].
          await mapper!.load(miss)
          miss = undefined
        }
        let k = 0
        while (!blocked && !miss && k < held.length) if (held[k]()) k++
        held = held.slice(k)
      }
    }

    /**
     * One step of waiting for the writer: the checkpoint it asked for, if any (the time to copy
     * what it committed into the file), else until its next message.
     */
    const waitForWriter = async () => {
      if (checkpointWanted) {
        checkpointWanted = false
        checkpoints ??= store?.imports.checkpoints?.() ?? null
        checkpoints?.run()
        return
      }
      await new Promise<void>((resolve) => {
        wake = resolve
      })
    }

    // The line of the last rejected row when it was unreadable.
    let lastUnreadable = -1
    const reject = (line: number, reason: string, cells: string[]) => {
      rejects.push([line, reason, cells])
      lastUnreadable = -1
    }

    /**
     * Map one record as soon as it is read: its cells die young (a scavenge), instead of
     * surviving in a chunk's worth of records until mapped and being promoted to the old
     * generation (docs/performance.md, "Import"). False: the mapper missed (`miss`), nothing
     * was counted, and the record is to be mapped again once drain loaded what it needs.
     */
    const mapRecord = (record: string[], endLine: number, check = false): boolean => {
      let size = 0
      for (let i = 0; i < record.length; i++) size += record[i].length
      // (check: a record held for a stage, mapped after its read's U+FFFD state moved on.)
      const problem = recordProblem(record, size, check || replacementBefore || reader.replacementPending)
      if (problem) {
        // An oversized record goes to the rejects file shortened, cell by cell.
        reject(startLine(endLine, record), problem, record.map((c) => (c.length > 200 ? `${c.slice(0, 200)}…` : c)))
      } else {
        const width = header!.length
        const r = record.length === width ? mapper!.map(record) : `expected ${width} columns, got ${record.length}`
        if (r instanceof RowMiss) {
          miss = r
          return false
        }
        if (typeof r === 'string') reject(startLine(endLine, record), r, record)
        else {
          if (!started) {
            // Opened at the first row, so only once the writer has reached this file: a file
            // read ahead never touches the stages while the file before fills them.
            stages ??= store!.imports.fillStages(input.stages, input.stageCacheKb)
            stages.start(cur)
            started = true
          }
          stages!.insert(cur, toRow(r, scratch))
          stageProducts.add(r.product_id as number)
          stagedRows++
        }
      }
      read++
      counted()
      return true
    }

    /** A record read: mapped now, or held while the next stage is not free or the mapper waits for a load. */
    const take = (record: string[], endLine: number) => {
      if (blocked || miss !== undefined || !mapRecord(record, endLine)) held.push(() => mapRecord(record, endLine, true))
    }

    const sink: RecordSink = {
      record(record, endLine) {
        if (header === undefined) {
          header = record
          port.postMessage({header, type: 'header'} satisfies WorkerMessage)
          return
        }
        take(record, endLine)
      },
      unreadable(line, reason) {
        // One broken record can raise several errors: report it once.
        if (line === lastUnreadable) return
        lastUnreadable = line
        const unreadable = () => {
          read++
          reject(line, `unreadable CSV record: ${reason}`, [])
          lastUnreadable = line
          counted()
          return true
        }
        if (blocked || miss) held.push(unreadable)
        else unreadable()
      },
    }
    let reader = new CsvReader(sink)

    /** The writer picks the layout from the header (or refuses the file and stops us); then the records read meanwhile are mapped. */
    const makeMapper = async () => {
      const m = await new Promise<Extract<MainMessage, {type: 'layout'}>>((resolve) => {
        layoutReady = resolve
      })
      // As the writer opened it: on read-only media too (a dry run on a read-only store).
      // This thread's storage exponents are the store's record, as in the writer's thread.
      store = openReaderStore(input.db)
      const fallback = m.fallbackProductId === null ? undefined : await productById(store, m.fallbackProductId)
      const made = new RowMapper<ChargeValues | SubscriptionValues>(store, input.kind, m.layout, header!, fallback)
      // Telling products apart by price needs the pricing engine: loaded only when rows name products.
      if (made.readsProducts) await loadPricingEngine()
      mapper = made
    }

    const fd = openSync(input.file, 'r')
    const size = fstatSync(fd).size
    const buf = Buffer.allocUnsafe(READ_BYTES)
    const chunks = input.chunks
    try {
      for (let k = chunks?.index ?? 0; ; k += chunks!.readers) {
        // This thread's next chunk [pos, end); without chunks, the whole file read on to its end
        // (not a position: a pipe has none).
        let pos = chunks ? chunkStart(fd, size, k * chunks.bytes) : 0
        if (k > 0 && pos >= size) break
        let end = chunks ? chunkStart(fd, size, (k + 1) * chunks.bytes) : Infinity
        if (k > 0) reader = new CsvReader(sink, {crlf: chunks!.crlf})
        readBefore += read
        bytesBefore += bytes
        read = 0
        bytes = 0
        replacementBefore = false
        lastUnreadable = -1
        for (;;) {
          const n = !chunks ? readSync(fd, buf, 0, buf.length, null) : pos < end ? readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos) : 0
          if (n === 0) {
            if (end >= size || reader.atRecordBoundary()) break
            // The chunk's end is inside a record: this thread reads on to the file's end.
            port.postMessage({type: 'takeover'} satisfies WorkerMessage)
            end = size
            continue
          }
          pos += n
          bytes += n
          // What is left of the file is less than a batch, at the bytes per row read so far: the
          // rest goes in batches of input.tailBatch (see WorkerInput).
          const rows = readBefore + read
          if (input.tailBatch !== undefined && rows > 0 && (size - pos) * rows < (bytesBefore + bytes) * input.batch) batchRows = Math.min(input.batch, input.tailBatch)
          reader.write(buf.subarray(0, n))
          if (header !== undefined && mapper === undefined) await makeMapper()
          if (mapper) {
            await drain()
            replacementBefore = reader.takeReplacementSeen()
          }
        }
        if (end >= size) reader.end()
        if (header !== undefined && mapper === undefined) await makeMapper()
        await drain()
        if (inBatch > 0) completeStage()
        if (!chunks) break
        port.postMessage({bytes, lines: reader.lines, read, type: 'chunk'} satisfies WorkerMessage)
        // Read on to the file's end (a takeover): no chunk of this thread is left.
        if (end >= size) break
      }
      // While the writer commits the last batch, copy the batches it committed before into the
      // store's file: its last COMMIT then checkpoints only the last batch's pages (this thread
      // has nothing else to do; docs/performance.md, "Import").
      while (handed !== undefined && !stageFree[handed]) await waitForWriter()
      port.postMessage({bytes, type: 'end'} satisfies WorkerMessage)
    } finally {
      closeSync(fd)
      checkpoints?.close()
      stages?.close()
      await store?.close()
    }
  }

  main().catch((error: Error & {code?: string}) => {
    let message = error?.message ?? String(error)
    // This thread writes the stage files (in the temp folder) and checkpoints into the store's file: name the one that is full.
    if (error?.code === 'SQLITE_FULL' || error?.code === 'ENOSPC') {
      message += ` (${diskFullHint({store: isPostgresUrl(input.db) ? {kind: 'postgres'} : {kind: 'sqlite', path: input.db}})})`
    }
    port.postMessage({message, type: 'error'} satisfies WorkerMessage)
  })
}
