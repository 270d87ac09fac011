import {CHILDREN, HISTORY, rankContents, SEEDED} from '../contents.js'
import type {DB} from '../db.js'

/** What the store holds beyond a new store's seed: table and row count, the biggest parents first. */
export function storeContents(db: DB): {rows: number; table: string}[] {
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {name: string}[]).map((r) => r.name)
  const held: {rows: number; table: string}[] = []
  let childRows = false
  for (const table of tables) {
    if (SEEDED.has(table) || HISTORY.has(table)) continue
    const rows = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as {n: number}).n
    if (rows === 0) continue
    if (CHILDREN.has(table)) childRows = true
    else held.push({rows, table})
  }
  return rankContents(held, childRows)
}
