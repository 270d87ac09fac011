import type {DB} from '../db.js'
import type {PricingRepository} from '../port/pricing.js'

/** SQLite adapter of the pricing repository: every statement prepared once per store. */
export class SqlitePricing implements PricingRepository {
  constructor(private readonly db: DB) {}
}
