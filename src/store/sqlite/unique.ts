import {UniqueConflictError} from '../port/errors.js'

/**
 * SQLite's unique violation ("UNIQUE constraint failed: products.name") as the port's typed
 * error; anything else is rethrown as it is. `value(column)` names the value that clashed.
 */
export function unique<T>(entity: string, value: (column: string) => string, fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    const e = error as {code?: string; message?: string}
    if (e.code !== 'SQLITE_CONSTRAINT_UNIQUE' && e.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw error
    const columns = /constraint failed: (.*)$/.exec(e.message ?? '')?.[1] ?? ''
    const column = columns.split(',').map((c) => c.trim().split('.').pop()!).pop() ?? 'key'
    throw new UniqueConflictError(entity, column, value(column))
  }
}
