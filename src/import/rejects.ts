import {stringify} from 'csv-stringify/sync'
import {closeSync, existsSync, openSync, readSync, rmSync} from 'node:fs'

import {safeCell} from '../csv-cell.js'
import {OutputFile} from '../store/output-file.js'

/**
 * The rejects CSV: `line`, `reason`, then the row as it was read. Written from the first
 * rejected row into a temporary file beside the path and renamed into place by close() (a
 * run with none leaves no file, and removes one an earlier run left at the same path).
 * Cells are neutralised against spreadsheet formulas. The path was vetted by
 * checkOutput() before the import started (never the store or an input).
 */
export class RejectsFile {
  private out: OutputFile | undefined
  /** Writing failed (a full disk): the temporary file is gone and the path keeps what it had. */
  private failed = false
  count = 0

  constructor(
    readonly path: string,
    private readonly header: string[],
  ) {}

  add(line: number, reason: string, cells: string[]): void {
    this.addMany([[line, reason, cells]])
  }

  addMany(rows: [number, string, string[]][]): void {
    if (rows.length === 0 || this.failed) return
    try {
      if (this.out === undefined) {
        // Owner-only: rejected rows hold customer ids and amounts.
        this.out = new OutputFile(this.path, 0o600)
        this.out.write(stringify([['line', 'reason', ...this.header].map((c) => safeCell(c))]))
      }
      this.out.write(stringify(rows.map(([line, reason, cells]) => [String(line), safeCell(reason), ...cells.map((c) => safeCell(c))])))
    } catch (error) {
      this.failed = true
      this.out = undefined
      throw error
    }
    this.count += rows.length
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
