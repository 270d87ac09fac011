import type Database from 'better-sqlite3'

import {RECORDED_TABLES, type RecordedTable} from '../port/history.js'

/**
 * Change history (docs/history.md): every write to the catalog and the
 * configuration, with who made it, which command, and the row before and after.
 *
 * `changes` holds one row per command run (or server request) that changed something;
 * `change_rows` one row per row written, in the order written. Both are written by
 * triggers, inside the transaction of the write itself, so a change and its history land
 * together or not at all.
 */
export const HISTORY_SQL = `
CREATE TABLE changes (
  id      INTEGER PRIMARY KEY,
  at      TEXT NOT NULL,                       -- ISO 8601 UTC: when the command started
  actor   TEXT NOT NULL,                       -- the OS user, or "key:NAME" for the server
  command TEXT NOT NULL,                       -- "pricectl products update ..." or "POST /v1/..."
  summary TEXT,                                -- e.g. "revert of change 12"
  reverts INTEGER REFERENCES changes(id)       -- the change this one reverted
);
CREATE INDEX changes_at ON changes (at);

CREATE TABLE change_rows (
  id         INTEGER PRIMARY KEY,
  change_id  INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
  table_name TEXT NOT NULL,
  key        TEXT NOT NULL,                    -- JSON array of the row's primary key
  product_id INTEGER,                          -- products.id the row belongs to, for --product
  before     TEXT,                             -- JSON object; NULL when the row was inserted
  after      TEXT                              -- JSON object; NULL when the row was deleted
);
-- No index on product_id: it cost about 40% more CPU per recorded row on a products
-- import; --product filters through change_id, one change at a time.
CREATE INDEX change_rows_change ON change_rows (change_id);
`

export {RECORDED_TABLES, type RecordedTable}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** Columns of a table and its primary key, in key order (`rowid` for a table without one). */
export function tableColumns(db: Database.Database, table: string): {columns: string[]; key: string[]} {
  const t = quote(table)
  const info = db.pragma(`main.table_info(${t})`) as {name: string; pk: number}[]
  const key = info
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name)
  return {columns: info.map((c) => c.name), key: key.length > 0 ? key : ['rowid']}
}

/**
 * Make this connection record its writes (docs/history.md): a context TEMP table and TEMP
 * triggers on every recorded table, generated from the live schema at each open. TEMP because
 * the context is per connection (two processes write one file) and stored triggers could not
 * read it; generated, so a migration that adds a table only adds it to RECORDED_TABLES. Safe
 * to call again.
 */
export function installHistoryTriggers(db: Database.Database): void {
  db.exec(`CREATE TEMP TABLE IF NOT EXISTS change_context (
    at        TEXT NOT NULL,
    actor     TEXT NOT NULL,
    command   TEXT NOT NULL,
    summary   TEXT,
    reverts   INTEGER,
    change_id INTEGER
  )`)
  // INSERT OR REPLACE deletes the row it replaces: with recursive triggers on, that delete
  // is recorded too (otherwise the replaced row's before image would be lost).
  db.pragma('recursive_triggers = ON')
  // The triggers follow from the recorded tables' CREATE statements alone (table_info reads
  // them): made once per schema in a process, a third of the install otherwise (~1.5 ms of
  // every command, which opens the store once).
  const schema = db.prepare(`SELECT group_concat(sql, char(10)) FROM (SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name IN (${RECORDED_SQL_LIST}) ORDER BY name)`).pluck().get() as null | string
  let sql = triggersBySchema.get(schema ?? '')
  if (sql === undefined) {
    sql = triggerSql(db)
    triggersBySchema.set(schema ?? '', sql)
  }
  db.exec(sql)
}

const RECORDED_SQL_LIST = RECORDED_TABLES.map((t) => `'${t.table}'`).join(', ')

/** triggerSql by the recorded tables' CREATE statements (a process meets one or two schemas). */
const triggersBySchema = new Map<string, string>()

/** The DROP and CREATE TEMP TRIGGER statements for the recorded tables of this schema. */
function triggerSql(db: Database.Database): string {
  const sql: string[] = []
  for (const spec of RECORDED_TABLES) {
    const {columns, key} = tableColumns(db, spec.table)
    if (columns.length === 0) continue // an older schema without this table
    const kept = columns.filter((c) => !spec.exclude?.includes(c))
    const image = (row: 'NEW' | 'OLD') => `json_object(${kept.map((c) => `'${c}', ${row}.${quote(c)}`).join(', ')})`
    const keyOf = (row: 'NEW' | 'OLD') => `json_array(${key.map((c) => `${row}.${quote(c)}`).join(', ')})`
    const product = (row: 'NEW' | 'OLD') => (spec.table === 'products' ? `${row}.id` : columns.includes('product_id') ? `${row}.product_id` : 'NULL')
    const watched = kept.filter((c) => !spec.ignoreUpdatesOf?.includes(c))
    const changed = watched.map((c) => `OLD.${quote(c)} IS NOT NEW.${quote(c)}`).join(' OR ')
    const body = (row: 'NEW' | 'OLD', before: string, after: string) => `
      INSERT INTO changes (at, actor, command, summary, reverts) SELECT at, actor, command, summary, reverts FROM change_context WHERE change_id IS NULL;
      UPDATE change_context SET change_id = last_insert_rowid() WHERE change_id IS NULL;
      INSERT INTO change_rows (change_id, table_name, key, product_id, before, after)
        SELECT change_id, '${spec.table}', ${keyOf(row)}, ${product(row)}, ${before}, ${after} FROM change_context;`
    const t = `history_${spec.table}`
    sql.push(
      `DROP TRIGGER IF EXISTS temp.${t}_insert; DROP TRIGGER IF EXISTS temp.${t}_update; DROP TRIGGER IF EXISTS temp.${t}_delete;`,
      `CREATE TEMP TRIGGER ${t}_insert AFTER INSERT ON main.${quote(spec.table)} WHEN EXISTS (SELECT 1 FROM change_context) BEGIN ${body('NEW', 'NULL', image('NEW'))} END;`,
      `CREATE TEMP TRIGGER ${t}_update AFTER UPDATE ON main.${quote(spec.table)} WHEN EXISTS (SELECT 1 FROM change_context) AND (${changed}) BEGIN ${body('NEW', image('OLD'), image('NEW'))} END;`,
      `CREATE TEMP TRIGGER ${t}_delete AFTER DELETE ON main.${quote(spec.table)} WHEN EXISTS (SELECT 1 FROM change_context) BEGIN ${body('OLD', image('OLD'), 'NULL')} END;`,
    )
  }
  return sql.join('\n')
}
