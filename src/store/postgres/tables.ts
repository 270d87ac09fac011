import type {Cell, ColumnType, TablesRepository, TableShape, TableWriter} from '../port/tables.js'
import type {PgConn} from './client.js'

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`
const literal = (s: string) => `'${s.replaceAll("'", "''")}'`

function columnType(pgType: string): ColumnType {
  if (/^(bigint|integer|smallint)\b/.test(pgType)) return 'integer'
  if (/^(double precision|real|numeric)\b/.test(pgType)) return 'real'
  return 'text' // text, jsonb (history images), ...
}

/** One value in COPY's text format: \N for NULL, backslash escapes for the characters it gives meaning to. */
function copyText(v: Cell): string {
  if (v === null || v === undefined) return '\\N'
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'number') return Number.isInteger(v) ? v.toString() : String(v)
  return v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
}

/**
 * jsonb cannot hold U+0000, which SQLite's JSON can (a history image of the transient name a
 * products update gives a row, for instance): its escape becomes U+FFFD's. Escaped
 * backslashes before a "u0000" are told apart from an escape.
 */
function jsonbSafe(v: Cell): Cell {
  return typeof v === 'string' && v.includes('\\u0000') ? v.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : v
}

/** The transactions of the store this repository belongs to (PgStore). */
type Transactions = {transaction<T>(fn: () => Promise<T> | T, options?: {write?: boolean}): Promise<T>}

/**
 * PostgreSQL adapter of the tables repository, for `db copy` (docs/postgres.md, "Moving a
 * store"). Reads a chunk at a time on one snapshot, integers as text so they stay exact past
 * 2^53. replace() is one write transaction: TRUNCATE (no history rows), foreign keys dropped,
 * COPY, keys added back (every row checked, as pg_restore does), sequences moved past the ids.
 */
export class PgTables implements TablesRepository {
  private cursors = 0

  constructor(
    private readonly pg: PgConn,
    private readonly store: Transactions,
  ) {}

  async list(): Promise<TableShape[]> {
    return await this.listSync()
  }

  async listSync(): Promise<TableShape[]> {
    const columns = await this.pg.query<{column: string; table: string; type: string}>(
      `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_catalog.pg_class c
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
          AND c.relname NOT LIKE 'pricectl\\_%'
        ORDER BY c.relname, a.attnum`,
    )
    const shapes = new Map<string, TableShape>()
    for (const c of columns) {
      let t = shapes.get(c.table)
      if (!t) shapes.set(c.table, (t = {columns: [], name: c.table}))
      t.columns.push({name: c.column, type: columnType(c.type)})
    }
    const parents = new Map<string, string[]>()
    for (const f of await this.foreignKeys()) {
      if (f.parent === f.table) continue
      parents.set(f.table, [...(parents.get(f.table) ?? []), f.parent])
    }
    const ordered: TableShape[] = []
    const seen = new Set<string>()
    const visit = (name: string) => {
      if (seen.has(name) || !shapes.has(name)) return
      seen.add(name)
      for (const p of parents.get(name) ?? []) visit(p)
      ordered.push(shapes.get(name)!)
    }
    for (const name of [...shapes.keys()].sort()) visit(name)
    return ordered
  }

  async counts(): Promise<Record<string, number>> {
    const tables = await this.list()
    if (tables.length === 0) return {}
    const rows = await this.pg.query<{n: number | string; t: string}>(tables.map((t) => `SELECT ${literal(t.name)} AS t, count(*) AS n FROM ${quote(t.name)}`).join(' UNION ALL '))
    return Object.fromEntries(rows.map((r) => [r.t, Number(r.n)]))
  }

  async snapshot<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.store.transaction(fn)
  }

  async *read(table: string, columns: readonly string[], chunk: number): AsyncIterable<Cell[][]> {
    const types = new Map((await this.listSync()).find((t) => t.name === table)?.columns.map((c) => [c.name, c.type]))
    const select = columns.map((c) => (types.get(c) === 'real' ? quote(c) : `${quote(c)}::text`)).join(', ')
    const integer = columns.map((c) => types.get(c) === 'integer')
    const key = await this.keyOf(table)
    const cursor = `pricectl_read_${++this.cursors}`
    await this.pg.exec(`DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT ${select} FROM ${quote(table)} ORDER BY ${key.map(quote).join(', ')}`)
    try {
      for (;;) {
        const rows = await this.pg.queryArrays<Cell[]>(`FETCH FORWARD ${Math.max(1, Math.floor(chunk))} FROM ${cursor}`)
        if (rows.length === 0) return
        for (const row of rows) for (let i = 0; i < row.length; i++) if (integer[i] && row[i] !== null) row[i] = BigInt(row[i] as string)
        yield rows
        if (rows.length < chunk) return
      }
    } finally {
      try {
        await this.pg.exec(`CLOSE ${cursor}`)
      } catch {
        // The transaction failed already: its error is the one to report, and the cursor goes with it.
      }
    }
  }

  async replace<T>(fn: (write: TableWriter) => Promise<T> | T): Promise<T> {
    return this.store.transaction(async () => {
      const tables = await this.list()
      const fks = await this.foreignKeys()
      for (const f of fks) await this.pg.exec(`ALTER TABLE ${quote(f.table)} DROP CONSTRAINT ${quote(f.name)}`)
      if (tables.length > 0) await this.pg.exec(`TRUNCATE ${tables.map((t) => quote(t.name)).join(', ')}`)
      const jsonb = await this.jsonbColumns()
      const write: TableWriter = async (table, columns, rows) => {
        if (rows.length === 0) return
        const json = columns.map((c) => jsonb.has(`${table}.${c}`))
        const text = rows.map((r) => r.map((v, i) => copyText(json[i] ? jsonbSafe(v) : v)).join('\t')).join('\n') + '\n'
        await this.pg.copyFrom(`COPY ${quote(table)} (${columns.map(quote).join(', ')}) FROM STDIN`, text)
      }
      const result = await fn(write)
      for (const f of fks) await this.pg.exec(`ALTER TABLE ${quote(f.table)} ADD CONSTRAINT ${quote(f.name)} ${f.def}`)
      const identities = await this.pg.query<{column: string; table: string}>(
        `SELECT c.relname AS table, a.attname AS column
           FROM pg_catalog.pg_attribute a
           JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND a.attidentity IN ('a', 'd') AND NOT a.attisdropped`,
      )
      for (const {column, table} of identities) {
        await this.pg.exec(
          `SELECT setval(pg_get_serial_sequence(${literal(quote(table))}, ${literal(column)}), coalesce(max(${quote(column)}), 1), max(${quote(column)}) IS NOT NULL) FROM ${quote(table)}`,
        )
      }
      return result
    }, {write: true})
  }

  /** "table.column" of every jsonb column. */
  private async jsonbColumns(): Promise<Set<string>> {
    const rows = await this.pg.query<{column: string; table: string}>(
      `SELECT c.relname AS table, a.attname AS column
         FROM pg_catalog.pg_attribute a
         JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND a.atttypid = 'jsonb'::regtype AND a.attnum > 0 AND NOT a.attisdropped`,
    )
    return new Set(rows.map((r) => `${r.table}.${r.column}`))
  }

  private async foreignKeys(): Promise<{def: string; name: string; parent: string; table: string}[]> {
    return await this.pg.query(
      `SELECT r.relname AS table, p.relname AS parent, c.conname AS name, pg_get_constraintdef(c.oid) AS def
         FROM pg_catalog.pg_constraint c
         JOIN pg_catalog.pg_class r ON r.oid = c.conrelid
         JOIN pg_catalog.pg_class p ON p.oid = c.confrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace
        WHERE c.contype = 'f' AND n.nspname = current_schema()
        ORDER BY r.relname, c.conname`,
    )
  }

  /** The primary key's columns, in key order (every pricectl table has one). */
  private async keyOf(table: string): Promise<string[]> {
    const rows = await this.pg.query<{name: string}>(
      `SELECT a.attname AS name
         FROM pg_catalog.pg_index i
         JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
        WHERE i.indrelid = $1::regclass AND i.indisprimary
        ORDER BY array_position(i.indkey::int2[], a.attnum)`,
      [quote(table)],
    )
    if (rows.length === 0) return (await this.listSync()).find((t) => t.name === table)!.columns.map((c) => c.name)
    return rows.map((r) => r.name)
  }
}
