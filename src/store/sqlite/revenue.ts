import type {DB} from '../db.js'
import {
  type By,
  CHARGE_COLUMNS,
  type ChargeRevenue,
  compareEvents,
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
import {SNAPSHOT} from './fx.js'

function columnsOf(table: RevenueTable): readonly string[] {
  return table === 'charges' ? CHARGE_COLUMNS : SUBSCRIPTION_COLUMNS
}

/**
 * Prepared statements of one revenue table, bound by name from a values object (extra keys
 * are ignored), or positionally from an import row in *_COLUMNS order.
 */
export function tableStatements(db: DB, table: RevenueTable) {
  const cols = columnsOf(table)
  const set = cols.filter((c) => !['origin', 'origin_id', 'user_id'].includes(c))
  return {
    del: db.prepare(`DELETE FROM ${table} WHERE user_id = ? AND origin = ? AND origin_id = ?`),
    fieldEvents: db.prepare(`SELECT field_events FROM ${table} WHERE user_id = ? AND origin = ? AND origin_id = ?`).pluck(),
    get: db.prepare(`SELECT id, ${cols.join(', ')} FROM ${table} WHERE user_id = ? AND origin = ? AND origin_id = ?`),
    /** Inserts (with its field order, @field_events as JSON or null), or reports 0 changes when the key exists. */
    insertNew: insertNamed(db, table, [...cols, 'field_events']),
    /** The latest event and the field order (null: written whole by the latest event). */
    latest: db.prepare(`SELECT latest_event_timestamp AS timestamp, latest_event_id AS id, field_events FROM ${table} WHERE user_id = ? AND origin = ? AND origin_id = ?`),
    /** Replace every column of an existing record, its field order too. */
    replace: replaceNamed(db, table, [...set, 'field_events']),
    /**
     * replace with positional values: the row without its key (user_id, origin, origin_id come
     * first), then the key. Only for records written whole by their latest event (field_events
     * NULL, left so): the import's hot path.
     */
    replaceRow: db.prepare(`UPDATE ${table} SET ${set.map((c) => `${c} = ?`).join(', ')} WHERE user_id = ? AND origin = ? AND origin_id = ?`),
  }
}

/** INSERT of the columns `cols` bound by name, or 0 changes when the key exists. */
function insertNamed(db: DB, table: RevenueTable, cols: readonly string[]) {
  return db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')}) ON CONFLICT (user_id, origin, origin_id) DO NOTHING`)
}

/** UPDATE of the columns `set` of the record of a key, bound by name. */
function replaceNamed(db: DB, table: RevenueTable, set: readonly string[]) {
  return db.prepare(`UPDATE ${table} SET ${set.map((c) => `${c} = @${c}`).join(', ')} WHERE user_id = @user_id AND origin = @origin AND origin_id = @origin_id`)
}

export type TableStatements = ReturnType<typeof tableStatements>

/** Writes as stored: JSON with the fields in name order, so equal states store equal text. */
export function writesJson<T extends {fields: FieldWrites}>(v: T): string {
  const fields: FieldWrites = {}
  for (const f of Object.keys(v.fields).sort()) fields[f] = v.fields[f]!
  return JSON.stringify({...v, fields})
}

/** A stored field order (JSON or NULL). */
export function parseFieldEvents(json: null | string | undefined): FieldEvents | null {
  return json ? (JSON.parse(json) as FieldEvents) : null
}

function groupKey(by: By): string {
  if (by === 'country') return "COALESCE(t.country, (SELECT u.country FROM users u WHERE u.user_id = t.user_id), 'unknown')"
  if (by === 'product') return "COALESCE((SELECT p.api_id FROM products p WHERE p.id = t.product_id), '(no product)')"
  return "'all'"
}

/** The INSERT of a subscription event bound by name; an id the subscription has already is left as it is. */
function insertEvent(db: DB) {
  const cols = SUBSCRIPTION_EVENT_COLUMNS
  return db.prepare(`INSERT INTO subscription_events (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')}) ON CONFLICT DO NOTHING`)
}

/** SQLite adapter of the revenue repository: every statement prepared once per store. */
export class SqliteRevenue implements RevenueRepository {
  private readonly tables = new Map<RevenueTable, TableStatements>()
  private readonly nets = new Map<By, ReturnType<DB['prepare']>>()
  private readonly histories = new Map<By, ReturnType<DB['prepare']>>()
  private readonly s

  constructor(private readonly db: DB) {
    this.s = {
      applied: db.prepare('SELECT 1 FROM events WHERE event_id = ?').pluck(),
      dropEvents: db.prepare(
        'DELETE FROM subscription_events WHERE user_id = ? AND origin = ? AND origin_id = ? AND (event_timestamp < ? OR (event_timestamp = ? AND event_id < ?))',
      ),
      saveEvent: insertEvent(db),
      deletesOf: db.prepare("SELECT record_key, event_id AS id, timestamp FROM events WHERE kind = ? AND action = 'delete'"),
      fx: db.prepare(`SELECT date, rate, ${SNAPSHOT} AS snapshot FROM fx_rates WHERE currency = ? ORDER BY date`).raw(true),
      latestDelete: db.prepare("SELECT event_id AS id, timestamp FROM events WHERE kind = ? AND record_key = ? AND action = 'delete' ORDER BY timestamp DESC, event_id DESC LIMIT 1"),
      log: db.prepare('INSERT INTO events (event_id, kind, action, record_key, timestamp, applied_at) VALUES (?, ?, ?, ?, ?, ?)'),
      pending: db.prepare('SELECT pending FROM pending_fields WHERE kind = ? AND record_key = ?').pluck(),
      pendingAll: db.prepare('SELECT record_key, pending FROM pending_fields WHERE kind = ?').raw(true),
      pendingDrop: db.prepare('DELETE FROM pending_fields WHERE kind = ? AND record_key = ?'),
      pendingSave: db.prepare('INSERT INTO pending_fields (kind, record_key, pending) VALUES (?, ?, ?) ON CONFLICT (kind, record_key) DO UPDATE SET pending = excluded.pending'),
    }
  }

  /** Several writes land together; one write (or one inside a caller's transaction) needs no transaction of its own. */
  private chunk(fn: () => void, n: number): void {
    if (n <= 1 || this.db.inTransaction) fn()
    else this.db.transaction(fn)()
  }

  /** The statements of a table (the import writer shares them). */
  statements(table: RevenueTable): TableStatements {
    let st = this.tables.get(table)
    if (!st) this.tables.set(table, (st = tableStatements(this.db, table)))
    return st
  }

  async rows<T extends RevenueTable>(table: T, keys: readonly RecordKey[]): Promise<(RowOf<T> | undefined)[]> {
    const {get} = this.statements(table)
    return keys.map((k) => get.get(k.user_id, k.origin, k.origin_id) as RowOf<T> | undefined)
  }

  async fieldEvents(table: RevenueTable, keys: readonly RecordKey[]): Promise<(FieldEvents | null)[]> {
    const {fieldEvents} = this.statements(table)
    return keys.map((k) => parseFieldEvents(fieldEvents.get(k.user_id, k.origin, k.origin_id) as null | string | undefined))
  }

  async save<T extends RevenueTable>(table: T, values: readonly ValuesOf<T>[], fieldEvents?: readonly (FieldEvents | null)[]): Promise<void> {
    const st = this.statements(table)
    this.chunk(() => {
      values.forEach((v, i) => {
        const fe = fieldEvents?.[i]
        const row = {...v, field_events: fe ? writesJson(fe) : null}
        if (st.insertNew.run(row).changes === 0) st.replace.run(row)
      })
    }, values.length)
  }

  async pending(kind: Kind, keys?: readonly string[]): Promise<Map<string, PendingFields>> {
    return this.pendingSync(kind, keys)
  }

  pendingSync(kind: Kind, keys?: readonly string[]): Map<string, PendingFields> {
    const out = new Map<string, PendingFields>()
    if (keys) {
      for (const k of keys) {
        const p = this.s.pending.get(kind, k) as string | undefined
        if (p !== undefined) out.set(k, JSON.parse(p) as PendingFields)
      }
      return out
    }
    for (const [k, p] of this.s.pendingAll.all(kind) as [string, string][]) out.set(k, JSON.parse(p) as PendingFields)
    return out
  }

  async savePending(kind: Kind, entries: readonly (readonly [key: string, pending: null | PendingFields])[]): Promise<void> {
    this.chunk(() => {
      for (const [k, p] of entries) {
        if (p === null) this.s.pendingDrop.run(kind, k)
        else this.s.pendingSave.run(kind, k, writesJson(p))
      }
    }, entries.length)
  }

  async remove(table: RevenueTable, keys: readonly RecordKey[]): Promise<void> {
    const {del} = this.statements(table)
    this.chunk(() => {
      for (const k of keys) del.run(k.user_id, k.origin, k.origin_id)
    }, keys.length)
  }

  async appliedEvents(ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>()
    for (const id of ids) if (this.s.applied.get(id) !== undefined) out.add(id)
    return out
  }

  async logEvents(events: readonly LoggedEvent[], appliedAt: string): Promise<void> {
    this.chunk(() => {
      for (const e of events) this.s.log.run(e.event.id, e.kind, e.action, e.key, e.event.timestamp, appliedAt)
    }, events.length)
  }

  async latestDeletes(kind: Kind, keys?: readonly string[]): Promise<Map<string, EventRef>> {
    return this.latestDeletesSync(kind, keys)
  }

  latestDeletesSync(kind: Kind, keys?: readonly string[]): Map<string, EventRef> {
    const out = new Map<string, EventRef>()
    if (keys) {
      for (const k of keys) {
        const r = this.s.latestDelete.get(kind, k) as EventRef | undefined
        if (r) out.set(k, r)
      }
      return out
    }
    for (const r of this.s.deletesOf.all(kind) as (EventRef & {record_key: string})[]) {
      const prev = out.get(r.record_key)
      if (!prev || compareEvents(r, prev) > 0) out.set(r.record_key, {id: r.id, timestamp: r.timestamp})
    }
    return out
  }

  async list<T extends RevenueTable>(table: T, f: ListFilters): Promise<{rows: RowOf<T>[]; total: number}> {
    const where: string[] = []
    const params: unknown[] = []
    if (f.user_id !== undefined) where.push('t.user_id = ?'), params.push(f.user_id)
    if (f.status !== undefined) where.push('t.status = ?'), params.push(f.status)
    if (f.origin !== undefined) where.push('t.origin = ?'), params.push(f.origin)
    if (f.origin_id !== undefined) where.push('t.origin_id = ?'), params.push(f.origin_id)
    if (f.product !== undefined) where.push('t.product_id = (SELECT id FROM products WHERE api_id = ?)'), params.push(f.product)
    if (f.since !== undefined) where.push('t.created >= ?'), params.push(f.since)
    if (f.until !== undefined) where.push('t.created < ?'), params.push(f.until)
    const w = where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''
    const total = (this.db.prepare(`SELECT count(*) AS n FROM ${table} t ${w}`).get(...params) as {n: number}).n
    const limit = f.limit && f.limit > 0 ? ` LIMIT ${Math.floor(f.limit)}` : ''
    const cols = ['id', ...columnsOf(table)].map((c) => `t.${c}`).join(', ')
    const rows = this.db.prepare(`SELECT ${cols} FROM ${table} t ${w} ORDER BY t.created DESC, t.id DESC${limit}`).all(...params) as RowOf<T>[]
    return {rows, total}
  }

  async netRevenue(by: By, periods: readonly Period[]): Promise<Map<string, number>[]> {
    return (await this.chargeRevenue(by, periods)).map((m) => new Map([...m].map(([k, v]) => [k, v.net])))
  }

  async chargeRevenue(by: By, periods: readonly Period[]): Promise<Map<string, ChargeRevenue>[]> {
    let st = this.nets.get(by)
    if (!st) {
      const key = groupKey(by)
      // Net of tax: the gross USD amount and refund minus the tax's share of each (docs/revenue.md, "Tax").
      st = this.db.prepare(
        `SELECT ${key} AS k, COALESCE(sum(t.amount_usd_minor - t.tax_usd_minor - (t.amount_refunded_usd_minor - t.tax_refunded_usd_minor)), 0) AS net,
           COALESCE(sum(t.tax_usd_minor - t.tax_refunded_usd_minor), 0) AS tax
         FROM charges t WHERE t.status = 'succeeded' AND t.created >= @start AND t.created < @end GROUP BY k`,
      )
      this.nets.set(by, st)
    }
    const q = st
    // One read transaction: every period sees the same store.
    return this.db.transaction(() => periods.map(({end, start}) => new Map((q.all({end, start}) as {k: string; net: number; tax: number}[]).map((r) => [r.k, {net: r.net, tax: r.tax}]))))()
  }

  async saveSubscriptionEvents(events: readonly SubscriptionEvent[]): Promise<void> {
    this.chunk(() => {
      for (const e of events) this.s.saveEvent.run(e)
    }, events.length)
  }

  async dropSubscriptionEvents(key: RecordKey, before: EventRef): Promise<void> {
    this.s.dropEvents.run(key.user_id, key.origin, key.origin_id, before.timestamp, before.timestamp, before.id)
  }

  async history(by: By): Promise<HistoryEvent[]> {
    let st = this.histories.get(by)
    if (!st) {
      const key = groupKey(by)
      // The columns both tables share (the record's latest event is its event).
      const cols = SUBSCRIPTION_EVENT_COLUMNS.filter((c) => c !== 'event_id' && c !== 'event_timestamp')
        .map((c) => `t.${c}`)
        .join(', ')
      st = this.db.prepare(
        `SELECT ${key} AS key, 0 AS record, t.event_id, t.event_timestamp, ${cols} FROM subscription_events t
           WHERE EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = t.user_id AND s.origin = t.origin AND s.origin_id = t.origin_id)
         UNION ALL
         SELECT ${key} AS key, 1 AS record, t.latest_event_id, t.latest_event_timestamp, ${cols} FROM subscriptions t
           WHERE NOT EXISTS (SELECT 1 FROM subscription_events e WHERE e.user_id = t.user_id AND e.origin = t.origin AND e.origin_id = t.origin_id AND e.event_id = t.latest_event_id)`,
      )
      this.histories.set(by, st)
    }
    const q = st
    const rows = this.db.transaction(() => (q as unknown as {all: () => unknown[]}).all())() as (Omit<HistoryEvent, 'record'> & {record: boolean | number})[]
    for (const r of rows) r.record = r.record === 1
    return rows as HistoryEvent[]
  }

  async fxHistory(currency: string): Promise<FxHistory> {
    return (this.s.fx.all(currency) as [string, number, number][]).map(([date, rate, snapshot]) => ({date, rate, snapshot: Boolean(snapshot)}))
  }
}
