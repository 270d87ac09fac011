import {InvalidInputError, NotFoundError} from '../errors.js'
import {Id} from '../schemas/common.js'
import {validate} from '../schemas/validate.js'
import type {StorePort} from '../store/port.js'
import type {RecordKey, RevenueTable} from '../store/port/revenue.js'

/**
 * `subscriptions get` and `charges get` take a record's full key (USER_ID ORIGIN ORIGIN_ID)
 * or the gateway's id alone: the id a person has at hand (from a gateway's dashboard or an
 * email). Alone, it must name one record across users and gateways; when several records
 * carry it, the command exits 2 listing them with the full form to use.
 */

const SHOWN = 10

export type KeyArgs = {origin?: string; origin_id?: string; user_id: string}

export async function resolveKey(store: StorePort, table: RevenueTable, args: KeyArgs): Promise<RecordKey> {
  const noun = table === 'charges' ? 'charge' : 'subscription'
  if (args.origin !== undefined && args.origin_id !== undefined) return {origin: args.origin, origin_id: args.origin_id, user_id: args.user_id}
  if (args.origin !== undefined) {
    throw new InvalidInputError(
      `got 2 arguments (${args.user_id} ${args.origin}): give USER_ID ORIGIN ORIGIN_ID (pricectl ${table} get ${args.user_id} ${args.origin} ORIGIN_ID), or the gateway's id alone (pricectl ${table} get ORIGIN_ID)`,
    )
  }
  const originId = validate(Id, args.user_id, 'origin_id')
  const {rows, total} = await store.revenue.list(table, {limit: SHOWN, origin_id: originId})
  if (total === 0) throw new NotFoundError(`no ${noun} has the gateway id ${originId} (list them with "pricectl ${table} list")`)
  if (total > 1) {
    const keys = rows.map((r) => `${r.user_id} ${r.origin} ${r.origin_id}`)
    const more = total > rows.length ? ` and ${total - rows.length} more` : ''
    throw new InvalidInputError(
      `gateway id ${originId} is not unique: ${total} ${noun}s carry it (${keys.join('; ')}${more}); name one in full: pricectl ${table} get ${keys[0]}`,
      {matches: rows.map((r) => ({origin: r.origin, origin_id: r.origin_id, user_id: r.user_id}))},
    )
  }
  return {origin: rows[0].origin, origin_id: rows[0].origin_id, user_id: rows[0].user_id}
}
