import {SNAPSHOT_PREFIX} from '../../fx/sources.js'
import {
  type By,
  CHARGE_COLUMNS,
  type ChargeRevenue,
  type EventRef,
  type FieldEvents,
  type FieldWrites,
  type FxHistory,
  type HistoryEvent,
  type Kind,
  type ListFilters,
  type LoggedEvent,
  type PendingFields,
  type Period,
  type RecordKey,
  type RevenueRepository,
  type RevenueTable,
  type RowOf,
  SUBSCRIPTION_COLUMNS,
  SUBSCRIPTION_EVENT_COLUMNS,
  type SubscriptionEvent,
  type ValuesOf,
} from '../port/revenue.js'
import {int, type Sql} from './support.js'

export function columnsOf(table: RevenueTable): readonly string[] {
  return table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
}

/** The record's columns as the port reads them (its field order is not one: fieldEvents()). */
function recordColumns(table: RevenueTable): string {
  return ['id', ...columnsOf(table)].map((c) => `t.${c}`).join(', ')
}

/** Writes as stored: JSON with the fields in name order, so equal states store equal text (as SQLite's adapter). */
export function writesJson<T extends {fields: FieldWrites}>(v: T): string {
  const fields: FieldWrites = {}
  for (const f of Object.keys(v.fields).sort()) fields[f] = v.fields[f]!
  return JSON.stringify({...v, fields})
}

/** A stored field order (JSON text or NULL). */
export function parseFieldEvents(json: null | string | undefined): FieldEvents | null {
  return json ? (JSON.parse(json) as FieldEvents) : null
}

/** Event ids compare as plain strings (compareEvents): byte order, whatever the database's collation. */
export const ID_ORDER = 'COLLATE "C"'

/** Keys as one JSON parameter ($n), a relation of (user_id, origin, origin_id, n) in the order given. */
export const KEYS = (p: string) => `ROWS FROM (jsonb_to_recordset(${p}::jsonb) AS (user_id text, origin text, origin_id text)) WITH ORDINALITY AS k(user_id, origin, origin_id, n)`

/**
 * `columns` (of `t`) of the records of the keys in $1 (KEYS), each with its key's position `n`.
 * One index probe per key (LATERAL ... LIMIT 1): as a join, a cached plan may hash the keys and
 * scan the whole table for each write (src/store/postgres/pricing.ts, LOAD_LOCKS).
 */
export const RECORDS_OF_KEYS = (table: RevenueTable, columns: string) =>
  `SELECT t.*, k.n FROM ${KEYS('$1')} CROSS JOIN LATERAL (
    SELECT ${columns} FROM ${table} t WHERE t.user_id = k.user_id AND t.origin = k.origin AND t.origin_id = k.origin_id LIMIT 1) AS t`

/** Deletes the records of the keys in $1 (KEYS) by their ids, found as RECORDS_OF_KEYS finds them. */
export const REMOVE_RECORDS = (table: RevenueTable) => `DELETE FROM ${table} WHERE id = ANY (ARRAY(SELECT id FROM (${RECORDS_OF_KEYS(table, 't.id')}) AS r))`

function groupKey(by: By): string {
  if (by === 'country') return "COALESCE(t.country, (SELECT u.country FROM users u WHERE u.user_id = t.user_id), 'unknown')"
  if (by === 'product') return "COALESCE((SELECT p.api_id FROM products p WHERE p.id = t.product_id), '(no product)')"
  return "'all'"
}

/** PostgreSQL adapter of the revenue repository (the same semantics as ../sqlite/revenue.ts): a chunk is one statement. */
export class PgRevenue implements RevenueRepository {
  constructor(private readonly sql: Sql) {}

  async rows<T extends RevenueTable>(table: T, keys: readonly RecordKey[]): Promise<(RowOf<T> | undefined)[]> {
    if (keys.length === 0) return []
    const found = await this.sql.rows<RowOf<T> & {n: number}>(
      RECORDS_OF_KEYS(table, recordColumns(table)),
      [JSON.stringify(keys.map((k) => ({origin: k.origin, origin_id: k.origin_id, user_id: k.user_id})))],
    )
    const out: (RowOf<T> | undefined)[] = keys.map(() => undefined)
    for (const {n, ...row} of found) out[int(n) - 1] = row as unknown as RowOf<T>
    return out
  }

  async fieldEvents(table: RevenueTable, keys: readonly RecordKey[]): Promise<(FieldEvents | null)[]> {
    if (keys.length === 0) return []
    const found = await this.sql.rows<{field_events: null | string; n: number}>(
      RECORDS_OF_KEYS(table, 't.field_events'),
      [JSON.stringify(keys.map((k) => ({origin: k.origin, origin_id: k.origin_id, user_id: k.user_id})))],
    )
    const out: (FieldEvents | null)[] = keys.map(() => null)
    for (const r of found) out[int(r.n) - 1] = parseFieldEvents(r.field_events)
    return out
  }

  async save<T extends RevenueTable>(table: T, values: readonly ValuesOf<T>[], fieldEvents?: readonly (FieldEvents | null)[]): Promise<void> {
    if (values.length === 0) return
    const cols = [...columnsOf(table), 'field_events']
    const set = cols.filter((c) => !['origin', 'origin_id', 'user_id'].includes(c))
    // Later values of the same key in one chunk replace earlier ones, as saves one by one would.
    const last = new Map<string, Record<string, unknown>>()
    values.forEach((v, i) => {
      const fe = fieldEvents?.[i]
      last.set(JSON.stringify([v.user_id, v.origin, v.origin_id]), {...v, field_events: fe ? writesJson(fe) : null})
    })
    await this.sql.run(
      `INSERT INTO ${table} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb)
       ON CONFLICT (user_id, origin, origin_id) DO UPDATE SET ${set.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      [JSON.stringify([...last.values()])],
    )
  }

  async pending(kind: Kind, keys?: readonly string[]): Promise<Map<string, PendingFields>> {
    return await this.pendingSync(kind, keys)
  }

  async pendingSync(kind: Kind, keys?: readonly string[]): Promise<Map<string, PendingFields>> {
    if (keys && keys.length === 0) return new Map()
    const rows = await this.sql.rows<{pending: string; record_key: string}>(
      `SELECT record_key, pending FROM pending_fields WHERE kind = $1${keys ? ' AND record_key = ANY($2::text[])' : ''}`,
      keys ? [kind, keys] : [kind],
    )
    return new Map(rows.map((r) => [r.record_key, JSON.parse(r.pending) as PendingFields]))
  }

  async savePending(kind: Kind, entries: readonly (readonly [key: string, pending: null | PendingFields])[]): Promise<void> {
    if (entries.length === 0) return
    // The last entry of a key wins, as entries one by one would.
    const last = new Map<string, null | PendingFields>()
    for (const [k, p] of entries) last.set(k, p)
    const drop = [...last].filter(([, p]) => p === null).map(([k]) => k)
    const keep = [...last].filter((e): e is [string, PendingFields] => e[1] !== null)
    const write = async () => {
      if (drop.length > 0) await this.sql.run('DELETE FROM pending_fields WHERE kind = $1 AND record_key = ANY($2::text[])', [kind, drop])
      if (keep.length > 0) {
        await this.sql.run(
          `INSERT INTO pending_fields (kind, record_key, pending) SELECT $1, k, p FROM unnest($2::text[], $3::text[]) AS x(k, p)
           ON CONFLICT (kind, record_key) DO UPDATE SET pending = excluded.pending`,
          [kind, keep.map(([k]) => k), keep.map(([, p]) => writesJson(p))],
        )
      }
    }
    if (drop.length > 0 && keep.length > 0 && !this.sql.inTransaction()) await this.sql.tx(write)
    else await write()
  }

  async remove(table: RevenueTable, keys: readonly RecordKey[]): Promise<void> {
    if (keys.length === 0) return
    await this.sql.run(REMOVE_RECORDS(table), [
      JSON.stringify(keys.map((k) => ({origin: k.origin, origin_id: k.origin_id, user_id: k.user_id}))),
    ])
  }

  async appliedEvents(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set()
    return new Set((await this.sql.rows<{event_id: string}>('SELECT event_id FROM events WHERE event_id = ANY($1::text[])', [ids])).map((r) => r.event_id))
  }

  async logEvents(events: readonly LoggedEvent[], appliedAt: string): Promise<void> {
    if (events.length === 0) return
    await this.sql.run(
      `INSERT INTO events (event_id, kind, action, record_key, "timestamp", applied_at)
       SELECT id, kind, action, key, ts, $6 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS x(id, kind, action, key, ts)`,
      [events.map((e) => e.event.id), events.map((e) => e.kind), events.map((e) => e.action), events.map((e) => e.key), events.map((e) => e.event.timestamp), appliedAt],
    )
  }

  async latestDeletes(kind: Kind, keys?: readonly string[]): Promise<Map<string, EventRef>> {
    return await this.latestDeletesSync(kind, keys)
  }

  async latestDeletesSync(kind: Kind, keys?: readonly string[]): Promise<Map<string, EventRef>> {
    if (keys && keys.length === 0) return new Map()
    const rows = await this.sql.rows<{id: string; record_key: string; timestamp: number}>(
      `SELECT DISTINCT ON (record_key) record_key, event_id AS id, "timestamp" FROM events
       WHERE kind = $1 AND action = 'delete'${keys ? ' AND record_key = ANY($2::text[])' : ''}
       ORDER BY record_key, "timestamp" DESC, event_id ${ID_ORDER} DESC`,
      keys ? [kind, keys] : [kind],
    )
    return new Map(rows.map((r) => [r.record_key, {id: r.id, timestamp: int(r.timestamp)}]))
  }

  async list<T extends RevenueTable>(table: T, f: ListFilters): Promise<{rows: RowOf<T>[]; total: number}> {
    const where: string[] = []
    const params: unknown[] = []
    const p = (v: unknown) => {
      params.push(v)
      return `$${params.length}`
    }
    if (f.user_id !== undefined) where.push(`t.user_id = ${p(f.user_id)}`)
    if (f.status !== undefined) where.push(`t.status = ${p(f.status)}`)
    if (f.origin !== undefined) where.push(`t.origin = ${p(f.origin)}`)
    if (f.origin_id !== undefined) where.push(`t.origin_id = ${p(f.origin_id)}`)
    if (f.product !== undefined) where.push(`t.product_id = (SELECT id FROM products WHERE api_id = ${p(f.product)})`)
    if (f.since !== undefined) where.push(`t.created >= ${p(f.since)}`)
    if (f.until !== undefined) where.push(`t.created < ${p(f.until)}`)
    const w = where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''
    const total = int((await this.sql.rows<{n: number}>(`SELECT count(*)::bigint AS n FROM ${table} t ${w}`, params))[0].n)
    const limit = f.limit && f.limit > 0 ? ` LIMIT ${Math.floor(f.limit)}` : ''
    // SQLite sorts NULL first; DESC here would put it first, so NULLS LAST says what SQLite does.
    const rows = await this.sql.rows<RowOf<T>>(`SELECT ${recordColumns(table)} FROM ${table} t ${w} ORDER BY t.created DESC NULLS LAST, t.id DESC${limit}`, params)
    return {rows, total}
  }

  async netRevenue(by: By, periods: readonly Period[]): Promise<Map<string, number>[]> {
    return (await this.chargeRevenue(by, periods)).map((m) => new Map([...m].map(([k, v]) => [k, v.net])))
  }

  async chargeRevenue(by: By, periods: readonly Period[]): Promise<Map<string, ChargeRevenue>[]> {
    if (periods.length === 0) return []
    // One statement for every period (one snapshot), the periods as arrays; net of tax as on SQLite.
    const rows = await this.sql.rows<{k: string; n: number; net: number | string; tax: number | string}>(
      `WITH pr AS (SELECT s, e, n FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS x(s, e, n))
       SELECT pr.n, q.k, q.net, q.tax FROM pr, LATERAL (
         SELECT ${groupKey(by)} AS k,
           COALESCE(sum(t.amount_usd_minor - t.tax_usd_minor - (t.amount_refunded_usd_minor - t.tax_refunded_usd_minor)), 0)::bigint AS net,
           COALESCE(sum(t.tax_usd_minor - t.tax_refunded_usd_minor), 0)::bigint AS tax
         FROM charges t
         WHERE t.status = 'succeeded' AND t.created >= pr.s AND t.created < pr.e GROUP BY 1) q
       ORDER BY pr.n, q.k COLLATE "C"`,
      [periods.map((p) => p.start), periods.map((p) => p.end)],
    )
    const out = periods.map(() => new Map<string, ChargeRevenue>())
    for (const r of rows) out[int(r.n) - 1].set(r.k, {net: int(r.net), tax: int(r.tax)})
    return out
  }

  async saveSubscriptionEvents(events: readonly SubscriptionEvent[]): Promise<void> {
    if (events.length === 0) return
    const cols = SUBSCRIPTION_EVENT_COLUMNS.join(', ')
    await this.sql.run(
      `INSERT INTO subscription_events (${cols}) SELECT ${cols} FROM jsonb_populate_recordset(NULL::subscription_events, $1::jsonb) ON CONFLICT DO NOTHING`,
      [JSON.stringify(events.map((e) => Object.fromEntries(SUBSCRIPTION_EVENT_COLUMNS.map((c) => [c, e[c]]))))],
    )
  }

  async dropSubscriptionEvents(key: RecordKey, before: EventRef): Promise<void> {
    await this.sql.run(
      `DELETE FROM subscription_events WHERE user_id = $1 AND origin = $2 AND origin_id = $3 AND (event_timestamp, event_id ${ID_ORDER}) < ($4::bigint, $5::text ${ID_ORDER})`,
      [key.user_id, key.origin, key.origin_id, before.timestamp, before.id],
    )
  }

  async history(by: By): Promise<HistoryEvent[]> {
    const cols = SUBSCRIPTION_EVENT_COLUMNS.map((c) => `t.${c}`).join(', ')
    const record = SUBSCRIPTION_EVENT_COLUMNS.map((c) => (c === 'event_id' ? 't.latest_event_id' : c === 'event_timestamp' ? 't.latest_event_timestamp' : `t.${c}`)).join(', ')
    // One statement: one snapshot.
    return (await this.sql
      .rows<HistoryEvent>(
        `SELECT ${groupKey(by)} AS key, false AS record, ${cols} FROM subscription_events t
           WHERE EXISTS (SELECT FROM subscriptions s WHERE s.user_id = t.user_id AND s.origin = t.origin AND s.origin_id = t.origin_id)
         UNION ALL
         SELECT ${groupKey(by)} AS key, true AS record, ${record} FROM subscriptions t
           WHERE NOT EXISTS (SELECT FROM subscription_events e WHERE e.user_id = t.user_id AND e.origin = t.origin AND e.origin_id = t.origin_id AND e.event_id = t.latest_event_id)`,
      ))
      .map((r) => {
        r.event_timestamp = int(r.event_timestamp)
        return r
      })
  }

  async fxHistory(currency: string): Promise<FxHistory> {
    return (await this.sql
      .rows<{date: string; rate: number; snapshot: boolean}>('SELECT date, rate, starts_with(source, $2) AS snapshot FROM fx_rates WHERE currency = $1 ORDER BY date', [currency, SNAPSHOT_PREFIX]))
      .map((r) => ({date: r.date, rate: r.rate, snapshot: r.snapshot}))
  }
}
