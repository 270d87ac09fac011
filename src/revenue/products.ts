import {type IntegrationRef, productByApiId, productByIntegration, type ProductRow} from '../catalog/lookup.js'
import {NotFoundError} from '../errors.js'
import type {IntegrationObject} from '../schemas/revenue.js'
import type {StorePort} from '../store/port.js'

/** The product a subscription or charge names: an api_id, or an integration object. */
export async function resolveProduct(store: StorePort, ref: IntegrationObject | string): Promise<ProductRow> {
  if (typeof ref === 'string') {
    const p = await productByApiId(store, ref)
    if (!p) throw new NotFoundError(`product: unknown product ${JSON.stringify(ref)} (list them with "pricectl products list", or pass an integration object)`)
    return p
  }
  const p = await productByIntegration(store, ref as IntegrationRef)
  if (!p) {
    throw new NotFoundError(
      `product: no product has the integration ${JSON.stringify(ref)} (add it with "pricectl products update API_ID" and its integrations, or pass the product's api_id)`,
    )
  }
  return p
}
