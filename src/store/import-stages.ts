import Database, {type Statement} from 'better-sqlite3'
import {mkdtempSync, readdirSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import type {DB} from './db.js'
import {alive} from './output-file.js'

/**
 * An import's stages: two scratch SQLite files the reading thread fills with rows, a batch
 * each, taking turns, while the writer (either store) takes the other one's rows into the
 * store (ImportWriter.externalStages, commitStaged). No journal and no sync: they are
 * scratch, in a private temp folder removed with the import (docs/performance.md, "Import").
 */

/** The stage files' table. */
export const STAGE_TABLE = 'pricectl_import_stage'

/** A stage file's page cache (KB), on either side: written once in order, read once. */
export const STAGE_CACHE_KB = 1024

/**
 * Rows a stage's INSERT binds at once (a statement of this many VALUES rows): in a
 * standalone script, 250,000 rows cost 0.30-0.31 s of CPU so against 0.42-0.47 s one by one.
 */
const ROWS_PER_INSERT = 16

/** Stage folders are named after the process that made them: `pricectl-import-PID-XXXXXX`. */
const STAGE_DIR = /^pricectl-import-(?:(\d+)-)?[A-Za-z0-9]{6}$/

/** A stage folder without a process id in its name (made by an older pricectl) is swept once this old. */
const UNOWNED_STAGE_MS = 24 * 3600 * 1000

/**
 * Remove the stage folders of imports whose process is gone (a SIGKILL or a power cut
 * leaves them: megabytes of customer rows in the temp folder), before an import makes its own.
 */
export function sweepStaleStages(parent = tmpdir()): string[] {
  const swept: string[] = []
  let names: string[]
  try {
    names = readdirSync(parent)
  } catch {
    return swept
  }
  for (const name of names) {
    const m = STAGE_DIR.exec(name)
    if (!m) continue
    const path = join(parent, name)
    try {
      if (m[1] !== undefined ? Number(m[1]) === process.pid || alive(Number(m[1])) : Date.now() - statSync(path).mtimeMs < UNOWNED_STAGE_MS) continue
      rmSync(path, {force: true, recursive: true})
      swept.push(path)
    } catch {
      // Another user's folder, or gone already: not ours to report.
    }
  }
  return swept
}

/** The folder and the `count` files (two per reading thread) of an import's stages, each with an empty STAGE_TABLE of `columns` (no types: values come back as bound). */
export function makeStageFiles(columns: readonly string[], count = 2): {dir: string; paths: string[]} {
  sweepStaleStages()
  const dir = mkdtempSync(join(tmpdir(), `pricectl-import-${process.pid}-`))
  const paths = Array.from({length: count}, (_, i) => join(dir, `stage${i}.db`))
  try {
    for (const path of paths) {
      const file = new Database(path)
      try {
        // 16 KB pages (set before the table): fewer pages to write and read; measured,
        // both threads ~3% less CPU.
        file.pragma('page_size = 16384')
        file.pragma('journal_mode = OFF')
        file.exec(`CREATE TABLE ${STAGE_TABLE} (${columns.join(', ')})`)
      } finally {
        file.close()
      }
    }
  } catch (error) {
    removeStageFiles(dir)
    throw error
  }
  return {dir, paths}
}

/** Remove an import's stage folder (connections still open to its files keep them until they close). */
export function removeStageFiles(dir: string): void {
  try {
    rmSync(dir, {force: true, recursive: true})
  } catch {
    // (A platform that keeps open files from being removed: never masks how the import ended.)
  }
}

/**
 * A stage's rows in file order, `size` at a time, each an array of the table's columns:
 * `page` is `SELECT rowid, <columns> FROM <stage> WHERE rowid > ? ORDER BY rowid LIMIT <size>`
 * (raw). Each page is read before the caller writes it, so the writer may use the same
 * connection meanwhile.
 */
export function* stagePages(page: Statement, size: number): Generator<unknown[][]> {
  for (let after = 0; ; ) {
    const rows = page.all(after) as unknown[][]
    if (rows.length === 0) return
    after = rows.at(-1)![0] as number
    yield rows.map((r) => r.slice(1))
    if (rows.length < size) return
  }
}

/** A stage file read through a connection of its own (the PostgreSQL writer): its rows page by page. */
export class StageReader {
  private readonly db: DB

  constructor(path: string) {
    this.db = new Database(path, {fileMustExist: true, readonly: true})
    this.db.pragma(`cache_size = -${STAGE_CACHE_KB}`)
  }

  pages(columns: readonly string[], size: number): Generator<unknown[][]> {
    return stagePages(this.db.prepare(stagePageSql(STAGE_TABLE, columns, size)).raw(), size)
  }

  close(): void {
    this.db.close()
  }
}

/** The columns of a stage file's table, in order. */
export function stageColumns(path: string): string[] {
  const db = new Database(path, {fileMustExist: true, readonly: true})
  try {
    return db.prepare(`SELECT name FROM pragma_table_info('${STAGE_TABLE}') ORDER BY cid`).pluck().all() as string[]
  } finally {
    db.close()
  }
}

/** The SELECT stagePages reads a stage `t` of `columns` with. */
export function stagePageSql(t: string, columns: readonly string[], size: number): string {
  return `SELECT rowid, ${columns.join(', ')} FROM ${t} WHERE rowid > ? ORDER BY rowid LIMIT ${size}`
}

/** A packed stage layout (ImportStages): each stage row holds `rows` rows, their lines (each ended by a newline, UTF-8) and their keys (float64). */
export type StagePack = {key: (row: readonly unknown[]) => number; line: (row: readonly unknown[]) => string; rows: number}

/**
 * The filling side of the stages, in the import's reading thread: each stage is filled with
 * one batch's rows in file order inside one transaction and handed over when it commits
 * (complete). The writer reads one while this thread fills the other, so they never wait for
 * each other's locks; a stage is emptied (start) only once the writer said its batch was
 * committed.
 */
export class ImportStages {
  private readonly dbs: DB[] = []
  /**
   * A packed layout (an adapter's own, ../postgres/imports.ts): a table of two columns whose
   * rows each hold `rows` rows: their lines (`line` of each, ended by a newline) in UTF-8, and
   * their keys (`key` of each, a float64 array), both BLOBs. Binding two values per `rows` rows
   * costs the reading thread a fraction of binding each cell.
   */
  private readonly pack?: StagePack
  /** A packed stage's lines not inserted yet (UTF-8, up to `at`), their keys, and how many. */
  private text = Buffer.allocUnsafe(0)
  private at = 0
  private keys = new Float64Array(0)
  private packed = 0
  /** Per stage: the one-row INSERT and the ROWS_PER_INSERT-row one. */
  private readonly inserts: {many: Statement; one: Statement}[] = []
  /** Values of the rows not inserted yet (fewer than ROWS_PER_INSERT). */
  private buffer: unknown[] = []
  private buffered = 0
  private width = 0

  /**
   * `cacheKb`: each stage connection's page cache; a batch bigger than it spills to its file as
   * it is staged. `pack`: the rows are packed as lines (see pack).
   */
  constructor(paths: readonly string[], cacheKb = STAGE_CACHE_KB, pack?: StagePack) {
    this.pack = pack
    if (pack) this.keys = new Float64Array(pack.rows)
    // It goes into a PRAGMA's text: a positive integer only.
    if (!Number.isSafeInteger(cacheKb) || cacheKb <= 0) throw new RangeError(`stage cache size must be a positive whole number of KB, got ${String(cacheKb)}`)
    try {
      for (const path of paths) {
        const db = new Database(path, {fileMustExist: true})
        this.dbs.push(db)
        db.pragma('journal_mode = OFF')
        db.pragma('synchronous = OFF')
        db.pragma(`cache_size = -${cacheKb}`)
        // The writer holds no lock on a stage it was told is free; never wait for one.
        db.pragma('busy_timeout = 0')
        // one: a row's placeholders; marks: ROWS_PER_INSERT rows'.
        const t = STAGE_TABLE
        const n = (db.prepare(`SELECT count(*) FROM pragma_table_info('${t}')`).pluck().get() as number) || 0
        const one = `(${Array.from({length: n}, () => '?').join(', ')})`
        const marks = Array.from({length: ROWS_PER_INSERT}, () => one).join(', ')
        this.width = n
        this.inserts.push({many: db.prepare(`INSERT INTO ${t} VALUES ${marks}`), one: db.prepare(`INSERT INTO ${t} VALUES ${one}`)})
      }
    } catch (error) {
      this.close()
      throw error
    }
    this.buffer = new Array(this.width * ROWS_PER_INSERT)
  }

  /** Empty stage `i` (its batch committed) and begin filling it. */
  start(i: number): void {
    const t = STAGE_TABLE
    this.dbs[i].exec(`DROP INDEX IF EXISTS ${t}_key; DELETE FROM ${t}; BEGIN`)
  }

  /** One row (in the table's column order) into stage `i` (begun by start; rows are inserted in file order, some at complete). */
  insert(i: number, row: readonly unknown[]): void {
    if (this.pack) {
      const line = this.pack.line(row)
      // UTF-8 takes at most 3 bytes per UTF-16 unit.
      if (this.at + 3 * line.length + 1 > this.text.length) {
        const grown = Buffer.allocUnsafe(2 * (this.at + 3 * line.length + 1))
        this.text.copy(grown, 0, 0, this.at)
        this.text = grown
      }
      this.at += this.text.write(line, this.at)
      this.text[this.at++] = 0x0a
      this.keys[this.packed] = this.pack.key(row)
      if (++this.packed >= this.pack.rows) this.flushPack(i)
      return
    }
    const {buffer, width} = this
    const at = this.buffered * width
    for (let c = 0; c < width; c++) buffer[at + c] = row[c]
    if (++this.buffered < ROWS_PER_INSERT) return
    this.inserts[i].many.run(buffer)
    this.buffered = 0
  }

  /** Stage `i` is complete: committed, for the writer to read. */
  complete(i: number): void {
    if (this.packed > 0) this.flushPack(i)
    const {buffer, width} = this
    for (let r = 0; r < this.buffered; r++) this.inserts[i].one.run(buffer.slice(r * width, (r + 1) * width))
    this.buffered = 0
    this.dbs[i].exec('COMMIT')
  }

  /** The packed lines as one stage row: a BLOB of their UTF-8 (a string bound would be flattened, then encoded), and one of their keys. */
  private flushPack(i: number): void {
    this.inserts[i].one.run(this.text.subarray(0, this.at), Buffer.from(this.keys.buffer, 0, 8 * this.packed))
    this.at = 0
    this.packed = 0
  }

  close(): void {
    for (const db of this.dbs) {
      try {
        db.close()
      } catch {}
    }
    this.dbs.length = 0
  }
}
