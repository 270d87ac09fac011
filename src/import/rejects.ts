import {stringify} from 'csv-stringify/sync'
import {closeSync, existsSync, openSync, readSync, rmSync} from 'node:fs'

import {safeCell} from '../csv-cell.js'
import {OutputFile} from '../store/output-file.js'

/**
 * The rejects CSV: `line`, `reason`, the row as it was read under its file's column names,
 * then `source_file` (the export the row came from), after every header column so the
 * columns before it keep their places. A row with fewer cells than the header is padded
 * with empty ones; cells beyond its file's header (a row with too many) come after
 * `source_file`. Several files of different layouts share one header: the first file's
 * columns, then each later file's columns not seen yet (matched trimmed and
 * case-insensitive); a row's cells go under their own columns. Written from the
 * first rejected row into a temporary file beside the path and renamed into place by
 * close() (a run with none leaves no file, and removes one an earlier run left at the same
 * path). Cells are neutralised against spreadsheet formulas. The path was vetted by
 * checkOutput() before the import started (never the store or an input).
 */
/** A rejected row: line where its record starts, reason, cells as read, and its source (index into the sources). */
export type RejectedRow = [line: number, reason: string, cells: string[], source: number]

export type RejectsSource = {
  /** The file, as the rejects name it. */
  file: string
  /** Its header's column names, as read. */
  header: string[]
}

export class RejectsFile {
  private out: OutputFile | undefined
  /** Writing failed (a full disk): the temporary file is gone and the path keeps what it had. */
  private failed = false
  private readonly columns: string[]
  /** Per source: where each of its columns goes (undefined: cells are written as read). */
  private readonly places: (number[] | undefined)[]
  count = 0

  constructor(
    readonly path: string,
    private readonly sources: RejectsSource[],
  ) {
    const key = (h: string) => h.trim().toLowerCase()
    const at = new Map<string, number>()
    this.columns = []
    const places = sources.map((s) =>
      s.header.map((h) => {
        const k = key(h)
        let i = at.get(k)
        if (i === undefined) {
          i = this.columns.length
          at.set(k, i)
          this.columns.push(h)
        }
        return i
      }),
    )
    // A file whose columns are all of them, in order, writes its cells in place.
    this.places = places.map((p) => (p.length === this.columns.length && p.every((c, i) => c === i) ? undefined : p))
  }

  add(line: number, reason: string, cells: string[], source = 0): void {
    this.addMany([[line, reason, cells, source]])
  }

  addMany(rows: RejectedRow[]): void {
    if (rows.length === 0 || this.failed) return
    try {
      if (this.out === undefined) {
        // Owner-only: rejected rows hold customer ids and amounts.
        this.out = new OutputFile(this.path, 0o600)
        this.out.write(stringify([['line', 'reason', ...this.columns, 'source_file'].map((c) => safeCell(c))]))
      }
      this.out.write(stringify(rows.map(([line, reason, cells, source]) => [String(line), safeCell(reason), ...this.place(source, cells).map((c) => safeCell(c))])))
    } catch (error) {
      this.failed = true
      this.out = undefined
      throw error
    }
    this.count += rows.length
  }

  /** The row's cells under the shared header's columns, its source file, then any extra cells. */
  private place(source: number, cells: string[]): string[] {
    const file = this.sources[source].file
    const width = this.columns.length
    const at = this.places[source]
    if (at === undefined && cells.length === width) return [...cells, file]
    const out = Array.from({length: width}, () => '')
    const mine = at?.length ?? width
    for (let i = 0; i < cells.length && i < mine; i++) out[at ? at[i] : i] = cells[i]
    out.push(file)
    if (cells.length > mine) out.push(...cells.slice(mine))
    return out
  }

  /**
   * Put the file in place (also after a failed import: it lists the rejected rows of the
   * batches that were committed); with no rejected row, remove a stale rejects file of an
   * earlier run.
   */
  close(): void {
    if (this.failed) return
    if (this.out !== undefined) {
      this.out.commit()
      this.out = undefined
    } else if (existsSync(this.path) && looksLikeRejects(this.path)) {
      rmSync(this.path)
    }
  }
}

/** A rejects CSV an earlier import wrote (replaced by the next run without --force). */
export function looksLikeRejects(path: string): boolean {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return false
  }
  try {
    const buf = Buffer.alloc(12)
    const n = readSync(fd, buf, 0, 12, 0)
    return buf.subarray(0, n).toString('utf8') === 'line,reason,'
  } finally {
    closeSync(fd)
  }
}
