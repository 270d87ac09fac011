import {availableParallelism} from 'node:os'
import {dirname, resolve} from 'node:path'
import pLimit from 'p-limit'

import {productByApiId, type ProductRow} from '../catalog/lookup.js'
import {fromMinor} from '../currency.js'
import {resolveZone} from '../dates.js'
import {InterruptedError, type InterruptSignal, InvalidInputError, NotFoundError, OperationalError, PricectlError} from '../errors.js'
import {checkOutput} from '../store/output-file.js'
import {resolverOf} from '../revenue/order.js'
import type {StorePort} from '../store/port.js'
import {type Pipeline, startPipeline} from './pipeline.js'
import {choosePreset, type ImportKind, loadMapping, type Preset, withOverrides} from './presets.js'
import {countReason, sortedReasons} from './reasons.js'
import {looksLikeRejects, type RejectedRow, RejectsFile} from './rejects.js'
import {RowMapper} from './rows.js'
import {folderRejectsPath, importSources, isFolder, readHeader} from './sources.js'
import type {MainMessage} from './worker.js'

/**
 * Bulk import of gateway exports. A worker thread (worker.ts) reads the file with
 * csv-parse, maps and validates every row and writes the rows into the writer's stages; this
 * side commits each stage as a batch: upserts keyed by (user_id, origin, origin_id), each
 * batch one transaction. Every row is an event
 * (rows.ts), so a re-run is all "unchanged", and a run killed after some batches leaves
 * whole batches only: running it again inserts the rest and ends in the same state as an
 * uninterrupted run.
 */

export type ImportOptions = {
  /** Rows per transaction (default $PRICECTL_IMPORT_BATCH, else 250,000). */
  batchSize?: number
  dryRun?: boolean
  /** Exports to import: files, or folders of them (every *.csv in name order; sources.ts). */
  paths: readonly string[]
  /**
   * Reading threads at once (default: the cores, at most MAX_DEFAULT_JOBS): files read and
   * validated at once, a file read by several threads (`readers`) counting as that many.
   */
  jobs?: number
  kind: ImportKind
  mapping?: string
  preset?: string
  /** api_id of the product for rows that name none. */
  product?: string
  rejects?: string
  /** IANA zone of dates without an offset; overrides the mapping's time_zone. Default UTC. */
  tz?: string
  /** Overwrite an existing rejects path that is not a rejects CSV of an earlier run. */
  force?: boolean
  /** One user id for rows without one (a connected account's export has no customer column). */
  userId?: string
  /** The column holding user ids, instead of the layout's. */
  userIdColumn?: string
  /** Files up to this size (bytes) are read beside the writer, larger ones by worker threads (default IN_THREAD_MAX_BYTES, 1 MiB). */
  inThreadMaxBytes?: number
  /** The reading threads' page cache per stage (KB): a bigger batch spills to the stage file as it is staged (default STAGE_CACHE_KB, 1,024). */
  stageCacheKb?: number
  /** Threads that read one large file at once (default: the store's ImportsRepository.readersPerFile, else 1), each its own chunks of chunkBytes (default CHUNK_BYTES). */
  readers?: number
  chunkBytes?: number
}

export type ImportCounts = {inserted: number; read: number; rejected: number; stale: number; unchanged: number; updated: number}

/** What one file of the import did. */
export type ImportFileResult = ImportCounts & {file: string; preset: string}

export type ImportResult = ImportCounts & {
  dry_run: boolean
  /** The path given (a file or a folder), resolved; several paths: joined with ", ". */
  file: string
  /** Per file, in the order they were written. */
  files: ImportFileResult[]
  /** The layout; several layouts: their names joined with ", ". */
  preset: string
  /** Rejected rows per kind of reason (src/import/reasons.ts), the most frequent first. */
  rejected_by_reason: Record<string, number>
  rejects_file: null | string
  rows_per_second: number
  seconds: number
  /** Charge rows whose USD amount is the gateway's own converted amount, and its total difference to the store's FX. */
  settled_usd: SettledUsd
}

export type SettledUsd = {difference_usd: number; difference_usd_minor: number; rows: number}

export type ImportHooks = {
  /** After each batch: rows read so far and bytes of the files read so far (all files). */
  progress?: (rows: number, bytes: number) => void
  /**
   * Aborted (its reason 'SIGINT' or 'SIGTERM'): the import stops before its next batch, cleans
   * up as after any failure (stages removed, the rejects of committed batches put in place)
   * and throws an InterruptedError that says how many rows are committed.
   */
  signal?: AbortSignal
}

/**
 * Rows per transaction. Export ids are random, so every transaction rewrites most of the
 * unique index's pages: fewer, larger transactions write far less. 250,000 rows commit
 * every 2-3 s, well inside the 10 s other writers (price calls) wait for the store.
 */
export const DEFAULT_BATCH = 250_000
/** Rejected rows kept until their batch commits; more commit the batch early (bounded memory). */
const MAX_PENDING_REJECTS = 20_000
/** Rows between two progress messages of the reading thread. */
const PROGRESS_ROWS = 2000
/**
 * Default bound on files read at once. Each reading thread holds its own heap, and a file
 * waits for the stages until the writer reaches it: more readers only cost memory.
 */
export const MAX_DEFAULT_JOBS = 4
export const MAX_JOBS = 16

/** Rows per transaction: `value` (--batch-size), else PRICECTL_IMPORT_BATCH, else the adapter's (`preferred`), else DEFAULT_BATCH. */
export function batchSizeFrom(value: number | undefined, preferred = DEFAULT_BATCH): number {
  const n = value ?? (process.env.PRICECTL_IMPORT_BATCH ? Number(process.env.PRICECTL_IMPORT_BATCH) : preferred)
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new InvalidInputError(`batch size: expected a whole number from 1 to 1000000, got ${JSON.stringify(value ?? process.env.PRICECTL_IMPORT_BATCH)}`)
  return n
}

export function jobsFrom(value: number | undefined): number {
  if (value === undefined) return Math.max(1, Math.min(availableParallelism(), MAX_DEFAULT_JOBS))
  if (!Number.isInteger(value) || value < 1 || value > MAX_JOBS) throw new InvalidInputError(`--jobs: expected a whole number from 1 to ${MAX_JOBS}, got ${JSON.stringify(value)}`)
  return value
}

/** Bytes of every file the paths name (exit 2 naming a path that cannot be read). */
export function totalBytes(paths: string | readonly string[]): number {
  return importSources(typeof paths === 'string' ? [paths] : paths).reduce((n, s) => n + s.size, 0)
}

/** The default rejects path: beside a single file, inside a folder, else beside the first file. */
function defaultRejects(paths: readonly string[], kind: ImportKind): string {
  const first = paths[0]
  if (isFolder(first)) return folderRejectsPath(first, kind)
  return paths.length === 1 ? `${first}.rejects.csv` : folderRejectsPath(dirname(first), kind)
}

/** An error about one of several files names it. */
function naming(file: string, several: boolean, error: unknown): unknown {
  if (!several || !(error instanceof PricectlError) || error.message.includes(file)) return error
  return new PricectlError(`${file}: ${error.message}`, error.exitCode, error.body)
}

/** A file to import: its header as read (raw) and as the mapper names the columns (header). */
type Planned = {file: string; header: string[]; layout: Preset; raw: string[]; size: number}

type Deferred<T> = {promise: Promise<T>; reject(e: unknown): void; resolve(v: T): void}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return {promise, reject, resolve}
}

/**
 * Import one or several exports. Every file is opened and its header mapped before
 * anything is written (a file that cannot be read or whose layout is unknown is refused,
 * exit 2, naming it). Then up to `jobs` worker threads start on files at once (each reads its
 * header and loads what its mapper needs; a large file may take several, each its own chunks:
 * pipeline.ts), and the files' rows are written one file after the other, in the order of the
 * sources, through one writer and its stages (two per thread of a file): a file's batches are
 * its own, then the next file's begin; one summary, one rejects file.
 */
export async function importFiles(store: StorePort, o: ImportOptions, hooks: ImportHooks = {}): Promise<ImportResult> {
  const started = performance.now()
  const batchSize = batchSizeFrom(o.batchSize, store.imports.batchRows)
  // A batch size the operator gave (--batch-size, PRICECTL_IMPORT_BATCH) bounds what another
  // writer waits: every batch of that size commits, so the writer holds none back and the
  // file's end is not cut smaller (docs/postgres.md, "Import performance").
  const batchGiven = o.batchSize !== undefined || Boolean(process.env.PRICECTL_IMPORT_BATCH)
  const jobs = jobsFrom(o.jobs)
  // A file read by several threads takes that many of the jobs; --jobs 1 reads with one.
  const readers = Math.min(o.readers ?? store.imports.readersPerFile ?? 1, jobs)
  if (!Array.isArray(o.paths) || o.paths.length === 0) throw new InvalidInputError('expected the path of a CSV export, or of a folder of them')
  // Vetted before anything is written: never the store, an export or the mapping file.
  const rejectsPath = resolve(o.rejects ?? defaultRejects(o.paths, o.kind))
  const sources = importSources(o.paths, rejectsPath)
  const several = sources.length > 1
  const rejectsTarget = checkOutput(rejectsPath, {
    existsHint: 'it is not a rejects CSV of an earlier import; pass --force to overwrite it, or --rejects PATH',
    force: o.force,
    inputs: [
      ...sources.map((s) => ({path: s.path, what: several ? 'a file to import' : 'the file to import'})),
      {path: o.mapping, what: 'the --mapping file'},
    ],
    label: '--rejects',
    replaceable: looksLikeRejects,
    store: store.path,
  }).path
  const mapping = o.mapping ? loadMapping(o.kind, o.mapping) : undefined
  resolveZone(o.tz, '--tz')
  if (mapping && o.preset) throw new InvalidInputError('pass either --preset or --mapping, not both')
  let fallback: ProductRow | undefined
  if (o.product !== undefined) {
    fallback = await productByApiId(store, o.product)
    if (!fallback) throw new NotFoundError(`--product: unknown product ${JSON.stringify(o.product)} (list them with "pricectl products list")`)
  }

  // Every file's layout, before any row is written: each file is detected on its own header.
  const planned: Planned[] = sources.map((s) => {
    try {
      const header = readHeader(s.path)
      if (header === undefined) throw new InvalidInputError(`${s.path} is empty: expected a header row and data rows`)
      let layout = mapping ?? choosePreset(o.kind, header, o.preset)
      layout = withOverrides(layout, {tz: o.tz, userId: o.userId, userIdColumn: o.userIdColumn}, header)
      // Built here too so a layout the file cannot fill is refused before any row.
      const mapper = new RowMapper(store, o.kind, layout, header, fallback)
      return {file: s.path, header: mapper.header, layout, raw: header, size: s.size}
    } catch (error) {
      throw naming(s.path, several, error)
    }
  })

  const counts: ImportCounts = {inserted: 0, read: 0, rejected: 0, stale: 0, unchanged: 0, updated: 0}
  const byReason: Record<string, number> = {}
  const settled = {difference_minor: 0, rows: 0}
  const perFile: ImportFileResult[] = planned.map((p) => ({file: resolve(p.file), inserted: 0, preset: p.layout.name, read: 0, rejected: 0, stale: 0, unchanged: 0, updated: 0}))

  // The reading thread stages rows in batches of batchSize rows and rejects, each committed
  // whole by the store's import writer: nothing waits in memory, and a killed run leaves
  // whole batches only.
  // resolve: rows meeting newer partial updates take the fields those wrote (docs/revenue.md).
  const writer = store.imports.writer(o.kind, {dryRun: o.dryRun, hold: !batchGiven, resolve: resolverOf(store, o.kind)})
  const rejects = new RejectsFile(rejectsTarget, planned.map((p, i) => ({file: perFile[i].file, header: p.header})))
  // The stages the reading threads write rows into, one file after another.
  let stagePaths: readonly string[]
  try {
    stagePaths = writer.externalStages(readers)
  } catch (error) {
    await writer.close()
    rejects.close()
    throw error
  }
  let current = 0
  // The pipeline being written.
  let writing: Pipeline | undefined
  // Rejects are written after their batch committed, so a resumed run never lists a row twice.
  // Those of batches the writer holds back (writer.held) wait for the commit that makes
  // them durable; more than MAX_PENDING_REJECTS of them end the hold, so they stay bounded.
  let heldRejects: RejectedRow[] = []
  const committed = async (ok: boolean, batchRejects: RejectedRow[]) => {
    if (!ok) throw new OperationalError(`a product of ${planned[current].file} was deleted while it was being imported; nothing of the last batch was written: run the import again`)
    // The reading thread copies the committed WAL into the store's file while it waits (worker.ts).
    if (!o.dryRun) writing?.send({type: 'checkpoint'})
    counts.rejected += batchRejects.length
    for (const r of batchRejects) countReason(byReason, r[1])
    for (const r of batchRejects) heldRejects.push(r)
    if (writer.held > 0 && heldRejects.length > MAX_PENDING_REJECTS && !await writer.finish()) {
      throw new OperationalError(`a product of ${planned[current].file} was deleted while it was being imported; nothing of the last batches was written: run the import again`)
    }
    if (writer.held > 0) return
    rejects.addMany(heldRejects.sort((a, b) => a[3] - b[3] || a[0] - b[0]))
    heldRejects = []
  }

  // Up to `jobs` reading threads at once (p-limit over files, first come first served, so a
  // file starts before every later one); a file's slot frees once its rows are written.
  const limit = pLimit(Math.max(1, Math.floor(jobs / readers)))
  const ready = planned.map(() => deferred<Pipeline>())
  // Awaited by the writing loop unless it stopped earlier: never an unhandled rejection.
  for (const r of ready) r.promise.catch(() => {})
  const written = planned.map(() => deferred<void>())
  const pipelines: Pipeline[] = []
  let stopping = false
  for (const [i, p] of planned.entries()) {
    void limit(async () => {
      if (stopping) return
      try {
        const layout: MainMessage = {fallbackProductId: fallback?.id ?? null, layout: p.layout, type: 'layout'}
        const input = {batch: batchSize, db: store.location, tailBatch: batchGiven ? undefined : store.imports.tailBatchRows, file: p.file, kind: o.kind, maxRejects: MAX_PENDING_REJECTS, progressRows: PROGRESS_ROWS, stageCacheKb: o.stageCacheKb, stages: stagePaths}
        const pipeline = await startPipeline(input, {chunkBytes: o.chunkBytes, header: p.raw, inThreadMaxBytes: o.inThreadMaxBytes, onHeader: () => layout, readers})
        pipelines.push(pipeline)
        ready[i].resolve(pipeline)
      } catch (error) {
        ready[i].reject(error)
        return
      }
      await written[i].promise
    })
  }

  // An abort (SIGINT, SIGTERM) is seen between two batches, never inside one (a batch's
  // commit is awaited whole): the batches committed are whole, and the next run goes on from
  // them. What it says is counted when it stops the import, after a commit in flight.
  const {signal} = hooks
  const interrupted = () => {
    const committedRows = writer.counts.inserted + writer.counts.updated + writer.counts.unchanged + writer.counts.stale - writer.held
    const what = o.dryRun ? 'dry run, nothing was written' : `${committedRows} row${committedRows === 1 ? '' : 's'} committed`
    return new InterruptedError(`interrupted: ${what}; run the same command again to continue`, (signal?.reason ?? 'SIGINT') as InterruptSignal, {
      committed: o.dryRun ? 0 : committedRows,
      dry_run: Boolean(o.dryRun),
    })
  }
  const stop = new Promise<'stop'>((resolve) => {
    if (signal === undefined) return
    const abort = () => resolve('stop')
    if (signal.aborted) abort()
    else signal.addEventListener('abort', abort, {once: true})
  })
  /** A step of the import, or the interruption if it comes first. */
  const unlessInterrupted = async <T>(step: Promise<T>): Promise<T> => {
    if (signal === undefined) return await step
    const first = await Promise.race([step.then((value) => ({value})), stop])
    if (first === 'stop') throw interrupted()
    return first.value
  }

  let bytesBefore = 0
  try {
    for (const [i, p] of planned.entries()) {
      current = i
      const pipeline = await unlessInterrupted(ready[i].promise)
      writing = pipeline
      // The stages are this file's now (the file before has ended: its last batch committed).
      for (const stage of pipeline.stages) pipeline.send({stage, type: 'free'})
      const before = {...writer.counts}
      const file = perFile[i]
      for (;;) {
        const next = await unlessInterrupted(pipeline.messages.next())
        if (next.done) break
        // Queued messages may already be waiting: none is acted on once interrupted.
        if (signal?.aborted) throw interrupted()
        const m = next.value
        if (m.type === 'error') throw new OperationalError(`cannot import ${p.file}: ${m.message}`)
        if (m.type === 'header') {
          if (JSON.stringify(m.header) !== JSON.stringify(p.raw)) throw new OperationalError(`${p.file} changed while it was being imported (its header is not the one read first): run the import again`)
          continue
        }
        if (m.type === 'end') break
        if (m.type === 'staged') {
          // A batch the worker staged: committed now, its rejects written after it, and its
          // stage handed back to be filled again.
          file.rejected += m.rejects.length
          const ok = await writer.commitStaged(m)
          // Before the checkpoint request (committed): the worker may be waiting for it. A
          // batch of rejects only was written into no stage: freeing its stage would free the
          // one the worker filled next, before it is committed, and the worker would empty it.
          if (m.rows > 0) pipeline.send({stage: m.stage, type: 'free'})
          await committed(ok, m.rejects.map(([line, reason, cells]) => [line, reason, cells, i]))
          // A turn of the event loop after each batch: the reading thread's messages can keep
          // one turn busy for the whole import (a MessagePort delivers what arrives while it
          // is drained), and a signal is only seen between turns.
          if (signal !== undefined) await new Promise((resolve) => setImmediate(resolve))
        }
        counts.read += m.read - file.read
        settled.rows += m.settled.rows
        settled.difference_minor += m.settled.difference_minor
        file.read = m.read
        hooks.progress?.(counts.read, bytesBefore + m.bytes)
      }
      // The worker is done: stop it (awaited with the others at the end) and free its slot.
      writing = undefined
      pipeline.close().catch(() => {})
      written[i].resolve()
      for (const k of ['inserted', 'stale', 'unchanged', 'updated'] as const) file[k] = writer.counts[k] - before[k]
      bytesBefore += p.size
    }
    // The batches a first load held back commit now, with their rejects.
    await committed(await writer.finish(), [])
  } finally {
    stopping = true
    limit.clearQueue()
    for (const w of written) w.resolve()
    await writer.close()
    await Promise.all(pipelines.map((p) => p.close()))
    rejects.close()
  }
  const seconds = (performance.now() - started) / 1000
  Object.assign(counts, writer.counts)
  return {
    ...counts,
    dry_run: Boolean(o.dryRun),
    file: o.paths.map((p) => resolve(p)).join(', '),
    files: perFile,
    preset: [...new Set(perFile.map((f) => f.preset))].join(', '),
    rejected_by_reason: sortedReasons(byReason),
    rejects_file: counts.rejected > 0 ? rejectsPath : null,
    rows_per_second: seconds > 0 ? Math.round(counts.read / seconds) : counts.read,
    seconds: Math.round(seconds * 1000) / 1000,
    settled_usd: {difference_usd: fromMinor(settled.difference_minor, 'USD'), difference_usd_minor: settled.difference_minor, rows: settled.rows},
  }
}
