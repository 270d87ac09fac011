import {UniqueConflictError} from '../port/errors.js'
import type {PgError} from './client.js'

/**
 * PostgreSQL's unique violation (SQLSTATE 23505, detail "Key (name)=(x) already exists.") as
 * the port's typed error, as ../sqlite/unique.ts does for SQLite; anything else is rethrown.
 * `value(column)` names the value that clashed. Run `fn` inside a transaction of the store
 * (a savepoint when one is open): a failed statement aborts a PostgreSQL transaction, and
 * the savepoint keeps the caller's transaction usable, as a failed SQLite statement does.
 */
export async function uniquePg<T>(entity: string, value: (column: string) => string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    const e = error as PgError
    if (e.code !== '23505') throw error
    const columns = /^Key \(([^)]*)\)=/.exec(e.detail ?? '')?.[1] ?? ''
    const column = columns.split(',').map((c) => c.trim()).pop() || 'key'
    throw new UniqueConflictError(entity, column, value(column))
  }
}
