import type {DB} from '../store/db.js'

/** The product columns other parts of the engine need (pricing, revenue, experiments). */
export type ProductRow = {
  api_id: string
  base_px_minor: number
  baseline_id: null | number
  id: number
  interval: 'day' | 'month' | 'one_time' | 'week' | 'year'
  interval_count: number
  max_px_minor: null | number
  min_px_minor: null | number
  name: string
}

const COLUMNS = 'id, api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id'

export function productByApiId(db: DB, apiId: string): ProductRow | undefined {
  return db.prepare(`SELECT ${COLUMNS} FROM products WHERE api_id = ?`).get(apiId) as ProductRow | undefined
}

export function productById(db: DB, id: number): ProductRow | undefined {
  return db.prepare(`SELECT ${COLUMNS} FROM products WHERE id = ?`).get(id) as ProductRow | undefined
}

/** An integration object as the spec shapes it (input of subscriptions, charges, products). */
export type IntegrationRef =
  | {gateway_a_product_id: string; interval: string; interval_count: number; type: 'gateway_a_with_interval'}
  | {gateway_a_product_id: string; type: 'gateway_a'}
  | {gateway_c_plan_id: string; type: 'gateway_c'}
  | {currency: string; gateway_d_plan_id: string; type: 'gateway_d'}

export function integrationRef(i: IntegrationRef): string {
  switch (i.type) {
    case 'gateway_a':
    case 'gateway_a_with_interval': {
      return i.gateway_a_product_id
    }

    case 'gateway_c': {
      return i.gateway_c_plan_id
    }

    case 'gateway_d': {
      return i.gateway_d_plan_id
    }
  }
}

/**
 * The product an integration object points at. `gateway_a_with_interval` matches on
 * interval too (one gateway product can cover several products that differ by
 * interval); a plain `gateway_a` id also matches a with-interval entry when only one
 * product carries that id.
 */
export function productByIntegration(db: DB, i: IntegrationRef): ProductRow | undefined {
  const ref = integrationRef(i)
  const cols = COLUMNS.split(', ').map((c) => `p.${c}`).join(', ')
  if (i.type === 'gateway_a_with_interval') {
    return db
      .prepare(`SELECT ${cols} FROM product_integrations pi JOIN products p ON p.id = pi.product_id WHERE pi.type = 'gateway_a_with_interval' AND pi.gateway_ref = ? AND pi.interval = ? AND pi.interval_count = ? LIMIT 1`)
      .get(ref, i.interval, i.interval_count) as ProductRow | undefined
  }
  if (i.type === 'gateway_a') {
    const exact = db.prepare(`SELECT ${cols} FROM product_integrations pi JOIN products p ON p.id = pi.product_id WHERE pi.type = 'gateway_a' AND pi.gateway_ref = ? LIMIT 1`).get(ref) as ProductRow | undefined
    if (exact) return exact
    const loose = db.prepare(`SELECT DISTINCT ${cols} FROM product_integrations pi JOIN products p ON p.id = pi.product_id WHERE pi.type = 'gateway_a_with_interval' AND pi.gateway_ref = ? LIMIT 2`).all(ref) as ProductRow[]
    return loose.length === 1 ? loose[0] : undefined
  }
  return db.prepare(`SELECT ${cols} FROM product_integrations pi JOIN products p ON p.id = pi.product_id WHERE pi.type = ? AND pi.gateway_ref = ? LIMIT 1`).get(i.type, ref) as ProductRow | undefined
}

/**
 * Match a gateway product/plan id from an export row (no interval known) with an
 * interval hint, as bulk imports need.
 */
export function productByGatewayRef(db: DB, types: string[], ref: string, interval?: string, intervalCount?: number): ProductRow | undefined {
  const cols = COLUMNS.split(', ').map((c) => `p.${c}`).join(', ')
  const rows = db
    .prepare(`SELECT ${cols}, pi.interval AS i_interval, pi.interval_count AS i_count FROM product_integrations pi JOIN products p ON p.id = pi.product_id WHERE pi.type IN (${types.map(() => '?').join(',')}) AND pi.gateway_ref = ?`)
    .all(...types, ref) as (ProductRow & {i_count: null | number; i_interval: null | string})[]
  const pick = rows.find((r) => interval && r.i_interval === interval && (intervalCount === undefined || r.i_count === intervalCount)) ?? rows.find((r) => r.i_interval === null) ?? (rows.length === 1 ? rows[0] : undefined)
  if (!pick) return undefined
  const {i_count: _c, i_interval: _i, ...product} = pick
  return product
}
