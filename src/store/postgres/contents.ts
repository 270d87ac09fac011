import {CHILDREN, HISTORY, rankContents, SEEDED} from '../contents.js'
import {quote, type Sql} from './support.js'

/** Tables of the store that are not pricectl's content (the migrations' own bookkeeping). */
const BOOKKEEPING = new Set(['pricectl_data_version', 'pricectl_meta'])

/** What the store holds beyond a new store's seed (as ../sqlite/contents.ts): the tables of the connection's schema. */
export async function storeContents(sql: Sql): Promise<{rows: number; table: string}[]> {
  const tables = (await sql.rows<{name: string}>("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename COLLATE \"C\"")).map((r) => r.name)
  const counted = tables.filter((t) => !SEEDED.has(t) && !HISTORY.has(t) && !BOOKKEEPING.has(t))
  if (counted.length === 0) return []
  // One statement: a count per table (whether a table has a row is all most callers need, but messages show the counts).
  const counts = await sql.rows<{n: number; t: string}>(counted.map((t) => `SELECT '${t.replaceAll("'", "''")}' AS t, count(*)::int AS n FROM ${quote(t)}`).join(' UNION ALL '))
  const held: {rows: number; table: string}[] = []
  let childRows = false
  for (const {n, t} of counts) {
    if (n === 0) continue
    if (CHILDREN.has(t)) childRows = true
    else held.push({rows: n, table: t})
  }
  return rankContents(held, childRows)
}
