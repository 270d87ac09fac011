import type {ProductRow} from '../catalog/lookup.js'
import {isoDay} from '../clock.js'
import {fromMinor, toMinor} from '../currency.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import {requireRate} from '../fx/rates.js'
import {ChargeCreate, type ChargeRecord, ChargeUpdate} from '../schemas/revenue.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'
import {compareEvents, eventApplied, type EventRef, judge, latestDelete, logEvent, recordKey, staleMessage} from './events.js'
import {usdMinor} from './money.js'
import {resolveProduct} from './products.js'
import {chargeRecord, type ChargeRow, chargeRow, type ChargeValues, type ListFilters, listRows, orgId, type RecordKey, statements} from './store.js'
import {validKey, type WriteResult} from './subscriptions.js'
import {storeOfHandle} from '../store/sqlite/store.js'

/**
 * Charges: create / update / get / list / delete, with the same event rules as
 * subscriptions. A refund is amount_refunded on the charge; the spec refuses it on
 * update, so a refund arrives as the charge sent again (create) with a newer event.
 */

function describe(key: RecordKey): string {
  return `${key.user_id} ${key.origin} ${key.origin_id}`
}

/** USD cents of the amount and of the refunded part, at the created date's rate. */
export function chargeUsd(db: DB, amountMinor: number, refundedMinor: number, currency: string, created: number) {
  const rate = requireRate(storeOfHandle(db), currency, isoDay(created)).rate
  return {amount_refunded_usd_minor: usdMinor(refundedMinor, currency, rate), amount_usd_minor: usdMinor(amountMinor, currency, rate)}
}

export function chargeValuesFromCreate(db: DB, input: ChargeCreate, product: ProductRow, event: EventRef): ChargeValues {
  const amountMinor = toMinor(input.amount, input.currency, 'amount')
  const refundedMinor = toMinor(input.amount_refunded, input.currency, 'amount_refunded')
  return {
    amount_minor: amountMinor,
    amount_refunded_minor: refundedMinor,
    ...chargeUsd(db, amountMinor, refundedMinor, input.currency, input.created),
    country: input.country ?? null,
    created: input.created,
    currency: input.currency,
    latest_event_id: event.id,
    latest_event_timestamp: event.timestamp,
    metadata_json: input.metadata === undefined ? null : JSON.stringify(input.metadata),
    origin: input.origin,
    origin_id: input.origin_id,
    product_id: product.id,
    status: input.status,
    user_id: input.user_id,
  }
}

function duplicate(event: EventRef, existing: ChargeValues | undefined, org: number): WriteResult<ChargeRecord> {
  return {message: `event ${event.id} was already applied; nothing changed`, outcome: 'duplicate', record: existing ? chargeRecord(existing, org) : null}
}

function missing(db: DB, key: RecordKey, event: EventRef): WriteResult<ChargeRecord> {
  const tomb = latestDelete(db, 'charge', recordKey(key.user_id, key.origin, key.origin_id))
  if (tomb && compareEvents(event, tomb) < 0) return {message: staleMessage('charge', event, tomb, true), outcome: 'stale', record: null}
  throw new NotFoundError(`no charge ${describe(key)} (create it with "pricectl charges create", or list them with "pricectl charges list --user-id ${key.user_id}")`)
}

export function createCharge(db: DB, body: unknown, event: EventRef): WriteResult<ChargeRecord> {
  const input = validate(ChargeCreate, body, 'charge')
  const product = resolveProduct(db, input.product)
  const values = chargeValuesFromCreate(db, input, product, event)
  const key: RecordKey = {origin: input.origin, origin_id: input.origin_id, user_id: input.user_id}
  const st = statements(db, 'charges')
  const org = orgId(db)
  return db
    .transaction((): WriteResult<ChargeRecord> => {
      const existing = chargeRow(db, key)
      if (eventApplied(db, event.id)) return duplicate(event, existing, org)
      const latest = existing && {id: existing.latest_event_id, timestamp: existing.latest_event_timestamp}
      const verdict = judge(event, latest)
      if (verdict === 'duplicate') return duplicate(event, existing, org)
      if (verdict === 'stale') return {message: staleMessage('charge', event, latest!), outcome: 'stale', record: chargeRecord(existing!, org)}
      if (!existing) {
        const tomb = latestDelete(db, 'charge', recordKey(key.user_id, key.origin, key.origin_id))
        if (tomb && compareEvents(event, tomb) < 0) return {message: staleMessage('charge', event, tomb, true), outcome: 'stale', record: null}
        st.insertNew.run(values)
      } else {
        st.replace.run(values)
      }
      logEvent(db, 'charge', 'create', recordKey(key.user_id, key.origin, key.origin_id), event)
      return {message: `charge ${existing ? 'updated' : 'created'}: ${describe(key)}`, outcome: existing ? 'updated' : 'created', record: chargeRecord(values, org)}
    })
    .immediate()
}

export function mergeChargeUpdate(db: DB, current: ChargeValues, input: ChargeUpdate, event: EventRef): ChargeValues {
  const currency = input.currency ?? current.currency!
  const reprice = (minor: number) => (input.currency !== undefined && current.currency !== null ? toMinor(fromMinor(minor, current.currency), currency, 'amount') : minor)
  const amountMinor = input.amount === undefined ? reprice(current.amount_minor ?? 0) : toMinor(input.amount, currency, 'amount')
  const refundedMinor = reprice(current.amount_refunded_minor)
  if (refundedMinor > amountMinor) {
    throw new InvalidInputError(`invalid charge update: amount: ${input.amount ?? fromMinor(amountMinor, currency)} is less than the amount already refunded (${fromMinor(refundedMinor, currency)})`)
  }
  const created = input.created ?? current.created!
  return {
    ...current,
    amount_minor: amountMinor,
    amount_refunded_minor: refundedMinor,
    ...chargeUsd(db, amountMinor, refundedMinor, currency, created),
    created,
    currency,
    latest_event_id: event.id,
    latest_event_timestamp: event.timestamp,
    // The spec's metadata is free-form: an update replaces it whole.
    metadata_json: input.metadata === undefined ? current.metadata_json : JSON.stringify(input.metadata),
    status: input.status ?? current.status,
  }
}

/**
 * An update or delete that need not run: the event was applied already, the record is
 * missing, or the event is older than the record's latest one.
 */
function settledBefore(db: DB, key: RecordKey, existing: ChargeRow | undefined, event: EventRef, org: number): undefined | WriteResult<ChargeRecord> {
  if (eventApplied(db, event.id)) return duplicate(event, existing, org)
  if (!existing) return missing(db, key, event)
  const latest = {id: existing.latest_event_id, timestamp: existing.latest_event_timestamp}
  const verdict = judge(event, latest)
  if (verdict === 'duplicate') return duplicate(event, existing, org)
  if (verdict === 'stale') return {message: staleMessage('charge', event, latest), outcome: 'stale', record: chargeRecord(existing, org)}
  return undefined
}

export function updateCharge(db: DB, keyInput: RecordKey, body: unknown, event: EventRef): WriteResult<ChargeRecord> {
  const key = validKey(keyInput)
  const input = validate(ChargeUpdate, body, 'charge update')
  const st = statements(db, 'charges')
  const org = orgId(db)
  return db
    .transaction((): WriteResult<ChargeRecord> => {
      const existing = chargeRow(db, key)
      const settled = settledBefore(db, key, existing, event, org)
      // settled is set whenever the record is missing.
      if (settled || !existing) return settled!
      const values = mergeChargeUpdate(db, existing, input, event)
      st.replace.run(values)
      logEvent(db, 'charge', 'update', recordKey(key.user_id, key.origin, key.origin_id), event)
      return {message: `charge updated: ${describe(key)}`, outcome: 'updated', record: chargeRecord(values, org)}
    })
    .immediate()
}

export function deleteCharge(db: DB, keyInput: RecordKey, event: EventRef): WriteResult<ChargeRecord> {
  const key = validKey(keyInput)
  const st = statements(db, 'charges')
  const org = orgId(db)
  return db
    .transaction((): WriteResult<ChargeRecord> => {
      const existing = chargeRow(db, key)
      const settled = settledBefore(db, key, existing, event, org)
      // settled is set whenever the record is missing.
      if (settled || !existing) return settled!
      st.del.run(key.user_id, key.origin, key.origin_id)
      logEvent(db, 'charge', 'delete', recordKey(key.user_id, key.origin, key.origin_id), event)
      return {message: `charge deleted: ${describe(key)}`, outcome: 'deleted', record: chargeRecord(existing, org)}
    })
    .immediate()
}

export function getCharge(db: DB, keyInput: RecordKey): ChargeRecord {
  const key = validKey(keyInput)
  const row = chargeRow(db, key)
  if (!row) throw new NotFoundError(`no charge ${describe(key)} (list them with "pricectl charges list --user-id ${key.user_id}")`)
  return chargeRecord(row, orgId(db))
}

export function listCharges(db: DB, filters: ListFilters): {records: ChargeRecord[]; total: number} {
  const {rows, total} = listRows<ChargeRow>(db, 'charges', filters)
  const org = orgId(db)
  return {records: rows.map((r) => chargeRecord(r, org)), total}
}
