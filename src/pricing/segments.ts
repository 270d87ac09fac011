import {InvalidInputError} from '../errors.js'
import type {DB} from '../store/db.js'
import type {PricedProduct} from './context.js'
import type {Trace} from './price.js'

export type AudienceRef = {api_id: string; name: string}

export const DEFAULT_AUDIENCE: AudienceRef = {api_id: 'default', name: 'default'}

/**
 * Audience and package layers (DESIGN steps 4 and 5). Audiences and audience prices
 * come with the segmentation issue; until then every user is in the default audience.
 */
export class Segments {
  private readonly db: DB

  constructor(db: DB) {
    this.db = db
  }

  audiences(_country: string, _features: Record<string, boolean | number | string>, trace: Trace): {audience: AudienceRef; matching: AudienceRef[]} {
    trace?.push({detail: 'no audience matched: default audience', outcome: 'chose', step: 'audience'})
    return {audience: DEFAULT_AUDIENCE, matching: []}
  }

  audiencePrice(_audienceId: string, _product: PricedProduct, _priceMinor: number, _currency: string, _trace: Trace): number | undefined {
    return undefined
  }

  /** The package to price when no products are given; the spec's error when there is none. */
  package(packageId: string | undefined, country: string, audience: AudienceRef, trace: Trace): {api_id: string; products: string[]} {
    if (packageId) {
      const pkg = this.db.prepare('SELECT id, api_id FROM packages WHERE api_id = ?').get(packageId) as {api_id: string; id: number} | undefined
      if (!pkg) throw new InvalidInputError(`unknown package "${packageId}" (see "pricectl packages list")`)
      const products = (this.db.prepare('SELECT p.api_id FROM package_products pp JOIN products p ON p.id = pp.product_id WHERE pp.package_id = ? ORDER BY pp.position').all(pkg.id) as {api_id: string}[]).map((r) => r.api_id)
      trace?.push({detail: `package ${pkg.api_id} from the request: ${products.join(', ')}`, outcome: 'chose', step: 'package'})
      return {api_id: pkg.api_id, products}
    }
    throw new InvalidInputError(`no package for country ${country} and audience ${audience.api_id}: pass --product or --package-id`)
  }
}
