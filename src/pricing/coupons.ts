import type {CouponBlock, PriceRequest} from '../schemas/price.js'
import type {z} from 'zod'
import type {DB} from '../store/db.js'
import type {Lock, LockedProduct} from './locks.js'
import type {Trace} from './price.js'

/**
 * Coupon layer (DESIGN step 7): the `coupons` mapping and campaigns. Filled in by the
 * segmentation issue; the price stays pre-coupon and the coupon block carries the rest.
 */
export class Coupons {
  private readonly db: DB

  constructor(db: DB) {
    this.db = db
  }

  /** Validate the request's coupon mapping before anything is written. */
  prepare(_req: PriceRequest): void {}

  apply(_lock: Lock, _req: PriceRequest, _trace: Trace): void {}

  render(_lock: Lock, _p: LockedProduct): z.output<typeof CouponBlock> {
    throw new Error('coupons are not implemented yet')
  }
}
