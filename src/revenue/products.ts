import {type IntegrationRef, productByApiId, productByGatewayRef, productByIntegration, type ProductRow} from '../catalog/lookup.js'
import {InvalidInputError} from '../errors.js'
import type {IntegrationObject} from '../schemas/revenue.js'
import type {DB} from '../store/db.js'
import {storeOfHandle} from '../store/sqlite/store.js'

/** The product a subscription or charge names: an api_id, or an integration object. */
export function resolveProduct(db: DB, ref: IntegrationObject | string): ProductRow {
  if (typeof ref === 'string') {
    const p = productByApiId(storeOfHandle(db), ref)
    if (!p) throw new InvalidInputError(`product: unknown product ${JSON.stringify(ref)} (list them with "pricectl products list", or pass an integration object)`)
    return p
  }
  const p = productByIntegration(storeOfHandle(db), ref as IntegrationRef)
  if (!p) {
    throw new InvalidInputError(
      `product: no product has the integration ${JSON.stringify(ref)} (add it with "pricectl products update API_ID" and its integrations, or pass the product's api_id)`,
    )
  }
  return p
}

/**
 * Products for import rows, cached per cell value: the value is matched against the
 * layout's integration types first, then as an api_id.
 */
export class ProductMatcher {
  private readonly cache = new Map<string, ProductRow | undefined>()

  constructor(
    private readonly db: DB,
    private readonly types: string[],
  ) {}

  match(ref: string, interval?: string, intervalCount?: number): ProductRow | undefined {
    const key = `${ref}\u0000${interval ?? ''}\u0000${intervalCount ?? ''}`
    if (this.cache.has(key)) return this.cache.get(key)
    const p = (this.types.length > 0 ? productByGatewayRef(storeOfHandle(this.db), this.types, ref, interval, intervalCount) : undefined) ?? productByApiId(storeOfHandle(this.db), ref)
    this.cache.set(key, p)
    return p
  }
}
