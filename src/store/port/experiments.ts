/**
 * The experiments part of the storage port (see ../port.ts): experiments with their
 * products and arms, exposures (which visitor got which arm) and the attribution of
 * subscriptions and charges to arms. Methods are synchronous and shaped for bulk work: a
 * single call is a chunk of one.
 */

export type ExperimentType = 'packaging' | 'price'
export type Allocation = 'thompson' | 'uniform'
export type Status = 'draft' | 'running' | 'stopped'

export type Arm = {
  /** 'baseline', a number written as text, or a name. */
  id: string
  multiplier: null | number
  /** Packaging: product api_ids to show. */
  products: null | string[]
  usd_price_minor: null | number
}

/** The product columns an experiment needs (bounds and nominal values). */
export type ExperimentProduct = {
  api_id: string
  base_px_minor: number
  id: number
  interval: string
  interval_count: number
  max_px_minor: null | number
  min_px_minor: null | number
}

export type Experiment = {
  allocation: Allocation
  arms: Arm[]
  audience: null | string
  audience_id: null | number
  countries: string[]
  created_at: string
  id: number
  name: string
  products: ExperimentProduct[]
  seed: number
  started_at: null | string
  status: Status
  stopped_at: null | string
  type: ExperimentType
  updated_at: string
}

/** A validated experiment, ready to write. */
export type ExperimentDef = {
  allocation: Allocation
  arms: Arm[]
  audience_id: null | number
  countries: string[]
  name: string
  product_ids: number[]
  seed: number
  type: ExperimentType
}

/** A visitor (lock key) got an arm at `at` (UNIX seconds). */
export type Exposure = {anonymous: boolean; armId: string; at: number; experimentId: number; visitor: string}

/**
 * What an exposure changed for the visitor counts: 'new' (one more visitor on the arm),
 * 'moved' (from `previous` to this arm: an override starts the exposure again), or 'same'.
 */
export type ExposureChange = {change: 'moved' | 'new' | 'same'; previous?: string}

/** An anonymous lock (by IP) adopted by a user: its exposure moves to the user. */
export type Adoption = {experimentId: number; ip: string; userId: string}

export type ArmCounts = {conversions: number; revenue_minor: number; visitors: number}

export interface ExperimentsRepository {
  /** The experiments of the ids, in order (undefined where none). */
  get(ids: readonly number[]): Promise<(Experiment | undefined)[]>
  /** Every experiment (of a status), by id. */
  list(status?: Status): Promise<Experiment[]>
  /** Store new drafts created at `now`; returns their ids, in order. */
  insert(defs: readonly ExperimentDef[], now: string): Promise<number[]>
  /** Replace an experiment's definition (its products and arms too). */
  replace(id: number, def: ExperimentDef, now: string): Promise<void>
  /** Set the status; running keeps the first start time and clears the stop time. */
  setStatus(ids: readonly number[], status: Status, now: string): Promise<void>
  /** Delete experiments with their products and arms. */
  remove(ids: readonly number[]): Promise<void>
  /** Audience ids by api_id (absent ones are left out). */
  audienceIds(apiIds: readonly string[]): Promise<Map<string, number>>
  /** The product columns an experiment needs, by api_id (absent ones are left out). */
  productsByApiId(apiIds: readonly string[]): Promise<Map<string, ExperimentProduct>>
  /** Whether a product has this api_id or name. */
  productNamed(text: string): Promise<boolean>
  /** Experiments (other than `except`) running on any of these products, by id. */
  runningOn(productIds: readonly number[], except: number): Promise<{id: number; name: string}[]>
  /** Record one exposure (a chunk of one, without an array or a transaction of its own). */
  recordExposure(exposure: Exposure): Promise<ExposureChange>
  /** Record exposures (pricing: a chunk's, at its flush); returns what each changed, in order. */
  recordExposures(exposures: readonly Exposure[]): Promise<ExposureChange[]>
  /**
   * The arm each visitor (lock key) is exposed to in an experiment, in input order
   * (undefined: no exposure). Read when a chunk of price requests begins, for the chunk's
   * new quotes, so the chunk knows what its exposures will change without reading the store
   * while it prices.
   */
  exposuresOf(experimentId: number, visitors: readonly string[]): Promise<(string | undefined)[]>
  /** Move anonymous exposures to the users who adopted their locks (dropped where the user has one). */
  adoptExposures(adoptions: readonly Adoption[]): Promise<void>
  /**
   * Visitors, conversions and revenue per arm. A conversion is a subscription (pending
   * excluded) or a succeeded charge of an exposed user for a product of the experiment,
   * created at or after the exposure; it is worth amount_usd_monthly (one-time
   * subscriptions: amount_usd) or the charge's amount_usd less refunds, in cents.
   */
  armCounts(experimentId: number): Promise<Map<string, ArmCounts>>
}

