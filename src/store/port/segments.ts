import type {Rule} from '../../domain.js'
import type {SaveResult} from './catalog.js'

/**
 * The segments part of the storage port (see ../port.ts): audiences (with their prices),
 * packages (with their products) and campaigns. Methods are synchronous and shaped for bulk
 * work: a single call is a chunk of one. The engine (src/segments/) validates and resolves
 * api_ids to store ids (catalog.productIds, audienceIds) before it saves; the repository only
 * reads and writes. A taken unique key raises UniqueConflictError (./errors.ts).
 */

export type AudiencePrice = {
  /** Fixed local price in minor units of `currency`; null for a multiplier. */
  amount_minor: null | number
  currency: null | string
  multiplier: null | number
  /** The product's api_id. */
  product: string
  product_id: number
}

/** What saveAudiences writes: prices by product store id, in order. */
export type AudienceDef = {api_id: string; name: string; prices: Omit<AudiencePrice, 'product'>[]; priority: number; rules: Rule[]}

export type StoredAudience = {
  api_id: string
  created_at: string
  id: number
  name: string
  prices: AudiencePrice[]
  priority: number
  rules: Rule[]
  updated_at: string
}

/** What savePackages writes: products by store id, in order; no audience is null. */
export type PackageDef = {api_id: string; audience_id: null | number; countries: string[]; name: string; product_ids: number[]}

export type StoredPackage = PackageDef & {
  /** The audience's api_id. */
  audience: null | string
  created_at: string
  id: number
  /** Product api_ids in the package's order. */
  products: string[]
  updated_at: string
}

/** What addCampaigns writes. `products` are api_ids (empty: every product). */
export type CampaignDef = {
  active_from: null | string
  active_till: null | string
  api_id: string
  audience_id: null | number
  countries: string[]
  coupon_id: number
  name: string
  products: string[]
}

export type StoredCampaign = CampaignDef & {
  /** The audience's api_id. */
  audience: null | string
  /** The coupon's api_id. */
  coupon: string
  created_at: string
  id: number
  updated_at: string
}

/** What refers to an audience. */
export type AudienceUses = {campaigns: string[]; experiments: number[]; packages: string[]}

export interface SegmentsRepository {
  /** Every audience, highest priority first, equal priorities by api_id (never by insertion). */
  listAudiences(): Promise<StoredAudience[]>
  /** The audiences with these api_ids, in the order given; unknown ones are left out. */
  getAudiences(apiIds: readonly string[]): Promise<StoredAudience[]>
  /** Store ids of audiences by api_id; unknown api_ids are absent from the map. */
  audienceIds(apiIds: readonly string[]): Promise<Map<string, number>>
  /** Insert or replace whole audiences (prices as a whole list), stamped `at`. Atomic. */
  saveAudiences(defs: readonly AudienceDef[], at: string): Promise<SaveResult>
  /** Campaigns and packages segmented on the audience with store id `id`, experiments targeting it; each sorted. */
  audienceUses(id: number): Promise<AudienceUses>
  /** Delete an audience with the campaigns and packages segmented on it. Atomic. */
  deleteAudience(id: number): Promise<void>

  /** Every package, by api_id. */
  listPackages(): Promise<StoredPackage[]>
  /** The packages with these api_ids, in the order given; unknown ones are left out. */
  getPackages(apiIds: readonly string[]): Promise<StoredPackage[]>
  /** Insert or replace whole packages (products as a whole list), stamped `at`. Atomic. */
  savePackages(defs: readonly PackageDef[], at: string): Promise<SaveResult>
  deletePackage(id: number): Promise<void>

  /** Every campaign, by api_id. */
  listCampaigns(): Promise<StoredCampaign[]>
  /** The campaigns with these api_ids, in the order given; unknown ones are left out. */
  getCampaigns(apiIds: readonly string[]): Promise<StoredCampaign[]>
  /** Insert new campaigns, stamped `at`; an api_id already stored is a UniqueConflictError. Atomic. */
  addCampaigns(defs: readonly CampaignDef[], at: string): Promise<void>
  deleteCampaign(id: number): Promise<void>
}
