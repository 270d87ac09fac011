import type {ChangeContext, ChangeRecord, ChangeRow, HistoryFilter, HistoryRepository, RowAction} from '../port/history.js'
import {RECORDED_TABLES} from '../schema/history.js'
import {quote, type Sql} from './support.js'

type ChangeSqlRow = Omit<ChangeRecord, 'rows'>

const COLUMNS = `c.id, c.at, c.actor, c.command, c.summary, c.reverts,
  (SELECT min(v.id) FROM changes v WHERE v.reverts = c.id) AS reverted_by`
const ACTION = "CASE WHEN r.before IS NULL THEN 'inserted' WHEN r.after IS NULL THEN 'deleted' ELSE 'updated' END"
/** The settings of the session that the history triggers read (./history-schema.ts). */
const CONTEXT = ['pricectl.actor', 'pricectl.at', 'pricectl.command', 'pricectl.summary', 'pricectl.reverts', 'pricectl.change_id']

type Shape = {columns: string[]; key: string[]; types: Map<string, string>}

/**
 * PostgreSQL adapter of the history repository. Recording is done by triggers stored with
 * the tables (./history-schema.ts); this side sets the session's context, reads the
 * history and restores row images.
 */
export class PgHistory implements HistoryRepository {
  private shapes = new Map<string, Shape>()

  constructor(private readonly sql: Sql) {}

  private async setting(name: string): Promise<string | undefined> {
    const v = await this.sql.setting(name)
    return v === null || v === '' ? undefined : v
  }

  /** Session settings (not local to a transaction: the context outlives the transactions it spans). */
  private async set(values: Record<string, null | string>): Promise<void> {
    for (const [name, value] of Object.entries(values)) await this.sql.set(name, value)
  }

  async begin(context: ChangeContext): Promise<void> {
    await this.set({'pricectl.actor': context.actor, 'pricectl.at': context.at, 'pricectl.change_id': null, 'pricectl.command': context.command, 'pricectl.reverts': null, 'pricectl.summary': null})
  }

  async active(): Promise<boolean> {
    return await this.setting('pricectl.actor') !== undefined
  }

  async end(): Promise<void> {
    await this.set(Object.fromEntries(CONTEXT.map((n) => [n, null])))
  }

  async note(note: {reverts?: number; summary?: string}): Promise<void> {
    if (!await this.active()) return
    const values: Record<string, string> = {}
    if (note.summary !== undefined) values['pricectl.summary'] = note.summary
    if (note.reverts !== undefined) values['pricectl.reverts'] = String(note.reverts)
    if (Object.keys(values).length > 0) await this.set(values)
    const id = await this.currentChange()
    if (id !== undefined) await this.sql.run('UPDATE changes SET summary = coalesce($1, summary), reverts = coalesce($2, reverts) WHERE id = $3', [note.summary ?? null, note.reverts ?? null, id])
  }

  async currentChange(): Promise<number | undefined> {
    const v = await this.setting('pricectl.change_id')
    return v === undefined ? undefined : Number(v)
  }

  async get(id: number): Promise<ChangeRecord | undefined> {
    return (await this.withRows(await this.sql.rows<ChangeSqlRow>(`SELECT ${COLUMNS} FROM changes c WHERE c.id = $1`, [id])))[0]
  }

  async list(filter: HistoryFilter): Promise<ChangeRecord[]> {
    const where: string[] = []
    const params: unknown[] = []
    const p = (v: unknown) => {
      params.push(v)
      return `$${params.length}`
    }
    if (filter.since !== undefined) where.push(`c.at >= ${p(filter.since)}`)
    if (filter.actor !== undefined) where.push(`c.actor = ${p(filter.actor)}`)
    if (filter.table !== undefined) where.push(`EXISTS (SELECT 1 FROM change_rows r WHERE r.change_id = c.id AND r.table_name = ${p(filter.table)})`)
    if (filter.productIds !== undefined) where.push(`EXISTS (SELECT 1 FROM change_rows r WHERE r.change_id = c.id AND r.product_id = ANY(${p(filter.productIds)}::bigint[]))`)
    const text = `SELECT ${COLUMNS} FROM changes c ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY c.id DESC LIMIT ${p(filter.limit)}`
    return await this.withRows(await this.sql.rows<ChangeSqlRow>(text, params))
  }

  private async withRows(changes: ChangeSqlRow[]): Promise<ChangeRecord[]> {
    if (changes.length === 0) return []
    const counts = await this.sql.rows<{action: RowAction; change_id: number; count: number; table: string}>(
      `SELECT r.change_id, r.table_name AS "table", ${ACTION} AS action, count(*)::int AS count FROM change_rows r
       WHERE r.change_id = ANY($1::bigint[]) GROUP BY r.change_id, r.table_name, 3 ORDER BY min(r.id)`,
      [changes.map((c) => c.id)],
    )
    const by = new Map<number, ChangeRecord['rows']>()
    for (const {change_id, ...count} of counts) {
      let list = by.get(change_id)
      if (!list) by.set(change_id, (list = []))
      list.push(count)
    }
    return changes.map((c) => ({...c, rows: by.get(c.id) ?? []}))
  }

  async rows(id: number): Promise<ChangeRow[]> {
    return (await this.sql.rows<ChangeRow>(
      `SELECT r.id, r.table_name AS "table", r.key, r.product_id, r.before, r.after, ${ACTION} AS action FROM change_rows r WHERE r.change_id = $1 ORDER BY r.id`,
      [id],
    )).map((r) => ({action: r.action, after: json(r.after) as ChangeRow['after'], before: json(r.before) as ChangeRow['before'], id: r.id, key: json(r.key) as unknown[], product_id: r.product_id, table: r.table}))
  }

  async laterWritesOfRows(id: number): Promise<{change_id: number; key: unknown[]; table: string}[]> {
    return (await this.sql.rows<{change_id: number; key: unknown; table: string}>(
      `SELECT l.change_id, l.table_name AS "table", l.key FROM change_rows l
       JOIN (SELECT DISTINCT table_name, key FROM change_rows WHERE change_id = $1) r ON r.table_name = l.table_name AND r.key = l.key
       WHERE l.change_id > $1 GROUP BY l.change_id, l.table_name, l.key ORDER BY l.change_id, min(l.id)`,
      [id],
    )).map((r) => ({...r, key: json(r.key) as unknown[]}))
  }

  async productIds(apiId: string): Promise<number[]> {
    return (await this.sql.rows<{id: number}>(
      `SELECT id FROM products WHERE api_id = $1
       UNION SELECT product_id FROM change_rows WHERE table_name = 'products' AND (after ->> 'api_id' = $1 OR before ->> 'api_id' = $1)`,
      [apiId],
    )).map((r) => r.id)
  }

  /** Columns, their types and the primary key of a recorded table, read from the catalog once. */
  private async shape(table: string): Promise<Shape> {
    if (!RECORDED_TABLES.some((t) => t.table === table)) throw new Error(`${table} is not a recorded table`)
    let s = this.shapes.get(table)
    if (!s) {
      const cols = await this.sql.rows<{name: string; pk: null | number; type: string}>(
        `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
                array_position((SELECT i.indkey::int2[] FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisprimary), a.attnum) AS pk
         FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [quote(table)],
      )
      s = {
        columns: cols.map((c) => c.name),
        key: cols
          .filter((c) => c.pk !== null)
          .sort((a, b) => a.pk! - b.pk!)
          .map((c) => c.name),
        types: new Map(cols.map((c) => [c.name, c.type])),
      }
      this.shapes.set(table, s)
    }
    return s
  }

  /** WHERE of a row by its key (a JSON array parameter $1), typed so the primary key's index is used. */
  private keyWhere(s: Shape): string {
    return s.key.map((c, i) => `${quote(c)} = ($1::jsonb ->> ${i})::${s.types.get(c)}`).join(' AND ')
  }

  async currentImage(table: string, key: unknown[]): Promise<null | Record<string, unknown>> {
    const s = await this.shape(table)
    const exclude = RECORDED_TABLES.find((r) => r.table === table)?.exclude ?? []
    const r = (await this.sql.rows<{image: unknown}>(`SELECT to_jsonb(t) - $2::text[] AS image FROM ${quote(table)} t WHERE ${this.keyWhere(s)}`, [JSON.stringify(key), exclude]))[0]
    return r ? (json(r.image) as Record<string, unknown>) : null
  }

  async restore(rows: {before: null | Record<string, unknown>; key: unknown[]; table: string}[]): Promise<void> {
    // Children may come back before their parent: foreign keys are checked at commit.
    await this.sql.run('SET CONSTRAINTS ALL DEFERRED')
    for (const row of rows) {
      // Identifiers come from the catalog of a recorded table, quoted; images and keys are parameters.
      const s = await this.shape(row.table)
      const t = quote(row.table)
      if (row.before === null) {
        await this.sql.run(`DELETE FROM ${t} WHERE ${this.keyWhere(s)}`, [JSON.stringify(row.key)])
        continue
      }
      const names = s.columns.filter((c) => c in row.before!)
      const rest = names.filter((c) => !s.key.includes(c))
      const cols = names.map((c) => quote(c)).join(', ')
      const update = rest.length > 0 ? `UPDATE SET ${rest.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}` : 'NOTHING'
      await this.sql.run(`INSERT INTO ${t} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${cols} FROM jsonb_populate_record(NULL::${t}, $1::jsonb) ON CONFLICT (${s.key.map((c) => quote(c)).join(', ')}) DO ${update}`, [
        JSON.stringify(row.before),
      ])
    }
  }
}

/** A JSON value as the driver hands it (jsonb: parsed already; text: parsed here). */
function json(v: unknown): null | Record<string, unknown> | unknown[] {
  if (v === null || v === undefined) return null
  return (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown> | unknown[]
}
