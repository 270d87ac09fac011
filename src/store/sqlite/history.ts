import type {Statement} from 'better-sqlite3'

import type {DB} from '../db.js'
import type {ChangeContext, ChangeRecord, ChangeRow, HistoryFilter, HistoryRepository, RowAction} from '../port/history.js'
import {installHistoryTriggers, RECORDED_TABLES, tableColumns} from '../schema/history.js'

type ChangeSqlRow = Omit<ChangeRecord, 'rows'>

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * SQLite adapter of the history repository. Recording is done by TEMP triggers on this
 * connection (../schema/history.ts), installed on the first begin().
 */
export class SqliteHistory implements HistoryRepository {
  private installed = false
  private shapes = new Map<string, {columns: string[]; key: string[]}>()
  /** Statements of currentImage() and restore(), by what they do: a revert of an import touches thousands of rows. */
  private statements = new Map<string, Statement>()

  constructor(private readonly db: DB) {}

  async begin(context: ChangeContext): Promise<void> {
    if (!this.installed) {
      // A store not yet migrated to the history schema (db info, db migrate) records nothing.
      if (this.db.prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'change_rows'").get() === undefined) return
      installHistoryTriggers(this.db)
      this.installed = true
    }
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM temp.change_context').run()
      this.db.prepare('INSERT INTO temp.change_context (at, actor, command) VALUES (?, ?, ?)').run(context.at, context.actor, context.command)
    })()
  }

  async active(): Promise<boolean> {
    return this.installed && this.db.prepare('SELECT 1 FROM temp.change_context').get() !== undefined
  }

  async end(): Promise<void> {
    if (this.installed) this.db.prepare('DELETE FROM temp.change_context').run()
  }

  async note(note: {reverts?: number; summary?: string}): Promise<void> {
    if (!this.installed) return
    this.db.prepare('UPDATE temp.change_context SET summary = coalesce(?, summary), reverts = coalesce(?, reverts)').run(note.summary ?? null, note.reverts ?? null)
    const id = await this.currentChange()
    if (id !== undefined) this.db.prepare('UPDATE changes SET summary = coalesce(?, summary), reverts = coalesce(?, reverts) WHERE id = ?').run(note.summary ?? null, note.reverts ?? null, id)
  }

  async currentChange(): Promise<number | undefined> {
    if (!this.installed) return undefined
    const r = this.db.prepare('SELECT change_id FROM temp.change_context').get() as {change_id: null | number} | undefined
    return r?.change_id ?? undefined
  }

  async get(id: number): Promise<ChangeRecord | undefined> {
    return this.withRows(this.db.prepare(`SELECT ${COLUMNS} FROM changes c WHERE c.id = ?`).all(id) as ChangeSqlRow[])[0]
  }

  async list(filter: HistoryFilter): Promise<ChangeRecord[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.since !== undefined) {
      where.push('c.at >= ?')
      params.push(filter.since)
    }
    if (filter.actor !== undefined) {
      where.push('c.actor = ?')
      params.push(filter.actor)
    }
    if (filter.table !== undefined) {
      where.push('EXISTS (SELECT 1 FROM change_rows r WHERE r.change_id = c.id AND r.table_name = ?)')
      params.push(filter.table)
    }
    if (filter.productIds !== undefined) {
      const ids = JSON.stringify(filter.productIds)
      where.push('EXISTS (SELECT 1 FROM change_rows r WHERE r.change_id = c.id AND r.product_id IN (SELECT value FROM json_each(?)))')
      params.push(ids)
    }
    const sql = `SELECT ${COLUMNS} FROM changes c ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY c.id DESC LIMIT ?`
    return this.withRows(this.db.prepare(sql).all(...params, filter.limit) as ChangeSqlRow[])
  }

  private withRows(changes: ChangeSqlRow[]): ChangeRecord[] {
    if (changes.length === 0) return []
    const counts = this.db
      .prepare(
        `SELECT r.change_id, r.table_name AS "table", CASE WHEN r.before IS NULL THEN 'inserted' WHEN r.after IS NULL THEN 'deleted' ELSE 'updated' END AS action, count(*) AS count FROM change_rows r
         WHERE r.change_id IN (SELECT value FROM json_each(?)) GROUP BY r.change_id, r.table_name, action ORDER BY min(r.id)`,
      )
      .all(JSON.stringify(changes.map((c) => c.id))) as {action: RowAction; change_id: number; count: number; table: string}[]
    const by = new Map<number, ChangeRecord['rows']>()
    for (const {change_id, ...count} of counts) {
      let list = by.get(change_id)
      if (!list) by.set(change_id, (list = []))
      list.push(count)
    }
    return changes.map((c) => ({...c, rows: by.get(c.id) ?? []}))
  }

  async rows(id: number): Promise<ChangeRow[]> {
    const rows = this.db
      .prepare(`SELECT r.id, r.table_name AS "table", r.key, r.product_id, r.before, r.after, CASE WHEN r.before IS NULL THEN 'inserted' WHEN r.after IS NULL THEN 'deleted' ELSE 'updated' END AS action FROM change_rows r WHERE r.change_id = ? ORDER BY r.id`)
      .all(id) as {action: RowAction; after: null | string; before: null | string; id: number; key: string; product_id: null | number; table: string}[]
    return rows.map((r) => ({
      action: r.action,
      after: r.after === null ? null : (JSON.parse(r.after) as Record<string, unknown>),
      before: r.before === null ? null : (JSON.parse(r.before) as Record<string, unknown>),
      id: r.id,
      key: JSON.parse(r.key) as unknown[],
      product_id: r.product_id,
      table: r.table,
    }))
  }

  async laterWritesOfRows(id: number): Promise<{change_id: number; key: unknown[]; table: string}[]> {
    const rows = this.db
      .prepare(
        `SELECT DISTINCT l.change_id, l.table_name AS "table", l.key FROM change_rows l
         JOIN (SELECT DISTINCT table_name, key FROM change_rows WHERE change_id = ?) r ON r.table_name = l.table_name AND r.key = l.key
         WHERE l.change_id > ? ORDER BY l.change_id, l.id`,
      )
      .all(id, id) as {change_id: number; key: string; table: string}[]
    return rows.map((r) => ({...r, key: JSON.parse(r.key) as unknown[]}))
  }

  async productIds(apiId: string): Promise<number[]> {
    const rows = this.db
      .prepare(
        `SELECT id FROM products WHERE api_id = @k
         UNION SELECT product_id FROM change_rows WHERE table_name = 'products' AND (json_extract(after, '$.api_id') = @k OR json_extract(before, '$.api_id') = @k)`,
      )
      .all({k: apiId}) as {id: number}[]
    return rows.map((r) => r.id)
  }

  private shape(table: string): {columns: string[]; key: string[]} {
    if (!RECORDED_TABLES.some((t) => t.table === table)) throw new Error(`${table} is not a recorded table`)
    let s = this.shapes.get(table)
    if (!s) this.shapes.set(table, (s = tableColumns(this.db, table)))
    return s
  }

  private cached(id: string, prepare: () => Statement): Statement {
    let st = this.statements.get(id)
    if (!st) this.statements.set(id, (st = prepare()))
    return st
  }

  async currentImage(table: string, key: unknown[]): Promise<null | Record<string, unknown>> {
    const {columns, key: keyColumns} = this.shape(table)
    const exclude = RECORDED_TABLES.find((r) => r.table === table)?.exclude ?? []
    const cols = columns
      .filter((c) => !exclude.includes(c))
      .map((c) => `'${c}', ${quote(c)}`)
      .join(', ')
    const t = `main.${quote(table)}`
    const where = keyColumns.map((c, i) => `${quote(c)} IS json_extract(@k, '$[${i}]')`).join(' AND ')
    const r = this.cached(`image ${table}`, () => this.db.prepare(`SELECT json_object(${cols}) AS image FROM ${t} WHERE ${where}`)).get({k: JSON.stringify(key)}) as {image: string} | undefined
    return r ? (JSON.parse(r.image) as Record<string, unknown>) : null
  }

  async restore(rows: {before: null | Record<string, unknown>; key: unknown[]; table: string}[]): Promise<void> {
    // Children may come back before their parent: foreign keys are checked at commit.
    this.db.pragma('defer_foreign_keys = ON')
    for (const row of rows) {
      // Identifiers come from the schema (PRAGMA table_info of a recorded table), quoted;
      // the images and keys are parameters.
      const {columns, key: keyColumns} = this.shape(row.table)
      const t = `main.${quote(row.table)}`
      if (row.before === null) {
        const where = keyColumns.map((c, i) => `${quote(c)} IS json_extract(@k, '$[${i}]')`).join(' AND ')
        this.cached(`delete ${row.table}`, () => this.db.prepare(`DELETE FROM ${t} WHERE ${where}`)).run({k: JSON.stringify(row.key)})
        continue
      }
      const names = columns.filter((c) => c in row.before!)
      const rest = names.filter((c) => !keyColumns.includes(c))
      const cols = names.map(quote).join(', ')
      const values = names.map((c) => `json_extract(@k, '$.${c}')`).join(', ')
      const key = keyColumns.map(quote).join(', ')
      const update = rest.length > 0 ? `UPDATE SET ${rest.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}` : 'NOTHING'
      this.cached(`upsert ${row.table} ${names.join(',')}`, () =>
        this.db.prepare(`INSERT INTO ${t} (${cols}) SELECT ${values} WHERE true ON CONFLICT (${key}) DO ${update}`),
      ).run({k: JSON.stringify(row.before)})
    }
  }
}

const COLUMNS = `c.id, c.at, c.actor, c.command, c.summary, c.reverts,
  (SELECT min(v.id) FROM changes v WHERE v.reverts = c.id) AS reverted_by`
