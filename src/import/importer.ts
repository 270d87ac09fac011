import {statSync} from 'node:fs'
import {resolve} from 'node:path'

import {productByApiId, type ProductRow} from '../catalog/lookup.js'
import {fromMinor} from '../currency.js'
import {resolveZone} from '../dates.js'
import {InvalidInputError, OperationalError} from '../errors.js'
import {checkOutput} from '../store/output-file.js'
import type {StorePort} from '../store/port.js'
import {type Pipeline, startPipeline} from './pipeline.js'
import {choosePreset, type ImportKind, loadMapping, type Preset, withOverrides} from './presets.js'
import {countReason, sortedReasons} from './reasons.js'
import {looksLikeRejects, RejectsFile} from './rejects.js'
import {RowMapper} from './rows.js'

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
  file: string
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

export type ImportResult = ImportCounts & {
  dry_run: boolean
  /** Rejected rows per kind of reason (src/import/reasons.ts), the most frequent first. */
  rejected_by_reason: Record<string, number>
  /** Charge rows whose USD amount is the gateway's own converted amount, and its total difference to the store's FX. */
  settled_usd: SettledUsd
  file: string
  preset: string
  rejects_file: null | string
  rows_per_second: number
  seconds: number
}

export type SettledUsd = {difference_usd: number; difference_usd_minor: number; rows: number}

export type ImportHooks = {
  /** After each batch: rows read so far and bytes of the file. */
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
/** Rows per message from the worker, and how many messages may wait unacknowledged. */
const WORKER_BATCH = 2000
const MAX_IN_FLIGHT = 8

export function batchSizeFrom(value: number | undefined): number {
  const n = value ?? (process.env.PRICECTL_IMPORT_BATCH ? Number(process.env.PRICECTL_IMPORT_BATCH) : DEFAULT_BATCH)
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new InvalidInputError(`batch size: expected a whole number from 1 to 1000000, got ${JSON.stringify(value ?? process.env.PRICECTL_IMPORT_BATCH)}`)
  return n
}

export function totalBytes(file: string): number {
  try {
    const s = statSync(file)
    if (!s.isFile()) throw new InvalidInputError(`${file} is not a file`)
    return s.size
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    throw new InvalidInputError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
  }
}

export async function importFile(store: StorePort, o: ImportOptions, hooks: ImportHooks = {}): Promise<ImportResult> {
  const started = performance.now()
  const batchSize = batchSizeFrom(o.batchSize)
  totalBytes(o.file)
  // Vetted before anything is written: never the store, the export or the mapping file.
  const rejectsPath = resolve(o.rejects ?? `${o.file}.rejects.csv`)
  const rejectsTarget = checkOutput(rejectsPath, {
    existsHint: 'it is not a rejects CSV of an earlier import; pass --force to overwrite it, or --rejects PATH',
    force: o.force,
    inputs: [
      {path: o.file, what: 'the file to import'},
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
  const counts: ImportCounts = {inserted: 0, read: 0, rejected: 0, stale: 0, unchanged: 0, updated: 0}
  const byReason: Record<string, number> = {}
  const settled = {difference_minor: 0, rows: 0}

  // Rows are written as they arrive, in batches of batchSize rows that commit whole (the
  // store's import writer): nothing waits in memory, and a killed run leaves whole batches only.
  const writer = store.imports.writer(o.kind, {dryRun: o.dryRun})
  let inBatch = 0
  let rejects: RejectsFile | undefined
  let pendingRejects: [number, string, string[]][] = []
  const commit = () => {
    if (!writer.commit()) throw new OperationalError(`a product of ${o.file} was deleted while it was being imported; nothing of the last batch was written: run the import again`)
    // Rejects are written after their batch committed, so a resumed run never lists a row twice.
    rejects!.addMany(pendingRejects.sort((a, b) => a[0] - b[0]))
    counts.rejected += pendingRejects.length
    for (const r of pendingRejects) countReason(byReason, r[1])
    pendingRejects = []
    inBatch = 0
  }

  let layout: Preset | undefined
  let pipeline: Pipeline | undefined
  try {
    pipeline = startPipeline({batchRows: WORKER_BATCH, db: store.path, file: o.file, kind: o.kind, maxInFlight: MAX_IN_FLIGHT})
    for await (const m of pipeline.messages) {
      if (m.type === 'error') throw new OperationalError(`cannot import ${o.file}: ${m.message}`)
      if (m.type === 'header') {
        layout = mapping ?? choosePreset(o.kind, m.header, o.preset)
        layout = withOverrides(layout, {tz: o.tz, userId: o.userId, userIdColumn: o.userIdColumn}, m.header)
        // Built here too so a layout the file cannot fill is refused before any row.
        const mapper = new RowMapper(store, o.kind, layout, m.header, fallback)
        rejects = new RejectsFile(rejectsTarget, mapper.header)
        pipeline.send({fallbackProductId: fallback?.id ?? null, layout, type: 'layout'})
        continue
      }
      if (m.type === 'end') break
      // A message's rows in chunks up to the end of the open batch.
      for (let i = 0; i < m.rows.length; ) {
        const n = Math.min(m.rows.length - i, batchSize - inBatch)
        writer.writeChunk(m.rows, i, i + n)
        i += n
        inBatch += n
        if (inBatch >= batchSize) commit()
      }
      for (const r of m.rejects) {
        pendingRejects.push(r)
        if (++inBatch >= batchSize || pendingRejects.length >= MAX_PENDING_REJECTS) commit()
      }
      counts.read = m.read
      settled.rows += m.settled.rows
      settled.difference_minor += m.settled.difference_minor
      pipeline.ack()
      hooks.progress?.(counts.read, m.bytes)
    }
    if (!layout) throw new InvalidInputError(`${o.file} is empty: expected a header row and data rows`)
    commit()
  } finally {
    writer.close()
    await pipeline?.close()
    rejects?.close()
  }
  const seconds = (performance.now() - started) / 1000
  Object.assign(counts, writer.counts)
  return {
    ...counts,
    dry_run: Boolean(o.dryRun),
    file: resolve(o.file),
    preset: layout.name,
    rejected_by_reason: sortedReasons(byReason),
    rejects_file: counts.rejected > 0 ? rejectsPath : null,
    rows_per_second: seconds > 0 ? Math.round(counts.read / seconds) : counts.read,
    seconds: Math.round(seconds * 1000) / 1000,
    settled_usd: {difference_usd: fromMinor(settled.difference_minor, 'USD'), difference_usd_minor: settled.difference_minor, rows: settled.rows},
  }
}
