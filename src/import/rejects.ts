import {stringify} from 'csv-stringify/sync'
import {closeSync, existsSync, openSync, readSync, rmSync, writeSync} from 'node:fs'

import {safeCell} from '../cli/render.js'
import {OperationalError} from '../errors.js'

/**
 * The rejects CSV: `line`, `reason`, then the row as it was read. Created at the first
 * rejected row (a run with none leaves no file, and removes one an earlier run left at
 * the same path). Cells are neutralised against spreadsheet formulas.
 */
export class RejectsFile {
  private fd: number | undefined
  count = 0

  constructor(
    readonly path: string,
    private readonly header: string[],
  ) {}

  add(line: number, reason: string, cells: string[]): void {
    this.addMany([[line, reason, cells]])
  }

  addMany(rows: [number, string, string[]][]): void {
    if (rows.length === 0) return
    if (this.fd === undefined) {
      try {
        this.fd = openSync(this.path, 'w', 0o600)
      } catch (error) {
        throw new OperationalError(`cannot write the rejects file ${this.path}: ${(error as Error).message} (pass --rejects FILE)`)
      }
      writeSync(this.fd, stringify([['line', 'reason', ...this.header].map((c) => safeCell(c))]))
    }
    writeSync(this.fd, stringify(rows.map(([line, reason, cells]) => [String(line), safeCell(reason), ...cells.map((c) => safeCell(c))])))
    this.count += rows.length
  }

  /** Close; with no rejected row, remove a stale rejects file of an earlier run. */
  close(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd)
      this.fd = undefined
    } else if (existsSync(this.path) && looksLikeRejects(this.path)) {
      rmSync(this.path)
    }
  }
}

function looksLikeRejects(path: string): boolean {
  const fd = openSync(path, 'r')
  try {
    const buf = Buffer.alloc(12)
    const n = readSync(fd, buf, 0, 12, 0)
    return buf.subarray(0, n).toString('utf8') === 'line,reason,'
  } finally {
    closeSync(fd)
  }
}
