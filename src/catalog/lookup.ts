import type {IntegrationMatch} from '../store/port/pricing.js'
import type {StorePort} from '../store/port.js'
import type {ProductRow} from '../domain.js'

/** The product columns other parts of the engine need (pricing, revenue, experiments). */
export type {ProductRow}

export async function productByApiId(store: StorePort, apiId: string): Promise<ProductRow | undefined> {
  return await store.pricing.productRow(apiId)
}

export async function productById(store: StorePort, id: number): Promise<ProductRow | undefined> {
  return await store.pricing.productRowById(id)
}

/** The product row of a match, without the integration's columns. */
function rowOf(m: IntegrationMatch | undefined): ProductRow | undefined {
  if (!m) return undefined
  const {i_count: _c, i_interval: _i, i_type: _t, ...product} = m
  return product
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
export async function productByIntegration(store: StorePort, i: IntegrationRef): Promise<ProductRow | undefined> {
  const ref = integrationRef(i)
  if (i.type === 'gateway_a_with_interval') {
    return rowOf((await store.pricing.integrationMatches(['gateway_a_with_interval'], ref)).find((m) => m.i_interval === i.interval && m.i_count === i.interval_count))
  }
  if (i.type === 'gateway_a') {
    const exact = (await store.pricing.integrationMatches(['gateway_a'], ref))[0]
    if (exact) return rowOf(exact)
    const loose = await store.pricing.integrationMatches(['gateway_a_with_interval'], ref)
    return loose.length > 0 && loose.every((m) => m.id === loose[0].id) ? rowOf(loose[0]) : undefined
  }
  return rowOf((await store.pricing.integrationMatches([i.type], ref))[0])
}
