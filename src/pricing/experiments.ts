import type {DB} from '../store/db.js'
import type {PricedProduct} from './context.js'
import type {Lock} from './locks.js'
import type {Trace} from './price.js'

/** What an experiment decided for a new lock. */
export type Assignment = {
  arm_id: number | string
  experiment_id: number
  experiment_type: 'packaging' | 'price'
  /** Packaging experiments: the products to show (keys of `products`). */
  products_to_select: string[]
}

export type AssignInput = {
  audienceId: string
  country: string
  lockKey: string
  products: string[]
  runExperiment: boolean
  userId: null | string
}

/**
 * Experiment layer (DESIGN step 6, highest precedence; "Experiments"). Filled in by the
 * experiments issue: until then no experiment runs.
 */
export class Experiments {
  private readonly db: DB

  constructor(db: DB) {
    this.db = db
  }

  /** Pick an arm for a new lock, or undefined when no running experiment targets it. */
  assign(_input: AssignInput, trace: Trace): Assignment | undefined {
    trace?.push({detail: 'no running experiment', outcome: 'skipped', step: 'experiment'})
    return undefined
  }

  /** The arm's price for a product of the lock's experiment, inside [min_px, max_px]; undefined to keep the control price. */
  armPrice(_lock: Lock, _product: PricedProduct, _controlMinor: number, _currency: string, _trace: Trace): number | undefined {
    return undefined
  }

  /** Record the exposure of a lock that received an arm (after the lock is saved). */
  recordExposure(_lock: Lock): void {}
}
