import {isoDay} from '../clock.js'
import {divHalfUp, fromMinor, minorDigits, toRational} from '../currency.js'
import {requireRate} from '../fx/rates.js'
import type {StorePort} from '../store/port.js'
import {
  compareEvents,
  type EventRef,
  eventOfRecord,
  type FieldEvents,
  type FieldWrites,
  type Kind,
  laterEvent,
  mergeWrites,
  type PendingFields,
  recordKey,
  type RecordKey,
  type Resolve,
  type RevenueTable,
  type RowOf,
  type ValuesOf,
  writesNewerThan,
} from '../store/port/revenue.js'
import type {ChargeValues, SubscriptionValues} from './store.js'
import {monthlyMinor, usdMinor} from './money.js'
import {chargeTaxUsd} from './tax.js'

/**
 * Events in any order (docs/revenue.md, "Events in any order"): a record is the fold of its
 * events sorted by (timestamp, id), last writer wins per field, whatever order they arrive
 * in. The storage port keeps what that needs (FieldEvents: each field's last writer;
 * PendingFields: updates waiting for their create; tombstones of deletes).
 */

export type Outcome = 'created' | 'deleted' | 'duplicate' | 'pending' | 'stale' | 'updated'

const KINDS: Record<RevenueTable, Kind> = {charges: 'charge', subscriptions: 'subscription'}

export function kindOf(table: RevenueTable): Kind {
  return KINDS[table]
}

export function latestOf(row: {latest_event_id: string; latest_event_timestamp: number}): EventRef {
  return {id: row.latest_event_id, timestamp: row.latest_event_timestamp}
}

/** The writes of a partial update: each given field (null clears) stamped with its event. */
export function stamp(fields: Record<string, unknown>, event: EventRef): FieldWrites {
  const out: FieldWrites = {}
  for (const [f, value] of Object.entries(fields)) if (value !== undefined) out[f] = {event, value}
  return out
}

/** The fields each status allows only for itself (the spec's field rules). */
const STATUS_FIELDS = {cancel: ['cancel_at', 'canceled_at'], trial: ['trial_start', 'trial_end']} as const

/**
 * The fields a subscription update writes: the given ones, and with a status the fields that
 * status does not allow, as null (a change to active clears the cancel and trial dates).
 */
export function subscriptionUpdateFields(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(input)) if (v !== undefined) out[k] = v
  const status = input.status
  if (typeof status === 'string') {
    if (status !== 'canceled') for (const f of STATUS_FIELDS.cancel) out[f] ??= null
    if (status !== 'trialing') for (const f of STATUS_FIELDS.trial) out[f] ??= null
  }
  return out
}

/** Minor units of a decimal amount in a currency, half up when it has more decimals than the currency (a merge across events). */
function minorOf(amount: number, currency: string): number {
  const [n, den] = toRational(amount)
  return Number(divHalfUp(n * 10n ** BigInt(minorDigits(currency)), den))
}

const has = (w: FieldWrites, f: string) => Object.hasOwn(w, f)

/**
 * The tax of a record after writes (docs/revenue.md, "Tax"): the written tax (a decimal in the
 * record's currency), else the full event's re-expressed in a written currency. A merge no one
 * checks (a create or an import row meeting newer kept updates) never leaves more tax than
 * the amount it is part of: the tax is then the whole amount. An update is checked instead
 * (`strict`: the caller refuses a tax above the amount).
 */
function resolvedTax(values: {currency: null | string; tax_minor: number}, writes: FieldWrites, currency: null | string, amountMinor: null | number, strict: boolean): number {
  let tax = values.tax_minor
  if (currency !== null) {
    if (has(writes, 'tax')) tax = minorOf(writes.tax!.value as number, currency)
    // A currency is written only onto a record that has one, so values.currency is set here.
    else if (currency !== values.currency) tax = minorOf(fromMinor(tax, values.currency!), currency)
  }
  return !strict && amountMinor !== null && tax > amountMinor ? amountMinor : tax
}

/**
 * A subscription's full values with partial-update writes applied: amount (a decimal in the
 * record's currency), tax, currency, created, status, cancel and trial dates. The USD figures
 * are recomputed when amount, currency or created came from a write (else the full event's are
 * kept: an import may carry the gateway's own); the fields the status does not allow read null.
 */
export async function resolveSubscription(store: StorePort, values: SubscriptionValues, writes: FieldWrites, strict = false): Promise<SubscriptionValues> {
  if (Object.keys(writes).length === 0) return values
  const v = {...values}
  const value = (f: string) => writes[f]!.value
  for (const f of ['created', 'status', 'cancel_at', 'canceled_at', 'trial_start', 'trial_end'] as const) {
    if (has(writes, f)) (v as Record<string, unknown>)[f] = value(f)
  }
  const money = has(writes, 'amount') || has(writes, 'currency')
  if (money && values.currency !== null) {
    const currency = has(writes, 'currency') ? (value('currency') as string) : values.currency
    const amount = has(writes, 'amount') ? (value('amount') as number) : values.amount_minor === null ? null : fromMinor(values.amount_minor, values.currency)
    v.currency = currency
    v.amount_minor = amount === null ? null : minorOf(amount, currency)
  }
  if (money || has(writes, 'tax')) v.tax_minor = resolvedTax(values, writes, v.currency, v.amount_minor, strict)
  if ((money || has(writes, 'created')) && v.amount_minor !== null && v.currency !== null && v.created !== null) {
    const rate = (await requireRate(store, v.currency, isoDay(v.created))).rate
    v.amount_usd_minor = usdMinor(v.amount_minor, v.currency, rate)
    v.amount_usd_monthly_minor = monthlyMinor(v.amount_usd_minor, v.interval, v.interval_count)
  }
  if (v.status !== 'canceled') v.cancel_at = v.canceled_at = null
  if (v.status !== 'trialing') v.trial_start = v.trial_end = null
  return v
}

/**
 * A charge's full values with partial-update writes applied: amount, tax, currency, created,
 * status, metadata_json. The refunded amount comes from the full event (the spec refuses it
 * on update), re-expressed in a written currency; USD recomputed as for subscriptions, the
 * tax's USD shares whenever the amount, the tax or a USD figure moved.
 */
export async function resolveCharge(store: StorePort, values: ChargeValues, writes: FieldWrites, strict = false): Promise<ChargeValues> {
  if (Object.keys(writes).length === 0) return values
  const v = {...values}
  const value = (f: string) => writes[f]!.value
  for (const f of ['created', 'status', 'metadata_json'] as const) if (has(writes, f)) (v as Record<string, unknown>)[f] = value(f)
  const money = has(writes, 'amount') || has(writes, 'currency')
  if (money && values.currency !== null) {
    const currency = has(writes, 'currency') ? (value('currency') as string) : values.currency
    const amount = has(writes, 'amount') ? (value('amount') as number) : values.amount_minor === null ? null : fromMinor(values.amount_minor, values.currency)
    v.currency = currency
    v.amount_minor = amount === null ? null : minorOf(amount, currency)
    v.amount_refunded_minor = minorOf(fromMinor(values.amount_refunded_minor, values.currency), currency)
  }
  if (money || has(writes, 'tax')) v.tax_minor = resolvedTax(values, writes, v.currency, v.amount_minor, strict)
  const usd = (money || has(writes, 'created')) && v.amount_minor !== null && v.currency !== null && v.created !== null
  if (usd) {
    const rate = (await requireRate(store, v.currency!, isoDay(v.created!))).rate
    v.amount_usd_minor = usdMinor(v.amount_minor!, v.currency!, rate)
    v.amount_refunded_usd_minor = usdMinor(v.amount_refunded_minor, v.currency!, rate)
  }
  if (usd || has(writes, 'tax')) Object.assign(v, chargeTaxUsd(v.amount_minor, v.tax_minor, v.amount_usd_minor, v.amount_refunded_usd_minor))
  return v
}

/** The engine's merge for a table (imports hand it to the store's import writer). */
export function resolverOf<T extends RevenueTable>(store: StorePort, table: T): Resolve<T> {
  return (table === 'charges'
    ? (values: ChargeValues, writes: FieldWrites) => resolveCharge(store, values, writes)
    : (values: SubscriptionValues, writes: FieldWrites) => resolveSubscription(store, values, writes)) as unknown as Resolve<T>
}

/** The engine's merge; `strict` for an update, whose check refuses what an unchecked merge would bound (a tax above the amount). */
async function resolve<T extends RevenueTable>(store: StorePort, table: T, values: ValuesOf<T>, writes: FieldWrites, strict = false): Promise<ValuesOf<T>> {
  if (!strict) return resolverOf(store, table)(values, writes)
  return (table === 'charges' ? await resolveCharge(store, values as ChargeValues, writes, true) : await resolveSubscription(store, values as SubscriptionValues, writes, true)) as ValuesOf<T>
}

/**
 * The field order to store: null when the base is the latest event (then no partial write is
 * newer: the latest event is never older than a write it keeps).
 */
function fieldOrder(base: EventRef, latest: EventRef, fields: FieldWrites): FieldEvents | null {
  return compareEvents(base, latest) === 0 ? null : {base, fields}
}

/** What an event did to a record. */
export type Applied<T extends RevenueTable> = {
  /** The event a stale one lost to, and whether that is a delete. */
  against?: {deleted: boolean; event: EventRef}
  /** What the event did. */
  outcome: Outcome
  /** The record after the event (before it, for a delete); undefined when there is none. */
  row?: ValuesOf<T>
}

type Current<T extends RevenueTable> = {fe: FieldEvents | null; key: string; kind: Kind; row: RowOf<T> | undefined; tomb: EventRef | undefined}

async function current<T extends RevenueTable>(store: StorePort, table: T, k: RecordKey): Promise<Current<T>> {
  const kind = kindOf(table)
  const key = recordKey(k.user_id, k.origin, k.origin_id)
  const [row] = await store.revenue.rows(table, [k])
  const fe = row ? (await store.revenue.fieldEvents(table, [k]))[0]! : null
  const tomb = (await store.revenue.latestDeletes(kind, [key])).get(key)
  return {fe, key, kind, row, tomb}
}

/**
 * A subscription's history takes every full-record event (a stale one too: it tells what the
 * subscription was at its moment) and every applied update, as the record stood after it
 * (docs/revenue.md, "Subscription history").
 */
async function remember<T extends RevenueTable>(store: StorePort, table: T, values: ValuesOf<T>, event: EventRef): Promise<void> {
  if (table === 'subscriptions') await store.revenue.saveSubscriptionEvents([eventOfRecord(values as SubscriptionValues, event)])
}

async function log(store: StorePort, kind: Kind, action: 'create' | 'delete' | 'update', key: string, event: EventRef, appliedAt: string): Promise<void> {
  await store.revenue.logEvents([{action, event, key, kind}], appliedAt)
}

/** A full-record event (a create). Call inside a write transaction. */
export async function applyFull<T extends RevenueTable>(store: StorePort, table: T, values: ValuesOf<T>, event: EventRef, appliedAt: string): Promise<Applied<T>> {
  const c = await current(store, table, values)
  if ((await store.revenue.appliedEvents([event.id])).has(event.id)) return {outcome: 'duplicate', row: c.row}
  if (c.row) {
    const base = c.fe?.base ?? latestOf(c.row)
    const order = compareEvents(event, base)
    if (order === 0) return {outcome: 'duplicate', row: c.row}
    if (order < 0) {
      await remember(store, table, values, event)
      return {against: {deleted: false, event: base}, outcome: 'stale', row: c.row}
    }
    const writes = writesNewerThan(c.fe?.fields ?? {}, event)
    const latest = laterEvent(latestOf(c.row), event)
    const row = {...await resolve(store, table, values, writes), latest_event_id: latest.id, latest_event_timestamp: latest.timestamp}
    await store.revenue.save(table, [row], [fieldOrder(event, latest, writes)])
    await remember(store, table, values, event)
    await log(store, c.kind, 'create', c.key, event, appliedAt)
    return {outcome: 'updated', row}
  }
  if (c.tomb && compareEvents(event, c.tomb) < 0) return {against: {deleted: true, event: c.tomb}, outcome: 'stale'}
  const pending = (await store.revenue.pending(c.kind, [c.key])).get(c.key)
  const writes = pending ? writesNewerThan(pending.fields, event) : {}
  const latest = pending ? laterEvent(pending.latest, event) : event
  const row = {...await resolve(store, table, values, writes), latest_event_id: latest.id, latest_event_timestamp: latest.timestamp}
  await store.revenue.save(table, [row], [fieldOrder(event, latest, writes)])
  if (pending) await store.revenue.savePending(c.kind, [[c.key, null]])
  await remember(store, table, values, event)
  await log(store, c.kind, 'create', c.key, event, appliedAt)
  return {outcome: 'created', row}
}

/**
 * A partial update: `fields` by stored name (amount as a decimal number). `check` validates
 * the record it would leave (throws to refuse: nothing is written). Call inside a write transaction.
 */
export async function applyPartial<T extends RevenueTable>(
  store: StorePort,
  table: T,
  k: RecordKey,
  fields: Record<string, unknown>,
  event: EventRef,
  appliedAt: string,
  check: (merged: ValuesOf<T>, current: RowOf<T>) => void,
): Promise<Applied<T>> {
  const c = await current(store, table, k)
  if ((await store.revenue.appliedEvents([event.id])).has(event.id)) return {outcome: 'duplicate', row: c.row}
  const writes = stamp(fields, event)
  if (!c.row) {
    if (c.tomb && compareEvents(event, c.tomb) < 0) return {against: {deleted: true, event: c.tomb}, outcome: 'stale'}
    const before = (await store.revenue.pending(c.kind, [c.key])).get(c.key)
    const pending: PendingFields = before
      ? {fields: mergeWrites(before.fields, writes), latest: laterEvent(before.latest, event)}
      : {fields: writes, latest: event}
    await store.revenue.savePending(c.kind, [[c.key, pending]])
    await log(store, c.kind, 'update', c.key, event, appliedAt)
    return {outcome: 'pending'}
  }
  const base = c.fe?.base ?? latestOf(c.row)
  if (compareEvents(event, base) <= 0) return {against: {deleted: false, event: base}, outcome: 'stale', row: c.row}
  const before = c.fe?.fields ?? {}
  const won: FieldWrites = {}
  for (const [f, w] of Object.entries(writes)) {
    const last = before[f]?.event ?? base
    if (compareEvents(event, last) > 0) won[f] = w
  }
  const latest = laterEvent(latestOf(c.row), event)
  if (Object.keys(won).length === 0 && latest !== event) return {against: {deleted: false, event: latestOf(c.row)}, outcome: 'stale', row: c.row}
  const all = {...before, ...won}
  // The stored values with every partial write re-applied (a write hidden by its status
  // shows again when a later status allows it).
  const merged = {...await resolve(store, table, c.row as ValuesOf<T>, all, true), latest_event_id: latest.id, latest_event_timestamp: latest.timestamp}
  check(merged, c.row)
  await store.revenue.save(table, [merged], [fieldOrder(base, latest, all)])
  await remember(store, table, merged, event)
  await log(store, c.kind, 'update', c.key, event, appliedAt)
  return {outcome: 'updated', row: merged}
}

/** A delete. Call inside a write transaction. */
export async function applyDelete<T extends RevenueTable>(store: StorePort, table: T, k: RecordKey, event: EventRef, appliedAt: string): Promise<Applied<T>> {
  const c = await current(store, table, k)
  if ((await store.revenue.appliedEvents([event.id])).has(event.id)) return {outcome: 'duplicate', row: c.row}
  if (c.row) {
    const base = c.fe?.base ?? latestOf(c.row)
    if (compareEvents(event, base) < 0) return {against: {deleted: false, event: base}, outcome: 'stale', row: c.row}
    await store.revenue.remove(table, [k])
    if (table === 'subscriptions') await store.revenue.dropSubscriptionEvents(k, event)
    // Fields written after the delete wait for a create newer than it.
    const latest = latestOf(c.row)
    // A latest event newer than the delete (which is not older than the base) is a partial write's, so c.fe is set.
    if (compareEvents(latest, event) > 0) await store.revenue.savePending(c.kind, [[c.key, {fields: writesNewerThan(c.fe!.fields, event), latest}]])
    await log(store, c.kind, 'delete', c.key, event, appliedAt)
    return {outcome: 'deleted', row: c.row}
  }
  if (c.tomb && compareEvents(event, c.tomb) < 0) return {against: {deleted: true, event: c.tomb}, outcome: 'stale'}
  // A delete before its create: a tombstone (older creates stay out); pending writes older than it can never apply.
  const pending = (await store.revenue.pending(c.kind, [c.key])).get(c.key)
  if (pending) {
    const kept = compareEvents(pending.latest, event) > 0 ? {fields: writesNewerThan(pending.fields, event), latest: pending.latest} : null
    await store.revenue.savePending(c.kind, [[c.key, kept]])
  }
  await log(store, c.kind, 'delete', c.key, event, appliedAt)
  return {outcome: 'pending'}
}
