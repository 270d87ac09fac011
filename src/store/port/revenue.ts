/**
 * The revenue part of the storage port (see ../port.ts): subscriptions and charges keyed by
 * (user_id, origin, origin_id), the event log that orders writes to them, the figures of
 * `revenue report` and the FX history records are converted at. Methods are synchronous and
 * shaped for bulk work: a single call is a chunk of one.
 */

export type RecordKey = {origin: string; origin_id: string; user_id: string}

export type SubscriptionValues = {
  amount_minor: null | number
  amount_usd_minor: null | number
  amount_usd_monthly_minor: null | number
  cancel_at: null | number
  canceled_at: null | number
  country: null | string
  created: null | number
  currency: null | string
  interval: null | string
  interval_count: null | number
  latest_event_id: string
  latest_event_timestamp: number
  origin: string
  origin_id: string
  product_id: null | number
  status: string
  /** The tax part of amount_minor (per billing interval); 0 when none (docs/revenue.md, "Tax"). */
  tax_minor: number
  trial_end: null | number
  trial_start: null | number
  user_id: string
}
export type SubscriptionRow = SubscriptionValues & {id: number}

export type ChargeValues = {
  amount_minor: null | number
  amount_refunded_minor: number
  amount_refunded_usd_minor: number
  amount_usd_minor: null | number
  country: null | string
  created: null | number
  currency: null | string
  latest_event_id: string
  latest_event_timestamp: number
  metadata_json: null | string
  origin: string
  origin_id: string
  product_id: null | number
  status: string
  /** The tax part of amount_minor (gross), so the net is amount_minor - tax_minor (docs/revenue.md, "Tax"). */
  tax_minor: number
  /** The tax's share of amount_refunded_usd_minor (a refund returns tax in proportion). */
  tax_refunded_usd_minor: number
  /** The tax's share of amount_usd_minor. */
  tax_usd_minor: number
  user_id: string
}
export type ChargeRow = ChargeValues & {id: number}

/**
 * Column order of a record as an array (import rows travel as arrays in this order):
 * the key (user_id, origin, origin_id) first, the latest event last.
 */
export const SUBSCRIPTION_COLUMNS = [
  'user_id',
  'origin',
  'origin_id',
  'product_id',
  'country',
  'created',
  'interval',
  'interval_count',
  'status',
  'cancel_at',
  'canceled_at',
  'trial_start',
  'trial_end',
  'currency',
  'amount_minor',
  'amount_usd_minor',
  'amount_usd_monthly_minor',
  'tax_minor',
  'latest_event_timestamp',
  'latest_event_id',
] as const satisfies readonly (keyof SubscriptionValues)[]

export const CHARGE_COLUMNS = [
  'user_id',
  'origin',
  'origin_id',
  'product_id',
  'country',
  'created',
  'status',
  'currency',
  'amount_minor',
  'amount_refunded_minor',
  'amount_usd_minor',
  'amount_refunded_usd_minor',
  'tax_minor',
  'tax_usd_minor',
  'tax_refunded_usd_minor',
  'metadata_json',
  'latest_event_timestamp',
  'latest_event_id',
] as const satisfies readonly (keyof ChargeValues)[]

/**
 * Columns of a subscription import row: the record's (SUBSCRIPTION_COLUMNS), then the trial
 * dates the export row showed whatever its status. The record keeps trial dates only while
 * trialing (the spec's rule); the subscription's history (SubscriptionEvent) keeps them, so
 * a trial that ended without payment stays a trial there. A row of SUBSCRIPTION_COLUMNS
 * alone is taken too (no trial dates seen beyond the record's).
 */
export const SUBSCRIPTION_IMPORT_COLUMNS = [...SUBSCRIPTION_COLUMNS, 'seen_trial_start', 'seen_trial_end'] as const

/**
 * One event of a subscription's history (docs/revenue.md, "Subscription history"): the
 * subscription as an event showed it at the event's moment. Every import row and every
 * applied single write is one; the report derives the subscription's state over time from
 * them, so the order they were delivered in does not matter. Trial dates are the ones the
 * event showed, kept whatever the status.
 */
export type SubscriptionEvent = {
  amount_minor: null | number
  amount_usd_monthly_minor: null | number
  cancel_at: null | number
  canceled_at: null | number
  country: null | string
  created: null | number
  currency: null | string
  event_id: string
  event_timestamp: number
  interval: null | string
  interval_count: null | number
  origin: string
  origin_id: string
  product_id: null | number
  status: string
  /** The tax part of amount_minor as the event showed it (MRR is net of it). */
  tax_minor: number
  trial_end: null | number
  trial_start: null | number
  user_id: string
}

/** Column order of the subscription_events table. */
export const SUBSCRIPTION_EVENT_COLUMNS = [
  'user_id',
  'origin',
  'origin_id',
  'event_id',
  'event_timestamp',
  'product_id',
  'country',
  'created',
  'interval',
  'interval_count',
  'status',
  'cancel_at',
  'canceled_at',
  'trial_start',
  'trial_end',
  'currency',
  'amount_minor',
  'amount_usd_monthly_minor',
  'tax_minor',
] as const satisfies readonly (keyof SubscriptionEvent)[]

/** A subscription's record as the event that wrote it (trial dates as the record has them). */
export function eventOfRecord(v: SubscriptionValues, event: EventRef = {id: v.latest_event_id, timestamp: v.latest_event_timestamp}): SubscriptionEvent {
  return {
    amount_minor: v.amount_minor,
    amount_usd_monthly_minor: v.amount_usd_monthly_minor,
    cancel_at: v.cancel_at,
    canceled_at: v.canceled_at,
    country: v.country,
    created: v.created,
    currency: v.currency,
    event_id: event.id,
    event_timestamp: event.timestamp,
    interval: v.interval,
    interval_count: v.interval_count,
    origin: v.origin,
    origin_id: v.origin_id,
    product_id: v.product_id,
    status: v.status,
    tax_minor: v.tax_minor,
    trial_end: v.trial_end,
    trial_start: v.trial_start,
    user_id: v.user_id,
  }
}

/**
 * One event of a subscription's history as the report reads it (RevenueRepository.history):
 * the event, with the report's group of the event (country, product api_id or "all").
 * `record` marks the record itself read as an event (its latest), for records whose latest
 * event has no stored event (one merged from partial updates kept for it).
 */
export type HistoryEvent = SubscriptionEvent & {key: string; record: boolean}

export type RevenueTable = 'charges' | 'subscriptions'
export type ValuesOf<T extends RevenueTable> = T extends 'charges' ? ChargeValues : SubscriptionValues
export type RowOf<T extends RevenueTable> = T extends 'charges' ? ChargeRow : SubscriptionRow

// ---- events

/** An event: every write to a subscription or charge is one (docs/revenue.md). */
export type EventRef = {id: string; timestamp: number}
export type Kind = 'charge' | 'subscription'
export type Action = 'create' | 'delete' | 'update'
export type Verdict = 'apply' | 'duplicate' | 'stale'
/** One applied event, as logged. `key` is recordKey(user_id, origin, origin_id). */
export type LoggedEvent = {action: Action; event: EventRef; key: string; kind: Kind}

/**
 * The order every adapter keeps: events are totally ordered by (timestamp, id), ids
 * compared as plain strings, so the state after any delivery order equals the state
 * after the sorted replay.
 */
export function compareEvents(a: EventRef, b: EventRef): number {
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1
}

/** What an event does to a record whose latest event is `latest` (undefined: no record). */
export function judge(event: EventRef, latest: EventRef | undefined): Verdict {
  if (!latest) return 'apply'
  const c = compareEvents(event, latest)
  return c > 0 ? 'apply' : c === 0 ? 'duplicate' : 'stale'
}

/** The key of a record in the event log. */
export function recordKey(userId: string, origin: string, originId: string): string {
  return JSON.stringify([userId, origin, originId])
}

// ---- per-field order (docs/revenue.md, "Events in any order")

/**
 * One field as a partial update wrote it: the value the update carried (the spec's update
 * field, e.g. `amount` as a decimal number, `metadata_json` as text; null clears) and the
 * event that wrote it. Stored as JSON: values must be JSON values.
 */
export type FieldWrite = {event: EventRef; value: unknown}
export type FieldWrites = Record<string, FieldWrite>

/**
 * The event order of a record's fields: `base` is the full-record event every field was last
 * written by, `fields` what newer partial updates wrote since (null: written whole by its
 * latest event). Last writer wins per field; the rules every adapter keeps are in
 * docs/architecture.md, "The storage port's contracts".
 */
export type FieldEvents = {base: EventRef; fields: FieldWrites}

/**
 * Partial updates kept for a record that does not exist (yet): their fields merged last
 * writer wins per field, and the latest of their events. They are applied when a full-record
 * event (a create, an import row) makes the record, each field only if newer than that event.
 */
export type PendingFields = {latest: EventRef; fields: FieldWrites}

/** The later of two events. */
export function laterEvent(a: EventRef, b: EventRef): EventRef {
  return compareEvents(a, b) >= 0 ? a : b
}

/** The writes newer than `than` (a full-record event or a delete: the older ones it overrides). */
export function writesNewerThan(writes: FieldWrites, than: EventRef): FieldWrites {
  const out: FieldWrites = {}
  for (const [f, w] of Object.entries(writes)) if (compareEvents(w.event, than) > 0) out[f] = w
  return out
}

/** Both sets of writes, the later write of each field kept. */
export function mergeWrites(a: FieldWrites, b: FieldWrites): FieldWrites {
  const out: FieldWrites = {...a}
  for (const [f, w] of Object.entries(b)) {
    const prev = out[f]
    if (!prev || compareEvents(w.event, prev.event) > 0) out[f] = w
  }
  return out
}

/**
 * Merges the fields partial updates wrote onto a full record: the engine's rule (it knows
 * the fields and recomputes what derives from them, such as the USD amounts). Adapters call
 * it where a full-record event meets newer partial writes (import rows, see ./imports.ts).
 */
export type Resolve<T extends RevenueTable> = (values: ValuesOf<T>, writes: FieldWrites) => Promise<ValuesOf<T>>

// ---- lists and the report

export type ListFilters = {
  limit?: number
  origin?: string
  /** The gateway's id of the record (`subscriptions get ORIGIN_ID` finds a record by it alone). */
  origin_id?: string
  /** A product's api_id. */
  product?: string
  since?: number
  status?: string
  until?: number
  user_id?: string
}

/** How `revenue report` groups: by month (one group "all" per period), country or product api_id. */
export type By = 'country' | 'month' | 'product'


/** A period [start, end) in UNIX seconds. */
export type Period = {end: number; start: number}

/**
 * One stretch of a subscription's life, derived from its history (src/revenue/timeline.ts):
 * the subscription adds `mrr` USD cents a month to its user's MRR at every moment t with
 * start < t <= end; `end` is null while it runs. `key` is the report's group (country,
 * product api_id, or "all").
 */
export type Span = {end: null | number; key: string; mrr: number; start: number; user_id: string}

/** A group's charge revenue in USD cents: net of tax and refunds, and the tax collected (net of the tax refunds returned). */
export type ChargeRevenue = {net: number; tax: number}

/** One currency's FX history, ascending by date, each rate tagged operator-set or bundled snapshot. */
export type FxHistory = {date: string; rate: number; snapshot: boolean}[]

export interface RevenueRepository {
  /** The stored records of the keys, in order (undefined where none). */
  rows<T extends RevenueTable>(table: T, keys: readonly RecordKey[]): Promise<(RowOf<T> | undefined)[]>
  /**
   * The field order of the keys' records, in order: null where the record was written whole
   * by its latest event, or where there is no record.
   */
  fieldEvents(table: RevenueTable, keys: readonly RecordKey[]): Promise<(FieldEvents | null)[]>
  /**
   * Write whole records: inserted when the key is new, every column replaced otherwise.
   * `fieldEvents[i]` is the field order of `values[i]` (absent or null: written whole by
   * its latest event).
   */
  save<T extends RevenueTable>(table: T, values: readonly ValuesOf<T>[], fieldEvents?: readonly (FieldEvents | null)[]): Promise<void>
  /** Delete the records of the keys (absent ones are skipped), their field order with them. */
  remove(table: RevenueTable, keys: readonly RecordKey[]): Promise<void>
  /**
   * Pending partial updates of records that do not exist, by record key (recordKey()): of
   * the given keys only, or every one of the kind (imports: pending updates are rare).
   */
  pending(kind: Kind, keys?: readonly string[]): Promise<Map<string, PendingFields>>
  /** Keep (or, with null, drop) the pending partial updates of record keys. */
  savePending(kind: Kind, entries: readonly (readonly [key: string, pending: null | PendingFields])[]): Promise<void>
  /** Which of the event ids were applied before (by any write of this store). */
  appliedEvents(ids: readonly string[]): Promise<Set<string>>
  /** Log applied events, applied at `appliedAt` (ISO 8601); each id once: logging an id again is an error. */
  logEvents(events: readonly LoggedEvent[], appliedAt: string): Promise<void>
  /**
   * The latest delete (tombstone) per record key of a kind, so an older create cannot
   * resurrect a deleted record; of the given keys only, or every one (imports: deletes are rare).
   */
  latestDeletes(kind: Kind, keys?: readonly string[]): Promise<Map<string, EventRef>>
  /** Records matching the filters, newest first (created, then id), and the total before the limit. */
  list<T extends RevenueTable>(table: T, filters: ListFilters): Promise<{rows: RowOf<T>[]; total: number}>
  /**
   * Net charge revenue per group (USD cents: `succeeded` charges created in the period, their
   * USD amount minus the USD value refunded, both net of tax), one map per period, in order.
   */
  netRevenue(by: By, periods: readonly Period[]): Promise<Map<string, number>[]>
  /**
   * Charge revenue per group (USD cents of `succeeded` charges created in the period): `net`
   * as netRevenue, and `tax`, the tax of their USD amounts minus the tax their refunds
   * returned (tax collected), one map per period, in order.
   */
  chargeRevenue(by: By, periods: readonly Period[]): Promise<Map<string, ChargeRevenue>[]>
  /**
   * Record subscription events (an import row, an applied single write). An event id a
   * subscription has already is left as it is (the same row imported again).
   */
  saveSubscriptionEvents(events: readonly SubscriptionEvent[]): Promise<void>
  /** Forget the events of a subscription older than `before` (a delete: a newer create starts afresh). */
  dropSubscriptionEvents(key: RecordKey, before: EventRef): Promise<void>
  /**
   * The history of every subscription that exists, grouped as `by` says (the group of each
   * event: its country, else the user's stored country, else "unknown"; its product's api_id):
   * every stored event of the subscription, and the record itself as an event (`record`
   * true; its latest event, trial dates as the record has them) when its latest event is not
   * stored (partial updates that waited for their create). In any order (the engine sorts);
   * the whole history is read, so it is bulk by nature.
   */
  history(by: By): Promise<HistoryEvent[]>
  /** One currency's FX history (units per USD), read once per currency by imports. */
  fxHistory(currency: string): Promise<FxHistory>
}
