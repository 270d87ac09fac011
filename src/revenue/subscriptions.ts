import type {ProductRow} from '../catalog/lookup.js'
import {isoDay} from '../clock.js'
import {fromMinor, toMinor} from '../currency.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import {requireRate} from '../fx/rates.js'
import {Id, Origin} from '../schemas/common.js'
import {
  dateOrderProblems,
  statusRuleProblems,
  SubscriptionCreate,
  type SubscriptionRecord,
  type SubscriptionReduced,
  SubscriptionUpdate,
} from '../schemas/revenue.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'
import {storeOfHandle} from '../store/sqlite/store.js'
import {z} from 'zod'
import {
  compareEvents,
  eventApplied,
  type EventRef,
  judge,
  latestDelete,
  logEvent,
  recordKey,
  staleMessage,
} from './events.js'
import {monthlyMinor, usdMinor} from './money.js'
import {resolveProduct} from './products.js'
import {
  type ListFilters,
  listRows,
  orgId,
  type RecordKey,
  statements,
  subscriptionRecord,
  subscriptionReduced,
  type SubscriptionRow,
  subscriptionRow,
  type SubscriptionValues,
} from './store.js'

/**
 * Subscriptions: the spec's create / update / get / delete plus list. Every write is an
 * event (see events.ts); input is validated, the product matched and the USD amounts
 * computed before anything is written, and the check-and-write runs in one IMMEDIATE
 * transaction so two writers cannot interleave.
 */

export type Outcome = 'created' | 'deleted' | 'duplicate' | 'stale' | 'updated'
export type WriteResult<R> = {message: string; outcome: Outcome; record: null | R}

export const PathKey = z.object({origin: Origin, origin_id: Id, user_id: Id})

export function validKey(key: RecordKey): RecordKey {
  return validate(PathKey, key, 'path')
}

function describe(key: RecordKey): string {
  return `${key.user_id} ${key.origin} ${key.origin_id}`
}

/** USD cents at the created date's rate, and the monthly figure. */
export function usdFigures(db: DB, amountMinor: number, currency: string, created: number, interval: null | string, intervalCount: null | number) {
  const rate = requireRate(storeOfHandle(db), currency, isoDay(created)).rate
  const usd = usdMinor(amountMinor, currency, rate)
  return {amount_usd_minor: usd, amount_usd_monthly_minor: monthlyMinor(usd, interval, intervalCount)}
}

/** The stored values of a create: every field replaced, optional ones absent -> null. */
export function subscriptionValuesFromCreate(db: DB, input: SubscriptionCreate, product: ProductRow, event: EventRef): SubscriptionValues {
  const amountMinor = toMinor(input.amount, input.currency, 'amount')
  const interval = product.interval
  const intervalCount = product.interval_count
  return {
    amount_minor: amountMinor,
    ...usdFigures(db, amountMinor, input.currency, input.created, interval, intervalCount),
    cancel_at: input.cancel_at ?? null,
    canceled_at: input.canceled_at ?? null,
    country: input.country ?? null,
    created: input.created,
    currency: input.currency,
    interval,
    interval_count: intervalCount,
    latest_event_id: event.id,
    latest_event_timestamp: event.timestamp,
    origin: input.origin,
    origin_id: input.origin_id,
    product_id: product.id,
    status: input.status,
    trial_end: input.trial_end ?? null,
    trial_start: input.trial_start ?? null,
    user_id: input.user_id,
  }
}

export function createSubscription(db: DB, body: unknown, event: EventRef): WriteResult<SubscriptionRecord> {
  const input = validate(SubscriptionCreate, body, 'subscription')
  const product = resolveProduct(db, input.product)
  const values = subscriptionValuesFromCreate(db, input, product, event)
  const key: RecordKey = {origin: input.origin, origin_id: input.origin_id, user_id: input.user_id}
  const st = statements(db, 'subscriptions')
  const org = orgId(db)
  return db
    .transaction((): WriteResult<SubscriptionRecord> => {
      const existing = subscriptionRow(db, key)
      if (eventApplied(db, event.id)) return duplicate(event, existing, org)
      const latest = existing && {id: existing.latest_event_id, timestamp: existing.latest_event_timestamp}
      const verdict = judge(event, latest)
      if (verdict === 'duplicate') return duplicate(event, existing, org)
      if (verdict === 'stale') return {message: staleMessage('subscription', event, latest!), outcome: 'stale', record: subscriptionRecord(existing!, org)}
      if (!existing) {
        const tomb = latestDelete(db, 'subscription', recordKey(key.user_id, key.origin, key.origin_id))
        if (tomb && compareEvents(event, tomb) < 0) return {message: staleMessage('subscription', event, tomb, true), outcome: 'stale', record: null}
        st.insertNew.run(values)
      } else {
        st.replace.run(values)
      }
      logEvent(db, 'subscription', 'create', recordKey(key.user_id, key.origin, key.origin_id), event)
      return {
        message: `subscription ${existing ? 'updated' : 'created'}: ${describe(key)}`,
        outcome: existing ? 'updated' : 'created',
        record: subscriptionRecord(values, org),
      }
    })
    .immediate()
}

function duplicate(event: EventRef, existing: SubscriptionValues | undefined, org: number): WriteResult<SubscriptionRecord> {
  return {message: `event ${event.id} was already applied; nothing changed`, outcome: 'duplicate', record: existing ? subscriptionRecord(existing, org) : null}
}

/** A missing record: stale when a newer delete removed it, else not found. */
function missing(db: DB, key: RecordKey, event: EventRef): WriteResult<SubscriptionRecord> {
  const tomb = latestDelete(db, 'subscription', recordKey(key.user_id, key.origin, key.origin_id))
  if (tomb && compareEvents(event, tomb) < 0) return {message: staleMessage('subscription', event, tomb, true), outcome: 'stale', record: null}
  throw new NotFoundError(`no subscription ${describe(key)} (create it with "pricectl subscriptions create", or list them with "pricectl subscriptions list --user-id ${key.user_id}")`)
}

/** Merge an update into the stored values; the status rules apply to the resulting status. */
export function mergeSubscriptionUpdate(db: DB, current: SubscriptionValues, input: SubscriptionUpdate, event: EventRef): SubscriptionValues {
  const status = input.status ?? current.status
  const problems = statusRuleProblems(status, input)
  if (problems.length > 0) {
    throw new InvalidInputError(`invalid subscription update: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`)
  }
  const currency = input.currency ?? current.currency!
  let amountMinor = current.amount_minor
  if (input.amount !== undefined) amountMinor = toMinor(input.amount, currency, 'amount')
  else if (input.currency !== undefined && current.amount_minor !== null && current.currency !== null) {
    amountMinor = toMinor(fromMinor(current.amount_minor, current.currency), currency, 'amount')
  }
  const created = input.created ?? current.created!
  const usd = amountMinor === null ? {amount_usd_minor: null, amount_usd_monthly_minor: null} : usdFigures(db, amountMinor, currency, created, current.interval, current.interval_count)
  // Cancel and trial fields only exist with their status: a status change clears them.
  const canceled = status === 'canceled'
  const trialing = status === 'trialing'
  const merged = {
    ...current,
    amount_minor: amountMinor,
    ...usd,
    cancel_at: canceled ? (input.cancel_at ?? current.cancel_at) : null,
    canceled_at: canceled ? (input.canceled_at ?? current.canceled_at) : null,
    created,
    currency,
    latest_event_id: event.id,
    latest_event_timestamp: event.timestamp,
    status,
    trial_end: trialing ? (input.trial_end ?? current.trial_end) : null,
    trial_start: trialing ? (input.trial_start ?? current.trial_start) : null,
  }
  // The order of the moments holds for the record the update leaves (checked when the update names one of them).
  if (DATE_FIELDS.some((f) => input[f] !== undefined)) {
    const order = dateOrderProblems(merged)
    if (order.length > 0) throw new InvalidInputError(`invalid subscription update: ${order.map((p) => `${p.field}: ${p.message}`).join('; ')}`)
  }
  return merged
}

const DATE_FIELDS = ['created', 'cancel_at', 'canceled_at', 'trial_start', 'trial_end'] as const

/**
 * An update or delete that need not run: the event was applied already, the record is
 * missing, or the event is older than the record's latest one.
 */
function settledBefore(db: DB, key: RecordKey, existing: SubscriptionRow | undefined, event: EventRef, org: number): undefined | WriteResult<SubscriptionRecord> {
  if (eventApplied(db, event.id)) return duplicate(event, existing, org)
  if (!existing) return missing(db, key, event)
  const latest = {id: existing.latest_event_id, timestamp: existing.latest_event_timestamp}
  const verdict = judge(event, latest)
  if (verdict === 'duplicate') return duplicate(event, existing, org)
  if (verdict === 'stale') return {message: staleMessage('subscription', event, latest), outcome: 'stale', record: subscriptionRecord(existing, org)}
  return undefined
}

export function updateSubscription(db: DB, keyInput: RecordKey, body: unknown, event: EventRef): WriteResult<SubscriptionRecord> {
  const key = validKey(keyInput)
  const input = validate(SubscriptionUpdate, body, 'subscription update')
  const st = statements(db, 'subscriptions')
  const org = orgId(db)
  return db
    .transaction((): WriteResult<SubscriptionRecord> => {
      const existing = subscriptionRow(db, key)
      const settled = settledBefore(db, key, existing, event, org)
      // settled is set whenever the record is missing.
      if (settled || !existing) return settled!
      const values = mergeSubscriptionUpdate(db, existing, input, event)
      st.replace.run(values)
      logEvent(db, 'subscription', 'update', recordKey(key.user_id, key.origin, key.origin_id), event)
      return {message: `subscription updated: ${describe(key)}`, outcome: 'updated', record: subscriptionRecord(values, org)}
    })
    .immediate()
}

export function deleteSubscription(db: DB, keyInput: RecordKey, event: EventRef): WriteResult<SubscriptionRecord> {
  const key = validKey(keyInput)
  const st = statements(db, 'subscriptions')
  const org = orgId(db)
  return db
    .transaction((): WriteResult<SubscriptionRecord> => {
      const existing = subscriptionRow(db, key)
      const settled = settledBefore(db, key, existing, event, org)
      // settled is set whenever the record is missing.
      if (settled || !existing) return settled!
      st.del.run(key.user_id, key.origin, key.origin_id)
      logEvent(db, 'subscription', 'delete', recordKey(key.user_id, key.origin, key.origin_id), event)
      return {message: `subscription deleted: ${describe(key)}`, outcome: 'deleted', record: subscriptionRecord(existing, org)}
    })
    .immediate()
}

export function getSubscription(db: DB, keyInput: RecordKey): SubscriptionReduced {
  const key = validKey(keyInput)
  const row = subscriptionRow(db, key)
  if (!row) throw new NotFoundError(`no subscription ${describe(key)} (list them with "pricectl subscriptions list --user-id ${key.user_id}")`)
  return subscriptionReduced(row, orgId(db))
}

export function listSubscriptions(db: DB, filters: ListFilters): {records: SubscriptionRecord[]; total: number} {
  const {rows, total} = listRows<SubscriptionRow>(db, 'subscriptions', filters)
  const org = orgId(db)
  return {records: rows.map((r) => subscriptionRecord(r, org)), total}
}
