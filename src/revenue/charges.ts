import type {ProductRow} from '../catalog/lookup.js'
import {isoDay, nowIso} from '../clock.js'
import {fromMinor, toMinor} from '../currency.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import {requireRate} from '../fx/rates.js'
import {ChargeCreate, type ChargeRecord, ChargeUpdate, taxAboveAmount} from '../schemas/revenue.js'
import {validate} from '../schemas/validate.js'
import type {StorePort} from '../store/port.js'
import {type EventRef} from './events.js'
import {applyDelete, applyFull, applyPartial} from './order.js'
import {usdMinor} from './money.js'
import {chargeTaxUsd, checkTax} from './tax.js'
import {resolveProduct} from './products.js'
import {chargeRecord, type ChargeValues, type ListFilters, orgId, type RecordKey} from './store.js'
import {validKey, type WriteResult, writeResult} from './subscriptions.js'

/**
 * Charges: create / update / get / list / delete, with the same event rules as
 * subscriptions. A refund is amount_refunded on the charge; the spec refuses it on
 * update, so a refund arrives as the charge sent again (create) with a newer event.
 */

function describe(key: RecordKey): string {
  return `${key.user_id} ${key.origin} ${key.origin_id}`
}

/** USD cents of the amount and of the refunded part, at the created date's rate, and the tax's share of each. */
export async function chargeUsd(store: StorePort, amountMinor: number, refundedMinor: number, taxMinor: number, currency: string, created: number) {
  const rate = (await requireRate(store, currency, isoDay(created))).rate
  const amountUsd = usdMinor(amountMinor, currency, rate)
  const refundedUsd = usdMinor(refundedMinor, currency, rate)
  return {amount_refunded_usd_minor: refundedUsd, amount_usd_minor: amountUsd, ...chargeTaxUsd(amountMinor, taxMinor, amountUsd, refundedUsd)}
}

export async function chargeValuesFromCreate(store: StorePort, input: ChargeCreate, product: ProductRow, event: EventRef): Promise<ChargeValues> {
  const amountMinor = toMinor(input.amount, input.currency, 'amount')
  const refundedMinor = toMinor(input.amount_refunded, input.currency, 'amount_refunded')
  const taxMinor = toMinor(input.tax, input.currency, 'tax')
  return {
    amount_minor: amountMinor,
    amount_refunded_minor: refundedMinor,
    ...await chargeUsd(store, amountMinor, refundedMinor, taxMinor, input.currency, input.created),
    tax_minor: taxMinor,
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

export async function createCharge(store: StorePort, body: unknown, event: EventRef): Promise<WriteResult<ChargeRecord>> {
  const input = validate(ChargeCreate, body, 'charge')
  const product = await resolveProduct(store, input.product)
  const values = await chargeValuesFromCreate(store, input, product, event)
  const key: RecordKey = {origin: input.origin, origin_id: input.origin_id, user_id: input.user_id}
  const org = await orgId(store)
  return await store.transaction(async () => writeResult('charge', 'create', key, event, await applyFull(store, 'charges', values, event, nowIso()), (r: ChargeValues) => chargeRecord(r, org)), {write: true})
}

/** The fields a charge update writes (metadata replaces the stored object whole). */
export function chargeUpdateFields(input: ChargeUpdate): Record<string, unknown> {
  return {
    amount: input.amount,
    created: input.created,
    currency: input.currency,
    metadata_json: input.metadata === undefined ? undefined : JSON.stringify(input.metadata),
    status: input.status,
    tax: input.tax,
  }
}

/** The update's check on the charge it would leave: no more refunded than charged, no more tax than the amount. */
export function checkChargeUpdate(input: ChargeUpdate, merged: ChargeValues): void {
  const currency = merged.currency!
  if (input.amount !== undefined) toMinor(input.amount, input.currency ?? currency, 'amount')
  if (input.tax !== undefined) toMinor(input.tax, input.currency ?? currency, 'tax')
  checkTax('charge', merged.tax_minor, merged.amount_minor, currency, input.tax === undefined ? 'amount' : 'tax')
  if (merged.amount_refunded_minor > (merged.amount_minor ?? 0)) {
    throw new InvalidInputError(
      `invalid charge update: amount: ${input.amount ?? fromMinor(merged.amount_minor ?? 0, currency)} is less than the amount already refunded (${fromMinor(merged.amount_refunded_minor, currency)})`,
    )
  }
}

export async function updateCharge(store: StorePort, keyInput: RecordKey, body: unknown, event: EventRef): Promise<WriteResult<ChargeRecord>> {
  const key = validKey(keyInput)
  const input = validate(ChargeUpdate, body, 'charge update')
  if (input.amount !== undefined && input.currency !== undefined) toMinor(input.amount, input.currency, 'amount')
  if (input.tax !== undefined && input.currency !== undefined) toMinor(input.tax, input.currency, 'tax')
  if (input.tax !== undefined && input.amount !== undefined && input.tax > input.amount) throw new InvalidInputError(`invalid charge update: tax: ${taxAboveAmount(input.tax, input.amount)}`)
  const org = await orgId(store)
  const fields = chargeUpdateFields(input)
  return await store.transaction(
    async () => writeResult('charge', 'update', key, event, await applyPartial(store, 'charges', key, fields, event, nowIso(), (merged) => checkChargeUpdate(input, merged)), (r: ChargeValues) => chargeRecord(r, org)),
    {write: true},
  )
}

export async function deleteCharge(store: StorePort, keyInput: RecordKey, event: EventRef): Promise<WriteResult<ChargeRecord>> {
  const key = validKey(keyInput)
  const org = await orgId(store)
  return await store.transaction(async () => writeResult('charge', 'delete', key, event, await applyDelete(store, 'charges', key, event, nowIso()), (r: ChargeValues) => chargeRecord(r, org)), {write: true})
}

export async function getCharge(store: StorePort, keyInput: RecordKey): Promise<ChargeRecord> {
  const key = validKey(keyInput)
  const [row] = await store.revenue.rows('charges', [key])
  if (!row) throw new NotFoundError(`no charge ${describe(key)} (list them with "pricectl charges list --user-id ${key.user_id}")`)
  return chargeRecord(row, await orgId(store))
}

export async function listCharges(store: StorePort, filters: ListFilters): Promise<{records: ChargeRecord[]; total: number}> {
  const {rows, total} = await store.revenue.list('charges', filters)
  const org = await orgId(store)
  return {records: rows.map((r) => chargeRecord(r, org)), total}
}
