import {availableParallelism} from 'node:os'
import {dirname, resolve} from 'node:path'
import pLimit from 'p-limit'

import {productByApiId, type ProductRow} from '../catalog/lookup.js'
import {fromMinor} from '../currency.js'
import {resolveZone} from '../dates.js'
import {InvalidInputError, OperationalError, PricectlError} from '../errors.js'
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
 * csv-parse and maps and validates every row; this side writes: batched upserts keyed by
 * (user_id, origin, origin_id), each batch one transaction. Every row is an event
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
  /** Files read and validated at once (default: the cores, at most MAX_DEFAULT_JOBS). */
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
}

/**
 * Rows per transaction. Export ids are random, so every transaction rewrites most of the
 * unique index's pages: fewer, larger transactions write far less. 250,000 rows commit
 * every 2-3 s, well inside the 10 s other writers (price calls) wait for the store.
 */
export const DEFAULT_BATCH = 250_000
/** Rejected rows kept until their batch commits; more commit the batch early (bounded memory). */
const MAX_PENDING_REJECTS = 20_000
/**
 * Rows per message from the worker, and how many messages may wait unacknowledged. Four
 * keep the writer fed as well as eight did (1M rows: 8.0 s either way) and take about 10 MB
 * off the peak RSS that the import's memory budget counts.
 */
const WORKER_BATCH = 2000
const MAX_IN_FLIGHT = 4
/**
 * Messages the file being written may send beyond MAX_IN_FLIGHT while a batch commits: the
 * SQLite writer sorts the batch's rows into the table in the step after the batch ends (most
 * of a second for 250,000 rows), and the worker, which otherwise stops after MAX_IN_FLIGHT
 * messages, reads on meanwhile. They are repaid by not acknowledging as many messages after
 * the commit, so only the file being written and only around a commit holds more (24 x ~250
 * KB serialized, more once read: ~6 MB of peak RSS; 32 measured 1M / 100k up to 1.22x).
 */
const COMMIT_CREDIT = 24
/**
 * Default bound on files read at once. Each reading thread holds its own heap and up to
 * MAX_IN_FLIGHT chunks, and the one writer is the bottleneck: more readers only cost memory.
 */
export const MAX_DEFAULT_JOBS = 4
export const MAX_JOBS = 16

export function batchSizeFrom(value: number | undefined): number {
  const n = value ?? (process.env.PRICECTL_IMPORT_BATCH ? Number(process.env.PRICECTL_IMPORT_BATCH) : DEFAULT_BATCH)
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
 * exit 2, naming it). Then up to `jobs` worker threads read and validate files at once,
 * while this thread writes their rows file after file, in the order of the sources, through
 * one writer: one batched transaction stream, one summary, one rejects file.
 */
export async function importFiles(store: StorePort, o: ImportOptions, hooks: ImportHooks = {}): Promise<ImportResult> {
  const started = performance.now()
  const batchSize = batchSizeFrom(o.batchSize)
  const jobs = jobsFrom(o.jobs)
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
    fallback = productByApiId(store, o.product)
    if (!fallback) throw new InvalidInputError(`--product: unknown product ${JSON.stringify(o.product)} (list them with "pricectl products list")`)
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

  // Rows are written as they arrive, in batches of batchSize rows that commit whole (the
  // store's import writer): nothing waits in memory, and a killed run leaves whole batches only.
  // resolve: rows meeting newer partial updates take the fields those wrote (docs/revenue.md).
  const writer = store.imports.writer(o.kind, {dryRun: o.dryRun, resolve: resolverOf(store, o.kind)})
  const rejects = new RejectsFile(rejectsTarget, planned.map((p, i) => ({file: perFile[i].file, header: p.header})))
  // One file into a SQLite store: its reading thread writes the rows into the writer's
  // external stages itself and posts counts, not rows; each stage is one batch, committed
  // here as it comes. Several files share batches across files (one transaction stream):
  // their rows come here (docs/performance.md, "One file into SQLite: staged by the reading worker").
  let stagePaths: readonly string[] | undefined
  try {
    stagePaths = planned.length === 1 ? writer.externalStages() : undefined
  } catch (error) {
    writer.close()
    rejects.close()
    throw error
  }
  let inBatch = 0
  let pendingRejects: RejectedRow[] = []
  /** The rejects of the batch ended and being committed a step at a time (writer.endBatch), written once it is. */
  let endedRejects: RejectedRow[] | undefined
  let current = 0
  // The pipeline being written and the acknowledgements it was given ahead (COMMIT_CREDIT).
  let writing: Pipeline | undefined
  let credit = 0
  // Rejects are written after their batch committed, so a resumed run never lists a row twice.
  const committed = (ok: boolean, batchRejects: RejectedRow[]) => {
    if (!ok) throw new OperationalError(`a product of ${planned[current].file} was deleted while it was being imported; nothing of the last batch was written: run the import again`)
    // The reading thread copies the committed WAL into the store's file while it waits (worker.ts).
    if (!o.dryRun) writing?.send({type: 'checkpoint'})
    rejects.addMany(batchRejects.sort((a, b) => a[3] - b[3] || a[0] - b[0]))
    counts.rejected += batchRejects.length
    for (const r of batchRejects) countReason(byReason, r[1])
  }
  /** Finish the commit of the batch ended before, if any. */
  const finishEnded = () => {
    if (endedRejects === undefined) return
    const ended = endedRejects
    endedRejects = undefined
    committed(writer.finishCommit(), ended)
  }
  /** One step of the ended batch's commit, after each message's rows. */
  const commitStep = () => {
    if (endedRejects === undefined) return
    const progress = writer.commitStep()
    if (progress === 'pending') return
    const ended = endedRejects
    endedRejects = undefined
    committed(progress === 'committed', ended)
  }
  /** The open batch is full: it commits a step at a time while the next one's rows are written (credit first: the worker reads on meanwhile). */
  const endBatch = () => {
    finishEnded()
    if (writing && credit === 0) {
      for (let k = 0; k < COMMIT_CREDIT; k++) writing.ack()
      credit = COMMIT_CREDIT
    }
    writer.endBatch()
    endedRejects = pendingRejects
    pendingRejects = []
    inBatch = 0
  }
  /** Commit everything written (the end of the import). */
  const commit = () => {
    finishEnded()
    committed(writer.commit(), pendingRejects)
    pendingRejects = []
    inBatch = 0
  }

  // Up to `jobs` files are read at once (p-limit, first come first served, so a file starts
  // before every later one); a file's slot frees once its rows are written.
  const limit = pLimit(jobs)
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
        const stages = stagePaths && {batch: batchSize, maxRejects: MAX_PENDING_REJECTS, paths: stagePaths}
        const pipeline = await startPipeline({batchRows: WORKER_BATCH, db: store.location, file: p.file, kind: o.kind, maxInFlight: MAX_IN_FLIGHT, stages}, {onHeader: () => layout})
        pipelines.push(pipeline)
        ready[i].resolve(pipeline)
      } catch (error) {
        ready[i].reject(error)
        return
      }
      await written[i].promise
    })
  }

  let bytesBefore = 0
  try {
    for (const [i, p] of planned.entries()) {
      current = i
      const pipeline = await ready[i].promise
      writing = pipeline
      credit = 0
      const before = {...writer.counts}
      const file = perFile[i]
      for await (const m of pipeline.messages) {
        if (m.type === 'error') throw new OperationalError(`cannot import ${p.file}: ${m.message}`)
        if (m.type === 'header') {
          if (JSON.stringify(m.header) !== JSON.stringify(p.raw)) throw new OperationalError(`${p.file} changed while it was being imported (its header is not the one read first): run the import again`)
          continue
        }
        if (m.type === 'end') break
        if (m.type === 'staged' || m.type === 'progress') {
          if (m.type === 'staged') {
            // A batch the worker staged: committed now, its rejects written after it, and its
            // stage handed back to be filled again.
            for (const [line, reason, cells] of m.rejects) pendingRejects.push([line, reason, cells, i])
            file.rejected += m.rejects.length
            const ok = writer.commitStaged(m)
            // Before the checkpoint request (committed): the worker may be waiting for it.
            pipeline.send({stage: m.stage, type: 'free'})
            committed(ok, pendingRejects)
            pendingRejects = []
          }
          counts.read += m.read - file.read
          settled.rows += m.settled.rows
          settled.difference_minor += m.settled.difference_minor
          file.read = m.read
          hooks.progress?.(counts.read, bytesBefore + m.bytes)
          continue
        }
        // A message's rows in chunks up to the end of the open batch.
        for (let r = 0; r < m.rows.length; ) {
          const n = Math.min(m.rows.length - r, batchSize - inBatch)
          writer.writeChunk(m.rows, r, r + n)
          r += n
          inBatch += n
          if (inBatch >= batchSize) endBatch()
        }
        for (const [line, reason, cells] of m.rejects) {
          pendingRejects.push([line, reason, cells, i])
          file.rejected++
          if (++inBatch >= batchSize || pendingRejects.length >= MAX_PENDING_REJECTS) endBatch()
        }
        commitStep()
        counts.read += m.read - file.read
        settled.rows += m.settled.rows
        settled.difference_minor += m.settled.difference_minor
        file.read = m.read
        if (credit > 0) credit--
        else pipeline.ack()
        hooks.progress?.(counts.read, bytesBefore + m.bytes)
      }
      // The worker is done: stop it (awaited with the others at the end) and free its slot.
      writing = undefined
      pipeline.close().catch(() => {})
      written[i].resolve()
      // The file's counts: the batch ended before commits, the rows staged since are written.
      finishEnded()
      writer.flush()
      for (const k of ['inserted', 'stale', 'unchanged', 'updated'] as const) file[k] = writer.counts[k] - before[k]
      bytesBefore += p.size
    }
    commit()
  } finally {
    stopping = true
    limit.clearQueue()
    for (const w of written) w.resolve()
    writer.close()
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
