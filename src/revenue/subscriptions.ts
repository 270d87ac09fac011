import type {ProductRow} from '../catalog/lookup.js'
import {isoDay, nowIso} from '../clock.js'
import {toMinor} from '../currency.js'
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
  taxAboveAmount,
} from '../schemas/revenue.js'
import {validate} from '../schemas/validate.js'
import type {RevenueTable} from '../store/port/revenue.js'
import type {StorePort} from '../store/port.js'
import {z} from 'zod'
import {type EventRef, type Kind, staleMessage} from './events.js'
import {monthlyMinor, usdMinor} from './money.js'
import {type Applied, applyDelete, applyFull, applyPartial, type Outcome, subscriptionUpdateFields} from './order.js'
import {resolveProduct} from './products.js'
import {checkTax} from './tax.js'
import {
  type ListFilters,
  orgId,
  type RecordKey,
  subscriptionRecord,
  subscriptionReduced,
  type SubscriptionValues,
} from './store.js'

/**
 * Subscriptions: the spec's create / update / get / delete plus list. Every write is an
 * event (see events.ts); input is validated, the product matched and the USD amounts
 * computed before anything is written, and the check-and-write runs in one IMMEDIATE
 * transaction so two writers cannot interleave.
 */

export type {Outcome} from './order.js'
export type WriteResult<R> = {message: string; outcome: Outcome; record: null | R}

export const PathKey = z.object({origin: Origin, origin_id: Id, user_id: Id})

export function validKey(key: RecordKey): RecordKey {
  return validate(PathKey, key, 'path')
}

function describe(key: RecordKey): string {
  return `${key.user_id} ${key.origin} ${key.origin_id}`
}

/** USD cents at the created date's rate, and the monthly figure (both gross: MRR takes the tax's share off, src/revenue/tax.ts). */
export async function usdFigures(store: StorePort, amountMinor: number, currency: string, created: number, interval: null | string, intervalCount: null | number) {
  const rate = (await requireRate(store, currency, isoDay(created))).rate
  const usd = usdMinor(amountMinor, currency, rate)
  return {amount_usd_minor: usd, amount_usd_monthly_minor: monthlyMinor(usd, interval, intervalCount)}
}

/** The stored values of a create: every field replaced, optional ones absent -> null. */
export async function subscriptionValuesFromCreate(store: StorePort, input: SubscriptionCreate, product: ProductRow, event: EventRef): Promise<SubscriptionValues> {
  const amountMinor = toMinor(input.amount, input.currency, 'amount')
  const taxMinor = toMinor(input.tax, input.currency, 'tax')
  const interval = product.interval
  const intervalCount = product.interval_count
  return {
    amount_minor: amountMinor,
    ...await usdFigures(store, amountMinor, input.currency, input.created, interval, intervalCount),
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
    tax_minor: taxMinor,
    trial_end: input.trial_end ?? null,
    trial_start: input.trial_start ?? null,
    user_id: input.user_id,
  }
}

export async function createSubscription(store: StorePort, body: unknown, event: EventRef): Promise<WriteResult<SubscriptionRecord>> {
  const input = validate(SubscriptionCreate, body, 'subscription')
  const product = await resolveProduct(store, input.product)
  const values = await subscriptionValuesFromCreate(store, input, product, event)
  const key: RecordKey = {origin: input.origin, origin_id: input.origin_id, user_id: input.user_id}
  const org = await orgId(store)
  return await store.transaction(async () => writeResult('subscription', 'create', key, event, await applyFull(store, 'subscriptions', values, event, nowIso()), (r: SubscriptionValues) => subscriptionRecord(r, org)), {write: true})
}

/**
 * What a single write answers, for subscriptions and charges alike (docs/revenue.md,
 * "Events in any order"): the record after the event (before it for a delete; null when
 * there is none), and a sentence saying what happened.
 */
export function writeResult<V, R>(
  kind: Kind,
  action: 'create' | 'delete' | 'update',
  key: RecordKey,
  event: EventRef,
  a: Applied<RevenueTable>,
  record: (row: V) => R,
): WriteResult<R> {
  const rec = a.row ? record(a.row as V) : null
  const what = `${kind} ${describe(key)}`
  const list = `pricectl ${kind === 'charge' ? 'charges' : 'subscriptions'} list --user-id ${key.user_id}`
  switch (a.outcome) {
    case 'duplicate':
      return {message: `event ${event.id} was already applied; nothing changed`, outcome: 'duplicate', record: rec}
    case 'stale':
      return {message: staleMessage(kind, event, a.against!.event, a.against!.deleted), outcome: 'stale', record: rec}
    case 'pending':
      return {
        message:
          action === 'delete'
            ? `no ${what} yet: delete ${event.id} is kept, so a create older than it will not make the ${kind} (check the key with "${list}")`
            : `no ${what} yet: update ${event.id} is kept (pending) and applied when the ${kind} is created (check the key with "${list}")`,
        outcome: 'pending',
        record: null,
      }
    default:
      return {message: `${kind} ${a.outcome}: ${describe(key)}`, outcome: a.outcome, record: rec}
  }
}

/** The update's checks on the record it would leave: the status rules and the order of the moments. */
export function checkSubscriptionUpdate(input: SubscriptionUpdate, merged: SubscriptionValues): void {
  // A status in the update is what its cancel and trial fields are checked against: an
  // update is valid on its own whatever newer status the record has by now.
  const problems = statusRuleProblems(input.status ?? merged.status, input)
  if (problems.length > 0) {
    throw new InvalidInputError(`invalid subscription update: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`)
  }
  if (input.amount !== undefined) toMinor(input.amount, input.currency ?? merged.currency!, 'amount')
  if (input.tax !== undefined) toMinor(input.tax, input.currency ?? merged.currency!, 'tax')
  checkTax('subscription', merged.tax_minor, merged.amount_minor, merged.currency!, input.tax === undefined ? 'amount' : 'tax')
  // The order of the moments holds for the record the update leaves (checked when the update names one of them).
  if (DATE_FIELDS.some((f) => input[f] !== undefined)) {
    const order = dateOrderProblems(merged)
    if (order.length > 0) throw new InvalidInputError(`invalid subscription update: ${order.map((p) => `${p.field}: ${p.message}`).join('; ')}`)
  }
}

const DATE_FIELDS = ['created', 'cancel_at', 'canceled_at', 'trial_start', 'trial_end'] as const

export async function updateSubscription(store: StorePort, keyInput: RecordKey, body: unknown, event: EventRef): Promise<WriteResult<SubscriptionRecord>> {
  const key = validKey(keyInput)
  const input = validate(SubscriptionUpdate, body, 'subscription update')
  // Valid on its own (a pending update is checked against the record only when that exists).
  const own = statusRuleProblems(input.status ?? 'canceled', {cancel_at: input.cancel_at, canceled_at: input.canceled_at})
    .concat(statusRuleProblems(input.status ?? 'trialing', {trial_end: input.trial_end, trial_start: input.trial_start}))
  if (own.length > 0) throw new InvalidInputError(`invalid subscription update: ${own.map((p) => `${p.field}: ${p.message}`).join('; ')}`)
  if (input.amount !== undefined && input.currency !== undefined) toMinor(input.amount, input.currency, 'amount')
  if (input.tax !== undefined && input.currency !== undefined) toMinor(input.tax, input.currency, 'tax')
  if (input.tax !== undefined && input.amount !== undefined && input.tax > input.amount) throw new InvalidInputError(`invalid subscription update: tax: ${taxAboveAmount(input.tax, input.amount)}`)
  const org = await orgId(store)
  const fields = subscriptionUpdateFields(input)
  return await store.transaction(
    async () => writeResult('subscription', 'update', key, event, await applyPartial(store, 'subscriptions', key, fields, event, nowIso(), (merged) => checkSubscriptionUpdate(input, merged)), (r: SubscriptionValues) => subscriptionRecord(r, org)),
    {write: true},
  )
}

export async function deleteSubscription(store: StorePort, keyInput: RecordKey, event: EventRef): Promise<WriteResult<SubscriptionRecord>> {
  const key = validKey(keyInput)
  const org = await orgId(store)
  return await store.transaction(async () => writeResult('subscription', 'delete', key, event, await applyDelete(store, 'subscriptions', key, event, nowIso()), (r: SubscriptionValues) => subscriptionRecord(r, org)), {write: true})
}

export async function getSubscription(store: StorePort, keyInput: RecordKey): Promise<SubscriptionReduced> {
  const key = validKey(keyInput)
  const [row] = await store.revenue.rows('subscriptions', [key])
  if (!row) throw new NotFoundError(`no subscription ${describe(key)} (list them with "pricectl subscriptions list --user-id ${key.user_id}")`)
  return subscriptionReduced(row, await orgId(store))
}

export async function listSubscriptions(store: StorePort, filters: ListFilters): Promise<{records: SubscriptionRecord[]; total: number}> {
  const {rows, total} = await store.revenue.list('subscriptions', filters)
  const org = await orgId(store)
  return {records: rows.map((r) => subscriptionRecord(r, org)), total}
}
