import type {Statement} from 'better-sqlite3'

import type {DB} from '../db.js'

/**
 * Statements prepared once per connection, found by their SQL text: a chunk query's text
 * varies with what it selects, and preparing costs more than running.
 */
export function statementCache(db: DB): (sql: string) => Statement {
  const statements = new Map<string, Statement>()
  return (sql) => {
    let s = statements.get(sql)
    if (!s) {
      s = db.prepare(sql)
      statements.set(sql, s)
    }
    return s
  }
}
