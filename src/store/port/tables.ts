/**
 * The tables part of the storage port: a whole store read and written table by table, a chunk
 * of rows at a time, for `db copy` (and `db backup` / `db restore` on PostgreSQL). Values are
 * portable as SQLite stores them (integers as bigint, so ids and amounts stay exact); each
 * adapter converts its own types.
 */

/** One value of a row. */
export type Cell = bigint | null | number | string

/** How a column's values travel: integer (bigint), real (number) or text (string). */
export type ColumnType = 'integer' | 'real' | 'text'

export type TableShape = {
  columns: {name: string; type: ColumnType}[]
  name: string
}

/** Writes chunks of rows of one table (columns in the order given) during TablesRepository.replace. */
export type TableWriter = (table: string, columns: readonly string[], rows: readonly Cell[][]) => Promise<void>

export interface TablesRepository {
  /**
   * Every table of the store's data (catalog, configuration, history, locks, revenue, keys,
   * settings, the store's own bookkeeping such as currency exponents), a table after those
   * it references. Not listed: what the adapter keeps about itself (the schema version).
   */
  list(): Promise<TableShape[]>
  /** Rows per table of list(). */
  counts(): Promise<Record<string, number>>
  /** Run `fn` on one consistent snapshot of the store (reads only: other writers go on). */
  snapshot<T>(fn: () => T): Promise<T>
  /**
   * The rows of `table` in primary key order, `chunk` rows at a time (each array handed
   * over, not reused), values of `columns` in that order. Call inside snapshot().
   */
  read(table: string, columns: readonly string[], chunk: number): AsyncIterable<Cell[][]>
  /**
   * Replace the whole store's data in one write transaction: every table of list() is
   * emptied (a new store's seed too), `fn` writes the rows through `write` (ids and values
   * as given; nothing is recorded in the change history), and foreign keys are checked when
   * it returns. Anything thrown leaves the store as it was.
   */
  replace<T>(fn: (write: TableWriter) => T): Promise<T>
}
