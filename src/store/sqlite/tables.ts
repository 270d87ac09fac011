import type {DB} from '../db.js'
import type {Cell, ColumnType, TablesRepository, TableShape, TableWriter} from '../port/tables.js'
import {statementCache} from './statements.js'

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

function columnType(declared: string): ColumnType {
  const t = declared.toUpperCase()
  if (t.includes('INT')) return 'integer'
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'real'
  return 'text'
}

/**
 * SQLite adapter of the tables repository. Integers are read as bigint (safeIntegers), so
 * nothing passes through a double; values are written as read. A load runs in one
 * BEGIN IMMEDIATE transaction with foreign keys deferred to its commit (rows may arrive
 * before the rows they reference, a product before its baseline).
 */
export class SqliteTables implements TablesRepository {
  private readonly prepare

  constructor(
    private readonly db: DB,
    private readonly transaction: <T>(fn: () => Promise<T> | T, options?: {write?: boolean}) => Promise<T>,
  ) {
    this.prepare = statementCache(db)
  }

  async list(): Promise<TableShape[]> {
    const names = (this.db.prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {name: string}[]).map((r) => r.name)
    const shapes = new Map<string, TableShape>()
    const parents = new Map<string, string[]>()
    for (const name of names) {
      const info = this.db.pragma(`main.table_info(${quote(name)})`) as {name: string; type: string}[]
      shapes.set(name, {columns: info.map((c) => ({name: c.name, type: columnType(c.type)})), name})
      const fks = this.db.pragma(`main.foreign_key_list(${quote(name)})`) as {table: string}[]
      parents.set(name, [...new Set(fks.map((f) => f.table).filter((t) => t !== name))])
    }
    // Parents first (depth-first over references; names in order otherwise).
    const ordered: TableShape[] = []
    const seen = new Set<string>()
    const visit = (name: string) => {
      if (seen.has(name) || !shapes.has(name)) return
      seen.add(name)
      for (const p of parents.get(name) ?? []) visit(p)
      ordered.push(shapes.get(name)!)
    }
    for (const name of names) visit(name)
    return ordered
  }

  async counts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {}
    for (const t of await this.list()) counts[t.name] = (this.prepare(`SELECT count(*) AS n FROM main.${quote(t.name)}`).get() as {n: number}).n
    return counts
  }

  async snapshot<T>(fn: () => Promise<T> | T): Promise<T> {
    // A deferred transaction: its first read fixes the snapshot (WAL), writers go on.
    return this.transaction(fn)
  }

  async *read(table: string, columns: readonly string[], chunk: number): AsyncIterable<Cell[][]> {
    const key = this.keyOf(table)
    const sql = `SELECT ${columns.map(quote).join(', ')} FROM main.${quote(table)} ORDER BY ${key.map(quote).join(', ')}`
    const stmt = this.db.prepare(sql).raw(true).safeIntegers(true)
    let rows: Cell[][] = []
    for (const row of stmt.iterate() as Iterable<Cell[]>) {
      rows.push(row)
      if (rows.length >= chunk) {
        yield rows
        rows = []
      }
    }
    if (rows.length > 0) yield rows
  }

  async replace<T>(fn: (write: TableWriter) => Promise<T> | T): Promise<T> {
    const tables = await this.list()
    return this.transaction(async () => {
      this.db.pragma('defer_foreign_keys = ON')
      for (const t of [...tables].reverse()) this.db.prepare(`DELETE FROM main.${quote(t.name)}`).run()
      const write: TableWriter = async (table, columns, rows) => {
        const sql = `INSERT INTO main.${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`
        const stmt = this.prepare(sql)
        for (const row of rows) stmt.run(row)
      }
      return fn(write)
    }, {write: true})
  }

  /**
   * The order rows are read in: rowid, so a copy keeps the order rows were written in (what
   * a query without ORDER BY returns); the primary key for a WITHOUT ROWID table.
   */
  private keyOf(table: string): string[] {
    const sql = (this.db.prepare("SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?").get(table) as {sql: string} | undefined)?.sql ?? ''
    if (!/WITHOUT\s+ROWID/i.test(sql)) return ['rowid']
    const info = this.db.pragma(`main.table_info(${quote(table)})`) as {name: string; pk: number}[]
    const key = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name)
    return key
  }
}
