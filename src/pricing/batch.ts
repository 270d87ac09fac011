import {parse} from 'csv-parse'
import {stringify} from 'csv-stringify/sync'
import {createReadStream} from 'node:fs'
import {once} from 'node:events'
import type {Readable, Writable} from 'node:stream'

import {checkJsonDepth, parseJson} from '../input.js'
import {freezeClock, thawClock} from '../clock.js'
import {InvalidInputError, PricectlError} from '../errors.js'
import {safeCell} from '../csv-cell.js'
import {reservedKeyProblem} from '../schemas/no-zod.js'
import type {PriceResult} from '../schemas/price.js'
import {WriteBehindAbort} from '../store/port/errors.js'
import type {WriteBehind} from '../store/port/pricing.js'
import type {PricingContext} from './context.js'
import {type ChunkOptions, chunkOfDistinctKeys} from './locks.js'
import {type JsonSink, LockedLines, priceInChunk, priceLine, printsFromLine, writePriceLine} from './price.js'

export type BatchSummary = {failed: number; priced: number; read: number}
export type BatchOptions = {
  /** Requests per transaction: locks are written in batches for speed. */
  batchSize?: number
  /** Requests per chunk of store calls (locks read in one call, written in one call); default CHUNK_SIZE. */
  chunkSize?: number
  format?: 'csv' | 'jsonl'
  onError?: (line: number, message: string) => void
  output: 'csv' | 'jsonl'
  /** Smallest group whose rows may be written behind (docs/performance.md "New users: write-behind"); default WRITE_BEHIND_MIN. */
  writeBehindMin?: number
}

/**
 * Longest request line (JSONL) or record (CSV) of --input. A request is a few hundred
 * bytes; a longer line is reported as a bad line instead of being gathered in memory.
 */
export const MAX_REQUEST_BYTES = 1024 * 1024

/** Requests per chunk of store calls: the locks of a chunk are read in one call and written in one call. */
export const CHUNK_SIZE = 512

const CSV_COLUMNS = ['line', 'user_id', 'country', 'currency', 'product', 'price', 'price_usd', 'display_price', 'interval', 'interval_count', 'experiment_id', 'arm_id', 'error']

/**
 * `price --input FILE`: one request per JSONL line or CSV row, one result per line out,
 * in constant memory. A bad line is reported with its number and the rest go on.
 */
export async function priceBatch(ctx: PricingContext, file: string, out: Writable, options: BatchOptions): Promise<BatchSummary> {
  const input: Readable = file === '-' ? process.stdin : createReadStream(file, {highWaterMark: 1 << 20})
  const format = options.format ?? (/\.csv$/i.test(file) ? 'csv' : 'jsonl')
  const batchSize = options.batchSize ?? 5000
  const chunkSize = Math.max(1, options.chunkSize ?? CHUNK_SIZE)
  const writer = new OutputBuffer(out)
  if (options.output === 'csv') writer.text(stringify([CSV_COLUMNS]))

  const failureText = (line: number, message: string) =>
    options.output === 'csv' ? stringify([[line, '', '', '', '', '', '', '', '', '', '', '', safeCell(message)]]) : JSON.stringify({line, message, success: false}) + '\n'
  // Failures of the group being priced, reported once it is committed (it may be priced again).
  let errors: [number, string][] = []
  const pricer = batchPricer(ctx, {batchSize, chunkSize, writeBehindMin: options.writeBehindMin}, {
    drain() {
      if (errors.length > 0) {
        for (const [line, message] of errors) options.onError?.(line, message)
        errors = []
      }
      return writer.pending ? writer.flush() : undefined
    },
    failure(line, message) {
      if (options.onError) errors.push([line, message])
      writer.text(failureText(line, message))
      writer.spill()
    },
    // JSONL results are written by the pricer itself (priceLine), straight into the buffer.
    jsonl: options.output === 'jsonl' ? {sink: writer, written: () => writer.spill()} : undefined,
    // A group not committed yet: its lines are rendered into buffers of their own, written out on release.
    hold() {
      const held = new OutputBuffer()
      const errors: [number, string][] = []
      return {
        failure(line, message) {
          errors.push([line, message])
          held.text(failureText(line, message))
          held.spill()
        },
        release() {
          for (const [line, message] of errors) options.onError?.(line, message)
          writer.append(held)
        },
        result(line, result) {
          if (options.output === 'csv') held.text(csvRows(line, result))
          else writePriceLine(result, held)
          held.spill()
        },
      }
    },
    mark: () => ({errors: errors.length, output: writer.mark()}),
    result(line, result) {
      if (options.output === 'csv') writer.text(csvRows(line, result))
      else writePriceLine(result, writer)
      writer.spill()
    },
    rewind(mark) {
      const m = mark as {errors: number; output: OutputMark}
      errors.length = m.errors
      writer.rewind(m.output)
    },
  })
  const handle = pricer.handle

  try {
    if (format === 'jsonl') {
      // Lines come a chunk at a time and are priced synchronously: no promise per request.
      for await (const items of jsonlLines(input)) {
        for (const item of items) {
          let waiting: Promise<void> | undefined
          if ('error' in item) waiting = handle(item.line, item.error)
          else {
            if (!item.text.trim()) continue
            waiting = pricer.handleText(item)
          }
          if (waiting) await waiting
        }
      }
    } else {
      const parser = parse({bom: true, columns: true, info: true, max_record_size: MAX_REQUEST_BYTES, relax_column_count: true, skip_empty_lines: true, trim: true})
      // Fed by hand so an encoding error upstream fails the parse (pipe() would drop it).
      void (async () => {
        try {
          for await (const chunk of utf8Checked(input)) if (!parser.write(chunk)) await once(parser, 'drain')
          parser.end()
        } catch (error) {
          parser.destroy(error as Error)
        }
      })()
      for await (const {info, record} of parser as AsyncIterable<{info: {columns: {name: string}[]; index: number; lines: number}; record: Record<string, string>}>) {
        let request: unknown
        try {
          // More cells than the header names would be dropped by csv-parse: the row is refused
          // instead (a list such as "pro_monthly,pro_yearly" needs quotes or ";").
          if (info.index > info.columns.length) throw new InvalidInputError(`${info.index} cells under a header of ${info.columns.length} (${info.columns.map((c) => c.name).join(', ')}): quote a cell that holds a comma, and separate products with ";"`)
          request = requestFromCsv(record)
        } catch (error) {
          request = error as Error
        }
        const waiting = handle(info.lines, request)
        if (waiting) await waiting
      }
    }
  } catch (error) {
    // What was read before the input failed is priced and kept.
    await pricer.finish()
    await writer.flush()
    const e = error as {code?: string; message: string}
    if (e.code === 'ENOENT') throw new InvalidInputError(`--input: no such file ${file}`)
    if (e.code?.startsWith('CSV_')) throw new InvalidInputError(`--input: ${e.message}`)
    throw error
  }
  await pricer.finish()
  await writer.flush()
  return pricer.summary
}

/** Where the batch pricer sends each outcome, in input order. */
export type BatchSink = {
  /** After each group of requests: a promise when the consumer needs the batch to wait (output backpressure). */
  drain?: () => Promise<void> | undefined
  failure: (line: number, message: string) => void
  /**
   * Where the outcomes given so far end (before a group's transaction): rewind() takes back
   * what came after it, when the transaction runs the group again. A sink without them must
   * not be used with a store that runs transactions again (PostgreSQL).
   */
  mark?: () => unknown
  rewind?: (mark: unknown) => void
  /**
   * Outcomes of a group whose writes are not committed yet (write-behind): what this
   * returns takes them as they come, and release() hands them on once the group is
   * committed (never, when the group is priced again). Without it they are kept as objects.
   */
  hold?: () => HeldOutcomes
  result: (line: number, result: PriceResult) => void
  /**
   * Results as writePriceLine's lines: when set, each result is written there (then
   * `written` is called) instead of given to `result`, and a locked user's line may be
   * printed without making its result (price.ts priceLine).
   */
  jsonl?: {sink: JsonSink; written: () => void}
}

export type HeldOutcomes = Pick<BatchSink, 'failure' | 'result'> & {release: () => void}

/**
 * Groups of new users the writes of which may go to a second connection (write-behind) from
 * this size on: below it the second thread's start and messages cost more than they save.
 */
export const WRITE_BEHIND_MIN = 5000

/**
 * The batch pricer both `price --input` and the library's priceMany drive. Requests are
 * gathered into groups of `batchSize`, each priced in one write transaction (a read
 * transaction on a read-only store: locked users only) with the clock frozen, a chunk of
 * `chunkSize` requests at a time: each chunk's locks and user countries are read in one
 * call and written in one call. `handle` returns a promise only when a group was priced,
 * `finish` prices the last group.
 *
 * Outcomes go to the sink in input order. Usually a group is priced, written and committed
 * in one transaction and its outcomes go to the sink inside it. With write-behind (a SQLite
 * store, new users; docs/performance.md "New users: write-behind") the rows of
 * group k (its locks, users and, with a running experiment, exposures: the same
 * section) are written and committed in one transaction
 * by a second thread while group k+1 is priced, and group k's outcomes are held (sink.hold)
 * until its commit is seen (a quote shown is a quote stored, with its exposure); whatever
 * write-behind does not take ends it, and the groups it did not commit are priced again the
 * usual way.
 */
export function batchPricer(
  ctx: PricingContext,
  options: {batchSize: number; chunkSize: number; writeBehindMin?: number},
  sink: BatchSink,
): {
  finish: () => Promise<void>
  handle: (line: number, request: unknown) => Promise<void> | undefined
  handleText: (item: TextItem) => Promise<void> | undefined
  summary: BatchSummary
} {
  const {batchSize, chunkSize} = options
  const writeBehindMin = options.writeBehindMin ?? WRITE_BEHIND_MIN
  const summary: BatchSummary = {failed: 0, priced: 0, read: 0}
  // A bigger page cache and fewer WAL checkpoints while the batch writes (SQLite).
  ctx.store.pricing.expectBulk()
  const readOnly = Boolean(ctx.store.readOnly)
  const jsonl = sink.jsonl
  const lines = jsonl ? new LockedLines() : undefined
  // A chunk names each lock key once (chunkOfDistinctKeys, below); of its fingerprinted locks,
  // those priceLine prints from an earlier line (the others are read whole when it begins).
  const chunkOptions: ChunkOptions = {distinct: true}
  if (lines) chunkOptions.printed = (prints, requests) => printsFromLine(lines, prints, requests)
  // A JSONL line is kept as its text (`request` undefined) until its chunk is priced: parsed
  // then, its request dies young instead of living (and being copied by the GC) as long as
  // its group may be priced again (docs/performance.md "New users: write-behind").
  let group: {line: number; request: unknown | Error; text: string | undefined}[] = []
  type Item = (typeof group)[number]
  // A held group (write-behind) has no jsonl: its lines wait for the commit in the hold's buffer.
  type Outcomes = Pick<BatchSink, 'failure' | 'jsonl' | 'result'>

  const priceOne = (line: number, request: unknown | Error, to: Outcomes, counts: BatchSummary): void => {
    counts.read++
    try {
      if (request instanceof Error) throw request
      if (to.jsonl) {
        priceLine(ctx, request, to.jsonl.sink, lines!)
        counts.priced++
        to.jsonl.written()
      } else {
        const result = priceInChunk(ctx, request)
        counts.priced++
        to.result(line, result)
      }
    } catch (error) {
      if (error instanceof WriteBehindAbort) throw error
      counts.failed++
      const message =
        error instanceof PricectlError || error instanceof SyntaxError
          ? error.message
          : readOnly && String((error as {code?: unknown}).code).startsWith('SQLITE_READONLY')
            ? 'the store is read-only: only requests whose quote is already locked can be priced'
            : `unexpected: ${(error as Error).message}`
      to.failure(line, message)
    }
  }

  /** An item's request: a JSONL line's text parsed (anew each time: a group priced again gets fresh objects), or the error. */
  const request = (item: Item): unknown => {
    if (item.text === undefined) return item.request
    try {
      // The failure names the input's line; the text is that one line.
      return parseJson(item.text, undefined, {lines: false})
    } catch (error) {
      return error
    }
  }

  /**
   * Price a group's requests a chunk at a time (the caller holds the transaction, if any);
   * `afterChunk` is called after each chunk's writes with the requests priced so far.
   */
  const priceGroup = async (items: Item[], to: Outcomes, counts: BatchSummary, afterChunk?: (priced: number) => void): Promise<void> => {
    // Locks are read as fingerprints only where a locked user's line may be printed again.
    ctx.chunk.fingerprints = to.jsonl !== undefined
    freezeClock()
    try {
      for (let from = 0; from < items.length; ) {
        let chunk = items.slice(from, from + chunkSize)
        let requests = chunk.map(request)
        // A chunk names each lock key once: every read is made when it begins, and no
        // request needs what an earlier one of its chunk wrote (docs/pricing.md "Storage").
        const n = chunkOfDistinctKeys(requests)
        if (n < chunk.length) {
          chunk = chunk.slice(0, n)
          requests = requests.slice(0, n)
        }
        await ctx.chunk.begin(requests, chunkOptions)
        try {
          for (let i = 0; i < chunk.length; i++) priceOne(chunk[i].line, requests[i], to, counts)
          await ctx.chunk.flush()
        } finally {
          ctx.chunk.close()
        }
        from += chunk.length
        afterChunk?.(from)
      }
    } finally {
      thawClock()
    }
  }

  /**
   * The usual way: a group in one write transaction, outcomes to the sink inside it. As a
   * lock-writing transaction (locksOnly): on PostgreSQL it takes no store-wide lock and may
   * run again (a new lock it claims was made by a server meanwhile, or it writes more than new
   * locks), so each run first takes back what an earlier run gave the sink.
   */
  const priceCommitted = async (items: Item[], afterChunk?: (priced: number) => void): Promise<void> => {
    const before = {...summary}
    const mark = sink.mark?.()
    let runs = 0
    await ctx.store.transaction(
      async () => {
        if (runs++ > 0) {
          sink.rewind?.(mark)
          Object.assign(summary, before)
          // Posteriors cached by the run rolled back counted its exposures.
          ctx.experiments.refresh()
        }
        await priceGroup(items, sink, summary, afterChunk)
      },
      {locksOnly: true, write: true},
    )
  }

  // Write-behind: its writer started during the first full group (after its first chunk),
  // begun before the second; `inFlight` are the groups sent and not yet released.
  let behind: undefined | WriteBehind
  let behindTried = readOnly || !ctx.store.pricing.writeBehind
  let behindBegun = false
  /** Requests of the group during which the writer started. */
  let firstGroup = 0
  const inFlight: {counts: BatchSummary; held: HeldOutcomes; items: Item[]; seq: number}[] = []

  const hold = (): HeldOutcomes => {
    if (sink.hold) return sink.hold()
    const outcomes: [number, PriceResult | string][] = []
    return {
      failure: (line, message) => outcomes.push([line, message]),
      release() {
        for (const [line, o] of outcomes) typeof o === 'string' ? sink.failure(line, o) : sink.result(line, o)
      },
      result: (line, result) => outcomes.push([line, result]),
    }
  }

  const release = (g: (typeof inFlight)[number]): void => {
    g.held.release()
    summary.read += g.counts.read
    summary.priced += g.counts.priced
    summary.failed += g.counts.failed
  }

  /**
   * Hand on the outcomes of committed groups, oldest first, waiting for them while more than
   * `keep` are in flight. False when a group was not written: write-behind is then ended and
   * that group and the later ones are priced again the usual way.
   */
  const settle = async (keep: number): Promise<boolean> => {
    while (inFlight.length > 0) {
      const ok = behind!.committed(inFlight[0].seq, inFlight.length > keep)
      if (ok === undefined) return true
      if (!ok) {
        await fallBack([])
        return false
      }
      release(inFlight.shift()!)
    }
    return true
  }

  /** End write-behind: committed groups are handed on, the rest (and `items`) priced again the usual way. */
  const fallBack = async (items: Item[]): Promise<void> => {
    const again: Item[] = []
    for (const g of inFlight) {
      if (again.length === 0 && behind!.committed(g.seq, true)) release(g)
      else again.push(...g.items)
    }
    inFlight.length = 0
    behind!.end()
    behind = undefined
    // Cached posteriors counted the exposures of the groups priced again: read them from the store.
    ctx.experiments.refresh()
    again.push(...items)
    for (let from = 0; from < again.length; from += batchSize) await priceCommitted(again.slice(from, from + batchSize))
  }

  /**
   * After the first chunk of the first full group: when it wrote locks, the writer starts
   * (its thread gets ready while the rest of the group is priced, instead of being waited
   * for at begin(); docs/performance.md "New users: write-behind"). begin() decides on the
   * whole group.
   */
  const startBehind = (priced: number): void => {
    if (behindTried) return
    behindTried = true
    behind = ctx.store.pricing.writeBehind?.(priced)
  }

  /** Price a group with write-behind: its rows are sent, its outcomes held until their commit. */
  const priceBehind = async (items: Item[]): Promise<void> => {
    const counts: BatchSummary = {failed: 0, priced: 0, read: 0}
    const held = hold()
    try {
      await priceGroup(items, held, counts)
    } catch (error) {
      if (!(error instanceof WriteBehindAbort)) throw error
      await fallBack(items)
      return
    }
    inFlight.push({counts, held, items, seq: behind!.commit()})
    // The group just sent may be written while the next one is priced; an older one is waited for.
    await settle(1)
  }

  /**
   * Price the requests gathered so far: in one write transaction (a read transaction on a
   * read-only store: locked users only), or with write-behind.
   */
  const run = async (): Promise<void> => {
    if (group.length === 0) return
    const items = group
    group = []
    // Loading the geolocation module is the one wait before pricing (requests with an IP).
    for (const item of items) {
      // A line that may hold an IP is parsed now (its text is kept: priced, it is parsed again).
      // A key may be spelled with JSON escapes ("\u0069p"): a line with any is parsed too.
      const r = item.text === undefined ? item.request : !ctx.geoReady && mayHoldIp(item.text) ? request(item) : undefined
      if (r !== undefined && !(r instanceof Error) && ctx.needsReady(r)) await ctx.ready(r)
    }
    if (behind && !behindBegun) {
      // The writer started during the first group, priced the usual way: it reads the
      // store's version now, before this thread's first read for write-behind, if that
      // group was mostly new users.
      behindBegun = true
      if (!behind.begin(firstGroup)) {
        behind.end()
        behind = undefined
      }
    }
    if (behind) await priceBehind(items)
    else if (!behindTried && items.length >= writeBehindMin) {
      firstGroup = items.length
      await priceCommitted(items, startBehind)
    } else await priceCommitted(items)
    await sink.drain?.()
  }

  const finish = async (): Promise<void> => {
    await run()
    if (behind) {
      if (await settle(0)) {
        behind.end()
        behind = undefined
      }
      await sink.drain?.()
    }
  }

  /** Gather a request; a full group is priced (a promise only then). */
  const handle = (line: number, request: unknown | Error): Promise<void> | undefined => {
    group.push({line, request, text: undefined})
    return group.length >= batchSize ? run() : undefined
  }

  /** Gather a JSONL line (the object itself: no copy to keep), parsed when its chunk is priced. */
  const handleText = (item: TextItem): Promise<void> | undefined => {
    group.push(item)
    return group.length >= batchSize ? run() : undefined
  }

  return {finish, handle, handleText, summary}
}

/** Whether a JSONL line's text may name an IP (`ip`, `get_ip_from_request`), plainly or through escapes. */
function mayHoldIp(text: string): boolean {
  return text.includes('ip') || text.includes('\\u')
}

const UTF16 = '--input: the file is UTF-16 text; save it as UTF-8 (for example: iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8)'

function isUtf16Bom(b: Buffer): boolean {
  return (b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)
}

/**
 * JSONL lines as UTF-8 text, split on bytes so each line is decoded (and refused when it
 * is not UTF-8, or longer than MAX_REQUEST_BYTES) on its own: one bad line is one error.
 * Lines are decoded natively; only a line showing U+FFFD is checked byte by byte (it may
 * hold that character for real, or bytes that are not UTF-8).
 */
type JsonlLine = {error: InvalidInputError; line: number} | TextItem

/** A JSONL line's text, in the shape batchPricer keeps its requests in (`request` undefined until parsed). */
export type TextItem = {line: number; request: undefined; text: string}

async function* jsonlLines(input: Readable): AsyncGenerator<JsonlLine[]> {
  const strict = new TextDecoder('utf-8', {fatal: true})
  let parts: Buffer[] = []
  let size = 0
  let oversized = false
  let line = 0
  let first = true
  const decode = (bytes: Buffer, from: number, to: number): JsonlLine => {
    line++
    if (to > from && bytes[to - 1] === 0x0d) to--
    let text = bytes.toString('utf8', from, to)
    if (text.includes('\uFFFD')) {
      try {
        strict.decode(bytes.subarray(from, to))
      } catch {
        return {error: new InvalidInputError('not UTF-8 text (save the file as UTF-8)'), line}
      }
    }
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    return {line, request: undefined, text}
  }
  /** The line that ends at `nl` of `buf`, with what earlier chunks held of it. */
  const finish = (buf: Buffer, from: number, to: number) => {
    if (size === 0 && !oversized) {
      if (to - from > MAX_REQUEST_BYTES) return tooLong()
      return decode(buf, from, to)
    }
    const total = size + (to - from)
    if (oversized || total > MAX_REQUEST_BYTES) return tooLong()
    parts.push(buf.subarray(from, to))
    const whole = Buffer.concat(parts, total)
    parts = []
    size = 0
    return decode(whole, 0, whole.length)
  }
  const tooLong = () => {
    line++
    parts = []
    size = 0
    oversized = false
    return {error: new InvalidInputError(`the line is longer than ${MAX_REQUEST_BYTES} bytes (one request per line)`), line}
  }
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    if (first) {
      first = false
      if (isUtf16Bom(buf)) throw new InvalidInputError(UTF16)
    }
    let start = 0
    const lines: JsonlLine[] = []
    for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      lines.push(finish(buf, start, nl))
      start = nl + 1
    }
    if (lines.length > 0) yield lines
    // The start of a line that goes on in the next chunk (kept unless it is already too long).
    if (start < buf.length && !oversized) {
      size += buf.length - start
      if (size > MAX_REQUEST_BYTES) {
        oversized = true
        parts = []
      } else parts.push(Buffer.from(buf.subarray(start)))
    }
  }
  if (size > 0 || oversized) yield [finish(Buffer.alloc(0), 0, 0)]
}

/** The input's bytes, passed on after checking they are UTF-8 (CSV input). */
async function* utf8Checked(input: Readable): AsyncGenerator<Buffer> {
  const decoder = new TextDecoder('utf-8', {fatal: true})
  let offset = 0
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    if (offset === 0 && isUtf16Bom(buf)) throw new InvalidInputError(UTF16)
    try {
      decoder.decode(buf, {stream: true})
    } catch {
      throw new InvalidInputError(`--input: not UTF-8 text (a bad byte after byte ${offset}); save it as UTF-8 (for example: iconv -f LATIN1 -t UTF-8 FILE > FILE.utf8)`)
    }
    offset += buf.length
    yield buf
  }
  try {
    decoder.decode()
  } catch {
    throw new InvalidInputError('--input: not UTF-8 text (the file ends inside a character); save it as UTF-8')
  }
}

function csvRows(line: number, r: PriceResult): string {
  const rows = Object.entries(r.products).map(([id, p]) => [
    line,
    safeCell(r.user_id),
    r.country,
    r.currency,
    safeCell(id),
    p.price,
    p.price_usd,
    p.display.price,
    p.interval,
    p.interval_count,
    r.variants.experiment_id,
    r.variants.arm_id,
    '',
  ])
  return stringify(rows)
}

const BOOL: Record<string, boolean> = {'0': false, '1': true, false: false, no: false, true: true, yes: true}

function bool(v: string | undefined, column: string): boolean | undefined {
  if (v === undefined || v === '') return undefined
  const b = BOOL[v.toLowerCase()]
  if (b === undefined) throw new InvalidInputError(`${column}: expected true or false, got "${v}"`)
  return b
}

function list(v: string | undefined): string[] | undefined {
  if (!v) return undefined
  return v.split(/[;,|]/).map((s) => s.trim()).filter(Boolean)
}

/** `features` and `coupons` cells: a JSON object, or KEY=VALUE pairs separated by `;`. */
function object(v: string | undefined, column: string): Record<string, string> | undefined {
  if (!v) return undefined
  if (v.startsWith('{')) {
    // A cell: its row's line is reported with the failure.
    checkJsonDepth(v, column, {lines: false})
    try {
      return JSON.parse(v) as Record<string, string>
    } catch {
      throw new InvalidInputError(`${column}: malformed JSON ${JSON.stringify(v.slice(0, 60))}`)
    }
  }
  const out: Record<string, string> = {}
  for (const pair of v.split(';')) {
    const eq = pair.indexOf('=')
    if (eq <= 0) throw new InvalidInputError(`${column}: expected KEY=VALUE;KEY=VALUE, got "${v}"`)
    const reserved = reservedKeyProblem(pair.slice(0, eq).trim(), 'key')
    if (reserved) throw new InvalidInputError(`${column}: ${reserved}`)
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim()
  }
  return out
}

/** A CSV row of requests: columns named after the spec's body fields. */
export function requestFromCsv(row: Record<string, string>): Record<string, unknown> {
  const r: Record<string, unknown> = {
    country: row.country || undefined,
    coupons: object(row.coupons, 'coupons'),
    currency: row.currency || undefined,
    features: object(row.features, 'features'),
    get_ip_from_request: bool(row.get_ip_from_request, 'get_ip_from_request'),
    integrations: list(row.integrations),
    ip: row.ip || undefined,
    override: bool(row.override, 'override'),
    override_currency: bool(row.override_currency, 'override_currency'),
    package_id: row.package_id || undefined,
    products: list(row.products ?? row.product),
    run_experiment: bool(row.run_experiment, 'run_experiment'),
    user_id: row.user_id || undefined,
  }
  for (const k of Object.keys(r)) if (r[k] === undefined) delete r[k]
  return r
}

type OutputMark = {kept: number; pos: number}

/**
 * Output gathered in large buffers and written with backpressure. Text is encoded straight
 * into the buffer and encoded fragments are copied, so a batch never builds one big string.
 */
export class OutputBuffer {
  static readonly SIZE = 1 << 18
  private buf = Buffer.allocUnsafe(OutputBuffer.SIZE)
  private pos = 0
  /** Full buffers set aside until flush() (with a stream) or append() to another OutputBuffer (without). */
  private kept: Buffer[] = []

  constructor(private readonly out?: Writable) {}

  /** Enough is gathered that the caller should flush. */
  get full(): boolean {
    return this.pos >= OutputBuffer.SIZE - (1 << 16)
  }

  text(s: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8; write() would cut a longer text short.
    this.reserve(s.length * 3)
    this.pos += this.buf.write(s, this.pos)
  }

  bytes(b: Buffer): void {
    this.reserve(b.length)
    this.buf.set(b, this.pos)
    this.pos += b.length
  }

  /**
   * Set a full buffer aside: results are produced inside their group's transaction, which
   * cannot await and may still roll back, so nothing reaches the stream before flush(),
   * called once the group is committed (a quote shown is a quote stored).
   */
  spill(): void {
    if (this.full) this.cut()
  }

  /** The output needs writing or the stream asked to wait: the caller should flush(). */
  get pending(): boolean {
    return this.kept.length > 0 || this.full || Boolean(this.out?.writableNeedDrain)
  }

  /** Write what is gathered (the caller's group is committed) and wait for the stream's drain. */
  async flush(): Promise<void> {
    this.emit()
    if (this.out?.writableNeedDrain) await once(this.out, 'drain')
  }

  /** Where the output gathered so far ends: rewind() drops what came after (nothing is written in between). */
  mark(): OutputMark {
    return {kept: this.kept.length, pos: this.pos}
  }

  /** Drop what was gathered since mark() (a group priced again); flush() and append() must not have run since. */
  rewind(mark: OutputMark): void {
    if (this.kept.length > mark.kept) {
      // The buffer current at the mark was cut since: its first mark.pos bytes are kept.
      const cut = this.kept[mark.kept]
      this.kept.length = mark.kept
      this.buf = Buffer.allocUnsafe(Math.max(OutputBuffer.SIZE, mark.pos))
      cut.copy(this.buf, 0, 0, mark.pos)
    }
    this.pos = mark.pos
  }

  /** Take what `other` (a buffer without a stream) gathered after what this one has, without copying it; written as flush() would. */
  append(other: OutputBuffer): void {
    if (other.pos > 0) other.cut()
    if (this.pos > 0) this.cut()
    for (const chunk of other.kept) this.kept.push(chunk)
    other.kept = []
    this.emit()
  }

  private cut(): void {
    this.kept.push(this.buf.subarray(0, this.pos))
    this.buf = Buffer.allocUnsafe(OutputBuffer.SIZE)
    this.pos = 0
  }

  /** With a stream: write what is kept and gathered. */
  private emit(): void {
    if (!this.out) return
    if (this.pos > 0) this.cut()
    for (const chunk of this.kept) this.out.write(chunk)
    this.kept = []
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n))
    this.buf.copy(bigger, 0, 0, this.pos)
    this.buf = bigger
  }
}
