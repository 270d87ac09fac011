import type {CopyIn} from './client.js'
import type {PgStore} from './store.js'

/**
 * What the PostgreSQL repositories of catalog, segments, experiments, history, revenue and
 * imports need of the connection: statements with $n parameters, a transaction (a savepoint
 * inside another), session settings and COPY FROM STDIN. PgStore hands them one over its client.
 */
export interface Sql {
  /** Rows of a statement (RETURNING rows for a write). */
  rows<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>
  /** Rows written by a statement. */
  run(text: string, params?: readonly unknown[]): Promise<number>
  /** `fn` in one write transaction; a call inside another joins it (a savepoint). */
  tx<T>(fn: () => Promise<T> | T): Promise<T>
  /** Whether a transaction is open on the connection. */
  inTransaction(): boolean
  /** A write transaction (the store's write lock) left open across calls, the import writer's batch: begin, then commit or roll back. */
  begin(): Promise<void>
  commit(): Promise<void>
  rollback(): Promise<void>
  /** COPY ... FROM STDIN with `data` (text format); returns the rows copied. */
  copyFrom(text: string, data: string): Promise<number>
  /** COPY ... FROM STDIN left open for data written piece by piece (client.ts CopyIn). */
  copyIn(text: string): Promise<CopyIn>
  /** A session setting (null: reset), kept across reconnects (client.ts set()). */
  set(name: string, value: null | string): Promise<void>
  /** A session setting of the transactions' connection (where triggers set theirs), null when unset. */
  setting(name: string): Promise<null | string>
}

/** The Sql of a store: its client, its write transactions and its open batch. */
export function sqlOf(store: PgStore): Sql {
  const {pg} = store
  return {
    begin: async () => await store.beginOpen(),
    commit: async () => await store.commitOpen(),
    copyFrom: async (text, data) => await pg.copyFrom(text, data),
    copyIn: async (text) => await pg.copyIn(text),
    inTransaction: () => store.inTransaction,
    rollback: async () => await store.rollbackOpen(),
    rows: async (text, params) => await pg.query(text, params),
    run: async (text, params) => await pg.run(text, params),
    set: (name, value) => store.set(name, value),
    setting: async (name) => (await store.raw.query<{v: null | string}>('SELECT current_setting($1, true) AS v', [name]))[0].v,
    tx: (fn) => store.transaction(fn, {write: true}),
  }
}

/** The first row of a statement, if any. */
export async function one<R>(sql: Sql, text: string, params?: readonly unknown[]): Promise<R | undefined> {
  return (await sql.rows<R>(text, params))[0]
}

/** A number out of a bigint or numeric column (which the driver may hand over as text); null stays null. */
export function num<T extends null | number | string | undefined>(v: T): T extends string ? number : T {
  return (typeof v === 'string' ? Number(v) : v) as T extends string ? number : T
}

/** Like num() for a value that cannot be null. */
export const int = (v: unknown): number => (typeof v === 'string' ? Number(v) : (v as number))

/** Double-quote an identifier (names come from the schema, never from input). */
export const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** A unique violation as the port's UniqueConflictError (./unique.ts). */
export {uniquePg as unique} from './unique.js'

/** Rows found by api_id, in the order asked; unknown ones left out. */
export function inOrder<T extends {api_id: string}>(apiIds: readonly string[], rows: T[]): T[] {
  const found = new Map(rows.map((r) => [r.api_id, r]))
  return apiIds.flatMap((id) => found.get(id) ?? [])
}

/** Whether a chunk names a key twice (then it is written one row at a time, in order: one INSERT ... ON CONFLICT cannot touch a row twice). */
export function repeats<T>(rows: readonly T[], key: (row: T) => string): boolean {
  return new Set(rows.map(key)).size < rows.length
}

/** Rows grouped by one of their columns, in the order read. */
export function groupBy<T, K>(list: readonly T[], key: (r: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>()
  for (const r of list) {
    const k = key(r)
    const l = m.get(k)
    if (l) l.push(r)
    else m.set(k, [r])
  }
  return m
}
