import {statSync} from 'node:fs'
import {resolve} from 'node:path'

import {productByApiId, type ProductRow} from '../catalog/lookup.js'
import {InvalidInputError, OperationalError} from '../errors.js'
import {allDeletes, compareEvents, type EventRef, judge, recordKey} from '../revenue/events.js'
import {type ChargeValues, statements, type SubscriptionValues} from '../revenue/store.js'
import type {DB} from '../store/db.js'
import {openCsv} from './csv-source.js'
import {choosePreset, type ImportKind, loadMapping, type Preset} from './presets.js'
import {RejectsFile} from './rejects.js'
import {RowMapper} from './rows.js'

/**
 * Bulk import of gateway exports: streaming CSV (csv-source.ts), one RowMapper per
 * layout, and batched upserts keyed by (user_id, origin, origin_id), each batch one
 * transaction. Every row is an event (rows.ts), so a re-run is all "unchanged", and a
 * run killed after some batches leaves whole batches only: running it again inserts the
 * rest and ends in the same state as an uninterrupted run.
 */

export type ImportOptions = {
  /** Rows per transaction (default $PRICECTL_IMPORT_BATCH, else 50,000). */
  batchSize?: number
  dryRun?: boolean
  file: string
  kind: ImportKind
  mapping?: string
  preset?: string
  /** api_id of the product for rows that name none. */
  product?: string
  rejects?: string
}

export type ImportCounts = {inserted: number; read: number; rejected: number; stale: number; unchanged: number; updated: number}

export type ImportResult = ImportCounts & {
  dry_run: boolean
  file: string
  preset: string
  rejects_file: null | string
  rows_per_second: number
  seconds: number
}

export type ImportHooks = {
  /** After each batch read: data rows read so far and bytes of the file. */
  progress?: (rows: number, bytes: number) => void
}

export const DEFAULT_BATCH = 50_000

export function batchSizeFrom(value: number | undefined): number {
  const n = value ?? (process.env.PRICECTL_IMPORT_BATCH ? Number(process.env.PRICECTL_IMPORT_BATCH) : DEFAULT_BATCH)
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new InvalidInputError(`batch size: expected a whole number from 1 to 1000000, got ${JSON.stringify(value ?? process.env.PRICECTL_IMPORT_BATCH)}`)
  return n
}

type Values = ChargeValues | SubscriptionValues

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

export async function importFile(db: DB, o: ImportOptions, hooks: ImportHooks = {}): Promise<ImportResult> {
  const started = performance.now()
  const batchSize = batchSizeFrom(o.batchSize)
  totalBytes(o.file)
  const mapping = o.mapping ? loadMapping(o.kind, o.mapping) : undefined
  if (mapping && o.preset) throw new InvalidInputError('pass either --preset or --mapping, not both')
  let fallback: ProductRow | undefined
  if (o.product !== undefined) {
    fallback = productByApiId(db, o.product)
    if (!fallback) throw new InvalidInputError(`--product: unknown product ${JSON.stringify(o.product)} (list them with "pricectl products list")`)
  }
  const table = o.kind
  const eventKind = o.kind === 'charges' ? 'charge' : 'subscription'
  const st = statements(db, table)
  const tombstones = allDeletes(db, eventKind)
  const counts: ImportCounts = {inserted: 0, read: 0, rejected: 0, stale: 0, unchanged: 0, updated: 0}
  const rejectsPath = resolve(o.rejects ?? `${o.file}.rejects.csv`)

  const eventOf = (v: Values): EventRef => ({id: v.latest_event_id, timestamp: v.latest_event_timestamp})

  /** A delete newer than the row (a tombstone) makes the row stale. */
  const deletedAfter = (v: Values): boolean => {
    if (tombstones.size === 0) return false
    const t = tombstones.get(recordKey(v.user_id, v.origin, v.origin_id))
    return t !== undefined && compareEvents(eventOf(v), t) < 0
  }

  /** One row against the store: insert, or judge it against the record's latest event. */
  const apply = (v: Values): void => {
    if (deletedAfter(v)) {
      counts.stale++
      return
    }
    if (o.dryRun) {
      const latest = st.latest.get(v.user_id, v.origin, v.origin_id) as EventRef | undefined
      if (!latest) counts.inserted++
      else count(judge(eventOf(v), latest))
      return
    }
    if (st.insertNew.run(v).changes === 1) {
      counts.inserted++
      return
    }
    const verdict = judge(eventOf(v), st.latest.get(v.user_id, v.origin, v.origin_id) as EventRef | undefined)
    if (verdict === 'apply') st.replace.run(v)
    count(verdict)
  }
  const count = (verdict: 'apply' | 'duplicate' | 'stale') => {
    if (verdict === 'apply') counts.updated++
    else if (verdict === 'duplicate') counts.unchanged++
    else counts.stale++
  }

  // Rows are written as they are mapped, inside a transaction committed every batchSize
  // rows: nothing waits in memory, and a killed run leaves whole batches only.
  let open = false
  let inBatch = 0
  let pendingRejects: [number, string, string[]][] = []
  const commit = () => {
    if (open) {
      db.exec('COMMIT')
      open = false
    }
    // Rejects are written after their batch committed, so a resumed run never lists a row twice.
    rejects!.addMany(pendingRejects.sort((a, b) => a[0] - b[0]))
    counts.rejected += pendingRejects.length
    pendingRejects = []
    inBatch = 0
  }

  const csv = openCsv(o.file, Math.min(batchSize, 5000))
  let mapper: RowMapper<Values> | undefined
  let rejects: RejectsFile | undefined
  let layout: Preset | undefined

  try {
    for await (const m of csv.messages) {
      if (m.type === 'error') throw new OperationalError(`cannot read ${o.file}: ${m.message}`)
      if (m.type === 'header') {
        layout = mapping ?? choosePreset(o.kind, m.header, o.preset)
        mapper = new RowMapper<Values>(db, o.kind, layout, m.header, fallback)
        rejects = new RejectsFile(rejectsPath, mapper.header)
        continue
      }
      if (m.type === 'end') break
      if (!mapper) throw new InvalidInputError(`${o.file} has no header row`)
      const width = mapper.header.length
      let offset = 0
      for (let i = 0; i < m.counts.length; i++) {
        const n = m.counts[i]
        counts.read++
        const r = n === width ? mapper.map(m.cells, offset) : `expected ${width} columns, got ${n}`
        if (typeof r === 'string') {
          const cells = m.cells.slice(offset, offset + n)
          pendingRejects.push([startLine(m.lines[i], cells), r, cells])
        } else {
          if (!open && !o.dryRun) {
            db.exec('BEGIN IMMEDIATE')
            open = true
          }
          apply(r)
        }
        offset += n
        if (++inBatch >= batchSize) commit()
      }
      for (const s of m.skipped) {
        counts.read++
        pendingRejects.push([s.line, `unreadable CSV record: ${s.reason}`, s.raw === '' ? [] : [s.raw]])
      }
      csv.ack()
      hooks.progress?.(counts.read, m.bytes)
    }
    if (!mapper) throw new InvalidInputError(`${o.file} is empty: expected a header row and data rows`)
    commit()
  } finally {
    if (open && db.inTransaction) db.exec('ROLLBACK')
    await csv.close()
    rejects?.close()
  }
  const seconds = (performance.now() - started) / 1000
  return {
    ...counts,
    dry_run: Boolean(o.dryRun),
    file: resolve(o.file),
    preset: layout!.name,
    rejects_file: counts.rejected > 0 ? rejectsPath : null,
    rows_per_second: seconds > 0 ? Math.round(counts.read / seconds) : counts.read,
    seconds: Math.round(seconds * 1000) / 1000,
  }
}

/** Records end on `endLine`; a quoted cell with line breaks started it earlier. */
function startLine(endLine: number, cells: string[]): number {
  let breaks = 0
  for (const c of cells) {
    for (let i = c.indexOf('\n'); i !== -1; i = c.indexOf('\n', i + 1)) breaks++
  }
  return endLine - breaks
}
